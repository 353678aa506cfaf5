package report

import (
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"

	"github.com/schedlab/schedlab/internal/experiment"
	"github.com/schedlab/schedlab/internal/workload"
	"github.com/schedlab/schedlab/internal/workload/schbench"
)

// checkCDF checks a step line drawn from buckets: it never goes left or
// down, starts at 0 and ends at exactly 1, and rises only at a bucket's
// value, by that bucket's share of the samples.
func checkCDF(t *testing.T, buckets []workload.Bucket, pts plotter.XYs) {
	t.Helper()
	var total uint64
	for _, b := range buckets {
		total += b.Count
	}
	if len(pts) == 0 || pts[0].Y != 0 || pts[len(pts)-1].Y != 1 {
		t.Fatalf("the CDF runs from %v to %v", pts[0], pts[len(pts)-1])
	}
	rise := map[float64]float64{}
	for i := 1; i < len(pts); i++ {
		a, b := pts[i-1], pts[i]
		if b.X < a.X || b.Y < a.Y || (b.X != a.X && b.Y != a.Y) {
			t.Fatalf("step %d: %v to %v is not across or up", i, a, b)
		}
		if b.Y > a.Y {
			rise[b.X] += b.Y - a.Y
		}
	}
	for _, b := range buckets {
		want := float64(b.Count) / float64(total)
		if math.Abs(rise[float64(b.Value)]-want) > 1e-12 {
			t.Errorf("bucket at %d rises %g, want its share %d/%d", b.Value, rise[float64(b.Value)], b.Count, total)
		}
		delete(rise, float64(b.Value))
	}
	for x, r := range rise {
		if r > 0 {
			t.Errorf("a rise of %g at %g, which is no bucket's value", r, x)
		}
	}
}

// A histogram's CDF: up by each bucket's share at its value, across to
// the next; a bucket without samples adds no step.
func TestCDFSteps(t *testing.T) {
	buckets := []workload.Bucket{{Lo: 10, Hi: 10, Value: 10, Count: 1}, {Lo: 20, Hi: 20, Value: 20, Count: 3},
		{Lo: 24, Hi: 25, Value: 25, Count: 0}, {Lo: 96, Hi: 103, Value: 100, Count: 4}}
	want := plotter.XYs{{X: 10, Y: 0}, {X: 10, Y: 0.125}, {X: 20, Y: 0.125}, {X: 20, Y: 0.5}, {X: 100, Y: 0.5}, {X: 100, Y: 1}}
	got := cdfSteps(buckets)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v\nwant %v", got, want)
	}
	checkCDF(t, buckets, got)
	if cdfSteps(nil) != nil || cdfSteps([]workload.Bucket{{Value: 3}}) != nil {
		t.Error("a CDF of no samples")
	}
}

// The CDF of a schbench histogram is the distribution the tool's
// percentiles come from: at each printed percentile's value it has reached
// the percentile, and just before that value it has not.
func TestCDFOfSchbenchHistogram(t *testing.T) {
	var s schbench.Stats
	r := rand.New(rand.NewPCG(5, 6))
	for range 5000 {
		s.AddLat(uint32(math.Exp(r.Float64()*math.Log(30000))) + 1)
	}
	h := s.Histogram("latency_us")
	pts := cdfSteps(h.Buckets)
	checkCDF(t, h.Buckets, pts)
	at := func(x float64) float64 { // the CDF at x: its highest point at or left of x
		y := 0.0
		for _, p := range pts {
			if p.X <= x {
				y = p.Y
			}
		}
		return y
	}
	plist := []float64{50, 75, 90, 95, 99, 99.5, 99.9}
	for i, v := range s.Percentiles(plist) {
		if at(float64(v)) < plist[i]/100 || at(float64(v)-0.5) >= plist[i]/100 {
			t.Errorf("p%g = %d: the CDF is %g there and %g just before", plist[i], v, at(float64(v)), at(float64(v)-0.5))
		}
	}
}

// The latency axis is logarithmic when the latencies span a decade or more
// (with labels at 1, 2, 5 × 10^k), linear otherwise; both leave a margin
// beyond the first and the last rise. The fraction axis runs 0 to 1.
func TestCDFAxis(t *testing.T) {
	line := func(lo, hi uint64) plotter.XYs {
		return cdfSteps([]workload.Bucket{{Value: lo, Count: 5}, {Value: (lo + hi) / 2, Count: 90}, {Value: hi, Count: 5}})
	}
	for _, c := range []struct {
		lo, hi uint64
		log    bool
	}{
		{680, 780, false}, {19, 407, true}, {100, 999, false}, {100, 1000, true}, {3, 40000, true},
	} {
		f, err := cdfFigure("t", "usec", []string{"tip", "v"}, []plotter.XYs{line(c.lo, c.hi), nil})
		if err != nil {
			t.Fatal(err)
		}
		_, isLog := f.p.X.Scale.(plot.LogScale)
		if isLog != c.log {
			t.Errorf("%d..%d: log axis %v", c.lo, c.hi, isLog)
		}
		if _, ok := f.p.X.Tick.Marker.(logTicks); ok != c.log {
			t.Errorf("%d..%d: log ticks %v", c.lo, c.hi, ok)
		}
		if !(f.p.X.Min < float64(c.lo)) || !(f.p.X.Max > float64(c.hi)) || f.p.X.Min < 0 || f.p.Y.Min != 0 || f.p.Y.Max != 1 {
			t.Errorf("%d..%d: axes %g..%g, %g..%g", c.lo, c.hi, f.p.X.Min, f.p.X.Max, f.p.Y.Min, f.p.Y.Max)
		}
	}
	if _, err := cdfFigure("t", "usec", []string{"tip"}, []plotter.XYs{nil}); err == nil {
		t.Error("a CDF of nothing drawn")
	}
}

