package sched

import "fmt"

// Task groups: cgroup v2 directories with cpu.weight, and moving a task
// between them (core.c:sched_move_task).

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
	k.setShares(tg, scaleLoad(w))
	return nil
}

// SetGroupShares mirrors a write of cgroup v1's cpu.shares (v6.19; the
// same in v6.0 and v5.12): cpu_shares_write_u64 → sched_group_set_shares
// with scale_load(shares), clamped to MIN_SHARES..MAX_SHARES (2..2^18).
// Android's cpuctl hierarchy is cgroup v1 (its init.rc writes cpu.shares).
// tg.Weight becomes what cgroup v2's cpu.weight would read
// (cpu_weight_read_u64: DIV_ROUND_CLOSEST(shares*100, 1024), at least 1).
func (k *Kernel) SetGroupShares(tg *TaskGroup, shares uint64) error {
	if tg.IsRoot() {
		return fmt.Errorf("the root cgroup has no cpu.shares")
	}
	s := min(max(shares, 2), 1<<18)
	tg.Weight = max(int((s*100+512)/1024), 1)
	k.setShares(tg, scaleLoad(s))
	return nil
}

// setShares mirrors __sched_group_set_shares (v6.19): the clamp, then
// every CPU's group entity re-weighted from its updated load average.
func (k *Kernel) setShares(tg *TaskGroup, shares uint64) {
	if shares < scaleLoad(2) {
		shares = scaleLoad(2)
	}
	if shares > scaleLoad(1<<18) {
		shares = scaleLoad(1 << 18)
	}
	if tg.Shares == shares {
		return
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
