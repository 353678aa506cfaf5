package sched

// PELT bookkeeping of fair.c (v6.19): entity and cfs_rq updates, attach and
// detach, asynchronous removal, propagation up the task-group hierarchy, the
// task group's load_avg, util_est, the leaf cfs_rq list and the blocked-load
// update of sched_balance_update_blocked_averages.

import "github.com/schedlab/schedlab/internal/cpumask"

func subPositive(v *uint64, d uint64) {
	if d > *v {
		*v = 0
	} else {
		*v -= d
	}
}

func subPositive32(v *uint32, d uint64) {
	if d > uint64(*v) {
		*v = 0
	} else {
		*v -= uint32(d)
	}
}

func addPositive(v *uint64, d int64) {
	r := int64(*v) + d
	if d < 0 && r > int64(*v) || r < 0 {
		r = 0
	}
	*v = uint64(r)
}

func addPositive32(v *uint32, d int64) {
	r := int64(*v) + d
	if r < 0 {
		r = 0
	}
	*v = uint32(r)
}

// maxU32 mirrors max_t(u32, a, b) (every version): both operands truncated
// to 32 bits.
func maxU32(a, b uint64) uint64 {
	x, y := uint32(a), uint32(b)
	if x > y {
		return uint64(x)
	}
	return uint64(y)
}

// updateLoadAvgBlockedSE mirrors pelt.c:__update_load_avg_blocked_se (v6.19).
func updateLoadAvgBlockedSE(now uint64, se *SchedEntity) bool {
	if updateLoadSum(now, &se.Avg, 0, 0, false) {
		updateLoadAvg(&se.Avg, seWeight(se))
		return true
	}
	return false
}

// updateLoadAvgSE mirrors pelt.c:__update_load_avg_se (v6.19).
func updateLoadAvgSE(now uint64, c *CfsRq, se *SchedEntity) bool {
	var onRq uint64
	if se.OnRq {
		onRq = 1
	}
	if updateLoadSum(now, &se.Avg, onRq, seRunnable(se), c.Curr == se) {
		updateLoadAvg(&se.Avg, seWeight(se))
		// cfs_se_util_change: PELT moved, so util_est may update at
		// dequeue (v5.12 clears its flag, bit 0 of the value).
		if se.IsTask() && se.Avg.UtilEst&utilAvgUnchanged != 0 {
			se.Avg.UtilEst &^= utilAvgUnchanged
			if se.Avg.utilEstBit0 {
				se.Avg.UtilEst &^= utilAvgUnchangedV512
			}
		}
		return true
	}
	return false
}

// updateLoadAvgCfsRq mirrors pelt.c:__update_load_avg_cfs_rq (v6.19).
func updateLoadAvgCfsRq(now uint64, c *CfsRq) bool {
	if updateLoadSum(now, &c.Avg, scaleLoadDown(c.Load.Weight), uint64(c.HNrRunnable), c.Curr != nil) {
		updateLoadAvg(&c.Avg, 1)
		c.sgStatsChanged()
		return true
	}
	return false
}

// addTgCfsPropagate mirrors fair.c:add_tg_cfs_propagate (v6.19).
func (k *Kernel) addTgCfsPropagate(c *CfsRq, runnableSum int64) {
	if !k.S.TgPropagate {
		// no-tg-propagate: what a group's cfs_rq does not pass to its
		// entity (the root's has none to pass it to).
		if c.rq.CFS != c {
			k.Branches[BranchNoTgPropagate].Taken++
		}
		return
	}
	c.Propagate = true
	c.PropRunnableSum += runnableSum
}

