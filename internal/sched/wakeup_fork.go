package sched

import (
	"math"

	"github.com/schedlab/schedlab/internal/cpumask"
	"github.com/schedlab/schedlab/internal/topology"
)

// The slow path of select_task_rq_fair: fork and exec placement (and wakeups
// if a domain had SD_BALANCE_WAKE) walk down from the highest domain with
// the balance flag, at each level picking the idlest group and then its
// idlest CPU (v6.19 names; find_idlest_* before v6.10).

// nrCPUsConfig is NR_CPUS of a distribution kernel (CONFIG_NR_CPUS=8192 on
// x86_64), which sched_balance_find_dst_group compares nr_cpus_allowed with.
const nrCPUsConfig = topology.MaxCPUs

// schedBalanceFindDstCPU mirrors fair.c:sched_balance_find_dst_cpu (v6.19)
// (find_idlest_cpu, v6.19).
func (k *Kernel) schedBalanceFindDstCPU(sd *SchedDomain, p *Task, cpu, prevCPU cpumask.CPU, sdFlag topology.Flags) cpumask.CPU {
	newCPU := cpu
	if !sd.T.Span.Intersects(p.CPUsAllowed) {
		return prevCPU
	}
	// cpu_util_without needs p's PELT synced to prev_cpu's queue; a new
	// task has nothing to sync.
	if sdFlag&topology.SDBalanceFork == 0 && p.SE.CfsRq != nil {
		syncEntityLoadAvg(&p.SE)
	}
	for sd != nil {
		if sd.T.Flags&sdFlag == 0 {
			sd = sd.Child
			continue
		}
		group := k.schedBalanceFindDstGroup(sd, p, cpu)
		if group == nil {
			sd = sd.Child
			continue
		}
		newCPU = k.schedBalanceFindDstGroupCPU(group, p, cpu)
		if newCPU == cpu {
			// Try balancing at a lower level of cpu.
			sd = sd.Child
			continue
		}
		// Continue at the levels of new_cpu below the one just done.
		cpu = newCPU
		weight := sd.T.SpanWeight
		sd = nil
		for _, tmp := range k.dom.SD[cpu] {
			if weight <= tmp.T.SpanWeight {
				break
			}
			if tmp.T.Flags&sdFlag != 0 {
				sd = tmp
			}
		}
	}
	return newCPU
}

// idleGetState mirrors sched.h:idle_get_state (v6.19): the cpuidle state an idle
// CPU sits in (rq->idle_state, set by cpuidle when it enters a state). That
// is the state the cost model's idle governor chose at idle entry
// (idleGovernorSelect: the deepest state whose target residency fits the
// CPU's average idle period; every CPU sits in its deepest state at boot),
// the same state whose exit latency a wakeup of the CPU pays. Nil when the
// machine lists no idle states or the CPU is running.
func (k *Kernel) idleGetState(rq *Rq) *topology.IdleState {
	states := k.Topo.Spec.IdleStatesOf(rq.CPU)
	if i := rq.idleState; i >= 0 && i < len(states) {
		return &states[k.effectiveIdleState(rq, states)]
	}
	return nil
}

// schedBalanceFindDstGroupCPU mirrors fair.c:sched_balance_find_dst_group_cpu (v6.19)
// (find_idlest_group_cpu, v6.19): a SCHED_IDLE-only CPU at once; else the
// idle CPU in the shallowest idle state, ties (or no idle-state data) going
// to the most recent idle_stamp; else the least loaded CPU; this_cpu if the
// group offers nothing.
func (k *Kernel) schedBalanceFindDstGroupCPU(g *topology.Group, p *Task, thisCPU cpumask.CPU) cpumask.CPU {
	if g.Weight == 1 {
		return g.Span.First()
	}
	minLoad := uint64(math.MaxUint64)
	minExitLatency := int64(math.MaxInt64)
	var latestIdleTimestamp uint64
	leastLoadedCPU := thisCPU
	shallowestIdleCPU := cpumask.None
	res := cpumask.None
	w := &k.Rqs[k.thisCPU].Wakeup
	g.Span.ForEach(func(i cpumask.CPU) bool {
		if !p.CPUsAllowed.Test(i) {
			return true
		}
		w.FindDstCPUs++
		rq := k.Rqs[i]
		if k.schedIdleCPU(i) {
			res = i
			return false
		}
		if k.availableIdleCPU(i) {
			idle := k.idleGetState(rq)
			if idle != nil && idle.ExitLatencyNs < minExitLatency {
				// The shallowest state wins whatever the idle stamps.
				minExitLatency = idle.ExitLatencyNs
				latestIdleTimestamp = rq.IdleStamp
				shallowestIdleCPU = i
			} else if (idle == nil || idle.ExitLatencyNs == minExitLatency) && rq.IdleStamp > latestIdleTimestamp {
				// Equal depth: the most recently idled CPU may have
				// the warmer cache.
				latestIdleTimestamp = rq.IdleStamp
				shallowestIdleCPU = i
			}
		} else if shallowestIdleCPU == cpumask.None {
			if load := cpuLoad(rq); load < minLoad {
				minLoad = load
				leastLoadedCPU = i
			}
		}
		return true
	})
	if res != cpumask.None {
		return res
	}
	if shallowestIdleCPU != cpumask.None {
		return shallowestIdleCPU
	}
	return leastLoadedCPU
}

