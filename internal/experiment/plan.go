package experiment

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/schedlab/schedlab/internal/costmodel"
	"github.com/schedlab/schedlab/internal/cpumask"
	"github.com/schedlab/schedlab/internal/sim"
	"github.com/schedlab/schedlab/internal/topology"
)

// Tip is the name of the baseline column: the kernel without the patch.
const Tip = "tip"

// PlanSchemaVersion is the version of experiment.json.
const PlanSchemaVersion = 1

// Plan is an experiment resolved against this schedlab: every name checked,
// the kernel of each variant decided, and the matrix of runs. It is what a
// results directory's experiment.json holds, so a sweep can be resumed, or
// sharded over a cluster, from the directory alone.
type Plan struct {
	SchemaVersion int    `json:"schema_version"`
	Name          string `json:"name"`
	Description   string `json:"description,omitempty"`
	Patch         string `json:"patch,omitempty"`
	Profile       string `json:"profile,omitempty"`
	// Machines are presets, or machine files: copied into the results
	// directory (machines/LABEL.yaml) when a sweep starts.
	Machines []PlanMachine `json:"machines"`
	Kernels  []string      `json:"kernels"`
	// Variants are the columns, Tip first.
	Variants []string `json:"variants"`
	// TipBase lists the variants whose comparison kernel is not the plain
	// baseline (sched.VariantInfo.Base): tip applies their base.
	TipBase []string `json:"tip_base,omitempty"`
	// BaseOf lists the variants named as "base:NAME": tip is the kernel
	// each is compared with (its baseline, and its base if it has one),
	// and NAME has no column of its own unless listed too.
	BaseOf []string `json:"base_of,omitempty"`
	// Columns say how the columns run that are more than the variant
	// they are named after (PlanColumn): tip plus flags, or a column on
	// a kernel of its own.
	Columns  []PlanColumn `json:"columns,omitempty"`
	Features []string     `json:"features,omitempty"`
	Sysctls  []string     `json:"sysctls,omitempty"`
	CPUs     string       `json:"cpus,omitempty"`
	// BackgroundCgroups, Costs and NoCosts are sim.Config's options of
	// the same names, for every run.
	BackgroundCgroups int    `json:"background_cgroups,omitempty"`
	Costs             string `json:"costs,omitempty"`
	NoCosts           bool   `json:"no_costs,omitempty"`
	// FullLength is sim.Config's option: no stop at steady state.
	FullLength bool `json:"full_length,omitempty"`
	// WarmupNs is sim.Config.Warmup, for the workloads that can run
	// back to back.
	WarmupNs  int64          `json:"warmup_ns,omitempty"`
	Workloads []PlanWorkload `json:"workloads"`
	// Skipped are the workloads and variants of the experiment that this
	// schedlab does not have (built-in experiments name whole studies).
	Skipped []string `json:"skipped,omitempty"`
	// Runs is the number of runs of every configuration, or with a
	// stopping rule (Sequential) the most a configuration gets.
	Runs       int         `json:"runs"`
	Sequential *Sequential `json:"sequential,omitempty"`
	Seed       uint64      `json:"seed"`
	Trace      bool        `json:"trace,omitempty"`

	points []Point
}

// PlanMachine is one machine of a plan.
type PlanMachine struct {
	Label  string `json:"label"` // the name used in keys and tables: the machine's name
	Ref    string `json:"ref"`   // preset name, host, or file path (relative: to the results directory)
	File   bool   `json:"file,omitempty"`
	Name   string `json:"name"` // the machine's own name (a machine file's name:)
	NrCPUs int    `json:"nr_cpus"`

	yaml  []byte // a file machine's contents until it is written out
	given string // as the spec names it, for errors
}

// PlanWorkload is one workload of a plan.
type PlanWorkload struct {
	Name    string   `json:"name"`
	Tool    string   `json:"tool"`
	Args    []string `json:"args"` // with the ranged token as written
	Param   Param    `json:"param"`
	Metrics []string `json:"metrics,omitempty"`
}

