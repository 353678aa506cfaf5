package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/schedlab/schedlab/internal/experiment"
	"github.com/schedlab/schedlab/internal/sched"
	"github.com/schedlab/schedlab/internal/workload"
	wlrun "github.com/schedlab/schedlab/internal/workload/run"
)

// schedlab compare: tip against variants over a range of loads, the table
// scheduler developers post. See docs/experiments.md.
func init() {
	register(func(env *Env) *cobra.Command {
		var (
			machine, kernel, jsonFile, benchFile, test string
			variants, features, metrics                []string
			runs, jobs                                 int
			seed                                       uint64
			showSchedstat                              bool
		)
		c := &cobra.Command{
			Use:   "compare [flags] WORKLOAD ARGS (one argument ranged: -g 1,2,4)",
			Short: "Compare tip with kernel variants over a range of loads, with statistics",
			Long: `Run a benchmark on tip (the kernel baseline, always the first column) and on
each --variant, for every value of the one ranged argument, --runs times each,
and print the table scheduler developers post:

  schedlab compare --machine zen3-2s-nps1 --variant short-task-v3 --variant short-task-v4 \
      --runs 3 hackbench -p -T -l 2000 -g 1,2,4

The ranged argument is the one written with commas: "-g 1,2,4", "-g1,2,4",
"--groups=1,2,4", or a positional "1,8,64" (tbench clients). Each row is one
load, each column one variant: "value (pct%) ±ci%", where value is the
statistic the benchmark is reported with (the mean for times and latency
percentiles, the harmonic mean for rates), pct the change from tip
(positive = better) and ci the 95% confidence interval. "*" marks a
significant change (Welch t-test, or --test utest for Mann-Whitney on
medians), "~" one that is not.

Run i of every variant uses the same seed, derived from --seed, so the
comparison is paired; runs go in parallel (--jobs, default all cores) and the
results do not depend on how many. --json writes the tables and every run;
--bench-out writes the Go benchmark format for benchstat
(benchstat -col /variant FILE).`,
			Args: cobra.MinimumNArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				t, _, err := wlrun.Parse(args[0], nil)
				var ute *wlrun.UnknownToolError
				if errors.As(err, &ute) {
					return err
				}
				for _, a := range args[1:] {
					if a == "-h" || a == "--help" {
						fmt.Fprint(env.Stdout, t.Usage)
						return nil
					}
				}
				tst, err := experiment.ParseTest(test)
				if err != nil {
					return err
				}
				if machine == "" {
					machine = wlrun.DefaultMachine
				}
				spec := &experiment.Spec{
					Name:      "compare",
					Machines:  []string{machine},
					Variants:  variants,
					Features:  features,
					Workloads: []experiment.Workload{{Name: args[0], Command: args, Metrics: metrics}},
					Runs:      runs,
					Seed:      seed,
				}
				if kernel != "" {
					spec.Kernels = []string{kernel}
				}
				plan, err := experiment.Resolve(spec, experiment.ResolveOptions{})
				if err != nil {
					if errors.Is(err, workload.ErrHelp) {
						fmt.Fprint(env.Stdout, t.Usage)
						return nil
					}
					return err
				}
				if jobs < 1 {
					jobs = runtime.NumCPU()
				}
				start := time.Now()
				bar := newSweepBar(env, start)
				recs, err := experiment.Sweep(plan, experiment.SweepOptions{Jobs: jobs, Progress: bar.update})
				bar.clear()
				if err != nil {
					return err
				}
				tables, err := experiment.Analyze(plan, recs, experiment.AnalyzeOptions{Test: tst})
				if err != nil {
					return err
				}
				if err := experiment.FormatTables(env.Stdout, tables); err != nil {
					return err
				}
				if showSchedstat {
					for _, c := range experiment.SchedstatComparisons(plan, recs) {
						fmt.Fprintf(env.Stdout, "\nschedstat: %s (sums over %d runs, per-CPU averages)\n", c.Title(), plan.Runs)
						if err := c.Format(env.Stdout); err != nil {
							return err
						}
					}
				}
				if jsonFile != "" {
					var b bytes.Buffer
					if err := writeCompareJSON(&b, plan, tables, recs); err != nil {
						return err
					}
					if err := os.WriteFile(jsonFile, b.Bytes(), 0o644); err != nil {
						return fmt.Errorf("%s: %v", jsonFile, unwrapPathError(err))
					}
				}
				if benchFile != "" {
					var b bytes.Buffer
					if err := experiment.WriteBenchFormat(&b, plan, recs); err != nil {
						return err
					}
					if err := os.WriteFile(benchFile, b.Bytes(), 0o644); err != nil {
						return fmt.Errorf("%s: %v", benchFile, unwrapPathError(err))
					}
				}
				if env.Terminal {
					fmt.Fprintf(env.Stderr, "schedlab: %d runs in %.1fs on %d workers\n", len(recs), time.Since(start).Seconds(), jobs)
				}
				return nil
			},
		}
		f := c.Flags()
		f.SetInterspersed(false)
		f.StringVar(&machine, "machine", "", "machine: a preset, host, or a YAML file (default "+wlrun.DefaultMachine+")")
		f.StringVar(&kernel, "kernel", "", "kernel baseline: "+strings.Join(sched.Kernels, " or ")+" (default: the variants' baseline)")
		f.StringArrayVar(&variants, "variant", nil, "a variant to compare with tip (repeatable; see 'schedlab variants')")
		f.IntVar(&runs, "runs", 3, "runs per variant and load")
		f.Uint64Var(&seed, "seed", 1, "master seed: run i of every variant uses a seed derived from it")
		f.IntVar(&jobs, "jobs", 0, "runs at once (default: the number of CPUs)")
		f.StringVar(&jsonFile, "json", "", "also write the tables and every run as JSON to this file")
		f.StringVar(&benchFile, "bench-out", "", "also write every run in the Go benchmark format (for benchstat) to this file")
		f.StringVar(&test, "test", "welch", "significance test: welch (means, Welch t-test) or utest (medians, Mann-Whitney U)")
		f.StringArrayVar(&features, "feature", nil, "set a sched_feature on every kernel, e.g. NO_TTWU_QUEUE (repeatable)")
		f.StringArrayVar(&metrics, "metric", nil, "metric to tabulate (repeatable; default the benchmark's usual one, e.g. time_s, latency_us.p99)")
		f.BoolVar(&showSchedstat, "schedstat", false, "also print the schedstat comparison of the variants at each load")
		return c
	})
}

