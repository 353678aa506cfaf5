// Package score compares simulated results with the published ones of the
// fidelity corpus: per point the ratio of the simulated value to the
// published one, per delta (a patched column against tip in one row) the
// simulated change against the published change, and a summary over the
// corpus. It also writes them: the tables `schedlab fidelity` prints, its
// JSON, and docs/fidelity.md.
//
// # Definitions
//
// A point's simulated value is the mean, over its seeds, of the run's
// metric times the case's scale, with the 95% t-interval of that mean
// (benchmath's AssumeNormal, as experiment's tables compute it); its ratio
// is simulated / published. A point is within 2× when 1/2 ≤ ratio ≤ 2 and
// within 25% when |ratio − 1| ≤ 0.25. The median |log ratio| is the
// median over points of |ln ratio|: 0 is exact, ln 2 ≈ 0.69 is a factor
// of two.
//
// A delta's percentage change is positive when the column is better than
// tip (faster, lower latency, higher throughput: AMD's and mmtests'
// convention, and `schedlab compare`'s). The published change is
// 100·(tip − column)/tip for lower-is-better metrics and
// 100·(column − tip)/tip for higher-is-better ones. The simulated change
// is the mean over seeds of each seed's change (tip and column run with
// the same seeds, so the comparison is paired), with its 95% t-interval.
// A delta's simulated sign is read from its interval, not its mean: it
// has the published sign when its 95% interval excludes zero on the
// published change's side, it is "no effect" when the interval spans zero
// (or there is none: fewer than two seeds), and "opposite" when the
// interval excludes zero on the other side. A delta is within 2× when it
// has the published sign and 1/2 ≤ simulated/published ≤ 2. (Until
// 2026-12 a simulated mean of either sign counted, however wide its
// interval: 21 of the 27 "same sign" deltas of 8a744e8 had intervals that
// spanned zero.)
//
// A delta whose source itself calls its published change noise,
// run-to-run variation or the effect of an overloaded system (the case's
// rows[].noise) is scored like the others but counted apart: the
// summary's delta figures leave it out and count it in Noise.
//
// Points and deltas of rows that a cost parameter was fitted on (the
// case's fitted:) are in-sample; the report gives the summary of the
// in-sample and of the out-of-sample ones apart, since a fit's own points
// say little about the model.
//
// A published delta is significant when it is beyond the spread the
// source published: with a published sd for tip or the column (a missing
// one counts as 0), when |column − tip| > √(sd_tip² + sd_column²);
// without any, when |published change| ≥ 5% (SignificantPct). Only
// significant deltas count in the summary's delta figures; the others are
// noise the source could not resolve either.
//
// A significant delta of a row without a published sd whose tip the same
// author published in at least 3 reports of what schedlab runs as the
// same measurement (fidelity.TipSpread) is also compared with that
// spread: it is within the author's spread when |published change| ≤
// √2 × the spread's coefficient of variation, the 5%-rule's counterpart
// of the published-sd rule above with that spread as each column's sd.
// It stays among the significant deltas and is counted again in
// InAuthorSpread, so a reader can see how many of them the author's own
// tip measurements could not resolve.
package score

import (
	"math"
	"sort"

	"golang.org/x/perf/benchmath"
	"gonum.org/v1/gonum/stat"
)

// Confidence is the level of every interval.
const Confidence = 0.95

// SignificantPct is the published change, in percent, that counts as
// significant when the source gives no sd.
const SignificantPct = 5.0

// Point is one published value of a simulated column and its simulated
// counterpart.
type Point struct {
	Load      string `json:"load"`
	Column    string `json:"column"`
	Variant   string `json:"variant,omitempty"`
	Published Num    `json:"published"`
	// SD is the published standard deviation (NaN, null in JSON, when
	// not given).
	SD Num `json:"published_sd"`
	// Runs are the simulated metric of each seed, unscaled, in seed
	// order.
	Runs []float64 `json:"runs"`
	// Simulated is the mean of Runs times the scale, Lo and Hi its 95%
	// interval (NaN with fewer than 2 runs).
	Simulated Num `json:"simulated"`
	Lo        Num `json:"simulated_lo"`
	Hi        Num `json:"simulated_hi"`
	// SimSD is the sample standard deviation of Runs times the scale,
	// the spread between seeds (NaN with fewer than 2 runs).
	SimSD    Num  `json:"simulated_sd"`
	Ratio    Num  `json:"ratio"`
	Within2x bool `json:"within_2x"`
	Within25 bool `json:"within_25pct"`
	// Fitted names the cost parameters fitted on this point's row (the
	// point is in-sample), none when it is out-of-sample.
	Fitted []string `json:"fitted,omitempty"`
}

// The simulated sign of a delta (Delta.Sign).
const (
	// SignPublished: the 95% interval excludes zero on the published
	// change's side.
	SignPublished = "published"
	// SignNone: the interval spans zero, or there is none (no effect).
	SignNone = "none"
	// SignOpposite: the interval excludes zero on the other side.
	SignOpposite = "opposite"
)

