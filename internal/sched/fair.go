package sched

// The fair class's queue operations, mirroring kernel/sched/fair.c of v6.19
// (EEVDF). Where the CFS baseline (v6.0) differs, the function branches on
// k.S.EEVDF and calls its CFS counterpart in cfs.go.

const u64Max = ^uint64(0)

// entityKey mirrors fair.c:entity_key (v6.19).
func entityKey(c *CfsRq, se *SchedEntity) int64 { return int64(se.Vruntime - c.ZeroVruntime) }

// avgVruntimeAdd mirrors fair.c:sum_w_vruntime_add (v6.19; avg_vruntime_add).
func avgVruntimeAdd(c *CfsRq, se *SchedEntity) {
	w := seWeight(se)
	c.SumWVruntime += entityKey(c, se) * int64(w)
	c.SumWeight += w
}

// avgVruntimeSub mirrors fair.c:sum_w_vruntime_sub (v6.19; avg_vruntime_sub).
func avgVruntimeSub(c *CfsRq, se *SchedEntity) {
	w := seWeight(se)
	c.SumWVruntime -= entityKey(c, se) * int64(w)
	c.SumWeight -= w
}

// updateZeroVruntime moves the reference of SumWVruntime by delta
// (fair.c:update_zero_vruntime as b3d99f43c72b "sched/fair: Fix
// zero_vruntime tracking" has it: in 6.19.10, the tree the v6.19 baseline
// was read from, by the 6.19.7 backport; v6.19.0 pulls zero_vruntime to V
// in __enqueue_entity and __dequeue_entity instead. V, and so every
// eligibility and placement, is the same either way; only ZeroVruntime
// and the int64 headroom differ).
func updateZeroVruntime(c *CfsRq, delta int64) {
	c.SumWVruntime -= int64(c.SumWeight) * delta
	c.ZeroVruntime += uint64(delta)
}

// avgVruntime mirrors fair.c:avg_vruntime (6.19.10, with b3d99f43c72b; see
// updateZeroVruntime): the weighted average vruntime V of the queue, curr
// included; it also pulls zero_vruntime to V, which v6.19.0's does not.
func (k *Kernel) avgVruntime(c *CfsRq) uint64 {
	delta := avgVruntimeDelta(c)
	if k.S.EEVDF {
		updateZeroVruntime(c, delta)
		return c.ZeroVruntime
	}
	return c.ZeroVruntime + uint64(delta)
}

// avgVruntimeDelta is V − zero_vruntime, rounded down as avg_vruntime
// does (the floor correction of a negative numerator).
func avgVruntimeDelta(c *CfsRq) int64 {
	curr := c.Curr
	avg := c.SumWVruntime
	load := int64(c.SumWeight)
	if curr != nil && curr.OnRq {
		w := int64(seWeight(curr))
		avg += entityKey(c, curr) * w
		load += w
	}
	var delta int64
	if load != 0 {
		if avg < 0 {
			avg -= load - 1
		}
		delta = avg / load
	} else if curr != nil && curr.OnRq {
		delta = entityKey(c, curr)
	}
	return delta
}

// vruntimeEligible mirrors fair.c:vruntime_eligible (v6.19): exact V >= v without a
// division.
func vruntimeEligible(c *CfsRq, vruntime uint64) bool {
	curr := c.Curr
	avg := c.SumWVruntime
	load := int64(c.SumWeight)
	if curr != nil && curr.OnRq {
		w := int64(seWeight(curr))
		avg += entityKey(c, curr) * w
		load += w
	}
	return avg >= int64(vruntime-c.ZeroVruntime)*load
}

// entityEligible mirrors fair.c:entity_eligible (v6.19).
func entityEligible(c *CfsRq, se *SchedEntity) bool { return vruntimeEligible(c, se.Vruntime) }

// cfsRqMinSlice mirrors fair.c:cfs_rq_min_slice (v6.19; u64max if nothing
// queued): curr's slice and the tree root's min_slice.
func cfsRqMinSlice(c *CfsRq) uint64 {
	root := pickRootEntity(c)
	min := u64Max
	if c.Curr != nil && c.Curr.OnRq {
		min = c.Curr.Slice
	}
	if root != nil && root.minSlice < min {
		min = root.minSlice
	}
	return min
}

// cfsRqMaxSlice mirrors fair.c:cfs_rq_max_slice, which 6e3c0a4e1ad1
// ("sched/fair: Fix lag clamp", v7.0-rc2) added and 6.19.7 backported, so
// 6.19.10 has it and v6.19.0 does not: curr's slice and the tree root's
// max_slice.
func cfsRqMaxSlice(c *CfsRq) uint64 {
	root := pickRootEntity(c)
	var max uint64
	if c.Curr != nil && c.Curr.OnRq {
		max = c.Curr.Slice
	}
	if root != nil && root.maxSlice > max {
		max = root.maxSlice
	}
	return max
}

// enqueueEntityTree mirrors fair.c:__enqueue_entity (v6.19).
func (k *Kernel) enqueueEntityTree(c *CfsRq, se *SchedEntity) {
	if k.S.EEVDF {
		avgVruntimeAdd(c, se)
	}
	k.timelineInsert(c, se)
}

