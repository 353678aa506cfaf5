package sched

import (
	"math"

	"github.com/schedlab/schedlab/internal/cpumask"
	"github.com/schedlab/schedlab/internal/engine"
	"github.com/schedlab/schedlab/internal/topology"
)

// Wakeup and fork placement: select_task_rq_fair and the fast path
// (wake_affine, select_idle_sibling) as v6.19 has them, with the v6.0-era
// differences (SIS_PROP) and the short-task and idle-core variants selected
// by Settings. The slow path (sched_balance_find_dst_cpu) is in
// wakeup_fork.go, the signals it reads in wakeup_load.go.
//
// Not modelled, for every function below: energy-aware placement
// (find_energy_efficient_cpu; no energy model), uclamp, core scheduling
// cookies, NUMA balancing's preferred node, per-CPU kthreads (so the
// kthread-stacking shortcut of select_idle_sibling never applies), exiting
// wakers (PF_EXITING) and vCPU preemption.

// WakeupCounters counts, per CPU, what the wakeup path did there. They are
// not kernel statistics: they record work a cost model can charge.
type WakeupCounters struct {
	// TestIdleCoresReads counts loads of sd_llc_shared->has_idle_cores by
	// test_idle_cores on this CPU (a cache line all CPUs of the LLC write).
	TestIdleCoresReads uint64
	// IdleCoresLineNs is the time those loads and set_idle_cores's stores
	// took moving the sd_llc_shared line to this CPU (Settings.LLCSharedLines).
	IdleCoresLineNs engine.Time
	// SISScans counts select_idle_cpu calls that scanned (got past the
	// SIS_UTIL early exit); SISScanned the CPUs those scans examined.
	SISScans, SISScanned uint64
	// SISScanLineNs is the time moving the examined CPUs' runqueue lines
	// to this CPU took (Settings.SISScanLines).
	SISScanLineNs engine.Time
	// SISInvalNs is the time this CPU's switches waited for the copies of
	// its runqueue line that other CPUs' scans read to be invalidated
	// (Settings.SISScanInvalidate).
	SISInvalNs engine.Time
	// FindDstGroups and FindDstCPUs count the slow path's reads (fork,
	// exec and SD_BALANCE_WAKE placement): the groups
	// sched_balance_find_dst_group compared, and the CPUs whose rq
	// update_sg_wakeup_stats and sched_balance_find_dst_group_cpu read.
	FindDstGroups, FindDstCPUs uint64
}

// selectTaskRqFair is installed as Kernel.SelectTaskRq.
func selectTaskRqFair(k *Kernel, p *Task, prev cpumask.CPU, wakeFlags int) cpumask.CPU {
	return k.selectTaskRqFair(p, prev, wakeFlags)
}

// selectTaskRqFair mirrors fair.c:select_task_rq_fair (v6.19; v6.0 and
// v5.12 have no WF_CURRENT_CPU, which no caller here sets, and v5.12 sets
// the waker's recent_used_cpu after the fast path, Settings.RecentUsedCPU)
// on the CPU k.ThisCPU(). Simplified: no energy-aware path, no PF_EXITING
// test of the waker (sync is WF_SYNC alone). With Settings.SyncInTaskOnly
// (the no-sync-irq variant) sync also needs in_task(), as Libo Chen's patch
// has it: "in_task() && (wake_flags & WF_SYNC) && !(current->flags &
// PF_EXITING)".
func (k *Kernel) selectTaskRqFair(p *Task, prevCPU cpumask.CPU, wakeFlags int) cpumask.CPU {
	sync := wakeFlags&WFSync != 0
	// irqSync: the patch dropped a sync that the comparison kernel keeps
	// (BranchSyncInTask).
	irqSync := sync && k.S.SyncInTaskOnly && !k.InTask()
	if irqSync {
		sync = false
	}
	cpu := k.thisCPU
	newCPU := prevCPU
	wantAffine := false
	// SD_BALANCE_* and WF_* share the low nibble.
	sdFlag := topology.Flags(wakeFlags & 0xF)
	k.why, k.affine, k.affineSD = ReasonNone, AffineNotTried, nil

	if wakeFlags&WFTTWU != 0 {
		k.recordWakee(p)
		if wakeFlags&WFCurrentCPU != 0 && p.CPUsAllowed.Test(cpu) {
			k.why = ReasonCurrentCPU
			return cpu
		}
		wide := k.wakeWide(p)
		wantAffine = !wide && p.CPUsAllowed.Test(cpu)
		if wide {
			k.affine = AffineWakeWide
		}
	}

	var sd *SchedDomain
	for _, tmp := range k.dom.SD[cpu] {
		// Both cpu and prev_cpu in this domain: cpu is a valid
		// SD_WAKE_AFFINE target.
		if wantAffine && tmp.T.Flags&topology.SDWakeAffine != 0 && tmp.T.Span.Test(prevCPU) {
			k.affineSD, k.affine = tmp, AffineSameCPU
			if cpu != prevCPU {
				newCPU = k.wakeAffine(tmp, p, cpu, prevCPU, sync)
				if irqSync {
					k.countBranch(BranchSyncInTask, k.wakeAffinePeek(tmp, p, cpu, prevCPU, true) != newCPU)
					irqSync = false
				}
			}
			sd = nil
			break
		}
		if tmp.T.Flags&sdFlag != 0 {
			sd = tmp
		} else if !wantAffine {
			break
		}
	}

	if irqSync {
		// sync reaches nothing but wake_affine, which did not run.
		k.countBranch(BranchSyncInTask, false)
	}
	if sd != nil {
		newCPU = k.schedBalanceFindDstCPU(sd, p, cpu, prevCPU, sdFlag)
		k.why = ReasonFindDst
		return newCPU
	}
	k.why = ReasonNoDomain
	if wakeFlags&WFTTWU != 0 {
		newCPU = k.selectIdleSibling(p, prevCPU, newCPU)
		k.countClusterDeferred(newCPU)
		// v5.12: the waker's recent_used_cpu becomes the waking CPU.
		if k.S.RecentUsedCPU == 2 && wantAffine {
			k.Current().RecentUsedCPU = cpu
		}
	}
	return newCPU
}

// countClusterDeferred counts sis-cluster's branch of the
// select_idle_sibling that just returned cpu: an idle cache-affine prev or
// recent_used_cpu outside target's cluster kept as the fallback
// (k.clusterDeferred), which v6.0, the comparison kernel, returns at once.
func (k *Kernel) countClusterDeferred(cpu cpumask.CPU) {
	if d := k.clusterDeferred; d != cpumask.None {
		k.countBranch(BranchClusterPrev, cpu != d)
	}
}

