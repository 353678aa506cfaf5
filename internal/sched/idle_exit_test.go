package sched

import (
	"github.com/schedlab/schedlab/internal/kernels"
	"testing"

	"github.com/schedlab/schedlab/internal/cpumask"
	"github.com/schedlab/schedlab/internal/engine"
)

// wakeTimes records when a task's sched_waking, sched_wakeup (its enqueue)
// and switch-in happened, and when it last switched out.
type wakeTimes struct {
	waking, wakeup, switchIn, switchOut engine.Time
}

func recordWakeTimes(k *Kernel, p *Task) *wakeTimes {
	w := &wakeTimes{}
	k.Hooks.Waking = func(t *Task) {
		if t == p {
			w.waking = k.Eng.Now()
		}
	}
	k.Hooks.Wakeup = func(t *Task, cpu cpumask.CPU) {
		if t == p {
			w.wakeup = k.Eng.Now()
		}
	}
	k.Hooks.Switch = func(cpu cpumask.CPU, prev *Task, _ TaskState, next *Task) {
		if next == p {
			w.switchIn = k.Eng.Now()
		}
		if prev == p {
			w.switchOut = k.Eng.Now()
		}
	}
	return w
}

// TestIdleExitTimerWakeup: a task sleeping 3 ms on CPU 2 of an otherwise
// idle HiKey cluster. The CPU is in cluster-sleep (the governor starts from
// a 1 s idle average, and the whole cluster is idle), whose exit takes
// 700 µs. The sleep's hrtimer interrupt is handled only once the CPU is out
// of that state, so sched_waking, the enqueue (sched_wakeup) and the switch
// all happen 700 µs after the timer expired, and the task was never on the
// runqueue without running: the wakeup adds nothing to PELT's runnable sum
// that it does not add to util.
// Reference: core.c:try_to_wake_up, pelt.c:__update_load_avg_se (v6.19);
// cpuidle's exit latency (Documentation/admin-guide/pm/cpuidle.rst).
func TestIdleExitTimerWakeup(t *testing.T) {
	k := newTestKernel(t, "hikey", kernels.V619)
	k.S.CpufreqGovernor = GovernorPerformance
	withCosts(t, k)
	p := forkNapper(t, k)
	w := recordWakeTimes(k, p)
	k.Eng.RunUntil(msAt(3))
	if w.switchOut == 0 {
		t.Fatal("napper did not sleep")
	}
	rq := k.Rqs[2]
	exitBefore := rq.Costs.IdleExitNs
	// The fork from outside any task woke CPU 2 with the child already
	// queued (as a remote wake_up_new_task does), so the first run left
	// runnable_sum above util_sum; from here on that gap may only decay.
	gap := p.SE.Avg.RunnableSum - uint64(p.SE.Avg.UtilSum)
	k.Eng.RunUntil(w.switchOut + 3*engine.Millisecond + 700*engine.Microsecond + 1)
	want := w.switchOut + 3*engine.Millisecond + 700*engine.Microsecond
	if w.waking != want || w.wakeup != want || w.switchIn != want {
		t.Errorf("slept at %v: waking %v, wakeup %v, switch-in %v; want all at %v (3 ms + the 700 µs exit)",
			w.switchOut, w.waking, w.wakeup, w.switchIn, want)
	}
	if d := rq.Costs.IdleExitNs - exitBefore; d != 700000 {
		t.Errorf("idle exit charged %d ns, want one 700 µs exit", d)
	}
	k.Eng.RunUntil(msAt(10))
	if a := p.SE.Avg; a.RunnableSum-uint64(a.UtilSum) > gap {
		t.Errorf("runnable_sum − util_sum grew from %d to %d: the woken task waited on the runqueue",
			gap, a.RunnableSum-uint64(a.UtilSum))
	}
}

