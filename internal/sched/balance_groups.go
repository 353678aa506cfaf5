package sched

import (
	"github.com/schedlab/schedlab/internal/cpumask"
	"github.com/schedlab/schedlab/internal/topology"
)

// Statistics of a domain's groups for load balancing: update_sd_lb_stats,
// update_sg_lb_stats, update_sd_pick_busiest and group capacity. The group
// classification itself (group_classify, SgLbStats, GroupType) is shared
// with fork placement and lives in wakeup_groups.go.

// sdLbStats mirrors struct sd_lb_stats (v6.19; v6.0 and v5.12 have the same
// fields schedlab uses).
type sdLbStats struct {
	busiest       *topology.Group
	local         *topology.Group
	totalLoad     uint64
	totalCapacity uint64
	avgLoad       uint64
	preferSibling bool
	busiestStat   SgLbStats
	localStat     SgLbStats
	// overutilized is v6.0's SG_OVERUTILIZED: a CPU of the domain is
	// overutilized (only kept with Settings.RdFlagsV60).
	overutilized bool
}

// initSdLbStats mirrors fair.c:init_sd_lb_stats (v6.19): no busiest yet, whose
// statistics compare as "has_spare with every CPU idle".
func initSdLbStats(sds *sdLbStats) {
	*sds = sdLbStats{}
	sds.busiestStat.IdleCPUs = int(^uint32(0) >> 1)
	sds.busiestStat.GroupType = GroupHasSpare
}

// capacityGreater mirrors fair.c:capacity_greater (v6.19): cap1 is more than ~5%
// above cap2.
func capacityGreater(cap1, cap2 uint64) bool { return cap1*1024 > cap2*1078 }

// checkCPUCapacity mirrors fair.c:check_cpu_capacity (v6.19): other classes or
// IRQs take a noticeable part of the CPU. Without RT/DL/IRQ load in
// schedlab, capacity_of equals the original capacity and this is false.
func (k *Kernel) checkCPUCapacity(rq *Rq, sd *SchedDomain) bool {
	return capacityReduced(rq.CPUCapacity, rq.CPUCapacityOrig, sd.T.ImbalancePct)
}

// capacityReduced is fair.c:check_cpu_capacity's test (v6.19) for a CPU
// of capacity capacity and original capacity capacityOrig in a domain of
// imbalance_pct pct (also what the shared statistics' per-CPU copies are
// tested with, balance_share.go).
func capacityReduced(capacity, capacityOrig uint64, pct int) bool {
	return capacity*uint64(pct) < capacityOrig*100
}

// schedReducedCapacity mirrors fair.c:sched_reduced_capacity (v6.19).
func (k *Kernel) schedReducedCapacity(rq *Rq, sd *SchedDomain) bool {
	if rq.CFS.HNrRunnable != 1 {
		return false
	}
	return k.checkCPUCapacity(rq, sd)
}

// isCoreIdle mirrors fair.c:is_core_idle (v6.19): every SMT sibling of cpu is idle.
func (k *Kernel) isCoreIdle(cpu cpumask.CPU) bool {
	idle := true
	k.Topo.SMTMask[cpu].ForEach(func(s cpumask.CPU) bool {
		if s != cpu && !k.Rqs[s].IdleCPU() {
			idle = false
			return false
		}
		return true
	})
	return idle
}

// smtVsNonsmtGroups mirrors fair.c:smt_vs_nonsmt_groups (v6.6+).
func smtVsNonsmtGroups(sg1, sg2 *topology.Group) bool {
	if sg1 == nil || sg2 == nil {
		return false
	}
	return sg1.Flags&topology.SDShareCPUCapacity != sg2.Flags&topology.SDShareCPUCapacity
}

// smtBalance mirrors fair.c:smt_balance (v6.6+): an idle CPU should take a
// task from an SMT core running more than one.
func smtBalance(env *lbEnv, sgs *SgLbStats, g *topology.Group) bool {
	if env.idle == CPUNotIdle {
		return false
	}
	return g.Flags&topology.SDShareCPUCapacity != 0 && sgs.SumHNrRunning > 1
}

// updateCPUCapacity mirrors fair.c:update_cpu_capacity (v6.19): the CPU's capacity
// left to CFS (scale_rt_capacity; with no RT, DL, IRQ or thermal pressure
// modelled it is the original capacity) becomes its lowest group's.
func (k *Kernel) updateCPUCapacity(sd *SchedDomain, cpu cpumask.CPU) {
	rq := k.Rqs[cpu]
	capacity := rq.CPUCapacityOrig
	if capacity == 0 {
		capacity = 1
	}
	if rq.CPUCapacity != capacity {
		rq.CPUCapacity = capacity
		rq.sgStatsChanged()
	}
	sgc := k.SGC(sd.T.Groups[0])
	sgc.Capacity = capacity
	sgc.MinCapacity = capacity
	sgc.MaxCapacity = capacity
}

