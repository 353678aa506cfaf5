package sched

import (
	"github.com/schedlab/schedlab/internal/cpumask"
	"github.com/schedlab/schedlab/internal/engine"
	"github.com/schedlab/schedlab/internal/topology"
)

// One balancing pass at one domain: sched_balance_rq (load_balance) and
// what it calls, as fair.c v6.19 has them.

// lb_env flags (fair.c LBF_*).
const (
	lbfAllPinned  = 0x01
	lbfNeedBreak  = 0x02
	lbfDstPinned  = 0x04
	lbfSomePinned = 0x08
	lbfActiveLB   = 0x10
	// lbfNohzStats and lbfNohzAgain are v5.10's LBF_NOHZ_STATS and
	// LBF_NOHZ_AGAIN (Settings.NewidleNohzStats).
	lbfNohzStats = 0x20
	lbfNohzAgain = 0x40
)

// migrationType mirrors enum migration_type (v6.19; the same in v6.0 and
// v5.12).
type migrationType int

const (
	migrateLoad migrationType = iota
	migrateUtil
	migrateTask
	migrateMisfit
)

// lbEnv mirrors struct lb_env (v6.19; the fields schedlab uses, which v6.0
// and v5.12 have too).
type lbEnv struct {
	sd         *SchedDomain
	srcRq      *Rq
	srcCPU     cpumask.CPU
	dstCPU     cpumask.CPU
	dstRq      *Rq
	dstGrpmask cpumask.Mask
	newDstCPU  cpumask.CPU
	idle       int
	imbalance  int64
	cpus       cpumask.Mask
	flags      int
	loop       int
	loopBreak  int
	loopMax    int
	// migrationType is what calculate_imbalance decided to move.
	migrationType migrationType
	tasks         []*Task
	// nohzStatsSkipped is set in a newly idle pass that the baseline
	// would have made refresh blocked load (LBF_NOHZ_STATS) until a CPU
	// it would have refreshed is found (BranchNewidleNoStats).
	nohzStatsSkipped bool
}

// sdParentGroupSGC is sd->parent->groups->sgc: the capacity state of the
// parent domain's local group, whose imbalance flag tells the parent that
// affinity defeated this level.
func (k *Kernel) sdParentGroupSGC(sd *SchedDomain) *SchedGroupCapacity {
	if sd.Parent == nil {
		return nil
	}
	return k.SGC(sd.Parent.T.Groups[0])
}