// dequeueEntityTree mirrors fair.c:__dequeue_entity (v6.19).
func (k *Kernel) dequeueEntityTree(c *CfsRq, se *SchedEntity) {
	timelineRemove(c, se)
	if k.S.EEVDF {
		avgVruntimeSub(c, se)
	}
}

// updateEntityLag mirrors fair.c:update_entity_lag (6.19.10): the clamp is
// 6e3c0a4e1ad1's, ±calc_delta_fair(cfs_rq_max_slice + TICK_NSEC); v6.19.0
// clamps at ±calc_delta_fair(max(2 × se->slice, TICK_NSEC)).
func (k *Kernel) updateEntityLag(c *CfsRq, se *SchedEntity) {
	vlag := int64(k.avgVruntime(c) - se.Vruntime)
	limit := int64(calcDeltaFair(cfsRqMaxSlice(c)+k.tickNsec, se))
	if vlag < -limit {
		vlag = -limit
	} else if vlag > limit {
		vlag = limit
	}
	se.Vlag = vlag
}

// protectSlice mirrors fair.c:protect_slice (v6.19).
func protectSlice(se *SchedEntity) bool { return int64(se.Vprot-se.Vruntime) > 0 }

// setProtectSlice mirrors fair.c:set_protect_slice (v6.19).
func (k *Kernel) setProtectSlice(c *CfsRq, se *SchedEntity) {
	slice := k.S.BaseSlice // normalized_sysctl_sched_base_slice
	vprot := se.Deadline
	if k.S.RunToParity {
		slice = cfsRqMinSlice(c)
	}
	if se.Slice < slice {
		slice = se.Slice
	}
	if slice != se.Slice {
		v := se.Vruntime + calcDeltaFair(slice, se)
		if int64(v-vprot) < 0 {
			vprot = v
		}
	}
	se.Vprot = vprot
}

// updateProtectSlice mirrors fair.c:update_protect_slice (v6.19).
func (k *Kernel) updateProtectSlice(c *CfsRq, se *SchedEntity) {
	slice := cfsRqMinSlice(c)
	v := se.Vruntime + calcDeltaFair(slice, se)
	if int64(v-se.Vprot) < 0 {
		se.Vprot = v
	}
}

// cancelProtectSlice mirrors fair.c:cancel_protect_slice (v6.19).
func cancelProtectSlice(se *SchedEntity) {
	if protectSlice(se) {
		se.Vprot = se.Vruntime
	}
}

// updateDeadline mirrors fair.c:update_deadline (v6.19): a new slice starts
// from the current vruntime once the deadline is reached.
func (k *Kernel) updateDeadline(c *CfsRq, se *SchedEntity) bool {
	if int64(se.Vruntime-se.Deadline) < 0 {
		return false
	}
	if !se.CustomSlice {
		se.Slice = k.baseSlice
	}
	se.Deadline = se.Vruntime + calcDeltaFair(se.Slice, se)
	return true
}

// updateCurr mirrors fair.c:update_curr (v6.19; CFS: v6.0).
func (k *Kernel) updateCurr(c *CfsRq) {
	curr := c.Curr
	if curr == nil {
		return
	}
	rq := rqOf(c)
	now := rqClockTask(rq)
	deltaExec := int64(now - curr.ExecStart)
	if deltaExec <= 0 {
		return
	}
	curr.ExecStart = now
	curr.SumExecRuntime += uint64(deltaExec)
	if uint64(deltaExec) > curr.Stats.ExecMax {
		curr.Stats.ExecMax = uint64(deltaExec)
	}
	curr.Vruntime += calcDeltaFair(uint64(deltaExec), curr)
	if !k.S.EEVDF {
		k.updateMinVruntime(c)
		return
	}
	resched := k.updateDeadline(c, curr)
	if c.NrQueued == 1 {
		return
	}
	if resched || !protectSlice(curr) {
		k.reschedCurrLazy(rq)
		k.clearBuddies(c, curr)
	}
}

// placeEntity mirrors fair.c:place_entity (v6.19).
func (k *Kernel) placeEntity(c *CfsRq, se *SchedEntity, flags int) {
	if !k.S.EEVDF {
		k.placeEntityCFS(c, se, flags&enqueueInitial != 0)
		return
	}
	vruntime := k.avgVruntime(c)
	var lag int64
	if !se.CustomSlice {
		se.Slice = k.baseSlice
	}
	vslice := calcDeltaFair(se.Slice, se)
	if k.S.PlaceLag && c.NrQueued > 0 && se.Vlag != 0 {
		curr := c.Curr
		lag = se.Vlag
		load := int64(c.SumWeight)
		if curr != nil && curr.OnRq {
			load += int64(seWeight(curr))
		}
		lag *= load + int64(seWeight(se))
		if load == 0 {
			load = 1
		}
		lag /= load
	}
	se.Vruntime = vruntime - uint64(lag)
	if se.RelDeadline {
		se.Deadline += se.Vruntime
		se.RelDeadline = false
		return
	}
	if k.S.PlaceDeadlineInit && flags&enqueueInitial != 0 {
		vslice /= 2
	}
	se.Deadline = se.Vruntime + vslice
}

