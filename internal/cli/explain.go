package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"runtime"
	"strings"
	"sync"

	"github.com/spf13/cobra"

	"github.com/schedlab/schedlab/internal/experiment"
	"github.com/schedlab/schedlab/internal/experiment/compare"
	"github.com/schedlab/schedlab/internal/explain"
	"github.com/schedlab/schedlab/internal/sim"
	"github.com/schedlab/schedlab/internal/workload"
)

// schedlab explain: why a variant's run differs from tip's. See
// docs/explain.md.
func init() {
	register(func(env *Env) *cobra.Command {
		var (
			rf                       runFlags
			jsonFile, metric, column string
			runs, jobs, ctxSz        int
		)
		c := &cobra.Command{
			Use:   "explain (--variant V | --column NAME=FLAGS) [flags] WORKLOAD [the tool's own arguments]",
			Short: "Say why a variant's run differs from tip's: the first divergence, the decisions, the metric's change taken apart",
			Long: `Run a benchmark on tip (the kernel the variant is compared with, as compare's
tip: --variant base:V) and on the variant, on the same seeds, watching every
placement decision and what each task's time went to, and print:

 1. the first divergence of run 0: the first wakeup, fork/exec placement or
    balance migration where the two runs part (time, task, path, waking CPU,
    prev, the CPU each chose and why, with wake_affine's outcome), the first
    decision taken at a different time, which came first, and the decisions
    just before;
 2. the decision table over all runs: decisions by path and reason, by
    distance from the waking CPU and from prev (named by the machine's
    sched-domain levels), balance migrations by type and level;
 3. the attribution of the metric's change (--metric; the benchmark's usual
    one by default) to the parts of the tasks' time: run time by the cost
    model's categories, wait by what the CPU was doing; the parts and the
    remainder add up to the simulated change.

  schedlab explain --machine kunpeng920-128 --cpus 0-31 --variant sis-cluster tbench -t 5 32

--column 'NAME=FLAGS' explains a column of flags laid over tip instead
(compare's --column: --variant, --feature, --sysctl, --kernel), e.g. SIS_PROP
against SIS_UTIL:

  schedlab explain --kernel v6.0 --column 'prop=--feature SIS_PROP --feature NO_SIS_UTIL' tbench -t 5 32

Run i of both kernels uses the seed compare's run i uses (derived from
--seed). Every run option of 'schedlab run' applies to both. --json writes
everything (docs/explain.md describes the schema).`,
			Args: func(cmd *cobra.Command, args []string) error {
				if len(args) == 0 {
					return fmt.Errorf("explain: name a workload, e.g. 'schedlab explain --variant short-task-v3 hackbench -l 50 -g 2'")
				}
				return nil
			},
			RunE: func(cmd *cobra.Command, args []string) error {
				tool, toolArgs := args[0], args[1:]
				t, _, err := sim.Parse(tool, toolArgs)
				if errors.Is(err, workload.ErrHelp) {
					fmt.Fprint(env.Stdout, t.Usage)
					return nil
				}
				if err != nil {
					return err
				}
				if err := rf.check(cmd.Flags()); err != nil {
					return err
				}
				var col experiment.Column
				if column != "" {
					if len(rf.variants) > 0 {
						return fmt.Errorf("--column %s: explain compares tip with either one variant or one column; give --variant or --column, not both", column)
					}
					c, err := experiment.ParseColumn(column)
					if err != nil {
						return fmt.Errorf("--column %s: %v", column, err)
					}
					col = c
				}
				switch {
				case column != "":
				case len(rf.variants) != 1:
					return fmt.Errorf("--variant: name the variant to explain (see 'schedlab variants'), or give --column NAME=FLAGS")
				case strings.HasPrefix(rf.variants[0], sim.BasePrefix):
					return fmt.Errorf("--variant %s: explain compares a variant with its base; give the variant's name", rf.variants[0])
				case runs < 1:
					return fmt.Errorf("--runs %d: give at least 1", runs)
				case ctxSz < 0:
					return fmt.Errorf("--context %d: give 0 or more decisions", ctxSz)
				}
				cfg := rf.config(tool, toolArgs)
				if err := sim.CheckOutputFile("--json", jsonFile); err != nil {
					return err
				}
				if jobs < 1 {
					jobs = max(1, runtime.NumCPU()/2)
				}
				prog := newProgress(env)
				opt := explainOptions{Seed: rf.seed, Runs: runs, Jobs: jobs, Metric: metric, Context: ctxSz, prog: prog}
				var rep *explain.Report
				if column != "" {
					rep, err = explainColumn(cfg, col, opt)
				} else {
					rep, err = explainRuns(cfg, opt)
				}
				prog.clear()
				if err != nil {
					return err
				}
				if err := rep.Format(env.Stdout); err != nil {
					return err
				}
				if jsonFile != "" {
					b, err := json.MarshalIndent(rep, "", "  ")
					if err != nil {
						return err
					}
					if err := os.WriteFile(jsonFile, append(b, '\n'), 0o644); err != nil {
						return fmt.Errorf("--json %s: %v", jsonFile, unwrapPathError(err))
					}
				}
				fmt.Fprintf(env.Stderr, "schedlab: explain %s on %s (%d CPUs), kernel %s, tip %s against %s, master seed %d, %d run%s%s\n",
					tool, rep.Machine, rep.NrCPUs, rep.Kernel, rep.Tip, rep.Variant, rf.seed, runs, plural(runs), kernelOrigin(rep.Kernel, rf.kernel, rf.variants))
				return nil
			},
		}
		f := c.Flags()
		f.SetInterspersed(false)
		rf.add(f, false)
		f.Lookup("variant").Usage = "the kernel variant to explain against its base (see 'schedlab variants')"
		f.Lookup("seed").Usage = "master seed: run i of both kernels uses a seed derived from it, as compare's run i does"
		f.IntVar(&runs, "runs", 1, "runs of each kernel: the divergence is run 0's, the tables and the attribution are over all")
		f.IntVar(&jobs, "jobs", 0, "pairs of runs at once, each pair two threads (default: half the CPUs)")
		f.StringVar(&metric, "metric", "", "the metric whose change is attributed (default the benchmark's usual one, e.g. time_s, throughput_mb_s, latency_us.p99)")
		f.StringVar(&jsonFile, "json", "", "also write the whole report as JSON to this file (docs/explain.md)")
		f.IntVar(&ctxSz, "context", 5, "decisions to show before the first divergence")
		f.StringVar(&column, "column", "", "explain a column of flags over tip instead of a variant, as compare's --column: 'NAME=FLAGS' with --variant, --feature, --sysctl and --kernel (e.g. 'prop=--feature SIS_PROP --feature NO_SIS_UTIL')")
		return c
	})
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// explainOptions are how explainRuns runs.
type explainOptions struct {
	Seed       uint64 // master seed
	Runs, Jobs int
	Metric     string
	Context    int
	prog       *progress
}

// explainRuns runs tip (cfg with Variants [base:V]) and the variant (cfg
// with Variants [V]) on opt.Runs seeds derived from opt.Seed, through
// sim.Run with explain's recorders, and builds the report: run 0's
// divergence, the decision tables and the attribution over all runs.
func explainRuns(cfg sim.Config, opt explainOptions) (*explain.Report, error) {
	if len(cfg.Variants) != 1 {
		return nil, fmt.Errorf("explain: one variant to explain, not %d", len(cfg.Variants))
	}
	name := cfg.Variants[0]
	cfgs := [2]sim.Config{cfg, cfg}
	cfgs[0].Variants = []string{sim.BasePrefix + name}
	cfgs[1].Variants = []string{name}
	for i := range cfgs {
		if err := cfgs[i].Resolve(); err != nil {
			return nil, err
		}
	}
	return explainPair(cfgs, [2]string{cfgs[0].VariantLabel(), cfgs[1].VariantLabel()}, opt)
}

// columnConfig is tip's configuration with a column's flags laid over it,
// by the rule compare's columns follow (experiment.Column.Settings). Tip
// here has no variant bases: explain --column refuses --variant.
func columnConfig(tip sim.Config, col experiment.Column) sim.Config {
	c := tip
	pc := experiment.PlanColumn{Name: col.Name, Kernel: col.Kernel, Variants: col.Variants, Features: col.Features, Sysctls: col.Sysctls}
	c.Kernel, c.Variants, c.Features, c.Sysctls = pc.Settings(tip.Kernel, nil, tip.Features, tip.Sysctls)
	return c
}

// explainColumn runs tip (cfg) against a column of flags over it
// (explain --column): the same report as for a variant, the column's name
// in the variant's place.
func explainColumn(cfg sim.Config, col experiment.Column, opt explainOptions) (*explain.Report, error) {
	cfgs := [2]sim.Config{cfg, columnConfig(cfg, col)}
	for i := range cfgs {
		if err := cfgs[i].Resolve(); err != nil {
			return nil, err
		}
	}
	tip := cfgs[0].VariantLabel()
	if tip == "" {
		tip = experiment.Tip
	}
	return explainPair(cfgs, [2]string{tip, col.Name}, opt)
}

// explainPair runs cfgs[0] (tip) and cfgs[1] on opt.Runs seeds derived
// from opt.Seed and builds the report (explainRuns).
func explainPair(cfgs [2]sim.Config, labels [2]string, opt explainOptions) (*explain.Report, error) {
	cfg := cfgs[1]
	if opt.prog != nil {
		opt.prog.header("explain %s on %s, kernel %s, tip %s against %s, master seed %d, %d runs",
			cfg.Tool, machineName(cfgs[0].Machine), cfgs[0].Kernel, labels[0], labels[1], opt.Seed, opt.Runs)
	}
	type result struct {
		res  *sim.Result
		data *explain.RunData
		err  error
	}
	results := make([][2]result, opt.Runs)
	seeds := make([]uint64, opt.Runs)
	cmp := explain.NewComparer(opt.Context)
	// Progress: the mean fraction of every run.
	var pmu sync.Mutex
	fracs := make([]float64, 2*opt.Runs)
	report := func(i int, f float64) {
		if opt.prog == nil || !opt.prog.on() {
			return
		}
		pmu.Lock()
		defer pmu.Unlock()
		fracs[i] = f
		var s float64
		for _, x := range fracs {
			s += x
		}
		opt.prog.run(s / float64(len(fracs)))
	}
	runOne := func(i, side int, wg *sync.WaitGroup) {
		defer wg.Done()
		c := cfgs[side]
		c.Seed = seeds[i]
		rec := &explain.Recorder{}
		if i == 0 {
			rec.Stream, rec.Close = cmp.Sink(side), cmp.Done(side)
			// A run that fails never closes its stream: the other
			// must not wait for it.
			defer cmp.Done(side)()
		}
		so := sim.Options{Observers: []sim.Observer{rec.Attach}, Watch: rec.Watch}
		if opt.prog != nil && opt.prog.on() {
			so.Progress = func(f float64) { report(2*i+side, f) }
		}
		res, err := sim.Run(c, so)
		report(2*i+side, 1)
		results[i][side] = result{res, rec.Data(), err}
	}
	sem := make(chan struct{}, max(1, opt.Jobs))
	var all sync.WaitGroup
	for i := 0; i < opt.Runs; i++ {
		seeds[i] = experiment.DeriveSeed(opt.Seed, i)
		sem <- struct{}{}
		all.Add(1)
		go func(i int) {
			defer all.Done()
			defer func() { <-sem }()
			// Both kernels of a pair at once: run 0's streams are
			// compared as they come.
			var wg sync.WaitGroup
			wg.Add(2)
			go runOne(i, 0, &wg)
			go runOne(i, 1, &wg)
			wg.Wait()
		}(i)
	}
	all.Wait()
	var tipRuns, varRuns []*explain.RunData
	var tipVals, varVals []float64
	first := results[0][0].res
	for i := range results {
		for side := 0; side < 2; side++ {
			if err := results[i][side].err; err != nil {
				return nil, err
			}
		}
	}
	metric, spec, err := explainMetric(cfg.Tool, opt.Metric, first)
	if err != nil {
		return nil, err
	}
	tipTotal, varTotal := explain.NewCounts(), explain.NewCounts()
	for i := range results {
		t, v := results[i][0], results[i][1]
		tipRuns, varRuns = append(tipRuns, t.data), append(varRuns, v.data)
		tipTotal.Add(t.data.Counts)
		varTotal.Add(v.data.Counts)
		tipVals = append(tipVals, metricValue(t.res, metric))
		varVals = append(varVals, metricValue(v.res, metric))
	}
	rep := &explain.Report{
		SchemaVersion: explain.SchemaVersion,
		Tool:          cfg.Tool, Args: append([]string{}, cfg.Args...),
		Machine: first.Machine, NrCPUs: first.NrCPUs, Kernel: first.Kernel,
		Tip: labels[0], Variant: labels[1], Seeds: seeds,
		Divergence:  explain.NewDivergenceReport(cmp.Result(), seeds[0], labels[0], labels[1]),
		Decisions:   explain.Tables(tipTotal, varTotal),
		Attribution: explain.Attribute(spec, labels[0], labels[1], tipRuns, varRuns, tipVals, varVals),
	}
	return rep, nil
}

func metricValue(r *sim.Result, name string) float64 {
	if v, ok := r.Metric(name); ok {
		return v
	}
	return math.NaN()
}

// explainMetric is the metric to attribute: asked, or the tool's usual
// one (compare's default), or its first; with what it needs to know of
// it.
func explainMetric(tool, asked string, r *sim.Result) (string, explain.MetricSpec, error) {
	name := asked
	if name == "" {
		if p := experiment.PrimaryMetrics(tool); len(p) > 0 {
			name = p[0]
		} else if len(r.Metrics) > 0 {
			name = r.Metrics[0].Name
		}
	}
	m, ok := r.Metrics.Lookup(name)
	if !ok {
		var have []string
		for _, x := range r.Metrics {
			have = append(have, x.Name)
		}
		return "", explain.MetricSpec{}, fmt.Errorf("--metric %s: %s has no such metric (it has %s)", name, tool, strings.Join(have, ", "))
	}
	info := compare.Describe(m)
	return name, explain.MetricSpec{Name: name, Unit: info.Unit, Better: m.Better.String(), Harmonic: info.Stat == compare.HMean, Decimals: info.Decimals}, nil
}

// compareExplain is compare --explain: explain's report for each variant
// at each load of plan, over the plan's runs and seeds (so that its
// simulated change is the table's, for a metric summarised by its mean).
func compareExplain(env *Env, plan *experiment.Plan, jobs int) error {
	points := plan.Points()
	for _, pt := range points {
		if pt.Run != 0 || pt.Variant == experiment.Tip {
			continue
		}
		cfg := plan.RunConfig(&pt, "")
		w := &plan.Workloads[pt.Workload]
		metric := ""
		if len(w.Metrics) > 0 {
			metric = w.Metrics[0]
		}
		opt := explainOptions{Seed: plan.Seed, Runs: plan.Runs, Jobs: max(1, jobs/2), Metric: metric, Context: 5}
		var rep *explain.Report
		var err error
		if c, _ := plan.Column(pt.Variant); len(c.Variants) != 1 || strings.HasPrefix(c.Variants[0], sim.BasePrefix) || len(c.Features)+len(c.Sysctls) > 0 || c.Kernel != "" {
			// A column of settings: against the table's own tip run at
			// this load, as explain --column does.
			tip, ok := tipPoint(points, &pt)
			if !ok {
				return fmt.Errorf("compare --explain: no tip run for column %s at load %s", pt.Variant, pt.Load)
			}
			cfgs := [2]sim.Config{plan.RunConfig(&tip, ""), cfg}
			for i := range cfgs {
				if err := cfgs[i].Resolve(); err != nil {
					return err
				}
			}
			rep, err = explainPair(cfgs, [2]string{experiment.Tip, pt.Variant}, opt)
		} else {
			rep, err = explainRuns(cfg, opt)
		}
		if err != nil {
			return err
		}
		fmt.Fprintf(env.Stdout, "\n%s\n", strings.Repeat("=", 100))
		if err := rep.Format(env.Stdout); err != nil {
			return err
		}
	}
	return nil
}

// tipPoint is the tip run of the table's row and run that pt belongs to.
func tipPoint(points []experiment.Point, pt *experiment.Point) (experiment.Point, bool) {
	for _, q := range points {
		if q.Variant == experiment.Tip && q.Machine == pt.Machine && q.Workload == pt.Workload && q.Load == pt.Load && q.Run == pt.Run {
			return q, true
		}
	}
	return experiment.Point{}, false
}