// schedBalanceRq mirrors fair.c:sched_balance_rq (v6.19): check whether
// this_cpu should balance sd for its group, find the busiest group and
// queue, pull up to the imbalance from it (retrying elsewhere if affinity
// blocks), start an active balance after repeated failures, and adjust
// the domain's failure count and interval. It returns the number of tasks
// moved. The SD_SERIALIZE token is taken here when
// Settings.LBSerializeInBalanceRq (v6.19), in sched_balance_domains
// otherwise (v6.0).
func (k *Kernel) schedBalanceRq(thisCPU cpumask.CPU, thisRq *Rq, sd *SchedDomain, idle int, continueBalancing *bool) int {
	var ldMoved, curLdMoved int
	activeBalance := false
	needUnlock := false
	env := &lbEnv{
		sd:         sd,
		dstCPU:     thisCPU,
		dstRq:      thisRq,
		dstGrpmask: sd.T.Groups[0].BalanceMask,
		idle:       idle,
		loopBreak:  schedNrMigrateBreak,
		newDstCPU:  cpumask.None,
	}
	// cpumask_and(cpus, sched_domain_span(sd), cpu_active_mask): every
	// CPU is active, so the span.
	ownMask := k.bal.lbMask[thisCPU].Size() > 0
	if ownMask {
		env.cpus, k.bal.lbMask[thisCPU] = k.bal.lbMask[thisCPU], cpumask.Mask{}
		env.tasks, k.bal.lbTasks[thisCPU] = k.bal.lbTasks[thisCPU][:0], nil
		env.cpus.ClearAll()
		env.cpus.OrInPlace(sd.T.Span)
	} else {
		env.cpus = sd.T.Span.Clone()
	}
	var busiest *Rq
	var group *topology.Group
	k.lbCharge(k.Costs.Balance.BalanceRqBase)
	sd.Stats.LbCount[idle]++

redo:
	if !k.shouldWeBalance(env) {
		*continueBalancing = false
		goto outBalanced
	}
	if k.S.LBSerializeInBalanceRq && !needUnlock && sd.T.Flags&topology.SDSerialize != 0 {
		if !k.serializeTryLock() {
			goto outBalanced
		}
		needUnlock = true
	}
	group = k.schedBalanceFindSrcGroup(env)
	if group == nil {
		sd.Stats.LbNoBusyg[idle]++
		goto outBalanced
	}
	busiest = k.schedBalanceFindSrcRq(env, group)
	if busiest == nil {
		sd.Stats.LbNoBusyq[idle]++
		goto outBalanced
	}
	if busiest == env.dstRq {
		// The kernel only warns (WARN_ON_ONCE); overlapping NUMA groups
		// can put dst_cpu in a remote group. Nothing to pull from itself.
		sd.Stats.LbNoBusyq[idle]++
		goto outBalanced
	}
	updateLbImbalanceStat(env, sd, idle)
	env.srcCPU = busiest.CPU
	env.srcRq = busiest
	ldMoved = 0
	env.flags |= lbfAllPinned
	if busiest.NrRunning > 1 {
		env.loopMax = min(k.S.NrMigrate, busiest.NrRunning)
	moreBalance:
		k.updateRqClock(busiest)
		curLdMoved = k.detachTasks(env)
		k.holdRqLock(busiest)
		if curLdMoved > 0 {
			k.attachTasks(env)
			ldMoved += curLdMoved
		}
		if env.flags&lbfNeedBreak != 0 {
			env.flags &^= lbfNeedBreak
			goto moreBalance
		}
		if env.flags&lbfDstPinned != 0 && env.imbalance > 0 {
			env.cpus.Clear(env.dstCPU)
			env.dstRq = k.Rqs[env.newDstCPU]
			env.dstCPU = env.newDstCPU
			env.flags &^= lbfDstPinned
			env.loop = 0
			env.loopBreak = schedNrMigrateBreak
			goto moreBalance
		}
		if sgc := k.sdParentGroupSGC(sd); sgc != nil {
			if env.flags&lbfSomePinned != 0 && env.imbalance > 0 {
				sgc.Imbalance = 1
			}
		}
		if env.flags&lbfAllPinned != 0 {
			env.cpus.Clear(busiest.CPU)
			if !env.cpus.SubsetOf(env.dstGrpmask) {
				env.loop = 0
				env.loopBreak = schedNrMigrateBreak
				goto redo
			}
			goto outAllPinned
		}
	}
	if ldMoved == 0 {
		sd.Stats.LbFailed[idle]++
		if idle != CPUNewlyIdle && !(k.S.LBMisfitNoFailCount && env.migrationType == migrateMisfit) {
			sd.NrBalanceFailed++
		}
		if k.needActiveBalance(env) {
			if !busiest.Curr.CPUsAllowed.Test(thisCPU) {
				goto outOnePinned
			}
			env.flags &^= lbfAllPinned
			if !busiest.ActiveBalance {
				busiest.ActiveBalance = true
				busiest.PushCPU = thisCPU
				activeBalance = true
			}
			if activeBalance {
				k.stopOneCPUNowait(busiest)
			}
			if k.S.LBActiveBalanceV512 {
				// v5.12: let the stopper (and the next passes)
				// accept a cache-hot task.
				sd.NrBalanceFailed = sd.T.CacheNiceTries + 1
			}
		}
	} else {
		sd.NrBalanceFailed = 0
	}
	if !activeBalance || k.needActiveBalance(env) {
		sd.BalanceInterval = uint64(sd.T.MinInterval)
	}
	goto out

outBalanced:
	if sgc := k.sdParentGroupSGC(sd); sgc != nil && env.flags&lbfAllPinned == 0 {
		sgc.Imbalance = 0
	}
outAllPinned:
	sd.Stats.LbBalanced[idle]++
	sd.NrBalanceFailed = 0
outOnePinned:
	ldMoved = 0
	if env.idle == CPUNewlyIdle || (k.S.LBMisfitNoFailCount && env.migrationType == migrateMisfit) {
		goto out
	}
	if (env.flags&lbfAllPinned != 0 && sd.BalanceInterval < maxPinnedInterval) ||
		sd.BalanceInterval < uint64(sd.T.MaxInterval) {
		sd.BalanceInterval *= 2
	}
out:
	if needUnlock {
		k.serializeUnlock()
	}
	if ownMask {
		k.bal.lbMask[thisCPU] = env.cpus
		k.bal.lbTasks[thisCPU] = env.tasks[:0]
	}
	return ldMoved
}

