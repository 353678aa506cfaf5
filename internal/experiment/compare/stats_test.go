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
	s, err := experiment.Parse("fake.yaml", []byte("name: fake\nmachines: [hikey]\nvariants: [short-task-v3, short-task-v4]\nruns: 3\nworkloads:\n  - "+cmd+"\n"))
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
		r.Kernel, r.Variant, r.Seed, r.Schedstat = pt.Kernel, pt.Variant, pt.Seed, &schedstat.Totals{NrCPUs: 8}
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
Statistic     : AMean of 3 runs (seeds from master seed 1), ±95% confidence interval
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