// recordWakee mirrors fair.c:record_wakee (v6.19) on current (the task running on
// the waking CPU, the idle task for a timer wakeup of an idle CPU).
func (k *Kernel) recordWakee(p *Task) {
	cur := k.Current()
	jiffies := k.Jiffies()
	// time_after(jiffies, decay_ts + HZ): decay once, however long ago.
	if int64(jiffies-(cur.WakeeFlipDecayTs+uint64(k.S.HZ))) > 0 {
		cur.WakeeFlips >>= 1
		cur.WakeeFlipDecayTs = jiffies
	}
	if cur.LastWakee != p {
		cur.LastWakee = p
		cur.WakeeFlips++
	}
}

// wakeWide mirrors fair.c:wake_wide (v6.19): spread when the waker/wakee pair flips
// partners more often than the LLC has CPUs (an M:N relationship).
func (k *Kernel) wakeWide(p *Task) bool {
	master := k.Current().WakeeFlips
	slave := p.WakeeFlips
	factor := uint64(k.Topo.SdLLCSize[k.thisCPU])
	if master < slave {
		master, slave = slave, master
	}
	if slave < factor || master < slave*factor {
		return false
	}
	return true
}

// wakeAffine mirrors fair.c:wake_affine (v6.19): decide between the waker's
// CPU and prev_cpu, counting ttwu_move_affine on sd when the waker's CPU
// wins (even if select_idle_sibling then looks elsewhere). v6.0 and v5.12
// also count it when wake_affine_idle chose prev_cpu
// (Settings.WakeAffineTallyPrev).
func (k *Kernel) wakeAffine(sd *SchedDomain, p *Task, thisCPU, prevCPU cpumask.CPU, sync bool) cpumask.CPU {
	target := cpumask.None
	if k.S.WAIdle {
		target = k.wakeAffineIdle(thisCPU, prevCPU, sync)
		if k.affine == AffineShortThis {
			k.countBranch(BranchShortAffine, k.shortAffineBase(sd, p, thisCPU, prevCPU, sync) != thisCPU)
		}
	}
	if k.S.WAWeight && target == cpumask.None {
		target = k.wakeAffineWeight(sd, p, thisCPU, prevCPU, sync)
		if target == thisCPU {
			k.affine = AffineWeightThis
		}
	}
	p.SE.Stats.NrWakeupsAffineAtt++
	if target == cpumask.None {
		k.affine = AffinePrev
	}
	if k.S.WakeAffineTallyPrev {
		// v6.0, v5.12: "if (target == nr_cpumask_bits) return
		// prev_cpu;", so a prev_cpu from wake_affine_idle is counted
		// as an affine move (and returned, as prev).
		if target == cpumask.None {
			return prevCPU
		}
	} else if target != thisCPU {
		return prevCPU
	}
	sd.Stats.TTWUMoveAffine++
	p.SE.Stats.NrWakeupsAffine++
	return target
}

// wakeAffinePeek is what wakeAffine returns for sync from the same state,
// storing nothing: no schedstat or task statistic, no k.affine, no
// task_h_load cache (wakeAffineWeightPeek). BranchSyncInTask asks it what
// the comparison kernel's sync wakeup would have chosen.
func (k *Kernel) wakeAffinePeek(sd *SchedDomain, p *Task, thisCPU, prevCPU cpumask.CPU, sync bool) cpumask.CPU {
	saved := k.affine
	target := cpumask.None
	if k.S.WAIdle {
		target = k.wakeAffineIdle(thisCPU, prevCPU, sync)
	}
	if k.S.WAWeight && target == cpumask.None {
		target = k.wakeAffineWeightPeek(sd, p, thisCPU, prevCPU, sync, true)
	}
	k.affine = saved
	if target == cpumask.None || (!k.S.WakeAffineTallyPrev && target != thisCPU) {
		return prevCPU
	}
	return target
}

// wakeAffineIdle mirrors fair.c:wake_affine_idle (v6.19: the sync test does
// not count delayed-dequeue tasks), plus the short-task variants' hunk 1
// (Settings.ShortTaskAffine, patches.md §1). cpumask.None means "no opinion".
func (k *Kernel) wakeAffineIdle(thisCPU, prevCPU cpumask.CPU, sync bool) cpumask.CPU {
	// An idle waking CPU means a wakeup from interrupt context: move only
	// within the LLC, and prefer prev_cpu if it is idle too.
	if k.availableIdleCPU(thisCPU) && k.cpusShareCache(thisCPU, prevCPU) {
		if k.availableIdleCPU(prevCPU) {
			k.affine = AffineIdlePrev
			return prevCPU
		}
		k.affine = AffineIdleThis
		return thisCPU
	}
	thisRq := k.Rqs[thisCPU]
	if sync && nrRunningNotDelayed(thisRq) == 1 {
		k.affine = AffineIdleThis
		return thisCPU
	}
	// RFC hunk 1: "(sync && nr_running == 1) || is_short_task(curr)".
	if k.S.ShortTaskAffine == ShortAffineSyncOr && k.isShortTask(thisRq.Curr) {
		k.affine = AffineShortThis
		return thisCPU
	}
	if k.availableIdleCPU(prevCPU) {
		k.affine = AffineIdlePrev
		return prevCPU
	}
	switch k.S.ShortTaskAffine {
	case ShortAffineEnd: // short-task-v1, -v2
		if k.isShortTask(thisRq.Curr) {
			k.affine = AffineShortThis
			return thisCPU
		}
	case ShortAffineEndSingle: // short-task-v3, -v4, -rfc2
		if nrRunningNotDelayed(thisRq) == 1 && k.isShortTask(thisRq.Curr) {
			k.affine = AffineShortThis
			return thisCPU
		}
	}
	return cpumask.None
}

// shortAffineBase is the CPU wake_affine would choose in the short-task
// variants' comparison kernel where wake_affine_idle's short-task hunk
// just chose this_cpu: prev_cpu if it is idle (only the RFC's hunk comes
// before that check; the others come after it, where it failed), else
// wake_affine_weight's answer, computed without storing h_load, or
// prev_cpu for no opinion.
func (k *Kernel) shortAffineBase(sd *SchedDomain, p *Task, thisCPU, prevCPU cpumask.CPU, sync bool) cpumask.CPU {
	if k.availableIdleCPU(prevCPU) {
		return prevCPU
	}
	if k.S.WAWeight && k.wakeAffineWeightPeek(sd, p, thisCPU, prevCPU, sync, true) == thisCPU {
		return thisCPU
	}
	return prevCPU
}

// wakeAffineWeight mirrors fair.c:wake_affine_weight (v6.19): pull to this_cpu if
// its load with p (less the waker's, for sync) is below prev_cpu's without
// p, prev_cpu being favoured by half the domain's imbalance_pct (WA_BIAS).
func (k *Kernel) wakeAffineWeight(sd *SchedDomain, p *Task, thisCPU, prevCPU cpumask.CPU, sync bool) cpumask.CPU {
	return k.wakeAffineWeightPeek(sd, p, thisCPU, prevCPU, sync, false)
}