// updateLbImbalanceStat mirrors fair.c:update_lb_imbalance_stat (v6.14+):
// the imbalance added to the counter of its migration type.
func updateLbImbalanceStat(env *lbEnv, sd *SchedDomain, idle int) {
	imb := uint64(max(env.imbalance, 0))
	switch env.migrationType {
	case migrateLoad:
		sd.Stats.LbImbalanceLoad[idle] += imb
	case migrateUtil:
		sd.Stats.LbImbalanceUtil[idle] += imb
	case migrateTask:
		sd.Stats.LbImbalanceTask[idle] += imb
	case migrateMisfit:
		sd.Stats.LbImbalanceMisfit[idle] += imb
	}
}

// shouldWeBalance mirrors fair.c:should_we_balance (v6.19; with
// !LBSMTAware the v6.0 form, where the first idle CPU of the group
// decides regardless of its SMT siblings): only one CPU per group balances
// at each level — the first idle CPU (on a fully idle core, v6.6+), else
// the group's balance CPU. Newly idle CPUs always may, unless they have
// work or a wakeup pending (v6.0+; v5.12 without
// ShouldWeBalanceNewidleBail lets them regardless).
func (k *Kernel) shouldWeBalance(env *lbEnv) bool {
	if !env.cpus.Test(env.dstCPU) {
		return false
	}
	if env.idle == CPUNewlyIdle {
		if !k.S.ShouldWeBalanceNewidleBail {
			return true // v5.12
		}
		return env.dstRq.NrRunning == 0 && env.dstRq.TTWUPending == 0
	}
	sg := env.sd.T.Groups[0]
	swb := sg.BalanceMask.And(env.cpus)
	idleSMT := cpumask.None
	smtAware := k.S.LBSMTAware && env.sd.T.Flags&topology.SDShareCPUCapacity == 0
	for cpu := swb.First(); cpu != cpumask.None; cpu = swb.Next(cpu) {
		if !k.Rqs[cpu].IdleCPU() {
			continue
		}
		if smtAware && !k.isCoreIdle(cpu) {
			if idleSMT == cpumask.None {
				idleSMT = cpu
			}
			swb.AndNotInPlace(k.Topo.SMTMask[cpu])
			continue
		}
		return cpu == env.dstCPU
	}
	if idleSMT != cpumask.None {
		return idleSMT == env.dstCPU
	}
	return sg.BalanceMask.First() == env.dstCPU
}

// schedBalanceFindSrcGroup mirrors fair.c:sched_balance_find_src_group
// (find_busiest_group, v6.19; !LBSMTAware gives v6.0's prefer-sibling test
// on task counts): the busiest group if the domain is imbalanced enough to
// act, with env.imbalance and env.migrationType set.
func (k *Kernel) schedBalanceFindSrcGroup(env *lbEnv) *topology.Group {
	var sds sdLbStats
	initSdLbStats(&sds)
	k.updateSdLbStats(env, &sds)
	if sds.busiest == nil {
		env.imbalance = 0
		return nil
	}
	busiest := &sds.busiestStat
	local := &sds.localStat
	if busiest.GroupType == GroupMisfitTask {
		goto forceBalance
	}
	// Energy-aware scheduling: no perf domains, so never "balanced" here.
	if busiest.GroupType == GroupAsymPacking || busiest.GroupType == GroupImbalanced {
		goto forceBalance
	}
	if local.GroupType > busiest.GroupType {
		goto outBalanced
	}
	if local.GroupType == GroupOverloaded {
		if local.AvgLoad >= busiest.AvgLoad {
			goto outBalanced
		}
		sds.avgLoad = sds.totalLoad * SchedCapacityScale / sds.totalCapacity
		if local.AvgLoad >= sds.avgLoad {
			goto outBalanced
		}
		if 100*busiest.AvgLoad <= uint64(env.sd.T.ImbalancePct)*local.AvgLoad {
			goto outBalanced
		}
	}
	if sds.preferSibling && local.GroupType == GroupHasSpare {
		if k.S.LBSMTAware {
			if siblingImbalance(env, &sds, busiest, local) > 1 {
				goto forceBalance
			}
		} else if busiest.SumNrRunning > local.SumNrRunning+1 {
			goto forceBalance
		}
	}
	if busiest.GroupType != GroupOverloaded {
		if env.idle == CPUNotIdle {
			goto outBalanced
		}
		if busiest.GroupType == GroupSMTBalance && smtVsNonsmtGroups(sds.local, sds.busiest) {
			goto forceBalance
		}
		if busiest.GroupWeight > 1 && local.IdleCPUs <= busiest.IdleCPUs+1 {
			goto outBalanced
		}
		if busiest.SumHNrRunning == 1 {
			goto outBalanced
		}
	}
forceBalance:
	k.calculateImbalance(env, &sds)
	if env.imbalance != 0 {
		return sds.busiest
	}
	return nil
outBalanced:
	env.imbalance = 0
	return nil
}

