package sim

import (
	"bytes"
	"fmt"
	"time"

	"github.com/schedlab/schedlab/internal/costmodel"
	"github.com/schedlab/schedlab/internal/cpumask"
	"github.com/schedlab/schedlab/internal/engine"
	"github.com/schedlab/schedlab/internal/observe"
	"github.com/schedlab/schedlab/internal/sched"
	"github.com/schedlab/schedlab/internal/schedstat"
	"github.com/schedlab/schedlab/internal/topology"
	"github.com/schedlab/schedlab/internal/workload"
	"github.com/schedlab/schedlab/internal/workload/background"
)

// Observer watches a run: Attach is called with the run's kernel after the
// workload is built and before it starts (to attach a tracer, take a
// schedstat snapshot); the function it returns, if any, runs when the
// workload is done, in the order the observers were given.
type Observer func(k *sched.Kernel) (finish func() error, err error)

// Options are how a run is watched; they never change its result.
type Options struct {
	// Observers attach to the kernel before the workload starts.
	Observers []Observer
	// Progress, when set, is called after every Slice of simulated time
	// with the fraction of the benchmark done.
	Progress func(frac float64)
	// Slice is the simulated time between Progress calls (default 1 ms).
	// Slicing does not change the order of events.
	Slice engine.Time
}

// Built is a run's kernel and workload before the engine starts, for
// callers that drive it themselves (benchmarks, tests) through Drive.
type Built struct {
	Config   Config // resolved
	Kernel   *sched.Kernel
	Machine  *topology.MachineSpec
	Tool     *Tool
	Instance workload.Instance
	// Costs are the cost-model parameters in force (nil with NoCosts).
	Costs *costmodel.Params
}

// Build resolves cfg and builds its kernel and workload: steps 1 to 4 of
// the package comment.
func Build(cfg Config) (*Built, error) {
	if err := cfg.Resolve(); err != nil {
		return nil, err
	}
	t, inst, err := Parse(cfg.Tool, cfg.Args)
	if err != nil {
		return nil, err
	}
	s, err := cfg.Settings()
	if err != nil {
		return nil, err
	}
	spec, err := topology.Load(cfg.Machine)
	if err != nil {
		return nil, err
	}
	topo, err := topology.Build(spec, sched.TopologyOptions(s))
	if err != nil {
		return nil, err
	}
	k, err := sched.New(engine.New(cfg.Seed), topo, s)
	if err != nil {
		return nil, err
	}
	b := &Built{Config: cfg, Kernel: k, Machine: spec, Tool: t, Instance: inst}
	// The machine file's costs section is checked even without the cost
	// model: a misspelt parameter is an error at its line either way.
	p, err := costmodel.Resolve(spec, cfg.CostsFile)
	if err != nil {
		return nil, err
	}
	if !cfg.NoCosts {
		// One compiled table for the run: the kernel charges it, the
		// workload's system calls come from it.
		tab := costmodel.Compile(p, spec)
		k.ApplyCosts(tab)
		b.Costs = p
		// A --sysctl beats a cost-model default (model_sis_scan_cost_ns).
		if err := applySysctls(&k.S, cfg.Sysctls); err != nil {
			return nil, err
		}
		if ca, ok := inst.(workload.CostAware); ok {
			ca.SetCosts(tab.Syscalls)
		}
	}
	if fl, ok := inst.(workload.FullLengther); ok {
		fl.SetFullLength(cfg.FullLength)
	}
	if cfg.CPUs != "" {
		m, err := cpumask.Parse(k.NrCPUs(), cfg.CPUs)
		if err != nil {
			return nil, fmt.Errorf("--cpus %s: %v", cfg.CPUs, err)
		}
		if m.Empty() {
			return nil, fmt.Errorf("--cpus %s: no CPU of %s's %d in the list", cfg.CPUs, spec.Name, k.NrCPUs())
		}
		k.DefaultAllowed = m
	}
	if err := background.Add(k, cfg.BackgroundCgroups); err != nil {
		return nil, err
	}
	return b, nil
}

// Run runs cfg to completion and returns its record.
func Run(cfg Config, opt Options) (*Result, error) {
	b, err := Build(cfg)
	if err != nil {
		return nil, err
	}
	return b.Run(opt)
}

// Run attaches the observers, drives the workload to its end and collects
// the result: steps 5 to 7 of the package comment.
func (b *Built) Run(opt Options) (*Result, error) {
	k := b.Kernel
	var finish []func() error
	for _, o := range opt.Observers {
		f, err := o(k)
		if err != nil {
			return nil, err
		}
		if f != nil {
			finish = append(finish, f)
		}
	}
	jiffies0 := k.Jiffies()
	start := time.Now()
	if err := Drive(k, b.Instance, opt.Slice, opt.Progress); err != nil {
		return nil, err
	}
	wall := time.Since(start)
	for _, f := range finish {
		if err := f(); err != nil {
			return nil, err
		}
	}
	var out bytes.Buffer
	if err := b.Instance.Report(&out); err != nil {
		return nil, err
	}
	cfg := &b.Config
	r := &Result{
		SchemaVersion: SchemaVersion,
		Machine:       b.Machine.Name,
		NrCPUs:        k.NrCPUs(),
		Kernel:        k.S.Kernel,
		Variant:       cfg.VariantLabel(),
		Seed:          cfg.Seed,
		Options:       optionsOf(cfg),
		Metrics:       b.Instance.Metrics(),
		Output:        out.String(),
	}
	r.Workload.Name, r.Workload.Tool = cfg.Tool, cfg.Tool
	r.Workload.Args = append([]string{}, cfg.Args...)
	r.Schedstat = schedstat.Sum(observe.Snapshot(k), observe.SchedstatVersion(k.S.Kernel))
	r.Schedstat.Jiffies -= jiffies0
	r.Balance = balanceOf(k.BalanceStats)
	r.Sim.Events, r.Sim.SimulatedNs, r.Sim.WallNs = k.Eng.Events(), int64(k.Now()), wall.Nanoseconds()
	return r, nil
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
			return fmt.Errorf("sim: the workload stopped making progress at %v with no event pending (a deadlock in the workload model)", k.Now())
		}
		k.Eng.RunUntil(k.Now() + slice)
		if progress != nil {
			progress(inst.Progress())
		}
	}
	return nil
}

// Probe starts the workload and runs it, slice by slice (1 ms of simulated
// time), until it is done or the wall clock now() has advanced by budget
// since the start; it returns the workload's progress (0..1), whether it
// finished, and the wall time used. `schedlab sweep --estimate` extrapolates
// a run's wall time from it. Observers are not attached.
func (b *Built) Probe(budget time.Duration, now func() time.Time) (progress float64, done bool, used time.Duration, err error) {
	k, inst := b.Kernel, b.Instance
	start := now()
	if err := inst.Start(k); err != nil {
		return 0, false, 0, err
	}
	for !inst.Done() {
		if k.Eng.Pending() == 0 {
			return 0, false, 0, fmt.Errorf("sim: the workload stopped making progress at %v with no event pending (a deadlock in the workload model)", k.Now())
		}
		k.Eng.RunUntil(k.Now() + engine.Millisecond)
		if used = now().Sub(start); used >= budget {
			return inst.Progress(), false, used, nil
		}
	}
	return 1, true, now().Sub(start), nil
}