// updateCfsRqLoadAvg mirrors fair.c:update_cfs_rq_load_avg (v6.19).
func (k *Kernel) updateCfsRqLoadAvg(now uint64, c *CfsRq) bool {
	sa := &c.Avg
	decayed := false
	if c.Removed.Nr > 0 {
		divider := uint64(getPeltDivider(sa))
		removedLoad, removedUtil, removedRunnable := c.Removed.LoadAvg, c.Removed.UtilAvg, c.Removed.RunnableAvg
		c.Removed = Removed{}
		c.sgStatsChanged()

		subPositive(&sa.LoadAvg, removedLoad)
		subPositive(&sa.LoadSum, removedLoad*divider)
		sa.LoadSum = maxU32(sa.LoadSum, sa.LoadAvg*PeltMinDivider)

		subPositive(&sa.UtilAvg, removedUtil)
		subPositive32(&sa.UtilSum, removedUtil*divider)
		sa.UtilSum = uint32(maxU32(uint64(sa.UtilSum), sa.UtilAvg*PeltMinDivider))

		subPositive(&sa.RunnableAvg, removedRunnable)
		subPositive(&sa.RunnableSum, removedRunnable*divider)
		sa.RunnableSum = maxU32(sa.RunnableSum, sa.RunnableAvg*PeltMinDivider)

		k.addTgCfsPropagate(c, -int64(removedRunnable*divider)>>SchedCapacityShift)
		decayed = true
	}
	if updateLoadAvgCfsRq(now, c) {
		decayed = true
	}
	return decayed
}

// enqueueLoadAvg mirrors fair.c:enqueue_load_avg (v6.19).
func enqueueLoadAvg(c *CfsRq, se *SchedEntity) {
	c.sgStatsChanged()
	c.Avg.LoadAvg += se.Avg.LoadAvg
	c.Avg.LoadSum += seWeight(se) * se.Avg.LoadSum
}

// dequeueLoadAvg mirrors fair.c:dequeue_load_avg (v6.19).
func dequeueLoadAvg(c *CfsRq, se *SchedEntity) {
	c.sgStatsChanged()
	subPositive(&c.Avg.LoadAvg, se.Avg.LoadAvg)
	subPositive(&c.Avg.LoadSum, seWeight(se)*se.Avg.LoadSum)
	c.Avg.LoadSum = maxU32(c.Avg.LoadSum, c.Avg.LoadAvg*PeltMinDivider)
}

// attachEntityLoadAvg mirrors fair.c:attach_entity_load_avg (v6.19).
func (k *Kernel) attachEntityLoadAvg(c *CfsRq, se *SchedEntity) {
	divider := uint64(getPeltDivider(&c.Avg))
	se.Avg.LastUpdateTime = c.Avg.LastUpdateTime
	se.Avg.PeriodContrib = c.Avg.PeriodContrib
	se.Avg.UtilSum = uint32(se.Avg.UtilAvg * divider)
	se.Avg.RunnableSum = se.Avg.RunnableAvg * divider
	se.Avg.LoadSum = se.Avg.LoadAvg * divider
	if w := seWeight(se); w < se.Avg.LoadSum {
		se.Avg.LoadSum /= w
	} else {
		se.Avg.LoadSum = 1
	}
	enqueueLoadAvg(c, se) // and sgStatsChanged
	c.Avg.UtilAvg += se.Avg.UtilAvg
	c.Avg.UtilSum += se.Avg.UtilSum
	c.Avg.RunnableAvg += se.Avg.RunnableAvg
	c.Avg.RunnableSum += se.Avg.RunnableSum
	k.addTgCfsPropagate(c, int64(se.Avg.LoadSum))
	k.cfsRqUtilChange(c)
}

// detachEntityLoadAvg mirrors fair.c:detach_entity_load_avg (v6.19).
func (k *Kernel) detachEntityLoadAvg(c *CfsRq, se *SchedEntity) {
	dequeueLoadAvg(c, se) // and sgStatsChanged
	subPositive(&c.Avg.UtilAvg, se.Avg.UtilAvg)
	subPositive32(&c.Avg.UtilSum, uint64(se.Avg.UtilSum))
	c.Avg.UtilSum = uint32(maxU32(uint64(c.Avg.UtilSum), c.Avg.UtilAvg*PeltMinDivider))
	subPositive(&c.Avg.RunnableAvg, se.Avg.RunnableAvg)
	subPositive(&c.Avg.RunnableSum, se.Avg.RunnableSum)
	c.Avg.RunnableSum = maxU32(c.Avg.RunnableSum, c.Avg.RunnableAvg*PeltMinDivider)
	k.addTgCfsPropagate(c, -int64(se.Avg.LoadSum))
	k.cfsRqUtilChange(c)
}

