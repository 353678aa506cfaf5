package experiment

import (
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"

	"gonum.org/v1/gonum/stat"

	"github.com/schedlab/schedlab/internal/workload"
)

// resolveText parses and resolves an experiment file's text.
func resolveText(t *testing.T, text string) *Plan {
	t.Helper()
	s, err := Parse("seq.yaml", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	p, err := Resolve(s, ResolveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// seqPlan resolves a one-load hackbench plan with a stopping rule; the
// rule tests fill its records by hand.
func seqPlan(t *testing.T, variants string, runs, minRuns int) *Plan {
	t.Helper()
	p := resolveText(t, `name: seq
machines: [hikey]
variants: [`+variants+`]
runs: `+strconv.Itoa(runs)+`
sequential: {min_runs: `+strconv.Itoa(minRuns)+`, within_pct: 1}
workloads:
  - hackbench -p -T -l 20 -g 1
`)
	if p.Sequential == nil {
		t.Fatal("no stopping rule in the plan")
	}
	return p
}

// fill gives every point a record whose time_s is value(variant, run).
func fill(p *Plan, value func(v, r int) float64) []*Record {
	recs := make([]*Record, len(p.Points()))
	for i, pt := range p.Points() {
		v := 0
		for j, name := range p.Variants {
			if name == pt.Variant {
				v = j
			}
		}
		r := &Record{Key: pt.Key, Run: pt.Run}
		r.Metrics = workload.Metrics{{Name: "time_s", Value: value(v, pt.Run), Better: workload.LowerIsBetter}}
		recs[i] = r
	}
	return recs
}

// noise is a fixed sequence with mean 0 and standard deviation about 1.
var noise = []float64{0.9, -1.1, 0.2, 1.4, -0.6, -1.3, 0.5, 1.0, -0.8, 0.1}

// The rule stops a load as soon as every paired difference from tip is
// settled, by the figures the rule's statistics give, and runs every run
// otherwise.
func TestSequentialRule(t *testing.T) {
	// With 10 runs at most and 3 at least there are 8 looks: each at
	// confidence 1 - 0.05/8; the t quantile at n-1 degrees of freedom.
	cases := []struct {
		name  string
		value func(v, r int) float64
		want  int
	}{
		// The seed moves tip and the variant alike: the difference is
		// exactly 2% every run, no spread, settled at the minimum.
		{"exact difference", func(v, r int) float64 { return 100 + 5*noise[r] - 2*float64(v) }, 3},
		// The same run either side: a difference of exactly 0.
		{"identical", func(v, r int) float64 { return 100 + 5*noise[r] }, 3},
		// A 10% difference with 0.5% paired noise: excludes 0 at once
		// (half-width at n=3 is about 9.4 · 0.5·sd(noise[0:3])/√3 < 10).
		{"large difference", func(v, r int) float64 { return 100 + 10*float64(v) + 0.5*float64(v)*noise[r] }, 3},
		// No difference but 5% paired noise: the half-width never gets
		// under 1% in 10 runs and never excludes 0: all runs.
		{"noise only", func(v, r int) float64 { return 100 + 5*float64(v)*noise[r] }, 10},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := seqPlan(t, "short-task-v3", 10, 3)
			recs := fill(p, c.value)
			ns, complete := p.cellNeed(0, func(i int) *Record { return recs[i] })
			if len(ns) != 2 || ns[0] != c.want || ns[1] != c.want || !complete {
				t.Errorf("runs needed %v (complete %v), want %d for tip and the variant", ns, complete, c.want)
			}
		})
	}
}

// The look that settles a comparison is the first whose interval, at the
// Bonferroni confidence, excludes 0 or is within the resolution: derived
// here from the t quantiles independently of the rule's code.
func TestSequentialRuleLooks(t *testing.T) {
	// A 0.3% difference in the mean with paired noise of sd 0.6%.
	diff := func(r int) float64 { return 0.3 + 0.6*noise[r] }
	p := seqPlan(t, "short-task-v3", 10, 3)
	recs := fill(p, func(v, r int) float64 {
		if v == 0 {
			return 100
		}
		return 100 + diff(r)
	})
	// Expected: walk n = 3..10 with the t quantiles of 1 - 0.05/8/2.
	// Student t quantiles at 1 - 0.05/8/2 = 0.996875 by degrees of freedom
	// (integrating the density numerically; df 2 has the closed form
	// (2p-1)/sqrt(2p(1-p)) = 12.590).
	tq := map[int]float64{
		2: 12.590, 3: 6.895, 4: 5.261, 5: 4.526, 6: 4.115, 7: 3.855, 8: 3.677, 9: 3.547,
	}
	want := 10
	for n := 3; n <= 10; n++ {
		var xs []float64
		for r := 0; r < n; r++ {
			xs = append(xs, diff(r)) // tip's mean is 100: percent = value
		}
		mean, sd := stat.MeanStdDev(xs, nil)
		half := tq[n-1] * sd / math.Sqrt(float64(n))
		if math.Abs(mean) > half || half <= 1 {
			want = n
			break
		}
	}
	ns, _ := p.cellNeed(0, func(i int) *Record { return recs[i] })
	if n := ns[1]; n != want || ns[0] != want {
		t.Errorf("runs needed %d, want %d", n, want)
	}
	t.Logf("settled after %d runs", want)
	if want == 3 || want == 10 {
		t.Errorf("case settles at %d: choose figures that settle between the first and last look", want)
	}
}

// A missing record below the runs needed leaves the cell incomplete, and
// the points the rule left out are neither needed nor missing.
func TestSequentialNeeded(t *testing.T) {
	p := seqPlan(t, "short-task-v3", 10, 3)
	recs := fill(p, func(v, r int) float64 { return 100 + 5*noise[r] - 2*float64(v) })
	need := p.Needed(recs)
	count := 0
	for i, pt := range p.Points() {
		if need[i] != (pt.Run < 3) {
			t.Errorf("%s: needed %v", pt.Key, need[i])
		}
		if need[i] {
			count++
		}
	}
	if count != 6 {
		t.Errorf("%d runs needed, want 6 (2 columns × 3)", count)
	}
	recs[p.pointIndex(0, 1, 2)] = nil
	if ns, complete := p.cellNeed(0, func(i int) *Record { return recs[i] }); ns[1] != 3 || complete {
		t.Errorf("with run 2 of the variant missing: need %v complete %v, want 3 false", ns, complete)
	}
}

// Each variant's column stops on its own: one identical to tip settles at
// the minimum while a noisy one, and tip with it, runs every run.
func TestSequentialColumns(t *testing.T) {
	p := seqPlan(t, "short-task-v3, short-task-v4", 10, 3)
	recs := fill(p, func(v, r int) float64 {
		switch v {
		case 1:
			return 100 + 5*noise[r] // tip's run exactly
		case 2:
			return 100 + 5*noise[r] + 5*noise[(r+3)%10]
		}
		return 100 + 5*noise[r]
	})
	ns, complete := p.cellNeed(0, func(i int) *Record { return recs[i] })
	if !complete || ns[0] != 10 || ns[1] != 3 || ns[2] != 10 {
		t.Errorf("runs needed %v (complete %v), want [10 3 10]", ns, complete)
	}
	need := p.Needed(recs)
	count := 0
	for _, b := range need {
		if b {
			count++
		}
	}
	if count != 23 {
		t.Errorf("%d runs needed, want 23", count)
	}
}

// A plan of tip alone settles on tip's own interval.
func TestSequentialTipOnly(t *testing.T) {
	p := resolveText(t, "name: seq\nmachines: [hikey]\nruns: 10\nsequential: {min_runs: 3}\nworkloads: [hackbench -p -T -l 20 -g 1]\n")
	tight := fill(p, func(v, r int) float64 { return 100 + 0.01*noise[r] })
	if ns, _ := p.cellNeed(0, func(i int) *Record { return tight[i] }); ns[0] != 3 {
		t.Errorf("tight tip: %v runs, want 3", ns)
	}
	loose := fill(p, func(v, r int) float64 { return 100 + 5*noise[r] })
	if ns, _ := p.cellNeed(0, func(i int) *Record { return loose[i] }); ns[0] != 10 {
		t.Errorf("loose tip: %v runs, want 10", ns)
	}
}

// --full-length (FullLength) and a minimum not below runs leave the plan
// without a rule; a profile's rule replaces the file's.
func TestSequentialResolve(t *testing.T) {
	base := "name: seq\nmachines: [hikey]\nruns: 10\nsequential: {min_runs: 4, within_pct: 2.5}\nworkloads: [hackbench -p -T -l 20 -g 1]\nprofiles:\n  few:\n    runs: 3\n  other:\n    sequential: {min_runs: 2}\n"
	for _, c := range []struct {
		profile string
		full    bool
		want    string
	}{
		{"", false, "4 2.5"},
		{"", true, "none"},
		{"few", false, "none"},
		{"other", false, "2 1"},
	} {
		s, err := Parse("seq.yaml", []byte(base))
		if err != nil {
			t.Fatal(err)
		}
		s.FullLength = c.full
		p, err := Resolve(s, ResolveOptions{Profile: c.profile})
		if err != nil {
			t.Fatal(err)
		}
		got := "none"
		if q := p.Sequential; q != nil {
			got = fmt.Sprintf("%d %g", q.MinRuns, q.WithinPct)
		}
		if got != c.want {
			t.Errorf("profile %q full-length %v: rule %s, want %s", c.profile, c.full, got, c.want)
		}
	}
}

// Spec mistakes in the rule name the file and line.
func TestSequentialSpecErrors(t *testing.T) {
	for _, c := range []struct{ rule, want string }{
		{"{min_runs: 1}", "seq.yaml:3: sequential: min_runs must be 2..100000"},
		{"{within_pct: 0}", "seq.yaml:3: sequential: within_pct must be a percentage above 0"},
		{"{within_pct: x}", "seq.yaml:3: sequential: within_pct must be a percentage above 0"},
		{"{stop: 3}", "seq.yaml:3: unknown key \"stop\" in sequential"},
		{"3", "seq.yaml:3: sequential must be a mapping"},
	} {
		_, err := Parse("seq.yaml", []byte("name: seq\nmachines: [hikey]\nsequential: "+c.rule+"\nworkloads: [hackbench -p -T -l 20 -g 1]\n"))
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %s...", c.rule, err, c.want)
		}
	}
}

