package schbench

import (
	"math"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/schedlab/schedlab/internal/workload"
)

// The bounds of the plat buckets partition 0 … 2³²−1: each bucket's lo and
// hi map back to it, each starts one above the previous one's hi, and the
// value the tool reports for it lies inside it.
// Reference: schbench.c plat_val_to_idx / plat_idx_to_val.
func TestPlatIdxBounds(t *testing.T) {
	next := uint64(0)
	for idx := uint32(0); idx < platNr; idx++ {
		lo, hi := platIdxBounds(idx)
		if uint64(lo) != next || lo > hi {
			t.Fatalf("bucket %d: %d..%d, want it to start at %d", idx, lo, hi, next)
		}
		if platValToIdx(lo) != idx || platValToIdx(hi) != idx {
			t.Fatalf("bucket %d: %d..%d map to buckets %d and %d", idx, lo, hi, platValToIdx(lo), platValToIdx(hi))
		}
		if v := platIdxToVal(idx); v < lo || v > hi {
			t.Fatalf("bucket %d: %d..%d reports %d", idx, lo, hi, v)
		}
		next = uint64(hi) + 1
	}
	if next != math.MaxUint32+1 {
		t.Fatalf("the last bucket ends at %d", next-1)
	}
}

// A histogram keeps the buckets with samples: exact values below 512,
// buckets 2 µs wide from 512 to 1023 and 64 µs wide from 16384 to 32767,
// each reporting its midpoint rounded up, as plat_idx_to_val does.
func TestStatsHistogram(t *testing.T) {
	var s Stats
	for _, v := range []uint32{3, 601, 3, 600, 1000, 30000} {
		s.AddLat(v)
	}
	got := s.Histogram("latency_us")
	want := workload.Histogram{Name: "latency_us", Scheme: "schbench_plat", Buckets: []workload.Bucket{
		{Lo: 3, Hi: 3, Value: 3, Count: 2},
		{Lo: 600, Hi: 601, Value: 601, Count: 2},
		{Lo: 1000, Hi: 1001, Value: 1001, Count: 1},
		{Lo: 29952, Hi: 30015, Value: 29984, Count: 1},
	}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
	if e := (&Stats{}).Histogram("x"); e.Buckets == nil || len(e.Buckets) != 0 {
		t.Fatalf("empty stats: %+v", e)
	}
}

// The histogram is what the percentiles come from: for each percentile p
// the tool prints, the first bucket whose running count reaches p% of the
// samples reports the printed value (calc_percentiles' rule).
func TestHistogramGivesPercentiles(t *testing.T) {
	var s Stats
	r := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		// Latencies over four decades, more of them small.
		s.AddLat(uint32(math.Exp(r.Float64()*math.Log(50000))) + 1)
	}
	h := s.Histogram("latency_us")
	if h.Samples() != s.Samples {
		t.Fatalf("%d samples in the buckets, %d added", h.Samples(), s.Samples)
	}
	want := s.Percentiles(plist)
	for i, p := range plist {
		var cum uint64
		for _, b := range h.Buckets {
			cum += b.Count
			if float64(cum) >= p/100*float64(h.Samples()) {
				if b.Value != uint64(want[i]) {
					t.Errorf("p%g: histogram gives %d, the tool %d", p, b.Value, want[i])
				}
				break
			}
		}
	}
}
