package sched

import (
	"testing"

	"github.com/schedlab/schedlab/internal/costmodel"
	"github.com/schedlab/schedlab/internal/cpumask"
	"github.com/schedlab/schedlab/internal/engine"
)

func withCosts(t *testing.T, k *Kernel) {
	t.Helper()
	p, err := costmodel.For(k.Topo.Spec)
	if err != nil {
		t.Fatal(err)
	}
	k.S.CostJitterPct = 0
	k.ApplyCosts(costmodel.Compile(p, k.Topo.Spec))
}

// TestSchedutilFollowsUtilisation: on a HiKey (one frequency domain of 8
// CPUs, schedutil by default on arm64) an idle machine sits at the minimum
// frequency; a CPU hog drives the domain to the maximum, since schedutil
// asks for max(util)·1.25 of the capacity; the hog's 10 ms of work takes
// longer than 10 ms (it starts slow) but less than at the minimum
// frequency throughout. With the performance governor the hog runs at the
// maximum from the start.
// Reference: cpufreq_schedutil.c:sugov_update_shared, get_next_freq,
// map_util_perf (v6.19).
func TestSchedutilFollowsUtilisation(t *testing.T) {
	k := newTestKernel(t, "hikey", KernelV619)
	withCosts(t, k)
	min := uint64(SchedCapacityScale * MinFreqPct / 100)
	for _, rq := range k.Rqs {
		if rq.FreqScale != min {
			t.Fatalf("cpu%d starts at %d/1024, want the minimum %d", rq.CPU, rq.FreqScale, min)
		}
	}
	p := runOnce(t, k, "hog", 0, Run(10*engine.Millisecond), 0)
	// A longer hog keeps the domain busy after the first one exits.
	runOnce(t, k, "long", 1, Run(300*engine.Millisecond), 0)
	k.Eng.RunUntil(200 * engine.Millisecond)
	if got := k.Rqs[5].FreqScale; got != SchedCapacityScale {
		t.Errorf("with a CPU hog, the domain runs at %d/1024, want 1024", got)
	}
	if k.FreqChanges == 0 {
		t.Error("no frequency change")
	}
	if p.Exited <= 10*engine.Millisecond || p.Exited >= 50*engine.Millisecond {
		t.Errorf("10 ms of work done at %v: want slower than at full speed, faster than at 20%%", p.Exited)
	}

	k2 := newTestKernel(t, "hikey", KernelV619)
	k2.S.CpufreqGovernor = GovernorPerformance
	withCosts(t, k2)
	p2 := runOnce(t, k2, "hog", 0, Run(10*engine.Millisecond), 0)
	k2.Eng.RunUntil(100 * engine.Millisecond)
	if k2.Rqs[0].FreqScale != SchedCapacityScale || k2.FreqChanges != 0 {
		t.Errorf("performance governor: scale %d, %d changes", k2.Rqs[0].FreqScale, k2.FreqChanges)
	}
	if p.Exited <= p2.Exited {
		t.Errorf("schedutil finished at %v, performance at %v", p.Exited, p2.Exited)
	}
	// Context switch and idle-exit costs are charged, so the performance
	// run ends a little after 10 ms.
	if p2.Exited < 10*engine.Millisecond || p2.Exited > 11*engine.Millisecond {
		t.Errorf("performance governor: 10 ms of work done at %v", p2.Exited)
	}
}

// TestSchedutilShortDutyCycle: a task that runs 1 ms every 4 ms keeps its
// CPU's utilisation near a quarter, so schedutil settles well below the
// maximum frequency (util·1.25/1024 of it, as the task's own util grows
// while it runs slower), and never below the minimum.
func TestSchedutilShortDutyCycle(t *testing.T) {
	k := newTestKernel(t, "hikey", KernelV619)
	withCosts(t, k)
	k.Fork(TaskSpec{Comm: "duty", CPU: 2, Allowed: cpumask.Of(8, 2), Prog: loop(engine.Millisecond, 3*engine.Millisecond)})
	k.Eng.RunUntil(2 * engine.Second)
	s := k.Rqs[2].FreqScale
	if s >= SchedCapacityScale || s <= SchedCapacityScale*MinFreqPct/100 {
		t.Fatalf("settled at %d/1024", s)
	}
	t.Logf("1 ms every 4 ms: frequency %d/1024, util %d", s, k.Rqs[2].CFS.Avg.UtilAvg)
}