// updateGroupCapacity mirrors fair.c:update_group_capacity (v6.19): refresh the
// local group's capacity from its child groups (or, under a NUMA child,
// from its CPUs) and schedule the next refresh.
func (k *Kernel) updateGroupCapacity(sd *SchedDomain, cpu cpumask.CPU) {
	sdg := k.SGC(sd.T.Groups[0])
	interval := min(max(k.msecsToJiffies(sd.BalanceInterval), 1), k.bal.maxLoadBalanceInterval)
	sdg.NextUpdate = k.Jiffies() + interval
	child := sd.Child
	if child == nil {
		k.updateCPUCapacity(sd, cpu)
		return
	}
	var capacity, maxCapacity uint64
	minCapacity := ^uint64(0)
	if child.T.Flags&topology.SDNuma != 0 {
		sd.T.Groups[0].Span.ForEach(func(c cpumask.CPU) bool {
			cc := k.capacityOf(c)
			capacity += cc
			minCapacity = min(minCapacity, cc)
			maxCapacity = max(maxCapacity, cc)
			return true
		})
	} else {
		for _, g := range child.T.Groups {
			sgc := k.SGC(g)
			capacity += sgc.Capacity
			minCapacity = min(minCapacity, sgc.MinCapacity)
			maxCapacity = max(maxCapacity, sgc.MaxCapacity)
		}
	}
	sdg.Capacity = capacity
	sdg.MinCapacity = minCapacity
	sdg.MaxCapacity = maxCapacity
}

// updateSgLbStats mirrors fair.c:update_sg_lb_stats (v6.19): sum the
// load, utilisation, runnable and task counts of the group's CPUs that
// take part in this pass, count its idle CPUs, note overload (at the root
// domain) and misfit tasks (non-local groups), then classify it. With
// Settings.NewidleNohzStats (before v5.13) a newly idle pass also refreshes
// the blocked load of the idle CPUs it reads (LBF_NOHZ_STATS).
// With Settings.ShareSgStats the loop's sums may come from an earlier pass
// that read the same group unchanged (balance_share.go).
func (k *Kernel) updateSgLbStats(env *lbEnv, sds *sdLbStats, g *topology.Group, sgs *SgLbStats, sgOverloaded *bool) {
	*sgs = SgLbStats{}
	localGroup := g == sds.local
	c := &k.Costs.Balance
	nCPUs := 0
	if k.sgShareable(env, g) {
		e := k.sgSharedStats(env, g)
		k.sgShareApply(env, sds, e, localGroup, sgs, sgOverloaded)
		nCPUs = g.Weight
	} else {
		nCPUs = k.sgLbStatsCPUs(env, sds, g, localGroup, sgs, sgOverloaded)
	}
	k.lbCharge(c.SgStats(nCPUs))
	sgs.GroupCapacity = k.SGC(g).Capacity
	sgs.GroupWeight = g.Weight
	// group_asym_packing: SD_ASYM_PACKING is not modelled.
	if k.S.LBSMTAware && !localGroup && smtBalance(env, sgs, g) {
		sgs.GroupSMTBalance = true
	}
	sgs.GroupType = k.groupClassify(env.sd.T.ImbalancePct, g, sgs)
	if sgs.GroupType == GroupOverloaded {
		sgs.AvgLoad = sgs.GroupLoad * SchedCapacityScale / sgs.GroupCapacity
	}
}

// sgLbStatsCPUs is update_sg_lb_stats's loop over the group's CPUs that
// take part in this pass (updateSgLbStats); it returns how many there
// were.
func (k *Kernel) sgLbStatsCPUs(env *lbEnv, sds *sdLbStats, g *topology.Group, localGroup bool, sgs *SgLbStats, sgOverloaded *bool) int {
	sdFlags := env.sd.T.Flags
	balancingAtRd := env.sd.Parent == nil
	nCPUs := 0
	// for_each_cpu_and(i, sched_group_span(group), env->cpus)
	for i := range g.Span.AndCPUs(env.cpus) {
		rq := k.Rqs[i]
		nCPUs++
		if env.flags&lbfNohzStats != 0 && k.updateNohzStatsForce(rq, false, BlockedByNewidleStats) {
			env.flags |= lbfNohzAgain
		}
		if env.nohzStatsSkipped && k.nohzStatsDue(rq) {
			env.nohzStatsSkipped = false
			k.Branches[BranchNewidleNoStats].Changed++
		}
		load := cpuLoad(rq)
		sgs.GroupLoad += load
		sgs.GroupUtil += cpuUtilCfsRq(rq, k.S.UtilEst)
		sgs.GroupRunnable += cpuRunnable(rq)
		sgs.SumHNrRunning += rq.CFS.HNrRunnable
		nrRunning := rq.NrRunning
		sgs.SumNrRunning += nrRunning
		// cpu_overutilized: v6.19 asks only with an energy model (none
		// here); v6.0 always, for the root domain's line.
		if k.S.RdFlagsV60 && k.S.NohzRdLines && k.cpuOverutilized(i) {
			sds.overutilized = true
		}
		if nrRunning == 0 && rq.IdleCPU() {
			sgs.IdleCPUs++
			continue
		}
		if balancingAtRd && nrRunning > 1 {
			*sgOverloaded = true
		}
		if localGroup {
			continue
		}
		if sdFlags&topology.SDAsymCPUCapacity != 0 {
			if sgs.GroupMisfitTaskLoad < rq.MisfitTaskLoad {
				sgs.GroupMisfitTaskLoad = rq.MisfitTaskLoad
				*sgOverloaded = true
			}
		} else if env.idle != CPUNotIdle && k.schedReducedCapacity(rq, env.sd) {
			if sgs.GroupMisfitTaskLoad < load {
				sgs.GroupMisfitTaskLoad = load
			}
		}
	}
	return nCPUs
}

