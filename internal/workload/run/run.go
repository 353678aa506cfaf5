// Package run runs one benchmark on one simulated machine: it resolves the
// machine, kernel baseline, variant and features into a kernel, parses the
// tool's own arguments, drives the engine until the benchmark is done and
// collects the tool's output, its metrics and the schedstat totals. It is
// what `schedlab run` calls, and what the workload benchmarks time.
//
// A run is deterministic: the same Config gives byte-identical Output and
// Result (apart from the wall time the caller measures itself).
package run

import (
	"bytes"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/schedlab/schedlab/internal/costmodel"
	"github.com/schedlab/schedlab/internal/cpumask"
	"github.com/schedlab/schedlab/internal/engine"
	"github.com/schedlab/schedlab/internal/sched"
	"github.com/schedlab/schedlab/internal/topology"
	"github.com/schedlab/schedlab/internal/workload"
	"github.com/schedlab/schedlab/internal/workload/background"
	"github.com/schedlab/schedlab/internal/workload/kobj"
)

// DefaultMachine is the machine used when none is given: the two-socket
// AMD EPYC 7763 (Zen3, 256 CPUs, NPS1) on which the project's reference
// results (patches.md) were taken.
const DefaultMachine = "zen3-2s-nps1"

// Tool is one benchmark command.
type Tool struct {
	Name    string
	Summary string
	// Usage is the tool's own usage text, printed for -h.
	Usage string
	// Parse builds an instance from the tool's arguments.
	Parse func(args []string) (workload.Instance, error)
}

var tools = map[string]*Tool{}

func register(t *Tool) {
	if _, dup := tools[t.Name]; dup {
		panic("run: tool " + t.Name + " registered twice")
	}
	tools[t.Name] = t
}