// cfsRqUtilChange mirrors fair.c:cfs_rq_util_change (v6.19): the root cfs_rq's
// utilisation changed, so schedutil is asked to re-evaluate the frequency
// (cpufreq.go); the calls are counted for the cost model.
func (k *Kernel) cfsRqUtilChange(c *CfsRq) {
	if c.rq.CFS == c {
		c.rq.CpufreqUpdates++
		k.cpufreqUpdateUtil(c.rq)
	}
}

// updateTgCfsUtil mirrors fair.c:update_tg_cfs_util (v6.19).
func updateTgCfsUtil(c *CfsRq, se *SchedEntity, gcfs *CfsRq) {
	deltaAvg := int64(gcfs.Avg.UtilAvg) - int64(se.Avg.UtilAvg)
	if deltaAvg == 0 {
		return
	}
	divider := uint64(getPeltDivider(&c.Avg))
	se.Avg.UtilAvg = gcfs.Avg.UtilAvg
	newSum := uint32(se.Avg.UtilAvg * divider)
	deltaSum := int64(newSum) - int64(se.Avg.UtilSum)
	se.Avg.UtilSum = newSum
	c.sgStatsChanged()
	addPositive(&c.Avg.UtilAvg, deltaAvg)
	addPositive32(&c.Avg.UtilSum, deltaSum)
	c.Avg.UtilSum = uint32(maxU32(uint64(c.Avg.UtilSum), c.Avg.UtilAvg*PeltMinDivider))
}

// updateTgCfsRunnable mirrors fair.c:update_tg_cfs_runnable (v6.19).
func updateTgCfsRunnable(c *CfsRq, se *SchedEntity, gcfs *CfsRq) {
	deltaAvg := int64(gcfs.Avg.RunnableAvg) - int64(se.Avg.RunnableAvg)
	if deltaAvg == 0 {
		return
	}
	divider := uint64(getPeltDivider(&c.Avg))
	se.Avg.RunnableAvg = gcfs.Avg.RunnableAvg
	newSum := se.Avg.RunnableAvg * divider
	deltaSum := int64(newSum) - int64(se.Avg.RunnableSum)
	se.Avg.RunnableSum = newSum
	c.sgStatsChanged()
	addPositive(&c.Avg.RunnableAvg, deltaAvg)
	addPositive(&c.Avg.RunnableSum, deltaSum)
	c.Avg.RunnableSum = maxU32(c.Avg.RunnableSum, c.Avg.RunnableAvg*PeltMinDivider)
}

// updateTgCfsLoad mirrors fair.c:update_tg_cfs_load (v6.19).
func updateTgCfsLoad(c *CfsRq, se *SchedEntity, gcfs *CfsRq) {
	runnableSum := gcfs.PropRunnableSum
	if runnableSum == 0 {
		return
	}
	gcfs.PropRunnableSum = 0
	divider := int64(getPeltDivider(&c.Avg))
	if runnableSum >= 0 {
		runnableSum += int64(se.Avg.LoadSum)
		if runnableSum > divider {
			runnableSum = divider
		}
	} else {
		var loadSum uint64
		if w := scaleLoadDown(gcfs.Load.Weight); w != 0 {
			loadSum = gcfs.Avg.LoadSum / w
		}
		runnableSum = int64(se.Avg.LoadSum)
		if int64(loadSum) < runnableSum {
			runnableSum = int64(loadSum)
		}
	}
	runningSum := int64(se.Avg.UtilSum >> SchedCapacityShift)
	if runningSum > runnableSum {
		runnableSum = runningSum
	}
	loadSum := int64(seWeight(se)) * runnableSum
	loadAvg := loadSum / divider
	deltaAvg := loadAvg - int64(se.Avg.LoadAvg)
	if deltaAvg == 0 {
		return
	}
	deltaSum := loadSum - int64(seWeight(se))*int64(se.Avg.LoadSum)
	se.Avg.LoadSum = uint64(runnableSum)
	se.Avg.LoadAvg = uint64(loadAvg)
	c.sgStatsChanged()
	addPositive(&c.Avg.LoadAvg, deltaAvg)
	addPositive(&c.Avg.LoadSum, deltaSum)
	c.Avg.LoadSum = maxU32(c.Avg.LoadSum, c.Avg.LoadAvg*PeltMinDivider)
}

