package fit

import (
	"bytes"
	"strings"
	"testing"

	"github.com/schedlab/schedlab/internal/fidelity"
	"github.com/schedlab/schedlab/internal/fidelity/score"
)

func TestParseAxis(t *testing.T) {
	a, err := ParseAxis("pipe_write_ns=500,1000")
	if err != nil || a.Param != "pipe_write_ns" || len(a.Values) != 2 || a.Values[1] != 1000 {
		t.Fatalf("%+v, %v", a, err)
	}
	for spec, want := range map[string]string{
		"pipe_write_ns":         "write PARAM=V1,V2,...",
		"=5":                    "write PARAM=V1,V2,...",
		"no_such_ns=5":          `unknown cost parameter "no_such_ns"`,
		"pipe_write_ns=x":       `"x" is not a number`,
		"pipe_write_ns=-1":      "pipe_write_ns must lie in 0..",
		"pipe_write_ns=100.5":   "takes whole numbers",
		"pipe_write_ns=100,NaN": `"NaN" is not a number`,
	} {
		if _, err := ParseAxis(spec); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", spec, err, want)
		}
	}
}

func TestBetter(t *testing.T) {
	a := score.Summary{MedianAbsLogRatio: 0.3, Within2x: 5}
	b := score.Summary{MedianAbsLogRatio: 0.5, Within2x: 9}
	if !Better(a, b) || Better(b, a) {
		t.Error("a lower median |log ratio| wins")
	}
	c := score.Summary{MedianAbsLogRatio: 0.3, Within2x: 6}
	if !Better(c, a) || Better(a, a) {
		t.Error("at the same median, more points within 2× win; equal is not better")
	}
}

// synthetic is a one-case corpus: HiKey hackbench -p -T -g 1 -l 200,
// published at a time far above what the default pipe costs give, so a
// fit of pipe_write_ns must prefer the most expensive candidate, and the
// defaults must lose. (More work per write can only lengthen a run in
// which eight writer-reader pairs per group are pinned to four CPUs.)
func synthetic(t *testing.T, published string) (*fidelity.Corpus, []*fidelity.Case) {
	t.Helper()
	data := []byte(`id: synthetic-fit
source: {title: "synthetic test case", url: "https://example.invalid/fit", date: "2024", author: "schedlab tests"}
machine: {preset: hikey, config: "synthetic"}
kernel: {baseline: v6.19, published: "synthetic"}
command: "hackbench -p -T -g 1 -l 200"
aggregation: {runs: 1, statistic: single}
metric: {name: time_s, unit: s, better: lower}
simulate: {tool: hackbench, args: "-p -T -g 1 -l 200", quick: [""]}
columns: [{name: tip}]
rows: [{load: "", values: {tip: ` + published + `}}]
`)
	cs, err := fidelity.Parse("cases/synthetic-fit.yaml", data)
	if err != nil {
		t.Fatal(err)
	}
	return &fidelity.Corpus{Machines: map[string]*fidelity.MachineFile{}}, []*fidelity.Case{cs}
}

func TestRunPicksTheCandidateNearestPublished(t *testing.T) {
	c, cases := synthetic(t, "1.0")
	ax, err := ParseAxis("pipe_write_ns=200,20000,200000")
	if err != nil {
		t.Fatal(err)
	}
	var seen []string
	res, err := Run([]Axis{ax}, Options{Corpus: c, Cases: cases, Plan: fidelity.PlanOptions{Quick: true, Seeds: 1}, Jobs: 2, Where: "test",
		Trial: func(tr Trial) { seen = append(seen, tr.Label()) }})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(seen, "; "); got != "defaults; pipe_write_ns=200; pipe_write_ns=20000; pipe_write_ns=200000" {
		t.Errorf("trials %s", got)
	}
	if len(res.Best.Settings) != 1 || res.Best.Settings[0].Value != 200000 {
		t.Errorf("best %s, want pipe_write_ns=200000 (the slowest, nearest the published 1 s)", res.Best.Label())
	}
	// Each trial really ran with its value: more expensive writes give
	// runs further from 0, so the median |log ratio| falls along the list.
	for i := 2; i < len(res.Trials); i++ {
		if !Better(res.Trials[i].Summary, res.Trials[i-1].Summary) {
			t.Errorf("%s (%s) does not beat %s (%s)", res.Trials[i].Label(), res.Trials[i].Summary.Line(), res.Trials[i-1].Label(), res.Trials[i-1].Summary.Line())
		}
	}
	var b bytes.Buffer
	if err := WriteCosts(&b, res, "schedlab fidelity --fit pipe_write_ns=200,20000,200000"); err != nil {
		t.Fatal(err)
	}
	if got := b.String(); !strings.HasPrefix(got, `pipe_write_ns: {value: 200000, source: "fitted to the fidelity corpus (1 point): schedlab fidelity --fit`) {
		t.Errorf("costs file %q", got)
	}
}

// A candidate no better than the defaults leaves them standing.
func TestRunKeepsDefaults(t *testing.T) {
	c, cases := synthetic(t, "0.000001")
	ax, err := ParseAxis("pipe_write_ns=200000")
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run([]Axis{ax}, Options{Corpus: c, Cases: cases, Plan: fidelity.PlanOptions{Quick: true, Seeds: 1}, Jobs: 1, Where: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Best.Settings) != 0 {
		t.Errorf("best %s, want the defaults", res.Best.Label())
	}
	var b bytes.Buffer
	WriteCosts(&b, res, "how")
	if !strings.Contains(b.String(), "no candidate beat the defaults") {
		t.Errorf("costs file %q", b.String())
	}
}
