package trace

import (
	"fmt"
	"math/rand"
)

// synthEvents builds a consistent synthetic event stream of about n events
// on ncpu CPUs: each CPU runs one task at a time (or idles), sched_switch
// pairs line up, woken tasks are queued on a CPU and later switched in,
// tasks fork and exit, and now and then the machine goes quiet for longer
// than 2^27 ns so that trace.dat needs TIME_EXTEND records. Timestamps start
// at 10 s (so every tool prints them as seconds) and strictly increase.
func synthEvents(n int, seed int64, ncpu int) []Event {
	rng := rand.New(rand.NewSource(seed))
	comms := []string{"hackbench", "schbench-worker", "kworker/0:1-ev", "sh", "a", "rcu_preempt", "tbench_srv", "x-y-z"}
	type task struct {
		t        Task
		cpu      int32 // last CPU
		sleeping bool
		queued   bool
		dead     bool
	}
	var tasks []*task
	nextPid := int32(100)
	newTask := func(cpu int32) *task {
		c := comms[int(nextPid)%len(comms)]
		tk := &task{t: Task{Comm: MakeComm(c), Pid: nextPid, Prio: 120 - int32(rng.Intn(3))*5}, cpu: cpu, sleeping: true}
		nextPid++
		tasks = append(tasks, tk)
		return tk
	}
	for i := 0; i < 3*ncpu; i++ {
		newTask(int32(i % ncpu))
	}
	curr := make([]*task, ncpu) // nil = idle
	rq := make([][]*task, ncpu)
	idle := func(cpu int32) Task {
		return Task{Comm: MakeComm(fmt.Sprintf("swapper/%d", cpu)), Pid: 0, Prio: 120}
	}
	cur := func(cpu int32) Task {
		if curr[cpu] == nil {
			return idle(cpu)
		}
		return curr[cpu].t
	}
	var evs []Event
	ts := uint64(10_000_000_000) + uint64(rng.Intn(1000))
	emit := func(ev Event) {
		ev.TS = ts
		ts += 1 + uint64(rng.Intn(50))
		evs = append(evs, ev)
	}
	switchTo := func(cpu int32, state TaskState) {
		prev := cur(cpu)
		var next *task
		if len(rq[cpu]) > 0 {
			next = rq[cpu][0]
			rq[cpu] = rq[cpu][1:]
			next.queued = false
		}
		nt := idle(cpu)
		if next != nil {
			nt = next.t
			next.cpu = cpu
		}
		if prev.Pid == nt.Pid {
			return
		}
		ev := Switch(0, cpu, prev, state, nt)
		if rng.Intn(10) == 0 {
			ev.Flags |= FlagNeedResched | FlagPreemptResched
		}
		emit(ev)
		curr[cpu] = next
	}
	for len(evs) < n {
		if rng.Intn(200) == 0 {
			ts += 150_000_000 + uint64(rng.Int63n(3_000_000_000))
		} else {
			ts += 1000 + uint64(rng.Intn(2_000_000))
		}
		cpu := int32(rng.Intn(ncpu))
		c := curr[cpu]
		switch r := rng.Intn(100); {
		case c == nil:
			if len(rq[cpu]) > 0 {
				switchTo(cpu, TaskRunning)
				continue
			}
			fallthrough
		case r < 45:
			// Wake a sleeping task; place it on a random CPU.
			var sl []*task
			for _, tk := range tasks {
				if tk.sleeping && !tk.dead {
					sl = append(sl, tk)
				}
			}
			if len(sl) == 0 {
				continue
			}
			w := sl[rng.Intn(len(sl))]
			emit(Waking(0, cpu, cur(cpu), w.t, w.cpu))
			dest := int32(rng.Intn(ncpu))
			if dest != w.cpu {
				emit(MigrateTask(0, cpu, cur(cpu), w.t, w.cpu, dest))
				w.cpu = dest
			}
			emit(Wakeup(0, cpu, cur(cpu), w.t, dest))
			w.sleeping = false
			w.queued = true
			rq[dest] = append(rq[dest], w)
		case r < 75:
			// The current task blocks.
			c.sleeping = true
			st := TaskInterruptible
			if rng.Intn(4) == 0 {
				st = TaskUninterruptible
			}
			switchTo(cpu, st)
		case r < 90:
			// Preemption if someone waits.
			if len(rq[cpu]) > 0 {
				rq[cpu] = append(rq[cpu], c)
				c.queued = true
				switchTo(cpu, Preempted)
			}
		case r < 96:
			// Fork.
			child := newTask(cpu)
			child.t.Comm = c.t.Comm
			emit(ProcessFork(0, cpu, c.t, child.t))
			emit(WakeupNew(0, cpu, c.t, child.t, cpu))
			child.sleeping = false
			child.queued = true
			rq[cpu] = append(rq[cpu], child)
		default:
			// Exit.
			emit(ProcessExit(0, cpu, c.t, rng.Intn(2) == 0))
			c.dead = true
			switchTo(cpu, ExitDead)
		}
	}
	return evs
}