// wakeAffineWeightPeek is wakeAffineWeight; with peek it stores nothing
// (task_h_load's cache is read, not updated: taskHLoadPeek).
func (k *Kernel) wakeAffineWeightPeek(sd *SchedDomain, p *Task, thisCPU, prevCPU cpumask.CPU, sync, peek bool) cpumask.CPU {
	thisEff := int64(cpuLoad(k.Rqs[thisCPU]))
	if sync {
		currentLoad := k.taskHLoadPeek(k.Current(), peek)
		if currentLoad > uint64(thisEff) {
			return thisCPU
		}
		thisEff -= int64(currentLoad)
	}
	taskLoad := int64(k.taskHLoadPeek(p, peek))
	thisEff += taskLoad
	if k.S.WABias {
		thisEff *= 100
	}
	thisEff *= int64(k.capacityOf(prevCPU))

	prevEff := int64(cpuLoad(k.Rqs[prevCPU])) - taskLoad
	if k.S.WABias {
		prevEff *= int64(100 + (sd.T.ImbalancePct-100)/2)
	}
	prevEff *= int64(k.capacityOf(thisCPU))
	// With sync, a tie lets select_idle_sibling stack the wakee on the
	// waker if nothing else is idle.
	if sync {
		prevEff++
	}
	if thisEff < prevEff {
		return thisCPU
	}
	return cpumask.None
}

// sdLLC mirrors per_cpu(sd_llc, cpu) as the runtime domain (nil if none;
// every baseline).
func (k *Kernel) sdLLC(cpu cpumask.CPU) *SchedDomain {
	d := k.Topo.SdLLC[cpu]
	if d == nil {
		return nil
	}
	return k.dom.byID[d.ID]
}

// smtActive mirrors sched_smt_active() (every baseline): some core has
// several threads.
func (k *Kernel) smtActive() bool { return k.Topo.SMTPresent }

// asymFitsCPU mirrors fair.c:asym_fits_cpu (v6.19) (no uclamp): on asymmetric
// machines the task's util_est must fit the CPU.
func (k *Kernel) asymFitsCPU(util uint64, cpu cpumask.CPU) bool {
	if k.asymCPUCapacity() {
		return k.utilFitsCPU(util, cpu) > 0
	}
	return true
}

// selectIdleSibling mirrors fair.c:select_idle_sibling (v6.19): the fast
// path's search for an idle CPU near target (the waker's CPU or prev after
// wake_affine). v6.0's copy differs in having no clusters, which its
// topology never activates (the variant sis-cluster activates them:
// Settings.SISCluster), and in its recent_used_cpu test
// (Settings.RecentUsedCPU); v5.12's also in having no select_idle_smt step
// (Settings.SISIdleCoresV512). Simplified: the per-CPU-kthread stacking
// shortcut is omitted (no kthreads are modelled).
func (k *Kernel) selectIdleSibling(p *Task, prev, target cpumask.CPU) cpumask.CPU {
	hasIdleCore := false
	k.clusterDeferred = cpumask.None
	var taskUtil uint64
	if k.asymCPUCapacity() {
		syncEntityLoadAvg(&p.SE)
		taskUtil = k.taskUtilEst(p)
	}

	if k.idleOrSchedIdle(target) && k.asymFitsCPU(taskUtil, target) {
		k.why = ReasonTargetIdle
		return target
	}

	// The previous CPU is cache affine and idle: don't be stupid.
	prevAff := cpumask.None
	if prev != target && k.cpusShareCache(prev, target) && k.idleOrSchedIdle(prev) &&
		k.asymFitsCPU(taskUtil, prev) {
		if !k.Topo.ClusterActive || k.Topo.CPUsShareResources(prev, target) {
			k.why = ReasonPrevIdle
			return prev
		}
		prevAff = prev
		if k.S.SISCluster {
			k.clusterDeferred = prev
		}
	}

	// (Per-CPU kthread stacking would go here.)

	recentUsedCPU := p.RecentUsedCPU
	// The CPU whose affinity is tested: the candidate (v6.19, v5.12), or
	// the field just overwritten with prev (v5.15–v6.1).
	allowedCPU := recentUsedCPU
	switch k.S.RecentUsedCPU {
	case 0:
		p.RecentUsedCPU = prev
	case 1:
		p.RecentUsedCPU = prev
		allowedCPU = prev
	}
	if recentUsedCPU != cpumask.None && recentUsedCPU != prev && recentUsedCPU != target &&
		k.cpusShareCache(recentUsedCPU, target) && k.idleOrSchedIdle(recentUsedCPU) &&
		p.CPUsAllowed.Test(allowedCPU) && k.asymFitsCPU(taskUtil, recentUsedCPU) {
		if k.S.RecentUsedCPU == 2 {
			// v5.12 replaces it only when it is used.
			p.RecentUsedCPU = prev
			k.why = ReasonRecentUsed
			return recentUsedCPU
		}
		if !k.Topo.ClusterActive || k.Topo.CPUsShareResources(recentUsedCPU, target) {
			k.why = ReasonRecentUsed
			return recentUsedCPU
		}
		if k.S.SISCluster && prevAff == cpumask.None {
			k.clusterDeferred = recentUsedCPU
		}
	} else {
		recentUsedCPU = cpumask.None
	}

	// On asymmetric machines the domain of interest is sd_asym_cpucapacity.
	if k.asymCPUCapacity() {
		if sd := k.Topo.SdAsymCPUCapacity[target]; sd != nil {
			if i := k.selectIdleCapacity(p, sd, target); i != cpumask.None {
				k.why = ReasonCapacity
				return i
			}
			k.why = ReasonFallback
			return target
		}
	}

	sd := k.sdLLC(target)
	if sd == nil {
		k.why = ReasonFallback
		return target
	}

	// v5.12: select_idle_cpu asks test_idle_cores itself, and there is
	// no select_idle_smt step.
	if k.smtActive() && !k.S.SISIdleCoresV512 {
		hasIdleCore = k.testIdleCores(target)
		if !hasIdleCore && k.cpusShareCache(prev, target) {
			if i := k.selectIdleSMT(p, sd, prev); i != cpumask.None {
				k.why = ReasonIdleSMT
				return i
			}
		}
	}

	if k.S.ClusterLevel {
		if i := k.selectIdleCluster(p, sd, hasIdleCore, target); i != cpumask.None {
			k.why = ReasonCluster
			return i
		}
	}
	// select_idle_cpu records why it returned a CPU.
	if i := k.selectIdleCPU(p, sd, hasIdleCore, target); i != cpumask.None {
		return i
	}
	if k.S.SISNode {
		if i := k.selectIdleNode(p, sd, target); i != cpumask.None {
			// The comparison kernel stays in target's LLC.
			k.Branches[BranchSISNode].Changed++
			k.why = ReasonNode
			return i
		}
	}
	// Clusters: the cache-affine prev or recent CPU outside target's
	// cluster is still better than a busy target.
	if prevAff != cpumask.None {
		k.why = ReasonPrevCluster
		return prevAff
	}
	if recentUsedCPU != cpumask.None {
		k.why = ReasonRecentCluster
		return recentUsedCPU
	}
	k.why = ReasonFallback
	return target
}

