package experiment

import (
	"context"
	"path/filepath"

	"github.com/schedlab/schedlab/internal/engine"
	"github.com/schedlab/schedlab/internal/observe"
	"github.com/schedlab/schedlab/internal/sched"
	"github.com/schedlab/schedlab/internal/sim"
	"github.com/schedlab/schedlab/internal/trace"
)

// MachineArg is the machine argument of a plan machine for the run
// package: a preset name, or a file path (relative refs are relative to
// the results directory dir).
func (m *PlanMachine) MachineArg(dir string) string {
	if m.File && !filepath.IsAbs(m.Ref) && dir != "" {
		return filepath.Join(dir, m.Ref)
	}
	return m.Ref
}

// RunConfig is the run of a point: tip is the kernel baseline with the
// base of every variant in TipBase applied ("base:NAME"); a variant column
// is that variant; a column of Plan.Columns is tip plus its settings, or
// its own kernel with them (columns.go).
func (p *Plan) RunConfig(pt *Point, dir string) sim.Config {
	w := &p.Workloads[pt.Workload]
	kernel, variants, features, sysctls := p.columnConfig(pt.Variant, pt.Kernel)
	cfg := sim.Config{
		Machine:           p.Machines[pt.Machine].MachineArg(dir),
		Kernel:            kernel,
		Variants:          variants,
		Features:          features,
		Sysctls:           sysctls,
		CPUs:              p.CPUs,
		BackgroundCgroups: p.BackgroundCgroups,
		CostsFile:         p.Costs,
		NoCosts:           p.NoCosts,
		FullLength:        p.FullLength,
		Warmup:            p.warmupFor(w.Tool),
		Seed:              pt.Seed,
		Tool:              w.Tool,
		Args:              w.Param.ArgsFor(w.Args, pt.Load),
	}
	return cfg
}

// Execute runs one point through the run pipeline (sim.Run) and returns
// its record. dir is the results directory relative machine files are
// read from ("" if none). progress, if set, is called with the fraction
// of the benchmark done.
func Execute(p *Plan, pt *Point, dir string, progress func(float64)) (*Record, error) {
	return execute(context.Background(), p, pt, dir, progress)
}

// execute is Execute stopped when ctx is done (sim.Options.Context).
func execute(ctx context.Context, p *Plan, pt *Point, dir string, progress func(float64)) (*Record, error) {
	cfg := p.RunConfig(pt, dir)
	opt := sim.Options{Progress: progress, Context: ctx}
	var occ *occupancyWriter
	var tr *observe.Tracer
	if pt.Trace {
		opt.Observers = append(opt.Observers, func(k *sched.Kernel) (func() error, error) {
			occ = newOccupancyWriter(k.NrCPUs())
			tr = observe.AttachTracer(k, occ)
			return tr.Close, nil
		})
	}
	res, err := sim.Run(cfg, opt)
	if err != nil {
		return nil, err
	}
	w := &p.Workloads[pt.Workload]
	r := &Record{Key: pt.Key, Experiment: p.Name, Run: pt.Run, Result: *res}
	// The kernel is the one the column ran: tip's, or a column's own in
	// a comparison across kernels (the key names tip's).
	r.Machine, r.Kernel, r.Variant = p.Machines[pt.Machine].Label, cfg.Kernel, pt.Variant
	r.Workload.Name = w.Name
	r.Param.Name, r.Param.Value = w.Param.Name, pt.Load
	if occ != nil {
		r.Occupancy = occ.finish(uint64(res.Sim.SimulatedNs))
	}
	return r, nil
}

// Occupancy is how busy each CPU was over a run: the run cut into bins of
// BinNs simulated nanoseconds (the last one may be shorter), and for each
// CPU and bin the fraction of the bin a task other than idle ran there,
// scaled to 0..255.
type Occupancy struct {
	BinNs int64 `json:"bin_ns"`
	EndNs int64 `json:"end_ns"`
	// CPUs holds one byte per bin for each CPU (base64 in JSON).
	CPUs [][]byte `json:"cpus"`
}

// maxOccBins bounds the bins kept while a run goes on; the bin width
// doubles whenever the run outgrows them.
const maxOccBins = 128

// occupancyWriter is a trace.Writer that keeps per-CPU busy time per bin
// from sched_switch events.
type occupancyWriter struct {
	busy  []bool
	since []uint64
	binNs uint64
	ns    [][]uint64 // per CPU, per bin: busy ns
}

func newOccupancyWriter(n int) *occupancyWriter {
	o := &occupancyWriter{busy: make([]bool, n), since: make([]uint64, n), binNs: 10_000, ns: make([][]uint64, n)}
	for i := range o.ns {
		o.ns[i] = make([]uint64, maxOccBins)
	}
	return o
}

func (o *occupancyWriter) Write(ev trace.Event) error {
	if ev.Type != trace.SchedSwitch {
		return nil
	}
	cpu := int(ev.CPU)
	t := ev.TS - sched.ClockBase
	if o.busy[cpu] {
		o.add(cpu, o.since[cpu], t)
	}
	o.busy[cpu] = ev.Next.Pid != 0
	o.since[cpu] = t
	return nil
}

func (o *occupancyWriter) Close() error { return nil }

// add counts [a, b) as busy on cpu.
func (o *occupancyWriter) add(cpu int, a, b uint64) {
	if b <= a {
		return
	}
	for (b-1)/o.binNs >= maxOccBins {
		o.coarsen()
	}
	for a < b {
		bin := a / o.binNs
		end := (bin + 1) * o.binNs
		if end > b {
			end = b
		}
		o.ns[cpu][bin] += end - a
		a = end
	}
}

// coarsen doubles the bin width, merging pairs of bins.
func (o *occupancyWriter) coarsen() {
	for _, row := range o.ns {
		for i := 0; i < maxOccBins/2; i++ {
			row[i] = row[2*i] + row[2*i+1]
		}
		for i := maxOccBins / 2; i < maxOccBins; i++ {
			row[i] = 0
		}
	}
	o.binNs *= 2
}

func (o *occupancyWriter) finish(end uint64) *Occupancy {
	for cpu := range o.busy {
		if o.busy[cpu] {
			o.add(cpu, o.since[cpu], end)
		}
	}
	if end == 0 {
		end = 1
	}
	for (end-1)/o.binNs >= maxOccBins {
		o.coarsen()
	}
	nbins := int((end-1)/o.binNs) + 1
	out := &Occupancy{BinNs: int64(o.binNs), EndNs: int64(end), CPUs: make([][]byte, len(o.ns))}
	for cpu, row := range o.ns {
		b := make([]byte, nbins)
		for i := 0; i < nbins; i++ {
			width := o.binNs
			if i == nbins-1 {
				width = end - uint64(i)*o.binNs
			}
			f := float64(row[i]) / float64(width)
			if f > 1 {
				f = 1
			}
			b[i] = byte(f*255 + 0.5)
		}
		out.CPUs[cpu] = b
	}
	return out
}

// warmupFor is the plan's warm-up for a run of tool: none for a tool that
// cannot run back to back (sim.Tool.Repeatable).
func (p *Plan) warmupFor(tool string) engine.Time {
	if t, ok := sim.Lookup(tool); ok && t.Repeatable {
		return engine.Time(p.WarmupNs)
	}
	return 0
}
