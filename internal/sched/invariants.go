package sched

import (
	"fmt"

	"github.com/schedlab/schedlab/internal/engine"
)

// CheckInvariants recomputes what the kernel model keeps incrementally and
// panics on a mismatch: nr_running, the queues' counts and weights,
// sum_w_vruntime/sum_weight, tree order, and the PELT relations that must
// hold exactly. Under the invariants build tag it runs after every event.
func (k *Kernel) CheckInvariants() {
	k.invariantsChecked++
	k.checkCores()
	for _, rq := range k.Rqs {
		nr := 0
		for _, tg := range k.TGs {
			c := tg.CfsRq[rq.CPU]
			k.checkCfsRq(c)
		}
		for _, t := range k.Tasks {
			if t.cpu == rq.CPU && t.OnRq == taskOnRqQueued {
				nr++
			}
		}
		if nr != rq.NrRunning {
			panic(fmt.Sprintf("sched: invariant: cpu%d nr_running %d, %d tasks queued", rq.CPU, rq.NrRunning, nr))
		}
		if rq.CFS.HNrQueued != rq.NrRunning {
			panic(fmt.Sprintf("sched: invariant: cpu%d cfs.h_nr_queued %d != nr_running %d", rq.CPU, rq.CFS.HNrQueued, rq.NrRunning))
		}
		n := 0
		var last *SchedEntity
		for se := rq.cfsTasksHead; se != nil; se = se.groupNext {
			n++
			if !se.OnRq {
				panic(fmt.Sprintf("sched: invariant: cpu%d cfs_tasks holds a dequeued task %d", rq.CPU, se.task.PID))
			}
			if se.groupPrev != last {
				panic(fmt.Sprintf("sched: invariant: cpu%d cfs_tasks links broken at task %d", rq.CPU, se.task.PID))
			}
			last = se
		}
		if rq.cfsTasksTail != last {
			panic(fmt.Sprintf("sched: invariant: cpu%d cfs_tasks tail is not the last task", rq.CPU))
		}
		if n != rq.NrRunning {
			panic(fmt.Sprintf("sched: invariant: cpu%d cfs_tasks has %d tasks, nr_running %d", rq.CPU, n, rq.NrRunning))
		}
		if rq.Curr != rq.Idle && rq.Curr.OnRq == 0 && rq.Curr.State != TaskDead {
			panic(fmt.Sprintf("sched: invariant: cpu%d runs task %d that is not queued", rq.CPU, rq.Curr.PID))
		}
		if rq.Curr == rq.Idle && rq.CFS.Curr != nil {
			panic(fmt.Sprintf("sched: invariant: cpu%d is idle but cfs.curr is set", rq.CPU))
		}
		k.checkSleepers(rq)
	}
}

