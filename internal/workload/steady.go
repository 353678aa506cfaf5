package workload

import (
	"math"

	"golang.org/x/perf/benchmath"
	"gonum.org/v1/gonum/stat/distuv"
)

// FullLengther is a benchmark that, by default, stops once its metric has
// reached a steady state with a tight interval (sequential estimation,
// SteadyState), instead of simulating the whole duration its command line
// asks for. SetFullLength(true) makes it run the posted duration
// (`--full-length`); the run sets it before Start.
type FullLengther interface {
	SetFullLength(full bool)
}

// SteadyState is the stopping rule of a throughput run's sequential
// estimation: the run's rate is sampled in batches of equal simulated
// length (batch means); the start-up transient is cut off by MSER, the
// marginal standard error rule (White, "An effective truncation heuristic
// for bias reduction in simulation output", Simulation 69(6), 1997): of
// the cut points d in the first half of the batches, the one that
// minimises the remaining batches' squared error sum over (n-d)²; and the
// run may stop once
//
//   - at least MinBatches batches remain after the cut,
//   - the 95% confidence interval of their mean (Student's t, as
//     benchmath's AssumeNormal computes it) is within ±RelWidth of the mean,
//   - the means of the first and the second half of the remaining
//     batches differ by at most RelWidth of the mean (no trend left),
//   - and, when the run stands for the mean over a window longer than it
//     has simulated (Window > 0: a posted -t 60 averages 59 s), no trend
//     that could move that mean by more than RelWidth: with b the
//     least-squares slope of the k remaining batches per batch and se its
//     standard error, (|b| + t·se)·|r − c|·(W − N)/W ≤ RelWidth·|mean|,
//     where W is Window, N the batches counted (the cut ones included), r
//     the middle index of the W − N batches still to come, c that of the
//     remaining batches and t Student's 97.5% point with k−2 degrees of
//     freedom. The halves test
//     alone passes a drift of 0.3% a second over eight 50 ms batches,
//     which over a minute is 9%.
//
// The estimate is then the mean of the remaining batches; with a Window,
// the window's mean with its batches still to come at that rate: every
// counted batch, the transient included, is part of the window the real
// tool averages. Batches are in simulated time, so the decision is
// deterministic.
type SteadyState struct {
	MinBatches int
	RelWidth   float64
	// Window is the number of batches, from the first one added, whose
	// mean the run stands for; 0 means the run stands for the steady
	// state alone (no trend test).
	Window float64

	batches []float64
}

// Cut is MSER's truncation point: the number of leading batches that are
// the transient.
func (s *SteadyState) Cut() int {
	n := len(s.batches)
	best, bestD := math.Inf(1), 0
	sum, sq := 0.0, 0.0
	// Suffix sums from the end; d runs down from n-1 to 0, and only the
	// first half (d <= n/2) is a candidate.
	for d := n - 1; d >= 0; d-- {
		x := s.batches[d]
		sum += x
		sq += x * x
		m := float64(n - d)
		if d > n/2 || m < 2 {
			continue
		}
		e := (sq - sum*sum/m) / (m * m)
		if e <= best {
			best, bestD = e, d
		}
	}
	return bestD
}

// DefaultSteadyState is the rule the workloads use: 8 batches, ±1%.
func DefaultSteadyState() SteadyState { return SteadyState{MinBatches: 8, RelWidth: 0.01} }

// Add counts one batch's rate.
func (s *SteadyState) Add(rate float64) { s.batches = append(s.batches, rate) }

// Batches is the number of batches counted.
func (s *SteadyState) Batches() int { return len(s.batches) }

// Estimate is the mean of the batches after the cut and the half-width
// of its 95% interval relative to it (NaN below two batches). With a
// Window it is the window's mean: the batches counted, and the rest of
// the window at the mean after the cut, whose interval is then the only
// uncertain part.
func (s *SteadyState) Estimate() (mean, relHalfWidth float64) {
	mean, rel := estimate(s.batches[s.Cut():])
	w, n := s.Window, float64(len(s.batches))
	if w <= 0 || math.IsNaN(mean) || mean == 0 {
		return mean, rel
	}
	sum := 0.0
	for _, v := range s.batches {
		sum += v
	}
	rest := max(w-n, 0)
	est := (sum + rest*mean) / max(w, n)
	return est, rel * rest * math.Abs(mean) / max(w, n) / math.Abs(est)
}

// Kept is the number of batches after the cut.
func (s *SteadyState) Kept() int { return len(s.batches) - s.Cut() }

func estimate(b []float64) (mean, relHalfWidth float64) {
	switch len(b) {
	case 0:
		return math.NaN(), math.NaN()
	case 1:
		return b[0], math.NaN()
	}
	sum := benchmath.AssumeNormal.Summary(benchmath.NewSample(append([]float64(nil), b...), &benchmath.DefaultThresholds), 0.95)
	if sum.Center == 0 {
		return 0, math.NaN()
	}
	return sum.Center, (sum.Hi - sum.Center) / math.Abs(sum.Center)
}

// Steady reports whether the rule allows the run to stop now.
func (s *SteadyState) Steady() bool {
	b := s.batches[s.Cut():]
	n := len(b)
	if n < s.MinBatches || n < 2 {
		return false
	}
	mean, rel := estimate(b)
	if math.IsNaN(rel) || rel > s.RelWidth {
		return false
	}
	half := n / 2
	first, second := 0.0, 0.0
	for _, v := range b[:half] {
		first += v
	}
	for _, v := range b[n-half:] {
		second += v
	}
	first /= float64(half)
	second /= float64(half)
	if math.Abs(second-first) > s.RelWidth*math.Abs(mean) {
		return false
	}
	all := float64(len(s.batches))
	if s.Window <= 0 || all >= s.Window {
		return true
	}
	if n < 3 {
		return false
	}
	slope, se := trend(b)
	q := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(n - 2)}.Quantile(0.975)
	c := all - float64(n) + float64(n-1)/2 // the kept batches' middle
	r := (all + s.Window - 1) / 2          // that of the batches to come
	frac := (s.Window - all) / s.Window
	return (math.Abs(slope)+q*se)*math.Abs(r-c)*frac <= s.RelWidth*math.Abs(mean)
}

// trend is the least-squares slope of b against its index and the slope's
// standard error (residual variance over n−2 degrees of freedom); b has at
// least three values.
func trend(b []float64) (slope, se float64) {
	n := float64(len(b))
	xm := (n - 1) / 2
	ym := 0.0
	for _, y := range b {
		ym += y
	}
	ym /= n
	sxx, sxy := 0.0, 0.0
	for i, y := range b {
		dx := float64(i) - xm
		sxx += dx * dx
		sxy += dx * (y - ym)
	}
	slope = sxy / sxx
	rss := 0.0
	for i, y := range b {
		r := y - ym - slope*(float64(i)-xm)
		rss += r * r
	}
	return slope, math.Sqrt(rss / (n - 2) / sxx)
}