// calculateImbalance mirrors fair.c:calculate_imbalance (v6.19; v6.0's
// sibling count difference with !LBSMTAware, and without the "local above
// the domain average" exit with !LBLocalAboveAvg; v5.12's halving before
// the NUMA allowance of the busiest group with NumaImbalanceV512): what to
// move and how much. Simplified: idle_cpus is unsigned in the kernel, so
// local.idle_cpus − busiest.idle_cpus wraps to a huge imbalance when
// busiest has more idle CPUs; schedlab clamps it at 0. find_busiest_group
// rules that case out unless busiest is overloaded, and an overloaded
// busiest reaches this branch only at an LLC-sharing level whose child
// lacks SD_PREFER_SIBLING and whose groups hold several CPUs (asymmetric
// machines).
func (k *Kernel) calculateImbalance(env *lbEnv, sds *sdLbStats) {
	local := &sds.localStat
	busiest := &sds.busiestStat
	switch busiest.GroupType {
	case GroupMisfitTask:
		if env.sd.T.Flags&topology.SDAsymCPUCapacity != 0 {
			env.migrationType = migrateMisfit
			env.imbalance = 1
		} else {
			env.migrationType = migrateLoad
			env.imbalance = int64(busiest.GroupMisfitTaskLoad)
		}
		return
	case GroupAsymPacking:
		env.migrationType = migrateTask
		env.imbalance = int64(busiest.SumHNrRunning)
		return
	case GroupSMTBalance, GroupImbalanced:
		env.migrationType = migrateTask
		env.imbalance = 1
		return
	}
	if local.GroupType == GroupHasSpare {
		if busiest.GroupType > GroupFullyBusy && env.sd.T.Flags&topology.SDShareLLC == 0 {
			env.migrationType = migrateUtil
			env.imbalance = int64(max(local.GroupCapacity, local.GroupUtil) - local.GroupUtil)
			if env.idle != CPUNotIdle && env.imbalance == 0 {
				env.migrationType = migrateTask
				env.imbalance = 1
			}
			return
		}
		var imbalance int
		if busiest.GroupWeight == 1 || sds.preferSibling {
			env.migrationType = migrateTask
			if k.S.LBSMTAware {
				imbalance = siblingImbalance(env, sds, busiest, local)
			} else {
				imbalance = max(busiest.SumNrRunning-local.SumNrRunning, 0)
			}
		} else {
			env.migrationType = migrateTask
			imbalance = max(local.IdleCPUs-busiest.IdleCPUs, 0)
		}
		if k.S.NumaImbalanceV512 {
			// v5.12: halve first, then the allowance of a busiest
			// group running fewer than a quarter of its CPUs.
			imbalance >>= 1
			if env.sd.T.Flags&topology.SDNuma != 0 {
				imbalance = adjustNumaImbalanceV512(imbalance, busiest.SumNrRunning, busiest.GroupWeight)
			}
			env.imbalance = int64(imbalance)
			return
		}
		if env.sd.T.Flags&topology.SDNuma != 0 {
			imbalance = adjustNumaImbalance(imbalance, local.SumNrRunning+1, env.sd.T.ImbNumaNr)
		}
		env.imbalance = int64(imbalance >> 1)
		return
	}
	if local.GroupType < GroupOverloaded {
		local.AvgLoad = local.GroupLoad * SchedCapacityScale / local.GroupCapacity
		if local.AvgLoad >= busiest.AvgLoad {
			env.imbalance = 0
			return
		}
		sds.avgLoad = sds.totalLoad * SchedCapacityScale / sds.totalCapacity
		if k.S.LBLocalAboveAvg && local.AvgLoad >= sds.avgLoad {
			env.imbalance = 0
			return
		}
	}
	env.migrationType = migrateLoad
	// Both terms are non-negative when we get here, except in the v6.0
	// form where local may sit above the average: the kernel's unsigned
	// arithmetic then wraps, and min() picks the other term.
	a := (busiest.AvgLoad - sds.avgLoad) * busiest.GroupCapacity
	b := (sds.avgLoad - local.AvgLoad) * local.GroupCapacity
	env.imbalance = int64(min(a, b) / SchedCapacityScale)
}

