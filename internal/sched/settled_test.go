package sched

import (
	"testing"

	"github.com/schedlab/schedlab/internal/cpumask"
	"github.com/schedlab/schedlab/internal/engine"
	"github.com/schedlab/schedlab/internal/kernels"
)

// TestSettledFork: a task created with TaskSpec.Settled is a long-lived
// thread found asleep: not woken as a new task, its program not run until
// something wakes it, its PELT averages zero. An ordinary new task starts
// with init_entity_runnable_average's load (its weight) and
// post_init_entity_util_avg's utilisation, half the spare capacity of an
// empty CPU (1024 / 2 = 512), which stays in its CPU's blocked
// utilisation after it sleeps.
//
// Reference: core.c:wake_up_new_task, fair.c:init_entity_runnable_average
// and post_init_entity_util_avg (v6.19).
//
// On idle zen3 CPUs: an ordinary task on CPU 1 and a settled one on CPU 2
// that both block at their first run; a settled one on CPU 3 in a timed
// sleep of 5 ms. At 1 ms CPU 1's root cfs_rq has util_avg above 500 and
// load_avg above 1000 (1024 decayed by 1 ms: × 0.9786 ≈ 1002), CPU 2 has
// not run its task and its averages are zero; woken then from a timer on
// CPU 2, the settled task runs its program once and CPU 2's utilisation
// stays under 1%. The CPU 3 task wakes at 5 ms exactly.
func TestSettledFork(t *testing.T) {
	k := newRigSettings(t, "zen3-2s-nps1", MustBaseline(kernels.V619)).k
	calls := map[string]int{}
	block := func(name string) Program {
		return ProgramFunc(func(k *Kernel, t *Task) Op { calls[name]++; return Block() })
	}
	fork := func(name string, cpu int, settled bool, sleep engine.Time) *Task {
		p, err := k.Fork(TaskSpec{Comm: name, CPU: cpumask.CPU(cpu), Allowed: cpumask.Of(k.NrCPUs(), cpumask.CPU(cpu)),
			Prog: block(name), Settled: settled, SleepFor: sleep})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	fork("new", 1, false, 0)
	settled := fork("settled", 2, true, 0)
	fork("sleeper", 3, true, 5*engine.Millisecond)
	var woke engine.Time
	k.Hooks.Wakeup = func(p *Task, cpu cpumask.CPU) {
		if p.Comm == "sleeper" {
			woke = k.Now()
		}
	}
	k.Eng.RunUntil(engine.Millisecond)
	for _, cpu := range []int{1, 2} {
		k.SchedBalanceUpdateBlockedAverages(cpumask.CPU(cpu))
	}
	if a := k.Rqs[1].CFS.Avg; a.UtilAvg < 500 || a.LoadAvg < 1000 {
		t.Errorf("ordinary new task's CPU: util_avg %d, load_avg %d; want above 500 and 1000", a.UtilAvg, a.LoadAvg)
	}
	if a := k.Rqs[2].CFS.Avg; a.UtilAvg != 0 || a.LoadAvg != 0 || calls["settled"] != 0 || settled.OnRq != 0 {
		t.Errorf("settled task's CPU: util_avg %d, load_avg %d, program called %d times, on_rq %d; want 0, 0, 0, 0",
			a.UtilAvg, a.LoadAvg, calls["settled"], settled.OnRq)
	}
	if !k.TimerWakeUp(2, settled) {
		t.Fatal("the settled task was not asleep")
	}
	k.Eng.RunUntil(2 * engine.Millisecond)
	k.SchedBalanceUpdateBlockedAverages(2)
	if a := k.Rqs[2].CFS.Avg; calls["settled"] != 1 || a.UtilAvg > 10 {
		t.Errorf("after its wakeup: program called %d times, CPU 2 util_avg %d; want 1 and under 10", calls["settled"], a.UtilAvg)
	}
	k.Eng.RunUntil(6 * engine.Millisecond)
	if woke != 5*engine.Millisecond || calls["sleeper"] != 1 {
		t.Errorf("timed settled task woke at %v, program called %d times; want 5ms and once", woke, calls["sleeper"])
	}
}