// selectIdleNode mirrors select_idle_node of "sched/fair: Multi-LLC
// select_idle_sibling()" (tip sched/core c7dfd6b9122d, on the v6.4-rc
// tree; the variant sis-node): when target's LLC had no idle CPU, walk the
// groups of the LLC's parent domain from the local one, unless that parent
// is a NUMA level ("make sure to not cross nodes"), and for each group
// whose first CPU does not share target's cache run select_idle_cpu on
// that CPU's sd_llc, with test_idle_cores of that CPU and that CPU as the
// target (so SIS_UTIL's nr_idle_scan is the other LLC's own).
//
// With Settings.SISNodeLimit it also mirrors Peter Zijlstra's limit on it
// (<20230601111326.GV4253@hirez.programming.kicks-ass.net>, posted on the
// v6.4-rc tip on top of the patch; the variant sis-node-limit): "int nr =
// 4;" and, after each other LLC whose select_idle_cpu found nothing,
// "if (!--nr) return -1;", so at most four other LLCs are scanned, each
// with its own budget. Groups sharing target's cache are skipped without
// counting, as the patch's decrement sits inside the other-LLC branch.
// Simplified (both forms): a group whose first CPU has no sd_llc is
// skipped; every modelled machine gives each CPU one.
func (k *Kernel) selectIdleNode(p *Task, sd *SchedDomain, target cpumask.CPU) cpumask.CPU {
	parent := sd.Parent
	if parent == nil || parent.T.Flags&topology.SDNuma != 0 {
		return cpumask.None
	}
	k.Branches[BranchSISNode].Taken++
	nr := 4
	for gi, sg := range parent.T.Groups {
		cpu := sg.Span.First()
		if cpu == cpumask.None || k.cpusShareCache(cpu, target) {
			continue
		}
		llc := k.sdLLC(cpu)
		if llc == nil {
			continue
		}
		if i := k.selectIdleCPU(p, llc, k.testIdleCores(cpu), cpu); i != cpumask.None {
			return i
		}
		if k.S.SISNodeLimit {
			nr--
			if nr == 0 {
				k.countNodeLimit(p, parent.T.Groups[gi+1:], target)
				return cpumask.None
			}
		}
	}
	return cpumask.None
}

// countNodeLimit counts sis-node-limit's branch where the limit ended
// select_idle_node's walk before groups, the rest of the parent's: taken
// if one of them is another LLC, changed if the scan of such an LLC,
// dry (selectIdleCPUDry), finds an idle CPU. The dry scans start from the
// same state, so with SIS_PROP on their budgets do not spend what the
// earlier ones would have (SIS_PROP is off in v6.0, the variant's
// baseline).
func (k *Kernel) countNodeLimit(p *Task, groups []*topology.Group, target cpumask.CPU) {
	taken, found := false, false
	for _, sg := range groups {
		cpu := sg.Span.First()
		if cpu == cpumask.None || k.cpusShareCache(cpu, target) {
			continue
		}
		llc := k.sdLLC(cpu)
		if llc == nil {
			continue
		}
		taken = true
		k.dry = true
		idleCores := k.testIdleCores(cpu)
		k.dry = false
		if k.selectIdleCPUDry(p, llc, idleCores, cpu) != cpumask.None {
			found = true
			break
		}
	}
	if taken {
		k.countBranch(BranchSISNodeLimit, found)
	}
}