// schedBalanceFindSrcRq mirrors fair.c:sched_balance_find_src_rq
// (find_busiest_queue, v6.19; cpu_util_cfs instead of the boosted
// utilisation with !LBUtilBoost): the CPU of the busiest group to pull
// from, by the migration type.
func (k *Kernel) schedBalanceFindSrcRq(env *lbEnv, group *topology.Group) *Rq {
	var busiest *Rq
	var busiestLoad, busiestUtil uint64
	busiestCapacity := uint64(1)
	busiestNr := 0
	asym := env.sd.T.Flags&topology.SDAsymCPUCapacity != 0
	k.lbCharge(engine.Time(group.Weight) * k.Costs.Balance.FindBusiestQueuePerCPU)
	group.Span.ForEach(func(i cpumask.CPU) bool {
		if !env.cpus.Test(i) {
			return true
		}
		rq := k.Rqs[i]
		nrRunning := rq.CFS.HNrRunnable
		if nrRunning == 0 {
			return true
		}
		capacity := k.capacityOf(i)
		if asym && !capacityGreater(k.capacityOf(env.dstCPU), capacity) && nrRunning == 1 {
			return true
		}
		switch env.migrationType {
		case migrateLoad:
			load := cpuLoad(rq)
			if nrRunning == 1 && load > uint64(max(env.imbalance, 0)) && !k.checkCPUCapacity(rq, env.sd) {
				return true
			}
			if load*busiestCapacity > busiestLoad*capacity {
				busiestLoad = load
				busiestCapacity = capacity
				busiest = rq
			}
		case migrateUtil:
			util := k.cpuUtil(i, nil, cpumask.None, k.S.LBUtilBoost)
			if nrRunning <= 1 {
				return true
			}
			if busiestUtil < util {
				busiestUtil = util
				busiest = rq
			}
		case migrateTask:
			if busiestNr < nrRunning {
				busiestNr = nrRunning
				busiest = rq
			}
		case migrateMisfit:
			if rq.MisfitTaskLoad > busiestLoad {
				busiestLoad = rq.MisfitTaskLoad
				busiest = rq
			}
		}
		return true
	})
	return busiest
}

// imbalancedActiveBalance mirrors fair.c:imbalanced_active_balance (v6.19).
func imbalancedActiveBalance(env *lbEnv) bool {
	return env.migrationType == migrateTask && env.sd.NrBalanceFailed > env.sd.T.CacheNiceTries+2
}

// needActiveBalance mirrors fair.c:need_active_balance (v6.19; asym
// packing is not modelled).
func (k *Kernel) needActiveBalance(env *lbEnv) bool {
	if imbalancedActiveBalance(env) {
		return true
	}
	if env.idle != CPUNotIdle && env.srcRq.CFS.HNrRunnable == 1 {
		if k.checkCPUCapacity(env.srcRq, env.sd) &&
			k.capacityOf(env.srcCPU)*uint64(env.sd.T.ImbalancePct) < k.capacityOf(env.dstCPU)*100 {
			return true
		}
	}
	return env.migrationType == migrateMisfit
}

// taskHot mirrors fair.c:task_hot (v6.19; the CFS baseline also counts
// the last buddy): a task that ran on its CPU less than migration_cost ago
// is cache hot, except across SMT siblings.
func (k *Kernel) taskHot(p *Task, env *lbEnv) bool {
	if p.Policy == SchedIdle {
		return false
	}
	if env.sd.T.Flags&topology.SDShareCPUCapacity != 0 {
		return false
	}
	c := cfsRqOf(&p.SE)
	if k.S.CacheHotBuddy && env.dstRq.NrRunning != 0 &&
		(&p.SE == c.Next || (!k.S.EEVDF && &p.SE == c.Last)) {
		return true
	}
	if k.S.MigrationCost == 0 {
		return false
	}
	delta := int64(rqClockTask(env.srcRq) - p.SE.ExecStart)
	return delta < int64(k.S.MigrationCost)
}

