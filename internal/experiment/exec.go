package experiment

import (
	"bytes"
	"path/filepath"
	"time"

	"github.com/schedlab/schedlab/internal/observe"
	"github.com/schedlab/schedlab/internal/sched"
	"github.com/schedlab/schedlab/internal/trace"
	wlrun "github.com/schedlab/schedlab/internal/workload/run"
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

// Config returns the run configuration of a point: tip is the kernel
// baseline with the base of every variant in TipBase applied
// (sched.ApplyVariantBase); a variant is sched.ApplyVariant.
func (p *Plan) RunConfig(pt *Point, dir string) wlrun.Config {
	w := &p.Workloads[pt.Workload]
	cfg := wlrun.Config{
		Machine:  p.Machines[pt.Machine].MachineArg(dir),
		Kernel:   pt.Kernel,
		Features: p.Features,
		Seed:     pt.Seed,
		Tool:     w.Tool,
		Args:     w.Param.ArgsFor(w.Args, pt.Load),
		CPUs:     p.CPUs,
	}
	switch {
	case pt.Variant != Tip:
		cfg.Variant, cfg.ApplyVariant = pt.Variant, sched.ApplyVariant
	case len(p.TipBase) > 0:
		bases := p.TipBase
		cfg.Variant = Tip
		cfg.ApplyVariant = func(s *sched.Settings, _ string) error {
			for _, v := range bases {
				if err := sched.ApplyVariantBase(s, v); err != nil {
					return err
				}
			}
			return nil
		}
	}
	return cfg
}

// Execute runs one point on a kernel of its own and returns its record.
// dir is the results directory relative machine files are read from ("" if
// none). progress, if set, is called with the fraction of the benchmark
// done.
func Execute(p *Plan, pt *Point, dir string, progress func(float64)) (*Record, error) {
	cfg := p.RunConfig(pt, dir)
	_, inst, err := wlrun.Parse(cfg.Tool, cfg.Args)
	if err != nil {
		return nil, err
	}
	k, _, err := wlrun.Kernel(&cfg)
	if err != nil {
		return nil, err
	}
	wlrun.ApplyCosts(&cfg, inst)
	var occ *occupancyWriter
	var tr *observe.Tracer
	if pt.Trace {
		occ = newOccupancyWriter(k.NrCPUs())
		tr = observe.AttachTracer(k, occ)
	}
	jiffies0 := k.Jiffies()
	start := time.Now()
	if err := wlrun.Drive(k, inst, 0, progress); err != nil {
		return nil, err
	}
	wall := time.Since(start)
	var out bytes.Buffer
	if err := inst.Report(&out); err != nil {
		return nil, err
	}
	w := &p.Workloads[pt.Workload]
	r := &Record{SchemaVersion: RecordSchemaVersion, Key: pt.Key, Experiment: p.Name,
		Machine: p.Machines[pt.Machine].Label, NrCPUs: k.NrCPUs(), Kernel: pt.Kernel, Variant: pt.Variant,
		Run: pt.Run, Seed: pt.Seed, Metrics: Metrics(inst.Metrics()), Output: out.String()}
	r.Workload.Name, r.Workload.Tool, r.Workload.Args = w.Name, w.Tool, cfg.Args
	r.Param.Name, r.Param.Value = w.Param.Name, pt.Load
	r.Schedstat = SumSnapshot(observe.Snapshot(k), observe.SchedstatVersion(pt.Kernel))
	r.Schedstat.Jiffies -= jiffies0
	r.Sim.Events, r.Sim.SimulatedNs, r.Sim.WallNs = k.Eng.Events(), int64(k.Now()), wall.Nanoseconds()
	if tr != nil {
		if err := tr.Close(); err != nil {
			return nil, err
		}
		r.Occupancy = occ.finish(uint64(k.Now()))
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