// selectIdleCPU mirrors fair.c:select_idle_cpu (v6.19, with v6.0's
// SIS_PROP when that feature is on, and v5.12's form with the
// Settings.SISIdleCoresV512/SISPropV512/SISScanFromTarget switches) plus
// the short-task variants' hunk 2. With SIS_PROP the scan's duration (the
// kernel measures it with cpu_clock) is folded into the waker's LLC
// avg_scan_cost (and, v5.13+, spent from wake_avg_idle): what the scan is
// charged with Settings.SISScanLines under the cost model
// (accountSISProp), else Settings.SISScanCost per CPU examined. Returns
// cpumask.None if nothing is idle.
//
// It also mirrors the select_idle_cpu hunks of Chen Yu's two SIS_UTIL
// RFCs, both on the v5.17-rc tip, whose select_idle_cpu is v6.0's with
// SIS_PROP on and no SIS_UTIL:
//   - "sched: Stop searching for idle cpu if the LLC domain is
//     overloaded" (<20220207034013.599214-1-yu.c.chen@intel.com>,
//     Settings.SISUtilV1): return -1 before the SIS_PROP budget and
//     before any scan, the idle-core scan included, when
//     sd_llc_shared(target)->overloaded is set (updateLLCOverloaded);
//   - "[PATCH v2][RFC] sched/fair: Change SIS_PROP to search idle CPU
//     based on sum of util_avg" (<20220310005228.11737-1-yu.c.chen@intel.com>,
//     Settings.SISUtilV2): inside "if (sched_feat(SIS_PROP) &&
//     !has_idle_core)", nr = READ_ONCE(sd_llc_shared(target)->nr_idle_scan)
//     (updateNrIdleScan) replaces the wake_avg_idle/avg_scan_cost budget,
//     and the bookkeeping after the scan is gone.
//
// Simplified for both: the 5.17-rc tip tests the waking CPU's sd_llc at
// the top of select_idle_cpu, v6.0 (and this model) only under SIS_PROP;
// they differ only for a waking CPU without an LLC domain, which no
// modelled machine has. The v2 RFC's quoted diff does not show whether it
// kept that test. Reading overloaded and nr_idle_scan is not charged as a
// load of sd_llc_shared's line (nor is SIS_UTIL's nr_idle_scan read).
func (k *Kernel) selectIdleCPU(p *Task, sd *SchedDomain, hasIdleCore bool, target cpumask.CPU) cpumask.CPU {
	idleCPU := cpumask.None
	nr := math.MaxInt
	thisRq := k.Rqs[k.thisCPU]

	// v5.12: "bool smt = test_idle_cores(target, false)" on every call,
	// SMT or not (its answer is false without SMT, where nothing sets
	// has_idle_cores), then a sd_llc test of the waking CPU.
	if k.S.SISIdleCoresV512 {
		hasIdleCore = k.testIdleCores(target)
		if k.sdLLC(k.thisCPU) == nil {
			return cpumask.None
		}
	}

	// SIS_UTIL v1 RFC: an LLC the last periodic balance found overloaded
	// is not scanned at all.
	if k.S.SISUtilV1 {
		if sds := k.SdLLCShared(int(target)); sds != nil && sds.Overloaded {
			if !k.dry {
				k.countBranch(BranchLLCOverloaded, k.selectIdleCPUBase(BranchLLCOverloaded, p, sd, hasIdleCore, target) != cpumask.None)
			}
			return cpumask.None
		}
	}
	// The comparison kernels' answers where a variant changes the
	// budget (v2) or the scan's order (the cluster step), for the
	// counters at the returns after the scan (countScan).
	var bases scanBases

	var thisSD *SchedDomain
	sisProp := k.S.SISProp && !hasIdleCore
	if sisProp && k.S.SISUtilV2 {
		// SIS_UTIL v2 RFC: the budget is the LLC's nr_idle_scan, without
		// SIS_UTIL's +1: v5.17's loop ends on "if (!--nr) return -1", so
		// nr_idle_scan − 1 CPUs are examined (the "<= 0" test below is
		// the same for nr >= 1). From the boot value 0, "!--nr" never
		// comes true and the whole LLC is scanned, as with no budget.
		// Nothing is accounted after the scan.
		sisProp = false
		if sds := k.SdLLCShared(int(target)); sds != nil && sds.NrIdleScan > 0 {
			nr = sds.NrIdleScan
		}
		if !k.dry {
			bases.v2, bases.v2CPU = true, k.selectIdleCPUBase(BranchNrIdleScan, p, sd, hasIdleCore, target)
		}
	}
	if sisProp {
		thisSD = k.sdLLC(k.thisCPU)
		if thisSD == nil {
			return cpumask.None
		}
		var avgIdle uint64
		if k.S.SISPropV512 {
			// v5.12: the waking CPU's avg_idle with a fuzz factor of
			// 512, neither aged nor spent.
			avgIdle = thisRq.AvgIdle / 512
		} else {
			avgIdle = k.wakeAvgIdleAged(thisRq)
		}
		avgCost := thisSD.AvgScanCost + 1
		spanAvg := uint64(sd.T.SpanWeight) * avgIdle
		if spanAvg > 4*avgCost {
			nr = int(spanAvg / avgCost)
		} else {
			nr = 4
		}
	}

	if k.S.SISUtil {
		if sds := k.SdLLCShared(int(target)); sds != nil {
			// "--nr <= 0" ends the scan, hence the +1.
			nr = sds.NrIdleScan + 1
			// An overloaded LLC is unlikely to have an idle CPU.
			if nr == 1 {
				return cpumask.None
			}
			if k.shortTaskSkipScan(p, sd, nr, hasIdleCore, target) {
				if !k.dry {
					base := k.selectIdleCPUBase(BranchShortScan, p, sd, hasIdleCore, target)
					k.countBranch(BranchShortScan, base != cpumask.None && base != target)
				}
				k.why = ReasonShortTask
				return target
			}
		}
	}

	// cpumask_and(cpus, sched_domain_span(sd), p->cpus_ptr), taken after
	// the early exits above (which do not read it) to spare the copy.
	cpus := sd.T.Span.And(p.CPUsAllowed)
	if !k.dry {
		thisRq.Wakeup.SISScans++
	}
	scanned := uint64(0)
	// lineNs is what the examined CPUs' runqueue lines cost
	// (Settings.SISScanLines).
	lineNs := engine.Time(0)
	// step examines one CPU; it returns false to end the loop. decided
	// marks the kernel's "return" from inside a loop (res is the answer),
	// as opposed to a "break" that reaches the tail below.
	res, decided := cpumask.None, false
	// why is the reason a CPU found in the loop is returned for.
	why := ReasonIdleCPU
	step := func(cpu cpumask.CPU) bool {
		if hasIdleCore {
			scanned++
			lineNs += k.sisScanLine(cpu)
			if i := k.selectIdleCore(p, cpu, cpus, &idleCPU); i != cpumask.None {
				res, decided, why = i, true, ReasonIdleCore
				return false
			}
			return true
		}
		nr--
		if nr <= 0 {
			res, decided = cpumask.None, true
			return false
		}
		scanned++
		lineNs += k.sisScanLine(cpu)
		idleCPU = cpumask.None
		if k.idleOrSchedIdle(cpu) {
			idleCPU = cpu
			return false
		}
		return true
	}

	if k.Topo.ClusterActive && !k.flatScan && len(sd.T.Groups) > 0 && sd.T.Groups[0].Flags&topology.SDCluster != 0 {
		// Scan target's cluster (the LLC's first group) first.
		sg := sd.T.Groups[0]
		if k.S.SISCluster && !k.dry {
			// v6.0, sis-cluster's comparison kernel, has no cluster step.
			bases.cluster, bases.clusterCPU = true, k.selectIdleCPUBase(BranchClusterScan, p, sd, hasIdleCore, target)
		}
		sg.Span.ForEachWrap(target+1, func(cpu cpumask.CPU) bool {
			if !cpus.Test(cpu) {
				return true
			}
			if !step(cpu) {
				if !decided {
					res, decided = idleCPU, true
				}
				why = ReasonCluster
				return false
			}
			return true
		})
		if !decided {
			cpus.AndNotInPlace(sg.Span)
		}
	}
	if !decided {
		start := target + 1
		if k.S.SISScanFromTarget {
			start = target
		}
		cpus.ForEachWrap(start, step)
	}
	if decided {
		if res != cpumask.None {
			k.why = why
		}
		if !k.dry {
			thisRq.Wakeup.SISScanned += scanned
			thisRq.Wakeup.SISScanLineNs += lineNs
			k.countScan(&bases, res)
		}
		return res
	}
	if idleCPU != cpumask.None {
		k.why = ReasonIdleCPU
	}
	if k.dry {
		return idleCPU
	}
	thisRq.Wakeup.SISScanned += scanned
	thisRq.Wakeup.SISScanLineNs += lineNs
	if hasIdleCore {
		if k.S.SISIdleCoresV512 {
			// v5.12 clears the waking CPU's LLC hint (v5.13-rc3
			// fixed it to target's).
			k.setIdleCores(k.thisCPU, false)
		} else {
			k.setIdleCores(target, false)
		}
	}
	k.accountSISProp(sisProp, thisRq, thisSD, scanned, lineNs)
	k.countScan(&bases, idleCPU)
	return idleCPU
}

// scanBases are the answers of the comparison kernels of the variants
// select_idle_cpu's scan took a branch of: sis-util-v2's budget, the
// cluster step.
type scanBases struct {
	v2, cluster       bool
	v2CPU, clusterCPU cpumask.CPU
}

// countScan counts the branches in b of a select_idle_cpu that returned
// cpu.
func (k *Kernel) countScan(b *scanBases, cpu cpumask.CPU) {
	if b.v2 {
		k.countBranch(BranchNrIdleScan, cpu != b.v2CPU)
	}
	if b.cluster {
		k.countBranch(BranchClusterScan, cpu != b.clusterCPU)
	}
}