// accountEntityEnqueue mirrors fair.c:account_entity_enqueue (v6.19).
func (k *Kernel) accountEntityEnqueue(c *CfsRq, se *SchedEntity) {
	updateLoadAdd(&c.Load, se.Load.Weight)
	if se.IsTask() {
		c.rq.cfsTasksAdd(se)
	}
	c.NrQueued++
	if seIsIdle(se) {
		c.IdleNrQueued++
	}
}

// accountEntityDequeue mirrors fair.c:account_entity_dequeue (v6.19).
func (k *Kernel) accountEntityDequeue(c *CfsRq, se *SchedEntity) {
	updateLoadSub(&c.Load, se.Load.Weight)
	if se.IsTask() {
		c.rq.cfsTasksDel(se)
	}
	c.NrQueued--
	if seIsIdle(se) {
		c.IdleNrQueued--
	}
}

// seUpdateRunnable mirrors fair.c:se_update_runnable (v6.19).
func seUpdateRunnable(se *SchedEntity) {
	if !se.IsTask() {
		se.RunnableWeight = uint64(se.MyQ.HNrRunnable)
	}
}

// seRunnable mirrors fair.c:se_runnable (v6.19).
func seRunnable(se *SchedEntity) uint64 {
	if se.SchedDelayed {
		return 0
	}
	if se.IsTask() {
		if se.OnRq {
			return 1
		}
		return 0
	}
	return se.RunnableWeight
}

// enqueueEntity mirrors fair.c:enqueue_entity (v6.19; CFS: v6.0).
func (k *Kernel) enqueueEntity(c *CfsRq, se *SchedEntity, flags int) {
	if !k.S.EEVDF {
		k.enqueueEntityCFS(c, se, flags)
		return
	}
	curr := c.Curr == se
	if curr {
		k.placeEntity(c, se, flags)
	}
	k.updateCurr(c)
	k.updateLoadAvg(c, se, updateTG|doAttach)
	seUpdateRunnable(se)
	k.updateCfsGroup(se)
	if !curr {
		k.placeEntity(c, se, flags)
	}
	k.accountEntityEnqueue(c, se)
	if flags&enqueueMigrated != 0 {
		se.ExecStart = 0
	}
	k.updateStatsEnqueueFair(c, se, flags)
	if !curr {
		k.enqueueEntityTree(c, se)
	}
	se.OnRq = true
	if c.NrQueued == 1 {
		k.listAddLeafCfsRq(c)
	}
}

// setDelayed mirrors fair.c:set_delayed (v6.19).
func setDelayed(se *SchedEntity) {
	se.SchedDelayed = true
	if !se.IsTask() {
		return
	}
	for ; se != nil; se = se.Parent {
		se.CfsRq.HNrRunnable--
		se.CfsRq.sgStatsChanged()
	}
}

// clearDelayed mirrors fair.c:clear_delayed (v6.19).
func clearDelayed(se *SchedEntity) {
	se.SchedDelayed = false
	if !se.IsTask() {
		return
	}
	for ; se != nil; se = se.Parent {
		se.CfsRq.HNrRunnable++
		se.CfsRq.sgStatsChanged()
	}
}

// finishDelayedDequeueEntity mirrors fair.c:finish_delayed_dequeue_entity (v6.19).
func (k *Kernel) finishDelayedDequeueEntity(se *SchedEntity) {
	clearDelayed(se)
	if k.S.DelayZero && se.Vlag > 0 {
		se.Vlag = 0
	}
}

// dequeueEntity mirrors fair.c:dequeue_entity (v6.19; CFS: v6.0). It
// returns false when the entity was only marked delayed (DELAY_DEQUEUE).
func (k *Kernel) dequeueEntity(c *CfsRq, se *SchedEntity, flags int) bool {
	if !k.S.EEVDF {
		k.dequeueEntityCFS(c, se, flags)
		return true
	}
	sleep := flags&dequeueSleep != 0
	action := updateTG
	k.updateCurr(c)
	k.clearBuddies(c, se)
	if flags&dequeueDelayed == 0 {
		delay := sleep
		if flags&(dequeueSpecial|dequeueThrottle) != 0 {
			delay = false
		}
		if se.SchedDelayed && delay {
			panic("sched: sleeping dequeue of a delayed entity")
		}
		if k.S.DelayDequeue && delay && !entityEligible(c, se) {
			k.updateLoadAvg(c, se, 0)
			setDelayed(se)
			return false
		}
	}
	if se.IsTask() && se.task.OnRq == taskOnRqMigrating {
		action |= doDetach
	}
	k.updateLoadAvg(c, se, action)
	seUpdateRunnable(se)
	k.updateStatsDequeueFair(c, se, flags)
	k.updateEntityLag(c, se)
	if k.S.PlaceRelDeadline && !sleep {
		se.Deadline -= se.Vruntime
		se.RelDeadline = true
	}
	if se != c.Curr {
		k.dequeueEntityTree(c, se)
	}
	se.OnRq = false
	k.accountEntityDequeue(c, se)
	k.updateCfsGroup(se)
	if flags&dequeueDelayed != 0 {
		k.finishDelayedDequeueEntity(se)
	}
	if c.NrQueued == 0 {
		updateIdleCfsRqClockPelt(c)
	}
	return true
}