// propagateEntityLoadAvg mirrors fair.c:propagate_entity_load_avg (v6.19).
func (k *Kernel) propagateEntityLoadAvg(se *SchedEntity) bool {
	if se.IsTask() {
		return false
	}
	gcfs := groupCfsRq(se)
	if !gcfs.Propagate {
		return false
	}
	gcfs.Propagate = false
	c := cfsRqOf(se)
	k.addTgCfsPropagate(c, gcfs.PropRunnableSum)
	updateTgCfsUtil(c, se, gcfs)
	updateTgCfsRunnable(c, se, gcfs)
	updateTgCfsLoad(c, se, gcfs)
	return true
}

// updateTgLoadAvg mirrors fair.c:update_tg_load_avg (v6.19): publish this
// cfs_rq's load into tg->load_avg, at most once per ms (v6.7+,
// Settings.TgLoadAvgRatelimit) and only for changes above 1/64 of the last
// published value. (v6.19's test of an inactive CPU never applies: every
// CPU is active.)
func (k *Kernel) updateTgLoadAvg(c *CfsRq) {
	if c.tg.IsRoot() {
		return
	}
	now := k.schedClock()
	if k.S.TgLoadAvgRatelimit && now-c.LastUpdateTgLoadAvg < 1000000 {
		return
	}
	delta := int64(c.Avg.LoadAvg) - int64(c.TgLoadAvgContrib)
	abs := delta
	if abs < 0 {
		abs = -abs
	}
	if abs > int64(c.TgLoadAvgContrib/64) {
		c.tg.LoadAvg += delta
		c.TgLoadAvgContrib = c.Avg.LoadAvg
		c.LastUpdateTgLoadAvg = now
	}
}

// updateLoadAvg mirrors fair.c:update_load_avg (v6.19).
func (k *Kernel) updateLoadAvg(c *CfsRq, se *SchedEntity, flags int) {
	now := cfsRqClockPelt(c)
	if se.Avg.LastUpdateTime != 0 && flags&skipAgeLoad == 0 {
		updateLoadAvgSE(now, c, se)
	}
	decayed := k.updateCfsRqLoadAvg(now, c)
	if k.propagateEntityLoadAvg(se) {
		decayed = true
	}
	switch {
	case se.Avg.LastUpdateTime == 0 && flags&doAttach != 0:
		k.attachEntityLoadAvg(c, se)
		k.updateTgLoadAvg(c)
	case flags&doDetach != 0:
		k.detachEntityLoadAvg(c, se)
		k.updateTgLoadAvg(c)
	case decayed:
		k.cfsRqUtilChange(c)
		if flags&updateTG != 0 {
			k.updateTgLoadAvg(c)
		}
	}
}

// syncEntityLoadAvg mirrors fair.c:sync_entity_load_avg (v6.19): decay a blocked
// entity to its cfs_rq's last update.
func syncEntityLoadAvg(se *SchedEntity) {
	updateLoadAvgBlockedSE(se.CfsRq.Avg.LastUpdateTime, se)
}

// removeEntityLoadAvg mirrors fair.c:remove_entity_load_avg (v6.19).
func removeEntityLoadAvg(se *SchedEntity) {
	c := cfsRqOf(se)
	syncEntityLoadAvg(se)
	c.Removed.Nr++
	c.Removed.UtilAvg += se.Avg.UtilAvg
	c.Removed.LoadAvg += se.Avg.LoadAvg
	c.Removed.RunnableAvg += se.Avg.RunnableAvg
}

// propagateEntityCfsRq mirrors fair.c:propagate_entity_cfs_rq (v6.19).
func (k *Kernel) propagateEntityCfsRq(se *SchedEntity) {
	k.listAddLeafCfsRq(cfsRqOf(se))
	for se = se.Parent; se != nil; se = se.Parent {
		c := cfsRqOf(se)
		k.updateLoadAvg(c, se, updateTG)
		k.listAddLeafCfsRq(c)
	}
}

// detachEntityCfsRq mirrors fair.c:detach_entity_cfs_rq (v6.19).
func (k *Kernel) detachEntityCfsRq(se *SchedEntity) {
	c := cfsRqOf(se)
	if se.Avg.LastUpdateTime == 0 {
		return
	}
	k.updateLoadAvg(c, se, 0)
	k.detachEntityLoadAvg(c, se)
	k.updateTgLoadAvg(c)
	k.propagateEntityCfsRq(se)
}

