package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/schedlab/schedlab/internal/experiment"
	"github.com/schedlab/schedlab/internal/sim"
)

// schedlab sweep: run an experiment's matrix into a results directory, in
// parallel, resumable, shardable over a Slurm job array.
func init() {
	register(func(env *Env) *cobra.Command {
		var (
			rf                                                        runFlags
			out, shard, profile, slurmFile, partition, timeLimit, bin string
			jobs, tasks, cpusPerTask                                  int
			resume, trace, estimate                                   bool
			probe                                                     time.Duration
		)
		c := &cobra.Command{
			Use:   "sweep [EXPERIMENT|FILE] --out DIR [--jobs N] [--resume]",
			Short: "Run an experiment's matrix into a results directory (resumable, shardable over Slurm)",
			Long: `Run every point of an experiment (machines x kernels x workloads x loads x
variants x runs) and write each finished run to DIR/runs/KEY.json, atomically:
a sweep killed at any moment, even by SIGKILL, continues with --resume and
loses or repeats nothing (after running the cheapest stored run of each
machine and workload again to check that the model still gives what DIR
holds). Runs go in parallel (--jobs, default all cores) and
the results are the same as with --jobs 1.

EXPERIMENT is a built-in experiment ('schedlab experiments') or a YAML file
(docs/experiments.md); --profile picks one of its profiles (e.g. paper). With
--resume and no EXPERIMENT, the sweep stored in DIR continues.

The run options of 'schedlab run' (--kernel, --variant, --feature, --sysctl,
--cpus, --background-cgroups, --costs, --no-costs, --seed, --machine) apply
over the experiment file's keys of the same names: lists are added to, single
values replaced. --column 'NAME=FLAGS' adds a column (tip plus --variant,
--feature, --sysctl, --kernel; the experiment file's columns:), and
--mixed-kernels allows columns on other kernels than tip's.

Ctrl-C stops the sweep (exit status 130) and says how many runs DIR keeps
and the command that continues it ('schedlab sweep --out DIR --resume').

--shard i/n runs only the points whose index is i modulo n. --slurm FILE
writes an sbatch job-array script instead of running: each array task runs one
shard into DIR (a directory every node sees); submit it with sbatch FILE, then
check and merge with 'schedlab collect DIR'.

--estimate runs nothing to completion: it probes one run of every machine,
workload and load for up to --estimate-probe of wall time, extrapolates each
run's wall time from the progress made, and prints the expected core-hours
and wall time on --jobs cores. With --out, the runs DIR already holds are
left out, a machine, workload and load of which DIR holds runs costs their
mean CPU time (wall time for records without it) instead of a probe, a
probe cut short is scaled by how far such a probe misses the runs of the
nearest load of the same workload that DIR holds (the scale column), and a
stopping rule counts only the runs it still needs on those records. An estimate, not a promise: start-up phases
and tbench's stop at steady state make real runs differ from a probe.

An experiment with a stopping rule (key sequential, e.g. the paper profile of
short-task) treats runs as a maximum: each load of each machine and kernel
runs its minimum of run indices for tip and every variant, then one more at a
time until every variant's paired difference from tip (same seeds) is settled:
its interval excludes 0, or is within the rule's resolution (docs/experiments.md,
"Stopping rule"). The runs it runs do not depend on --jobs, --resume or
--shard (shards are whole loads). --full-length runs every run, each for its
whole duration: the evaluation exactly as posted.`,
			Args: cobra.MaximumNArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				if out == "" && !estimate {
					return fmt.Errorf("sweep: --out DIR is required")
				}
				if estimate && (slurmFile != "" || shard != "" || resume) {
					return fmt.Errorf("sweep: --estimate runs nothing; drop --slurm, --shard and --resume")
				}
				if cmd.Flags().Changed("estimate-probe") && (probe <= 0 || probe > time.Hour) {
					return fmt.Errorf("sweep: --estimate-probe %v: give a duration between 0 and 1h, e.g. 2s", probe)
				}
				if err := rf.check(cmd.Flags()); err != nil {
					return err
				}
				// Outputs are checked before anything is written.
				if out != "" && !estimate {
					if err := sim.CheckOutputDir("--out", out); err != nil {
						return err
					}
				}
				if err := sim.CheckOutputFile("--slurm", slurmFile); err != nil {
					return err
				}
				si, sn, err := parseShard(shard)
				if err != nil {
					return err
				}
				var plan *experiment.Plan
				if len(args) == 0 {
					if !resume {
						return fmt.Errorf("sweep: name an experiment (see 'schedlab experiments'), or give --resume to continue the one in %s", out)
					}
					if profile != "" || trace {
						return fmt.Errorf("sweep: --profile and --trace need the experiment named")
					}
					for _, name := range []string{"machine", "kernel", "variant", "column", "mixed-kernels", "feature", "sysctl", "idle-disable", "latency-limit", "cpus", "background-cgroups", "costs", "no-costs", "full-length", "seed"} {
						if cmd.Flags().Changed(name) {
							return fmt.Errorf("sweep: --%s changes the experiment, and --resume continues the one stored in %s as it was", name, out)
						}
					}
					if plan, err = experiment.LoadPlan(out); err != nil {
						return err
					}
				} else {
					edit := func(s *experiment.Spec) error { rf.override(cmd.Flags(), s); return nil }
					if plan, err = experiment.LoadWith(args[0], profile, edit); err != nil {
						return err
					}
					if trace {
						plan.SetTrace(true)
					}
				}
				for _, s := range plan.Skipped {
					fmt.Fprintf(env.Stderr, "schedlab: %s: skipping %s (not in this schedlab yet)\n", plan.Name, s)
				}
				if jobs < 1 {
					jobs = runtime.NumCPU()
				}
				if estimate {
					return printEstimate(env, plan, out, probe, jobs)
				}
				if slurmFile != "" {
					if sn > 1 {
						return fmt.Errorf("sweep: --slurm shards the sweep itself; do not give --shard")
					}
					if err := experiment.PrepareDir(out, plan, true); err != nil {
						return err
					}
					return writeSlurmScript(env, slurmFile, out, plan, slurmOptions{tasks: tasks, cpus: cpusPerTask, partition: partition, time: timeLimit, bin: bin})
				}
				if err := experiment.PrepareDir(out, plan, resume); err != nil {
					return err
				}
				if jobs < 1 {
					jobs = runtime.NumCPU()
				}
				start := time.Now()
				prog := newProgress(env)
				prog.header("sweep %s: machines %s, kernels %s, variants %s, seed %d, %d runs each",
					plan.Name, machineLabels(plan), strings.Join(plan.Kernels, ","), strings.Join(plan.Variants, ","), plan.Seed, plan.Runs)
				var last experiment.Progress
				ctx, stop := env.interruptible()
				defer stop()
				recs, err := experiment.Sweep(plan, experiment.SweepOptions{Dir: out, Jobs: jobs, Shard: si, Shards: sn, Context: ctx,
					Progress: func(p experiment.Progress) { last = p; prog.sweep(p) }})
				prog.clear()
				var in *experiment.Interrupted
				if errors.As(err, &in) {
					return sweepInterrupted(plan, in, out, si, sn)
				}
				if err != nil {
					return err
				}
				printWarnings(env.Stderr, recordWarnings(recs)...)
				what := fmt.Sprintf("%d runs", len(recs))
				if sn > 1 {
					what = fmt.Sprintf("shard %d/%d: %d runs", si, sn, len(recs))
				}
				if plan.Sequential != nil {
					what += fmt.Sprintf(" of at most %d (stopping rule)", len(plan.Points()))
				}
				fmt.Fprintf(env.Stderr, "schedlab: sweep %s: %s (%d new, %d already done) in %s -> %s\n",
					plan.Name, what, last.Done, len(recs)-last.Done, fmtDuration(time.Since(start)), out)
				return nil
			},
		}
		f := c.Flags()
		f.StringVarP(&out, "out", "o", "", "results directory")
		f.IntVarP(&jobs, "jobs", "j", 0, "runs at once (default: the number of CPUs)")
		f.BoolVar(&resume, "resume", false, "continue a sweep in DIR, running only the missing runs")
		f.StringVar(&shard, "shard", "", "run only shard i of n (i/n, 0 <= i < n)")
		f.StringVar(&profile, "profile", "", "apply a profile of the experiment (e.g. paper: the published sizes)")
		f.BoolVar(&estimate, "estimate", false, "print the sweep's expected wall time from a short probe of each configuration, and run nothing")
		f.DurationVar(&probe, "estimate-probe", 2*time.Second, "with --estimate: wall time to probe each machine, workload and load")
		f.BoolVar(&trace, "trace", false, "trace run 0 of every configuration (per-CPU occupancy for the report)")
		f.StringVar(&slurmFile, "slurm", "", "write an sbatch job-array script to this file instead of running")
		f.IntVar(&tasks, "slurm-tasks", 4, "with --slurm: array tasks (shards)")
		f.IntVar(&cpusPerTask, "slurm-cpus", 1, "with --slurm: CPUs per array task (its --jobs)")
		f.StringVar(&partition, "slurm-partition", "", "with --slurm: partition (sbatch --partition)")
		f.StringVar(&timeLimit, "slurm-time", "", "with --slurm: time limit per task (sbatch --time, e.g. 1:00:00)")
		f.StringVar(&bin, "slurm-schedlab", "", "with --slurm: the schedlab binary the tasks run (default: this one)")
		rf.add(f, true)
		return c
	})
}