// updateIdleCfsRqClockPelt mirrors pelt.h:update_idle_cfs_rq_clock_pelt (v6.19);
// without bandwidth control there is no throttled time to record.
func updateIdleCfsRqClockPelt(c *CfsRq) {}

// requeueDelayedEntity mirrors fair.c:requeue_delayed_entity (v6.19).
func (k *Kernel) requeueDelayedEntity(se *SchedEntity) {
	c := cfsRqOf(se)
	if !se.SchedDelayed || !se.OnRq {
		panic("sched: requeue of an entity that is not delayed")
	}
	if k.S.DelayZero {
		k.updateEntityLag(c, se)
		if se.Vlag > 0 {
			c.NrQueued--
			if se != c.Curr {
				k.dequeueEntityTree(c, se)
			}
			se.Vlag = 0
			k.placeEntity(c, se, 0)
			if se != c.Curr {
				k.enqueueEntityTree(c, se)
			}
			c.NrQueued++
		}
	}
	k.updateLoadAvg(c, se, 0)
	clearDelayed(se)
}

// enqueueTaskFair mirrors fair.c:enqueue_task_fair (v6.19).
func (k *Kernel) enqueueTaskFair(rq *Rq, p *Task, flags int) {
	se := &p.SE
	hNrIdle := 0
	if p.Policy == SchedIdle {
		hNrIdle = 1
	}
	hNrRunnable := 1
	taskNew := flags&enqueueWakeup == 0
	var slice uint64

	if !se.SchedDelayed || flags&enqueueDelayed != 0 {
		k.utilEstEnqueue(rq.CFS, p)
	}
	if flags&enqueueDelayed != 0 {
		k.requeueDelayedEntity(se)
		return
	}
	if taskNew && se.SchedDelayed {
		hNrRunnable = 0
	}
	for ; se != nil; se = se.Parent {
		if se.OnRq {
			if se.SchedDelayed {
				k.requeueDelayedEntity(se)
			}
			break
		}
		c := cfsRqOf(se)
		if slice != 0 && k.S.EEVDF {
			se.Slice = slice
			se.CustomSlice = true
		}
		k.enqueueEntity(c, se, flags)
		slice = cfsRqMinSlice(c)
		c.HNrRunnable += hNrRunnable
		c.sgStatsChanged()
		c.HNrQueued++
		c.HNrIdle += hNrIdle
		flags = enqueueWakeup
	}
	for ; se != nil; se = se.Parent {
		c := cfsRqOf(se)
		k.updateLoadAvg(c, se, updateTG)
		seUpdateRunnable(se)
		k.updateCfsGroup(se)
		if k.S.EEVDF {
			se.Slice = slice
			if se.onTimeline {
				minVruntimeCbPropagate(se)
			}
			slice = cfsRqMinSlice(c)
		}
		c.HNrRunnable += hNrRunnable
		c.sgStatsChanged()
		c.HNrQueued++
		c.HNrIdle += hNrIdle
	}
	k.addNrRunning(rq, 1)
	if !taskNew {
		k.updateOverutilizedStatus(rq)
	}
}

// dequeueEntities mirrors fair.c:dequeue_entities (v6.19). It returns -1
// when the task was delayed instead of dequeued.
func (k *Kernel) dequeueEntities(rq *Rq, se *SchedEntity, flags int) int {
	taskSleep := flags&dequeueSleep != 0
	taskDelayed := flags&dequeueDelayed != 0
	var p *Task
	hNrIdle, hNrQueued, hNrRunnable := 0, 0, 0
	var slice uint64
	if se.IsTask() {
		p = se.task
		hNrQueued = 1
		if p.Policy == SchedIdle {
			hNrIdle = 1
		}
		if taskSleep || taskDelayed || !se.SchedDelayed {
			hNrRunnable = 1
		}
	}
	for ; se != nil; se = se.Parent {
		c := cfsRqOf(se)
		if !k.dequeueEntity(c, se, flags) {
			if p != nil && &p.SE == se {
				return -1
			}
			slice = cfsRqMinSlice(c)
			break
		}
		c.HNrRunnable -= hNrRunnable
		c.sgStatsChanged()
		c.HNrQueued -= hNrQueued
		c.HNrIdle -= hNrIdle
		if c.Load.Weight != 0 {
			slice = cfsRqMinSlice(c)
			se = se.Parent
			if taskSleep && se != nil {
				k.setNextBuddy(se)
			}
			break
		}
		flags |= dequeueSleep
		flags &^= dequeueDelayed | dequeueSpecial
	}
	for ; se != nil; se = se.Parent {
		c := cfsRqOf(se)
		k.updateLoadAvg(c, se, updateTG)
		seUpdateRunnable(se)
		k.updateCfsGroup(se)
		if k.S.EEVDF {
			se.Slice = slice
			if se.onTimeline {
				minVruntimeCbPropagate(se)
			}
			slice = cfsRqMinSlice(c)
		}
		c.HNrRunnable -= hNrRunnable
		c.sgStatsChanged()
		c.HNrQueued -= hNrQueued
		c.HNrIdle -= hNrIdle
	}
	k.subNrRunning(rq, hNrQueued)
	if p != nil && taskDelayed {
		k.blockTask(rq, p)
	}
	return 1
}

