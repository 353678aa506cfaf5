package sim

import (
	"bytes"
	"testing"
	"time"

	"github.com/schedlab/schedlab/internal/engine"
	"github.com/schedlab/schedlab/internal/observe"
	"github.com/schedlab/schedlab/internal/sched"
	"github.com/schedlab/schedlab/internal/schedstat"
)

// A warm-up runs the benchmark back to back before the measured run, on
// the same kernel: the observers attach after it, the result counts only
// the measured run (schedstat as the delta an observer sees, the balance
// counters, events and simulated time), the kernel the measured run starts
// on is no longer a fresh one, and the same seed gives the same bytes.
func TestWarmup(t *testing.T) {
	cfg := Config{Machine: "hikey", Tool: "hackbench", Args: []string{"-g", "1", "-l", "20"}, Seed: 3}
	cold, err := Run(cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	warm := cfg
	warm.Warmup = 50 * engine.Millisecond
	var (
		before, after    *schedstat.Totals
		attachedAt       engine.Time
		avgIdle, utilSum uint64
		balance          sched.BalanceStats
		eventsAtAttach   uint64
		freshAvgIdle     uint64
	)
	obs := func(k *sched.Kernel) (func() error, error) {
		attachedAt, eventsAtAttach = k.Now(), k.Eng.Events()
		v := observe.SchedstatVersion(k.S.Kernel)
		before = schedstat.Sum(observe.Snapshot(k), v)
		for _, rq := range k.Rqs {
			avgIdle += rq.AvgIdle
			utilSum += rq.CFS.Avg.UtilAvg
		}
		freshAvgIdle = uint64(len(k.Rqs)) * 2 * k.S.MigrationCost
		return func() error {
			after = schedstat.Sum(observe.Snapshot(k), v)
			balance = k.BalanceStats
			return nil
		}, nil
	}
	r, err := Run(warm, Options{Observers: []Observer{obs}})
	if err != nil {
		t.Fatal(err)
	}
	if r.Sim.WarmupRuns < 1 || r.Sim.WarmupNs < int64(warm.Warmup) || engine.Time(r.Sim.WarmupNs) != attachedAt {
		t.Fatalf("warm-up: %d runs in %d ns, observers attached at %v; want at least one run, at least %v, attached at its end", r.Sim.WarmupRuns, r.Sim.WarmupNs, attachedAt, warm.Warmup)
	}
	if cold.Sim.WarmupRuns != 0 || cold.Sim.WarmupNs != 0 {
		t.Errorf("a run without --warmup reports a warm-up: %+v", cold.Sim)
	}
	after.Sub(before)
	after.Jiffies = r.Schedstat.Jiffies // Run measures jiffies from the same point
	if got, want := r.Schedstat.CPU, after.CPU; got != want {
		t.Errorf("schedstat %+v, want the measured run's delta %+v", got, want)
	}
	if got := r.Balance; got.PeriodicBalance.Calls != balance.PeriodicBalance.Calls || got.UpdateBlockedAverages.Calls != balance.UpdateBlockedAverages.Calls {
		t.Errorf("balance %+v, want the measured run's %+v", got, balance)
	}
	// The warm-up's events are not the measured run's: a run's worth
	// of events, not the warm-up's several.
	if eventsAtAttach < cold.Sim.Events || r.Sim.Events == 0 || r.Sim.Events > 2*cold.Sim.Events {
		t.Errorf("events %d after %d in the warm-up; a cold run has %d", r.Sim.Events, eventsAtAttach, cold.Sim.Events)
	}
	if avgIdle == freshAvgIdle || utilSum == 0 {
		t.Errorf("the measured run starts on a fresh kernel: avg_idle sum %d (fresh %d), util_avg sum %d", avgIdle, freshAvgIdle, utilSum)
	}
	if m, _ := r.Metric("time_s"); m <= 0 || m > float64(r.Sim.SimulatedNs)/1e9 {
		t.Errorf("time_s %v of a measured run of %d ns", m, r.Sim.SimulatedNs)
	}
	if bytes.Equal(r.Deterministic(), cold.Deterministic()) {
		t.Error("the warm-up changed nothing")
	}
	r2, err := Run(warm, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(r.Deterministic(), r2.Deterministic()) {
		t.Error("two warm runs with one seed differ")
	}
}

// A probe (sweep --estimate) runs the warm-up first and counts its wall
// time: cut short in the measured run, used/progress is the warm-up's wall
// time plus the measured part's extrapolated one.
func TestProbeWarmup(t *testing.T) {
	cfg := Config{Machine: "hikey", Tool: "hackbench", Args: []string{"-g", "1", "-l", "60"}, Seed: 3, Warmup: 20 * engine.Millisecond}
	b, err := Build(cfg)
	if err != nil {
		t.Fatal(err)
	}
	clock := time.Unix(0, 0)
	now := func() time.Time { clock = clock.Add(time.Millisecond); return clock }
	// The warm-up reads the clock twice (its start and end): 1 ms.
	p, done, used, err := b.Probe(30*time.Millisecond, now)
	if err != nil || done {
		t.Fatalf("probe: %v %v %v", p, done, err)
	}
	if b.Kernel.Now() < cfg.Warmup {
		t.Fatalf("the probe ran no warm-up (now %v)", b.Kernel.Now())
	}
	raw := b.Instance.Progress()
	warm, run := time.Millisecond, used-time.Millisecond
	want := float64(used) / (float64(warm) + float64(run)/raw)
	if raw <= 0 || p != want {
		t.Errorf("progress %v, want %v: used %v, the measured run's own progress %v", p, want, used, raw)
	}
}
