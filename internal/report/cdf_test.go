package report

import (
	"math"
	"math/rand/v2"
	"reflect"
	"testing"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"

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