// dequeueTaskFair mirrors fair.c:dequeue_task_fair (v6.19): false when the
// task stays queued as a delayed entity.
func (k *Kernel) dequeueTaskFair(rq *Rq, p *Task, flags int) bool {
	if !(p.SE.SchedDelayed && flags&(dequeueSleep|dequeueDelayed) == dequeueSleep|dequeueDelayed) {
		k.utilEstDequeue(rq.CFS, p)
	}
	k.utilEstUpdate(rq.CFS, p, flags&dequeueSleep != 0)
	return k.dequeueEntities(rq, &p.SE, flags) >= 0
}

// clearBuddies mirrors fair.c:clear_buddies (v6.19 has only next; CFS also
// last and skip).
func (k *Kernel) clearBuddies(c *CfsRq, se *SchedEntity) {
	if c.Next == se {
		for s := se; s != nil; s = s.Parent {
			if s.CfsRq.Next != s {
				break
			}
			s.CfsRq.Next = nil
		}
	}
	if c.Last == se {
		for s := se; s != nil; s = s.Parent {
			if s.CfsRq.Last != s {
				break
			}
			s.CfsRq.Last = nil
		}
	}
	if c.Skip == se {
		for s := se; s != nil; s = s.Parent {
			if s.CfsRq.Skip != s {
				break
			}
			s.CfsRq.Skip = nil
		}
	}
}

// setNextBuddy mirrors fair.c:set_next_buddy (v6.19).
func (k *Kernel) setNextBuddy(se *SchedEntity) {
	for ; se != nil; se = se.Parent {
		if se.SchedDelayed {
			return
		}
		if se.IsTask() && se.task.Policy == SchedIdle {
			return
		}
		se.CfsRq.Next = se
	}
}

// setLastBuddy mirrors fair.c:set_last_buddy (v6.19; CFS).
func setLastBuddy(se *SchedEntity) {
	for ; se != nil; se = se.Parent {
		if se.IsTask() && se.task.Policy == SchedIdle {
			return
		}
		se.CfsRq.Last = se
	}
}

// setSkipBuddy mirrors fair.c:set_skip_buddy (v6.19; CFS).
func setSkipBuddy(se *SchedEntity) {
	for ; se != nil; se = se.Parent {
		se.CfsRq.Skip = se
	}
}

// pickEEVDF mirrors fair.c:__pick_eevdf (v6.19): the leftmost entity if
// it is eligible, else the heap search down the tree by min_vruntime,
// which finds the first eligible entity in deadline order in O(log n).
func (k *Kernel) pickEEVDF(c *CfsRq, protect bool) *SchedEntity {
	curr := c.Curr
	if c.NrQueued == 1 {
		if curr != nil && curr.OnRq {
			return curr
		}
		return pickFirstEntity(c)
	}
	if k.S.PickBuddy && c.Next != nil && entityEligible(c, c.Next) {
		return c.Next
	}
	if curr != nil && (!curr.OnRq || !entityEligible(c, curr)) {
		curr = nil
	}
	if protect && curr != nil && protectSlice(curr) {
		return curr
	}
	var best *SchedEntity
	if se := pickFirstEntity(c); se != nil && entityEligible(c, se) {
		best = se // the leftmost entity, if eligible
	} else {
		// Heap search for the EEVD entity: an eligible entity in the
		// left subtree has an earlier deadline than this node's.
		for node := pickRootEntity(c); node != nil; {
			if left := node.rbLeft; left != nil && vruntimeEligible(c, left.minVruntime) {
				node = left
				continue
			}
			if entityEligible(c, node) {
				best = node
				break
			}
			node = node.rbRight
		}
	}
	if invariantsEnabled {
		k.checkPickEEVDF(c, best)
	}
	if best == nil || (curr != nil && k.entityBefore(curr, best)) {
		best = curr
	}
	return best
}

// pickNextEntity mirrors fair.c:pick_next_entity (v6.19): nil when the pick
// was a delayed entity, which is then dequeued for good.
func (k *Kernel) pickNextEntity(rq *Rq, c *CfsRq) *SchedEntity {
	if !k.S.EEVDF {
		return k.pickNextEntityCFS(c)
	}
	se := k.pickEEVDF(c, true)
	if se == nil {
		panic("sched: pick_eevdf found nothing on a non-empty queue")
	}
	if se.SchedDelayed {
		k.dequeueEntities(rq, se, dequeueSleep|dequeueDelayed)
		return nil
	}
	return se
}

