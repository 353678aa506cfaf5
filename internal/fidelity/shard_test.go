package fidelity

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	corpus "github.com/schedlab/schedlab/fidelity"

	"github.com/schedlab/schedlab/internal/experiment"
	"github.com/schedlab/schedlab/internal/workload"
)

// rowsOf maps each row with runs ("case/load") to the shard whose plan
// has it; a row in two shards fails the test.
func rowsOf(t *testing.T, plans []*Plan) map[string]int {
	t.Helper()
	out := map[string]int{}
	for i, p := range plans {
		for _, r := range p.Runs {
			k := r.Case.ID + "/" + r.Load()
			if j, ok := out[k]; ok && j != i {
				t.Fatalf("row %s is in shards %d and %d", k, j, i)
			}
			out[k] = i
		}
	}
	return out
}

// keysOf is the set of a plan's run keys.
func keysOf(p *Plan) map[string]bool {
	out := map[string]bool{}
	for _, r := range p.Runs {
		out[r.Key] = true
	}
	return out
}

// Shards partition the plan by row: every run of the whole plan is in
// exactly one shard, a row is never split, and (the synthetic cases share
// no simulation, so each row is its own group) row k is in shard k mod n.
// The stopping rule gives each shard the same extra seeds of its rows as
// the whole plan, because it reads only a row's own records (TestExtend's
// metric).
func TestPlanShards(t *testing.T) {
	c := loadTestCorpus(t)
	whole, err := NewPlan(c, c.Cases, PlanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var rows []string
	for _, r := range whole.Runs {
		k := r.Case.ID + "/" + r.Load()
		if len(rows) == 0 || rows[len(rows)-1] != k {
			rows = append(rows, k)
		}
	}
	value := func(r *Run) float64 {
		tip := 100.0 + 10*float64(r.SeedIndex%2)
		if r.Column != 0 && r.Case.ID == "synthetic-hikey-messaging" && r.Load() == "2" {
			return tip + 0.5 + 10*float64(1-2*(r.SeedIndex%2)) // never settles
		}
		return tip
	}
	extendAll := func(p *Plan) {
		for i := 0; i <= DefaultMaxSeeds; i++ {
			recs := make([]*experiment.Record, len(p.Runs))
			for j := range p.Runs {
				r := &p.Runs[j]
				recs[j] = &experiment.Record{Key: r.Key}
				recs[j].Metrics = workload.Metrics{{Name: r.Case.Metric.Name, Value: value(r)}}
			}
			if p.Extend(recs) == 0 {
				return
			}
		}
		t.Fatal("Extend does not stop")
	}
	extendAll(whole)
	for _, n := range []int{2, 3, len(rows), len(rows) + 2} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			var plans []*Plan
			union := map[string]bool{}
			for i := range n {
				p, err := NewPlan(c, c.Cases, PlanOptions{Shard: i, Shards: n})
				if err != nil {
					t.Fatal(err)
				}
				extendAll(p)
				for k := range keysOf(p) {
					if union[k] {
						t.Fatalf("run %s is in two shards", k)
					}
					union[k] = true
				}
				plans = append(plans, p)
			}
			want := keysOf(whole)
			if len(union) != len(want) {
				t.Errorf("the shards have %d runs, the whole plan %d", len(union), len(want))
			}
			for k := range want {
				if !union[k] {
					t.Errorf("run %s is in no shard", k)
				}
			}
			got := rowsOf(t, plans)
			for k, row := range rows {
				if got[row] != k%n {
					t.Errorf("row %d (%s) is in shard %d, want %d", k, row, got[row], k%n)
				}
			}
		})
	}
	for _, bad := range [][2]int{{-1, 2}, {2, 2}} {
		if _, err := NewPlan(c, c.Cases, PlanOptions{Shard: bad[0], Shards: bad[1]}); err == nil {
			t.Errorf("shard %d/%d accepted", bad[0], bad[1])
		}
	}
}

// Rows whose first run is the same simulation are in one shard, so that
// it is simulated once: the mechanism cases' figures of one benchmark run,
// and tip rows that several cases share. Checked on the whole corpus.
func TestPlanShardsKeepSharedSimulations(t *testing.T) {
	c, err := Load(corpus.Cases(), corpus.Dir)
	if err != nil {
		t.Fatal(err)
	}
	const n = 7
	shardOf := map[string]int{} // the simulation hash of a row's first run
	shared := 0
	for i := range n {
		p, err := NewPlan(c, c.Cases, PlanOptions{Shard: i, Shards: n})
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]bool{}
		for _, r := range p.Runs {
			row := r.Case.ID + "/" + r.Load()
			if seen[row] {
				continue
			}
			seen[row] = true
			h := r.Key[strings.LastIndex(r.Key, "__")+2:]
			if j, ok := shardOf[h]; ok {
				shared++
				if j != i {
					t.Errorf("row %s's first run is one simulation with a row of shard %d, but it is in shard %d", row, j, i)
				}
			}
			shardOf[h] = i
		}
	}
	// The corpus has such rows (the mechanism cases read up to 11 figures
	// from one run): the test must see some.
	if shared < 20 {
		t.Errorf("only %d rows share their first run's simulation with another row", shared)
	}
}

// Shards run into one results directory leave nothing for the whole plan
// to run (but the check of one run per machine), and its records are a
// local run's: what `fidelity --slurm` relies on.
func TestExecuteShards(t *testing.T) {
	c := loadTestCorpus(t)
	opt := PlanOptions{Quick: true, Seeds: 2}
	dir := t.TempDir()
	for i := range 2 {
		o := opt
		o.Shard, o.Shards = i, 2
		p, err := NewPlan(c, c.Cases, o)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Execute(p, ExecOptions{Dir: dir, Jobs: 2}); err != nil {
			t.Fatal(err)
		}
	}
	whole, err := NewPlan(c, c.Cases, opt)
	if err != nil {
		t.Fatal(err)
	}
	joined, err := Execute(whole, ExecOptions{Dir: dir, Jobs: 2})
	if err != nil {
		t.Fatal(err)
	}
	if joined.Executed != 0 || joined.Reused != len(whole.Runs) {
		t.Errorf("after the shards: executed %d, reused %d of %d", joined.Executed, joined.Reused, len(whole.Runs))
	}
	local, err := Execute(whole, ExecOptions{Jobs: 2})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(deterministic(local.Records), deterministic(joined.Records)) {
		t.Error("the shards' records differ from a local run's")
	}
}
