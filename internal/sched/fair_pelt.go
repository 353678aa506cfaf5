package sched

// PELT bookkeeping of fair.c (v6.19): entity and cfs_rq updates, attach and
// detach, asynchronous removal, propagation up the task-group hierarchy, the
// task group's load_avg, and util_est.

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

// maxU32 mirrors max_t(u32, a, b): both operands truncated to 32 bits.
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
		// cfs_se_util_change: PELT moved, so util_est may update at dequeue.
		if se.IsTask() && se.Avg.UtilEst&utilAvgUnchanged != 0 {
			se.Avg.UtilEst &^= utilAvgUnchanged
		}
		return true
	}
	return false
}

// updateLoadAvgCfsRq mirrors pelt.c:__update_load_avg_cfs_rq (v6.19).
func updateLoadAvgCfsRq(now uint64, c *CfsRq) bool {
	if updateLoadSum(now, &c.Avg, scaleLoadDown(c.Load.Weight), uint64(c.HNrRunnable), c.Curr != nil) {
		updateLoadAvg(&c.Avg, 1)
		return true
	}
	return false
}

// addTgCfsPropagate mirrors fair.c:add_tg_cfs_propagate (v6.19).
func (k *Kernel) addTgCfsPropagate(c *CfsRq, runnableSum int64) {
	if !k.S.TgPropagate {
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
	c.Avg.LoadAvg += se.Avg.LoadAvg
	c.Avg.LoadSum += seWeight(se) * se.Avg.LoadSum
}

// dequeueLoadAvg mirrors fair.c:dequeue_load_avg (v6.19).
func dequeueLoadAvg(c *CfsRq, se *SchedEntity) {
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
	enqueueLoadAvg(c, se)
	c.Avg.UtilAvg += se.Avg.UtilAvg
	c.Avg.UtilSum += se.Avg.UtilSum
	c.Avg.RunnableAvg += se.Avg.RunnableAvg
	c.Avg.RunnableSum += se.Avg.RunnableSum
	k.addTgCfsPropagate(c, int64(se.Avg.LoadSum))
	k.cfsRqUtilChange(c)
}

// detachEntityLoadAvg mirrors fair.c:detach_entity_load_avg (v6.19).
func (k *Kernel) detachEntityLoadAvg(c *CfsRq, se *SchedEntity) {
	dequeueLoadAvg(c, se)
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
// cfs_rq's load into tg->load_avg, at most once per ms and only for changes
// above 1/64 of the last published value.
func (k *Kernel) updateTgLoadAvg(c *CfsRq) {
	if c.tg.IsRoot() {
		return
	}
	now := k.schedClock()
	if now-c.LastUpdateTgLoadAvg < 1000000 {
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

// taskUtil and friends mirror fair.c's util_est helpers (v6.19 single word).
func taskUtil(p *Task) uint64 { return p.SE.Avg.UtilAvg }

func taskUtilEstRaw(p *Task) uint64 { return uint64(p.SE.Avg.UtilEst &^ utilAvgUnchanged) }

// taskUtilEst mirrors fair.c:task_util_est (v6.19).
func taskUtilEst(p *Task) uint64 {
	u, e := taskUtil(p), taskUtilEstRaw(p)
	if e > u {
		return e
	}
	return u
}

// utilEstEnqueue mirrors fair.c:util_est_enqueue (v6.19).
func (k *Kernel) utilEstEnqueue(c *CfsRq, p *Task) {
	if !k.S.UtilEst {
		return
	}
	c.Avg.UtilEst += uint32(taskUtilEstRaw(p))
}

// utilEstDequeue mirrors fair.c:util_est_dequeue (v6.19).
func (k *Kernel) utilEstDequeue(c *CfsRq, p *Task) {
	if !k.S.UtilEst {
		return
	}
	e := uint32(taskUtilEstRaw(p))
	if e > c.Avg.UtilEst {
		c.Avg.UtilEst = 0
	} else {
		c.Avg.UtilEst -= e
	}
}

// utilEstUpdate mirrors fair.c:util_est_update (v6.19).
func (k *Kernel) utilEstUpdate(c *CfsRq, p *Task, taskSleep bool) {
	if !k.S.UtilEst || !taskSleep {
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