// pickTaskFair mirrors fair.c:pick_task_fair (v6.19).
func (k *Kernel) pickTaskFair(rq *Rq) *Task {
again:
	c := rq.CFS
	if c.NrQueued == 0 {
		return nil
	}
	var se *SchedEntity
	for c != nil {
		if c.Curr != nil && c.Curr.OnRq {
			k.updateCurr(c)
		}
		se = k.pickNextEntity(rq, c)
		if se == nil {
			goto again
		}
		c = groupCfsRq(se)
	}
	return taskOf(se)
}

// isSameGroup mirrors fair.c:is_same_group (v6.19).
func isSameGroup(se, pse *SchedEntity) *CfsRq {
	if se.CfsRq == pse.CfsRq {
		return se.CfsRq
	}
	return nil
}

// setNextEntity mirrors fair.c:set_next_entity (v6.19; CFS v6.0 differs
// only in slice protection, v5.12 also in leaving the buddies to
// pick_next_entity). The schedstat slice_max counts only while the CPU's
// root cfs_rq holds at least twice the entity's weight.
func (k *Kernel) setNextEntity(c *CfsRq, se *SchedEntity, first bool) {
	if k.S.EEVDF || !k.S.CFSClearBuddiesInPick {
		k.clearBuddies(c, se)
	}
	if se.OnRq {
		k.updateStatsWaitEndFair(c, se)
		k.dequeueEntityTree(c, se)
		k.updateLoadAvg(c, se, updateTG)
		if first && k.S.EEVDF {
			k.setProtectSlice(c, se)
		}
	}
	se.ExecStart = rqClockTask(rqOf(c))
	c.Curr = se
	if rqOf(c).CFS.Load.Weight >= 2*se.Load.Weight {
		if run := se.SumExecRuntime - se.PrevSumExecRuntime; run > se.Stats.SliceMax {
			se.Stats.SliceMax = run
		}
	}
	se.PrevSumExecRuntime = se.SumExecRuntime
}

// putPrevEntity mirrors fair.c:put_prev_entity (v6.19).
func (k *Kernel) putPrevEntity(c *CfsRq, prev *SchedEntity) {
	if prev.OnRq {
		k.updateCurr(c)
		k.updateStatsWaitStartFair(c, prev)
		k.enqueueEntityTree(c, prev)
		k.updateLoadAvg(c, prev, 0)
	}
	if c.Curr != prev {
		panic("sched: put_prev_entity of an entity that is not curr")
	}
	c.Curr = nil
}

// pickNextTaskFair mirrors fair.c:pick_next_task_fair (v6.19) with
// prev being the rq's current task. It returns nil when the CPU goes idle.
func (k *Kernel) pickNextTaskFair(rq *Rq, prev *Task) *Task {
again:
	p := k.pickTaskFair(rq)
	if p == nil {
		if n := k.schedBalanceNewidle(rq); n > 0 {
			goto again
		}
		updateIdleRqClockPelt(rq)
		return nil
	}
	if prev.IsIdleTask() {
		// put_prev_set_next_task: the idle class has nothing to put.
		k.setNextTaskFair(rq, p, true)
		return p
	}
	if prev != p {
		se, pse := &p.SE, &prev.SE
		var c *CfsRq
		for {
			if c = isSameGroup(se, pse); c != nil {
				break
			}
			seDepth, pseDepth := se.Depth, pse.Depth
			if seDepth <= pseDepth {
				k.putPrevEntity(cfsRqOf(pse), pse)
				pse = parentEntity(pse)
			}
			if seDepth >= pseDepth {
				k.setNextEntity(cfsRqOf(se), se, true)
				se = parentEntity(se)
			}
		}
		k.putPrevEntity(c, pse)
		k.setNextEntity(c, se, true)
		k.setNextTaskFairTail(rq, p)
	}
	return p
}

// putPrevTaskFair mirrors fair.c:put_prev_task_fair (v6.19), plus the
// short-task RFC v2's dur_avg update for a prev that slept.
func (k *Kernel) putPrevTaskFair(rq *Rq, prev *Task) {
	if k.S.ShortTaskMetric == ShortDurAvgRFC2 && prev.OnRq == 0 {
		k.updateDurAvgRFC2(prev)
	}
	for se := &prev.SE; se != nil; se = se.Parent {
		k.putPrevEntity(cfsRqOf(se), se)
	}
}

// setNextTaskFair mirrors fair.c:set_next_task_fair (v6.19).
func (k *Kernel) setNextTaskFair(rq *Rq, p *Task, first bool) {
	for se := &p.SE; se != nil; se = se.Parent {
		k.setNextEntity(cfsRqOf(se), se, first)
	}
	k.setNextTaskFairTail(rq, p)
}

// setNextTaskFairTail mirrors fair.c:__set_next_task_fair (v6.19): move p to the
// head of cfs_tasks (the balancer scans from the tail, least recently run).
func (k *Kernel) setNextTaskFairTail(rq *Rq, p *Task) {
	if p.OnRq == taskOnRqQueued {
		rq.cfsTasksMove(&p.SE)
	}
	k.updateMisfitStatus(p, rq) // load balancing: __set_next_task_fair does
}

