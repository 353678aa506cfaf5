package replay_test

import (
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/schedlab/schedlab/internal/replay"
	"github.com/schedlab/schedlab/internal/sim"
	"github.com/schedlab/schedlab/internal/topology"
)

// why runs the replay of cfg and returns its breakdown.
func why(t *testing.T, cfg sim.Config) (*replay.Bench, *replay.Why, *sim.Result) {
	t.Helper()
	cfg.Tool, cfg.Seed = "replay", 1
	b, err := sim.Build(cfg)
	if err != nil {
		t.Fatal(err)
	}
	res, err := b.Run(sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rb := b.Instance.(*replay.Bench)
	w, err := rb.Why()
	if err != nil {
		t.Fatal(err)
	}
	return rb, w, res
}

// near fails unless got is within tol ns of want.
func near(t *testing.T, what string, got, want, tol float64) {
	t.Helper()
	if math.Abs(got-want) > tol {
		t.Errorf("%s = %.3f ns, want %.3f ± %.0f", what, got, want, tol)
	}
}

// addsUp checks that each row's parts and remainder add up to its
// difference, and that the total is the sum of the rows.
func addsUp(t *testing.T, w *replay.Why) {
	t.Helper()
	var total replay.RuntimeWhy
	for _, r := range append(w.Runtime, w.RuntimeTotal) {
		parts := r.Edges + r.Recording + r.Frequency + r.Capacity + r.SMT + r.KernelCosts() + r.Remainder
		near(t, r.Name+": runtime parts", parts, r.Diff, 1e-3)
		near(t, r.Name+": difference", r.Diff, r.Replayed-r.Recorded, 1e-3)
		if r.Name != "TOTAL:" {
			total.Diff += r.Diff
		}
	}
	near(t, "sum of the rows", total.Diff, w.RuntimeTotal.Diff, 1e-3)
	for _, d := range append(w.Delay, w.DelayTotal) {
		near(t, d.Name+": delay parts", d.RunQueue+d.IdleExit+d.IPI+d.Balance+d.Remainder, d.Diff, 1e-3)
	}
}

// Capacity alone, where the answer is known: one task pinned to CPU 0,
// 3 ms of recorded runtime, replayed without the cost model (no cpufreq,
// no kernel costs) on a HiKey960, whose CPU 0 is an A53 of capacity 592:
// it runs 3 ms × 1024/592, and the whole difference, 3 ms × (1024/592 −
// 1), is capacity. Recorded on that CPU (--recorded-on hikey960) and
// replayed on a HiKey (capacity 1024 everywhere), it is the recording's
// capacity instead: 3 ms × 592/1024 of work, 3 ms × (592/1024 − 1).
func TestWhyCapacity(t *testing.T) {
	path := filepath.Join("testdata", "why-capacity.txt")
	const rec = 3e6
	_, w, _ := why(t, sim.Config{Machine: "hikey960", Args: []string{path}, NoCosts: true})
	addsUp(t, w)
	r := w.RuntimeTotal
	near(t, "recorded runtime", r.Recorded, rec, 0)
	near(t, "capacity", r.Capacity, rec*(1024.0/592-1), 2) // timeForWork rounds up by < 1 ns a segment
	near(t, "difference", r.Diff, rec*(1024.0/592-1), 2)
	for name, x := range map[string]float64{"edges": r.Edges, "recording": r.Recording, "frequency": r.Frequency, "SMT": r.SMT, "kernel": r.KernelCosts(), "remainder": r.Remainder} {
		near(t, name, x, 0, 2)
	}

	_, w, _ = why(t, sim.Config{Machine: "hikey", Args: []string{"--recorded-on", "hikey960", path}, NoCosts: true})
	addsUp(t, w)
	r = w.RuntimeTotal
	near(t, "recording", r.Recording, rec*(592.0/1024-1), 0)
	near(t, "difference", r.Diff, rec*(592.0/1024-1), 2)
	near(t, "capacity on a HiKey", r.Capacity, 0, 0)
}

// Frequency and kernel costs: the same task on a HiKey with the cost
// model. Under the performance governor the CPU runs at its highest
// frequency, so no part of the difference is frequency and what is left is
// the kernel's costs (context switches, cache refills). Under schedutil
// (HiKey's governor) the task starts an idle machine at the lowest
// frequency and the difference is mostly frequency. In both, the work the
// replay's time does at the CPUs' capacity and frequency is the work its
// program and the kernel asked for (SMT, which a HiKey has not, stays
// zero): the frequency the breakdown follows is the one the kernel ran at.
func TestWhyFrequency(t *testing.T) {
	path := filepath.Join("testdata", "why-capacity.txt")
	perf := []string{"model_cpufreq_governor=performance", "model_cost_jitter_pct=0"}
	_, w, _ := why(t, sim.Config{Machine: "hikey", Args: []string{path}, Sysctls: perf})
	addsUp(t, w)
	r := w.RuntimeTotal
	near(t, "frequency (performance)", r.Frequency, 0, 0)
	near(t, "SMT", r.SMT, 0, 2)
	if r.KernelCosts() <= 0 || math.Abs(r.Diff-r.KernelCosts()) > 2 {
		t.Errorf("performance: difference %.0f ns, kernel costs %.0f ns: want the difference all kernel costs", r.Diff, r.KernelCosts())
	}
	_, w, _ = why(t, sim.Config{Machine: "hikey", Args: []string{path}, Sysctls: perf[1:]})
	addsUp(t, w)
	r = w.RuntimeTotal
	near(t, "SMT", r.SMT, 0, 2)
	if r.Frequency < 0.5*r.Diff || w.MeanFreq >= 1 {
		t.Errorf("schedutil: frequency %.0f ns of a %.0f ns difference, mean frequency %.3f", r.Frequency, r.Diff, w.MeanFreq)
	}
}

// The real trace on a HiKey (schedutil): the replayed runtime is about
// five times the recorded, and the breakdown says why: the replay's
// sparse load keeps schedutil low (mean frequency under half the
// highest), and frequency is almost all of the difference; each task's
// parts add up, with a remainder and an SMT part of at most a microsecond.
// The printed TOTAL row is the side-by-side table's.
func TestWhyReal(t *testing.T) {
	_, w, res := why(t, sim.Config{Machine: "hikey", Args: []string{"--pids", realTracePath(t)}})
	addsUp(t, w)
	for _, r := range append(w.Runtime, w.RuntimeTotal) {
		if math.Abs(r.Remainder) > 1000 || math.Abs(r.SMT) > 1000 {
			t.Errorf("%s: remainder %.0f ns, SMT %.0f ns", r.Name, r.Remainder, r.SMT)
		}
	}
	r := w.RuntimeTotal
	if r.Frequency < 0.9*r.Diff || w.MeanFreq > 0.5 {
		t.Errorf("frequency %.3f ms of %.3f ms, mean frequency %.3f", r.Frequency/1e6, r.Diff/1e6, w.MeanFreq)
	}
	if w.DelayTotal.IdleExit <= 0 {
		t.Errorf("no idle exits in the waits of a HiKey replay: %+v", w.DelayTotal)
	}
	var table string
	for _, l := range strings.Split(res.Output, "\n") {
		if strings.HasPrefix(l, "  TOTAL:") && table == "" {
			table = l
		}
	}
	var rec, rep float64
	if _, err := fmt.Sscanf(strings.Fields(table)[2]+" "+strings.Fields(table)[4], "%f %f", &rec, &rep); err != nil {
		t.Fatalf("TOTAL row %q: %v", table, err)
	}
	want := fmt.Sprintf("  TOTAL:                 | %10.3f |", r.Diff/1e6)
	if math.Abs((rep-rec)-r.Diff/1e6) > 0.0015 || !strings.Contains(res.Output, "Why the runtimes differ") || !strings.Contains(res.Output, want) {
		t.Errorf("table's TOTAL %.3f - %.3f, breakdown's %q:\n%s", rep, rec, want, res.Output)
	}
	t.Logf("%s", res.Output[strings.Index(res.Output, "\nWhy"):])
}

// Without the cost model no CPU leaves an idle state late: the waits'
// idle-exit part is zero, and the parts still add up; the recording's b
// waited 2 ms behind a (testdata/why-runqueue.txt).
func TestWhyDelays(t *testing.T) {
	_, w, _ := why(t, sim.Config{Machine: "hikey", Args: []string{filepath.Join("testdata", "why-runqueue.txt")}, NoCosts: true})
	addsUp(t, w)
	near(t, "idle exits", w.DelayTotal.IdleExit, 0, 0)
	for _, d := range w.Delay {
		if strings.HasPrefix(d.Name, "b/0:") {
			near(t, "b's recorded waits", d.Recorded, 2e6, 0)
		}
	}
}

// Idle exits, where the answer is known: the pinned task of
// testdata/why-capacity.txt is created at time 0 on a HiKey whose CPUs
// all sit in cluster-sleep, so its first wait is that state's wake time
// (700 µs in the preset, without jitter), where the recording, which saw
// it first switched in, counts a wait of 0. Its second wait, after a
// timer ends its sleep, pays no exit: the timer's handler runs once the
// CPU is out of its state and only then wakes the task (sched/idle_exit.go),
// so the exit is sleep, not wait.
func TestWhyIdleExit(t *testing.T) {
	spec, ok := topology.Preset("hikey")
	if !ok {
		t.Fatal("no hikey preset")
	}
	var wake float64
	for _, s := range spec.IdleStates {
		if s.Name == "cluster-sleep" {
			wake = float64(s.WakeNs)
		}
	}
	_, w, _ := why(t, sim.Config{Machine: "hikey", Args: []string{filepath.Join("testdata", "why-capacity.txt")},
		Sysctls: []string{"model_cpufreq_governor=performance", "model_cost_jitter_pct=0"}})
	addsUp(t, w)
	d := w.Delay[0]
	near(t, "recorded waits", d.Recorded, 0, 0)
	near(t, "idle exits", d.IdleExit, wake, 0)
	near(t, "run queue", d.RunQueue, 0, 0)
	if wake == 0 || d.Diff < wake {
		t.Errorf("wake time %.0f ns, waits' difference %.0f ns", wake, d.Diff)
	}
}
