package experiment

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/schedlab/schedlab/internal/cpumask"
	"github.com/schedlab/schedlab/internal/fileerr"
	"gopkg.in/yaml.v3"
)

// Spec is an experiment as written: which machines, kernels, variants and
// workloads, how many runs and the master seed. It is plain data; Resolve
// checks it against what schedlab has and expands it into a Plan.
type Spec struct {
	Name        string
	Description string
	// Patch names the patch under study (the mailing-list subject).
	Patch string
	// File is where the spec was read from, for error messages
	// ("short-task.yaml", "builtin:short-task.yaml"); empty for a spec
	// built from command-line flags.
	File string
	// Dir is the directory relative machine files are read from; empty
	// for the built-in files, whose machine files are embedded.
	Dir string

	Machines []string // presets, "host" or machine files
	Kernels  []string // empty: the variants' common baseline
	Variants []string // compared against tip, which always comes first
	// Columns follow the variants: each is tip plus variants, features,
	// sysctls and perhaps a kernel of its own (key columns; compare
	// --column NAME=FLAGS; see Column).
	Columns []Column
	// MixedKernels allows columns on different kernels (key
	// mixed_kernels; compare --mixed-kernels).
	MixedKernels bool
	Features     []string // sched_features set on every kernel, e.g. NO_TTWU_QUEUE
	// CPUs confines every workload as taskset -c does (schedlab run --cpus).
	CPUs string
	// Sysctls are NAME=VALUE settings applied to every kernel (--sysctl).
	Sysctls []string
	// BackgroundCgroups adds that many background cgroups to every run
	// (--background-cgroups).
	BackgroundCgroups int
	// Costs is a cost-model file applied over every machine's costs
	// (--costs; relative to the experiment file), NoCosts turns the cost
	// model off (--no-costs).
	Costs   string
	NoCosts bool
	// FullLength runs every benchmark for the whole duration its
	// arguments ask for (--full-length; key full_length), not until its
	// metric is at steady state.
	FullLength bool
	// Warmup runs every workload that can run back to back (hackbench)
	// that long before each measured run (--warmup; key warmup, e.g.
	// "1s"; sim.Config.Warmup); the others start as they always do.
	Warmup    time.Duration
	Workloads []Workload
	Runs      int
	// Sequential, if set, makes Runs a maximum: each load stops adding
	// runs once its comparisons with tip are settled (key sequential:
	// {min_runs: N, within_pct: X}; see experiment.Sequential).
	Sequential *Sequential
	Seed       uint64
	// Trace records, for run 0 of every configuration, the per-CPU
	// occupancy over time (from sched_switch tracepoints).
	Trace bool

	Profiles []Profile

	lines map[string]int // line of each top-level key, for Resolve's errors
}

// Workload is one benchmark of the matrix: a command line with at most one
// ranged argument.
type Workload struct {
	Name    string   // unique in the experiment; default the tool's name
	Command []string // tool and arguments, e.g. hackbench -p -T -l 2000 -g 1,2,4
	Metrics []string // metrics to tabulate; default PrimaryMetrics(tool)
	Param   string   // name of the ranged parameter; default from the option
	Line    int
}

// Profile is a named set of overrides, e.g. the paper-scale parameters of
// the evaluation a built-in experiment reproduces.
type Profile struct {
	Name        string
	Description string
	Runs        int
	Sequential  *Sequential
	Machines    []string
	Variants    []string
	Workloads   map[string][]string // workload name → command
	Line        int
}

// ParseFile reads an experiment file.
func ParseFile(path string) (*Spec, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	s, err := Parse(path, data)
	if err != nil {
		return nil, err
	}
	s.Dir = filepath.Dir(path)
	return s, nil
}

var (
	topKeys      = []string{"name", "description", "patch", "machines", "machine", "kernels", "kernel", "variants", "columns", "mixed_kernels", "features", "sysctls", "cpus", "background_cgroups", "costs", "no_costs", "full_length", "warmup", "workloads", "runs", "sequential", "seed", "trace", "profiles"}
	workloadKeys = []string{"name", "run", "metrics", "param"}
	columnKeys   = []string{"name", "kernel", "variants", "variant", "features", "sysctls"}
	profileKeys  = []string{"description", "runs", "sequential", "machines", "variants", "workloads"}
	seqKeys      = []string{"min_runs", "within_pct"}
)

