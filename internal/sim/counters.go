package sim

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/schedlab/schedlab/internal/workload"
)

// A run's counters as metrics: every number of the record that `schedlab
// run --json` writes beside the workload's metrics (schedstat totals,
// per-domain schedstat, the balancer's counters and times, the variants'
// branch counters, the simulation's size) can be tabulated like a metric, as perf stat's
// events are (`compare --metric balance.migrations`), and a ratio of two
// metrics, "A/B", too (`schedstat.cpu.ttwu_local/schedstat.cpu.ttwu_count`).
// A counter's name is its path in the record's JSON, with a domain level
// named by its kernel name instead of its index
// (`schedstat.domains.MC.ttwu_wake_remote`), a variant and its branches by
// their names
// (`variant_branches.short-task-v4.branches.wake_affine_idle:is_short_task.taken`). A counter has no better
// direction: its direction is workload.Counter, and tables show its change
// as more (+) or fewer (−). The wall and CPU time of the run
// (sim.wall_ns, sim.cpu_ns) are not counters: they differ between
// identical runs.

// Lookup returns the named metric: one the workload reported, a counter
// of the record, or a ratio "A/B" of two of them (direction Counter).
func (r *Result) Lookup(name string) (workload.Metric, bool) {
	if m, ok := r.Metrics.Lookup(name); ok {
		return m, true
	}
	if a, b, ok := strings.Cut(name, "/"); ok && a != "" && b != "" && !strings.Contains(b, "/") {
		x, okA := r.Lookup(a)
		y, okB := r.Lookup(b)
		if !okA || !okB {
			return workload.Metric{}, false
		}
		return workload.Metric{Name: name, Value: x.Value / y.Value, Better: workload.Counter}, true
	}
	v, ok := r.counters()[name]
	if !ok {
		return workload.Metric{}, false
	}
	return workload.Metric{Name: name, Value: v, Better: workload.Counter}, true
}

// Metric returns the value of a metric (Lookup).
func (r *Result) Metric(name string) (float64, bool) {
	m, ok := r.Lookup(name)
	return m.Value, ok
}

// Counters lists the record's counter names, sorted: what Lookup takes
// beside the workload's metrics.
func (r *Result) Counters() []string {
	c := r.counters()
	out := make([]string, 0, len(c))
	for k := range c {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// UnknownMetricError is a metric that a run neither reports nor counts.
type UnknownMetricError struct {
	Name     string
	Tool     string
	Have     []string // the workload's metrics
	Counters int
}

func (e *UnknownMetricError) Error() string {
	counters := fmt.Sprintf("%d counters", e.Counters)
	if e.Counters < 0 {
		counters = "counters"
	}
	return fmt.Sprintf("%s has no metric %q: it reports %s, and %s named by their path in 'schedlab run --json' (e.g. balance.migrations, schedstat.cpu.ttwu_count, schedstat.domains.MC.ttwu_wake_remote), or a ratio A/B of two",
		e.Tool, e.Name, strings.Join(e.Have, ", "), counters)
}

// CheckMetric returns an UnknownMetricError when r has no metric name.
func (r *Result) CheckMetric(name string) error {
	if _, ok := r.Lookup(name); ok {
		return nil
	}
	var have []string
	for _, m := range r.Metrics {
		have = append(have, m.Name)
	}
	return &UnknownMetricError{Name: name, Tool: r.Workload.Tool, Have: have, Counters: len(r.counters())}
}

// counters flattens the record's JSON numbers outside its workload
// metrics into paths.
func (r *Result) counters() map[string]float64 {
	out := map[string]float64{"nr_cpus": float64(r.NrCPUs)}
	add := func(prefix string, v any) {
		b, err := json.Marshal(v)
		if err != nil {
			panic("sim: " + err.Error())
		}
		var tree any
		if err := json.Unmarshal(b, &tree); err != nil {
			panic("sim: " + err.Error())
		}
		flatten(out, prefix, tree)
	}
	if r.Schedstat != nil {
		add("schedstat", r.Schedstat)
	}
	if r.Balance != nil {
		add("balance", r.Balance)
	}
	if len(r.VariantBranches) > 0 {
		add("variant_branches", r.VariantBranches)
	}
	add("sim", r.Sim)
	delete(out, "sim.wall_ns")
	delete(out, "sim.cpu_ns")
	return out
}

// flatten adds every number under v to out by its dotted path; a list of
// objects with a "name" (schedstat's domain levels) is indexed by name.
func flatten(out map[string]float64, path string, v any) {
	switch x := v.(type) {
	case float64:
		out[path] = x
	case map[string]any:
		for k, e := range x {
			flatten(out, path+"."+k, e)
		}
	case []any:
		for i, e := range x {
			key := fmt.Sprint(i)
			if m, ok := e.(map[string]any); ok {
				if n, ok := m["name"].(string); ok && n != "" {
					key = n
				}
			}
			flatten(out, path+"."+key, e)
		}
	}
}

// CheckMetricName checks, before anything runs, what can be checked of a
// metric name: a ratio is A/B of two names. Whether a run has the metric
// is known only after it ran (a workload adds some metrics as it runs,
// hackbench's pipe_mutex_waits; counters depend on the machine's
// domains), and CheckMetric says it then.
func CheckMetricName(name string) error {
	if a, b, ok := strings.Cut(name, "/"); ok && (a == "" || b == "" || strings.Contains(b, "/")) {
		return fmt.Errorf("metric %q: a ratio is A/B, two metric names", name)
	}
	if name == "" {
		return fmt.Errorf("metric: empty name")
	}
	return nil
}

// counterSections are the record sections Lookup reads counters from.
var counterSections = []string{"schedstat.", "balance.", "variant_branches.", "sim."}

// MetricNameFits reports whether name can be a metric of a tool whose
// instance lists metrics before it runs: one of them, a counter's path in
// a section the record has (the rest depends on the machine), or a ratio
// A/B of two such names. The fidelity corpus checks its cases' metrics
// with it, where a name must be known before anything runs.
func MetricNameFits(metrics []string, name string) bool {
	if a, b, ok := strings.Cut(name, "/"); ok {
		return a != "" && b != "" && !strings.Contains(b, "/") && MetricNameFits(metrics, a) && MetricNameFits(metrics, b)
	}
	for _, m := range metrics {
		if m == name {
			return true
		}
	}
	if name == "nr_cpus" {
		return true
	}
	for _, p := range counterSections {
		if strings.HasPrefix(name, p) && len(name) > len(p) && name != "sim.wall_ns" && name != "sim.cpu_ns" {
			return true
		}
	}
	return false
}
