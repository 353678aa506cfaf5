package score

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/schedlab/schedlab/internal/experiment"
	"github.com/schedlab/schedlab/internal/fidelity"
	"github.com/schedlab/schedlab/internal/golden"
	"github.com/schedlab/schedlab/internal/workload"
)

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

// t quantiles: t(0.975; 2) and t(0.975; 1), from the t distribution's
// closed forms (df=2: t = sqrt(2/(4p(1-p)) - 2) with p=0.975; df=1:
// tan(pi(p-1/2))).
var (
	t2 = math.Sqrt(2/(4*0.975*0.025) - 2)
	t1 = math.Tan(math.Pi * (0.975 - 0.5))
)

func TestScorePoint(t *testing.T) {
	// Runs 18, 20, 22: mean 20, sd 2, 95% half-width t2·2/√3.
	p := ScorePoint(10, 1, []float64{18, 20, 22})
	half := t2 * 2 / math.Sqrt(3)
	if !near(float64(p.Simulated), 20) || !near(float64(p.Lo), 20-half) || !near(float64(p.Hi), 20+half) {
		t.Errorf("simulated %v [%v, %v], want 20 [%v, %v]", p.Simulated, p.Lo, p.Hi, 20-half, 20+half)
	}
	if float64(p.Ratio) != 2 || !p.Within2x || p.Within25 {
		t.Errorf("ratio %v: exactly 2 is within 2× (inclusive) and not within 25%%", p.Ratio)
	}
	// The scale multiplies the mean and the interval; a ratio of 1.25
	// is within 25% (inclusive); no spread gives a zero-width interval.
	p = ScorePoint(8, 10, []float64{1, 1})
	if float64(p.Simulated) != 10 || float64(p.Lo) != 10 || float64(p.Hi) != 10 || float64(p.Ratio) != 1.25 || !p.Within25 || !p.Within2x {
		t.Errorf("scaled: %+v", p)
	}
	// One run: no interval; a ratio of 1/4 is beyond 2×.
	p = ScorePoint(4, 1, []float64{1})
	if !math.IsNaN(float64(p.Lo)) || !math.IsNaN(float64(p.Hi)) || float64(p.Ratio) != 0.25 || p.Within2x || p.Within25 {
		t.Errorf("one run: %+v", p)
	}
	// Just outside each bound.
	if p := ScorePoint(1, 1, []float64{2.0001}); p.Within2x {
		t.Error("ratio 2.0001 counted within 2×")
	}
	if p := ScorePoint(1, 1, []float64{0.7499}); p.Within25 || !p.Within2x {
		t.Errorf("ratio 0.7499: within 25%% %v, within 2× %v", p.Within25, p.Within2x)
	}
}

