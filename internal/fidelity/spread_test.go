package fidelity

import (
	"math"
	"testing"

	corpus "github.com/schedlab/schedlab/fidelity"
)

// spreadCase is a minimal hackbench case of one row: tip at load 10.
func spreadCase(id, author, msgID string, tip float64, features ...string) *Case {
	return &Case{
		ID:       id,
		File:     id + ".yaml",
		Source:   Source{Author: author, MessageID: msgID},
		Machine:  Machine{Preset: "zen3-2s-nps1"},
		Kernel:   Kernel{Baseline: "v6.0"},
		Metric:   Metric{Name: "time_s", Better: "lower"},
		Simulate: Simulate{Tool: "hackbench", Args: "-g {load}", Scale: 1},
		Columns:  []Column{{Name: "tip", Features: features}},
		Rows:     []Row{{Load: "10", Values: map[string]float64{"tip": tip}}},
	}
}

// TestTipSpreadGroups checks what makes two published tips the same
// measurement: same author, machine, command and tip configuration, one
// value per report, the first case's by ID, and at least three reports.
func TestTipSpreadGroups(t *testing.T) {
	a := "A. Author"
	cases := []*Case{
		spreadCase("a1", a, "<1@x>", 90),
		spreadCase("a2", a, "<2@x>", 100),
		spreadCase("a2b", a, "<2@x>", 500), // the same report again: not counted
		spreadCase("a3", a, "<3@x>", 110),
		spreadCase("b1", "B. Other", "<4@x>", 1000),    // another author
		spreadCase("f1", a, "<5@x>", 2000, "SIS_PROP"), // another tip kernel
		spreadCase("f2", a, "<6@x>", 3000, "SIS_PROP"),
	}
	c := &Corpus{Cases: cases}
	c.spreads = c.tipSpreads()

	s, ok := c.TipSpread(cases[0], 0)
	if !ok {
		t.Fatal("three reports of one measurement have no spread")
	}
	// 90, 100, 110: mean 100, sample sd 10.
	if s.Reports != 3 || s.Mean != 100 || math.Abs(s.SD-10) > 1e-12 || math.Abs(s.CoV()-0.1) > 1e-12 {
		t.Errorf("spread %+v (CoV %v), want 3 reports, mean 100, sd 10", s, s.CoV())
	}
	if s2, _ := c.TipSpread(cases[2], 0); s2 != s {
		t.Errorf("a second case of a report reads %+v, want the group's %+v", s2, s)
	}
	for _, i := range []int{4, 5, 6} {
		if s, ok := c.TipSpread(cases[i], 0); ok {
			t.Errorf("%s: spread %+v from fewer than 3 reports", cases[i].ID, s)
		}
	}
	// A third SIS_PROP report makes that group's spread.
	c.Cases = append(c.Cases, spreadCase("f3", a, "<7@x>", 4000, "SIS_PROP"))
	c.spreads = c.tipSpreads()
	if s, ok := c.TipSpread(cases[5], 0); !ok || s.Reports != 3 || s.Mean != 3000 {
		t.Errorf("SIS_PROP group: %+v %v, want 3 reports of mean 3000", s, ok)
	}
	if s, _ := c.TipSpread(cases[0], 0); s.Reports != 3 || s.Mean != 100 {
		t.Errorf("the plain group changed to %+v", s)
	}
}

// TestTipSpreadCorpus reads the corpus: AMD's four SIS_UTIL reports of
// 2022 ran STREAM Copy (10 runs) in NPS4 on tips that the corpus runs as
// one kernel (v6.0 with SIS_PROP and without SIS_UTIL; v1 and v2 write it
// as their variants' base, v3 and v4 as features), so that row has a
// spread of four reports, computed from the cases' own values.
func TestTipSpreadCorpus(t *testing.T) {
	c, err := Load(corpus.Cases(), corpus.Dir)
	if err != nil {
		t.Fatal(err)
	}
	var vals []float64
	var first *Case
	for _, v := range []string{"v1", "v2", "v3", "v4"} {
		cs, err := c.Select("sis-util-" + v + "-zen3-nps4-stream-copy")
		if err != nil || len(cs) != 1 {
			t.Fatalf("sis-util-%s-zen3-nps4-stream-copy: %v", v, err)
		}
		for _, r := range cs[0].Rows {
			if r.Load == "10" {
				vals = append(vals, r.Values["tip"])
			}
		}
		if first == nil {
			first = cs[0]
		}
	}
	if len(vals) != 4 {
		t.Fatalf("%d tips at load 10, want 4", len(vals))
	}
	var mean float64
	for _, v := range vals {
		mean += v / 4
	}
	row := -1
	for i, r := range first.Rows {
		if r.Load == "10" {
			row = i
		}
	}
	s, ok := c.TipSpread(first, row)
	if !ok || s.Reports != 4 || math.Abs(s.Mean-mean) > 1e-6*mean {
		t.Errorf("spread %+v (%v), want 4 reports of mean %.2f", s, ok, mean)
	}
}
