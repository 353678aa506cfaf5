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

// With a Window (what the run's figure averages, far longer than the
// batches so far), a drift the halves test cannot see keeps the run
// going: 0.01% a batch (0.2% a second at 50 ms batches) passes the halves
// test at eight kept batches, but carried over a 1180-batch window it is
// about 6%. A climb that flattens is run until the plateau is sure, and
// the estimate is the window's mean: the climb's batches as counted, the
// rest of the window at the plateau; without a Window the rule stops on
// the climb and reads it low. A flat series with noise stops once the
// slope's interval, not only its value, is small enough.
func TestSteadyStateWindow(t *testing.T) {
	const window = 1180 // tbench -t 60: 59 s in 50 ms batches
	drift := func(i int) float64 { return 100 + 0.01*float64(i) }
	climb := func(i int) float64 { // 90 → 100 over 300 batches, then flat
		if i < 300 {
			return 90 + 10*float64(i)/300
		}
		return 100
	}
	noisy := func(i int) float64 { // ±0.1%, no trend
		return 100 + 0.1*float64([]int{1, -1, -1, 1, 1, 1, -1, -1, -1, 1}[i%10])
	}
	stop := func(f func(int) float64, w float64, max int) (at int, est float64) {
		s := DefaultSteadyState()
		s.Window = w
		for i := 0; i < max; i++ {
			s.Add(f(i))
			if s.Steady() {
				m, _ := s.Estimate()
				return i + 1, m
			}
		}
		return 0, 0
	}
	// MSER cuts half of a steady climb, so eight kept batches are 16.
	if at, _ := stop(drift, 0, 400); at == 0 || at > 16 {
		t.Errorf("drift without a window: steady at %d, want by 16 (the halves test passes it)", at)
	}
	if at, _ := stop(drift, window, 400); at != 0 {
		t.Errorf("drift with a window of %d: steady at %d batches, want not within 400", window, at)
	}
	at, est := stop(climb, 0, 1200)
	if at == 0 || est > 99 {
		t.Errorf("climb without a window: steady at %d with %v, want an early stop below 99", at, est)
	}
	// The window's mean: the batches as counted, the climb included, and
	// the rest of the window at the mean of the batches MSER keeps (which
	// may hold the climb's last ones: within 0.2 of 100).
	at, est = stop(climb, window, 1200)
	s := DefaultSteadyState()
	counted, kept := 0.0, 0.0
	for i := range at {
		s.Add(climb(i))
		counted += climb(i)
	}
	for i := s.Cut(); i < at; i++ {
		kept += climb(i)
	}
	kept /= float64(at - s.Cut())
	want := (counted + (window-float64(at))*kept) / window
	if at <= 300 || math.Abs(kept-100) > 0.2 || math.Abs(est-want) > 1e-9 || est > 99 {
		t.Errorf("climb with a window of %d: steady at %d with %v, want after the climb (300) with %v (kept mean %v)", window, at, est, want, kept)
	}
	// (Ten-batch pattern: 14 batches when the standard error is left out.)
	at, est = stop(noisy, window, 400)
	if at <= 20 || math.Abs(est-100) > 0.1 {
		t.Errorf("noisy flat series with a window of %d: steady at %d with %v, want a stop after 20 batches near 100", window, at, est)
	}
	// A window already counted stands for itself: the estimate is the
	// batches' mean, the transient included, and nothing is projected.
	s = DefaultSteadyState()
	s.Window = 20
	sum := 0.0
	for i := range 24 {
		s.Add(climb(i * 20))
		sum += climb(i * 20)
	}
	if m, rel := s.Estimate(); math.Abs(m-sum/24) > 1e-9 || rel != 0 {
		t.Errorf("window of 20 after 24 batches: estimate %v ±%v, want %v ±0", m, rel, sum/24)
	}
}