// updateSgWakeupStats mirrors fair.c:update_sg_wakeup_stats (v6.19): the
// group's statistics as if p were not on its CPU, over the CPUs p may use.
// With !SgWakeupStatsAllowedOnly it is v6.0's and v5.12's: every CPU of
// the group counts, and misfit is tested against the group's max
// capacity.
func (k *Kernel) updateSgWakeupStats(sd *SchedDomain, g *topology.Group, sgs *SgLbStats, p *Task) {
	*sgs = SgLbStats{}
	asym := sd.T.Flags&topology.SDAsymCPUCapacity != 0
	allowedOnly := k.S.SgWakeupStatsAllowedOnly
	// Assume the task fits no CPU of the group until one proves otherwise.
	if asym && allowedOnly {
		sgs.GroupMisfitTaskLoad = 1
	}
	if asym && !allowedOnly && !fitsCapacity(k.taskUtilEst(p), k.SGC(g).MaxCapacity) {
		sgs.GroupMisfitTaskLoad = 1
	}
	w := &k.Rqs[k.thisCPU].Wakeup
	g.Span.ForEach(func(i cpumask.CPU) bool {
		if allowedOnly && !p.CPUsAllowed.Test(i) {
			return true
		}
		w.FindDstCPUs++
		rq := k.Rqs[i]
		sgs.GroupLoad += k.cpuLoadWithout(rq, p)
		sgs.GroupUtil += k.cpuUtilWithout(i, p)
		sgs.GroupRunnable += cpuRunnableWithout(rq, p)
		local := taskRunningOnCPU(i, p)
		sgs.SumHNrRunning += rq.CFS.HNrRunnable - local
		nrRunning := rq.NrRunning - local
		sgs.SumNrRunning += nrRunning
		if nrRunning == 0 && k.idleCPUWithout(i, p) {
			sgs.IdleCPUs++
		}
		if asym && allowedOnly && sgs.GroupMisfitTaskLoad != 0 && k.taskFitsCPU(p, i) {
			sgs.GroupMisfitTaskLoad = 0
		}
		return true
	})
	sgs.GroupCapacity = k.SGC(g).Capacity
	sgs.GroupWeight = g.Weight
	sgs.GroupType = k.groupClassify(sd.T.ImbalancePct, g, sgs)
	if sgs.GroupType == GroupFullyBusy || sgs.GroupType == GroupOverloaded {
		sgs.AvgLoad = sgs.GroupLoad * SchedCapacityScale / sgs.GroupCapacity
	}
}

// updatePickIdlest mirrors fair.c:update_pick_idlest (v6.19): whether group (sgs)
// is idler than the current idlest (idlestSgs).
func (k *Kernel) updatePickIdlest(idlest *topology.Group, idlestSgs *SgLbStats, g *topology.Group, sgs *SgLbStats) bool {
	if sgs.GroupType < idlestSgs.GroupType {
		return true
	}
	if sgs.GroupType > idlestSgs.GroupType {
		return false
	}
	switch sgs.GroupType {
	case GroupOverloaded, GroupFullyBusy:
		// The lowest avg_load.
		if idlestSgs.AvgLoad <= sgs.AvgLoad {
			return false
		}
	case GroupImbalanced, GroupAsymPacking, GroupSMTBalance:
		// Not used by the slow wakeup path.
		return false
	case GroupMisfitTask:
		// The highest max capacity.
		if k.SGC(idlest).MaxCapacity >= k.SGC(g).MaxCapacity {
			return false
		}
	case GroupHasSpare:
		// The most idle CPUs, then the lowest utilisation.
		if idlestSgs.IdleCPUs > sgs.IdleCPUs {
			return false
		}
		if idlestSgs.IdleCPUs == sgs.IdleCPUs && idlestSgs.GroupUtil <= sgs.GroupUtil {
			return false
		}
	}
	return true
}

