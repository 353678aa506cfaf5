package sched

// The CFS pick, placement and preemption of the v6.0 and v5.12 baselines
// (kernel/sched/fair.c before EEVDF): vruntime ordered tree, min_vruntime,
// sched_latency/min_granularity slices, wakeup granularity and buddies. In
// CFS mode CfsRq.ZeroVruntime holds min_vruntime. Where v5.12 differs,
// Settings says so: no ALT_PERIOD or BASE_SLICE (features), buddies
// cleared in pick_next_entity (CFSClearBuddiesInPick), no idle-entity
// placement (CFSIdlePlacement).

// updateMinVruntime mirrors fair.c:update_min_vruntime (v6.0).
func (k *Kernel) updateMinVruntime(c *CfsRq) {
	curr := c.Curr
	leftmost := pickFirstEntity(c)
	vruntime := c.ZeroVruntime
	if curr != nil {
		if curr.OnRq {
			vruntime = curr.Vruntime
		} else {
			curr = nil
		}
	}
	if leftmost != nil {
		if curr == nil {
			vruntime = leftmost.Vruntime
		} else if int64(leftmost.Vruntime-vruntime) < 0 {
			vruntime = leftmost.Vruntime
		}
	}
	if int64(vruntime-c.ZeroVruntime) > 0 {
		c.ZeroVruntime = vruntime
	}
}

// schedPeriod mirrors fair.c:__sched_period (v6.0).
func (k *Kernel) schedPeriod(nrRunning uint64) uint64 {
	if nrRunning > k.S.NrLatency {
		return nrRunning * k.minGranularity
	}
	return k.latency
}

// schedSlice mirrors fair.c:sched_slice (v6.0, ALT_PERIOD and BASE_SLICE;
// v5.12 has neither feature: the cfs_rq's own nr_running and no floor).
func (k *Kernel) schedSlice(c *CfsRq, se *SchedEntity) uint64 {
	nrRunning := uint64(c.NrQueued)
	if k.S.AltPeriod {
		nrRunning = uint64(c.rq.CFS.HNrQueued)
	}
	if !se.OnRq {
		nrRunning++
	}
	slice := k.schedPeriod(nrRunning)
	var minGran uint64
	for s := se; s != nil; s = s.Parent {
		q := cfsRqOf(s)
		load := &q.Load
		if !s.OnRq {
			lw := q.Load
			updateLoadAdd(&lw, s.Load.Weight)
			load = &lw
		}
		slice = calcDelta(slice, s.Load.Weight, load)
	}
	if k.S.BaseSliceFeat {
		// An idle entity's floor is idle_min_granularity unless
		// everything queued on its cfs_rq is idle too (the loop walks
		// qcfs_rq and leaves cfs_rq the entity's own).
		if seIsIdle(se) && !schedIdleCfsRq(c) {
			minGran = k.S.IdleMinGranularity
		} else {
			minGran = k.minGranularity
		}
		if slice < minGran {
			slice = minGran
		}
	}
	return slice
}

// schedIdleCfsRq mirrors fair.c:sched_idle_cfs_rq (v6.0): everything
// queued on c is idle (idle groups are not modelled: SCHED_IDLE tasks).
func schedIdleCfsRq(c *CfsRq) bool { return c.NrQueued != 0 && c.NrQueued == int(c.IdleNrQueued) }

// schedVslice mirrors fair.c:sched_vslice (v6.0).
func (k *Kernel) schedVslice(c *CfsRq, se *SchedEntity) uint64 {
	return calcDeltaFair(k.schedSlice(c, se), se)
}

