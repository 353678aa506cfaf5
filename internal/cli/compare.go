package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/schedlab/schedlab/internal/experiment"
	"github.com/schedlab/schedlab/internal/experiment/compare"
	"github.com/schedlab/schedlab/internal/fidelity/score"
	"github.com/schedlab/schedlab/internal/sim"
	"github.com/schedlab/schedlab/internal/workload"
)

// schedlab compare: tip against variants over a range of loads, the table
// scheduler developers post. See docs/experiments.md.
func init() {
	register(func(env *Env) *cobra.Command {
		var (
			rf                               runFlags
			jsonFile, benchFile, test, stats string
			out                              string
			metrics                          []string
			runs, jobs                       int
			showSchedstat, explainTo, resume bool
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

--runs defaults to 6, the fewest with which --test utest (benchstat's test)
gives a 95% interval; Welch's and the paired t-test give one from 2 runs.
With fewer runs than the test needs, a line under the table says why its
cells have no interval.

A column need not be a variant: --column 'NAME=FLAGS' (repeatable) is tip
plus any mix of --variant V, --feature F (sched_features), --sysctl
NAME=VALUE and --kernel K, the run options of 'schedlab run':

  schedlab compare --column 'nowaw=--feature NO_WA_WEIGHT' \
      --column 'cost=--sysctl migration_cost_ns=250000' hackbench -g 1,2,4

Columns come after the --variant ones; the table lists what each adds to
tip. A column on another kernel than tip's (its --kernel, or a variant of
another baseline) is refused unless --mixed-kernels is given; the table
then says each column's kernel.

Run i of every column uses the same seed, derived from --seed, so the
comparison is paired; runs go in parallel (--jobs, default all cores) and the
results do not depend on how many. Every run option of 'schedlab run'
(--cpus, --sysctl, --background-cgroups, --costs …) applies to every run.
--stats mmtests adds, under each table, the statistics mmtests'
compare-kernels prints: Min, Amean (Hmean for rates), Stddev, CoeffVar,
Max and BAmean-50/95/99, the mean of the best 50/95/99% of the runs.
After the table, each variant's branch counters say whether its patch's code
ran and how often it changed a decision (docs/variants.md). --json writes
the tables and every run; --bench-out writes the Go benchmark format for
benchstat (benchstat -col /variant FILE).

--out DIR keeps every run in DIR as 'schedlab sweep' does, so that
'schedlab report DIR' and 'schedlab collect DIR' read it. Ctrl-C stops the
runs (exit status 130): with --out the finished ones stay in DIR, and the
same command with --resume runs only the rest.`,
			Args: func(cmd *cobra.Command, args []string) error {
				if len(args) == 0 {
					return fmt.Errorf("compare: name a workload and its arguments with one ranged, e.g. 'schedlab compare --variant short-task-v3 hackbench -p -T -l 2000 -g 1,2,4'")
				}
				return nil
			},
			RunE: func(cmd *cobra.Command, args []string) error {
				t, _, err := sim.Parse(args[0], nil)
				var ute *sim.UnknownToolError
				if errors.As(err, &ute) {
					return err
				}
				for _, a := range args[1:] {
					if a == "-h" || a == "--help" {
						fmt.Fprint(env.Stdout, t.Usage)
						return nil
					}
				}
				if err := rf.check(cmd.Flags()); err != nil {
					return err
				}
				tst, err := compare.ParseTest(test)
				if err != nil {
					return err
				}
				if runs < 1 {
					return fmt.Errorf("--runs %d: give at least 1 (6 or more for 95%% intervals)", runs)
				}
				if err := checkStats(stats); err != nil {
					return err
				}
				if resume && out == "" {
					return fmt.Errorf("--resume continues the runs compare kept in --out DIR: give --out")
				}
				spec := &experiment.Spec{
					Name:      "compare",
					Workloads: []experiment.Workload{{Name: args[0], Command: args, Metrics: metrics}},
					Runs:      runs,
				}
				rf.spec(spec)
				plan, err := experiment.Resolve(spec, experiment.ResolveOptions{})
				if err != nil {
					if errors.Is(err, workload.ErrHelp) {
						fmt.Fprint(env.Stdout, t.Usage)
						return nil
					}
					return err
				}
				// Every output is checked before the first run starts.
				if err := sim.CheckOutputFile("--json", jsonFile); err != nil {
					return err
				}
				if err := sim.CheckOutputFile("--bench-out", benchFile); err != nil {
					return err
				}
				if out != "" {
					if err := sim.CheckOutputDir("--out", out); err != nil {
						return err
					}
					if err := experiment.PrepareDir(out, plan, resume); err != nil {
						return err
					}
				}
				if jobs < 1 {
					jobs = runtime.NumCPU()
				}
				start := time.Now()
				prog := newProgress(env)
				prog.header("compare %s on %s, %s, columns %s, master seed %d, %d run%s each%s",
					args[0], plan.Machines[0].Label, kernelsText(plan), strings.Join(plan.Variants, ", "), plan.Seed, plan.Runs, plural(plan.Runs),
					kernelOrigin(plan.Kernels[0], rf.kernel, rf.variants))
				ctx, stop := env.interruptible()
				defer stop()
				recs, err := experiment.Sweep(plan, experiment.SweepOptions{Dir: out, Jobs: jobs, Progress: prog.sweep, Context: ctx})
				prog.clear()
				var in *experiment.Interrupted
				if errors.As(err, &in) {
					return compareInterrupted(env, in, out, args)
				}
				if err != nil {
					return err
				}
				tables, err := compare.Analyze(plan, recs, compare.AnalyzeOptions{Test: tst})
				if err != nil {
					return err
				}
				if err := printTables(env.Stdout, tables, stats); err != nil {
					return err
				}
				// How far to trust a delta: the corpus's record on this
				// machine and benchmark, from the committed run.
				if len(plan.Variants) > 1 {
					fmt.Fprintf(env.Stdout, "\n%s\n", trustNote(plan))
				}
				if need := tst.MinRuns(); plan.Runs < need {
					fmt.Fprintf(env.Stdout, "\nNo 95%% intervals: %d runs per cell, and the %s needs at least %d (--runs %d).\n", plan.Runs, tst, need, need)
				}
				// Did each variant's code run (sched.Branch)?
				if err := formatBranches(env.Stdout, plan, recs); err != nil {
					return err
				}
				if showSchedstat {
					for _, c := range compare.SchedstatComparisons(plan, recs) {
						fmt.Fprintf(env.Stdout, "\nschedstat: %s (sums over %d runs, per-CPU averages)\n", c.Title(), plan.Runs)
						if err := c.Format(env.Stdout); err != nil {
							return err
						}
					}
				}
				if explainTo {
					if err := compareExplain(env, plan, jobs); err != nil {
						return err
					}
				}
				if jsonFile != "" {
					var b bytes.Buffer
					if err := writeCompareJSON(&b, plan, tables, recs); err != nil {
						return err
					}
					if err := os.WriteFile(jsonFile, b.Bytes(), 0o644); err != nil {
						return fmt.Errorf("--json %s: %v", jsonFile, unwrapPathError(err))
					}
				}
				if benchFile != "" {
					var b bytes.Buffer
					if err := compare.WriteBenchFormat(&b, plan, recs); err != nil {
						return err
					}
					if err := os.WriteFile(benchFile, b.Bytes(), 0o644); err != nil {
						return fmt.Errorf("--bench-out %s: %v", benchFile, unwrapPathError(err))
					}
				}
				printWarnings(env.Stderr, recordWarnings(recs)...)
				// One line names what ran (the table's header says it too,
				// but not where the kernel came from).
				fmt.Fprintf(env.Stderr, "schedlab: compare %s on %s (%d CPUs), %s, columns %s, master seed %d, %d run%s each",
					args[0], plan.Machines[0].Label, plan.Machines[0].NrCPUs, kernelsText(plan), strings.Join(plan.Variants, ", "), plan.Seed, plan.Runs, plural(plan.Runs))
				if prog.on() {
					fmt.Fprintf(env.Stderr, ": %d runs in %.1fs on %d workers", len(recs), time.Since(start).Seconds(), jobs)
				}
				fmt.Fprint(env.Stderr, kernelOrigin(plan.Kernels[0], rf.kernel, rf.variants))
				if out != "" {
					fmt.Fprintf(env.Stderr, "; runs kept in %s (schedlab report %s -o report.html)", out, shellQuote(out))
				}
				fmt.Fprintln(env.Stderr)
				return nil
			},
		}
		f := c.Flags()
		f.SetInterspersed(false)
		rf.add(f, true)
		f.Lookup("seed").Usage = "master seed: run i of every variant uses a seed derived from it"
		f.IntVar(&runs, "runs", 6, "runs per variant and load (a 95% interval needs 2, or 6 with --test utest)")
		f.IntVar(&jobs, "jobs", 0, "runs at once (default: the number of CPUs)")
		f.StringVar(&jsonFile, "json", "", "also write the tables and every run as JSON to this file")
		f.StringVar(&benchFile, "bench-out", "", "also write every run in the Go benchmark format (for benchstat) to this file")
		f.StringVar(&test, "test", "welch", "significance test: welch (means, Welch t-test), utest (medians, Mann-Whitney U) or paired (means, paired t-test on the per-run differences: runs share seeds)")
		f.StringArrayVar(&metrics, "metric", nil, "metric to tabulate (repeatable; default the benchmark's usual one, e.g. time_s, latency_us.p99)")
		f.BoolVar(&showSchedstat, "schedstat", false, "also print the schedstat comparison of the variants at each load")
		f.BoolVar(&explainTo, "explain", false, "also print schedlab explain's report for each variant at each load, over the same runs (run again with its recorders)")
		f.StringVar(&stats, "stats", "", "also print, under each table, mmtests' compare-kernels statistics: --stats mmtests (Min, Amean/Hmean, Stddev, CoeffVar, Max, BAmean-50/95/99)")
		f.StringVarP(&out, "out", "o", "", "keep every run in this results directory, as 'schedlab sweep' does ('schedlab report DIR' reads it)")
		f.BoolVar(&resume, "resume", false, "with --out: continue the compare DIR holds, running only the runs it lacks")
		return c
	})
}

// formatBranches prints, after a blank line, the variant columns' branch
// counters (compare.FormatBranches), if any.
func formatBranches(w io.Writer, plan *experiment.Plan, recs []*experiment.Record) error {
	rows := compare.Branches(plan, recs)
	if len(rows) == 0 {
		return nil
	}
	fmt.Fprintln(w)
	return compare.FormatBranches(w, rows)
}

// CompareJSONSchemaVersion is the version of compare's --json document.
// Version 2: a table's metric has "Better" ("lower" or "higher", from the
// runs' metrics) instead of "HigherBetter", and the runs are result
// records of schema 3.
const CompareJSONSchemaVersion = 2

func writeCompareJSON(w io.Writer, plan *experiment.Plan, tables []*compare.Table, recs []*experiment.Record) error {
	doc := struct {
		SchemaVersion int                  `json:"schema_version"`
		Plan          *experiment.Plan     `json:"plan"`
		Tables        []*compare.Table     `json:"tables"`
		Runs          []*experiment.Record `json:"runs"`
	}{CompareJSONSchemaVersion, plan, tables, recs}
	b, err := json.MarshalIndent(&doc, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
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

// trustNote is the fidelity corpus's record for the plan's machine and
// benchmark (fidelity/trust.json): how often its published deltas there
// came out with their sign. A machine is looked up by its name (a machine
// file's name:).
func trustNote(plan *experiment.Plan) string {
	return score.EmbeddedTrust().Note(plan.Machines[0].Name, plan.Workloads[0].Tool)
}

// checkStats checks --stats: empty, or mmtests.
func checkStats(stats string) error {
	switch stats {
	case "", "mmtests":
		return nil
	}
	return fmt.Errorf("--stats %q: the one extra block is mmtests (compare-kernels' Min, Amean, Stddev, CoeffVar, Max, BAmean-N)", stats)
}

// printTables writes the comparison tables, each followed by the extra
// statistics --stats asks for.
func printTables(w io.Writer, tables []*compare.Table, stats string) error {
	for i, t := range tables {
		if i > 0 {
			if _, err := io.WriteString(w, "\n"); err != nil {
				return err
			}
		}
		if err := compare.FormatTable(w, t); err != nil {
			return err
		}
		if stats == "mmtests" {
			best := "the best N%% of the runs"
			if t.Metric.Better == workload.Counter {
				best = "the largest N%% of the runs, as a count has no best"
			}
			fmt.Fprintf(w, "\nmmtests compare-kernels statistics of %s (B%s-N: the mean of "+best+"; * as in the table)\n", t.Metric.Name, map[bool]string{true: "Hmean", false: "Amean"}[t.Metric.Stat == compare.HMean])
			if err := compare.FormatMMTests(w, t); err != nil {
				return err
			}
		}
	}
	return nil
}

// kernelsText names the kernel the comparison runs, or in a comparison
// across kernels each kernel with its columns.
func kernelsText(plan *experiment.Plan) string {
	if !plan.MixedKernels() {
		return "kernel " + strings.Join(plan.Kernels, ",")
	}
	var order []string
	by := map[string][]string{}
	for _, v := range plan.Variants {
		k := plan.ColumnKernel(v, plan.Kernels[0])
		if _, ok := by[k]; !ok {
			order = append(order, k)
		}
		by[k] = append(by[k], v)
	}
	var parts []string
	for _, k := range order {
		parts = append(parts, fmt.Sprintf("%s (%s)", k, strings.Join(by[k], ", ")))
	}
	return "kernels " + strings.Join(parts, ", ")
}

// compareInterrupted is the error of a compare stopped by Ctrl-C: what
// it kept, and the command that continues it.
func compareInterrupted(env *Env, in *experiment.Interrupted, out string, args []string) error {
	if out == "" {
		return &ExitError{Code: InterruptedCode, Err: fmt.Errorf("compare interrupted after %d of %d runs; none kept (with --out DIR compare keeps the runs it finishes, and --resume continues them)", in.Have, in.Total)}
	}
	return &ExitError{Code: InterruptedCode, Err: fmt.Errorf("compare interrupted: %d of %d runs kept in %s; resume with: %s", in.Have, in.Total, out, resumeCommand(env, args))}
}

// resumeCommand is the command line that was run with --resume added
// before its workload (args, the positional arguments, end it).
func resumeCommand(env *Env, args []string) string {
	raw := env.Args
	if len(raw) < len(args) || !slices.Equal(raw[len(raw)-len(args):], args) {
		return "the same command with --resume"
	}
	prefix := slices.Clone(raw[:len(raw)-len(args)])
	if !slices.Contains(prefix, "--resume") && !slices.Contains(prefix, "--resume=true") {
		at := len(prefix)
		if at > 0 && prefix[at-1] == "--" {
			at--
		}
		prefix = slices.Insert(prefix, at, "--resume")
	}
	words := []string{"schedlab"}
	for _, a := range append(prefix, args...) {
		words = append(words, shellQuote(a))
	}
	return strings.Join(words, " ")
}