// schedBalanceFindDstGroup mirrors fair.c:sched_balance_find_dst_group (v6.19)
// (find_idlest_group, v6.19): the idlest group of sd for p, or nil when the
// local group (the one holding thisCPU) should be kept. With
// Settings.NumaImbalanceV512 the has-spare NUMA test is v5.12's
// allow_numa_imbalance(local.sum_nr_running, sd->span_weight); v6.0 is
// v6.19 here. Not modelled: NUMA balancing's preferred node,
// core-scheduling cookies.
func (k *Kernel) schedBalanceFindDstGroup(sd *SchedDomain, p *Task, thisCPU cpumask.CPU) *topology.Group {
	var idlest, local *topology.Group
	var localSgs, tmpSgs SgLbStats
	idlestSgs := SgLbStats{AvgLoad: math.MaxUint32, GroupType: GroupOverloaded}

	for _, g := range sd.T.Groups {
		if !g.Span.Intersects(p.CPUsAllowed) {
			continue
		}
		sgs := &tmpSgs
		isLocal := g.Span.Test(thisCPU)
		if isLocal {
			sgs = &localSgs
			local = g
		}
		k.Rqs[k.thisCPU].Wakeup.FindDstGroups++
		k.updateSgWakeupStats(sd, g, sgs, p)
		if !isLocal && k.updatePickIdlest(idlest, &idlestSgs, g, sgs) {
			idlest = g
			idlestSgs = *sgs
		}
	}

	if idlest == nil {
		return nil
	}
	// Affinity kept p off the local group.
	if local == nil {
		return idlest
	}
	if localSgs.GroupType < idlestSgs.GroupType {
		return nil
	}
	if localSgs.GroupType > idlestSgs.GroupType {
		return idlest
	}

	switch localSgs.GroupType {
	case GroupOverloaded, GroupFullyBusy:
		imbalance := scaleLoadDown(NiceZeroLoad) * uint64(sd.T.ImbalancePct-100) / 100
		// Across nodes, charge the remote group the imbalance and
		// consider staying.
		if sd.T.Flags&topology.SDNuma != 0 && idlestSgs.AvgLoad+imbalance >= localSgs.AvgLoad {
			return nil
		}
		if idlestSgs.AvgLoad >= localSgs.AvgLoad+imbalance {
			return nil
		}
		if 100*localSgs.AvgLoad <= uint64(sd.T.ImbalancePct)*idlestSgs.AvgLoad {
			return nil
		}
	case GroupImbalanced, GroupAsymPacking, GroupSMTBalance:
		return nil
	case GroupMisfitTask:
		if k.SGC(local).MaxCapacity >= k.SGC(idlest).MaxCapacity {
			return nil
		}
	case GroupHasSpare:
		if sd.T.Flags&topology.SDNuma != 0 && k.S.NumaImbalanceV512 {
			// v5.12: stay while the local node runs fewer tasks than a
			// quarter of the NUMA domain's CPUs (256 / 4 = 64 on a
			// two-socket Zen3).
			if allowNumaImbalanceV512(localSgs.SumNrRunning, sd.T.SpanWeight) {
				return nil
			}
		} else if sd.T.Flags&topology.SDNuma != 0 {
			imbNumaNr := sd.T.ImbNumaNr
			// Keep p near its waker while the local node would run
			// at most imb_numa_nr tasks, counting only the CPUs p
			// may use (always, as nr_cpus_allowed != NR_CPUS).
			if p.NrCPUsAllowed != nrCPUsConfig {
				imbNumaNr = min(local.Span.And(p.CPUsAllowed).Weight(), sd.T.ImbNumaNr)
			}
			imbalance := localSgs.IdleCPUs - idlestSgs.IdleCPUs
			if imbalance < 0 {
				imbalance = -imbalance
			}
			if adjustNumaImbalance(imbalance, localSgs.SumNrRunning+1, imbNumaNr) == 0 {
				return nil
			}
		}
		// The group with the most idle CPUs.
		if localSgs.IdleCPUs >= idlestSgs.IdleCPUs {
			return nil
		}
	}
	return idlest
}