// Tools lists the tools by name.
func Tools() []*Tool {
	out := make([]*Tool, 0, len(tools))
	for _, t := range tools {
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Lookup finds a tool by name.
func Lookup(name string) (*Tool, bool) {
	t, ok := tools[name]
	return t, ok
}

// UnknownToolError names a workload that does not exist.
type UnknownToolError struct{ Name string }

func (e *UnknownToolError) Error() string {
	var names []string
	for _, t := range Tools() {
		names = append(names, t.Name)
	}
	return fmt.Sprintf("unknown workload %q (have %s)", e.Name, strings.Join(names, ", "))
}

// Config describes a run.
type Config struct {
	Machine  string // preset, "host" or YAML file; "" = DefaultMachine
	Kernel   string // baseline; "" = v6.19
	Variant  string // "" = none
	Features []string
	Seed     uint64
	Tool     string
	Args     []string
	// ApplyVariant applies Variant to the settings (sched.ApplyVariant).
	ApplyVariant func(s *sched.Settings, name string) error
	// Progress, when set, is called after every slice of simulated time
	// with the fraction of the benchmark done.
	Progress func(frac float64)
	// Slice is the simulated time between Progress calls (default 1 ms).
	Slice engine.Time
	// CostsFile is a cost-model file applied over the machine's costs
	// (costmodel.Resolve); NoCosts runs without the cost model (only the
	// workloads' default system-call costs and the IPI latency constant).
	CostsFile string
	NoCosts   bool
	// BackgroundCgroups adds that many cgroups with a briefly waking task
	// each (package background) before the workload starts.
	BackgroundCgroups int
	// CPUs, a cpulist, confines the workload as `taskset -c CPUs` would:
	// its first tasks get that affinity and their children inherit it.
	CPUs string
	// Attach, when set, is called with the run's kernel before the
	// workload starts (to attach a tracer, take a schedstat snapshot);
	// the function it returns, if any, runs when the workload is done.
	Attach func(k *sched.Kernel) (func() error, error)
	// costs are the resolved parameters (set by Kernel).
	costs *costmodel.Params
}

// Result is what a run produced.
type Result struct {
	Output    []byte // the tool's output
	Machine   string
	NrCPUs    int
	Kernel    string
	Variant   string
	Seed      uint64
	Tool      string
	Args      []string
	Metrics   []workload.Metric
	Schedstat Schedstat
	Events    uint64
	Simulated engine.Time
	// Balance is what the load balancer did: calls and time of
	// update_blocked_averages, newidle, periodic and NOHZ balance.
	Balance sched.BalanceStats
}

// Schedstat is the sum over all CPUs of the /proc/schedstat counters.
type Schedstat struct {
	TTWUCount   uint64
	TTWULocal   uint64
	SchedCount  uint64
	SchedGoidle uint64
	RunTimeNs   uint64
	RunDelayNs  uint64
	Pcount      uint64
	YldCount    uint64
	Domains     []DomainStat // per level, bottom-up
}

// DomainStat sums one domain level's wakeup counters over all CPUs.
type DomainStat struct {
	Level          string
	TTWUWakeRemote uint64
	TTWUMoveAffine uint64
}

// ErrNoVariants is returned when a variant is asked for but the run has no
// way to apply one.
var ErrNoVariants = errors.New("variants are not available")

// Parse builds the benchmark instance for cfg's tool and arguments.
func Parse(tool string, args []string) (*Tool, workload.Instance, error) {
	t, ok := Lookup(tool)
	if !ok {
		return nil, nil, &UnknownToolError{tool}
	}
	inst, err := t.Parse(args)
	return t, inst, err
}

// Kernel builds the simulated kernel for cfg.
func Kernel(cfg *Config) (*sched.Kernel, *topology.MachineSpec, error) {
	machine := cfg.Machine
	if machine == "" {
		machine = DefaultMachine
	}
	kernel := cfg.Kernel
	if kernel == "" {
		kernel = sched.KernelV619
	}
	s, err := sched.Baseline(kernel)
	if err != nil {
		return nil, nil, err
	}
	if cfg.Variant != "" {
		if cfg.ApplyVariant == nil {
			return nil, nil, ErrNoVariants
		}
		if err := cfg.ApplyVariant(&s, cfg.Variant); err != nil {
			return nil, nil, err
		}
	}
	for _, f := range cfg.Features {
		if err := s.SetFeature(f); err != nil {
			return nil, nil, err
		}
	}
	spec, err := topology.Load(machine)
	if err != nil {
		return nil, nil, err
	}
	topo, err := topology.Build(spec, topology.Options{Kernel: kernel})
	if err != nil {
		return nil, nil, err
	}
	k, err := sched.New(engine.New(cfg.Seed), topo, s)
	if err != nil {
		return nil, nil, err
	}
	if cfg.CPUs != "" {
		m, err := cpumask.Parse(k.NrCPUs(), cfg.CPUs)
		if err != nil {
			return nil, nil, fmt.Errorf("--cpus: %v", err)
		}
		if m.Empty() {
			return nil, nil, fmt.Errorf("--cpus: no CPU in %q", cfg.CPUs)
		}
		k.DefaultAllowed = m
	}
	if !cfg.NoCosts {
		p, err := costmodel.Resolve(spec, cfg.CostsFile)
		if err != nil {
			return nil, nil, err
		}
		k.ApplyCosts(p)
		cfg.costs = p
	}
	return k, spec, nil
}

// ApplyCosts gives a workload the system-call costs of the run's cost model
// (after Kernel); workloads that do not charge system calls ignore it.
func ApplyCosts(cfg *Config, inst workload.Instance) {
	if ca, ok := inst.(workload.CostAware); ok && cfg.costs != nil {
		ca.SetCosts(kobj.CostsFromModel(cfg.costs))
	}
}

// Run runs cfg to completion.
func Run(cfg Config) (*Result, error) {
	_, inst, err := Parse(cfg.Tool, cfg.Args)
	if err != nil {
		return nil, err
	}
	k, spec, err := Kernel(&cfg)
	if err != nil {
		return nil, err
	}
	ApplyCosts(&cfg, inst)
	if err := background.Add(k, cfg.BackgroundCgroups); err != nil {
		return nil, err
	}
	var finish func() error
	if cfg.Attach != nil {
		if finish, err = cfg.Attach(k); err != nil {
			return nil, err
		}
	}
	if err := Drive(k, inst, cfg.Slice, cfg.Progress); err != nil {
		return nil, err
	}
	if finish != nil {
		if err := finish(); err != nil {
			return nil, err
		}
	}
	var out bytes.Buffer
	if err := inst.Report(&out); err != nil {
		return nil, err
	}
	res := &Result{
		Output:    out.Bytes(),
		Machine:   spec.Name,
		NrCPUs:    k.NrCPUs(),
		Kernel:    k.S.Kernel,
		Variant:   cfg.Variant,
		Seed:      cfg.Seed,
		Tool:      cfg.Tool,
		Args:      append([]string{}, cfg.Args...),
		Metrics:   inst.Metrics(),
		Schedstat: Totals(k),
		Events:    k.Eng.Events(),
		Simulated: k.Now(),
		Balance:   k.BalanceStats,
	}
	if res.Args == nil {
		res.Args = []string{}
	}
	return res, nil
}

// Drive starts inst on k and runs the engine until inst is done, calling
// progress after every slice of simulated time (default 1 ms). Slicing
// does not change the order of events, so the result does not depend on it.
func Drive(k *sched.Kernel, inst workload.Instance, slice engine.Time, progress func(float64)) error {
	if slice <= 0 {
		slice = engine.Millisecond
	}
	if err := inst.Start(k); err != nil {
		return err
	}
	for !inst.Done() {
		if k.Eng.Pending() == 0 {
			return fmt.Errorf("run: the workload stopped making progress at %v with no event pending (a deadlock in the workload model)", k.Now())
		}
		k.Eng.RunUntil(k.Now() + slice)
		if progress != nil {
			progress(inst.Progress())
		}
	}
	return nil
}

// Totals sums the schedstat counters over all CPUs and domain levels.
func Totals(k *sched.Kernel) Schedstat {
	var s Schedstat
	idx := map[string]int{}
	for cpu, rq := range k.Rqs {
		st := &rq.Schedstat
		s.TTWUCount += st.TTWUCount
		s.TTWULocal += st.TTWULocal
		s.SchedCount += st.SchedCount
		s.SchedGoidle += st.SchedGoidle
		s.RunTimeNs += st.RqCPUTime
		s.RunDelayNs += st.RunDelay
		s.Pcount += st.Pcount
		s.YldCount += st.YldCount
		for _, sd := range k.Domains(cpu) {
			name := sd.T.Name
			i, ok := idx[name]
			if !ok {
				i = len(s.Domains)
				idx[name] = i
				s.Domains = append(s.Domains, DomainStat{Level: name})
			}
			s.Domains[i].TTWUWakeRemote += sd.Stats.TTWUWakeRemote
			s.Domains[i].TTWUMoveAffine += sd.Stats.TTWUMoveAffine
		}
	}
	return s
}