// attachEntityCfsRq mirrors fair.c:attach_entity_cfs_rq (v6.19).
func (k *Kernel) attachEntityCfsRq(se *SchedEntity) {
	c := cfsRqOf(se)
	flags := 0
	if !k.S.AttachAgeLoad {
		flags = skipAgeLoad
	}
	k.updateLoadAvg(c, se, flags)
	k.attachEntityLoadAvg(c, se)
	k.updateTgLoadAvg(c)
	k.propagateEntityCfsRq(se)
}

// initEntityRunnableAverage mirrors fair.c:init_entity_runnable_average (v6.19).
func initEntityRunnableAverage(se *SchedEntity) {
	se.Avg = SchedAvg{}
	if se.IsTask() {
		se.Avg.LoadAvg = scaleLoadDown(se.Load.Weight)
	}
}

// postInitEntityUtilAvg mirrors fair.c:post_init_entity_util_avg (v6.19).
func postInitEntityUtilAvg(p *Task) {
	se := &p.SE
	c := cfsRqOf(se)
	sa := &se.Avg
	cpuScale := int64(c.rq.CPUCapacityOrig)
	cap := (cpuScale - int64(c.Avg.UtilAvg)) / 2
	if cap > 0 {
		if c.Avg.UtilAvg != 0 {
			sa.UtilAvg = c.Avg.UtilAvg * seWeight(se)
			sa.UtilAvg /= c.Avg.LoadAvg + 1
			if sa.UtilAvg > uint64(cap) {
				sa.UtilAvg = uint64(cap)
			}
		} else {
			sa.UtilAvg = uint64(cap)
		}
	}
	sa.RunnableAvg = sa.UtilAvg
}

// setTaskRqFair mirrors fair.c:set_task_rq_fair (v6.19): carry a task's PELT
// window from its old cfs_rq to the new one without ageing it across.
func (k *Kernel) setTaskRqFair(se *SchedEntity, prev, next *CfsRq) {
	if se.Avg.LastUpdateTime == 0 || prev == nil {
		return
	}
	updateLoadAvgBlockedSE(prev.Avg.LastUpdateTime, se)
	se.Avg.LastUpdateTime = next.Avg.LastUpdateTime
}

// taskUtil and friends mirror fair.c's util_est helpers (v6.19 single
// word; v6.0's and v5.12's two fields with Settings.UtilEstForm).
func taskUtil(p *Task) uint64 { return p.SE.Avg.UtilAvg }

// taskUtilEstRaw mirrors fair.c:_task_util_est: v6.19's util_est less the
// flag; v6.0's max(ewma, enqueued) less the flag; v5.12's max(ewma,
// enqueued) | UTIL_AVG_UNCHANGED (bit 0), the flag included.
func (k *Kernel) taskUtilEstRaw(p *Task) uint64 {
	a := &p.SE.Avg
	switch k.S.UtilEstForm {
	case 1:
		return max(uint64(a.UtilEstEwma), uint64(a.UtilEst&^utilAvgUnchanged))
	case 2:
		return max(uint64(a.UtilEstEwma), uint64(a.UtilEst&^utilAvgUnchanged)) | utilAvgUnchangedV512
	}
	return uint64(a.UtilEst &^ utilAvgUnchanged)
}

// taskUtilEst mirrors fair.c:task_util_est (v6.19, v6.0, v5.12).
func (k *Kernel) taskUtilEst(p *Task) uint64 {
	return max(taskUtil(p), k.taskUtilEstRaw(p))
}

// utilEstEnqueue mirrors fair.c:util_est_enqueue (v6.19; v6.0 and v5.12
// add _task_util_est to util_est.enqueued the same way).
func (k *Kernel) utilEstEnqueue(c *CfsRq, p *Task) {
	if !k.S.UtilEst {
		return
	}
	c.sgStatsChanged()
	c.Avg.UtilEst += uint32(k.taskUtilEstRaw(p))
}

