package cli

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	corpus "github.com/schedlab/schedlab/fidelity"
	"github.com/schedlab/schedlab/internal/engine"
	"github.com/schedlab/schedlab/internal/fidelity"
	"github.com/schedlab/schedlab/internal/fidelity/fit"
	"github.com/schedlab/schedlab/internal/fidelity/score"
	"github.com/schedlab/schedlab/internal/sim"
	"github.com/schedlab/schedlab/internal/texttable"
)

// fidelityCommit names the commit a report is made on; tests replace it.
var fidelityCommit = fidelity.Commit

// schedlab fidelity: run the fidelity corpus and score schedlab against
// the published results. See docs/fidelity.md.
func init() {
	register(func(env *Env) *cobra.Command {
		var (
			quick, markdown, list, wide    bool
			glob, jsonFile, dir, corpusDir string
			trustFile                      string
			costsFile                      string
			fullLength                     bool
			warmupArg                      string
			fitSpecs, sysctls, loads       []string
			jobs, seeds, maxSeeds          int
			shardArg, slurmFile            string
			slurm                          slurmOptions
		)
		c := &cobra.Command{
			Use:   "fidelity [flags]",
			Short: "Run the fidelity corpus: how close schedlab comes to published results",
			Long: `Run the simulated counterpart of every published result in the fidelity
corpus (fidelity/cases, carried in the binary; fidelity/README.md describes a
case) through the same run pipeline as 'schedlab run', and print per case its
points (published, simulated with its 95% interval, ratio) and deltas (the
published change of a patch against tip, the simulated one with its interval,
same sign?, within 2x?), then the summary line. docs/fidelity.md defines every
figure.

--quick runs only each case's simulate.quick loads with ` + fmt.Sprint(fidelity.QuickSeeds) + ` seeds (CI runs it);
otherwise every row runs with ` + fmt.Sprint(fidelity.DefaultSeeds) + ` seeds, and a row with a delta (a patched
column against tip) adds paired seeds until each of its deltas is settled by
the sweep's stopping rule (its interval excludes zero or is within ±1%), at
most ` + fmt.Sprint(fidelity.DefaultMaxSeeds) + ` (--seeds N sets the floor and no stopping rule; --max-seeds M a
cap above it). Runs go in
parallel (--jobs, default all cores) and the results do not depend on how
many. With --dir RESULTS each run's record is kept there and a rerun skips
the runs already done (after running the cheapest of each machine and benchmark
again to check that the model still gives what the
directory holds). --list prints every point with its citation and runs
nothing: grouped by case to fit 100 columns, or one line per point with
--wide; the count comes last. --markdown prints docs/fidelity.md instead of the tables; --json
also writes the report as JSON. --corpus DIR reads the cases from DIR instead.
--costs FILE lays a cost-model file over every run's machine costs, and
--sysctl NAME=VALUE a setting over every run's own (to measure a model
mechanism with and without it).

--fit PARAM=V1,V2,... (repeatable) calibrates cost parameters against the
selected cases: a one-pass coordinate search from the machines' defaults,
each parameter in the order given, keeping the value with the lowest median
|log ratio| (ties: more points within 2x). It prints every trial's summary
and the best values as a costs file whose sources say "fitted to the
fidelity corpus (N points)". Pick the candidates within what each
parameter's source allows, and the cases of the machines the parameter
belongs to (--case); docs/costs.md, "Calibration against the fidelity
corpus", describes the procedure.

--shard i/n (with --dir) runs only shard i of n: every n-th group of rows
(a case's load, every column and seed of it, the stopping rule's too; rows
whose first run is one simulation are one group), so that n machines can
share the full corpus; run the same command without --shard
on the same directory afterwards for the whole report (it runs nothing
more but a check of one run per machine and benchmark). --slurm FILE (with
--dir, a directory every node sees) writes an sbatch job-array script whose
task i runs shard i, instead of running; docs/experiments.md, "The fidelity
corpus on Slurm".`,
			Args: cobra.NoArgs,
			RunE: func(cmd *cobra.Command, args []string) error {
				if wide && !list {
					return fmt.Errorf("fidelity: --wide is a layout of --list: add --list or drop --wide")
				}
				if list {
					for _, name := range []string{"json", "markdown", "dir", "jobs", "seeds", "max-seeds", "trust"} {
						if cmd.Flags().Changed(name) {
							return fmt.Errorf("fidelity: --list runs nothing, so --%s has no effect: drop one of them", name)
						}
					}
				}
				if len(fitSpecs) > 0 {
					for _, name := range []string{"json", "markdown", "dir", "list", "costs", "trust"} {
						if cmd.Flags().Changed(name) {
							return fmt.Errorf("fidelity: --fit runs its own trials and prints its own table: drop --%s", name)
						}
					}
				}
				shard, shards, err := parseShard(shardArg)
				if err != nil {
					return err
				}
				if shardArg != "" || slurmFile != "" {
					what := "--shard"
					if slurmFile != "" {
						what = "--slurm"
					}
					if shardArg != "" && slurmFile != "" {
						return fmt.Errorf("fidelity: --slurm writes the shards' script; drop --shard")
					}
					if dir == "" {
						return fmt.Errorf("fidelity: %s needs --dir, the results directory the shards share", what)
					}
					drop := []string{"markdown", "trust", "list", "fit"}
					if slurmFile != "" {
						drop = append(drop, "json")
					}
					for _, name := range drop {
						if cmd.Flags().Changed(name) {
							return fmt.Errorf("fidelity: %s runs part of the corpus, so --%s (a report of the whole) does not go with it: make the report afterwards, without %s, on the same --dir", what, name, what)
						}
					}
				}
				for _, name := range []string{"slurm-tasks", "slurm-cpus", "slurm-partition", "slurm-time", "slurm-schedlab"} {
					if cmd.Flags().Changed(name) && slurmFile == "" {
						return fmt.Errorf("fidelity: --%s is an option of --slurm: add --slurm FILE or drop it", name)
					}
				}
				var axes []fit.Axis
				for _, spec := range fitSpecs {
					a, err := fit.ParseAxis(spec)
					if err != nil {
						return err
					}
					axes = append(axes, a)
				}
				if costsFile != "" {
					if _, err := os.Stat(costsFile); err != nil {
						return fmt.Errorf("--costs %s: %v", costsFile, unwrapPathError(err))
					}
				}
				if jobs < 0 {
					return fmt.Errorf("--jobs %d: give at least 1 (0: the number of CPUs)", jobs)
				}
				if cmd.Flags().Changed("seeds") && seeds < 1 {
					return fmt.Errorf("--seeds %d: give at least 1 (2 or more for intervals)", seeds)
				}
				if cmd.Flags().Changed("max-seeds") && maxSeeds < 1 {
					return fmt.Errorf("--max-seeds %d: give at least 1", maxSeeds)
				}
				var warmup engine.Time
				if warmupArg != "" {
					d, err := time.ParseDuration(warmupArg)
					if err != nil || d < 0 {
						return fmt.Errorf("--warmup %s: give a simulated duration such as 1s or 500ms", warmupArg)
					}
					warmup = engine.Time(d)
				}
				// Names and values are checked against the default
				// kernel's settings; a case's own kernel applies them
				// again.
				probe := sim.Config{Sysctls: sysctls}
				if _, err := probe.Settings(); err != nil {
					return err
				}
				// Outputs are checked before the corpus is read or
				// anything runs.
				if err := sim.CheckOutputFile("--json", jsonFile); err != nil {
					return err
				}
				if err := sim.CheckOutputFile("--trust", trustFile); err != nil {
					return err
				}
				if err := sim.CheckOutputDir("--dir", dir); err != nil {
					return err
				}
				if err := sim.CheckOutputFile("--slurm", slurmFile); err != nil {
					return err
				}
				var fsys fs.FS = corpus.Cases()
				where := corpus.Dir
				if corpusDir != "" {
					st, err := os.Stat(corpusDir)
					if err != nil || !st.IsDir() {
						return fmt.Errorf("--corpus %s: not a directory", corpusDir)
					}
					fsys, where = os.DirFS(corpusDir), corpusDir
				}
				cp, err := fidelity.Load(fsys, where)
				if err != nil {
					return err
				}
				cases, err := cp.Select(glob)
				if err != nil {
					return err
				}
				width := texttable.Width
				if wide {
					width = 0
				}
				if list {
					return score.WriteList(env.Stdout, cases, func(cs *fidelity.Case, row, col int) bool {
						return (!quick || cs.InQuick(row)) && (loads == nil || slices.Contains(loads, cs.Rows[row].Load))
					}, width)
				}
				if jobs == 0 {
					jobs = runtime.NumCPU()
				}
				if len(axes) > 0 {
					return runFit(env, cp, cases, where, axes, fidelity.PlanOptions{Quick: quick, Loads: loads, Seeds: seeds, FullLength: fullLength, Warmup: warmup, Sysctls: sysctls}, jobs, os.Args)
				}
				plan, err := fidelity.NewPlan(cp, cases, fidelity.PlanOptions{Quick: quick, Loads: loads, Seeds: seeds, MaxSeeds: maxSeeds, CostsFile: costsFile, FullLength: fullLength, Warmup: warmup, Sysctls: sysctls, Shard: shard, Shards: shards})
				if err != nil {
					return err
				}
				if slurmFile != "" {
					return writeFidelitySlurm(env, cmd, slurmFile, dir, plan, slurm)
				}
				if quick && len(plan.Cases) < len(cases) {
					var left []string
					for _, cs := range cases {
						if len(cs.Simulate.Quick) == 0 {
							left = append(left, cs.ID)
						}
					}
					if len(left) > 0 {
						fmt.Fprintf(env.Stderr, "schedlab: fidelity --quick: %d of %d cases have no simulate.quick loads and do not run: %s\n", len(left), len(cases), strings.Join(left, ", "))
					}
				}
				start := time.Now()
				prog := newProgress(env)
				prog.header("fidelity: %d cases, %d runs (%d seeds each, up to %d for a delta's row) from %s", len(plan.Cases), len(plan.Runs), plan.Seeds, plan.MaxSeeds, where)
				out, err := fidelity.Execute(plan, fidelity.ExecOptions{Dir: dir, Jobs: jobs, Progress: prog.sweep})
				prog.clear()
				if err != nil {
					return err
				}
				commit := ""
				if jsonFile != "" || markdown || trustFile != "" {
					commit = fidelityCommit()
				}
				rep, err := score.Build(plan, out.Records, where, commit)
				if err != nil {
					return err
				}
				// Everything is written at the end, so an error leaves
				// no partial output.
				var text, js bytes.Buffer
				if markdown {
					err = rep.WriteMarkdown(&text)
				} else {
					err = rep.WriteText(&text)
				}
				if err != nil {
					return err
				}
				if jsonFile != "" {
					if err := rep.WriteJSON(&js); err != nil {
						return err
					}
					if err := os.WriteFile(jsonFile, js.Bytes(), 0o644); err != nil {
						return fmt.Errorf("--json %s: %v", jsonFile, unwrapPathError(err))
					}
				}
				if trustFile != "" {
					var tb bytes.Buffer
					if err := rep.Trust().Write(&tb); err != nil {
						return err
					}
					if err := os.WriteFile(trustFile, tb.Bytes(), 0o644); err != nil {
						return fmt.Errorf("--trust %s: %v", trustFile, unwrapPathError(err))
					}
				}
				if _, err := env.Stdout.Write(text.Bytes()); err != nil {
					return err
				}
				reused := ""
				if dir != "" {
					reused = fmt.Sprintf(", %d already in %s (%d rerun to check them)", out.Reused, dir, out.Checked)
				}
				if out.Shared > 0 {
					reused += fmt.Sprintf(", %d the same simulation as another case's", out.Shared)
				}
				fmt.Fprintf(env.Stderr, "schedlab: fidelity: %d runs: %d new%s, in %s on %d workers\n",
					len(plan.Runs), out.Executed, reused, fmtDuration(time.Since(start)), jobs)
				return nil
			},
		}
		f := c.Flags()
		f.BoolVar(&quick, "quick", false, "run only each case's simulate.quick loads, with fewer seeds (the CI subset)")
		f.StringVar(&glob, "case", "", "run only the cases whose id matches this glob (e.g. 'sis-util-*')")
		f.StringSliceVar(&loads, "loads", nil, "run only the rows of these loads (e.g. 1,2: the rows a fit names)")
		f.IntVarP(&jobs, "jobs", "j", 0, "runs at once (default: the number of CPUs)")
		f.StringVar(&jsonFile, "json", "", "also write the report (every point, delta and the summary) as JSON to this file")
		f.StringVar(&trustFile, "trust", "", "also write the deltas' record per machine and benchmark, which compare and report print beside a delta, to this file (commit it as "+corpus.TrustFile+" with docs/fidelity.md)")
		f.BoolVar(&markdown, "markdown", false, "print docs/fidelity.md (the full table and summary, with the commit) instead of the tables")
		f.BoolVar(&list, "list", false, "print every point with its citation, and a count; run nothing")
		f.BoolVar(&wide, "wide", false, "with --list: one line per point with its case, citation, machine and command, however long (the layout before the list fitted 100 columns)")
		f.StringVar(&dir, "dir", "", "keep each run's record in this results directory; a rerun skips the runs already there")
		f.IntVar(&seeds, "seeds", 0, fmt.Sprintf("seeds per simulated value (default %d, or %d with --quick); given, no stopping rule unless --max-seeds", fidelity.DefaultSeeds, fidelity.QuickSeeds))
		f.IntVar(&maxSeeds, "max-seeds", 0, fmt.Sprintf("most seeds a row with deltas gets by the stopping rule (default %d; --quick and --seeds: no rule)", fidelity.DefaultMaxSeeds))
		f.StringVar(&corpusDir, "corpus", "", "read the cases from this directory instead of the corpus in the binary")
		f.StringVar(&warmupArg, "warmup", "", "warm the kernel up before each hackbench run: run it back to back for this much simulated time (e.g. 1s); the other tools start as usual")
		f.BoolVar(&fullLength, "full-length", false, "run every benchmark for its whole command line (tbench does not stop at steady state)")
		f.StringArrayVar(&sysctls, "sysctl", nil, "lay a sysctl or model setting, NAME=VALUE, over every run after the case's own (repeatable), e.g. model_kobj_lines=1 to measure a mechanism that is off by default")
		f.StringVar(&costsFile, "costs", "", "lay this cost-model file over every run's machine costs (see 'schedlab costs')")
		f.StringArrayVar(&fitSpecs, "fit", nil, "calibrate a cost parameter: PARAM=V1,V2,... (repeatable; see above)")
		f.StringVar(&shardArg, "shard", "", "with --dir: run only shard i of n (i/n, 0 <= i < n): every n-th group of rows, from group i")
		f.StringVar(&slurmFile, "slurm", "", "with --dir: write an sbatch job-array script to this file, one shard a task, instead of running")
		f.IntVar(&slurm.tasks, "slurm-tasks", 4, "with --slurm: array tasks (shards)")
		f.IntVar(&slurm.cpus, "slurm-cpus", 1, "with --slurm: CPUs per array task (its --jobs)")
		f.StringVar(&slurm.partition, "slurm-partition", "", "with --slurm: partition (sbatch --partition)")
		f.StringVar(&slurm.time, "slurm-time", "", "with --slurm: time limit per task (sbatch --time, e.g. 4:00:00)")
		f.StringVar(&slurm.bin, "slurm-schedlab", "", "with --slurm: the schedlab binary the tasks run (default: this one)")
		return c
	})
}

