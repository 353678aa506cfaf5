package sim

import (
	"bytes"
	"context"
	"fmt"
	"runtime"
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
	"github.com/schedlab/schedlab/internal/workload/kthreads"
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
	// Watch, when set, is called with the measured run's workload
	// instance after the observers attached and before it starts (an
	// observer hands a workload.Windowed its mark function).
	Watch func(inst workload.Instance)
	// Progress, when set, is called after every Slice of simulated time
	// with the fraction of the benchmark done.
	Progress func(frac float64)
	// Slice is the simulated time between Progress calls (default 1 ms).
	// Slicing does not change the order of events.
	Slice engine.Time
	// Context, when set, stops the run at the end of a slice once it is
	// done (a sweep interrupted by Ctrl-C): Run then returns an error
	// that wraps the context's. A run it does not stop is unchanged.
	Context context.Context
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

	syscalls *costmodel.Syscalls // the workload's system calls (nil with NoCosts)
}

// prepare makes inst this run's instance of the benchmark: the cost
// model's system calls, the full-length option.
func (b *Built) prepare(inst workload.Instance) {
	if ca, ok := inst.(workload.CostAware); ok && b.syscalls != nil {
		ca.SetCosts(*b.syscalls)
	}
	if fl, ok := inst.(workload.FullLengther); ok {
		fl.SetFullLength(b.Config.FullLength)
	}
	b.Instance = inst
}

// warmUp runs the benchmark back to back (Config.Warmup), each time a new
// instance of its command line, until the warm-up's simulated time has
// passed, and leaves b.Instance the measured run's, not yet started. It
// returns how many runs it made. Each must end with every task it made
// exited; a workload's random streams restart with each instance (they are
// named per workload), the kernel's continue.
func (b *Built) warmUp(ctx context.Context) (int, error) {
	k := b.Kernel
	measured := b.Instance
	n := 0
	for ; k.Now() < b.Config.Warmup; n++ {
		inst, err := b.Tool.Parse(b.Config.Args)
		if err != nil {
			return n, err
		}
		b.prepare(inst)
		before := liveTasks(k)
		if err := drive(ctx, k, inst, 0, nil); err != nil {
			return n, fmt.Errorf("--warmup: run %d: %w", n+1, err)
		}
		// The tool is done when its result is known; its last task
		// (hackbench's parent) may still be on its way out.
		for end := k.Now() + 10*engine.Millisecond; liveTasks(k) > before && k.Now() < end && k.Eng.Pending() > 0; {
			k.Eng.RunUntil(k.Now() + 100*engine.Microsecond)
		}
		if left := liveTasks(k) - before; left != 0 {
			return n, fmt.Errorf("--warmup: run %d of %s left %d of its tasks alive 10 ms after its end", n+1, b.Config.Tool, left)
		}
	}
	b.Instance = measured
	return n, nil
}