// Point is one run of the matrix.
type Point struct {
	Index    int
	Key      string
	Machine  int // index in Plan.Machines
	Kernel   string
	Variant  string // Tip or a variant name
	Workload int    // index in Plan.Workloads
	Load     string
	Run      int
	Seed     uint64
	Trace    bool
}

// ResolveOptions changes how Resolve treats what this schedlab lacks.
type ResolveOptions struct {
	// AllowMissing skips workloads whose tool and variants that this
	// schedlab does not have (listing them in Plan.Skipped) instead of
	// failing: the built-in experiments name whole studies.
	AllowMissing bool
	// Profile applies a profile of the spec first.
	Profile string
}

// Resolve checks s against the machines, kernels, variants and workloads
// schedlab has and expands it into a plan. Mistakes are errors at the
// spec's lines.
func Resolve(s *Spec, opt ResolveOptions) (*Plan, error) {
	if opt.Profile != "" {
		var err error
		if s, err = s.WithProfile(opt.Profile); err != nil {
			return nil, err
		}
	}
	p := &Plan{SchemaVersion: PlanSchemaVersion, Name: s.Name, Description: s.Description, Patch: s.Patch,
		Profile: opt.Profile, Runs: s.Runs, Seed: s.Seed, Trace: s.Trace, Features: append([]string(nil), s.Features...), CPUs: s.CPUs,
		Sysctls: append([]string(nil), s.Sysctls...), BackgroundCgroups: s.BackgroundCgroups, NoCosts: s.NoCosts,
		FullLength: s.FullLength, WarmupNs: int64(s.Warmup)}
	// A stopping rule needs more runs than its minimum to stop anything;
	// --full-length asks for the evaluation as posted: every run, at the
	// whole duration.
	if q := s.Sequential; q != nil && !s.FullLength && q.MinRuns < s.Runs {
		c := *q
		if c.WithinPct <= 0 {
			c.WithinPct = DefaultWithinPct
		}
		p.Sequential = &c
	}
	if s.Costs != "" {
		// A costs file is named relative to the experiment file and
		// stored absolute, so a resumed or sharded sweep finds it.
		c := s.Costs
		if !filepath.IsAbs(c) && s.Dir != "" {
			c = filepath.Join(s.Dir, c)
		}
		abs, err := filepath.Abs(c)
		if err != nil {
			return nil, s.errAt("costs", "costs file %s: %v", s.Costs, err)
		}
		if _, err := os.Stat(abs); err != nil {
			return nil, s.errAt("costs", "costs file %s: %v", s.Costs, unwrapPath(err))
		}
		p.Costs = abs
	}
	if p.Runs < 1 {
		return nil, s.errAt("runs", "runs must be at least 1")
	}
	// Columns and kernels.
	if err := p.resolveColumns(s, opt); err != nil {
		return nil, err
	}
	// Machines, each known by its name (a machine file's name:) in keys,
	// records and tables: two different machines may not share one.
	labels := map[string]PlanMachine{}
	for _, m := range s.Machines {
		pm, err := resolveMachine(s, m)
		if err != nil {
			return nil, err
		}
		if prev, dup := labels[pm.Label]; dup {
			if prev.Ref == pm.Ref || prev.File && pm.File && bytes.Equal(prev.yaml, pm.yaml) {
				return nil, s.errAt("machines", "machine %s is listed twice", pm.Label)
			}
			return nil, s.errAt("machines", "%s and %s are two machines named %s: give one of them another name (name: in its machine file)", prev.given, pm.given, pm.Label)
		}
		labels[pm.Label] = pm
		if p.CPUs != "" {
			// What sim.Run would refuse at the first run of this
			// machine, said at the file's line before any run.
			m, err := cpumask.Parse(pm.NrCPUs, p.CPUs)
			if err == nil && m.Empty() {
				err = fmt.Errorf("no CPU in the list")
			}
			if err != nil {
				return nil, s.errAt("cpus", "cpus %s on %s (%d CPUs): %v", p.CPUs, pm.Label, pm.NrCPUs, err)
			}
		}
		p.Machines = append(p.Machines, pm)
	}
	// Workloads.
	for _, w := range s.Workloads {
		tool, args, param, err := ParseCommand(w.Command)
		if err != nil {
			return nil, s.errLine(w.Line, "%v", err)
		}
		if _, ok := sim.Lookup(tool); !ok {
			if opt.AllowMissing {
				p.Skipped = append(p.Skipped, "workload "+w.Name)
				continue
			}
			return nil, s.errLine(w.Line, "%v", &sim.UnknownToolError{Name: tool})
		}
		if w.Param != "" && param.Index >= 0 {
			param.Name = w.Param
		}
		for _, v := range param.Values {
			if _, _, err := sim.Parse(tool, param.ArgsFor(args, v)); err != nil {
				if param.Index < 0 {
					return nil, s.errLine(w.Line, "%s: %v", tool, err)
				}
				return nil, s.errLine(w.Line, "%s with %s=%s: %v", tool, param.Name, v, err)
			}
		}
		metrics := w.Metrics
		if len(metrics) == 0 {
			metrics = PrimaryMetrics(tool)
		}
		for _, m := range w.Metrics {
			if err := sim.CheckMetricName(m); err != nil {
				return nil, s.errLine(w.Line, "%v", err)
			}
		}
		p.Workloads = append(p.Workloads, PlanWorkload{Name: w.Name, Tool: tool, Args: args, Param: param, Metrics: metrics})
	}
	if len(p.Workloads) == 0 {
		return nil, s.errAt("workloads", "no workload can run here (missing: %s)", strings.Join(p.Skipped, ", "))
	}
	if err := p.expand(); err != nil {
		return nil, s.errAt("workloads", "%v", err)
	}
	return p, nil
}