// sweepInterrupted is the error of a sweep stopped by Ctrl-C: how many
// runs DIR holds, and the command that continues it (the plan is in DIR).
func sweepInterrupted(plan *experiment.Plan, in *experiment.Interrupted, out string, shard, shards int) error {
	of := fmt.Sprintf("%d", in.Total)
	if plan.Sequential != nil {
		of = fmt.Sprintf("at most %d", in.Total)
	}
	cmd := "schedlab sweep --out " + shellQuote(out) + " --resume"
	if shards > 1 {
		of += fmt.Sprintf(" of shard %d/%d", shard, shards)
		cmd += fmt.Sprintf(" --shard %d/%d", shard, shards)
	}
	return &ExitError{Code: InterruptedCode, Err: fmt.Errorf("sweep %s interrupted: %d of %s runs kept in %s; resume with: %s", plan.Name, in.Have, of, out, cmd)}
}

func machineLabels(p *experiment.Plan) string {
	var out []string
	for _, m := range p.Machines {
		out = append(out, m.Label)
	}
	return strings.Join(out, ",")
}

func parseShard(s string) (int, int, error) {
	if s == "" {
		return 0, 1, nil
	}
	a, b, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || n < 1 || i < 0 || i >= n {
		return 0, 0, fmt.Errorf("--shard %q: want i/n with 0 <= i < n", s)
	}
	return i, n, nil
}