func (k *Kernel) checkCfsRq(c *CfsRq) {
	var weight uint64
	queued := 0
	hQueued, hRunnable := 0, 0
	var sumW int64
	var sumWeight uint64
	all := c.timelineEntities()
	k.checkTree(c)
	for i, se := range all {
		if se == c.Curr {
			panic("sched: invariant: curr is in the tree")
		}
		if !se.OnRq {
			panic("sched: invariant: dequeued entity in the tree")
		}
		if i > 0 && k.entityBefore(se, all[i-1]) {
			panic("sched: invariant: tree out of order")
		}
		sumW += entityKey(c, se) * int64(seWeight(se))
		sumWeight += seWeight(se)
	}
	ents := c.Entities()
	idleQueued := 0
	for _, se := range ents {
		weight += se.Load.Weight
		queued++
		if seIsIdle(se) {
			idleQueued++
		}
		if se.IsTask() {
			hQueued++
			if !se.SchedDelayed {
				hRunnable++
			}
		} else {
			hQueued += se.MyQ.HNrQueued
			hRunnable += se.MyQ.HNrRunnable
		}
	}
	where := fmt.Sprintf("cpu%d cfs_rq %s", c.rq.CPU, c.tg.Name)
	if weight != c.Load.Weight {
		panic(fmt.Sprintf("sched: invariant: %s load.weight %d, entities sum to %d", where, c.Load.Weight, weight))
	}
	if queued != c.NrQueued {
		panic(fmt.Sprintf("sched: invariant: %s nr_queued %d, %d entities", where, c.NrQueued, queued))
	}
	if idleQueued != int(c.IdleNrQueued) {
		panic(fmt.Sprintf("sched: invariant: %s idle_nr_running %d, %d idle entities", where, c.IdleNrQueued, idleQueued))
	}
	if hQueued != c.HNrQueued || hRunnable != c.HNrRunnable {
		panic(fmt.Sprintf("sched: invariant: %s h_nr_queued/h_nr_runnable %d/%d, recomputed %d/%d", where, c.HNrQueued, c.HNrRunnable, hQueued, hRunnable))
	}
	if k.S.EEVDF && (sumW != c.SumWVruntime || sumWeight != c.SumWeight) {
		panic(fmt.Sprintf("sched: invariant: %s sum_w_vruntime/sum_weight %d/%d, recomputed %d/%d", where, c.SumWVruntime, c.SumWeight, sumW, sumWeight))
	}
	// PELT: the relations the kernel maintains between sums and averages.
	// A queue's average is its sum over a divider of at most LOAD_AVG_MAX,
	// so the sum is at least avg × PELT_MIN_DIVIDER (the kernel enforces
	// it after every subtraction, with a 32-bit truncation that we
	// respect), and no signal can exceed what every task at full weight
	// could produce.
	if uint64(c.Avg.UtilSum) < c.Avg.UtilAvg*PeltMinDivider && c.Avg.UtilAvg*PeltMinDivider < 1<<32 {
		panic(fmt.Sprintf("sched: invariant: %s util_sum %d below util_avg %d × PELT_MIN_DIVIDER", where, c.Avg.UtilSum, c.Avg.UtilAvg))
	}
	if c.Avg.PeriodContrib >= 1024 {
		panic(fmt.Sprintf("sched: invariant: %s period_contrib %d", where, c.Avg.PeriodContrib))
	}
	if c.Avg.UtilAvg > SchedCapacityScale*uint64(len(k.Tasks)+1) {
		panic(fmt.Sprintf("sched: invariant: %s util_avg %d impossible", where, c.Avg.UtilAvg))
	}
	for _, se := range ents {
		if !se.IsTask() {
			continue
		}
		a := &se.Avg
		if a.UtilAvg > SchedCapacityScale || a.RunnableAvg > SchedCapacityScale || a.LoadAvg > seWeight(se) {
			panic(fmt.Sprintf("sched: invariant: %s task %d PELT out of range: %s", where, se.task.PID, fmtAvgShort(a)))
		}
		if a.PeriodContrib >= 1024 || a.LastUpdateTime == 0 {
			panic(fmt.Sprintf("sched: invariant: %s queued task %d has no PELT window (%s)", where, se.task.PID, fmtAvgShort(a)))
		}
	}
}

func fmtAvgShort(a *SchedAvg) string {
	return fmt.Sprintf("load %d runnable %d util %d lut %d contrib %d", a.LoadAvg, a.RunnableAvg, a.UtilAvg, a.LastUpdateTime, a.PeriodContrib)
}

// checkCores recomputes the busy CPUs of every SMT core.
func (k *Kernel) checkCores() {
	busy := make([]int32, len(k.coreBusy))
	for c, rq := range k.Rqs {
		if !rq.Curr.IsIdleTask() {
			busy[k.coreOf[c]]++
		}
	}
	for i := range busy {
		if busy[i] != k.coreBusy[i] {
			panic(fmt.Sprintf("sched: invariant: core %d has %d busy CPUs, counted %d", i, busy[i], k.coreBusy[i]))
		}
	}
}