// placeEntityCFS mirrors fair.c:place_entity (v6.0; v5.12 without
// CFSIdlePlacement): a new entity starts one vslice after min_vruntime
// (START_DEBIT), a waking one at most half a sched_latency before it
// (GENTLE_FAIR_SLEEPERS), an idle entity (SCHED_IDLE here) at most half
// the scaled min_granularity before it.
func (k *Kernel) placeEntityCFS(c *CfsRq, se *SchedEntity, initial bool) {
	vruntime := c.ZeroVruntime
	if initial && k.S.StartDebit {
		vruntime += k.schedVslice(c, se)
	}
	if !initial {
		thresh := k.latency
		if k.S.CFSIdlePlacement && seIsIdle(se) {
			// sysctl_sched_min_granularity, scaled like the other
			// tunables (not the unscaled idle_min_granularity).
			thresh = k.minGranularity
		}
		if k.S.GentleFairSleepers {
			thresh >>= 1
		}
		vruntime -= thresh
	}
	if int64(se.Vruntime-vruntime) > 0 {
		vruntime = se.Vruntime
	}
	se.Vruntime = vruntime
}

// enqueueEntityCFS mirrors fair.c:enqueue_entity (v6.0).
func (k *Kernel) enqueueEntityCFS(c *CfsRq, se *SchedEntity, flags int) {
	renorm := flags&enqueueWakeup == 0 || flags&enqueueMigrated != 0
	curr := c.Curr == se
	if renorm && curr {
		se.Vruntime += c.ZeroVruntime
	}
	k.updateCurr(c)
	if renorm && !curr {
		se.Vruntime += c.ZeroVruntime
	}
	k.updateLoadAvg(c, se, updateTG|doAttach)
	seUpdateRunnable(se)
	k.updateCfsGroup(se)
	k.accountEntityEnqueue(c, se)
	if flags&enqueueWakeup != 0 {
		k.placeEntityCFS(c, se, false)
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

// dequeueEntityCFS mirrors fair.c:dequeue_entity (v6.0).
func (k *Kernel) dequeueEntityCFS(c *CfsRq, se *SchedEntity, flags int) {
	k.updateCurr(c)
	action := updateTG
	if se.IsTask() && se.task.OnRq == taskOnRqMigrating {
		action |= doDetach
	}
	k.updateLoadAvg(c, se, action)
	seUpdateRunnable(se)
	k.updateStatsDequeueFair(c, se, flags)
	k.clearBuddies(c, se)
	if se != c.Curr {
		k.dequeueEntityTree(c, se)
	}
	se.OnRq = false
	k.accountEntityDequeue(c, se)
	if flags&dequeueSleep == 0 {
		se.Vruntime -= c.ZeroVruntime
	}
	k.updateCfsGroup(se)
	if flags&(dequeueSave|dequeueMove) != dequeueSave {
		k.updateMinVruntime(c)
	}
}

// wakeupGran mirrors fair.c:wakeup_gran (v6.0).
func (k *Kernel) wakeupGran(se *SchedEntity) uint64 {
	return calcDeltaFair(k.wakeupGranularity, se)
}

// wakeupPreemptEntity mirrors fair.c:wakeup_preempt_entity (v6.0).
func (k *Kernel) wakeupPreemptEntity(curr, se *SchedEntity) int {
	vdiff := int64(curr.Vruntime - se.Vruntime)
	if vdiff <= 0 {
		return -1
	}
	if vdiff > int64(k.wakeupGran(se)) {
		return 1
	}
	return 0
}

// pickNextEntityCFS mirrors fair.c:pick_next_entity (v6.0) with buddies;
// v5.12's also clears the picked entity's buddies (CFSClearBuddiesInPick).
func (k *Kernel) pickNextEntityCFS(c *CfsRq) *SchedEntity {
	curr := c.Curr
	if curr != nil && !curr.OnRq {
		curr = nil
	}
	left := pickFirstEntity(c)
	if left == nil || (curr != nil && k.entityBefore(curr, left)) {
		left = curr
	}
	se := left
	if c.Skip != nil && c.Skip == se {
		var second *SchedEntity
		if se == curr {
			second = pickFirstEntity(c)
		} else {
			second = pickNextEntityInTree(c, se)
			if second == nil || (curr != nil && k.entityBefore(curr, second)) {
				second = curr
			}
		}
		if second != nil && k.wakeupPreemptEntity(second, left) < 1 {
			se = second
		}
	}
	if c.Next != nil && k.wakeupPreemptEntity(c.Next, left) < 1 {
		se = c.Next
	} else if c.Last != nil && k.wakeupPreemptEntity(c.Last, left) < 1 {
		se = c.Last
	}
	if k.S.CFSClearBuddiesInPick {
		k.clearBuddies(c, se) // v5.12; later kernels clear in set_next_entity
	}
	return se
}

// checkPreemptTick mirrors fair.c:check_preempt_tick (v6.0).
func (k *Kernel) checkPreemptTick(c *CfsRq, curr *SchedEntity) {
	idealRuntime := k.schedSlice(c, curr)
	deltaExec := curr.SumExecRuntime - curr.PrevSumExecRuntime
	if deltaExec > idealRuntime {
		k.reschedCurr(c.rq)
		k.clearBuddies(c, curr)
		return
	}
	if deltaExec < k.minGranularity {
		return
	}
	se := pickFirstEntity(c)
	delta := int64(curr.Vruntime - se.Vruntime)
	if delta < 0 {
		return
	}
	if uint64(delta) > idealRuntime {
		k.reschedCurr(c.rq)
	}
}

// checkPreemptWakeupCFS mirrors fair.c:check_preempt_wakeup (v6.0). The
// buddies' scale test reads the entities queued on curr's own cfs_rq
// (task_cfs_rq(curr)): its task group's on this CPU, the root's only for
// a task in the root group.
func (k *Kernel) checkPreemptWakeupCFS(rq *Rq, p *Task, wakeFlags int) {
	curr := rq.Curr
	se, pse := &curr.SE, &p.SE
	c := curr.SE.CfsRq
	scale := uint64(c.NrQueued) >= k.S.NrLatency
	nextBuddyMarked := false
	if se == pse {
		return
	}
	if k.S.NextBuddy && scale && wakeFlags&WFFork == 0 {
		k.setNextBuddy(pse)
		nextBuddyMarked = true
	}
	if rq.needResched {
		return
	}
	if curr.Policy == SchedIdle && p.Policy != SchedIdle {
		goto preempt
	}
	if p.Policy != SchedNormal || !k.S.WakeupPreemption {
		return
	}
	se, pse = findMatchingSE(se, pse)
	if seIsIdle(se) && !seIsIdle(pse) {
		goto preempt
	}
	if seIsIdle(se) != seIsIdle(pse) {
		return
	}
	k.updateCurr(cfsRqOf(se))
	if k.wakeupPreemptEntity(se, pse) == 1 {
		if !nextBuddyMarked {
			k.setNextBuddy(pse)
		}
		goto preempt
	}
	return
preempt:
	k.reschedCurr(rq)
	if !curr.SE.OnRq || curr.IsIdleTask() {
		return
	}
	if k.S.LastBuddy && scale && se.IsTask() {
		setLastBuddy(se)
	}
}

// taskForkFairCFS mirrors fair.c:task_fork_fair (v6.0): the child starts at
// the parent's vruntime, is placed with START_DEBIT, and is stored relative
// to min_vruntime until wake_up_new_task enqueues it.
func (k *Kernel) taskForkFairCFS(p *Task) {
	rq := k.Rqs[k.thisCPU]
	k.updateRqClock(rq)
	c := p.SE.CfsRq
	curr := c.Curr
	if curr != nil {
		k.updateCurr(c)
		p.SE.Vruntime = curr.Vruntime
	}
	k.placeEntityCFS(c, &p.SE, true)
	if k.S.ChildRunsFirst && curr != nil && k.entityBefore(curr, &p.SE) {
		curr.Vruntime, p.SE.Vruntime = p.SE.Vruntime, curr.Vruntime
		k.reschedCurr(rq)
	}
	p.SE.Vruntime -= c.ZeroVruntime
}