func TestScoreDelta(t *testing.T) {
	nan := math.NaN()
	for _, tc := range []struct {
		name           string
		pubTip, pubCol float64
		sdTip, sdCol   float64
		tip, col       []float64
		higher         bool
		pub, sim       float64
		sig            bool
		sign           string
		within         bool
	}{
		// Published 10 → 9 (lower is better): +10%, significant (≥ 5%);
		// simulated 10 → 11 at every seed: -10% with no spread, an
		// interval on the other side.
		{"opposite", 10, 9, nan, nan, []float64{10, 10}, []float64{11, 11}, false, 10, -10, true, SignOpposite, false},
		// +4% is not significant without an sd; the paired changes
		// +10% and +5% average +7.5%, but their interval spans zero: no
		// effect, whatever the mean's sign.
		{"wide", 10, 9.6, nan, nan, []float64{10, 20}, []float64{9, 19}, false, 4, 7.5, false, SignNone, false},
		// The same mean with a narrow interval has the published sign,
		// 1.875× the published change.
		{"narrow", 10, 9.6, nan, nan, []float64{10, 20, 10}, []float64{9.25, 18.5, 9.25}, false, 4, 7.5, false, SignPublished, true},
		// An sd makes a 1% change significant when it exceeds it…
		{"beyond sd", 10, 9.9, 0.05, nan, []float64{10, 10}, []float64{9.9, 9.9}, false, 1, 1, true, SignPublished, true},
		// …and a 10% change not when √(1²+1²) is larger.
		{"within sd", 10, 9, 1, 1, []float64{10, 10}, []float64{9, 9}, false, 10, 10, false, SignPublished, true},
		// One seed has no interval: no effect.
		{"one seed", 10, 9, nan, nan, []float64{10}, []float64{9}, false, 10, 10, true, SignNone, false},
		// Higher is better: 100 → 120 is +20%; simulated +30%.
		{"higher", 100, 120, nan, nan, []float64{100, 100}, []float64{130, 130}, true, 20, 30, true, SignPublished, true},
		// +50% simulated against +20% published is beyond 2×: 2.5×.
		{"too big", 100, 120, nan, nan, []float64{100, 100}, []float64{150, 150}, true, 20, 50, true, SignPublished, false},
		// No simulated change has no sign, nor one that prints as 0.0%.
		{"zero", 10, 9, nan, nan, []float64{10, 12}, []float64{10, 12}, false, 10, 0, true, SignNone, false},
		{"0.0%", 100, 110, nan, nan, []float64{100, 100}, []float64{100.04, 100.04}, true, 10, 0.04, true, SignNone, false},
		{"0.1%", 100, 110, nan, nan, []float64{100, 100}, []float64{100.1, 100.1}, true, 10, 0.1, true, SignPublished, false},
	} {
		d := ScoreDelta(tc.pubTip, tc.pubCol, tc.sdTip, tc.sdCol, tc.tip, tc.col, tc.higher)
		if !near(float64(d.PublishedPct), tc.pub) || !near(float64(d.SimulatedPct), tc.sim) || d.Significant != tc.sig || d.Sign != tc.sign ||
			d.SameSign != (tc.sign == SignPublished) || d.Within2x != tc.within || d.Seeds != len(tc.tip) {
			t.Errorf("%s: %+v, want published %v simulated %v significant %v sign %s within 2× %v", tc.name, d, tc.pub, tc.sim, tc.sig, tc.sign, tc.within)
		}
	}
	// The interval of the paired changes +10%, +5%: 7.5 ± t1·sd/√2,
	// sd = √12.5.
	d := ScoreDelta(10, 9.6, nan, nan, []float64{10, 20}, []float64{9, 19}, false)
	half := t1 * math.Sqrt(12.5) / math.Sqrt(2)
	if !near(float64(d.Lo), 7.5-half) || !near(float64(d.Hi), 7.5+half) {
		t.Errorf("interval [%v, %v], want [%v, %v]", d.Lo, d.Hi, 7.5-half, 7.5+half)
	}
}

// IntervalSign reads the sign from the interval alone: an interval that
// touches or spans zero is no effect; one that excludes it is on the
// published side or the other; one within ±ZeroPct prints as ±0.0% and
// has no sign either.
func TestIntervalSign(t *testing.T) {
	nan := math.NaN()
	for _, tc := range []struct {
		pub, lo, hi float64
		want        string
	}{
		{5, 1, 3, SignPublished},
		{5, -3, -1, SignOpposite},
		{-5, -3, -1, SignPublished},
		{-5, 1, 3, SignOpposite},
		{5, -1, 3, SignNone},
		{5, 0, 3, SignNone}, // touches zero: not excluded
		{5, -3, 0, SignNone},
		{5, 0.01, 0.04, SignNone}, // prints as +0.0%
		{5, 0.01, 0.05, SignPublished},
		{5, -0.05, -0.01, SignOpposite},
		{0, 1, 3, SignNone}, // no published sign
		{5, nan, nan, SignNone},
		{nan, 1, 3, SignNone},
	} {
		if got := IntervalSign(tc.pub, tc.lo, tc.hi); got != tc.want {
			t.Errorf("IntervalSign(%v, %v, %v) = %s, want %s", tc.pub, tc.lo, tc.hi, got, tc.want)
		}
	}
}

