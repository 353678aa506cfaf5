package cli

import (
	"github.com/spf13/cobra"

	"github.com/schedlab/schedlab/internal/replay"
)

// schedlab replay: a recorded trace's tasks replayed on a simulated
// machine, kernel and variant; the same as `schedlab run ... replay TRACE`
// with the flags in any order. See docs/replay.md.
func init() {
	register(func(env *Env) *cobra.Command {
		var (
			rf         runFlags
			o          runOutputs
			recordedOn string
			pids       bool
			order      string
		)
		c := &cobra.Command{
			Use:   "replay [flags] TRACE",
			Short: "Replay a recorded trace (trace.dat, trace-cmd report, perf sched script) on a simulated machine",
			Long: `Replay the tasks of a trace recorded on a real kernel (or by schedlab) on a
simulated machine, kernel and variant, and print perf sched latency's
summary of the recording and of the replay side by side:

  schedlab replay ../shared/traces/real-4cpu-sched.dat --machine hikey

TRACE is a trace.dat (trace-cmd record, versions 6 and 7), ftrace text,
the output of 'trace-cmd report' or of 'perf sched script'. The same run
is 'schedlab run [flags] replay [--recorded-on M] [--pids] [--order O] TRACE', so
'schedlab compare ... replay TRACE' compares variants on one trace.
docs/replay.md says what a trace cannot tell and what replay assumes.
` + "\n" + replay.Usage,
			Args: cobra.ExactArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				var toolArgs []string
				if recordedOn != "" {
					toolArgs = append(toolArgs, "--recorded-on", recordedOn)
				}
				if pids {
					toolArgs = append(toolArgs, "--pids")
				}
				if order != "" {
					toolArgs = append(toolArgs, "--order", order)
				}
				toolArgs = append(toolArgs, args[0])
				return runTool(env, cmd, &rf, "replay", toolArgs, o)
			},
		}
		f := c.Flags()
		rf.add(f, false)
		f.StringVar(&recordedOn, "recorded-on", "", "the machine the trace was recorded on: bursts are scaled by its CPUs' capacities")
		f.BoolVar(&pids, "pids", false, "one row per task instead of one per comm")
		f.StringVar(&order, "order", "", "free (default: each task keeps its pace) or recorded (a waker waits until its wakee sleeps, so every recorded wakeup happens)")
		f.StringVar(&o.json, "json", "", "also write the run's record as JSON to this file")
		f.StringVar(&o.trace, "trace", "", "write the replay's sched tracepoints: FILE.txt, FILE.dat or FILE.json")
		f.StringSliceVar(&o.events, "trace-events", nil, "trace only these events (e.g. sched_switch,sched_wakeup)")
		f.StringVar(&o.from, "trace-from", "", "trace from this simulated time (e.g. 10ms)")
		f.StringVar(&o.to, "trace-to", "", "trace up to this simulated time")
		f.StringVar(&o.schedstat, "schedstat", "", "write /proc/schedstat snapshots before and after the replay into DIR")
		return c
	})
}
