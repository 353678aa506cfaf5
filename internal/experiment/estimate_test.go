package experiment

import (
	"testing"
	"time"
)

// fakeClock advances by step at every reading, so that a probe's wall time
// is a count of engine slices and the estimate is deterministic.
func fakeClock(step time.Duration) func() time.Time {
	t := time.Unix(0, 0)
	return func() time.Time { t = t.Add(step); return t }
}

// An estimate has one row per machine, workload and load, counting every
// kernel, variant and run index of it; a probe that finishes reports 100%
// and its own wall time per run, one cut short by the budget extrapolates
// wall / progress; runs a results directory already holds are left out.
func TestEstimate(t *testing.T) {
	p := tinyPlan(t)
	rows, err := Estimate(p, "", time.Hour, fakeClock(time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 4 {
		t.Fatalf("%d rows, want 4 (2 hackbench and 2 schbench loads): %+v", len(rows), rows)
	}
	for _, r := range rows {
		// tip and short-task-v3, 2 runs each.
		if r.Runs != 4 || r.Machine != "hikey" || r.Progress != 1 || r.PerRun != r.ProbeWall || r.ProbeWall <= 0 {
			t.Errorf("finished probe: %+v", r)
		}
		if r.Total() != 4*r.PerRun {
			t.Errorf("total %v of %+v", r.Total(), r)
		}
	}
	// Half the shortest finished probe's clock readings: every probe is
	// cut short; the ones with progress extrapolate.
	budget := rows[0].ProbeWall
	for _, r := range rows {
		budget = min(budget, r.ProbeWall)
	}
	// Whole clock ticks, so a cut-short probe's wall is the budget.
	budget = (budget / 2).Truncate(time.Millisecond)
	short, err := Estimate(p, "", budget, fakeClock(time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	moved := 0
	for _, r := range short {
		if r.Progress < 0 || r.Progress >= 1 || r.ProbeWall != budget {
			t.Errorf("cut-short probe (budget %v): %+v", budget, r)
			continue
		}
		if r.Progress == 0 {
			continue // still forking
		}
		moved++
		if want := time.Duration(float64(r.ProbeWall) / r.Progress); r.PerRun != want {
			t.Errorf("per run %v, want wall/progress %v", r.PerRun, want)
		}
	}
	if moved == 0 {
		t.Errorf("no cut-short probe made progress: %+v", short)
	}
	// Two runs done: their class counts two fewer.
	dir := t.TempDir()
	if err := PrepareDir(dir, p, false); err != nil {
		t.Fatal(err)
	}
	pts := p.Points()
	for _, pt := range pts[:2] {
		pt.Trace = false
		rec, err := Execute(p, &pt, dir, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := WriteRecord(dir, rec); err != nil {
			t.Fatal(err)
		}
	}
	left, err := Estimate(p, dir, time.Hour, fakeClock(time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, r := range left {
		n += r.Runs
	}
	if n != len(pts)-2 {
		t.Errorf("%d runs left, want %d", n, len(pts)-2)
	}
}
