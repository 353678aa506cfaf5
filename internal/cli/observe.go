package cli

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/schedlab/schedlab/internal/schedstat"
	"github.com/schedlab/schedlab/internal/trace"
	"github.com/spf13/cobra"
)

// Files `schedlab run --schedstat DIR` writes, as sched-scoreboard and
// `perf sched stats record` take them: /proc/schedstat before and after the
// workload.
const (
	SchedstatBefore = "schedstat-before.txt"
	SchedstatAfter  = "schedstat-after.txt"
)

func init() {
	register(func(env *Env) *cobra.Command {
		c := &cobra.Command{
			Use:   "schedstat",
			Short: "Compare /proc/schedstat snapshots of runs",
		}
		c.AddCommand(&cobra.Command{
			Use:   "diff RUN_A RUN_B [RUN_C...]",
			Short: "Print the schedstat comparison of runs (the first is the reference)",
			Long: `Each RUN is a directory written by 'schedlab run --schedstat DIR' (holding
` + SchedstatBefore + ` and ` + SchedstatAfter + `) or a pair of snapshot files
BEFORE,AFTER. Prints the layout of 'perf sched stats diff' and sched-scoreboard:
schedule calls, idle, try_to_wake_up and local wakeups, run and wait time,
timeslices, wakeups per domain level and affine wakeups, per-CPU averages,
with percentage changes against the first run; then the load-balance counters.
A single RUN prints its own report.`,
			Args: cobra.MinimumNArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				var deltas []schedstat.Delta
				var names []string
				var runs []*runSnapshots
				for _, a := range args {
					r, err := snapshotPair(a)
					if err != nil {
						return err
					}
					runs = append(runs, r)
					for _, w := range versionWarnings(runs[0], r) {
						fmt.Fprintf(env.Stderr, "schedlab: warning: %s\n", w)
					}
					d, err := schedstat.Diff(r.before, r.after)
					if err != nil {
						return fmt.Errorf("%s: %v", a, err)
					}
					deltas = append(deltas, d)
					names = append(names, r.name)
				}
				return schedstat.FormatComparison(env.Stdout, deltas, names)
			},
		})
		return c
	})
	register(func(env *Env) *cobra.Command {
		c := &cobra.Command{
			Use:   "trace",
			Short: "Summaries of a sched trace in perf sched's layouts",
		}
		var sortKeys string
		var noMerge bool
		lat := &cobra.Command{
			Use:   "latency FILE",
			Short: "Per-task wakeup-to-run latency (perf sched latency)",
			Args:  cobra.ExactArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				evs, err := readTextTrace(env, args[0])
				if err != nil {
					return err
				}
				var keys []string
				if sortKeys != "" {
					for _, k := range strings.Split(sortKeys, ",") {
						keys = append(keys, strings.TrimSpace(k))
					}
				}
				return trace.Latency(env.Stdout, evs, trace.LatencyOptions{Sort: keys, NoMerge: noMerge})
			},
		}
		lat.Flags().StringVarP(&sortKeys, "sort", "s", "", "sort keys: runtime, switch, avg, max, pid (perf's -s)")
		lat.Flags().BoolVarP(&noMerge, "pids", "p", false, "one line per pid instead of per comm")
		th := &cobra.Command{
			Use:   "timehist FILE",
			Short: "Per-switch wait, scheduling delay and run time (perf sched timehist)",
			Args:  cobra.ExactArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				evs, err := readTextTrace(env, args[0])
				if err != nil {
					return err
				}
				return trace.Timehist(env.Stdout, evs)
			},
		}
		c.AddCommand(lat, th)
		return c
	})
}

// runSnapshots are one run's /proc/schedstat snapshots and their files.
type runSnapshots struct {
	before, after         *schedstat.Snapshot
	beforeFile, afterFile string
	name                  string
}

// snapshotPair reads a run's before and after snapshots.
func snapshotPair(arg string) (*runSnapshots, error) {
	r := &runSnapshots{}
	if b, a, ok := strings.Cut(arg, ","); ok {
		r.beforeFile, r.afterFile, r.name = b, a, filepath.Base(a)
	} else {
		r.beforeFile, r.afterFile, r.name = filepath.Join(arg, SchedstatBefore), filepath.Join(arg, SchedstatAfter), filepath.Base(filepath.Clean(arg))
	}
	var err error
	if r.before, err = readSnapshot(r.beforeFile); err != nil {
		return nil, err
	}
	if r.after, err = readSnapshot(r.afterFile); err != nil {
		return nil, err
	}
	return r, nil
}

// versionWarnings are one line for each snapshot of run r whose
// /proc/schedstat version differs from the one it is compared with: r's
// after file against its before file, and r against the first run.
// Different versions come from different kernels (15 is v6.0's and v5.12's, 17
// v6.19's), whose counters do not mean the same things (version 17 splits
// lb_imbalance four ways, and the kernels balance differently), so such a
// comparison is rarely the one meant; it is still printed.
func versionWarnings(first, r *runSnapshots) []string {
	var out []string
	differ := func(fa string, va int, fb string, vb int) {
		if va != vb {
			out = append(out, fmt.Sprintf("%s is /proc/schedstat version %d but %s is version %d: these are different kernels; compare runs of one kernel (--kernel)", fb, vb, fa, va))
		}
	}
	differ(r.beforeFile, r.before.Version, r.afterFile, r.after.Version)
	if r != first {
		differ(first.afterFile, first.after.Version, r.afterFile, r.after.Version)
	}
	return out
}

func readSnapshot(path string) (*schedstat.Snapshot, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, unwrapPathError(err))
	}
	defer f.Close()
	s, err := schedstat.Parse(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	return s, nil
}

// readTextTrace reads ftrace text, or a trace.dat (schedlab's, or one
// trace-cmd recorded on a real kernel: versions 6 and 7). A text whose last
// line has no newline was cut short: that line is left out, with one
// warning on stderr.
func readTextTrace(env *Env, path string) ([]trace.Event, error) {
	if data, err := os.ReadFile(path); err == nil && strings.HasPrefix(string(data[:min(len(data), 10)]), "\x17\x08\x44tracing") {
		tr, err := trace.ReadDat(data)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", path, err)
		}
		return tr.Events, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, unwrapPathError(err))
	}
	defer f.Close()
	tr := trace.NewTextReader(f)
	var evs []trace.Event
	for {
		ev, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %v", path, err)
		}
		evs = append(evs, ev)
	}
	if n := tr.Cut(); n > 0 {
		printWarnings(env.Stderr, []string{trace.CutWarning(path, n)})
	}
	return evs, nil
}
