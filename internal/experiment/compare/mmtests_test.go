package compare

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/schedlab/schedlab/internal/workload"
)

// The statistics follow mmtests' definitions (Stat.pm, Summarise.pm):
// sample standard deviation, CoeffVar in percent of the mean, BAmean-N the
// mean of the best int(n·N/100) runs (at least one), best being the
// lowest for a lower-is-better metric and the highest otherwise, and for
// rates the harmonic mean with HStddev = H²·sqrt(Σ(1/x − 1/H)²/n).
func TestMMTestsStatistics(t *testing.T) {
	near := func(what string, got, want float64) {
		t.Helper()
		if math.Abs(got-want) > 1e-12*math.Max(1, math.Abs(want)) {
			t.Errorf("%s = %.15g, want %.15g", what, got, want)
		}
	}
	// Lower is better: the best are the smallest.
	m := mmtestsOf([]float64{3, 1, 2, 4}, false, false)
	sd := math.Sqrt((0.25 + 2.25 + 0.25 + 2.25) / 3)
	near("min", m.Min, 1)
	near("max", m.Max, 4)
	near("amean", m.Mean, 2.5)
	near("stddev", m.Stddev, sd)
	near("coeffvar", m.CoeffVar, 100*sd/2.5)
	near("BAmean-50", m.Best[0], (1+2)/2.0)   // int(4·0.50) = 2 runs
	near("BAmean-95", m.Best[1], (1+2+3)/3.0) // int(3.8) = 3
	near("BAmean-99", m.Best[2], (1+2+3)/3.0) // int(3.96) = 3
	// Higher is better, a rate: harmonic means of the largest.
	m = mmtestsOf([]float64{1, 2, 4}, true, true)
	h := 3 / (1 + 0.5 + 0.25)
	r := []float64{1, 0.5, 0.25}
	var ss float64
	for _, x := range r {
		ss += (x - 1/h) * (x - 1/h)
	}
	hsd := h * h * math.Sqrt(ss/3)
	near("hmean", m.Mean, h)
	near("hstddev", m.Stddev, hsd)
	near("hcoeffvar", m.CoeffVar, 100*hsd/h)
	near("BHmean-50", m.Best[0], 4)               // int(1.5) = 1: the highest
	near("BHmean-95", m.Best[1], 2/(1/4.0+1/2.0)) // int(2.85) = 2
	// One run has no spread: NaN, and CoeffVar 0 as mmtests prints it.
	m = mmtestsOf([]float64{5}, false, false)
	if !math.IsNaN(m.Stddev) || m.CoeffVar != 0 || m.Best != [3]float64{5, 5, 5} {
		t.Errorf("one run: %+v", m)
	}
	// A rate of 0 has no harmonic mean.
	if m := mmtestsOf([]float64{0, 1}, true, true); !math.IsNaN(m.Mean) {
		t.Errorf("hmean with a 0: %v", m.Mean)
	}
	// The change: pndiff for lower-is-better, pdiff for higher.
	near("pndiff", mmPct(0.50, 0.40, false), 100-0.40*100/0.50)
	near("pdiff", mmPct(100, 110, true), 110*100/100.0-100)
	if mmPct(0, 0, true) != 0 || !math.IsNaN(mmPct(0, 1, true)) {
		t.Error("mmPct of a zero base")
	}
}

// The compare-kernels layout is pinned byte for byte: two header lines
// (kernel, column), then a row per statistic and load, the mean's change
// starred where the table's test finds it significant; Stddev and
// CoeffVar are better lower whatever the metric.
func TestFormatMMTestsGolden(t *testing.T) {
	p, recs := fakeResults(t, "hackbench -p -T -l 2000 -g 1,4", "time_s", workload.LowerIsBetter, map[string][][]float64{
		"tip":           {{0.50, 0.52, 0.51}, {2.0, 2.1, 2.2}},
		"short-task-v3": {{0.40, 0.41, 0.42}, {2.5, 2.6, 2.4}},
		"short-task-v4": {{0.50, 0.50, 0.50}, {2.1, 2.1, 2.1}},
	})
	tables, err := Analyze(p, recs, AnalyzeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := FormatMMTests(&b, tables[0]); err != nil {
		t.Fatal(err)
	}
	want := `                               v6.0                    v6.0                    v6.0
                                tip           short-task-v3           short-task-v4
Min       1       0.5000 (   0.00%)       0.4000 (  20.00%)       0.5000 (   0.00%)
Min       4       2.0000 (   0.00%)       2.4000 ( -20.00%)       2.1000 (  -5.00%)
Amean     1       0.5100 (   0.00%)       0.4100 *  19.61%*       0.5000 (   1.96%)
Amean     4       2.1000 (   0.00%)       2.5000 * -19.05%*       2.1000 (   0.00%)
Stddev    1       0.0100 (   0.00%)       0.0100 (   0.00%)       0.0000 ( 100.00%)
Stddev    4       0.1000 (   0.00%)       0.1000 (   0.00%)       0.0000 ( 100.00%)
CoeffVar  1       1.9608 (   0.00%)       2.4390 ( -24.39%)       0.0000 ( 100.00%)
CoeffVar  4       4.7619 (   0.00%)       4.0000 (  16.00%)       0.0000 ( 100.00%)
Max       1       0.5200 (   0.00%)       0.4200 (  19.23%)       0.5000 (   3.85%)
Max       4       2.2000 (   0.00%)       2.6000 ( -18.18%)       2.1000 (   4.55%)
BAmean-50 1       0.5000 (   0.00%)       0.4000 (  20.00%)       0.5000 (   0.00%)
BAmean-50 4       2.0000 (   0.00%)       2.4000 ( -20.00%)       2.1000 (  -5.00%)
BAmean-95 1       0.5050 (   0.00%)       0.4050 (  19.80%)       0.5000 (   0.99%)
BAmean-95 4       2.0500 (   0.00%)       2.4500 ( -19.51%)       2.1000 (  -2.44%)
BAmean-99 1       0.5050 (   0.00%)       0.4050 (  19.80%)       0.5000 (   0.99%)
BAmean-99 4       2.0500 (   0.00%)       2.4500 ( -19.51%)       2.1000 (  -2.44%)
`
	if b.String() != want {
		t.Errorf("mmtests block:\n%s\nwant:\n%s", b.String(), want)
	}
	// --json carries the same statistics per cell.
	data, err := json.Marshal(tables[0].Cells[0][1])
	if err != nil {
		t.Fatal(err)
	}
	var cell struct {
		MMTests map[string]*float64 `json:"mmtests"`
	}
	if err := json.Unmarshal(data, &cell); err != nil || cell.MMTests["min"] == nil || *cell.MMTests["min"] != 0.40 || cell.MMTests["bmean_95"] == nil {
		t.Errorf("cell JSON %s", data)
	}
}

// A rate's block has compare-kernels' harmonic rows, and its changes are
// better upwards but for the spread.
func TestFormatMMTestsHarmonic(t *testing.T) {
	p, recs := fakeResults(t, "tbench -t 2 1", "throughput_mb_s", workload.HigherIsBetter, map[string][][]float64{
		"tip":           {{100, 100, 100}},
		"short-task-v3": {{110, 110, 110}},
		"short-task-v4": {{90, 100, 110}},
	})
	tables, err := Analyze(p, recs, AnalyzeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := FormatMMTests(&b, tables[0]); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"\nHmean     -       100.00 (   0.00%)       110.00 *  10.00%*", "\nBHmean-50 -       100.00 (   0.00%)       110.00 (  10.00%)       110.00 (  10.00%)", "\nHStddev ", "\nHCoeffVar "} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
}