// findMatchingSE mirrors fair.c:find_matching_se (v6.19): walk both entities up to
// the first pair on the same cfs_rq.
func findMatchingSE(se, pse *SchedEntity) (*SchedEntity, *SchedEntity) {
	seDepth, pseDepth := se.Depth, pse.Depth
	for seDepth > pseDepth {
		seDepth--
		se = se.Parent
	}
	for pseDepth > seDepth {
		pseDepth--
		pse = pse.Parent
	}
	for isSameGroup(se, pse) == nil {
		se = se.Parent
		pse = pse.Parent
	}
	return se, pse
}

// seIsIdle mirrors fair.c:se_is_idle (v6.19; idle groups are not modelled: only
// SCHED_IDLE tasks are idle entities).
func seIsIdle(se *SchedEntity) bool {
	return se.IsTask() && se.task.Policy == SchedIdle
}

// checkPreemptWakeupFair mirrors fair.c:check_preempt_wakeup_fair (v6.19).
func (k *Kernel) checkPreemptWakeupFair(rq *Rq, p *Task, wakeFlags int) {
	if !k.S.EEVDF {
		k.checkPreemptWakeupCFS(rq, p, wakeFlags)
		return
	}
	curr := rq.Curr
	se, pse := &curr.SE, &p.SE
	c := rq.CFS
	if se == pse {
		return
	}
	if rq.needResched {
		return
	}
	if !k.S.WakeupPreemption {
		return
	}
	se, pse = findMatchingSE(se, pse)
	cseIsIdle, pseIsIdle := seIsIdle(se), seIsIdle(pse)
	short := false
	if cseIsIdle && !pseIsIdle {
		short = true
		goto preempt
	}
	if cseIsIdle != pseIsIdle {
		return
	}
	if p.Policy != SchedNormal {
		return
	}
	c = cfsRqOf(se)
	k.updateCurr(c)
	if k.S.PreemptShort && pse.Slice < se.Slice {
		short = true
		goto pick
	}
	if wakeFlags&WFFork != 0 || pse.SchedDelayed {
		return
	}
	if k.S.NextBuddy && k.setPreemptBuddy(c, pse) && wakeFlags&WFSync != 0 {
		// preempt_sync, only when pse became the next buddy.
		threshold := k.S.MigrationCost
		if wakeFlags&WFRqSelected != 0 {
			threshold >>= 2
		}
		delta := int64(rqClockTask(rq) - se.ExecStart)
		if delta < 0 {
			delta = 0
		}
		if k.entityBefore(pse, se) && uint64(delta) >= threshold {
			goto preempt
		}
		return
	}
pick:
	if k.pickEEVDF(c, !short) == pse {
		goto preempt
	}
	if k.S.RunToParity {
		k.updateProtectSlice(c, se)
	}
	return
preempt:
	if short {
		cancelProtectSlice(se)
	}
	k.reschedCurrLazy(rq)
}

// setPreemptBuddy mirrors fair.c:set_preempt_buddy (v6.19): keep an
// existing next buddy whose deadline is before pse's; otherwise (ties
// included) make pse the next buddy. It reports whether pse was made it.
func (k *Kernel) setPreemptBuddy(c *CfsRq, pse *SchedEntity) bool {
	if c.Next != nil && k.entityBefore(c.Next, pse) {
		return false
	}
	k.setNextBuddy(pse)
	return true
}

// wakeupPreempt mirrors core.c:wakeup_preempt (v6.19) for a fair task p: the idle
// class is always preempted.
func (k *Kernel) wakeupPreempt(rq *Rq, p *Task, wakeFlags int) {
	if rq.currIsIdle() {
		k.reschedCurr(rq)
		return
	}
	k.checkPreemptWakeupFair(rq, p, wakeFlags)
}

// entityTick mirrors fair.c:entity_tick (v6.19; CFS adds check_preempt_tick).
func (k *Kernel) entityTick(c *CfsRq, curr *SchedEntity) {
	k.updateCurr(c)
	k.updateLoadAvg(c, curr, updateTG)
	k.updateCfsGroup(curr)
	if k.S.EEVDF {
		k.avgVruntime(c)
		return
	}
	if c.NrQueued > 1 {
		k.checkPreemptTick(c, curr)
	}
}

// taskTickFair mirrors fair.c:task_tick_fair (v6.19; no NUMA balancing, EAS or core
// scheduling).
func (k *Kernel) taskTickFair(rq *Rq, curr *Task) {
	for se := &curr.SE; se != nil; se = se.Parent {
		k.entityTick(cfsRqOf(se), se)
	}
	k.updateMisfitStatus(curr, rq)
	k.updateOverutilizedStatus(rq)
}