// selectIdleCPUBase is what selectIdleCPU(p, sd, hasIdleCore, target)
// returns in the comparison kernel of the variant whose branch b it is
// taking: the same code run again with the variant's change undone (its
// setting off; for the cluster step, the whole LLC scanned from
// target+1), dry (selectIdleCPUDry).
func (k *Kernel) selectIdleCPUBase(b Branch, p *Task, sd *SchedDomain, hasIdleCore bool, target cpumask.CPU) cpumask.CPU {
	shortScan, v1, v2 := k.S.ShortTaskScan, k.S.SISUtilV1, k.S.SISUtilV2
	switch b {
	case BranchShortScan:
		k.S.ShortTaskScan = ShortScanOff
	case BranchLLCOverloaded:
		k.S.SISUtilV1 = false
	case BranchNrIdleScan:
		k.S.SISUtilV2 = false
	case BranchClusterScan:
		k.flatScan = true
	default:
		panic("sched: selectIdleCPUBase of " + b.String())
	}
	cpu := k.selectIdleCPUDry(p, sd, hasIdleCore, target)
	k.S.ShortTaskScan, k.S.SISUtilV1, k.S.SISUtilV2, k.flatScan = shortScan, v1, v2, false
	return cpu
}

// selectIdleCPUDry is selectIdleCPU's answer without its effects: no
// counter, no store (wake_avg_idle's ageing, has_idle_cores, SIS_PROP's
// accounting, the LLC-shared line), no reason recorded. A variant's
// counters ask it what the comparison kernel would have done.
func (k *Kernel) selectIdleCPUDry(p *Task, sd *SchedDomain, hasIdleCore bool, target cpumask.CPU) cpumask.CPU {
	why := k.why
	k.dry = true
	cpu := k.selectIdleCPU(p, sd, hasIdleCore, target)
	k.dry, k.why = false, why
	return cpu
}

// accountSISProp is the end of v6.0's select_idle_cpu under SIS_PROP: the
// scan time is spent from wake_avg_idle (not in v5.12, which has none) and
// folded into avg_scan_cost. The time is Settings.SISScanCost per CPU
// scanned; with Settings.SISScanLines under the cost model it is what the
// scan is charged instead (sis_scan_loop_ns per CPU and lineNs, the
// examined runqueues' lines), as cpu_clock() would measure it.
func (k *Kernel) accountSISProp(sisProp bool, thisRq *Rq, thisSD *SchedDomain, scanned uint64, lineNs engine.Time) {
	if !sisProp {
		return
	}
	t := scanned * k.S.SISScanCost
	if k.sisScanLinesOn() {
		t = scanned*uint64(k.Costs.SISScanLoop) + uint64(lineNs)
	}
	if !k.S.SISPropV512 {
		thisRq.WakeAvgIdle -= min(thisRq.WakeAvgIdle, t)
	}
	updateAvg(&thisSD.AvgScanCost, t)
}

// sisScanLinesOn reports whether select_idle_* pays for each examined
// CPU's runqueue line by distance (Settings.SISScanLines, under the cost
// model).
func (k *Kernel) sisScanLinesOn() bool { return k.S.SISScanLines && k.costsOn }

// sisScanLine is what reading cpu's runqueue line costs the scanning CPU
// (Settings.SISScanLines): one line last written by cpu, moved to the
// waking CPU at their distance (costmodel.Table.LineTransfer: nothing
// within a core). 0 with the setting off or without the cost model.
func (k *Kernel) sisScanLine(cpu cpumask.CPU) engine.Time {
	if !k.sisScanLinesOn() {
		return 0
	}
	d := k.Costs.LineTransfer(cpu, k.thisCPU)
	// The examined CPU's next store invalidates the copy this read left
	// (Settings.SISScanInvalidate); a dry scan reads nothing.
	if k.S.SISScanInvalidate && !k.dry {
		if rq := k.Rqs[cpu]; d > rq.sisInvalNs {
			rq.sisInvalNs = d
		}
	}
	return d
}

// selectIdleCore mirrors fair.c:select_idle_core (v6.19): core if all its SMT
// siblings are idle; otherwise remember the first idle allowed sibling in
// *idleCPU and drop the core from cpus.
func (k *Kernel) selectIdleCore(p *Task, core cpumask.CPU, cpus cpumask.Mask, idleCPU *cpumask.CPU) cpumask.CPU {
	if !k.smtActive() {
		// !CONFIG_SCHED_SMT form: a single-CPU check.
		if k.idleOrSchedIdle(core) {
			return core
		}
		return cpumask.None
	}
	idle := true
	smt := k.Topo.SMTMask[core]
	for cpu := smt.First(); cpu != cpumask.None; cpu = smt.Next(cpu) {
		if !k.availableIdleCPU(cpu) {
			idle = false
			if *idleCPU == cpumask.None {
				if k.schedIdleCPU(cpu) && cpus.Test(cpu) {
					*idleCPU = cpu
					break
				}
				continue
			}
			break
		}
		if *idleCPU == cpumask.None && cpus.Test(cpu) {
			*idleCPU = cpu
		}
	}
	if idle {
		return core
	}
	cpus.AndNotInPlace(k.Topo.SMTMask[core])
	return cpumask.None
}

// selectIdleSMT mirrors fair.c:select_idle_smt (v6.19): an idle SMT sibling of
// target inside sd and p's mask.
func (k *Kernel) selectIdleSMT(p *Task, sd *SchedDomain, target cpumask.CPU) cpumask.CPU {
	smt := k.Topo.SMTMask[target]
	for cpu := smt.First(); cpu != cpumask.None; cpu = smt.Next(cpu) {
		if cpu == target || !p.CPUsAllowed.Test(cpu) || !sd.T.Span.Test(cpu) {
			continue
		}
		if k.idleOrSchedIdle(cpu) {
			return cpu
		}
	}
	return cpumask.None
}

// selectIdleCapacity mirrors fair.c:select_idle_capacity (v6.19, no
// uclamp): the first idle CPU of sd from target on which p's util_est
// fits, else the idle CPU with the largest capacity_of.
func (k *Kernel) selectIdleCapacity(p *Task, sd *topology.Domain, target cpumask.CPU) cpumask.CPU {
	cpus := sd.Span.And(p.CPUsAllowed)
	taskUtil := k.taskUtilEst(p)
	bestCPU, bestFits := cpumask.None, 0
	var bestCap uint64
	res := cpumask.None
	cpus.ForEachWrap(target, func(cpu cpumask.CPU) bool {
		cpuCap := k.capacityOf(cpu)
		if !k.idleOrSchedIdle(cpu) {
			return true
		}
		fits := k.utilFitsCPU(taskUtil, cpu)
		if fits > 0 {
			res = cpu
			return false
		}
		if fits < bestFits || (fits == bestFits && cpuCap > bestCap) {
			bestCap, bestCPU, bestFits = cpuCap, cpu, fits
		}
		return true
	})
	if res != cpumask.None {
		return res
	}
	return bestCPU
}

