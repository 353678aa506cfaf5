package schedstat

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/schedlab/schedlab/internal/cpumask"
	"github.com/schedlab/schedlab/internal/golden"
)

func TestDiff(t *testing.T) {
	before, after := testSnapshot(1000, 1), testSnapshot(3500, 3)
	d, err := Diff(before, after)
	if err != nil {
		t.Fatal(err)
	}
	if d.Elapsed != 2500 {
		t.Errorf("elapsed %d", d.Elapsed)
	}
	// Every counter of after is 3x, so the difference is 2x before's.
	want := testSnapshot(0, 2)
	var got, exp bytes.Buffer
	Format(&got, &Snapshot{CPUs: d.CPUs}, 17)
	Format(&exp, &Snapshot{CPUs: want.CPUs}, 17)
	if got.String() != exp.String() {
		t.Errorf("diff:\n%s\nwant:\n%s", got.String(), exp.String())
	}
	// A counter that goes down, or a changed topology, is an error.
	if _, err := Diff(after, before); err == nil {
		t.Error("time going backwards accepted")
	}
	bad := testSnapshot(4000, 3)
	bad.CPUs[2].Domains[1].LB[CPUIdle].LbGained = 0
	if _, err := Diff(after, bad); err == nil || !strings.Contains(err.Error(), "cpu2 domain1 idle_lb_gained went down") {
		t.Errorf("error %v, want cpu2 domain1 idle_lb_gained", err)
	}
	bad = testSnapshot(4000, 3)
	bad.CPUs[1].Domains = bad.CPUs[1].Domains[:1]
	if _, err := Diff(after, bad); err == nil {
		t.Error("changed domains accepted")
	}
}

// runDelta is a plausible interval of elapsed jiffies on the 4-CPU
// machine of testSnapshot, every counter but rq_cpu_time scaled by f/100.
func runDelta(elapsed, f uint64) Delta {
	sc := func(v uint64) uint64 { return v * f / 100 }
	d := Delta{Elapsed: elapsed}
	for c := uint64(0); c < 4; c++ {
		cs := CPUStats{CPU: cpumask.CPU(c), SchedCount: sc(10000 + 100*c), SchedGoidle: sc(4000 + 10*c),
			TtwuCount: sc(6000 + 20*c), TtwuLocal: sc(2000 + c), RqCPUTime: 600000000 + 1000000*c,
			RunDelay: sc(50000000 + 100000*c), Pcount: sc(9000 + 100*c)}
		for l, name := range []string{"SMT", "MC"} {
			span := cpumask.Of(4, cpumask.CPU(c&^1), cpumask.CPU(c|1))
			div := uint64(1)
			if l == 1 {
				span, div = cpumask.Full(4), 4
			}
			dom := DomainStats{Level: l, Name: name, Span: span}
			dom.LB[CPUNotIdle] = LBStats{LbCount: sc(100+c) / div, LbBalanced: sc(80) / div, LbFailed: sc(5) / div,
				LbImbalanceLoad: sc(3000) / div, LbImbalanceTask: sc(12) / div, LbGained: sc(20) / div,
				LbHotGained: sc(1) / div, LbNobusyq: sc(30) / div, LbNobusyg: sc(40) / div}
			dom.LB[CPUIdle] = LBStats{LbCount: sc(400+c) / div, LbBalanced: sc(300) / div, LbFailed: sc(20) / div,
				LbImbalanceLoad: sc(9000) / div, LbImbalanceTask: sc(50) / div, LbGained: sc(90) / div,
				LbHotGained: sc(4) / div, LbNobusyq: sc(150) / div, LbNobusyg: sc(100) / div}
			dom.LB[CPUNewlyIdle] = LBStats{LbCount: sc(2000+10*c) / div, LbBalanced: sc(1800) / div, LbFailed: sc(10) / div,
				LbImbalanceTask: sc(200) / div, LbGained: sc(210) / div, LbHotGained: sc(7) / div,
				LbNobusyq: sc(900) / div, LbNobusyg: sc(800) / div}
			dom.AlbCount, dom.AlbFailed, dom.AlbPushed = sc(3)/div, sc(1)/div, sc(2)/div
			dom.TtwuWakeRemote = sc(1500+c) + uint64(l)*900
			dom.TtwuMoveAffine = sc(700) / div
			cs.Domains = append(cs.Domains, dom)
		}
		d.CPUs = append(d.CPUs, cs)
	}
	return d
}

// TestComparisonGolden pins the comparison layout for one and three runs.
//
// Runs: "base" (f=100, 1000 jiffies), "patched" (f=110, 1000), "other"
// (f=95, 1040). Checked by hand against the per-CPU numbers of runDelta:
//   - schedule() called: (10000+10100+10200+10300)/4 = 10150; patched
//     (11000+11110+11220+11330)/4 = 11165, +10.00%.
//   - schedule() left the processor idle: (4000+4010+4020+4030)/4 = 4015,
//     39.56% of 10150.
//   - Wakeups on same SMT: ttwu_wake_remote of domain0,
//     (1500+1501+1502+1503)/4 = 1501 (integer division, as perf), 24.89% of
//     ttwu_count (6000+6020+6040+6060)/4 = 6030.
//   - SMT busy load_balance() count: (100+101+102+103)/4 = 101;
//     $ 1000/101 = 9.90 $; *success = 101-80-5 = 16; pulled 20/16 = 1.25.
//   - Each PCT_CHGn is against run 1: the "other" run's sched count
//     (9500+9595+9690+9785)/4 = 9642, -5.00%.
func TestComparisonGolden(t *testing.T) {
	diffs := []Delta{runDelta(1000, 100), runDelta(1000, 110), runDelta(1040, 95)}
	var buf bytes.Buffer
	if err := FormatComparison(&buf, diffs, []string{"base", "patched", "other"}); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("testdata", "comparison-3runs.txt"), buf.Bytes())

	buf.Reset()
	if err := FormatComparison(&buf, diffs[:1], []string{"base"}); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("testdata", "comparison-1run.txt"), buf.Bytes())

	if err := FormatComparison(&buf, diffs, []string{"x"}); err == nil {
		t.Error("names and runs of different lengths accepted")
	}
	if err := FormatComparison(&buf, nil, nil); err == nil {
		t.Error("no runs accepted")
	}
}