// taskIsIneligibleOnDstCPU mirrors fair.c:task_is_ineligible_on_dst_cpu
// (v6.19): with PLACE_LAG, prefer not to move a task that is not eligible
// on its queue to a CPU where its group has queued work.
func (k *Kernel) taskIsIneligibleOnDstCPU(p *Task, dst cpumask.CPU) bool {
	dstCfsRq := p.TG.CfsRq[dst]
	return k.S.PlaceLag && dstCfsRq.NrQueued != 0 && !entityEligible(cfsRqOf(&p.SE), &p.SE)
}

// canMigrateTask mirrors fair.c:can_migrate_task (v6.19): whether p may
// move from env.srcRq to env.dstCPU, and whether it is an accepted
// cache-hot task (p->sched_task_hot: counted in lb_hot_gained when
// detach_task takes it, in nr_failed_migrations_hot when detach_tasks
// skips it). v6.0 and v5.12 (!LBHotInDetach) count lb_hot_gained and
// nr_forced_migrations here, on acceptance, and report hot as false;
// their tests are v6.19's without the delayed and eligibility ones (which
// cannot trigger without DELAY_DEQUEUE and PLACE_LAG). v5.12's stopper
// (LBActiveBalanceV512) has no LBF_ACTIVE_LB shortcut. Not modelled:
// throttled hierarchies, per-CPU kthreads, proxy-execution blocked tasks,
// NUMA locality (migrate_degrades_locality is 0).
func (k *Kernel) canMigrateTask(p *Task, env *lbEnv) (ok, hot bool) {
	if p.SE.SchedDelayed && env.migrationType != migrateLoad {
		return false, false
	}
	if env.sd.NrBalanceFailed == 0 && k.taskIsIneligibleOnDstCPU(p, env.dstCPU) {
		return false, false
	}
	if !p.CPUsAllowed.Test(env.dstCPU) {
		p.SE.Stats.NrFailedMigrationsAffine++
		env.flags |= lbfSomePinned
		if env.idle == CPUNewlyIdle || env.flags&(lbfDstPinned|lbfActiveLB) != 0 {
			return false, false
		}
		cand := env.dstGrpmask.And(env.cpus)
		for cpu := cand.First(); cpu != cpumask.None; cpu = cand.Next(cpu) {
			if p.CPUsAllowed.Test(cpu) {
				env.flags |= lbfDstPinned
				env.newDstCPU = cpu
				break
			}
		}
		return false, false
	}
	env.flags &^= lbfAllPinned
	// The stopper has preempted the running task by the time an active
	// balance looks: only a non-active pass sees a task on the CPU.
	if env.flags&lbfActiveLB == 0 && p.OnCPU {
		p.SE.Stats.NrFailedMigrationsRunning++
		return false, false
	}
	// v6.0+: active balance moves whatever it may. v5.12's stopper runs
	// the hot test, which the raised nr_balance_failed lets through.
	if env.flags&lbfActiveLB != 0 && !k.S.LBActiveBalanceV512 {
		return true, false
	}
	hot = k.taskHot(p, env)
	if !hot || env.sd.NrBalanceFailed > env.sd.T.CacheNiceTries {
		if hot && !k.S.LBHotInDetach {
			// v6.0, v5.12: counted on acceptance, whether or not
			// detach_tasks then takes it.
			env.sd.Stats.LbHotGained[env.idle]++
			p.SE.Stats.NrForcedMigrations++
			hot = false
		}
		return true, hot
	}
	p.SE.Stats.NrFailedMigrationsHot++
	return false, false
}

// detachTask mirrors fair.c:detach_task (v6.19): take p off the source queue and
// point it at the destination CPU.
func (k *Kernel) detachTask(p *Task, env *lbEnv, hot bool) {
	if hot {
		env.sd.Stats.LbHotGained[env.idle]++
		p.SE.Stats.NrForcedMigrations++
	}
	if env.srcRq.Curr == p {
		panic("sched: detach_task of the running task")
	}
	k.decideBalance(env, p)
	k.deactivateTask(env.srcRq, p, dequeueNoclock)
	k.setTaskCPU(p, env.dstCPU)
}