// testIdleCores mirrors fair.c:test_idle_cores (v6.19): read the LLC's
// has_idle_cores hint. Every read is counted on the reading CPU
// (WakeupCounters.TestIdleCoresReads). With TestIdleCoresSMTCheck (Barry
// Song's v5.13 patch) a machine without SMT answers false without reading.
//
// In a dry run (selectIdleCPUDry) it reads the hint without counting or
// moving the line.
func (k *Kernel) testIdleCores(cpu cpumask.CPU) bool {
	sds := k.SdLLCShared(int(cpu))
	if k.S.TestIdleCoresSMTCheck && !k.smtActive() {
		if !k.dry {
			k.countBranch(BranchIdleCoresNoSMT, sds != nil && sds.HasIdleCores)
		}
		return false
	}
	if sds == nil {
		return false
	}
	if k.dry {
		return sds.HasIdleCores
	}
	w := &k.Rqs[k.thisCPU].Wakeup
	w.TestIdleCoresReads++
	if k.S.LLCSharedLines {
		w.IdleCoresLineNs += sds.line.load(k, k.thisCPU)
	}
	return sds.HasIdleCores
}

// setIdleCores mirrors fair.c:set_idle_cores (v6.19).
func (k *Kernel) setIdleCores(cpu cpumask.CPU, val bool) {
	if sds := k.SdLLCShared(int(cpu)); sds != nil {
		sds.HasIdleCores = val
		if k.S.LLCSharedLines {
			k.Rqs[k.thisCPU].Wakeup.IdleCoresLineNs += sds.line.store(k, k.thisCPU)
		}
	}
}

// updateIdleCore mirrors sched.h:update_idle_core (v6.19), called from
// set_next_task_idle each time a CPU switches to its idle task.
func (k *Kernel) updateIdleCore(rq *Rq) {
	if k.smtActive() {
		k.doUpdateIdleCore(rq)
	}
}

// doUpdateIdleCore mirrors fair.c:__update_idle_core (v6.19): if every other SMT
// sibling of rq's CPU is idle too, the LLC has an idle core.
func (k *Kernel) doUpdateIdleCore(rq *Rq) {
	core := rq.CPU
	if k.testIdleCores(core) {
		return
	}
	smt := k.Topo.SMTMask[core]
	for cpu := smt.First(); cpu != cpumask.None; cpu = smt.Next(cpu) {
		if cpu == core {
			continue
		}
		if !k.availableIdleCPU(cpu) {
			return
		}
	}
	k.setIdleCores(core, true)
}

// updateIdleCPUScan mirrors fair.c:update_idle_cpu_scan (v6.19) (SIS_UTIL). The
// load balancer calls it at the end of update_sd_lb_stats with its
// destination CPU, domain, idle type and the summed cpu_util_cfs of the
// domain; it acts only on the LLC-sized domain and not for newly idle
// balancing. nr_idle_scan falls quadratically with the LLC's average
// utilisation x (per CPU, out of 1024):
//
//	nr_idle_scan = llc_weight × (1024 − min(x² × pct² / (10000 × 1024), 1024)) / 1024
//
// reaching 0 at x = 1024 × 100/pct (85 % for pct 117). Until it first
// runs nr_idle_scan is 0 (the structure is zero-allocated), so
// select_idle_cpu returns at once.
// As the kernel does, it stores nr_idle_scan only when the value changes;
// with Settings.LLCSharedLines that store invalidates the other CPUs'
// copies of the sd_llc_shared line, uncharged (the balancing CPU's time
// for it is not modelled).
func (k *Kernel) updateIdleCPUScan(dstCPU cpumask.CPU, sd *SchedDomain, idle int, sumUtil uint64) {
	if !k.S.SISUtil || idle == CPUNewlyIdle {
		return
	}
	llcWeight := uint64(k.Topo.SdLLCSize[dstCPU])
	if uint64(sd.T.SpanWeight) != llcWeight {
		return
	}
	sds := k.SdLLCShared(int(dstCPU))
	if sds == nil {
		return
	}
	x := sumUtil / llcWeight
	pct := uint64(sd.T.ImbalancePct)
	tmp := x * x * pct * pct / (10000 * SchedCapacityScale)
	tmp = min(tmp, SchedCapacityScale)
	y := (SchedCapacityScale - tmp) * llcWeight / SchedCapacityScale
	if int(y) != sds.NrIdleScan {
		// Only a change is stored, so the line stays shared.
		sds.NrIdleScan = int(y)
		if k.S.LLCSharedLines {
			sds.line.store(k, dstCPU)
		}
	}
}

// updateLLCOverloaded mirrors the hunk that Chen Yu's "sched: Stop
// searching for idle cpu if the LLC domain is overloaded" (RFC on v5.17-rc,
// <20220207034013.599214-1-yu.c.chen@intel.com>; Settings.SISUtilV1) adds
// at the end of update_sd_lb_stats, which has no function of its own
// there. For a balance that is not newly idle, of the domain whose
// span_weight equals dst_cpu's sd_llc_size, it writes
//
//	sd_llc_shared(dst_cpu)->overloaded = total_capacity × 100 < sum_util × imbalance_pct
//
// with sum_util the summed group_util (cpu_util_cfs) and total_capacity
// the summed group_capacity of the domain's groups, in unsigned long
// (here uint64) arithmetic: above 100/117 = 85 % of capacity for the LLC's
// imbalance_pct of 117. WRITE_ONCE stores whether the value changed or
// not, so with Settings.LLCSharedLines every such balance invalidates the
// other CPUs' copies of the sd_llc_shared line, uncharged (as
// updateIdleCPUScan's store is). Until the first such balance the flag is
// false (the structure is zero-allocated).
func (k *Kernel) updateLLCOverloaded(dstCPU cpumask.CPU, sd *SchedDomain, idle int, totalCapacity, sumUtil uint64) {
	if !k.S.SISUtilV1 || idle == CPUNewlyIdle || sd.T.SpanWeight != k.Topo.SdLLCSize[dstCPU] {
		return
	}
	sds := k.SdLLCShared(int(dstCPU))
	if sds == nil {
		return
	}
	sds.Overloaded = totalCapacity*100 < sumUtil*uint64(sd.T.ImbalancePct)
	if k.S.LLCSharedLines {
		sds.line.store(k, dstCPU)
	}
}

