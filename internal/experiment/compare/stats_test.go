package compare

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"golang.org/x/perf/benchfmt"

	"github.com/schedlab/schedlab/internal/experiment"
	"github.com/schedlab/schedlab/internal/schedstat"
	"github.com/schedlab/schedlab/internal/workload"
)

// fakeResults builds a plan and records whose metric values and direction
// are given: values[variant][load] lists the runs.
func fakeResults(t *testing.T, cmd string, metric string, better workload.Better, values map[string][][]float64) (*experiment.Plan, []*experiment.Record) {
	t.Helper()
	return fakeResultsOf(t, "variants: [short-task-v3, short-task-v4]\n", cmd, metric, better, values)
}

// fakeResultsOf is fakeResults of an experiment whose columns the lines
// head define.
func fakeResultsOf(t *testing.T, head, cmd string, metric string, better workload.Better, values map[string][][]float64) (*experiment.Plan, []*experiment.Record) {
	t.Helper()
	s, err := experiment.Parse("fake.yaml", []byte("name: fake\nmachines: [hikey]\n"+head+"runs: 3\nworkloads:\n  - "+cmd+"\n"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := experiment.Resolve(s, experiment.ResolveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var recs []*experiment.Record
	for _, pt := range p.Points() {
		w := &p.Workloads[pt.Workload]
		li := 0
		for i, v := range w.Param.Values {
			if v == pt.Load {
				li = i
			}
		}
		r := &experiment.Record{Key: pt.Key, Experiment: p.Name, Run: pt.Run}
		r.SchemaVersion, r.Machine, r.NrCPUs = experiment.RecordSchemaVersion, "hikey", 8
		r.Kernel, r.Variant, r.Seed, r.Schedstat = p.ColumnKernel(pt.Variant, pt.Kernel), pt.Variant, pt.Seed, &schedstat.Totals{NrCPUs: 8}
		r.Workload.Name, r.Workload.Tool, r.Workload.Args = w.Name, w.Tool, w.Param.ArgsFor(w.Args, pt.Load)
		r.Param.Name, r.Param.Value = w.Param.Name, pt.Load
		r.Metrics = experiment.Metrics{{Name: metric, Value: values[pt.Variant][li][pt.Run], Better: better}, {Name: "other", Value: 1, Better: workload.HigherIsBetter}}
		recs = append(recs, r)
	}
	return p, recs
}

// The table layout is pinned byte for byte.
func TestFormatTableGolden(t *testing.T) {
	p, recs := fakeResults(t, "hackbench -p -T -l 2000 -g 1,2,4", "time_s", workload.LowerIsBetter, map[string][][]float64{
		"tip":           {{0.50, 0.52, 0.51}, {1.00, 1.02, 0.98}, {2.0, 2.1, 2.2}},
		"short-task-v3": {{0.40, 0.41, 0.42}, {1.01, 0.99, 1.03}, {2.5, 2.6, 2.4}},
		"short-task-v4": {{0.50, 0.50, 0.50}, {1.00, 1.00, 1.00}, {2.1, 2.1, 2.1}},
	})
	tables, err := Analyze(p, recs, AnalyzeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := FormatTables(&b, tables); err != nil {
		t.Fatal(err)
	}
	want := `==================================================================
Test          : hackbench -p -T -l 2000 -g N
Machine       : hikey (8 CPUs), kernel v6.0
Metric        : time (time_s), s
Interpretation: Lower is better
Statistic     : AMean of 3 runs (seeds from master seed 1; run i of tip and of each variant share one seed), ±95% confidence interval
Significance  : Welch t-test against tip, * p < 0.05, ~ not significant
==================================================================
groups:   tip                          short-task-v3                short-task-v4
      1   0.5100   (0.00%)   ±4.9%     0.4100  (19.61%)   ±6.1% *   0.5000   (1.96%)   ±0.0% ~
      2   1.0000   (0.00%)   ±5.0%     1.0100  (-1.00%)   ±4.9% ~   1.0000   (0.00%)   ±0.0% ~
      4   2.1000   (0.00%)  ±11.8%     2.5000 (-19.05%)   ±9.9% *   2.1000   (0.00%)   ±0.0% ~
`
	if b.String() != want {
		t.Errorf("table:\n%s\nwant:\n%s", b.String(), want)
	}
	c := tables[0].Cells[0][1]
	if !c.Significant || c.P >= 0.05 || math.Abs(c.Pct-19.607843) > 1e-4 {
		t.Errorf("cell %+v", c)
	}
}

// Rates use the harmonic mean (of reciprocals' mean), and a positive
// change is still "better".
func TestHarmonicMean(t *testing.T) {
	p, recs := fakeResults(t, "tbench -t 2 1,4", "throughput_mb_s", workload.HigherIsBetter, map[string][][]float64{
		"tip":           {{100, 200, 400}, {10, 10, 10}},
		"short-task-v3": {{110, 220, 440}, {12, 12, 12}},
		"short-task-v4": {{100, 200, 400}, {9, 9, 9}},
	})
	tables, err := Analyze(p, recs, AnalyzeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tb := tables[0]
	if tb.Stat != HMean {
		t.Fatalf("stat %v", tb.Stat)
	}
	hm := 3 / (1.0/100 + 1.0/200 + 1.0/400)
	if got := tb.Cells[0][0].Center; math.Abs(got-hm) > 1e-9 {
		t.Errorf("hmean %v, want %v", got, hm)
	}
	if got := tb.Cells[0][1].Pct; math.Abs(got-10) > 1e-9 {
		t.Errorf("pct %v, want 10", got)
	}
	if c := tb.Cells[1][1]; !c.Significant || math.Abs(c.Pct-20) > 1e-9 {
		t.Errorf("exact difference: %+v", c)
	}
	if c := tb.Cells[1][2]; !c.Significant || math.Abs(c.Pct+10) > 1e-9 {
		t.Errorf("exact worse: %+v", c)
	}
	// The U test needs more runs than 3 to call anything significant.
	tables, err = Analyze(p, recs, AnalyzeOptions{Test: UTest})
	if err != nil {
		t.Fatal(err)
	}
	if c := tables[0].Cells[0][1]; c.Significant || tables[0].Stat != Median {
		t.Errorf("utest: %+v", c)
	}
}

// The benchmark format parses with x/perf's reader, one result per run,
// with the units' directions.
func TestBenchFormat(t *testing.T) {
	p, recs := fakeResults(t, "schbench -m 2 -t 1,2 -r 1", "latency_us.p99", workload.LowerIsBetter, map[string][][]float64{
		"tip":           {{10, 11, 12}, {20, 21, 22}},
		"short-task-v3": {{9, 9, 9}, {19, 19, 19}},
		"short-task-v4": {{8, 8, 8}, {18, 18, 18}},
	})
	for _, r := range recs {
		r.Metrics = append(r.Metrics, workload.Metric{Name: "latency_us.p50", Value: 3, Better: workload.LowerIsBetter})
	}
	var b bytes.Buffer
	if err := WriteBenchFormat(&b, p, recs); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "\nBenchmarkSchbench/workers=2/variant=short-task-v3 1 19 p99-us 3 p50-us\n") {
		t.Errorf("output:\n%s", b.String())
	}
	rd := benchfmt.NewReader(bytes.NewReader(b.Bytes()), "bench.txt")
	n := 0
	var units benchfmt.UnitMetadataMap
	for rd.Scan() {
		switch r := rd.Result().(type) {
		case *benchfmt.Result:
			n++
			if len(r.Values) != 2 || r.GetConfig("machine") != "hikey" {
				t.Errorf("result %s: %v", r.Name.Full(), r.Values)
			}
		case *benchfmt.SyntaxError:
			t.Errorf("syntax error: %v", r)
		}
	}
	units = rd.Units()
	if n != len(recs) {
		t.Errorf("%d results, want %d", n, len(recs))
	}
	if u := units.Get("p99-us", "better"); u == nil || u.Value != "lower" {
		t.Errorf("unit metadata %v", u)
	}
}

// Schedstat sums over runs become a one-CPU delta that the comparison
// formatter averages to the per-CPU means.
func TestSchedstatDelta(t *testing.T) {
	s := &schedstat.Totals{NrCPUs: 4, Jiffies: 10}
	s.CPU.SchedCount = 40
	s.Domains = []schedstat.DomainCounters{{Name: "MC", CPUs: 4, TtwuWakeRemote: 8}}
	s.Domains[0].LB.NewIdle.LbCount = 12
	sum := &schedstat.Totals{}
	sum.Add(s)
	sum.Add(s)
	d := sum.Delta()
	if d.Elapsed != 20 || d.CPUs[0].SchedCount != 20 || d.CPUs[0].Domains[0].TtwuWakeRemote != 4 || d.CPUs[0].Domains[0].LB[2].LbCount != 6 {
		t.Errorf("delta %+v", d)
	}
}

// TestPairedTest: the paired t-test on per-run differences, derived by
// hand. Tip's three runs spread widely with the seed (1, 2, 3 s) and
// short-task-v3 is the same runs plus 0.10, 0.12 and 0.08 s: the
// differences have mean 0.10 and standard deviation 0.02, so t =
// 0.10/(0.02/√3) = 8.660 with 2 degrees of freedom, whose two-sided p is
// 1 − t/√(t²+2) = 0.01311 (Student's t with ν = 2 in closed form):
// significant, where Welch's test, which does not know the runs share
// seeds, sees means 2.0 and 2.1 with standard deviations near 1 (p ≈ 0.9).
// short-task-v4 equals tip run by run: every difference 0, p = 1. With
// v3's run 0 missing, the two pairs left (runs 1 and 2) give d = 0.12,
// 0.08: mean 0.10, sd 0.02√2, t = 5 with 1 degree of freedom (Cauchy),
// p = 1 − (2/π)·atan(5) = 0.1257 (paired by position instead, 2.12 − 1.0
// and 3.08 − 2.0, it would be 0.012).
func TestPairedTest(t *testing.T) {
	vals := map[string][][]float64{
		"tip":           {{1.0, 2.0, 3.0}},
		"short-task-v3": {{1.10, 2.12, 3.08}},
		"short-task-v4": {{1.0, 2.0, 3.0}},
	}
	p, recs := fakeResults(t, "hackbench -g 1", "time_s", workload.LowerIsBetter, vals)
	welch, err := Analyze(p, recs, AnalyzeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	paired, err := Analyze(p, recs, AnalyzeOptions{Test: Paired})
	if err != nil {
		t.Fatal(err)
	}
	wc, pc := welch[0].Cells[0], paired[0].Cells[0]
	if wc[1].Significant || wc[1].P < 0.5 {
		t.Errorf("Welch: p %.4f for v3, want not significant (about 0.9)", wc[1].P)
	}
	if want := 1 - 8.660254/math.Sqrt(75+2); math.Abs(pc[1].P-want) > 1e-4 || !pc[1].Significant {
		t.Errorf("paired: p %.5f for v3 (significant %v), want %.5f", pc[1].P, pc[1].Significant, want)
	}
	if pc[2].P != 1 || pc[2].Significant {
		t.Errorf("paired: p %v for v4, which equals tip run by run, want 1", pc[2].P)
	}
	if pc[1].Center != wc[1].Center || pc[1].Lo != wc[1].Lo {
		t.Errorf("paired changed the cell's mean or interval: %v %v vs %v %v", pc[1].Center, pc[1].Lo, wc[1].Center, wc[1].Lo)
	}
	var b bytes.Buffer
	if err := FormatTables(&b, paired); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "paired t-test of the per-run differences from tip (runs paired by seed)") ||
		!strings.Contains(b.String(), "run i of tip and of each variant share one seed") {
		t.Errorf("the table does not say how runs are paired:\n%s", b.String())
	}
	// Drop v3's run 0: pairs are matched by run index, not position.
	var kept []*experiment.Record
	for _, r := range recs {
		if r.Variant == "short-task-v3" && r.Run == 0 {
			continue
		}
		kept = append(kept, r)
	}
	paired, err = Analyze(p, kept, AnalyzeOptions{Test: Paired})
	if err != nil {
		t.Fatal(err)
	}
	if want := 1 - 2/math.Pi*math.Atan(5); math.Abs(paired[0].Cells[0][1].P-want) > 1e-3 {
		t.Errorf("paired with run 0 missing: p %.5f, want %.5f", paired[0].Cells[0][1].P, want)
	}
}

// In a plan with a stopping rule, a comparison settled by the rule's
// resolution alone is marked "=": its interval at the rule's confidence
// (runs 3, min 2: two looks, 1 − 0.05/2 = 0.975; two-sided t quantile at
// df 2 is (2p−1)/sqrt(2p(1−p)) = 6.205 for p = 0.9875) is within ±1% of
// tip and does not exclude 0.
func TestWithinResolutionMark(t *testing.T) {
	vals := map[string][][]float64{
		"tip": {{100, 200, 300}},
		// d = 0.1, -0.1, 0.05 % of tip's mean 200: half-width
		// 6.205 · 0.104 / √3 = 0.37 ≤ 1, mean 0.017 inside it.
		"short-task-v3": {{100.2, 199.8, 300.1}},
		// d = 2, 4, 6 %: half-width 6.205 · 2 / √3 = 7.2 > 1.
		"short-task-v4": {{104, 208, 312}},
	}
	p, recs := fakeResults(t, "hackbench -g 1", "time_s", workload.LowerIsBetter, vals)
	plain, err := Analyze(p, recs, AnalyzeOptions{Test: Paired})
	if err != nil {
		t.Fatal(err)
	}
	if plain[0].Cells[0][1].Within || plain[0].Cells[0][2].Within {
		t.Errorf("without a stopping rule no cell is marked within the resolution")
	}
	p.Sequential = &experiment.Sequential{MinRuns: 2, WithinPct: 1}
	tables, err := Analyze(p, recs, AnalyzeOptions{Test: Paired})
	if err != nil {
		t.Fatal(err)
	}
	row := tables[0].Cells[0]
	if !row[1].Within || row[2].Within {
		t.Errorf("within the resolution: v3 %v (want true), v4 %v (want false)", row[1].Within, row[2].Within)
	}
	// At 0.5% resolution v3's 0.37 half-width still passes; at 0.3% not.
	p.Sequential.WithinPct = 0.3
	if tables, _ = Analyze(p, recs, AnalyzeOptions{Test: Paired}); tables[0].Cells[0][1].Within {
		t.Errorf("v3 within ±0.3%%, though its half-width is 0.37%%")
	}
	p.Sequential.WithinPct = 1
	tables, _ = Analyze(p, recs, AnalyzeOptions{Test: Paired})
	var b bytes.Buffer
	if err := FormatTables(&b, tables); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	lines := strings.Split(out, "\n")
	var data string
	for i, l := range lines {
		if strings.HasPrefix(l, "load:") && i+1 < len(lines) {
			data = lines[i+1]
		}
	}
	// The row: tip's cell, then v3's ending in "=", then v4's in "~".
	if !strings.Contains(out, "= within ±1% of tip by that rule") || !strings.HasSuffix(data, "~") || strings.Count(data, "% =") != 1 {
		t.Errorf("table:\n%s", out)
	}
}

// Columns defined by flags are listed under the banner (tip plus their
// flags, or their own kernel), and a comparison across kernels says each
// column's kernel in a row under the names.
func TestFormatTableColumns(t *testing.T) {
	p, recs := fakeResultsOf(t, "mixed_kernels: true\ncolumns: [\"cfs=--kernel v6.0\", \"nowaw=--feature NO_WA_WEIGHT\"]\n", "hackbench -l 5 -g 1,2", "time_s", workload.LowerIsBetter, map[string][][]float64{
		"tip":   {{0.50, 0.50, 0.50}, {1.0, 1.0, 1.0}},
		"cfs":   {{0.40, 0.40, 0.40}, {1.0, 1.0, 1.0}},
		"nowaw": {{0.50, 0.50, 0.50}, {1.1, 1.1, 1.1}},
	})
	tables, err := Analyze(p, recs, AnalyzeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(tables) != 1 {
		t.Fatalf("%d tables: a comparison across kernels is one table, of tip's kernel", len(tables))
	}
	var b bytes.Buffer
	if err := FormatTable(&b, tables[0]); err != nil {
		t.Fatal(err)
	}
	want := `==================================================================
Test          : hackbench -l 5 -g N
Machine       : hikey (8 CPUs), kernel v6.19 for tip; the columns' kernels differ (the kernel: row)
Metric        : time (time_s), s
Interpretation: Lower is better
Statistic     : AMean of 3 runs (seeds from master seed 1; run i of tip and of each variant share one seed), ±95% confidence interval
Significance  : Welch t-test against tip, * p < 0.05, ~ not significant
Columns       : cfs = --kernel v6.0
                nowaw = tip --feature NO_WA_WEIGHT
==================================================================
groups:   tip                         cfs                         nowaw
kernel:   v6.19                       v6.0                        v6.19
      1   0.5000   (0.00%)  ±0.0%     0.4000  (20.00%)  ±0.0% *   0.5000   (0.00%)  ±0.0% ~
      2   1.0000   (0.00%)  ±0.0%     1.0000   (0.00%)  ±0.0% ~   1.1000 (-10.00%)  ±0.0% *
`
	if b.String() != want {
		t.Errorf("table:\n%s\nwant:\n%s", b.String(), want)
	}
	// Without another kernel there is no kernel row, and the Machine line
	// names the one kernel.
	p, recs = fakeResultsOf(t, "columns: [\"nowaw=--feature NO_WA_WEIGHT\"]\n", "hackbench -l 5 -g 1", "time_s", workload.LowerIsBetter, map[string][][]float64{
		"tip": {{0.5, 0.5, 0.5}}, "nowaw": {{0.5, 0.5, 0.5}},
	})
	if tables, err = Analyze(p, recs, AnalyzeOptions{}); err != nil {
		t.Fatal(err)
	}
	b.Reset()
	FormatTable(&b, tables[0])
	if out := b.String(); strings.Contains(out, "kernel:") || !strings.Contains(out, "Machine       : hikey (8 CPUs), kernel v6.19\n") || !strings.Contains(out, "Columns       : nowaw = tip --feature NO_WA_WEIGHT\n") {
		t.Errorf("table:\n%s", out)
	}
}
