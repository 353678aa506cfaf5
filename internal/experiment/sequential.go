package experiment

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"
)

// Sequential is a plan's stopping rule for runs (sequential estimation
// across runs): Plan.Runs becomes the most runs a configuration gets. In
// each machine, kernel, workload and load (a cell: tip and every variant at
// that load) a variant's column stops adding run indices once its
// comparison with tip is settled, and tip's once the last variant's has.
//
// The rule uses what a simulator has and a real machine does not: run i of
// tip and of every variant share one seed (DeriveSeed, common random
// numbers), so whatever the seed decides alike on both sides cancels in
// their difference. After each run index n ≥ MinRuns of a cell, for every
// variant and every metric the tables show, it takes the per-run
// differences from tip in percent of tip's mean, d_i = 100·(v_i − t_i) /
// |mean t|, and their t-interval. A comparison is settled when that
// interval excludes 0 (the sign is known) or its half-width is at most
// WithinPct (any difference is smaller than the resolution asked for). A
// plan without variants settles on tip's own interval of its mean, in
// percent of it. A column stops when all its comparisons are settled, or
// at Plan.Runs; tip runs as many runs as its longest variant.
//
// Looking after every run index inflates the chance of settling on a sign
// by chance; each look therefore uses confidence 1 − 0.05/L, L = Runs −
// MinRuns + 1 looks (Bonferroni), so the chance that any look of one
// comparison settles a sign that is not there stays at most 5%.
//
// Which runs a cell needs depends only on the records of its lower run
// indices, so a sequential sweep runs the same runs, with the same
// results, whatever --jobs, the order runs finish in, or a --resume.
// Shards of a sequential plan are whole cells (Plan.Shard).
type Sequential struct {
	MinRuns   int     `json:"min_runs"`
	WithinPct float64 `json:"within_pct"`
}

// DefaultWithinPct is the resolution of a sequential plan that does not
// give one: one percent, about what a posted table's rounding shows.
const DefaultWithinPct = 1.0

// cellSize is the number of points of one cell: every variant's runs.
func (p *Plan) cellSize() int { return len(p.Variants) * p.Runs }

// cellOf is the cell of a point: points come in canonical order (machine,
// kernel, workload, load, variant, run), so a cell's points are
// consecutive.
func (p *Plan) cellOf(pt *Point) int { return pt.Index / p.cellSize() }

// Cells is the number of cells of the plan.
func (p *Plan) Cells() int { return len(p.points) / p.cellSize() }

// cellNeed is how many run indices each column of cell c needs given the
// records rec returns (nil: not run yet), tip first, and whether all of
// them are there. Without a stopping rule every column needs Plan.Runs.
// With one, every column starts at MinRuns; a variant's column stops at
// the first run count at which its comparison with tip is settled (or at
// Plan.Runs), and tip's runs as far as the last variant's, which its
// comparisons need.
func (p *Plan) cellNeed(c int, rec func(index int) *Record) (need []int, complete bool) {
	nv := len(p.Variants)
	need = make([]int, nv)
	k := p.Runs
	if p.Sequential != nil {
		k = min(max(p.Sequential.MinRuns, 1), p.Runs)
	}
	active := make([]bool, nv)
	for v := range active {
		active[v] = v > 0 || nv == 1
	}
	for {
		for v := range need {
			if active[v] || v == 0 {
				need[v] = k
			}
		}
		for v := range need {
			for r := 0; r < need[v]; r++ {
				if rec(p.pointIndex(c, v, r)) == nil {
					return need, false
				}
			}
		}
		left := false
		for v := range active {
			if !active[v] {
				continue
			}
			if k >= p.Runs || p.Sequential == nil || p.settled(c, v, k, rec) {
				active[v] = false
			} else {
				left = true
			}
		}
		if !left {
			return need, true
		}
		k++
	}
}

// pointIndex is the index of variant v's run r in cell c.
func (p *Plan) pointIndex(c, v, r int) int { return c*p.cellSize() + v*p.Runs + r }