// utilEstDequeue mirrors fair.c:util_est_dequeue (v6.19, v6.0).
// Simplified for v5.12: its single util_est_dequeue subtracted at the end
// of dequeue_task_fair, after the dequeue's PELT updates; schedlab
// subtracts first (0372e1cf70c2, v5.13), which only a cpufreq update
// during that dequeue could see.
func (k *Kernel) utilEstDequeue(c *CfsRq, p *Task) {
	if !k.S.UtilEst {
		return
	}
	e := uint32(k.taskUtilEstRaw(p))
	c.sgStatsChanged()
	if e > c.Avg.UtilEst {
		c.Avg.UtilEst = 0
	} else {
		c.Avg.UtilEst -= e
	}
}

// utilEstUpdate mirrors fair.c:util_est_update (v6.19; v6.0 and v5.12
// with Settings.UtilEstForm 1 and 2).
func (k *Kernel) utilEstUpdate(c *CfsRq, p *Task, taskSleep bool) {
	if !k.S.UtilEst || !taskSleep {
		return
	}
	if k.S.UtilEstForm != 0 {
		k.utilEstUpdateTwoField(c, p)
		return
	}
	ewma := uint64(p.SE.Avg.UtilEst)
	if ewma&utilAvgUnchanged != 0 {
		return
	}
	dequeued := taskUtil(p)
	switch {
	case ewma <= dequeued:
		ewma = dequeued
	case ewma-dequeued < utilEstMargin:
		// keep
	case dequeued+utilEstMargin < p.SE.Avg.RunnableAvg:
		// the task did not get all the CPU it wanted: keep
	default:
		ewma = ((ewma << utilEstWeightShift) - (ewma - dequeued)) >> utilEstWeightShift
	}
	p.SE.Avg.UtilEst = uint32(ewma) | utilAvgUnchanged
}

// withinMargin mirrors fair.c:within_margin (v5.12–v6.7): |value| < margin.
func withinMargin(value, margin int64) bool {
	return uint32(value+margin-1) < uint32(2*margin-1)
}

// utilEstUpdateTwoField mirrors fair.c:util_est_update of v6.0 (flag in
// bit 31) and v5.12 (flag in bit 0, set in enqueued before the
// comparisons): enqueued becomes task_util; UTIL_EST_FASTUP raises the
// EWMA at once; an EWMA within 1% of it is kept, stored only if enqueued
// moved by 1% or more; a task whose util exceeds the CPU's original
// capacity keeps its estimate; otherwise ewma += (enqueued − ewma) / 4.
// v5.12 (the release) returns when the EWMA is within 1%, storing
// nothing: "sched/pelt: Fix task util_est update filtering"
// (b89997aa88f0, v5.13; 5.12.y has it as a stable backport) added the
// "enqueued moved" store.
func (k *Kernel) utilEstUpdateTwoField(c *CfsRq, p *Task) {
	a := &p.SE.Avg
	if a.UtilEst&utilAvgUnchanged != 0 {
		return
	}
	lastEnqueued := int64(a.UtilEst)
	enqueued := uint32(taskUtil(p))
	if k.S.UtilEstForm == 2 {
		enqueued |= utilAvgUnchangedV512
		a.utilEstBit0 = true
	}
	ewma := a.UtilEstEwma
	if !(k.S.UtilEstFastup && ewma < enqueued) {
		lastEwmaDiff := int64(enqueued) - int64(ewma)
		lastEnqueuedDiff := lastEnqueued - int64(enqueued)
		if withinMargin(lastEwmaDiff, utilEstMargin) {
			if k.S.UtilEstForm == 2 || withinMargin(lastEnqueuedDiff, utilEstMargin) {
				return
			}
		} else {
			if taskUtil(p) > k.archScaleCPUCapacity(rqOf(c).CPU) {
				return
			}
			ewma = uint32(int64(ewma<<utilEstWeightShift)+lastEwmaDiff) >> utilEstWeightShift
		}
	} else {
		ewma = enqueued
	}
	a.UtilEst = enqueued | utilAvgUnchanged
	a.UtilEstEwma = ewma
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
	// _safe iteration: a copy, as listDelLeafCfsRq may remove c. The
	// scratch is taken while in use, so a nested call would copy into
	// a fresh one.
	list := append(k.leafScratch[:0], rq.leafCfsRqs...)
	k.leafScratch = nil
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
	k.leafScratch = list[:0]
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