// Delta is one patched column against tip in one row.
type Delta struct {
	Load         string `json:"load"`
	Column       string `json:"column"`
	Variant      string `json:"variant"`
	PublishedPct Num    `json:"published_pct"`
	Significant  bool   `json:"significant"`
	SimulatedPct Num    `json:"simulated_pct"`
	Lo           Num    `json:"simulated_lo"`
	Hi           Num    `json:"simulated_hi"`
	// Seeds is the number of paired seeds behind the simulated change.
	Seeds int `json:"seeds"`
	// Sign is SignPublished, SignNone or SignOpposite; SameSign is
	// Sign == SignPublished.
	Sign     string `json:"sign"`
	SameSign bool   `json:"same_sign"`
	Within2x bool   `json:"within_2x"`
	// Noise is what the source says to call its published change noise
	// ("" for none): such a delta is counted apart.
	Noise string `json:"noise,omitempty"`
	// Fitted names the cost parameters fitted on this delta's row.
	Fitted []string `json:"fitted,omitempty"`
	// SpreadReports and SpreadCoVPct are the spread of the row's tip
	// value across its author's reports (fidelity.TipSpread): how many
	// reports, and the coefficient of variation in percent. Zero when
	// fewer than 3 reports published it.
	SpreadReports int `json:"author_spread_reports,omitempty"`
	SpreadCoVPct  Num `json:"author_spread_cov_pct,omitempty"`
	// InAuthorSpread: the delta is significant by the 5% rule (its row
	// has no published sd), and |published change| ≤ √2 × SpreadCoVPct.
	InAuthorSpread bool `json:"in_author_spread,omitempty"`
}

// SetAuthorSpread records the spread of the row's tip value across its
// author's reports and whether the published change lies within it
// (InAuthorSpread). publishedSD is whether the row has a published sd:
// the source's own sd then decides significance and the spread is only
// recorded.
func (d *Delta) SetAuthorSpread(reports int, cov float64, publishedSD bool) {
	d.SpreadReports, d.SpreadCoVPct = reports, Num(100*cov)
	d.InAuthorSpread = d.Significant && !publishedSD && math.Abs(float64(d.PublishedPct)) <= math.Sqrt2*100*cov
}

// ScorePoint scores a published value against the simulated runs of its
// point (unscaled, in seed order).
func ScorePoint(published, scale float64, runs []float64) Point {
	p := Point{Published: Num(published), SD: Num(math.NaN()), Runs: append([]float64{}, runs...)}
	mean, lo, hi := meanCI(runs)
	p.Simulated, p.Lo, p.Hi = Num(mean*scale), Num(lo*scale), Num(hi*scale)
	p.SimSD = Num(sampleSD(runs) * scale)
	p.Ratio = Num(float64(p.Simulated) / published)
	r := float64(p.Ratio)
	p.Within2x = r >= 0.5 && r <= 2
	p.Within25 = math.Abs(r-1) <= 0.25
	return p
}

// ZeroPct is the smallest simulated change, in percent, that has a sign:
// half the last digit the tables print (one decimal).
const ZeroPct = 0.05

// ScoreDelta scores a published change from tip to a column against the
// simulated runs of both (paired by seed: tip[i] and col[i] ran with one
// seed). sdTip and sdCol are the published sds, NaN when not given.
func ScoreDelta(pubTip, pubCol, sdTip, sdCol float64, tip, col []float64, higherBetter bool) Delta {
	d := Delta{PublishedPct: Num(PctChange(pubTip, pubCol, higherBetter))}
	if math.IsNaN(sdTip) && math.IsNaN(sdCol) {
		d.Significant = math.Abs(float64(d.PublishedPct)) >= SignificantPct
	} else {
		a, b := zeroNaN(sdTip), zeroNaN(sdCol)
		d.Significant = math.Abs(pubCol-pubTip) > math.Sqrt(a*a+b*b)
	}
	n := min(len(tip), len(col))
	pcts := make([]float64, n)
	for i := range pcts {
		pcts[i] = PctChange(tip[i], col[i], higherBetter)
	}
	mean, lo, hi := meanCI(pcts)
	d.SimulatedPct, d.Lo, d.Hi, d.Seeds = Num(mean), Num(lo), Num(hi), n
	d.Sign = IntervalSign(float64(d.PublishedPct), lo, hi)
	d.SameSign = d.Sign == SignPublished
	if d.SameSign {
		r := mean / float64(d.PublishedPct)
		d.Within2x = r >= 0.5 && r <= 2
	}
	return d
}