// liveTasks counts the kernel's tasks that have not exited.
func liveTasks(k *sched.Kernel) int {
	n := 0
	for _, t := range k.Tasks {
		if t.State != sched.TaskDead {
			n++
		}
	}
	return n
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
	b := &Built{Config: cfg, Kernel: k, Machine: spec, Tool: t}
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
		b.syscalls = &tab.Syscalls
	}
	b.prepare(inst)
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
	// The kernel's own threads first, as they exist before any user
	// process (model_kthreads).
	if err := kthreads.Add(k, k.S.Kthreads); err != nil {
		return nil, err
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
	// The run's CPU time is its thread's: locked to it, the simulation
	// is all that thread runs.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	start := time.Now()
	cpu0, cpuOK := threadCPUTime()
	ctx := opt.Context
	if ctx == nil {
		ctx = context.Background()
	}
	warmups, err := b.warmUp(ctx)
	if err != nil {
		return nil, err
	}
	// What the result counts starts here: schedstat is read as a delta
	// from this snapshot, the balance counters restart.
	var before *schedstat.Totals
	events0, now0 := k.Eng.Events(), k.Now()
	if warmups > 0 {
		before = schedstat.Sum(observe.Snapshot(k), observe.SchedstatVersion(k.S.Kernel))
		k.BalanceStats = sched.BalanceStats{}
		k.Branches = sched.BranchCounters{}
	}
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
	if opt.Watch != nil {
		opt.Watch(b.Instance)
	}
	jiffies0 := k.Jiffies()
	if err := drive(ctx, k, b.Instance, opt.Slice, opt.Progress); err != nil {
		return nil, err
	}
	wall := time.Since(start)
	var cpu time.Duration
	if cpu1, ok := threadCPUTime(); ok && cpuOK {
		cpu = max(cpu1-cpu0, 1)
	}
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
	if h, ok := b.Instance.(workload.Histogrammer); ok {
		r.Histograms = h.Histograms()
	}
	r.Workload.Name, r.Workload.Tool = cfg.Tool, cfg.Tool
	r.Workload.Args = append([]string{}, cfg.Args...)
	if w, ok := b.Instance.(workload.Warner); ok {
		r.Warnings = w.Warnings()
	}
	r.Schedstat = schedstat.Sum(observe.Snapshot(k), observe.SchedstatVersion(k.S.Kernel))
	if before != nil {
		r.Schedstat.Sub(before) // jiffies too: before was taken at jiffies0
	} else {
		r.Schedstat.Jiffies -= jiffies0
	}
	r.Balance = balanceOf(k.BalanceStats)
	r.VariantBranches = variantBranchesOf(cfg.Variants, &k.Branches)
	r.Sim.Events, r.Sim.SimulatedNs, r.Sim.WallNs = k.Eng.Events()-events0, int64(k.Now()-now0), wall.Nanoseconds()
	r.Sim.CPUNs = cpu.Nanoseconds()
	if warmups > 0 {
		r.Sim.WarmupRuns, r.Sim.WarmupNs = warmups, int64(now0)
	}
	return r, nil
}

// Drive starts inst on k and runs the engine until inst is done, calling
// progress after every slice of simulated time (default 1 ms). Slicing
// does not change the order of events, so the result does not depend on it.
func Drive(k *sched.Kernel, inst workload.Instance, slice engine.Time, progress func(float64)) error {
	return drive(context.Background(), k, inst, slice, progress)
}

// drive is Drive stopped by ctx at the end of a slice.
func drive(ctx context.Context, k *sched.Kernel, inst workload.Instance, slice engine.Time, progress func(float64)) error {
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
		if ctx.Err() != nil {
			return fmt.Errorf("sim: stopped at %v of simulated time: %w", k.Now(), ctx.Err())
		}
	}
	return nil
}

// Probe starts the workload and runs it, slice by slice (1 ms of simulated
// time), until it is done or the wall clock now() has advanced by budget
// since the start; it returns the workload's progress (0..1), whether it
// finished, and the wall time used. `schedlab sweep --estimate` extrapolates
// a run's wall time from it. Observers are not attached. A warm-up
// (Config.Warmup) runs first, in full, and counts in the wall time.
func (b *Built) Probe(budget time.Duration, now func() time.Time) (progress float64, done bool, used time.Duration, err error) {
	k, inst := b.Kernel, b.Instance
	// A warm-up runs whole, whatever the budget; the progress returned
	// then makes used/progress its wall time plus the measured run's
	// extrapolated one.
	start := now()
	var warm time.Duration
	if b.Config.Warmup > 0 {
		if _, err := b.warmUp(context.Background()); err != nil {
			return 0, false, 0, err
		}
		warm = now().Sub(start)
	}
	scale := func(p float64, used time.Duration) float64 {
		if warm == 0 || p <= 0 {
			return p
		}
		run := float64(used - warm)
		return float64(used) / (float64(warm) + run/p)
	}
	if err := inst.Start(k); err != nil {
		return 0, false, 0, err
	}
	for !inst.Done() {
		if k.Eng.Pending() == 0 {
			return 0, false, 0, fmt.Errorf("sim: the workload stopped making progress at %v with no event pending (a deadlock in the workload model)", k.Now())
		}
		k.Eng.RunUntil(k.Now() + engine.Millisecond)
		if used = now().Sub(start); used >= budget {
			return scale(inst.Progress(), used), false, used, nil
		}
	}
	return 1, true, now().Sub(start), nil
}