var unsafeRE = regexp.MustCompile(`[^A-Za-z0-9._=-]+`)

func safe(s string) string { return unsafeRE.ReplaceAllString(s, "_") }

func resolveMachine(s *Spec, m string) (PlanMachine, error) {
	looksLikeFile := strings.ContainsRune(m, '/') || strings.HasSuffix(m, ".yaml") || strings.HasSuffix(m, ".yml")
	if !looksLikeFile {
		spec, err := topology.Load(m)
		if err != nil {
			return PlanMachine{}, s.errAt("machines", "%v", err)
		}
		return PlanMachine{Label: spec.Name, Ref: m, Name: spec.Name, NrCPUs: len(spec.CPUs), given: m}, nil
	}
	where := m
	if !filepath.IsAbs(m) && s.Dir != "" {
		where = filepath.Join(s.Dir, m)
	}
	data, err := os.ReadFile(where)
	if err != nil {
		return PlanMachine{}, s.errAt("machines", "machine file %s: %v", m, unwrapPath(err))
	}
	spec, err := topology.ParseYAML(where, data)
	if err != nil {
		return PlanMachine{}, s.errAt("machines", "%v", err)
	}
	// Its costs: section too, before any run starts.
	if _, err := costmodel.For(spec); err != nil {
		return PlanMachine{}, s.errAt("machines", "%v", err)
	}
	ref := where
	if abs, err := filepath.Abs(where); err == nil {
		ref = abs
	}
	// The machine's name, not its file's: the name is what the machine
	// is called everywhere (topology.ValidName keeps it fit for keys).
	return PlanMachine{Label: spec.Name, Ref: ref, File: true, Name: spec.Name, NrCPUs: len(spec.CPUs), yaml: data, given: m}, nil
}

func unwrapPath(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}