// forkNapper forks a task pinned to CPU 2 that works 1 ms, sleeps 3 ms,
// then works 1 ms at a time.
func forkNapper(t *testing.T, k *Kernel) *Task {
	t.Helper()
	n := 0
	p, err := k.Fork(TaskSpec{Comm: "napper", CPU: 2, Allowed: cpumask.Of(k.NrCPUs(), 2), Prog: ProgramFunc(func(k *Kernel, t *Task) Op {
		if n++; n == 2 {
			return Sleep(3 * engine.Millisecond)
		}
		return Run(engine.Millisecond)
	})})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// msAt returns ms milliseconds.
func msAt(ms int) engine.Time { return engine.Time(ms) * engine.Millisecond }

// TestIdleExitRemoteWakeup: a waker on CPU 4 of a HiKey wakes a task
// blocked on CPU 5, in the same cluster (one LLC). CPU 5 is idle in
// cpu-sleep (cluster-sleep needs the whole cluster idle, and CPU 4 is
// busy), whose exit takes 250 µs; an IPI inside the cluster takes 2 µs.
//
//   - TTWU_QUEUE on (the default): ttwu_queue_cond accepts an idle target
//     in the waker's LLC, so the wakeup goes on CPU 5's wake list. The IPI
//     is handled after the exit, and sched_ttwu_pending enqueues the task
//     then: sched_wakeup and the switch at waking + 2 µs + 250 µs, and no
//     runnable-but-not-running time.
//   - TTWU_QUEUE off: the waker enqueues the task under CPU 5's rq lock at
//     once (sched_wakeup at the waking time) and sends the reschedule IPI;
//     the task is runnable, not running, for the 252 µs until CPU 5 has
//     left its state and switches to it.
//
// Reference: core.c:ttwu_queue_cond, ttwu_queue, sched_ttwu_pending (v6.19).
func TestIdleExitRemoteWakeup(t *testing.T) {
	for _, queue := range []bool{true, false} {
		k := newTestKernel(t, "hikey", kernels.V619)
		k.S.CpufreqGovernor = GovernorPerformance
		k.S.TTWUQueue = queue
		withCosts(t, k)
		n := 0
		sleeper, err := k.Fork(TaskSpec{Comm: "sleeper", CPU: 5, Allowed: cpumask.Of(8, 5), Prog: ProgramFunc(func(k *Kernel, t *Task) Op {
			if n++; n == 2 {
				return Block()
			}
			return Run(engine.Millisecond)
		})})
		if err != nil {
			t.Fatal(err)
		}
		m := 0
		if _, err := k.Fork(TaskSpec{Comm: "waker", CPU: 4, Allowed: cpumask.Of(8, 4), Prog: ProgramFunc(func(k *Kernel, t *Task) Op {
			if m++; m == 2 {
				k.WakeUp(sleeper, 0)
			}
			return Run(5 * engine.Millisecond)
		})}); err != nil {
			t.Fatal(err)
		}
		w := recordWakeTimes(k, sleeper)
		exitBefore := uint64(0)
		k.Eng.RunUntil(msAt(2))
		if sleeper.State != TaskInterruptible || !k.Rqs[5].Curr.IsIdleTask() {
			t.Fatal("sleeper is not blocked on an idle cpu5")
		}
		exitBefore = k.Rqs[5].Costs.IdleExitNs
		k.Eng.RunUntil(msAt(8))
		const lat = 2*engine.Microsecond + 250*engine.Microsecond
		wantWakeup := w.waking + lat
		if !queue {
			wantWakeup = w.waking
		}
		if w.waking == 0 || w.wakeup != wantWakeup || w.switchIn != w.waking+lat {
			t.Errorf("TTWU_QUEUE=%v: waking %v, wakeup %v, switch-in %v; want wakeup %v, switch-in %v",
				queue, w.waking, w.wakeup, w.switchIn, wantWakeup, w.waking+lat)
		}
		if d := k.Rqs[5].Costs.IdleExitNs - exitBefore; d != 250000 {
			t.Errorf("TTWU_QUEUE=%v: idle exit charged %d ns, want one 250 µs exit", queue, d)
		}
	}
}