type slurmOptions struct {
	tasks, cpus          int
	partition, time, bin string
}

// writeSlurmScript writes an sbatch script whose array task i runs shard i
// of the sweep stored in dir.
func writeSlurmScript(env *Env, file, dir string, plan *experiment.Plan, o slurmOptions) error {
	if o.tasks < 1 || o.cpus < 1 {
		return fmt.Errorf("sweep: --slurm-tasks and --slurm-cpus must be at least 1")
	}
	n := len(plan.Points())
	if o.tasks > n {
		o.tasks = n
	}
	bin, absDir, err := slurmPaths(o, dir)
	if err != nil {
		return err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "#!/bin/sh\n")
	fmt.Fprintf(&b, "# schedlab sweep %s: %d runs in %d shards. Submit with: sbatch %s\n", plan.Name, n, o.tasks, filepath.Base(file))
	fmt.Fprintf(&b, "# then check and merge with: schedlab collect %s\n", shellQuote(absDir))
	writeSbatchHeader(&b, plan.Name, absDir, o)
	// --resume makes a requeued or re-submitted task continue its shard.
	fmt.Fprintf(&b, "exec %s sweep --out %s --resume --jobs %d --shard \"${SLURM_ARRAY_TASK_ID}/%d\"\n",
		shellQuote(bin), shellQuote(absDir), o.cpus, o.tasks)
	if err := os.WriteFile(file, []byte(b.String()), 0o755); err != nil {
		return fmt.Errorf("%s: %v", file, unwrapPathError(err))
	}
	fmt.Fprintf(env.Stderr, "schedlab: wrote %s: %d runs of %s in %d array tasks into %s; submit with sbatch %s\n", file, n, plan.Name, o.tasks, absDir, file)
	return nil
}

// slurmPaths are the binary the array tasks run (o.bin, default this
// one) and the results directory as an absolute path.
func slurmPaths(o slurmOptions, dir string) (bin, absDir string, err error) {
	bin = o.bin
	if bin == "" {
		if bin, err = os.Executable(); err != nil {
			return "", "", err
		}
	}
	absDir, err = filepath.Abs(dir)
	return bin, absDir, err
}

