package sim

import (
	"errors"
	"strings"
	"testing"

	"github.com/schedlab/schedlab/internal/sched"
	"github.com/schedlab/schedlab/internal/workload"
)

// Every number of a run's record is a metric by its --json path: the
// schedstat totals, each domain level's counters by its kernel name, the
// balancer's counters, the simulation's size; a ratio A/B divides two.
// They equal the record's own fields, and have no better direction
// (issue 40: "Any counter as a metric").
func TestCounters(t *testing.T) {
	res, err := Run(Config{Machine: "hikey", Seed: 1, Tool: "hackbench", Args: []string{"-p", "-T", "-l", "20", "-g", "1"}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ss := res.Schedstat
	var mc uint64
	found := false
	for _, d := range ss.Domains {
		if d.Name == "MC" {
			mc, found = d.TtwuWakeRemote, true
		}
	}
	if !found {
		t.Fatalf("hikey has no MC level: %+v", ss.Domains)
	}
	for _, c := range []struct {
		name string
		want float64
	}{
		{"nr_cpus", 8},
		{"schedstat.cpu.ttwu_count", float64(ss.CPU.TtwuCount)},
		{"schedstat.cpu.sched_goidle", float64(ss.CPU.SchedGoidle)},
		{"schedstat.domains.MC.ttwu_wake_remote", float64(mc)},
		{"balance.migrations", float64(res.Balance.Migrations)},
		{"balance.newidle_balance.calls", float64(res.Balance.NewidleBalance.Calls)},
		{"sim.events", float64(res.Sim.Events)},
		{"schedstat.cpu.ttwu_local/schedstat.cpu.ttwu_count", float64(ss.CPU.TtwuLocal) / float64(ss.CPU.TtwuCount)},
		{"time_s/nr_cpus", res.Metrics[0].Value / 8},
	} {
		m, ok := res.Lookup(c.name)
		if !ok || m.Value != c.want {
			t.Errorf("%s = %v (%v), want %v", c.name, m.Value, ok, c.want)
		}
		if c.name != "time_s" && m.Better != workload.Counter {
			t.Errorf("%s: direction %v, want none (a counter)", c.name, m.Better)
		}
	}
	if m, ok := res.Lookup("time_s"); !ok || m.Better != workload.LowerIsBetter {
		t.Errorf("the workload's own metric keeps its direction: %+v", m)
	}
	for _, bad := range []string{"sim.wall_ns", "sim.cpu_ns", "schedstat.domains.NOPE.ttwu_wake_remote", "nosuch", "time_s/nosuch", "balance"} {
		if _, ok := res.Lookup(bad); ok {
			t.Errorf("%s is a metric", bad)
		}
		var ue *UnknownMetricError
		if err := res.CheckMetric(bad); !errors.As(err, &ue) || !strings.Contains(err.Error(), "balance.migrations") {
			t.Errorf("%s: %v", bad, err)
		}
	}
	if names := res.Counters(); len(names) < 20 || names[0] > names[len(names)-1] {
		t.Errorf("counters %v", names)
	}
	for name, want := range map[string]bool{"time_s": true, "schedstat.cpu.ttwu_count": true, "balance.migrations": true,
		"schedstat.cpu.ttwu_local/schedstat.cpu.ttwu_count": true, "nosuch": false, "sim.wall_ns": false, "a/": false, "a/b/c": false} {
		if got := MetricNameFits([]string{"time_s"}, name); got != want {
			t.Errorf("MetricNameFits(%q) = %v, want %v", name, got, want)
		}
	}
}

// A run with a variant reports the counters of the branches its patch
// changes (sched.Branch), under its name, in the order the variant lists
// them, as the kernel counted them; they are metrics by their path
// (variant_branches.NAME.branches.BRANCH.taken). A branch that counts
// only "taken" has no "changed" in the record; the comparison kernel
// ("base:NAME") and the plain baseline report none.
func TestVariantBranchesRecord(t *testing.T) {
	schbench := []string{"-t", "2", "-m", "2", "-r", "1"}
	for _, tc := range []struct {
		variants []string
		machine  string
		tool     string
		args     []string
	}{
		{[]string{"blocked-avg-ratelimit"}, "chromebook-7c", "schbench", schbench},
		{[]string{"no-tg-propagate"}, "hikey", "frames", []string{"-d", "1", "-s", "250"}},
		{[]string{"base:blocked-avg-ratelimit"}, "chromebook-7c", "schbench", schbench},
		{nil, "chromebook-7c", "schbench", schbench},
	} {
		b, err := Build(Config{Machine: tc.machine, Variants: tc.variants, Seed: 1, Tool: tc.tool, Args: tc.args})
		if err != nil {
			t.Fatal(err)
		}
		res, err := b.Run(Options{})
		if err != nil {
			t.Fatal(err)
		}
		js := string(res.Deterministic())
		if len(tc.variants) == 0 || strings.HasPrefix(tc.variants[0], BasePrefix) {
			if res.VariantBranches != nil || strings.Contains(js, "variant_branches") {
				t.Errorf("%v: branch counters %+v", tc.variants, res.VariantBranches)
			}
			continue
		}
		info, _ := sched.LookupVariant(tc.variants[0])
		if len(res.VariantBranches) != 1 || res.VariantBranches[0].Name != tc.variants[0] || len(res.VariantBranches[0].Branches) != len(info.Branches) {
			t.Fatalf("%v: branch counters %+v", tc.variants, res.VariantBranches)
		}
		for i, br := range info.Branches {
			got, want := res.VariantBranches[0].Branches[i], b.Kernel.Branches[br]
			if got.Name != br.String() || got.Taken != want.Taken || (got.Changed != nil) != br.Info().CountsChanged ||
				(got.Changed != nil && *got.Changed != want.Changed) {
				t.Errorf("%v: %+v, kernel counted %+v", tc.variants, got, want)
			}
			if got.Taken == 0 {
				t.Errorf("%v: %s never taken in a workload where it acts", tc.variants, got.Name)
			}
			path := "variant_branches." + tc.variants[0] + ".branches." + br.String()
			if m, ok := res.Lookup(path + ".taken"); !ok || m.Value != float64(want.Taken) || m.Better != workload.Counter {
				t.Errorf("%s.taken = %+v (%v)", path, m, ok)
			}
			if _, ok := res.Lookup(path + ".changed"); ok != br.Info().CountsChanged {
				t.Errorf("%s.changed is a metric: %v", path, ok)
			}
			if !MetricNameFits(nil, path+".taken") {
				t.Errorf("%s.taken does not fit a metric name", path)
			}
		}
	}
}