// updateSdPickBusiest mirrors fair.c:update_sd_pick_busiest (v6.19; with
// !LBSMTAware the v6.0 form: no smt_balance type, no SMT preference, and
// among fully busy groups the first is kept).
func (k *Kernel) updateSdPickBusiest(env *lbEnv, sds *sdLbStats, sg *topology.Group, sgs *SgLbStats) bool {
	busiest := &sds.busiestStat
	if sgs.SumHNrRunning == 0 {
		return false
	}
	asym := env.sd.T.Flags&topology.SDAsymCPUCapacity != 0
	if asym && sgs.GroupType == GroupMisfitTask &&
		(!capacityGreater(k.capacityOf(env.dstCPU), k.SGC(sg).MaxCapacity) ||
			sds.localStat.GroupType != GroupHasSpare) {
		return false
	}
	if sgs.GroupType > busiest.GroupType {
		return true
	}
	if sgs.GroupType < busiest.GroupType {
		return false
	}
	switch sgs.GroupType {
	case GroupOverloaded:
		return sgs.AvgLoad > busiest.AvgLoad
	case GroupImbalanced:
		return false
	case GroupAsymPacking:
		return false // not modelled
	case GroupMisfitTask:
		// "if (sgs->group_misfit_task_load < busiest->...) return
		// false; break;": a tie goes to the later group.
		if sgs.GroupMisfitTaskLoad < busiest.GroupMisfitTaskLoad {
			return false
		}
	case GroupSMTBalance, GroupFullyBusy:
		if sgs.GroupType == GroupSMTBalance && (sgs.IdleCPUs != 0 || busiest.IdleCPUs != 0) {
			if !hasSpareIsBusier(sgs, busiest) {
				return false
			}
			break
		}
		if !k.S.LBSMTAware {
			if sgs.AvgLoad <= busiest.AvgLoad {
				return false
			}
			break
		}
		if sgs.AvgLoad < busiest.AvgLoad {
			return false
		}
		if sgs.AvgLoad == busiest.AvgLoad && sds.busiest != nil &&
			sds.busiest.Flags&topology.SDShareCPUCapacity != 0 {
			return false
		}
	case GroupHasSpare:
		if k.S.LBSMTAware && smtVsNonsmtGroups(sds.busiest, sg) {
			return !(sg.Flags&topology.SDShareCPUCapacity != 0 && sgs.SumHNrRunning <= 1)
		}
		if !hasSpareIsBusier(sgs, busiest) {
			return false
		}
	}
	if asym && sgs.GroupType <= GroupFullyBusy &&
		capacityGreater(k.SGC(sg).MinCapacity, k.capacityOf(env.dstCPU)) {
		return false
	}
	return true
}

// hasSpareIsBusier is the has_spare comparison of update_sd_pick_busiest:
// fewer idle CPUs, then more running tasks.
func hasSpareIsBusier(sgs, busiest *SgLbStats) bool {
	if sgs.IdleCPUs > busiest.IdleCPUs {
		return false
	}
	if sgs.IdleCPUs == busiest.IdleCPUs && sgs.SumNrRunning <= busiest.SumNrRunning {
		return false
	}
	return true
}