// writeSbatchHeader writes the #SBATCH lines of a job array of o.tasks
// tasks named schedlab-NAME, each on o.cpus CPUs, logging into absDir, and
// the shell's set -e.
func writeSbatchHeader(b *strings.Builder, name, absDir string, o slurmOptions) {
	fmt.Fprintf(b, "#SBATCH --job-name=schedlab-%s\n", name)
	fmt.Fprintf(b, "#SBATCH --array=0-%d\n", o.tasks-1)
	fmt.Fprintf(b, "#SBATCH --ntasks=1\n#SBATCH --cpus-per-task=%d\n", o.cpus)
	fmt.Fprintf(b, "#SBATCH --output=%s\n", filepath.Join(absDir, "slurm-%A_%a.out"))
	if o.partition != "" {
		fmt.Fprintf(b, "#SBATCH --partition=%s\n", o.partition)
	}
	if o.time != "" {
		fmt.Fprintf(b, "#SBATCH --time=%s\n", o.time)
	}
	fmt.Fprintf(b, "set -e\n")
}

func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("/._-+=:,", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// printEstimate prints `sweep --estimate`'s table and total.
func printEstimate(env *Env, plan *experiment.Plan, dir string, probe time.Duration, jobs int) error {
	fmt.Fprintf(env.Stderr, "schedlab: sweep %s: probing each machine, workload and load for up to %v\n", plan.Name, probe)
	rows, err := experiment.Estimate(plan, dir, probe, time.Now)
	if err != nil {
		return err
	}
	w := tabwriter.NewWriter(env.Stdout, 0, 8, 2, ' ', 0)
	fmt.Fprintf(w, "machine\tworkload\tload\truns\tdone\tprobe\tprogress\tscale\tper run\ttotal\n")
	var total, least time.Duration
	runs, atLeast, measured, scaled := 0, 0, 0, 0
	for i := range rows {
		r := &rows[i]
		load := r.Load
		if load == "" {
			load = "-"
		}
		// A class with runs done costs their mean; the rest a probe.
		probe, progress, scale := "-", "-", "-"
		if r.Measured == 0 {
			probe, progress = fmtEstimate(r.ProbeWall), fmt.Sprintf("%.1f%%", 100*r.Progress)
		}
		if r.RefMachine != "" {
			scaled++
			scale = fmt.Sprintf("%.2f (%s %s)", r.Scale, r.RefMachine, r.RefLoad)
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%d\t%d\t%s\t%s\t%s\t%s\t%s\n", r.Machine, r.Workload, load, r.Runs, r.Measured,
			probe, progress, scale, fmtEstimate(r.PerRun), fmtEstimate(r.Total()))
		total += r.Total()
		least += r.Least()
		runs += r.Runs
		atLeast += r.AtLeast
		measured += r.Measured
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if measured > 0 {
		fmt.Fprintf(env.Stdout, "per run: the mean CPU time (wall time where a record has none) of the runs %s holds where it holds some (done), else a probe\n", dir)
	}
	if scaled > 0 {
		fmt.Fprintf(env.Stdout, "scale: a cut-short probe times the measured mean over the probe of the nearest class with runs (machine load); the further the load from it, the rougher\n")
	}
	if q := plan.Sequential; q != nil {
		fmt.Fprintf(env.Stdout, "estimate: %d runs at most, %.2f core-hours; about %s of wall time on %d jobs\n",
			runs, total.Hours(), fmtDuration(total/time.Duration(jobs)), jobs)
		fmt.Fprintf(env.Stdout, "stopping rule (%s): at least %d of the %d runs of each load; %d runs at least, %.2f core-hours, about %s on %d jobs; --full-length runs all\n",
			q, min(q.MinRuns, plan.Runs), plan.Runs, atLeast, least.Hours(), fmtDuration(least/time.Duration(jobs)), jobs)
		return nil
	}
	fmt.Fprintf(env.Stdout, "estimate: %d runs, %.2f core-hours; about %s of wall time on %d jobs\n",
		runs, total.Hours(), fmtDuration(total/time.Duration(jobs)), jobs)
	return nil
}

// fmtEstimate is a duration to two or three significant figures.
func fmtEstimate(d time.Duration) string {
	switch {
	case d < time.Second:
		return fmt.Sprintf("%dms", d.Milliseconds())
	case d < time.Minute:
		return fmt.Sprintf("%.1fs", d.Seconds())
	}
	return fmtDuration(d)
}