// CompareJSONSchemaVersion is the version of compare's --json document.
const CompareJSONSchemaVersion = 1

func writeCompareJSON(w io.Writer, plan *experiment.Plan, tables []*experiment.Table, recs []*experiment.Record) error {
	doc := struct {
		SchemaVersion int                  `json:"schema_version"`
		Plan          *experiment.Plan     `json:"plan"`
		Tables        []*experiment.Table  `json:"tables"`
		Runs          []*experiment.Record `json:"runs"`
	}{CompareJSONSchemaVersion, plan, tables, recs}
	b, err := json.MarshalIndent(&doc, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// sweepBar draws "[####......] 12/54 runs  22%  1m02s, ETA 3m40s" on a
// terminal, at most five times a second.
type sweepBar struct {
	w     io.Writer
	on    bool
	start time.Time
	last  time.Time
	drawn bool
}

func newSweepBar(env *Env, start time.Time) *sweepBar {
	return &sweepBar{w: env.Stderr, on: env.Terminal, start: start}
}

func (b *sweepBar) update(p experiment.Progress) {
	if !b.on {
		return
	}
	now := time.Now()
	if now.Sub(b.last) < 200*time.Millisecond && p.Done < p.Todo {
		return
	}
	b.last = now
	frac := 1.0
	if p.Todo > 0 {
		frac = float64(p.Done) / float64(p.Todo)
	}
	filled := int(frac * progressWidth)
	eta := "?"
	if p.Done > 0 {
		rem := time.Duration(float64(p.Elapsed) / float64(p.Done) * float64(p.Todo-p.Done))
		eta = fmtDuration(rem)
	}
	skipped := ""
	if p.Skipped > 0 {
		skipped = fmt.Sprintf(" (+%d done before)", p.Skipped)
	}
	fmt.Fprintf(b.w, "\r\033[K[%s%s] %d/%d runs%s %3d%%  %s, ETA %s",
		strings.Repeat("#", filled), strings.Repeat(".", progressWidth-filled), p.Done, p.Todo, skipped,
		int(frac*100), fmtDuration(p.Elapsed), eta)
	b.drawn = true
}

func (b *sweepBar) clear() {
	if b.drawn {
		fmt.Fprint(b.w, "\r\033[K")
		b.drawn = false
	}
}

func fmtDuration(d time.Duration) string {
	d = d.Round(time.Second)
	if d < time.Minute {
		return fmt.Sprintf("%ds", int(d.Seconds()))
	}
	if d < time.Hour {
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	}
	return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
}