func TestSummarize(t *testing.T) {
	points := []Point{ScorePoint(10, 1, []float64{20}), ScorePoint(8, 1, []float64{10}), ScorePoint(4, 1, []float64{1})}
	nan := math.NaN()
	noise := ScoreDelta(10, 8, nan, nan, []float64{10, 10}, []float64{9, 9}, false) // significant, right sign, but the source calls it noise
	noise.Noise = "the author calls it run-to-run variation"
	deltas := []Delta{
		ScoreDelta(10, 9, nan, nan, []float64{10, 10}, []float64{11, 11}, false),       // significant, opposite
		ScoreDelta(100, 120, nan, nan, []float64{100, 100}, []float64{130, 130}, true), // significant, published sign, within 2×
		ScoreDelta(100, 120, nan, nan, []float64{100, 100}, []float64{150, 150}, true), // significant, published sign, beyond 2×
		ScoreDelta(100, 120, nan, nan, []float64{100, 100}, []float64{110, 130}, true), // significant, no effect (interval spans 0)
		ScoreDelta(10, 9.9, nan, nan, []float64{10}, []float64{9.9}, false),            // not significant (1%)
		noise,
	}
	s := Summarize(points, deltas)
	// Ratios 2, 1.25, 0.25: |ln| = ln 2, ln 1.25, ln 4; the median is ln 2.
	want := Summary{Points: 3, Within2x: 2, Within25: 1, MedianAbsLogRatio: Num(math.Ln2), Deltas: 6, Significant: 4, SameSign: 2, NoEffect: 1, Opposite: 1, DeltaWithin2x: 1, Noise: 1, NoiseSameSign: 1}
	if !near(float64(s.MedianAbsLogRatio), math.Ln2) {
		t.Errorf("median |log ratio| %v, want ln 2", s.MedianAbsLogRatio)
	}
	s.MedianAbsLogRatio = want.MedianAbsLogRatio
	if s != want {
		t.Errorf("summary %+v, want %+v", s, want)
	}
	line := s.Line()
	if line != "3 points: 2 within 2× (67%), 1 within 25% (33%), median |log ratio| 0.69 (×2.00); 6 deltas, 4 significant: 2 published sign (50%), 1 no effect (25%), 1 opposite (25%), 1 within 2× (25%); 1 called noise by their source, apart (1 of them with the published sign)" {
		t.Errorf("line %q", line)
	}
	if !regexp.MustCompile(SummaryLineRE).MatchString(line) {
		t.Error("SummaryLineRE does not match the line")
	}
	// An even count takes the middle two; nothing gives "-".
	if m := median([]float64{1, 4, 2, 3}); m != 2.5 {
		t.Errorf("median %v", m)
	}
	empty := Summarize(nil, nil)
	if l := empty.Line(); l != "0 points: 0 within 2× (-), 0 within 25% (-), median |log ratio| -; 0 deltas, 0 significant: 0 published sign (-), 0 no effect (-), 0 opposite (-), 0 within 2× (-)" || !regexp.MustCompile(SummaryLineRE).MatchString(l) {
		t.Errorf("empty line %q", l)
	}
}

func TestPctChange(t *testing.T) {
	if v := PctChange(4, 3, false); v != 25 {
		t.Errorf("lower is better, 4 → 3: %v", v)
	}
	if v := PctChange(4, 3, true); v != -25 {
		t.Errorf("higher is better, 4 → 3: %v", v)
	}
	if v := PctChange(0, 3, true); !math.IsNaN(v) {
		t.Errorf("from 0: %v", v)
	}
}

// Build pairs each run's metric with its point and delta: records made up
// here, value = 1 + row + 10·column + 0.5·seed, give known means.
func TestBuild(t *testing.T) {
	c, err := fidelity.Load(os.DirFS("../testdata/corpus"), "testdata/corpus")
	if err != nil {
		t.Fatal(err)
	}
	cases, _ := c.Select("synthetic-hikey-messaging")
	p, err := fidelity.NewPlan(c, cases, fidelity.PlanOptions{Seeds: 2})
	if err != nil {
		t.Fatal(err)
	}
	// Rows 1 (tip, outside) and 2 (tip, outside), 2 seeds: 8 runs; the
	// unsimulated column is not run.
	if len(p.Runs) != 8 {
		t.Fatalf("%d runs", len(p.Runs))
	}
	recs := make([]*experiment.Record, len(p.Runs))
	for i, r := range p.Runs {
		v := 1 + float64(r.Row) + 10*float64(r.Column) + 0.5*float64(r.SeedIndex)
		recs[i] = &experiment.Record{Key: r.Key}
		recs[i].Metrics = workload.Metrics{{Name: "time_s", Value: v}}
	}
	rep, err := Build(p, recs, "testdata/corpus", "abc")
	if err != nil {
		t.Fatal(err)
	}
	cs := rep.Cases[0]
	if len(cs.Points) != 4 || len(cs.Deltas) != 2 || strings.Join(cs.Unsimulated, ",") != "other" {
		t.Fatalf("points %d, deltas %d, unsimulated %v", len(cs.Points), len(cs.Deltas), cs.Unsimulated)
	}
	// Row 2's outside: runs 12, 12.5 → mean 12.25, × scale 10 = 122.5
	// against 0.33.
	pt := cs.Points[3]
	if pt.Load != "2" || pt.Column != "outside" || float64(pt.Simulated) != 122.5 || !near(float64(pt.Ratio), 122.5/0.33) || !math.IsNaN(float64(pt.SD)) {
		t.Errorf("point %+v", pt)
	}
	if sd := cs.Points[0].SD; float64(sd) != 0.001 {
		t.Errorf("row 1 tip's published sd %v", sd)
	}
	// Row 1's delta: tip 1, 1.5; outside 11, 11.5 (lower is better):
	// per seed -1000% and -666.7%.
	d := cs.Deltas[0]
	if d.Load != "1" || d.Variant != "blocked-load-outside-newidle" || !near(float64(d.SimulatedPct), (-1000-2000.0/3)/2) || !near(float64(d.PublishedPct), 5) || !d.Significant || d.SameSign {
		t.Errorf("delta %+v", d)
	}
	if rep.Counts != (Counts{Points: 4, Sources: 1, Threads: 1, Machines: 1, Benchmarks: 1, Cases: 1}) {
		t.Errorf("counts %+v", rep.Counts)
	}
	if l := rep.Counts.Line(); l != "4 points from 1 source (1 thread), 1 machine, 1 benchmark (1 case)" || !regexp.MustCompile(CountsLineRE).MatchString(l) {
		t.Errorf("counts line %q", l)
	}
	if rep.Summary.Points != 4 || rep.Summary.Deltas != 2 {
		t.Errorf("summary %+v", rep.Summary)
	}
	// One source: its summary is the corpus's.
	if len(rep.Sources) != 1 || rep.Sources[0].Cases != 1 || rep.Sources[0].MessageID != "<synthetic-1@example.invalid>" || rep.Sources[0].Summary != rep.Summary {
		t.Errorf("sources %+v", rep.Sources)
	}
}