// updateNrIdleScan mirrors update_nr_idle_scan of Chen Yu's "[PATCH
// v2][RFC] sched/fair: Change SIS_PROP to search idle CPU based on sum of
// util_avg" (on v5.17-rc, <20220310005228.11737-1-yu.c.chen@intel.com>;
// Settings.SISUtilV2), called at the end of update_sd_lb_stats. For a
// balance that is not newly idle, of the domain whose span_weight equals
// dst_cpu's sd_llc_size, it writes to sd_llc_shared(dst_cpu)->nr_idle_scan
//
//	nr_scan = llc_size − (llc_size − 4) × 2 × sum_util / total_capacity;  if (nr_scan < 4) nr_scan = 4;
//
// a line from the whole LLC at no utilisation to 4 CPUs at half of the
// capacity and above. The arithmetic is C's: (llc_size − 4) × 2 is an
// int, converted to unsigned long for the product with sum_util, the
// quotient is unsigned, llc_size minus it wraps when the quotient is
// larger, and the int it is stored in takes the low 32 bits, a negative
// number that the floor raises to 4. WRITE_ONCE stores whether the value
// changed or not (with Settings.LLCSharedLines a store to the line,
// uncharged). Until the first such balance nr_idle_scan is 0.
func (k *Kernel) updateNrIdleScan(dstCPU cpumask.CPU, sd *SchedDomain, idle int, totalCapacity, sumUtil uint64) {
	llcSize := k.Topo.SdLLCSize[dstCPU]
	if !k.S.SISUtilV2 || idle == CPUNewlyIdle || sd.T.SpanWeight != llcSize {
		return
	}
	sds := k.SdLLCShared(int(dstCPU))
	if sds == nil {
		return
	}
	sds.NrIdleScan = nrIdleScanV2(llcSize, sumUtil, totalCapacity)
	if k.S.LLCSharedLines {
		sds.line.store(k, dstCPU)
	}
}

// nrIdleScanV2 is update_nr_idle_scan's formula in C's types (int
// llc_size, unsigned long sum_util and total_capacity, int nr_scan).
func nrIdleScanV2(llcSize int, sumUtil, totalCapacity uint64) int {
	q := uint64(int64(int32((llcSize-4)*2))) * sumUtil / totalCapacity
	nrScan := int32(uint64(int64(llcSize)) - q)
	if nrScan < 4 {
		nrScan = 4
	}
	return int(nrScan)
}

// wakeAvgIdleAged is SIS_PROP's estimate of the waking CPU's coming idle
// time in select_idle_cpu (v5.13–v6.9): a busy waker's last idle period
// does not predict the next, so wake_avg_idle is halved per jiffy since
// wake_stamp (from sched_init's values the first time: wakeAvgIdleInit),
// and stored back aged, except in a dry run.
func (k *Kernel) wakeAvgIdleAged(rq *Rq) uint64 {
	stamp, avg := rq.WakeStamp, rq.WakeAvgIdle
	if stamp == 0 {
		stamp, avg = k.wakeAvgIdleBoot()
	}
	now := k.Jiffies()
	for stamp < now && avg != 0 {
		stamp++
		avg >>= 1
	}
	if !k.dry {
		rq.WakeStamp, rq.WakeAvgIdle = stamp, avg
	}
	return avg
}

// wakeAvgIdleInit gives rq the wake_stamp and wake_avg_idle sched_init
// sets at boot (jiffies, and avg_idle's boot value 2 × migration_cost) the
// first time SIS_PROP reads them; until then nothing else has (a wakeup
// activation sets both through updateWakeAvgIdle).
func (k *Kernel) wakeAvgIdleInit(rq *Rq) {
	if rq.WakeStamp == 0 {
		rq.WakeStamp, rq.WakeAvgIdle = k.wakeAvgIdleBoot()
	}
}

// wakeAvgIdleBoot is sched_init's wake_stamp and wake_avg_idle.
func (k *Kernel) wakeAvgIdleBoot() (stamp, avg uint64) {
	return k.initialJiffies(), 2 * k.S.MigrationCost
}

// updateWakeAvgIdle mirrors the SIS_PROP lines of core.c:ttwu_do_activate
// (v5.15–v6.9): the woken CPU's idle period, halved, becomes the budget its
// next wakeups may spend scanning.
func (k *Kernel) updateWakeAvgIdle(rq *Rq) {
	rq.WakeAvgIdle = rq.AvgIdle / 2
	rq.WakeStamp = k.Jiffies()
}

// llcID mirrors per_cpu(sd_llc_id, cpu) (every baseline).
func (k *Kernel) llcID(cpu cpumask.CPU) cpumask.CPU { return k.Topo.SdLLCID[cpu] }

// asymCPUCapacity mirrors the sched_asym_cpucapacity static key (every
// baseline).
func (k *Kernel) asymCPUCapacity() bool { return k.Topo.AsymCPUCapacity }

// taskFitsCPU mirrors fair.c:task_fits_cpu (v6.19) without uclamp: the task's
// estimated utilisation fits the CPU's capacity with the 20% margin.
func (k *Kernel) taskFitsCPU(p *Task, cpu cpumask.CPU) bool {
	return fitsCapacity(k.taskUtilEst(p), k.Rqs[cpu].CPUCapacity)
}

// fitsCapacity mirrors fair.c:fits_capacity (v6.19).
func fitsCapacity(util, capacity uint64) bool { return util*1280 < capacity*1024 }

// selectIdleCluster mirrors select_idle_cluster of Barry Song's RFC v2
// "scheduler: add scheduler level for clusters" (Dec 2020, on v5.10-rc;
// Settings.ClusterLevel), which select_idle_sibling calls before
// select_idle_cpu: on a machine without SMT (sched_smt_active), the CPUs
// of target's cluster (cpu_cluster_mask), from target and wrapping, and
// the first that the task may run on and that is idle
// (available_idle_cpu). Each CPU it examines counts as a CPU scanned and
// pays its runqueue line (sis_scan_loop_ns and the line by distance with
// Settings.SISScanLines, else sis_scan_cpu_ns), as select_idle_cpu's do. sd and hasIdleCore are the
// LLC domain and test_idle_cores' answer, which only the branch counter's
// comparison (v5.12's select_idle_cpu from the same state) uses.
func (k *Kernel) selectIdleCluster(p *Task, sd *SchedDomain, hasIdleCore bool, target cpumask.CPU) cpumask.CPU {
	if k.smtActive() {
		return cpumask.None
	}
	res := cpumask.None
	scanned := uint64(0)
	lineNs := engine.Time(0)
	k.Topo.ClusterMask[target].ForEachWrap(target, func(cpu cpumask.CPU) bool {
		if !p.CPUsAllowed.Test(cpu) {
			return true
		}
		scanned++
		lineNs += k.sisScanLine(cpu)
		if k.availableIdleCPU(cpu) {
			res = cpu
			return false
		}
		return true
	})
	k.Rqs[k.thisCPU].Wakeup.SISScanned += scanned
	k.Rqs[k.thisCPU].Wakeup.SISScanLineNs += lineNs
	if res != cpumask.None {
		k.countBranch(BranchSelectIdleCluster, k.selectIdleCPUDry(p, sd, hasIdleCore, target) != res)
	}
	return res
}
