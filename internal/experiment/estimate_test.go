package experiment

import (
	"slices"
	"testing"
	"time"
)

// fakeClock advances by step at every reading, so that a probe's wall time
// is a count of engine slices and the estimate is deterministic.
func fakeClock(step time.Duration) func() time.Time {
	t := time.Unix(0, 0)
	return func() time.Time { t = t.Add(step); return t }
}

// cutShort is a probe budget of half the shortest of rows' finished
// probes, in whole clock ticks (so that a cut-short probe's wall is the
// budget): with it every probe is cut short.
func cutShort(rows []EstimateRow) time.Duration {
	budget := rows[0].ProbeWall
	for _, r := range rows {
		budget = min(budget, r.ProbeWall)
	}
	return (budget / 2).Truncate(time.Millisecond)
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
	// Every probe is cut short; the ones with progress extrapolate.
	budget := cutShort(rows)
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

// A resumed estimate costs a class by the wall time of the runs the
// directory holds (their mean, no probe), and with a stopping rule counts
// what the rule still needs on those records: a column identical to tip
// settles at its minimum, a noisy one needs its next run (at least) and
// perhaps the rest; a cell whose every column has settled needs nothing.
func TestEstimateResumedSequential(t *testing.T) {
	p := seqPlan(t, "short-task-v3, short-task-v4", 10, 3)
	write := func(value func(v, r int) float64, runs int) string {
		dir := t.TempDir()
		if err := PrepareDir(dir, p, false); err != nil {
			t.Fatal(err)
		}
		for i, rec := range fill(p, value) {
			if rec.Run >= runs {
				continue
			}
			rec.SchemaVersion = RecordSchemaVersion
			rec.Sim.WallNs = int64(time.Duration(1+rec.Run) * time.Second)
			if rec.Key != p.Points()[i].Key {
				t.Fatalf("record %d: key %s", i, rec.Key)
			}
			if err := WriteRecord(dir, rec); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	// v3 is tip's run exactly; v4 adds noise of its own.
	open := write(func(v, r int) float64 {
		if v == 2 {
			return 100 + 5*noise[r] + 5*noise[(r+3)%10]
		}
		return 100 + 5*noise[r]
	}, 3)
	rows, err := Estimate(p, open, time.Hour, fakeClock(time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 {
		t.Fatalf("%d rows, want 1: %+v", len(rows), rows)
	}
	r := rows[0]
	// 30 points, 9 held; tip's and v4's run 3 are needed, the other 19
	// perhaps; the held runs took 1, 2 and 3 s each.
	if r.Measured != 9 || r.Runs != 21 || r.AtLeast != 2 || r.PerRun != 2*time.Second || r.ProbeWall != 0 {
		t.Errorf("resumed open cell: %+v, want 9 measured, 21 runs at most, 2 at least, 2s a run, no probe", r)
	}
	if r.Least() != 4*time.Second || r.Total() != 42*time.Second {
		t.Errorf("least %v total %v, want 4s and 42s", r.Least(), r.Total())
	}
	// Every variant identical to tip: settled after 3 runs, nothing left.
	settled := write(func(v, r int) float64 { return 100 + 5*noise[r] }, 3)
	rows, err = Estimate(p, settled, time.Hour, fakeClock(time.Millisecond))
	if err != nil || len(rows) != 0 {
		t.Errorf("settled cell: %+v %v, want no rows", rows, err)
	}
	// Without the rule (--full-length), the same records leave 21 runs,
	// all needed.
	full := *p
	full.Sequential = nil
	rows, err = Estimate(&full, open, time.Hour, fakeClock(time.Millisecond))
	if err != nil || len(rows) != 1 || rows[0].Runs != 21 || rows[0].AtLeast != 21 {
		t.Errorf("without the rule: %+v %v", rows, err)
	}
}

// A cut-short probe is scaled by how far such a probe misses the runs the
// directory holds of the same workload: runs of hackbench -g 1 that took
// seven times their probe's extrapolation make -g 2's probe count seven
// times too; schbench, of which the directory holds nothing, is not
// scaled, and a finished probe never is.
func TestEstimateScaledByRuns(t *testing.T) {
	p := tinyPlan(t)
	full, err := Estimate(p, "", time.Hour, fakeClock(time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	budget := cutShort(full)
	bare, err := Estimate(p, "", budget, fakeClock(time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	row := func(rows []EstimateRow, w, load string) *EstimateRow {
		for i := range rows {
			if rows[i].Workload == w && rows[i].Load == load {
				return &rows[i]
			}
		}
		return nil
	}
	g1, g2 := row(bare, "hackbench", "1"), row(bare, "hackbench", "2")
	if g1 == nil || g2 == nil || g1.Progress >= 1 || g2.Progress >= 1 || g1.RefMachine != "" || g1.Scale != 1 {
		t.Fatalf("probes without a directory: %+v", bare)
	}
	dir := t.TempDir()
	if err := PrepareDir(dir, p, false); err != nil {
		t.Fatal(err)
	}
	recs := fill(p, func(v, r int) float64 { return 1 })
	for i, pt := range p.Points() {
		if p.Workloads[pt.Workload].Name != "hackbench" || pt.Load != "1" {
			continue
		}
		rec := recs[i]
		rec.SchemaVersion = RecordSchemaVersion
		rec.Sim.WallNs = int64(7 * g1.PerRun)
		if err := WriteRecord(dir, rec); err != nil {
			t.Fatal(err)
		}
	}
	rows, err := Estimate(p, dir, budget, fakeClock(time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 3 || row(rows, "hackbench", "1") != nil {
		t.Fatalf("want hackbench -g 2 and two schbench rows: %+v", rows)
	}
	r := row(rows, "hackbench", "2")
	if r.Scale != 7 || r.RefMachine != "hikey" || r.RefLoad != "1" || r.PerRun != time.Duration(float64(g2.PerRun)*7) {
		t.Errorf("hackbench -g 2: %+v, want scale 7 from hikey 1 and %v a run", r, time.Duration(float64(g2.PerRun)*7))
	}
	for _, load := range []string{"2", "3"} {
		r, b := row(rows, "schbench", load), row(bare, "schbench", load)
		if r.Scale != 1 || r.RefMachine != "" || r.PerRun != b.PerRun {
			t.Errorf("schbench %s: %+v, want its bare probe %v", load, r, b.PerRun)
		}
	}
	// The probes finish with an hour: nothing to scale.
	rows, err = Estimate(p, dir, time.Hour, fakeClock(time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	if r := row(rows, "hackbench", "2"); r.Scale != 1 || r.RefMachine != "" || r.PerRun != r.ProbeWall {
		t.Errorf("finished probe scaled: %+v", r)
	}
}

// references order the classes with runs of the unmeasured class's
// workload: the same load first (any machine), then the nearest load by
// ratio, on the same machine before another, the higher of two equally
// near loads first; other workloads, classes without runs and loads that
// are not numbers (unless equal) are none.
func TestEstimateReferences(t *testing.T) {
	rows := []EstimateRow{
		{Machine: "b", Load: "64"},                // 0: u
		{Machine: "b", Load: "32", Measured: 3},   // 1
		{Machine: "a", Load: "128", Measured: 3},  // 2
		{Machine: "b", Load: "128", Measured: 3},  // 3
		{Machine: "a", Load: "64", Measured: 3},   // 4
		{Machine: "b", Load: "256"},               // 5: no runs
		{Machine: "b", Load: "64", Measured: 3},   // 6: another workload
		{Machine: "b", Load: "x", Measured: 3},    // 7: not a number
		{Machine: "a", Load: "1024", Measured: 3}, // 8
	}
	workload := []int{0, 0, 0, 0, 0, 0, 1, 0, 0}
	got := references(workload, rows, 0)
	want := []int{4, 3, 1, 2, 8}
	if !slices.Equal(got, want) {
		t.Errorf("references %v, want %v", got, want)
	}
	if got := references(workload, rows, 6); len(got) != 0 {
		t.Errorf("a workload with no other class: %v", got)
	}
}

// A run's cost is its CPU time where its record has one: a run stopped
// for minutes (a suspended laptop) keeps its CPU time, not its wall time;
// a record without one (an older schedlab) counts its wall time.
func TestEstimateCostsCPUTime(t *testing.T) {
	p := seqPlan(t, "short-task-v3", 10, 3)
	full := *p
	full.Sequential = nil
	dir := t.TempDir()
	if err := PrepareDir(dir, &full, false); err != nil {
		t.Fatal(err)
	}
	for _, rec := range fill(&full, func(v, r int) float64 { return 100 + float64(v+r) }) {
		if rec.Run >= 3 {
			continue
		}
		rec.SchemaVersion = RecordSchemaVersion
		rec.Sim.WallNs = int64(time.Hour) // stopped for an hour
		rec.Sim.CPUNs = int64(time.Duration(1+rec.Run) * time.Second)
		if rec.Run == 2 {
			rec.Sim.CPUNs = 0 // no CPU time: its wall time counts
			rec.Sim.WallNs = int64(6 * time.Second)
		}
		if err := WriteRecord(dir, rec); err != nil {
			t.Fatal(err)
		}
	}
	rows, err := Estimate(&full, dir, time.Hour, fakeClock(time.Millisecond))
	if err != nil || len(rows) != 1 {
		t.Fatalf("%+v %v", rows, err)
	}
	// Two records each of 1 s and 2 s CPU time and 6 s wall time.
	if r := rows[0]; r.Measured != 6 || r.PerRun != 3*time.Second {
		t.Errorf("%+v: want 6 measured at 3s a run", r)
	}
}