// The summary per source groups cases by message-id (else URL) and sorts
// the sources by date.
func TestBySource(t *testing.T) {
	pt := ScorePoint(10, 1, []float64{10})
	far := ScorePoint(10, 1, []float64{100})
	cases := []*Case{
		{ID: "b1", MessageID: "<b@x>", Author: "B", Date: "2022-06-22", Points: []Point{pt}},
		{ID: "a", URL: "https://a.example", Author: "A", Date: "2019-10-18", Points: []Point{far}},
		{ID: "b2", MessageID: "<b@x>", Author: "B", Date: "2022-06-22", Points: []Point{pt, far}},
	}
	srcs := bySource(cases)
	if len(srcs) != 2 || srcs[0].Author != "A" || srcs[1].Author != "B" || srcs[1].Cases != 2 || srcs[1].Summary.Points != 3 || srcs[1].Summary.Within2x != 2 || srcs[0].Summary.Within2x != 0 {
		t.Errorf("sources %+v", srcs)
	}
}

func TestThread(t *testing.T) {
	if a, b := Thread("Re: RE:  [PATCH v2] sched/fair: X"), Thread("[PATCH v2] sched/fair:  x"); a != b {
		t.Errorf("%q != %q", a, b)
	}
}

// The text and Markdown layouts, pinned byte for byte on made-up records
// (so they do not move with the model): the whole synthetic corpus, two
// seeds, value = published × (1 + 0.1·column) × (1 ± 0.05 by seed).
func TestFormatsGolden(t *testing.T) {
	c, err := fidelity.Load(os.DirFS("../testdata/corpus"), "testdata/corpus")
	if err != nil {
		t.Fatal(err)
	}
	p, err := fidelity.NewPlan(c, c.Cases, fidelity.PlanOptions{Seeds: 2})
	if err != nil {
		t.Fatal(err)
	}
	recs := make([]*experiment.Record, len(p.Runs))
	for i, r := range p.Runs {
		cs := r.Case
		v := cs.Rows[r.Row].Values[r.ColumnName()] / cs.Simulate.Scale * (1 + 0.1*float64(r.Column)) * (0.95 + 0.1*float64(r.SeedIndex))
		recs[i] = &experiment.Record{Key: r.Key}
		recs[i].Metrics = workload.Metrics{{Name: cs.Metric.Name, Value: v}}
	}
	rep, err := Build(p, recs, "testdata/corpus", "0123456789abcdef")
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range []struct {
		file  string
		write func(*bytes.Buffer) error
	}{
		{"report.txt", func(b *bytes.Buffer) error { return rep.WriteText(b) }},
		{"report.md", func(b *bytes.Buffer) error { return rep.WriteMarkdown(b) }},
		{"report.json", func(b *bytes.Buffer) error { return rep.WriteJSON(b) }},
		{"list.txt", func(b *bytes.Buffer) error {
			return WriteList(b, c.Cases, func(*fidelity.Case, int, int) bool { return true }, 0)
		}},
		{"list-narrow.txt", func(b *bytes.Buffer) error {
			return WriteList(b, c.Cases, func(*fidelity.Case, int, int) bool { return true }, 60)
		}},
	} {
		var b bytes.Buffer
		if err := g.write(&b); err != nil {
			t.Fatal(err)
		}
		golden.Check(t, filepath.Join("testdata", g.file), b.Bytes())
	}
	// The JSON reads back into the same report.
	var b bytes.Buffer
	rep.WriteJSON(&b)
	var back Report
	if err := json.Unmarshal(b.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	var b2 bytes.Buffer
	back.WriteJSON(&b2)
	if !bytes.Equal(b.Bytes(), b2.Bytes()) {
		t.Error("the JSON report does not read back into itself")
	}
}

// The spread between seeds is the sample standard deviation (n−1) of
// the seeds' values, scaled as the mean is; a point whose row published
// an sd prints it beside the published one, each with its CoV.
func TestSimulatedSpread(t *testing.T) {
	p := ScorePoint(100, 10, []float64{1, 2, 3, 4})
	// mean 2.5; squared deviations 2.25+0.25+0.25+2.25 = 5 over n−1 = 3.
	if want := 10 * math.Sqrt(5.0/3); math.Abs(float64(p.SimSD)-want) > 1e-12 {
		t.Fatalf("sd %v, want %v", p.SimSD, want)
	}
	if one := ScorePoint(100, 1, []float64{7}); !math.IsNaN(float64(one.SimSD)) {
		t.Errorf("one seed: sd %v, want NaN", one.SimSD)
	}
	c := &Case{Points: []Point{p, ScorePoint(50, 1, []float64{1, 2})}}
	if l := spreadLines(c); len(l) != 0 {
		t.Errorf("no published sd, lines %q", l)
	}
	c.Points[0].Load, c.Points[0].Column, c.Points[0].SD = "128", "tip", 5
	l := spreadLines(c)
	if len(l) != 1 || l[0] != "spread, load 128 tip: simulated sd 12.91 (CoV 51.64%, 4 seeds), published sd 5 (CoV 5.00%)" {
		t.Errorf("lines %q", l)
	}
}

// TestAuthorSpread checks the author's-spread rule at its edge: with a tip
// CoV of 10% the bound is √2 × 10% = 14.142…%, so a published change of
// 14.1% lies within it and one of 14.2% does not; a delta that is not
// significant, or whose row has a published sd, is never within it; and
// the summary counts the ones within it among the significant deltas and
// again apart, with their signs.
func TestAuthorSpread(t *testing.T) {
	nan := math.NaN()
	mk := func(pubCol float64, sim []float64) Delta {
		return ScoreDelta(100, pubCol, nan, nan, []float64{100, 100, 100}, sim, true)
	}
	inside := mk(114.1, []float64{100, 100, 100})  // no effect
	outside := mk(114.2, []float64{100, 100, 100}) // no effect
	insideSame := mk(90, []float64{90, 91, 89})    // -10%, published sign
	small := mk(103, []float64{100, 100, 100})     // not significant
	withSD := mk(110, []float64{100, 100, 100})
	for _, c := range []struct {
		name  string
		d     *Delta
		sd    bool
		want  bool
		cov   float64
		pctOK float64
	}{
		{"14.1% inside 14.14%", &inside, false, true, 0.10, 10},
		{"14.2% outside 14.14%", &outside, false, false, 0.10, 10},
		{"-10% inside", &insideSame, false, true, 0.10, 10},
		{"not significant", &small, false, false, 0.10, 10},
		{"published sd decides", &withSD, true, false, 0.10, 10},
	} {
		c.d.SetAuthorSpread(4, c.cov, c.sd)
		if c.d.InAuthorSpread != c.want || c.d.SpreadReports != 4 || !near(float64(c.d.SpreadCoVPct), c.pctOK) {
			t.Errorf("%s: in spread %v (reports %d, CoV %v%%), want %v", c.name, c.d.InAuthorSpread, c.d.SpreadReports, c.d.SpreadCoVPct, c.want)
		}
	}
	if !inside.Significant || !outside.Significant || small.Significant || insideSame.Sign != SignPublished || inside.Sign != SignNone {
		t.Fatalf("the deltas are not what the test assumes: %+v %+v %+v %+v", inside, outside, small, insideSame)
	}
	s := Summarize(nil, []Delta{inside, outside, insideSame, small})
	if s.Significant != 3 || s.InAuthorSpread != 2 || s.InAuthorSpreadSameSign != 1 || s.SameSign != 1 || s.NoEffect != 2 {
		t.Errorf("summary %+v", s)
	}
	line := s.Line()
	if !strings.Contains(line, "; 2 of the significant within their author's spread across reports (1 of them with the published sign)") || !regexp.MustCompile(SummaryLineRE).MatchString(line) {
		t.Errorf("line %q", line)
	}
}
