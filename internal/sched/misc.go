package sched

import (
	"fmt"

	"github.com/schedlab/schedlab/internal/cpumask"
)

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

// updateStatsEnqueueFair mirrors fair.c:update_stats_enqueue_fair (v6.19): a queued
// entity other than curr starts waiting.
func (k *Kernel) updateStatsEnqueueFair(c *CfsRq, se *SchedEntity, flags int) {
	if se != c.Curr {
		k.updateStatsWaitStartFair(c, se)
	}
}

// updateStatsDequeueFair mirrors fair.c:update_stats_dequeue_fair (v6.19).
func (k *Kernel) updateStatsDequeueFair(c *CfsRq, se *SchedEntity, flags int) {
	if se != c.Curr {
		k.updateStatsWaitEndFair(c, se)
	}
	if se.IsTask() && flags&dequeueSleep != 0 {
		se.Stats.SleepStart = rqClockTask(c.rq)
	}
}

// updateStatsWaitStartFair mirrors fair.c:update_stats_wait_start_fair (v6.19).
func (k *Kernel) updateStatsWaitStartFair(c *CfsRq, se *SchedEntity) {
	se.Stats.WaitStart = rqClockTask(c.rq)
}

// updateStatsWaitEndFair mirrors fair.c:update_stats_wait_end_fair (v6.19).
func (k *Kernel) updateStatsWaitEndFair(c *CfsRq, se *SchedEntity) {
	if se.Stats.WaitStart == 0 {
		return
	}
	delta := rqClockTask(c.rq) - se.Stats.WaitStart
	if delta > se.Stats.WaitMax {
		se.Stats.WaitMax = delta
	}
	se.Stats.WaitCount++
	se.Stats.WaitSum += delta
	se.Stats.WaitStart = 0
}

// listAddLeafCfsRq mirrors fair.c:list_add_leaf_cfs_rq (v6.19): keep every cfs_rq
// with load on rq's leaf list, children before parents. The kernel builds
// the order with tmp_alone_branch; schedlab inserts a queue just before its
// nearest listed ancestor and then lists missing ancestors after it, which
// gives the same child-before-parent order.
func (k *Kernel) listAddLeafCfsRq(c *CfsRq) {
	if c.OnList {
		return
	}
	rq := c.rq
	// chain: c and its unlisted ancestors, bottom-up.
	var chain []*CfsRq
	for q := c; q != nil && !q.OnList; q = parentCfsRq(q) {
		chain = append(chain, q)
	}
	pos := len(rq.leafCfsRqs)
	if top := parentCfsRq(chain[len(chain)-1]); top != nil {
		for i, q := range rq.leafCfsRqs {
			if q == top {
				pos = i
				break
			}
		}
	}
	list := make([]*CfsRq, 0, len(rq.leafCfsRqs)+len(chain))
	list = append(list, rq.leafCfsRqs[:pos]...)
	list = append(list, chain...)
	list = append(list, rq.leafCfsRqs[pos:]...)
	rq.leafCfsRqs = list
	for _, q := range chain {
		q.OnList = true
	}
}

// listDelLeafCfsRq mirrors fair.c:list_del_leaf_cfs_rq (v6.19).
func (k *Kernel) listDelLeafCfsRq(c *CfsRq) {
	if !c.OnList {
		return
	}
	rq := c.rq
	for i, q := range rq.leafCfsRqs {
		if q == c {
			rq.leafCfsRqs = append(rq.leafCfsRqs[:i], rq.leafCfsRqs[i+1:]...)
			break
		}
	}
	c.OnList = false
}

// parentCfsRq is the cfs_rq the group entity owning c is queued on.
func parentCfsRq(c *CfsRq) *CfsRq {
	if c.tg.IsRoot() {
		return nil
	}
	return c.tg.SE[c.rq.CPU].CfsRq
}

// LeafCfsRqs returns rq's leaf_cfs_rq_list in walk order.
func (rq *Rq) LeafCfsRqs() []*CfsRq { return append([]*CfsRq(nil), rq.leafCfsRqs...) }