// DeriveSeed is the seed of run index run under a master seed: SplitMix64
// of the master seed advanced run+1 times. It depends on nothing else, so
// tip and every variant get the same seed at the same run index, on every
// machine and load (paired comparisons).
func DeriveSeed(master uint64, run int) uint64 {
	z := master + uint64(run+1)*0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// maxPoints is the most runs a plan may hold. The posted evaluations have
// a few thousand; a million is days of a large cluster, and beyond it a
// mistyped runs: or load list would only exhaust memory. (A variable so
// that the fuzz tests can keep their plans small.)
var maxPoints = 1000000

// expand builds the points in the canonical order: machine, kernel,
// workload, load, variant, run.
func (p *Plan) expand() error {
	p.points = nil
	loads := 0
	for _, w := range p.Workloads {
		loads += len(w.Param.Values)
	}
	n := 1
	for _, f := range []int{len(p.Machines), len(p.Kernels), loads, len(p.Variants), p.Runs} {
		if f > 0 && n > maxPoints/f {
			return fmt.Errorf("more than %d runs (%d machines × %d kernels × %d loads × %d variants × %d runs)",
				maxPoints, len(p.Machines), len(p.Kernels), loads, len(p.Variants), p.Runs)
		}
		n *= f
	}
	keys := map[string]bool{}
	for mi := range p.Machines {
		for _, k := range p.Kernels {
			for wi, w := range p.Workloads {
				for _, load := range w.Param.Values {
					for _, v := range p.Variants {
						for r := 0; r < p.Runs; r++ {
							pt := Point{Index: len(p.points), Machine: mi, Kernel: k, Variant: v, Workload: wi,
								Load: load, Run: r, Seed: DeriveSeed(p.Seed, r), Trace: p.Trace && r == 0}
							pt.Key = p.key(&pt)
							if keys[pt.Key] {
								return fmt.Errorf("two runs would share the key %s: make the names distinct", pt.Key)
							}
							keys[pt.Key] = true
							p.points = append(p.points, pt)
						}
					}
				}
			}
		}
	}
	return nil
}

func (p *Plan) key(pt *Point) string {
	w := &p.Workloads[pt.Workload]
	load := "load=" + safe(pt.Load)
	if w.Param.Index >= 0 {
		load = safe(w.Param.Name) + "=" + safe(pt.Load)
	}
	return strings.Join([]string{p.Machines[pt.Machine].Label, pt.Kernel, w.Name, load, pt.Variant, fmt.Sprintf("run%03d", pt.Run)}, "__")
}

// Points lists the runs of the matrix in canonical order.
func (p *Plan) Points() []Point { return p.points }

// Shard returns the points of shard i of n: those whose index is i modulo
// n, so each shard gets a mix of machines, loads and variants. With a
// stopping rule a shard holds whole cells (those whose cell index is i
// modulo n), since which runs a cell needs depends on all of its runs.
func (p *Plan) Shard(i, n int) []Point {
	var out []Point
	for _, pt := range p.points {
		k := pt.Index
		if p.Sequential != nil {
			k = p.cellOf(&pt)
		}
		if k%n == i {
			out = append(out, pt)
		}
	}
	return out
}

// Config is the configuration of a point: its key without the run.
func (p *Plan) Config(pt *Point) string {
	k := pt.Key
	return k[:strings.LastIndex(k, "__")]
}

// SetTrace turns tracing of run 0 of every configuration on or off.
func (p *Plan) SetTrace(on bool) {
	p.Trace = on
	if err := p.expand(); err != nil {
		panic("experiment: " + err.Error()) // the keys do not depend on tracing
	}
}

// primary are the metrics each tool is judged by when an experiment does
// not say: what mmtests and AMD's tables report.
var primary = map[string][]string{
	"hackbench":            {"time_s"},
	"perf-bench-messaging": {"time_s"},
	"perf":                 {"time_s"},
	"schbench":             {"latency_us.p99"},
	"tbench":               {"throughput_mb_s"},
	"stream":               {"copy_mb_s", "scale_mb_s", "add_mb_s", "triad_mb_s"},
	// Jankbench's figures: frame-time percentiles and the missed share.
	"frames": {"frame_ms.p50", "frame_ms.p90", "frame_ms.p99", "janky_pct"},
}

// PrimaryMetrics are the metrics a tool's table shows by default; nil for
// a tool not listed (its first metric is used).
func PrimaryMetrics(tool string) []string { return append([]string(nil), primary[tool]...) }