// updateMisfitStatus mirrors fair.c:update_misfit_status (v6.19; v6.0's
// and v5.12's without the max_allowed_capacity exemption,
// Settings.MisfitMaxAllowed) on machines with asymmetric capacity;
// elsewhere misfit_task_load stays 0.
func (k *Kernel) updateMisfitStatus(p *Task, rq *Rq) {
	if !k.asymCPUCapacity() {
		return
	}
	rq.sgStatsChanged()
	if p == nil || p.NrCPUsAllowed == 1 {
		rq.MisfitTaskLoad = 0
		return
	}
	// load balancing: already on the biggest CPU it may use
	// (p->max_allowed_capacity) is not misfit (v6.10+); the load is
	// task_h_load. v6.0 and v5.12 test the fit alone
	// (task_fits_capacity(p, capacity_of(cpu))).
	if k.taskFitsCPU(p, rq.CPU) || k.S.MisfitMaxAllowed && k.archScaleCPUCapacity(rq.CPU) == k.maxAllowedCapacity(p) {
		rq.MisfitTaskLoad = 0
		return
	}
	l := k.taskHLoad(p)
	if l < 1 {
		l = 1
	}
	rq.MisfitTaskLoad = l
}

func taskH(p *Task) uint64 { return p.SE.Avg.LoadAvg }

// yieldTaskFair mirrors fair.c:yield_task_fair (v6.19; CFS sets skip).
func (k *Kernel) yieldTaskFair(rq *Rq) {
	curr := rq.Curr
	c := curr.SE.CfsRq
	se := &curr.SE
	if rq.NrRunning == 1 {
		return
	}
	k.clearBuddies(c, se)
	if !k.S.EEVDF {
		if curr.Policy != SchedBatch {
			k.updateRqClock(rq)
			k.updateCurr(c)
		}
		setSkipBuddy(se)
		return
	}
	k.updateRqClock(rq)
	k.updateCurr(c)
	if entityEligible(c, se) {
		se.Vruntime = se.Deadline
		se.Deadline += calcDeltaFair(se.Slice, se)
	}
}

// updateCfsGroup mirrors fair.c:update_cfs_group (v6.19).
func (k *Kernel) updateCfsGroup(se *SchedEntity) {
	gcfs := groupCfsRq(se)
	if gcfs == nil || gcfs.Load.Weight == 0 {
		return
	}
	shares := calcGroupShares(gcfs, k.S.GroupSharesWeight)
	if se.Load.Weight != shares {
		k.reweightEntity(cfsRqOf(se), se, shares)
	}
}

// calcGroupShares mirrors fair.c:calc_group_shares (v6.19), or with
// weightOnly calc_cfs_shares (v4.9–v4.14: the queue's load.weight, not
// max(load.weight, load_avg); Settings.GroupSharesWeight).
func calcGroupShares(c *CfsRq, weightOnly bool) uint64 {
	tg := c.tg
	tgShares := int64(tg.Shares)
	load := int64(scaleLoadDown(c.Load.Weight))
	if la := int64(c.Avg.LoadAvg); la > load && !weightOnly {
		load = la
	}
	tgWeight := tg.LoadAvg
	tgWeight -= int64(c.TgLoadAvgContrib)
	tgWeight += load
	shares := tgShares * load
	if tgWeight != 0 {
		shares /= tgWeight
	}
	const minShares = 2
	if shares < minShares {
		shares = minShares
	}
	if shares > tgShares {
		shares = tgShares
	}
	return uint64(shares)
}

// reweightEntity mirrors fair.c:reweight_entity (6.19.10: with
// ff38424030f9's rescale of vprot; CFS just swaps the weight). vlag, a
// relative deadline and vprot are rescaled by the full-resolution weights,
// as every kernel version does.
func (k *Kernel) reweightEntity(c *CfsRq, se *SchedEntity, weight uint64) {
	curr := c.Curr == se
	var vprotRel int64
	protected := false
	if se.OnRq {
		k.updateCurr(c)
		if k.S.EEVDF {
			k.updateEntityLag(c, se)
			se.Deadline -= se.Vruntime
			se.RelDeadline = true
			if curr && protectSlice(se) {
				vprotRel = int64(se.Vprot - se.Vruntime)
				protected = true
			}
		}
		if !curr {
			k.dequeueEntityTree(c, se)
		}
		c.NrQueued--
		updateLoadSub(&c.Load, se.Load.Weight)
	}
	dequeueLoadAvg(c, se)
	if k.S.EEVDF {
		// "se->vlag = div_s64(se->vlag * se->load.weight, weight)": the
		// full-resolution weights (scale_load), not scale_load_down's,
		// so that a group entity's shares round as the kernel's do.
		oldW, newW := int64(se.Load.Weight), int64(weight)
		se.Vlag = se.Vlag * oldW / newW
		if se.RelDeadline {
			se.Deadline = uint64(int64(se.Deadline) * oldW / newW)
		}
		if protected {
			vprotRel = vprotRel * oldW / newW
		}
	}
	updateLoadSet(&se.Load, weight)
	divider := uint64(getPeltDivider(&se.Avg))
	se.Avg.LoadAvg = seWeight(se) * se.Avg.LoadSum / divider
	enqueueLoadAvg(c, se)
	if se.OnRq {
		if k.S.EEVDF {
			k.placeEntity(c, se, 0)
			if protected {
				se.Vprot = se.Vruntime + uint64(vprotRel)
			}
		}
		updateLoadAdd(&c.Load, se.Load.Weight)
		if !curr {
			k.enqueueEntityTree(c, se)
		}
		c.NrQueued++
	}
}

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