// childCfsRqOnList mirrors fair.c:child_cfs_rq_on_list (v6.19): the queue listed
// just before c is one of its children.
func childCfsRqOnList(c *CfsRq) bool {
	rq := c.rq
	for i, q := range rq.leafCfsRqs {
		if q == c {
			return i > 0 && parentCfsRq(rq.leafCfsRqs[i-1]) == c
		}
	}
	return false
}

// cfsRqIsDecayed mirrors fair.c:cfs_rq_is_decayed (v6.19).
func cfsRqIsDecayed(c *CfsRq) bool {
	if c.Load.Weight != 0 {
		return false
	}
	if !loadAvgIsDecayed(&c.Avg) {
		return false
	}
	if childCfsRqOnList(c) {
		return false
	}
	return c.TgLoadAvgContrib == 0
}

// cfsRqHasBlocked mirrors fair.c:cfs_rq_has_blocked (v6.19).
func cfsRqHasBlocked(c *CfsRq) bool { return c.Avg.LoadAvg != 0 || c.Avg.UtilAvg != 0 }

// skipBlockedUpdate mirrors fair.c:skip_blocked_update (v6.19).
func skipBlockedUpdate(se *SchedEntity) bool {
	if se.Avg.LoadAvg != 0 || se.Avg.UtilAvg != 0 {
		return false
	}
	return !se.MyQ.Propagate
}

// updateBlockedFair mirrors fair.c:__update_blocked_fair (v6.19).
func (k *Kernel) updateBlockedFair(rq *Rq, done *bool) bool {
	decayed := false
	list := append([]*CfsRq(nil), rq.leafCfsRqs...) // _safe iteration
	for _, c := range list {
		rq.BlockedCfsRqsWalked++
		if k.updateCfsRqLoadAvg(cfsRqClockPelt(c), c) {
			k.updateTgLoadAvg(c)
			if c == rq.CFS {
				decayed = true
			}
		}
		if se := c.tg.SE; se != nil && se[rq.CPU] != nil && !skipBlockedUpdate(se[rq.CPU]) {
			gse := se[rq.CPU]
			k.updateLoadAvg(cfsRqOf(gse), gse, updateTG)
		}
		if cfsRqIsDecayed(c) {
			k.listDelLeafCfsRq(c)
		}
		if cfsRqHasBlocked(c) {
			*done = false
		}
	}
	return decayed
}

// updateBlockedOthers mirrors fair.c:__update_blocked_others (v6.19; the
// same in v6.0 and v5.12) for a CPU without RT or deadline tasks:
// update_rt_rq_load_avg and update_dl_rq_load_avg on rq_clock_pelt report
// "decayed" whenever a PELT period boundary passed since their last call,
// even for all-zero signals. The two signals share their timestamps, so
// one SchedAvg stands for both. Simplified: the IRQ signal
// (CONFIG_HAVE_SCHED_AVG_IRQ, on rq->clock) and the thermal/HW pressure
// signal are not modelled; they add "decayed" reports at nearly the same
// times. Nothing is ever blocked on them (others_have_blocked is false).
func (k *Kernel) updateBlockedOthers(rq *Rq) bool {
	if !k.S.BlockedOthersDecay {
		return false
	}
	return updateLoadSum(rqClockPelt(rq), &rq.avgOthers, 0, 0, false)
}

// SchedBalanceUpdateBlockedAverages mirrors
// fair.c:sched_balance_update_blocked_averages (update_blocked_averages;
// v6.0 and v5.12 the same): decay the RT/DL signals and the blocked load
// of every leaf cfs_rq of cpu, and ask cpufreq to re-evaluate when any of
// them decayed.
func (k *Kernel) SchedBalanceUpdateBlockedAverages(cpu cpumask.CPU) {
	rq := k.Rqs[cpu]
	done := true
	rq.BlockedUpdates++
	rq.LastBlockedLoadUpdateTick = k.Jiffies()
	k.updateRqClock(rq)
	decayed := k.updateBlockedOthers(rq)
	if k.updateBlockedFair(rq, &done) {
		decayed = true
	}
	if done {
		rq.HasBlockedLoad = false
	}
	if decayed {
		rq.CpufreqUpdates++
		k.cpufreqUpdateUtil(rq)
	}
}

