package fidelity

import (
	"testing"

	"github.com/schedlab/schedlab/internal/experiment"
	"github.com/schedlab/schedlab/internal/workload"
)

// Extend adds one paired seed to every row whose deltas are not settled
// by the sweep's rule, up to MaxSeeds, and none to a row that is settled
// or has no delta (issue 38: a delta case runs until its interval
// excludes zero or lies within ±1%, with a floor and a cap).
func TestExtend(t *testing.T) {
	c := loadTestCorpus(t)
	p, err := NewPlan(c, c.Cases, PlanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Seeds != DefaultSeeds || p.MaxSeeds != DefaultMaxSeeds {
		t.Fatalf("seeds %d..%d, want %d..%d", p.Seeds, p.MaxSeeds, DefaultSeeds, DefaultMaxSeeds)
	}
	// value gives each run its metric: tip alternates 100, 110 by seed;
	// a patched column is tip plus its shift, constant (settled: the
	// differences have no spread) or alternating ±10 around +0.5
	// (unsettled: the interval spans zero and is wider than ±1%).
	value := func(r *Run) float64 {
		tip := 100.0 + 10*float64(r.SeedIndex%2)
		switch {
		case r.Column == 0:
			return tip
		case r.Case.ID == "synthetic-hikey-messaging" && r.Load() == "1":
			return tip + 5 // settled: +5 at every seed
		case r.Case.ID == "synthetic-hikey-messaging":
			return tip + 0.5 + 10*float64(1-2*(r.SeedIndex%2)) // load 2: unsettled
		}
		return tip // tbench: every column equal to tip, settled (no spread)
	}
	recs := func() []*experiment.Record {
		out := make([]*experiment.Record, len(p.Runs))
		for i := range p.Runs {
			r := &p.Runs[i]
			out[i] = &experiment.Record{Key: r.Key}
			out[i].Metrics = workload.Metrics{{Name: r.Case.Metric.Name, Value: value(r)}}
		}
		return out
	}
	seedsOf := func() map[string]int {
		n := map[string]int{}
		for _, r := range p.Runs {
			k := r.Case.ID + "/" + r.Load() + "/" + r.ColumnName()
			if r.SeedIndex+1 > n[k] {
				n[k] = r.SeedIndex + 1
			}
		}
		return n
	}
	for round := 0; ; round++ {
		added := p.Extend(recs())
		if added == 0 {
			break
		}
		// Only messaging load 2 is unsettled: its tip and outside (the
		// unsimulated column never runs) get one seed each.
		if added != 2 {
			t.Fatalf("round %d: %d runs added, want 2", round, added)
		}
		if round > DefaultMaxSeeds {
			t.Fatal("Extend does not stop")
		}
	}
	got := seedsOf()
	for k, want := range map[string]int{
		"synthetic-hikey-messaging/1/tip": DefaultSeeds, "synthetic-hikey-messaging/1/outside": DefaultSeeds,
		"synthetic-hikey-messaging/2/tip": DefaultMaxSeeds, "synthetic-hikey-messaging/2/outside": DefaultMaxSeeds,
		"synthetic-box-schbench/2/tip": DefaultSeeds, "synthetic-hikey-tbench//eevdf": DefaultSeeds,
	} {
		if got[k] != want {
			t.Errorf("%s: %d seeds, want %d", k, got[k], want)
		}
	}
	// Every run's index is its place, and its seed the derived one.
	for i, r := range p.Runs {
		if r.Index != i || r.Seed != experiment.DeriveSeed(MasterSeed, r.SeedIndex) {
			t.Fatalf("run %d: index %d, seed %d (#%d)", i, r.Index, r.Seed, r.SeedIndex)
		}
	}
	// A fixed seed count (--seeds) has no stopping rule.
	fixed, err := NewPlan(c, c.Cases, PlanOptions{Seeds: 3})
	if err != nil {
		t.Fatal(err)
	}
	if fixed.MaxSeeds != 3 || fixed.Extend(nil) != 0 {
		t.Errorf("--seeds 3: max %d", fixed.MaxSeeds)
	}
	if _, err := NewPlan(c, c.Cases, PlanOptions{Seeds: 5, MaxSeeds: 4}); err == nil {
		t.Error("--max-seeds below --seeds is accepted")
	}
}