// recordsFor are records of every point of plan, as a schbench run writes
// them, whose histograms hist gives by variant and run (nil: none).
func recordsFor(t *testing.T, plan *experiment.Plan, hist func(variant string, run int) []workload.Bucket) []*experiment.Record {
	t.Helper()
	var recs []*experiment.Record
	for _, pt := range plan.Points() {
		w := &plan.Workloads[pt.Workload]
		r := &experiment.Record{Key: pt.Key, Experiment: plan.Name, Run: pt.Run}
		r.Machine, r.Kernel, r.Variant, r.Seed = plan.Machines[pt.Machine].Label, pt.Kernel, pt.Variant, pt.Seed
		r.Workload.Name, r.Workload.Tool = w.Name, w.Tool
		r.Param.Name, r.Param.Value = w.Param.Name, pt.Load
		r.Metrics = workload.Metrics{
			{Name: "latency_us.p50", Value: float64(10 * (pt.Run + 1)), Better: workload.LowerIsBetter},
			{Name: "latency_us.p99", Value: float64(100 * (pt.Run + 1)), Better: workload.LowerIsBetter},
		}
		if b := hist(pt.Variant, pt.Run); b != nil {
			r.Histograms = []workload.Histogram{{Name: "latency_us", Scheme: "schbench_plat", Buckets: b}}
		}
		recs = append(recs, r)
	}
	return recs
}

// A variant's CDF pools its runs' histograms: a bucket's count is the sum
// over the runs, and the line is the pooled histogram's cdfSteps. If one
// run of the load lacks its histogram (a record of an older schedlab),
// every variant's line is its percentiles' means over runs.
func TestLatencyDataPoolsRuns(t *testing.T) {
	s, err := experiment.Parse("cdf.yaml", []byte("name: cdf\nmachines: [hikey]\nvariants: [short-task-v3]\nruns: 2\nworkloads:\n  - schbench -m 1 -t 2 -r 1\n"))
	if err != nil {
		t.Fatal(err)
	}
	plan, err := experiment.Resolve(s, experiment.ResolveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	b := func(value, count uint64) workload.Bucket {
		return workload.Bucket{Lo: value, Hi: value, Value: value, Count: count}
	}
	hist := func(variant string, run int) []workload.Bucket {
		switch {
		case variant == experiment.Tip && run == 0:
			return []workload.Bucket{b(10, 1), b(20, 1)}
		case variant == experiment.Tip:
			return []workload.Bucket{b(20, 2), b(40, 4)}
		default:
			return []workload.Bucket{b(15, 3)}
		}
	}
	data := latencyData(plan, recordsFor(t, plan, hist))
	if len(data) != 1 || !data[0].histogram || len(data[0].lines) != 2 {
		t.Fatalf("%+v", data)
	}
	want := [][]workload.Bucket{{b(10, 1), b(20, 3), b(40, 4)}, {b(15, 6)}}
	for vi, w := range want {
		if got := data[0].lines[vi]; !reflect.DeepEqual(got, cdfSteps(w)) {
			t.Errorf("%s: %v, want the CDF of %v", plan.Variants[vi], got, w)
		}
	}
	if !strings.Contains(data[0].note, "(14 samples in all)") {
		t.Errorf("note %q", data[0].note)
	}

	partial := func(variant string, run int) []workload.Bucket {
		if variant != experiment.Tip && run == 1 {
			return nil
		}
		return hist(variant, run)
	}
	data = latencyData(plan, recordsFor(t, plan, partial))
	if len(data) != 1 || data[0].histogram {
		t.Fatalf("%+v", data)
	}
	// p50 is 10 and 20 in runs 0 and 1, p99 100 and 200.
	steps := plotter.XYs{{X: 15, Y: 0.5}, {X: 150, Y: 0.5}, {X: 150, Y: 0.99}}
	for vi := range plan.Variants {
		if got := data[0].lines[vi]; !reflect.DeepEqual(got, steps) {
			t.Errorf("%s without histograms: %v, want %v", plan.Variants[vi], got, steps)
		}
	}
}
