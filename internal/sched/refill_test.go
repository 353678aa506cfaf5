package sched

import (
	"testing"

	"github.com/schedlab/schedlab/internal/costmodel"
	"github.com/schedlab/schedlab/internal/cpumask"
	"github.com/schedlab/schedlab/internal/engine"
	"github.com/schedlab/schedlab/internal/kernels"
)

// TestTaskStateRefill: a task with no declared footprint still refills
// its own kernel state (task_state_bytes) when it resumes on another CPU.
//
// Reference: the cost model's CacheRefill (docs/costs.md, "Cache
// refill"), whose formula costmodel's oracle tests check; here only that
// the kernel model charges it with the task's state added to its
// footprint, at the switch-in after a move.
//
// On zen3-2s-nps1, a task with footprint 0 runs 100 µs on CPU 0 and
// sleeps; it is then allowed only CPU 8 (another CCX) and woken at 1 ms.
// Its switch-in on CPU 8, after the IPI and CPU 8's wake from C2, refills
// CacheRefill(0, 8, 4096, away) for the time it was away (about 0.9 ms,
// in which other work would have evicted a quarter of its lines from the
// old LLC): about 0.3 µs, most of it at 13 GB/s from the other CCX. CPU
// 8's refill counter says exactly that (no cost spread); with
// task_state_bytes 0 it refills nothing.
func TestTaskStateRefill(t *testing.T) {
	for _, state := range []int64{4096, 0} {
		s := MustBaseline(kernels.V619)
		s.CostJitterPct = 0
		k := newRigSettings(t, "zen3-2s-nps1", s).k
		p, ok := costmodel.Defaults("zen3-2s-nps1")
		if !ok {
			t.Fatal("no zen3 costs")
		}
		if p.TaskState != 4096 {
			t.Fatalf("zen3's task_state_bytes %d, want 4096", p.TaskState)
		}
		p.TaskState = state
		k.ApplyCosts(costmodel.Compile(p, k.Topo.Spec))
		n := 0
		task := lbFork(t, k, "t", 0, cpumask.Of(k.NrCPUs(), 0), ProgramFunc(func(k *Kernel, t *Task) Op {
			n++
			if n == 1 {
				return Run(100 * engine.Microsecond)
			}
			return Block()
		}))
		k.Eng.RunUntil(engine.Millisecond)
		if task.OnRq != 0 || n != 2 {
			t.Fatalf("the task did not run and block (program called %d times)", n)
		}
		stopped := task.lastStopped
		task.CPUsAllowed = cpumask.Of(k.NrCPUs(), 8)
		task.NrCPUsAllowed = 1
		before := k.Rqs[8].Costs.RefillNs
		var in engine.Time
		k.Hooks.Switch = func(cpu cpumask.CPU, prev *Task, _ TaskState, next *Task) {
			if next == task && cpu == 8 {
				in = k.Now()
			}
		}
		if !k.TimerWakeUp(0, task) {
			t.Fatalf("task not asleep: state %v on_rq %d", task.State, task.OnRq)
		}
		k.Eng.RunUntil(2 * engine.Millisecond)
		if task.lastRanCPU != 8 {
			t.Fatalf("the task ran on CPU %d, want 8", task.lastRanCPU)
		}
		got := engine.Time(k.Rqs[8].Costs.RefillNs - before)
		// The switch-in comes after the IPI and CPU 8's idle exit: away is
		// measured up to it.
		away := in - stopped
		want := k.Costs.CacheRefill(0, 8, state, away, task.homeNode)
		if got != want || (state > 0) != (got > 200) {
			t.Errorf("task_state_bytes %d: refill on CPU 8 %v after %v away, want %v", state, got, away, want)
		}
	}
}