// runFit is fidelity --fit: the trials, their table, and the best values
// as a costs file.
func runFit(env *Env, cp *fidelity.Corpus, cases []*fidelity.Case, where string, axes []fit.Axis, po fidelity.PlanOptions, jobs int, argv []string) error {
	n := 1
	for _, a := range axes {
		n += len(a.Values)
	}
	plan, err := fidelity.NewPlan(cp, cases, po)
	if err != nil {
		return err
	}
	fmt.Fprintf(env.Stderr, "schedlab: fidelity --fit: %d trials of %d runs each (%d cases)\n", n, len(plan.Runs), len(plan.Cases))
	start, done := time.Now(), 0
	res, err := fit.Run(axes, fit.Options{Corpus: cp, Cases: cases, Plan: po, Jobs: jobs, Where: where, Trial: func(t fit.Trial) {
		done++
		fmt.Fprintf(env.Stderr, "schedlab: trial %d/%d (%s) after %s: %s\n", done, n, t.Label(), fmtDuration(time.Since(start)), t.Summary.Line())
	}})
	if err != nil {
		return err
	}
	how := "schedlab fidelity " + strings.Join(fitArgs(argv), " ")
	var out bytes.Buffer
	if err := fit.WriteTable(&out, res); err != nil {
		return err
	}
	out.WriteString("\n# costs file (schedlab fidelity --costs FILE, schedlab run --costs FILE, or a machine file's costs: section)\n")
	if err := fit.WriteCosts(&out, res, how); err != nil {
		return err
	}
	_, err = env.Stdout.Write(out.Bytes())
	return err
}

// fitArgs is the fidelity command line as given, for the fitted values'
// source: what follows "fidelity" in argv.
func fitArgs(argv []string) []string {
	for i, a := range argv {
		if a == "fidelity" {
			return argv[i+1:]
		}
	}
	return nil
}