// CreateGroup creates a cgroup v2 directory under parent with cpu.weight
// weight (sched_create_group + online_fair_sched_group).
func (k *Kernel) CreateGroup(parent *TaskGroup, name string, weight int) (*TaskGroup, error) {
	if parent == nil {
		parent = k.RootTG
	}
	path := parent.Name + name
	if !parent.IsRoot() {
		path = parent.Name + "/" + name
	}
	for _, g := range k.TGs {
		if g.Name == path {
			return nil, fmt.Errorf("cgroup %s exists", path)
		}
	}
	if weight < 1 || weight > 10000 {
		return nil, fmt.Errorf("cpu.weight %d out of range 1..10000", weight)
	}
	n := k.NrCPUs()
	tg := &TaskGroup{Name: path, Parent: parent, depth: parent.depth + 1}
	tg.CfsRq = make([]*CfsRq, n)
	tg.SE = make([]*SchedEntity, n)
	for i := 0; i < n; i++ {
		rq := k.Rqs[i]
		c := newCfsRq(rq, tg)
		se := &SchedEntity{MyQ: c, CfsRq: parent.CfsRq[i], Depth: parent.depth}
		if !parent.IsRoot() {
			se.Parent = parent.SE[i]
		}
		updateLoadSet(&se.Load, NiceZeroLoad)
		initEntityRunnableAverage(se)
		tg.CfsRq[i] = c
		tg.SE[i] = se
	}
	parent.Children = append(parent.Children, tg)
	k.TGs = append(k.TGs, tg)
	// online_fair_sched_group: attach every group entity to its parent
	// queue, so that it starts with a PELT window (last_update_time != 0).
	for i := 0; i < n; i++ {
		k.updateRqClock(k.Rqs[i])
		k.attachEntityCfsRq(tg.SE[i])
	}
	if err := k.SetGroupWeight(tg, weight); err != nil {
		return nil, err
	}
	return tg, nil
}

// Group finds a task group by path ("/", "/a", "/a/b").
func (k *Kernel) Group(path string) *TaskGroup {
	for _, g := range k.TGs {
		if g.Name == path {
			return g
		}
	}
	return nil
}

// SetGroupWeight mirrors a write of cpu.weight (v6.19; the same in v6.0 and
// v5.12): sched_group_set_shares with the cgroup v2 mapping weight*1024/100
// (rounded).
func (k *Kernel) SetGroupWeight(tg *TaskGroup, weight int) error {
	if tg.IsRoot() {
		return fmt.Errorf("the root cgroup has no cpu.weight")
	}
	if weight < 1 || weight > 10000 {
		return fmt.Errorf("cpu.weight %d out of range 1..10000", weight)
	}
	tg.Weight = weight
	// sched_weight_from_cgroup: DIV_ROUND_CLOSEST_ULL(weight * 1024, 100)
	w := (uint64(weight)*1024 + 50) / 100
	shares := scaleLoad(w)
	if shares < scaleLoad(2) {
		shares = scaleLoad(2)
	}
	if shares > scaleLoad(1<<18) {
		shares = scaleLoad(1 << 18)
	}
	if tg.Shares == shares {
		return nil
	}
	tg.Shares = shares
	for i := range k.Rqs {
		rq := k.Rqs[i]
		k.updateRqClock(rq)
		for se := tg.SE[i]; se != nil; se = se.Parent {
			k.updateLoadAvg(cfsRqOf(se), se, updateTG)
			k.updateCfsGroup(se)
		}
	}
	return nil
}