// shrBound mirrors fair.c:shr_bound (v6.19): v >> min(shift, 63).
func shrBound(v uint64, shift int) uint64 {
	if shift > 63 {
		shift = 63
	}
	return v >> uint(shift)
}

// detachTasks mirrors fair.c:detach_tasks (v6.19): walk the source's
// cfs_tasks from the tail (least recently run), detaching tasks until the
// imbalance is met, loop_max tasks were looked at, or loop_break asks for
// a breather. A newly idle pass stops after one task (CONFIG_PREEMPTION).
// v6.0 and v5.12 compare migrate_util without shr_bound (!LBUtilShrBound);
// v5.12 has no early return for a source with one task
// (!DetachTasksEarlyExit). A skipped task counts as
// nr_failed_migrations_hot only if can_migrate_task accepted it as hot
// (v6.19's p->sched_task_hot; canMigrateTask reports no such task for the
// CFS baselines, whose skip counts nothing).
func (k *Kernel) detachTasks(env *lbEnv) int {
	src := env.srcRq
	detached := 0
	if k.S.DetachTasksEarlyExit && src.NrRunning <= 1 {
		env.flags &^= lbfAllPinned
		return 0
	}
	if env.imbalance <= 0 {
		return 0
	}
	for src.cfsTasksHead != nil {
		if env.idle != CPUNotIdle && src.NrRunning <= 1 {
			break
		}
		env.loop++
		if env.loop > env.loopMax {
			break
		}
		if env.loop > env.loopBreak {
			env.loopBreak += schedNrMigrateBreak
			env.flags |= lbfNeedBreak
			break
		}
		k.lbCharge(k.Costs.Balance.TaskExamined)
		se := src.cfsTasksTail // list_last_entry(tasks, ...)
		p := se.task
		ok, hot := k.canMigrateTask(p, env)
		if ok {
			switch env.migrationType {
			case migrateLoad:
				load := max(k.taskHLoad(p), 1)
				if shrBound(load, env.sd.NrBalanceFailed) > uint64(max(env.imbalance, 0)) {
					ok = false
					break
				}
				env.imbalance -= int64(load)
			case migrateUtil:
				util := k.taskUtilEst(p)
				cmp := util
				if k.S.LBUtilShrBound {
					cmp = shrBound(util, env.sd.NrBalanceFailed)
				}
				if cmp > uint64(max(env.imbalance, 0)) {
					ok = false
					break
				}
				env.imbalance -= int64(util)
			case migrateTask:
				env.imbalance--
			case migrateMisfit:
				if k.taskFitsCPU(p, env.srcCPU) {
					ok = false
					break
				}
				env.imbalance = 0
			}
		}
		if !ok {
			if hot {
				p.SE.Stats.NrFailedMigrationsHot++
			}
			// list_move to the head: look at it last next time.
			src.cfsTasksMove(se)
			continue
		}
		k.detachTask(p, env, hot)
		env.tasks = append(env.tasks, p)
		detached++
		if configPreemption && env.idle == CPUNewlyIdle {
			break
		}
		if env.imbalance <= 0 {
			break
		}
	}
	env.sd.Stats.LbGained[env.idle] += uint64(detached)
	return detached
}

// attachTask mirrors fair.c:attach_task (v6.19): enqueue a detached task on rq and
// let it preempt.
func (k *Kernel) attachTask(rq *Rq, p *Task) {
	k.activateTask(rq, p, enqueueNoclock)
	k.wakeupPreempt(rq, p, 0)
	k.BalanceStats.Migrations++
}

// attachTasks mirrors fair.c:attach_tasks (v6.19): the detached tasks join the
// destination in the order they were detached.
func (k *Kernel) attachTasks(env *lbEnv) {
	k.updateRqClock(env.dstRq)
	for _, p := range env.tasks {
		k.lbCharge(k.Costs.Balance.TaskMigrated)
		k.attachTask(env.dstRq, p)
	}
	k.holdRqLock(env.dstRq)
	env.tasks = env.tasks[:0]
}

// --- Active balance -----------------------------------------------------------