// Parse parses an experiment file's contents; file names it in errors.
// Every error is a *fileerr.Error.
func Parse(file string, data []byte) (*Spec, error) {
	p := &sparser{file: file}
	root, err := fileerr.ReadYAML(file, data, "experiment files")
	if err != nil {
		return nil, err
	}
	if root == nil {
		return nil, fileerr.Errorf(file, 1, "empty experiment file")
	}
	vals, keys, err := p.mapping(root, "the experiment", topKeys)
	if err != nil {
		return nil, err
	}
	s := &Spec{File: file, Runs: 3, Seed: 1, lines: map[string]int{}}
	for k, n := range keys {
		s.lines[k] = n.Line
	}
	if v := vals["name"]; v != nil {
		if s.Name, err = p.str(v, "name"); err != nil {
			return nil, err
		}
	} else {
		s.Name = strings.TrimSuffix(strings.TrimSuffix(filepath.Base(strings.TrimPrefix(file, "builtin:")), ".yaml"), ".yml")
	}
	if !nameRE.MatchString(s.Name) {
		return nil, p.errf(firstNode(vals["name"], root), "name %q: use letters, digits, '.', '_' and '-'", s.Name)
	}
	if v := vals["description"]; v != nil {
		if s.Description, err = p.str(v, "description"); err != nil {
			return nil, err
		}
	}
	if v := vals["patch"]; v != nil {
		if s.Patch, err = p.str(v, "patch"); err != nil {
			return nil, err
		}
	}
	if vals["machine"] != nil && vals["machines"] != nil {
		return nil, p.errf(keys["machine"], "give machine or machines, not both")
	}
	if vals["kernel"] != nil && vals["kernels"] != nil {
		return nil, p.errf(keys["kernel"], "give kernel or kernels, not both")
	}
	for _, f := range []struct {
		key string
		dst *[]string
	}{{"machines", &s.Machines}, {"machine", &s.Machines}, {"kernels", &s.Kernels}, {"kernel", &s.Kernels}, {"variants", &s.Variants}, {"features", &s.Features}, {"sysctls", &s.Sysctls}} {
		if v := vals[f.key]; v != nil {
			if *f.dst, err = p.strList(v, f.key); err != nil {
				return nil, err
			}
		}
	}
	if len(s.Machines) == 0 {
		return nil, p.errf(root, "no machines: add machines: [zen3-2s-nps1, ...]")
	}
	if v := vals["runs"]; v != nil {
		if s.Runs, err = p.integer(v, "runs", 1, 100000); err != nil {
			return nil, err
		}
	}
	if v := vals["sequential"]; v != nil {
		if s.Sequential, err = p.sequential(v); err != nil {
			return nil, err
		}
	}
	if v := vals["seed"]; v != nil {
		if v.Kind != yaml.ScalarNode || v.ShortTag() != "!!int" {
			return nil, p.errf(v, "seed must be a non-negative integer")
		}
		if s.Seed, err = strconv.ParseUint(strings.ReplaceAll(v.Value, "_", ""), 0, 64); err != nil {
			return nil, p.errf(v, "seed must be a non-negative integer below 2^64")
		}
	}
	if v := vals["cpus"]; v != nil {
		if v.Kind != yaml.ScalarNode {
			return nil, p.errf(v, "cpus must be a CPU list such as 0-23")
		}
		if _, err := cpumask.Parse(8192, v.Value); err != nil { // NR_CPUS; checked against the machine at run time
			return nil, p.errf(v, "cpus: %v", err)
		}
		s.CPUs = v.Value
	}
	for _, kv := range s.Sysctls {
		if name, _, ok := strings.Cut(kv, "="); !ok || name == "" {
			return nil, p.errf(vals["sysctls"], "sysctls: %q: write NAME=VALUE, e.g. migration_cost_ns=250000", kv)
		}
	}
	if v := vals["columns"]; v != nil {
		if s.Columns, err = p.columns(v); err != nil {
			return nil, err
		}
	}
	if v := vals["mixed_kernels"]; v != nil {
		if v.Kind != yaml.ScalarNode || v.ShortTag() != "!!bool" {
			return nil, p.errf(v, "mixed_kernels must be true or false")
		}
		s.MixedKernels = v.Value == "true"
	}
	if v := vals["background_cgroups"]; v != nil {
		if s.BackgroundCgroups, err = p.integer(v, "background_cgroups", 0, 100000); err != nil {
			return nil, err
		}
	}
	if v := vals["costs"]; v != nil {
		if s.Costs, err = p.str(v, "costs"); err != nil {
			return nil, err
		}
	}
	if v := vals["no_costs"]; v != nil {
		if v.Kind != yaml.ScalarNode || v.ShortTag() != "!!bool" {
			return nil, p.errf(v, "no_costs must be true or false")
		}
		s.NoCosts = v.Value == "true"
	}
	if v := vals["full_length"]; v != nil {
		if v.Kind != yaml.ScalarNode || v.ShortTag() != "!!bool" {
			return nil, p.errf(v, "full_length must be true or false")
		}
		s.FullLength = v.Value == "true"
	}
	if v := vals["warmup"]; v != nil {
		d, err := time.ParseDuration(v.Value)
		if v.Kind != yaml.ScalarNode || err != nil || d < 0 {
			return nil, p.errf(v, "warmup must be a duration such as 1s or 500ms")
		}
		s.Warmup = d
	}
	if s.NoCosts && s.Costs != "" {
		return nil, p.errf(vals["no_costs"], "give costs or no_costs, not both")
	}
	if v := vals["trace"]; v != nil {
		if v.Kind != yaml.ScalarNode || v.ShortTag() != "!!bool" {
			return nil, p.errf(v, "trace must be true or false")
		}
		s.Trace = v.Value == "true"
	}
	wl := vals["workloads"]
	if wl == nil {
		return nil, p.errf(root, "no workloads: add workloads: [{run: hackbench -p -T -l 2000 -g 1,2,4}]")
	}
	if wl.Kind != yaml.SequenceNode || len(wl.Content) == 0 {
		return nil, p.errf(wl, "workloads must be a non-empty list")
	}
	names := map[string]int{}
	for _, n := range wl.Content {
		w, err := p.workload(n)
		if err != nil {
			return nil, err
		}
		if first, dup := names[w.Name]; dup {
			return nil, p.errf(n, "workload name %q is used twice (first at line %d): give one a name:", w.Name, first)
		}
		names[w.Name] = w.Line
		s.Workloads = append(s.Workloads, w)
	}
	if v := vals["profiles"]; v != nil {
		if v.Kind != yaml.MappingNode {
			return nil, p.errf(v, "profiles must be a mapping of profile names to overrides")
		}
		for i := 0; i+1 < len(v.Content); i += 2 {
			k, pv := v.Content[i], v.Content[i+1]
			pr, err := p.profile(k, pv, names)
			if err != nil {
				return nil, err
			}
			for _, q := range s.Profiles {
				if q.Name == pr.Name {
					return nil, p.errf(k, "profile %q is defined twice (first at line %d)", pr.Name, q.Line)
				}
			}
			s.Profiles = append(s.Profiles, pr)
		}
	}
	return s, nil
}

var nameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

func firstNode(n, def *yaml.Node) *yaml.Node {
	if n != nil {
		return n
	}
	return def
}

func (p *sparser) workload(n *yaml.Node) (Workload, error) {
	w := Workload{Line: n.Line}
	var cmdNode *yaml.Node
	if n.Kind == yaml.ScalarNode {
		cmdNode = n
	} else {
		vals, _, err := p.mapping(n, "a workload", workloadKeys)
		if err != nil {
			return w, err
		}
		cmdNode = vals["run"]
		if cmdNode == nil {
			return w, p.errf(n, "workload has no run: (the command line, e.g. run: hackbench -p -T -l 2000 -g 1,2,4)")
		}
		if v := vals["name"]; v != nil {
			if w.Name, err = p.str(v, "workload name"); err != nil {
				return w, err
			}
			if !nameRE.MatchString(w.Name) {
				return w, p.errf(v, "workload name %q: use letters, digits, '.', '_' and '-'", w.Name)
			}
		}
		if v := vals["metrics"]; v != nil {
			if w.Metrics, err = p.strList(v, "metrics"); err != nil {
				return w, err
			}
		}
		if v := vals["param"]; v != nil {
			if w.Param, err = p.str(v, "param"); err != nil {
				return w, err
			}
			if !nameRE.MatchString(w.Param) {
				return w, p.errf(v, "param %q: use letters, digits, '.', '_' and '-'", w.Param)
			}
		}
	}
	cmd, err := p.command(cmdNode)
	if err != nil {
		return w, err
	}
	w.Command = cmd
	w.Line = cmdNode.Line
	if _, _, _, err := ParseCommand(cmd); err != nil {
		return w, p.errf(cmdNode, "%v", err)
	}
	if w.Name == "" {
		w.Name = cmd[0]
		if !nameRE.MatchString(w.Name) {
			return w, p.errf(cmdNode, "tool %q: give the workload a name:", w.Name)
		}
	}
	return w, nil
}