// checkTree checks tasks_timeline against its definition: parent links,
// the red-black rules (a black root, no red node with a red child, the
// same number of black nodes on every path), the cached leftmost entity,
// the count, and each node's min_vruntime, min_slice and max_slice
// recomputed from its subtree.
func (k *Kernel) checkTree(c *CfsRq) {
	where := fmt.Sprintf("cpu%d cfs_rq %s", c.rq.CPU, c.tg.Name)
	if rbIsRed(c.rbRoot) || (c.rbRoot != nil && c.rbRoot.rbParent != nil) {
		panic("sched: invariant: " + where + " tree root is red or has a parent")
	}
	n := 0
	var walk func(se *SchedEntity) (blacks int, minV, minS, maxS uint64)
	walk = func(se *SchedEntity) (int, uint64, uint64, uint64) {
		n++
		if !se.onTimeline {
			panic("sched: invariant: " + where + " tree node not marked onTimeline")
		}
		minV, minS, maxS := se.Vruntime, se.Slice, se.Slice
		blacks := -1
		for _, ch := range [2]*SchedEntity{se.rbLeft, se.rbRight} {
			b := 0
			if ch != nil {
				if ch.rbParent != se {
					panic("sched: invariant: " + where + " tree parent link broken")
				}
				if se.rbRed && ch.rbRed {
					panic("sched: invariant: " + where + " red node with a red child")
				}
				var v, mn, mx uint64
				b, v, mn, mx = walk(ch)
				if int64(minV-v) > 0 {
					minV = v
				}
				minS, maxS = min(minS, mn), max(maxS, mx)
			}
			if blacks >= 0 && b != blacks {
				panic("sched: invariant: " + where + " tree black heights differ")
			}
			blacks = b
		}
		if minV != se.minVruntime || minS != se.minSlice || maxS != se.maxSlice {
			panic(fmt.Sprintf("sched: invariant: %s augmented values %d/%d/%d, recomputed %d/%d/%d", where, se.minVruntime, se.minSlice, se.maxSlice, minV, minS, maxS))
		}
		if !se.rbRed {
			blacks++
		}
		return blacks, minV, minS, maxS
	}
	if c.rbRoot != nil {
		walk(c.rbRoot)
	}
	if n != c.nrTimeline {
		panic(fmt.Sprintf("sched: invariant: %s tree holds %d entities, nr %d", where, n, c.nrTimeline))
	}
	first := c.rbRoot
	for first != nil && first.rbLeft != nil {
		first = first.rbLeft
	}
	if first != c.rbLeftmost {
		panic("sched: invariant: " + where + " cached leftmost is not the first entity")
	}
}

// checkPickEEVDF checks __pick_eevdf's heap search against the scan it
// replaced: the first eligible entity in tree order.
func (k *Kernel) checkPickEEVDF(c *CfsRq, best *SchedEntity) {
	var scan *SchedEntity
	for se := c.rbLeftmost; se != nil; se = rbNext(se) {
		if entityEligible(c, se) {
			scan = se
			break
		}
	}
	if scan != best {
		panic(fmt.Sprintf("sched: invariant: cpu%d cfs_rq %s heap search picked another entity than the first eligible", c.rq.CPU, c.tg.Name))
	}
}

// checkSleepers checks rq.sleepers' links and nextSleepTimer against the
// scan of every task it replaced.
func (k *Kernel) checkSleepers(rq *Rq) {
	for i, t := range rq.sleepers {
		if !t.sleepListed || t.sleepIdx != i || t.sleepCPU != rq.CPU {
			panic(fmt.Sprintf("sched: invariant: cpu%d sleepers[%d] is task %d, listed %v at %d on cpu%d", rq.CPU, i, t.PID, t.sleepListed, t.sleepIdx, t.sleepCPU))
		}
	}
	var want engine.Time
	wantOK := false
	for _, t := range k.Tasks {
		if t.sleepCPU == rq.CPU && t.sleepTimer.Armed() && (!wantOK || t.sleepTimer.When() < want) {
			want, wantOK = t.sleepTimer.When(), true
		}
	}
	if got, ok := k.nextSleepTimer(rq.CPU); got != want || ok != wantOK {
		panic(fmt.Sprintf("sched: invariant: cpu%d next sleep timer %v/%v, scan says %v/%v", rq.CPU, got, ok, want, wantOK))
	}
}