// updateSdLbStats mirrors fair.c:update_sd_lb_stats (v6.19): statistics of
// every group of the domain, the busiest group, prefer_sibling, the root
// domain's overload flag (set_rd_overloaded: a change only; v6.0 stores
// it and overutilized unconditionally, Settings.RdFlagsV60, which matters
// only to their cache line), and SIS_UTIL's scan depth
// (update_idle_cpu_scan).
// v6.0 (!LBSMTAware) took prefer_sibling from the child domain rather than
// from the busiest group. Before v5.13 (NewidleNohzStats) a newly idle pass
// with blocked load pending refreshed the idle CPUs' blocked load here, and
// pushed nohz.next_blocked when it had covered every idle CPU.
func (k *Kernel) updateSdLbStats(env *lbEnv, sds *sdLbStats) {
	local := &sds.localStat
	var tmp SgLbStats
	var sumUtil uint64
	sgOverloaded := false
	env.nohzStatsSkipped = false
	if k.S.NewidleNohzStats && env.idle == CPUNewlyIdle {
		k.lineLoad(&k.bal.nohz.line)
		if k.bal.nohz.hasBlocked {
			env.flags |= lbfNohzStats
		}
	} else if k.baseNohzStats && env.idle == CPUNewlyIdle && k.bal.nohz.hasBlocked {
		// blocked-load-outside-newidle: the baseline would refresh
		// here; updateSgLbStats looks for a CPU it would refresh.
		env.nohzStatsSkipped = true
		k.Branches[BranchNewidleNoStats].Taken++
	}
	for _, sg := range env.sd.T.Groups {
		sgs := &tmp
		localGroup := sg.Span.Test(env.dstCPU)
		if localGroup {
			sds.local = sg
			sgs = local
			if env.idle != CPUNewlyIdle || timeAfterEq(k.Jiffies(), k.SGC(sg).NextUpdate) {
				k.updateGroupCapacity(env.sd, env.dstCPU)
			}
		}
		k.updateSgLbStats(env, sds, sg, sgs, &sgOverloaded)
		if !localGroup && k.updateSdPickBusiest(env, sds, sg, sgs) {
			sds.busiest = sg
			sds.busiestStat = *sgs
		}
		sds.totalLoad += sgs.GroupLoad
		sds.totalCapacity += sgs.GroupCapacity
		sumUtil += sgs.GroupUtil
	}
	if k.S.LBSMTAware {
		if sds.busiest != nil {
			sds.preferSibling = sds.busiest.Flags&topology.SDPreferSibling != 0
		}
	} else if env.sd.Child != nil && env.sd.Child.T.Flags&topology.SDPreferSibling != 0 {
		sds.preferSibling = true
	}
	// fbq_type stays "all": NUMA balancing is not modelled.
	switch {
	case env.sd.Parent == nil && k.S.RdFlagsV60:
		// v6.0 stores both flags without looking.
		k.bal.rdOverloaded = sgOverloaded
		k.bal.rdOverutilized = sds.overutilized
		k.lineStore(&k.bal.rdLine)
	case env.sd.Parent == nil:
		k.setRdOverloaded(sgOverloaded)
	case k.S.RdFlagsV60 && sds.overutilized:
		k.bal.rdOverutilized = true
		k.lineStore(&k.bal.rdLine)
	}
	if env.flags&lbfNohzAgain != 0 {
		k.lineLoad(&k.bal.nohz.maskLine)
		if k.bal.nohz.idleCPUsMask.SubsetOf(env.sd.T.Span) {
			k.bal.nohz.nextBlocked = k.Jiffies() + k.msecsToJiffies(loadAvgPeriodMs)
			k.lineStore(&k.bal.nohz.line)
		}
	}
	k.updateIdleCPUScan(env.dstCPU, env.sd, env.idle, sumUtil)
	// The SIS_UTIL RFCs' hunks (variants sis-util-v1, sis-util-v2).
	k.updateLLCOverloaded(env.dstCPU, env.sd, env.idle, sds.totalCapacity, sumUtil)
	k.updateNrIdleScan(env.dstCPU, env.sd, env.idle, sds.totalCapacity, sumUtil)
}

// siblingImbalance mirrors fair.c:sibling_imbalance (v6.6+): how many tasks
// to move so that both groups run the same number per core; 0 for a busy
// balancing CPU.
func siblingImbalance(env *lbEnv, sds *sdLbStats, busiest, local *SgLbStats) int {
	if env.idle == CPUNotIdle || busiest.SumNrRunning == 0 {
		return 0
	}
	ncoresBusiest := sds.busiest.Cores
	ncoresLocal := sds.local.Cores
	if ncoresBusiest == ncoresLocal {
		return max(busiest.SumNrRunning-local.SumNrRunning, 0)
	}
	imbalance := max(ncoresLocal*busiest.SumNrRunning-ncoresBusiest*local.SumNrRunning, 0)
	imbalance = 2*imbalance + ncoresLocal + ncoresBusiest
	imbalance /= ncoresLocal + ncoresBusiest
	if imbalance <= 1 && local.SumNrRunning == 0 && busiest.SumNrRunning > 1 {
		imbalance = 2
	}
	return imbalance
}
