package workload

import (
	"math"
	"testing"
)

// The stopping rule on made-up batch series: a flat series stops at
// MinBatches; a start-up ramp is cut off by MSER and the estimate is the
// plateau; noise wider than the tolerance, or a trend, keeps it running.
func TestSteadyState(t *testing.T) {
	flat := func(n int, v float64) []float64 {
		b := make([]float64, n)
		for i := range b {
			b[i] = v
		}
		return b
	}
	ramp := append([]float64{50, 60, 70}, flat(10, 100)...)
	noisy := make([]float64, 12)
	for i := range noisy {
		noisy[i] = 100 + 10*float64(i%2*2-1) // 90, 110, ...: ±10%
	}
	trend := make([]float64, 40)
	for i := range trend {
		trend[i] = 100 + 0.5*float64(i) // +0.5% a batch: moving
	}
	for _, tc := range []struct {
		name      string
		batches   []float64
		steadyAt  int // the first batch count at which Steady holds; 0 = never
		cut, mean float64
	}{
		{"flat", flat(12, 100), 8, 0, 100},
		{"ramp", ramp, 11, 3, 100},
		{"noisy", noisy, 0, 0, 100},
		{"trend", trend, 0, 20, 0},
	} {
		s := DefaultSteadyState()
		at := 0
		for i, v := range tc.batches {
			s.Add(v)
			if at == 0 && s.Steady() {
				at = i + 1
			}
		}
		if at != tc.steadyAt {
			t.Errorf("%s: steady at %d batches, want %d", tc.name, at, tc.steadyAt)
		}
		if tc.name == "trend" {
			// MSER cuts as much as it may (half) from a steady climb.
			if s.Cut() != len(tc.batches)/2 {
				t.Errorf("trend: cut %d, want %d", s.Cut(), len(tc.batches)/2)
			}
			continue
		}
		if c := s.Cut(); c != int(tc.cut) {
			t.Errorf("%s: cut %d, want %v", tc.name, c, tc.cut)
		}
		if m, _ := s.Estimate(); math.Abs(m-tc.mean) > 1e-9 {
			t.Errorf("%s: estimate %v, want %v", tc.name, m, tc.mean)
		}
	}
}