// A sequential sweep runs the same runs with the same records whatever the
// workers, a resume after losing runs, or sharding by cells; ReadResults
// counts the runs the rule left out as not missing.
func TestSequentialSweep(t *testing.T) {
	if testing.Short() {
		t.Skip("runs simulations")
	}
	p := resolveText(t, `name: seqsweep
machines: [hikey]
variants: [short-task-v3]
runs: 5
sequential: {min_runs: 2, within_pct: 1}
seed: 3
workloads:
  - hackbench -p -T -l 20 -g 1,2
  - schbench -m 1 -t 2 -r 1
`)
	one, err := Sweep(p, SweepOptions{Jobs: 1})
	if err != nil {
		t.Fatal(err)
	}
	two, err := Sweep(p, SweepOptions{Jobs: 2})
	if err != nil {
		t.Fatal(err)
	}
	equalRecords(t, "jobs 1 vs 2", one, two)
	// Which runs ran is what the rule says of the records that ran.
	all := make([]*Record, len(p.Points()))
	for _, r := range one {
		for i, pt := range p.Points() {
			if pt.Key == r.Key {
				all[i] = r
			}
		}
	}
	need := p.Needed(all)
	ran := 0
	for i := range all {
		if need[i] != (all[i] != nil) {
			t.Errorf("%s: needed %v, ran %v", p.Points()[i].Key, need[i], all[i] != nil)
		}
		if all[i] != nil {
			ran++
		}
	}
	if ran < 2*2*3 || ran > len(all) {
		t.Errorf("%d runs of %d", ran, len(all))
	}
	t.Logf("%d of %d runs", ran, len(all))

	dir := t.TempDir()
	if err := PrepareDir(dir, p, false); err != nil {
		t.Fatal(err)
	}
	for sh := 0; sh < 2; sh++ {
		if _, err := Sweep(p, SweepOptions{Dir: dir, Jobs: 2, Shard: sh, Shards: 2}); err != nil {
			t.Fatal(err)
		}
	}
	res, err := ReadResults(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Complete() || res.Unneeded != len(all)-ran {
		t.Fatalf("sharded: complete %v, %d missing, %d left out (want %d)", res.Complete(), len(res.Missing), res.Unneeded, len(all)-ran)
	}
	equalRecords(t, "sharded vs in memory", all, res.Records)
	// Lose the last run of every cell and resume: the same runs again.
	for i, r := range res.Records {
		if r != nil && (i+1 == len(all) || all[i+1] == nil) {
			if err := os.Remove(RecordPath(dir, r.Key)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if res, err = ReadResults(dir); err != nil || res.Complete() {
		t.Fatalf("after removing runs: complete %v, err %v", res.Complete(), err)
	}
	if _, err := Sweep(p, SweepOptions{Dir: dir, Jobs: 2}); err != nil {
		t.Fatal(err)
	}
	if res, err = ReadResults(dir); err != nil || !res.Complete() {
		t.Fatalf("resumed: complete %v, err %v", res != nil && res.Complete(), err)
	}
	equalRecords(t, "resumed vs in memory", all, res.Records)
}