// MoveTask mirrors core.c:sched_move_task (v6.19): move p to group tg.
func (k *Kernel) MoveTask(p *Task, tg *TaskGroup) {
	if p.TG == tg {
		return
	}
	rq := k.taskRq(p)
	k.updateRqClock(rq)
	queued := p.OnRq == taskOnRqQueued
	running := rq.Curr == p
	flags := dequeueSave | dequeueMove | dequeueNoclock
	if queued {
		k.dequeueTask(rq, p, flags)
	}
	if running {
		k.accountSegment(rq)
		k.putPrevTaskFair(rq, p)
	}
	// sched_change_group → task_change_group_fair.
	p.TG = tg
	if p.State != TaskNew {
		k.detachEntityCfsRq(&p.SE)
		p.SE.Avg.LastUpdateTime = 0
		k.setTaskRq(p, p.cpu)
		k.attachEntityCfsRq(&p.SE)
	} else {
		k.setTaskRq(p, p.cpu)
	}
	if queued {
		k.enqueueTask(rq, p, enqueueRestore|enqueueMove|enqueueNoclock)
	}
	if running {
		k.setNextTaskFair(rq, p, true)
		k.startSegment(rq)
		k.reschedCurr(rq)
	}
}

// MigrateTask moves a task that is not running to dst, as
// core.c:move_queued_task does for a queued task (the stopper's path) and
// as a wakeup's set_task_cpu does for a sleeping one.
func (k *Kernel) MigrateTask(p *Task, dst cpumask.CPU) error {
	if int(dst) < 0 || int(dst) >= k.NrCPUs() {
		return fmt.Errorf("cpu %d out of range", dst)
	}
	if !p.CPUsAllowed.Test(dst) {
		return fmt.Errorf("task %d may not run on cpu %d", p.PID, dst)
	}
	if p.OnCPU {
		return fmt.Errorf("task %d is running on cpu %d; only queued or sleeping tasks can be migrated", p.PID, p.cpu)
	}
	if p.cpu == dst {
		return nil
	}
	if p.State == TaskDead {
		return fmt.Errorf("task %d has exited", p.PID)
	}
	src := k.taskRq(p)
	if p.OnRq == taskOnRqQueued {
		k.updateRqClock(src)
		k.deactivateTask(src, p, dequeueNoclock)
		k.setTaskCPU(p, dst)
		drq := k.Rqs[dst]
		k.updateRqClock(drq)
		k.activateTask(drq, p, enqueueNoclock)
		k.wakeupPreempt(drq, p, 0)
		return nil
	}
	// Sleeping: the next wakeup enqueues it on dst.
	p.waking = true
	k.setTaskCPU(p, dst)
	p.waking = false
	return nil
}

// TaskByPID returns a task, or nil.
func (k *Kernel) TaskByPID(pid PID) *Task {
	i := int(pid) - 1
	if i < 0 || i >= len(k.Tasks) {
		return nil
	}
	return k.Tasks[i]
}

// Task accessors for observers.

// WorkLeft is the CPU work left in the task's current operation.
func (t *Task) WorkLeft() int64 { return int64(t.workLeft) }

// Kernel returns the rq's kernel.
func (rq *Rq) Kernel() *Kernel { return rq.k }

// NeedResched reports TIF_NEED_RESCHED of the rq's current task.
func (rq *Rq) NeedResched() bool { return rq.needResched }

// UpdateClock brings the rq clocks to the current time (update_rq_clock).
func (k *Kernel) UpdateClock(cpu cpumask.CPU) { k.updateRqClock(k.Rqs[cpu]) }

// AvgVruntime returns avg_vruntime(cfs_rq) without moving zero_vruntime.
func (k *Kernel) AvgVruntime(c *CfsRq) uint64 { return c.ZeroVruntime + uint64(avgVruntimeDelta(c)) }

// Eligible reports entity_eligible for a queued entity.
func Eligible(c *CfsRq, se *SchedEntity) bool { return entityEligible(c, se) }

// SEWeight is se_weight(se).
func SEWeight(se *SchedEntity) uint64 { return seWeight(se) }

// CalcDeltaFair exposes calc_delta_fair for tests.
func CalcDeltaFair(delta uint64, se *SchedEntity) uint64 { return calcDeltaFair(delta, se) }