// stopOneCPUNowait mirrors stop_one_cpu_nowait(busiest,
// active_load_balance_cpu_stop) (v6.19, v6.0, v5.12): the busiest CPU's
// stopper is woken (an IPI away if remote) and runs there.
func (k *Kernel) stopOneCPUNowait(busiest *Rq) {
	at := k.lbNow()
	if busiest.CPU != k.thisCPU {
		at += k.ipiLatency(k.thisCPU, busiest.CPU)
	}
	if !busiest.stopperTimer.Armed() {
		k.Eng.Schedule(busiest.stopperTimer, at)
	}
}

// activeLoadBalanceCPUStop mirrors fair.c:active_load_balance_cpu_stop
// (v6.19), run by the stopper on the busiest CPU: preempt what runs there
// and push one task to push_cpu, ignoring cache hotness.
//
// The stopper thread itself is not a task here: its preemption of the
// running task and the switch back are modelled by the core's own
// primitives (the running task is dequeued for migration and the CPU
// reschedules, or the queue is re-picked), so the trace shows the task
// leaving rather than switches to and from migration/N. Its nr_running
// test counts the stopper, as the kernel's does.
func (k *Kernel) activeLoadBalanceCPUStop(busiest *Rq) {
	k.thisCPU = busiest.CPU
	mark := k.lbBegin(busiest.CPU)
	k.lbCharge(k.Costs.Balance.StopperSwitch)
	targetCPU := busiest.PushCPU
	var p *Task
	var sd *SchedDomain
	switched := false
	if !busiest.ActiveBalance || targetCPU == cpumask.None || busiest.NrRunning+1 <= 1 {
		goto outUnlock
	}
	for _, d := range k.dom.SD[targetCPU] {
		if d.T.Span.Test(busiest.CPU) {
			sd = d
			break
		}
	}
	if sd != nil {
		env := &lbEnv{
			sd:     sd,
			dstCPU: targetCPU,
			dstRq:  k.Rqs[targetCPU],
			srcCPU: busiest.CPU,
			srcRq:  busiest,
			idle:   CPUIdle,
			flags:  lbfActiveLB,
			cpus:   sd.T.Span,
		}
		sd.Stats.AlbCount++
		k.updateRqClock(busiest)
		p, switched = k.detachOneTask(env)
		if p != nil {
			sd.Stats.AlbPushed++
			sd.NrBalanceFailed = 0
		} else {
			sd.Stats.AlbFailed++
		}
	}
outUnlock:
	busiest.ActiveBalance = false
	if p != nil {
		k.attachOneTask(k.Rqs[targetCPU], p)
	}
	// The stopper sleeps again: the CPU picks what to run next (already
	// done if the running task was the one pushed away).
	if !switched && (!busiest.currIsIdle() || busiest.NrRunning > 0) {
		k.schedule(busiest, true)
	}
	k.BalanceStats.ActiveBalance.add(k.lbEnd(mark))
	k.afterEvent()
}

// detachOneTask mirrors fair.c:detach_one_task (v6.19): the first movable task
// from the tail of cfs_tasks. The running task, preempted by the stopper,
// is a candidate; detaching it takes it off the CPU (the core's schedule
// then runs something else or idles, and switched reports it).
func (k *Kernel) detachOneTask(env *lbEnv) (p *Task, switched bool) {
	src := env.srcRq
	// list_for_each_entry_reverse: the loop ends at the first task it
	// takes, so the list does not change under it.
	for se := src.cfsTasksTail; se != nil; se = se.groupPrev {
		p = se.task
		k.lbCharge(k.Costs.Balance.TaskExamined)
		if ok, _ := k.canMigrateTask(p, env); !ok {
			continue
		}
		if src.Curr == p {
			// The stopper preempted p: dequeue it for the move and let
			// the CPU switch away from it.
			k.decideBalance(env, p)
			k.deactivateTask(src, p, dequeueNoclock)
			k.schedule(src, true)
			k.setTaskCPU(p, env.dstCPU)
			switched = true
		} else {
			k.detachTask(p, env, false)
		}
		env.sd.Stats.LbGained[CPUIdle]++
		return p, switched
	}
	return nil, false
}

// attachOneTask mirrors fair.c:attach_one_task (v6.19).
func (k *Kernel) attachOneTask(rq *Rq, p *Task) {
	k.updateRqClock(rq)
	k.lbCharge(k.Costs.Balance.TaskMigrated)
	k.attachTask(rq, p)
	k.holdRqLock(rq)
}
