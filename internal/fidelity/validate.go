package fidelity

import (
	"errors"
	"github.com/schedlab/schedlab/internal/kernels"
	"math"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/schedlab/schedlab/internal/cpumask"
	"github.com/schedlab/schedlab/internal/experiment"
	"github.com/schedlab/schedlab/internal/sched"
	"github.com/schedlab/schedlab/internal/sim"
	"github.com/schedlab/schedlab/internal/topology"
	"github.com/schedlab/schedlab/internal/workload"
)

var (
	idRE     = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]*$`)
	columnRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]*$`)
)

// maxCPUs bounds a cpus list before the machine is known (NR_CPUS).
const maxCPUs = 8192

// Validate checks what the case means against this schedlab: the file is
// cases/<id>.yaml, the source is cited and not held out, the machine and
// kernel exist, the tool runs every row's load, the metric is one the tool
// reports, every column named in values is declared, every variant exists
// for its column's kernel, every feature and sysctl is one that kernel
// has (as `schedlab run` checks them) and no two simulated columns run the
// same kernel. Parse calls it; a case that passed Parse passes
// it again. The first mistake is returned, at its line.
func (c *Case) Validate() error {
	for _, check := range []func() error{c.validateHeader, c.validateMachine, c.validateColumns, c.validateSettings, c.validateRows, c.validateSimulate} {
		if err := check(); err != nil {
			return err
		}
	}
	return nil
}

func (c *Case) validateHeader() error {
	if !idRE.MatchString(c.ID) {
		return c.errAt("id", "id %q: use lower-case letters, digits, '.', '_' and '-'", c.ID)
	}
	if base := path.Base(strings.ReplaceAll(c.File, "\\", "/")); base != c.ID+".yaml" && base != c.ID+".yml" {
		return c.errAt("id", "id %q does not match the file name %s: a case is cases/<id>.yaml", c.ID, base)
	}
	if !validDate(c.Source.Date) {
		return c.errAt("source.date", "source.date %q: write YYYY-MM-DD (or YYYY-MM, YYYY when the source gives no day)", c.Source.Date)
	}
	if u := c.Source.URL; u != "" && !strings.HasPrefix(u, "https://") && !strings.HasPrefix(u, "http://") {
		return c.errAt("source.url", "source.url %q is not an http(s) URL", u)
	}
	if id := c.Source.MessageID; id != "" && !strings.Contains(id, "@") {
		return c.errAt("source.message_id", "source.message_id %q is not a Message-ID (<local@domain>)", id)
	}
	if h, ok := heldOut(c); ok {
		return c.errAt("source.title", "%s is held out (fidelity/README.md, \"Held out\"): its numbers never go into the corpus", h)
	}
	if _, err := sched.Baseline(c.Kernel.Baseline); err != nil {
		return c.errAt("kernel.baseline", "kernel.baseline %q is not a schedlab kernel (have %s)", c.Kernel.Baseline, strings.Join(kernels.Names(), ", "))
	}
	if c.Aggregation.Runs < 0 {
		return c.errAt("aggregation.runs", "aggregation.runs %d is negative (0: not stated)", c.Aggregation.Runs)
	}
	if !contains(statistics, c.Aggregation.Statistic) {
		return c.errAt("aggregation.statistic", "aggregation.statistic %q: one of %s", c.Aggregation.Statistic, strings.Join(statistics, ", "))
	}
	if c.Metric.Better != "lower" && c.Metric.Better != "higher" {
		return c.errAt("metric.better", "metric.better %q: lower or higher", c.Metric.Better)
	}
	return nil
}

func validDate(s string) bool {
	for _, layout := range []string{"2006-01-02", "2006-01", "2006"} {
		if t, err := time.Parse(layout, s); err == nil && t.Format(layout) == s {
			return true
		}
	}
	return false
}