// IntervalSign classifies a simulated change by its interval [lo, hi]
// against a published change pub: SignPublished when the interval
// excludes zero on pub's side, SignOpposite when on the other, SignNone
// when it spans zero or there is no interval (NaN) or no published sign.
// An interval whose ends are both within ZeroPct of zero (the tables
// print them ±0.0%: exact runs that agree to the digit) is SignNone too.
func IntervalSign(pub, lo, hi float64) string {
	switch {
	case pub == 0 || math.IsNaN(pub) || math.IsNaN(lo) || math.IsNaN(hi):
		return SignNone
	case lo > 0 && hi >= ZeroPct || hi < 0 && lo <= -ZeroPct:
		if (lo > 0) == (pub > 0) {
			return SignPublished
		}
		return SignOpposite
	}
	return SignNone
}

// PctChange is the change from base to v in percent, positive when v is
// better.
func PctChange(base, v float64, higherBetter bool) float64 {
	if base == 0 || math.IsNaN(base) || math.IsNaN(v) {
		return math.NaN()
	}
	if higherBetter {
		return (v - base) / base * 100
	}
	return (base - v) / base * 100
}

func zeroNaN(x float64) float64 {
	if math.IsNaN(x) {
		return 0
	}
	return x
}

// meanCI is the mean of xs and its 95% t-interval (benchmath's
// AssumeNormal); the interval is NaN with fewer than two values.
// sampleSD is the sample standard deviation (n−1, gonum's stat.StdDev),
// NaN below 2 values.
func sampleSD(xs []float64) float64 {
	if len(xs) < 2 {
		return math.NaN()
	}
	return stat.StdDev(xs, nil)
}

func meanCI(xs []float64) (mean, lo, hi float64) {
	if len(xs) == 0 {
		return math.NaN(), math.NaN(), math.NaN()
	}
	s := benchmath.AssumeNormal.Summary(benchmath.NewSample(append([]float64{}, xs...), &benchmath.DefaultThresholds), Confidence)
	if len(xs) < 2 {
		return s.Center, math.NaN(), math.NaN()
	}
	return s.Center, s.Lo, s.Hi
}

// Summary is the corpus's figures.
type Summary struct {
	Points   int `json:"points"`
	Within2x int `json:"within_2x"`
	Within25 int `json:"within_25pct"`
	// MedianAbsLogRatio is the median of |ln ratio| over the points.
	MedianAbsLogRatio Num `json:"median_abs_log_ratio"`
	Deltas            int `json:"deltas"`
	// Significant counts the significant deltas not marked noise;
	// SameSign (the published sign), NoEffect, Opposite and
	// DeltaWithin2x count among them.
	Significant   int `json:"significant_deltas"`
	SameSign      int `json:"significant_same_sign"`
	NoEffect      int `json:"significant_no_effect"`
	Opposite      int `json:"significant_opposite"`
	DeltaWithin2x int `json:"significant_within_2x"`
	// Noise counts the significant deltas whose source calls them noise
	// (counted apart), NoiseSameSign those of them with the published
	// sign.
	Noise         int `json:"significant_noise"`
	NoiseSameSign int `json:"significant_noise_same_sign"`
	// InAuthorSpread counts the significant deltas (not noise) within
	// their author's spread across reports (Delta.InAuthorSpread),
	// InAuthorSpreadSameSign those of them with the published sign; both
	// are also in Significant and its parts.
	InAuthorSpread         int `json:"significant_in_author_spread"`
	InAuthorSpreadSameSign int `json:"significant_in_author_spread_same_sign"`
}

// Summarize computes the summary of points and deltas.
func Summarize(points []Point, deltas []Delta) Summary {
	var s Summary
	var logs []float64
	for _, p := range points {
		s.Points++
		if p.Within2x {
			s.Within2x++
		}
		if p.Within25 {
			s.Within25++
		}
		logs = append(logs, math.Abs(math.Log(float64(p.Ratio))))
	}
	s.MedianAbsLogRatio = Num(median(logs))
	for _, d := range deltas {
		s.Deltas++
		if !d.Significant {
			continue
		}
		if d.Noise != "" {
			s.Noise++
			if d.SameSign {
				s.NoiseSameSign++
			}
			continue
		}
		s.Significant++
		if d.InAuthorSpread {
			s.InAuthorSpread++
			if d.SameSign {
				s.InAuthorSpreadSameSign++
			}
		}
		switch d.Sign {
		case SignPublished:
			s.SameSign++
		case SignOpposite:
			s.Opposite++
		default:
			s.NoEffect++
		}
		if d.Within2x {
			s.DeltaWithin2x++
		}
	}
	return s
}

// median of xs (NaN for none; NaNs sort last and count, so a point
// without a simulated value makes the median no better).
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	v := append([]float64{}, xs...)
	sort.Slice(v, func(i, j int) bool { return v[i] < v[j] || !math.IsNaN(v[i]) && math.IsNaN(v[j]) })
	n := len(v)
	if n%2 == 1 {
		return v[n/2]
	}
	return (v[n/2-1] + v[n/2]) / 2
}