// columns reads the columns: list. An entry is "NAME=FLAGS", as compare
// --column takes it, or a mapping {name, kernel, variants, features,
// sysctls}.
func (p *sparser) columns(n *yaml.Node) ([]Column, error) {
	if n.Kind != yaml.SequenceNode {
		return nil, p.errf(n, "columns must be a list: - NAME=FLAGS, or - {name: NAME, features: [...], sysctls: [...], variants: [...], kernel: K}")
	}
	var out []Column
	seen := map[string]int{}
	for _, e := range n.Content {
		c, err := p.column(e)
		if err != nil {
			return nil, err
		}
		if first, dup := seen[c.Name]; dup {
			return nil, p.errf(e, "column %s is defined twice (first at line %d)", c.Name, first)
		}
		seen[c.Name] = c.Line
		out = append(out, c)
	}
	return out, nil
}

func (p *sparser) column(n *yaml.Node) (Column, error) {
	if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!str" {
		c, err := ParseColumn(n.Value)
		if err != nil {
			return c, p.errf(n, "columns: %v", err)
		}
		c.Line = n.Line
		return c, nil
	}
	vals, keys, err := p.mapping(n, "a column", columnKeys)
	if err != nil {
		return Column{}, err
	}
	c := Column{Line: n.Line}
	if v := vals["name"]; v != nil {
		if c.Name, err = p.str(v, "a column's name"); err != nil {
			return c, err
		}
	}
	if err := checkColumnName(c.Name); err != nil {
		return c, p.errf(firstNode(vals["name"], n), "columns: %v", err)
	}
	if vals["variant"] != nil && vals["variants"] != nil {
		return c, p.errf(keys["variant"], "give variant or variants, not both")
	}
	if v := vals["kernel"]; v != nil {
		if c.Kernel, err = p.str(v, "kernel"); err != nil {
			return c, err
		}
	}
	for _, f := range []struct {
		key string
		dst *[]string
	}{{"variants", &c.Variants}, {"variant", &c.Variants}, {"features", &c.Features}, {"sysctls", &c.Sysctls}} {
		if v := vals[f.key]; v != nil {
			if *f.dst, err = p.strList(v, f.key); err != nil {
				return c, err
			}
		}
	}
	if err := c.check(); err != nil {
		return c, p.errf(n, "columns: %v", err)
	}
	return c, nil
}