func (c *Case) validateMachine() error {
	m := &c.Machine
	switch {
	case m.Preset != "" && m.File != "":
		return c.errAt("machine.file", "machine has both a preset and a file: give one")
	case m.Preset == "" && m.File == "":
		return c.errAt("machine", "machine has neither preset nor file")
	case m.File != "":
		if strings.ContainsAny(m.File, `/\`) || m.File == "." || m.File == ".." {
			return c.errAt("machine.file", "machine.file %q: name a machine file beside the case (no directories)", m.File)
		}
		if !strings.HasSuffix(m.File, ".yaml") && !strings.HasSuffix(m.File, ".yml") {
			return c.errAt("machine.file", "machine.file %q: a machine file ends in .yaml", m.File)
		}
		return nil
	}
	if m.Preset == topology.HostName {
		return c.errAt("machine.preset", "machine.preset host: a published result is from another machine; name a preset or a machine file")
	}
	spec, ok := topology.Preset(m.Preset)
	if !ok {
		var names []string
		for _, p := range topology.Presets() {
			names = append(names, p.Name)
		}
		return c.errAt("machine.preset", "machine.preset %q is not a schedlab preset (have %s)", m.Preset, strings.Join(names, ", "))
	}
	return c.CheckCPUs(spec)
}

// CheckCPUs checks simulate.cpus against the case's machine.
func (c *Case) CheckCPUs(spec *topology.MachineSpec) error {
	if c.Simulate.CPUs == "" {
		return nil
	}
	m, err := cpumask.Parse(len(spec.CPUs), c.Simulate.CPUs)
	if err != nil {
		return c.errAt("simulate.cpus", "simulate.cpus %q on %s (%d CPUs): %v", c.Simulate.CPUs, c.MachineLabel(), len(spec.CPUs), err)
	}
	if m.Empty() {
		return c.errAt("simulate.cpus", "simulate.cpus %q: no CPU of %s's %d", c.Simulate.CPUs, c.MachineLabel(), len(spec.CPUs))
	}
	return nil
}

func (c *Case) validateColumns() error {
	seen := map[string]int{}
	variants := map[string]int{}
	for i, col := range c.Columns {
		p := "columns." + strconv.Itoa(i)
		if !columnRE.MatchString(col.Name) {
			return c.errAt(p+".name", "column name %q: use letters, digits, '_' and '-'", col.Name)
		}
		if j, dup := seen[col.Name]; dup {
			return c.errAt(p+".name", "column %q is declared twice (first at line %d)", col.Name, c.line("columns."+strconv.Itoa(j)))
		}
		seen[col.Name] = i
		if col.Kernel != "" {
			if i == 0 {
				return c.errAt(p+".kernel", "the first column is tip, which runs kernel.baseline (%s): name tip's kernel there", c.Kernel.Baseline)
			}
			if _, err := sched.Baseline(col.Kernel); err != nil {
				return c.errAt(p+".kernel", "column %s: kernel %q is not a schedlab kernel (have %s)", col.Name, col.Kernel, strings.Join(kernels.Names(), ", "))
			}
		}
		if col.Variant == "" {
			continue
		}
		if i == 0 {
			return c.errAt(p+".variant", "the first column is tip, the baseline kernel %s: it takes no variant", c.Kernel.Baseline)
		}
		info, ok := sched.LookupVariant(col.Variant)
		if !ok {
			return c.errAt(p+".variant", "variant %q is not a schedlab variant (have %s); omit variant: to show the column unsimulated", col.Variant, strings.Join(sched.VariantNames(), ", "))
		}
		switch {
		case col.Kernel != "" && info.Baseline != col.Kernel:
			return c.errAt(p+".variant", "variant %s applies to kernel %s, and the column's kernel is %s", col.Variant, info.Baseline, col.Kernel)
		case col.Kernel == "" && info.Baseline != c.Kernel.Baseline:
			return c.errAt(p+".variant", "variant %s applies to kernel %s, and the case's kernel.baseline is %s", col.Variant, info.Baseline, c.Kernel.Baseline)
		}
		if heldOutVariant(col.Variant) {
			return c.errAt(p+".variant", "variant %s is a held-out patch (fidelity/README.md, \"Held out\")", col.Variant)
		}
		if j, dup := variants[col.Variant]; dup {
			return c.errAt(p+".variant", "variant %s is also column %s", col.Variant, c.Columns[j].Name)
		}
		variants[col.Variant] = i
	}
	return nil
}

func (c *Case) validateRows() error {
	loads := map[string]int{}
	for i, r := range c.Rows {
		p := "rows." + strconv.Itoa(i)
		if j, dup := loads[r.Load]; dup {
			return c.errAt(p+".load", "load %q is also row %d's (line %d)", r.Load, j+1, c.line("rows."+strconv.Itoa(j)))
		}
		loads[r.Load] = i
		if len(r.Values) == 0 {
			return c.errAt(p+".values", "row %q has no values", r.Load)
		}
		for _, name := range sortedKeys(r.Values) {
			v := r.Values[name]
			if c.Column(name) < 0 {
				return c.errAt(p+".values."+name, "values: column %q is not declared in columns (have %s)", name, strings.Join(c.columnNames(), ", "))
			}
			if !(v > 0) || math.IsInf(v, 0) {
				return c.errAt(p+".values."+name, "values: %s is %v: published values are positive (ratios and logs are taken)", name, v)
			}
		}
		for _, name := range sortedKeys(r.SD) {
			v := r.SD[name]
			if c.Column(name) < 0 {
				return c.errAt(p+".sd."+name, "sd: column %q is not declared in columns (have %s)", name, strings.Join(c.columnNames(), ", "))
			}
			if _, ok := r.Values[name]; !ok {
				return c.errAt(p+".sd."+name, "sd: column %s has no value in this row", name)
			}
			if !(v >= 0) || math.IsInf(v, 0) {
				return c.errAt(p+".sd."+name, "sd: %s is %v: a standard deviation is not negative", name, v)
			}
		}
		for _, name := range sortedKeys(r.Noise) {
			ci := c.Column(name)
			switch {
			case ci < 0:
				return c.errAt(p+".noise."+name, "noise: column %q is not declared in columns (have %s)", name, strings.Join(c.columnNames(), ", "))
			case ci == 0:
				return c.errAt(p+".noise."+name, "noise: %s is tip; mark the patched column whose change the source calls noise", name)
			}
			if _, ok := r.Values[name]; !ok {
				return c.errAt(p+".noise."+name, "noise: column %s has no value in this row", name)
			}
		}
	}
	for i, f := range c.Fitted {
		p := "fitted." + strconv.Itoa(i)
		for j, load := range f.Loads {
			if c.row(load) < 0 {
				return c.errAt(p+".loads."+strconv.Itoa(j), "fitted: no row has load %q", load)
			}
		}
	}
	return nil
}

func (c *Case) validateSimulate() error {
	s := &c.Simulate
	t, ok := sim.Lookup(s.Tool)
	if !ok {
		return c.errAt("simulate.tool", "%v", &sim.UnknownToolError{Name: s.Tool})
	}
	words, err := splitArgs(s.Args)
	if err != nil {
		return c.errAt("simulate.args", "simulate.args: %v", err)
	}
	hasToken := strings.Contains(s.Args, LoadToken)
	for i, r := range c.Rows {
		p := "rows." + strconv.Itoa(i) + ".load"
		switch {
		case r.Load != "" && !hasToken:
			return c.errAt("simulate.args", "simulate.args has no %s, but row %d has load %q: write %s where the load goes", LoadToken, i+1, r.Load, LoadToken)
		case r.Load == "" && hasToken:
			return c.errAt(p, "row %d has no load, but simulate.args takes %s", i+1, LoadToken)
		}
	}
	if !(s.Scale > 0) || math.IsInf(s.Scale, 0) {
		return c.errAt("simulate.scale", "simulate.scale %v: must be positive (published ≈ simulated × scale)", s.Scale)
	}
	if s.Scale != 1 && strings.TrimSpace(s.Why) == "" {
		return c.errAt("simulate.scale", "simulate.scale is %v: say why in simulate.why", s.Scale)
	}
	if s.CPUs != "" {
		if _, err := cpumask.Parse(maxCPUs, s.CPUs); err != nil {
			return c.errAt("simulate.cpus", "simulate.cpus: %v", err)
		}
	}
	quick := map[string]bool{}
	for i, q := range s.Quick {
		p := "simulate.quick." + strconv.Itoa(i)
		if quick[q] {
			return c.errAt(p, "simulate.quick lists load %q twice", q)
		}
		quick[q] = true
		if c.row(q) < 0 {
			return c.errAt(p, "simulate.quick: no row has load %q", q)
		}
	}
	// Every row's arguments parse, and the tool reports the metric.
	var names []string
	for i, r := range c.Rows {
		_, inst, err := sim.Parse(s.Tool, substitute(words, r.Load))
		if errors.Is(err, workload.ErrHelp) {
			err = errors.New("the arguments ask for the usage text")
		}
		if err != nil {
			if r.Load == "" {
				return c.errAt("simulate.args", "%s %s: %v", t.Name, s.Args, err)
			}
			return c.errAt("rows."+strconv.Itoa(i)+".load", "%s with load %s: %v", t.Name, r.Load, err)
		}
		if i == 0 {
			names = metricNames(inst)
		}
	}
	if !sim.MetricNameFits(names, c.Metric.Name) {
		return c.errAt("metric.name", "metric.name %q: %s reports %s, and counters by their path in 'schedlab run --json' (schedstat.…, balance.…, sim.…), or a ratio A/B of two", c.Metric.Name, s.Tool, strings.Join(names, ", "))
	}
	c.mechanism = !contains(names, c.Metric.Name)
	return nil
}

// metricNames are the metrics an instance reports, read before it runs
// (every tool names them up front; STREAM's values are NaN until a run).
func metricNames(inst workload.Instance) (names []string) {
	for _, m := range inst.Metrics() {
		names = append(names, m.Name)
	}
	return names
}

func (c *Case) row(load string) int {
	for i, r := range c.Rows {
		if r.Load == load {
			return i
		}
	}
	return -1
}

func (c *Case) columnNames() []string {
	var out []string
	for _, col := range c.Columns {
		out = append(out, col.Name)
	}
	return out
}

func splitArgs(s string) ([]string, error) { return experiment.SplitCommand(s) }

// substitute puts the row's load in for {load} in each word of the
// arguments. A word that held {load} is then split at spaces, as a shell
// splits an unquoted expansion, so that a load carrying several flags
// ("-l 2560 -g 1") reaches the tool as separate arguments.
func substitute(words []string, load string) []string {
	out := make([]string, 0, len(words))
	for _, w := range words {
		if !strings.Contains(w, LoadToken) {
			out = append(out, w)
			continue
		}
		out = append(out, strings.Fields(strings.ReplaceAll(w, LoadToken, load))...)
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