// settled reports whether column v of cell c is settled after n runs
// (Sequential's rule): its paired difference from tip for every metric
// the tables show, or for tip alone (v = 0, a plan without variants) its
// own interval.
func (p *Plan) settled(c, v, n int, rec func(index int) *Record) bool {
	seq := p.Sequential
	within := seq.WithinPct // Resolve and parsePlan make it positive
	conf := seq.Confidence(p.Runs)
	w := &p.Workloads[p.points[c*p.cellSize()].Workload]
	metrics := w.Metrics
	if len(metrics) == 0 {
		if ms := rec(p.pointIndex(c, 0, 0)).Metrics; len(ms) > 0 {
			metrics = []string{ms[0].Name}
		}
	}
	values := func(v int, name string) ([]float64, bool) {
		xs := make([]float64, n)
		for r := 0; r < n; r++ {
			x, ok := rec(p.pointIndex(c, v, r)).Metric(name)
			if !ok || math.IsNaN(x) || math.IsInf(x, 0) {
				return nil, false
			}
			xs[r] = x
		}
		return xs, true
	}
	for _, name := range metrics {
		tip, ok := values(0, name)
		if !ok {
			return false
		}
		scale := math.Abs(stat.Mean(tip, nil))
		if scale == 0 {
			return false
		}
		if v == 0 {
			for i := range tip {
				tip[i] = 100 * tip[i] / scale
			}
			if _, half := tInterval(tip, conf); !(half <= within) {
				return false
			}
			continue
		}
		xs, ok := values(v, name)
		if !ok {
			return false
		}
		for i := range xs {
			xs[i] = 100 * (xs[i] - tip[i]) / scale
		}
		if !seq.Settled(xs, p.Runs) {
			return false
		}
	}
	return true
}

// Confidence is the confidence of each look of the rule in a plan of runs
// runs at most: 1 − 0.05/L over its L = runs − MinRuns + 1 looks.
func (q *Sequential) Confidence(runs int) float64 {
	looks := runs - max(q.MinRuns, 1) + 1
	return 1 - 0.05/float64(max(looks, 1))
}

// WithinResolution reports whether paired differences d (in percent of
// tip's mean, as the rule takes them) are settled by the resolution alone:
// their interval at the rule's confidence is within ±WithinPct and does
// not exclude 0. Such a comparison's sign is not settled, only its size.
func (q *Sequential) WithinResolution(d []float64, runs int) bool {
	mean, half := tInterval(d, q.Confidence(runs))
	return half <= q.WithinPct && !(math.Abs(mean) > half)
}

// Settled reports whether paired differences d (in percent of tip's
// mean, as the rule takes them) settle a comparison after len(d) of at
// most runs runs: their interval at the rule's confidence excludes 0, or
// its half-width is at most WithinPct. The fidelity corpus's deltas stop
// adding seeds by it too (fidelity.Plan.Extend).
func (q *Sequential) Settled(d []float64, runs int) bool {
	mean, half := tInterval(d, q.Confidence(runs))
	return math.Abs(mean) > half || half <= q.WithinPct
}

// tInterval is the mean of xs and the half-width of its two-sided
// t-interval at confidence conf (0 when every value is the same: the
// simulation is exact there; +Inf with one value).
func tInterval(xs []float64, conf float64) (mean, half float64) {
	if len(xs) < 2 {
		return stat.Mean(xs, nil), math.Inf(1)
	}
	mean, sd := stat.MeanStdDev(xs, nil)
	if sd == 0 {
		return mean, 0
	}
	q := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(len(xs) - 1)}.Quantile(1 - (1-conf)/2)
	return mean, q * sd / math.Sqrt(float64(len(xs)))
}

// Needed says, for every point of the plan, whether the plan needs its run
// given the records present (recs in canonical order, nil where missing):
// all points without a stopping rule; with one, the run indices each
// column of each cell needs (cellNeed), so a run the rule left out is not
// missing.
func (p *Plan) Needed(recs []*Record) []bool {
	need := make([]bool, len(p.points))
	rec := func(i int) *Record { return recs[i] }
	for c := 0; c < p.Cells(); c++ {
		ns, _ := p.cellNeed(c, rec)
		for v, n := range ns {
			for r := 0; r < n; r++ {
				need[p.pointIndex(c, v, r)] = true
			}
		}
	}
	return need
}

// String describes the rule for tables and messages.
func (q *Sequential) String() string {
	if q == nil {
		return "every run"
	}
	return fmt.Sprintf("sequential, at least %d runs, stop when every paired difference from tip excludes 0 or is within ±%g%%", q.MinRuns, q.WithinPct)
}