// command reads a command line written as a string or as a list.
func (p *sparser) command(n *yaml.Node) ([]string, error) {
	var cmd []string
	var err error
	switch n.Kind {
	case yaml.ScalarNode:
		cmd, err = SplitCommand(n.Value)
		if err != nil {
			return nil, p.errf(n, "%v", err)
		}
	case yaml.SequenceNode:
		if cmd, err = p.strList(n, "run"); err != nil {
			return nil, err
		}
	default:
		return nil, p.errf(n, "run must be a command line: a string or a list of strings")
	}
	if len(cmd) == 0 {
		return nil, p.errf(n, "empty command line")
	}
	return cmd, nil
}

func (p *sparser) profile(k, n *yaml.Node, workloads map[string]int) (Profile, error) {
	pr := Profile{Name: k.Value, Line: k.Line}
	if !nameRE.MatchString(pr.Name) {
		return pr, p.errf(k, "profile name %q: use letters, digits, '.', '_' and '-'", pr.Name)
	}
	vals, _, err := p.mapping(n, "profile "+pr.Name, profileKeys)
	if err != nil {
		return pr, err
	}
	if v := vals["description"]; v != nil {
		if pr.Description, err = p.str(v, "description"); err != nil {
			return pr, err
		}
	}
	if v := vals["runs"]; v != nil {
		if pr.Runs, err = p.integer(v, "runs", 1, 100000); err != nil {
			return pr, err
		}
	}
	if v := vals["sequential"]; v != nil {
		if pr.Sequential, err = p.sequential(v); err != nil {
			return pr, err
		}
	}
	if v := vals["machines"]; v != nil {
		if pr.Machines, err = p.strList(v, "machines"); err != nil {
			return pr, err
		}
	}
	if v := vals["variants"]; v != nil {
		if pr.Variants, err = p.strList(v, "variants"); err != nil {
			return pr, err
		}
	}
	if v := vals["workloads"]; v != nil {
		if v.Kind != yaml.MappingNode {
			return pr, p.errf(v, "a profile's workloads map workload names to command lines")
		}
		pr.Workloads = map[string][]string{}
		for i := 0; i+1 < len(v.Content); i += 2 {
			wk, wv := v.Content[i], v.Content[i+1]
			if _, ok := workloads[wk.Value]; !ok {
				return pr, p.errf(wk, "profile %s: no workload named %q", pr.Name, wk.Value)
			}
			cmd, err := p.command(wv)
			if err != nil {
				return pr, err
			}
			if _, _, _, err := ParseCommand(cmd); err != nil {
				return pr, p.errf(wv, "%v", err)
			}
			pr.Workloads[wk.Value] = cmd
		}
	}
	return pr, nil
}

// WithProfile returns a copy of s with the named profile's overrides
// applied.
func (s *Spec) WithProfile(name string) (*Spec, error) {
	for _, pr := range s.Profiles {
		if pr.Name != name {
			continue
		}
		c := *s
		if pr.Runs > 0 {
			c.Runs = pr.Runs
		}
		if pr.Sequential != nil {
			c.Sequential = pr.Sequential
		}
		if pr.Machines != nil {
			c.Machines = pr.Machines
		}
		if pr.Variants != nil {
			c.Variants = pr.Variants
		}
		c.Workloads = append([]Workload(nil), s.Workloads...)
		for i := range c.Workloads {
			if cmd, ok := pr.Workloads[c.Workloads[i].Name]; ok {
				c.Workloads[i].Command = cmd
				c.Workloads[i].Line = pr.Line
			}
		}
		return &c, nil
	}
	var names []string
	for _, pr := range s.Profiles {
		names = append(names, pr.Name)
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("experiment %s has no profiles", s.Name)
	}
	return nil, fmt.Errorf("experiment %s has no profile %q (have %s)", s.Name, name, strings.Join(names, ", "))
}

// sequential reads a stopping rule: {min_runs: N, within_pct: X}.
func (p *sparser) sequential(n *yaml.Node) (*Sequential, error) {
	vals, _, err := p.mapping(n, "sequential", seqKeys)
	if err != nil {
		return nil, err
	}
	q := &Sequential{MinRuns: 3, WithinPct: DefaultWithinPct}
	if v := vals["min_runs"]; v != nil {
		if q.MinRuns, err = p.integer(v, "sequential: min_runs", 2, 100000); err != nil {
			return nil, err
		}
	}
	if v := vals["within_pct"]; v != nil {
		f, err := strconv.ParseFloat(v.Value, 64)
		if v.Kind != yaml.ScalarNode || (v.ShortTag() != "!!float" && v.ShortTag() != "!!int") || err != nil || !(f > 0 && f <= 100) {
			return nil, p.errf(v, "sequential: within_pct must be a percentage above 0 and at most 100, e.g. 1")
		}
		q.WithinPct = f
	}
	return q, nil
}

// ---- YAML helpers --------------------------------------------------------

type sparser struct{ file string }

func (p *sparser) errf(n *yaml.Node, format string, args ...any) error {
	return fileerr.AtNode(p.file, n, format, args...)
}

func (p *sparser) mapping(n *yaml.Node, what string, allowed []string) (map[string]*yaml.Node, map[string]*yaml.Node, error) {
	if n.Kind != yaml.MappingNode {
		return nil, nil, p.errf(n, "%s must be a mapping", what)
	}
	ok := map[string]bool{}
	for _, k := range allowed {
		ok[k] = true
	}
	vals, keys := map[string]*yaml.Node{}, map[string]*yaml.Node{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode || !ok[k.Value] {
			return nil, nil, p.errf(k, "unknown key %q in %s (known: %s)", k.Value, what, strings.Join(allowed, ", "))
		}
		if first := keys[k.Value]; first != nil {
			return nil, nil, p.errf(k, "duplicate key %q (first at line %d)", k.Value, first.Line)
		}
		keys[k.Value], vals[k.Value] = k, v
	}
	return vals, keys, nil
}

func (p *sparser) str(n *yaml.Node, what string) (string, error) {
	if n.Kind != yaml.ScalarNode || n.ShortTag() == "!!null" {
		return "", p.errf(n, "%s must be a string", what)
	}
	return n.Value, nil
}

// strList reads a list of scalars, or one scalar as a list of one.
func (p *sparser) strList(n *yaml.Node, what string) ([]string, error) {
	if n.Kind == yaml.ScalarNode && n.ShortTag() != "!!null" {
		return []string{n.Value}, nil
	}
	if n.Kind != yaml.SequenceNode {
		return nil, p.errf(n, "%s must be a list", what)
	}
	out := []string{}
	for _, c := range n.Content {
		if c.Kind != yaml.ScalarNode || c.ShortTag() == "!!null" {
			return nil, p.errf(c, "%s: each entry must be a string", what)
		}
		out = append(out, c.Value)
	}
	return out, nil
}

func (p *sparser) integer(n *yaml.Node, what string, lo, hi int) (int, error) {
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!int" {
		return 0, p.errf(n, "%s must be an integer", what)
	}
	v, err := strconv.ParseInt(strings.ReplaceAll(n.Value, "_", ""), 0, 64)
	if err != nil || v < int64(lo) || v > int64(hi) {
		return 0, p.errf(n, "%s must be %d..%d", what, lo, hi)
	}
	return int(v), nil
}

// line is the line of a top-level key (1 when absent).
func (s *Spec) line(key string) int {
	if l := s.lines[key]; l > 0 {
		return l
	}
	if key == "variants" || key == "kernels" || key == "machines" {
		for _, alt := range []string{"variant", "kernel", "machine"} {
			if strings.HasPrefix(key, alt) {
				if l := s.lines[alt]; l > 0 {
					return l
				}
			}
		}
	}
	return 1
}

// errAt is a user error in the spec at a top-level key's line, or a plain
// error for specs built from flags.
func (s *Spec) errAt(key string, format string, args ...any) error {
	if s.File == "" {
		return fmt.Errorf(format, args...)
	}
	return fileerr.Errorf(s.File, s.line(key), format, args...)
}

func (s *Spec) errLine(line int, format string, args ...any) error {
	if s.File == "" {
		return fmt.Errorf(format, args...)
	}
	return fileerr.Errorf(s.File, line, format, args...)
}
