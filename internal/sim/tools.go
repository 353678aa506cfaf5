package sim

import (
	"fmt"
	"sort"
	"strings"

	"github.com/schedlab/schedlab/internal/replay"
	"github.com/schedlab/schedlab/internal/workload"
	"github.com/schedlab/schedlab/internal/workload/frames"
	"github.com/schedlab/schedlab/internal/workload/hackbench"
	"github.com/schedlab/schedlab/internal/workload/perfopt"
	"github.com/schedlab/schedlab/internal/workload/pingpong"
	"github.com/schedlab/schedlab/internal/workload/rtapp"
	"github.com/schedlab/schedlab/internal/workload/schbench"
	"github.com/schedlab/schedlab/internal/workload/stream"
	"github.com/schedlab/schedlab/internal/workload/tbench"
)

func init() {
	register(&Tool{
		Name:    "hackbench",
		Summary: "rt-tests hackbench: groups of senders and receivers over sockets or pipes",
		Usage:   hackbench.UsageRTTests,
		Parse: func(args []string) (workload.Instance, error) {
			cfg, err := hackbench.ParseRTTests(args)
			if err != nil {
				return nil, err
			}
			return hackbench.New(cfg), nil
		},
		Repeatable: true,
	})
	register(&Tool{
		Name:    "perf-bench-messaging",
		Summary: "perf bench sched messaging: hackbench as perf runs it (-g, -l, -p, -t)",
		Usage:   hackbench.UsagePerf,
		Parse: func(args []string) (workload.Instance, error) {
			cfg, err := hackbench.ParsePerf(args)
			if err != nil {
				return nil, err
			}
			return hackbench.New(cfg), nil
		},
		Repeatable: true,
	})
	register(&Tool{
		Name:    "perf-bench-pipe",
		Summary: "perf bench sched pipe: two tasks exchange an int over two pipes (-l, -T; --cpus-pair A,B pins them)",
		Usage:   pingpong.PerfUsage,
		Parse: func(args []string) (workload.Instance, error) {
			cfg, err := pingpong.ParsePerf(args)
			if err != nil {
				return nil, err
			}
			return pingpong.NewPerf(cfg), nil
		},
		Repeatable: true,
	})
	register(&Tool{
		Name:    "perf",
		Summary: "perf bench [--format=simple] sched messaging|pipe ARGS (the same as perf-bench-messaging, perf-bench-pipe)",
		Usage:   hackbench.UsagePerf + pingpong.PerfUsage,
		Parse: func(args []string) (workload.Instance, error) {
			cmd, err := perfopt.SplitBench(args, "sched messaging", "sched pipe")
			if err != nil {
				return nil, err
			}
			if cmd.Name() == "sched pipe" {
				cfg, err := pingpong.ParsePerfBench(cmd)
				if err != nil {
					return nil, err
				}
				return pingpong.NewPerf(cfg), nil
			}
			cfg, err := hackbench.ParsePerfBench(cmd)
			if err != nil {
				return nil, err
			}
			return hackbench.New(cfg), nil
		},
		Repeatable: true,
	})
	register(&Tool{
		Name:    "lat_pipe",
		Summary: "lmbench 3 lat_pipe: pipe round trip between a process and its writer (-P, -W, -N; --cpus-pair A,B pins them)",
		Usage:   pingpong.LatUsage,
		Parse: func(args []string) (workload.Instance, error) {
			cfg, err := pingpong.ParseLat(args)
			if err != nil {
				return nil, err
			}
			return pingpong.NewLat(cfg), nil
		},
		Repeatable: true,
	})
	register(&Tool{
		Name:    "schbench",
		Summary: "schbench (2016): message threads waking worker threads; wakeup latency percentiles",
		Usage:   schbench.Usage,
		Parse: func(args []string) (workload.Instance, error) {
			cfg, err := schbench.Parse(args)
			if err != nil {
				return nil, err
			}
			return schbench.New(cfg), nil
		},
	})
	register(&Tool{
		Name:    "schbench-current",
		Summary: "schbench (2023+): message threads, workers doing matrix-multiply requests; wakeup/request latency and RPS percentiles",
		Usage:   schbench.CurrentUsage,
		Parse: func(args []string) (workload.Instance, error) {
			cfg, err := schbench.ParseCurrent(args)
			if err != nil {
				return nil, err
			}
			return schbench.NewCurrent(cfg), nil
		},
	})
	register(&Tool{
		Name:    "tbench",
		Summary: "dbench 4.00's tbench: N client/server pairs over loopback TCP; MB/sec",
		Usage:   tbench.Usage,
		Parse: func(args []string) (workload.Instance, error) {
			cfg, err := tbench.Parse(args)
			if err != nil {
				return nil, err
			}
			return tbench.New(cfg), nil
		},
	})
	register(&Tool{
		Name:    "stream",
		Summary: "STREAM 5.10 (OpenMP): Copy/Scale/Add/Triad; NAME=VALUE words set the build and thread count",
		Usage:   stream.Usage,
		Parse: func(args []string) (workload.Instance, error) {
			cfg, err := stream.Parse(args)
			if err != nil {
				return nil, err
			}
			return stream.New(cfg), nil
		},
	})
	register(&Tool{
		Name:    "rt-app",
		Summary: "rt-app JSON workloads: tasks, phases, run/runtime/sleep/timer/lock/barrier/fork events",
		Usage:   rtapp.Usage,
		Parse: func(args []string) (workload.Instance, error) {
			spec, err := rtapp.ParseArgs(args)
			if err != nil {
				return nil, err
			}
			return rtapp.New(spec), nil
		},
	})
	register(&Tool{
		Name:    "frames",
		Summary: "Android-style frames: per app a UI thread and a RenderThread at each vsync, apps moved between top-app and background cgroups; frame-time percentiles and janky frames",
		Usage:   frames.Usage,
		Parse: func(args []string) (workload.Instance, error) {
			cfg, err := frames.Parse(args)
			if err != nil {
				return nil, err
			}
			return frames.New(cfg), nil
		},
	})
	register(&Tool{
		Name:    "replay",
		Summary: "a recorded trace (trace.dat, ftrace text, trace-cmd report, perf sched script) replayed task by task; perf sched latency, recorded and replayed",
		Usage:   replay.Usage,
		Parse: func(args []string) (workload.Instance, error) {
			spec, err := replay.ParseArgs(args)
			if err != nil {
				return nil, err
			}
			tr, err := replay.Load(spec)
			if err != nil {
				return nil, err
			}
			return replay.New(spec, tr), nil
		},
	})
}

// Tool is one benchmark command.
type Tool struct {
	Name    string
	Summary string
	// Usage is the tool's own usage text, printed for -h.
	Usage string
	// Parse builds an instance from the tool's arguments.
	Parse func(args []string) (workload.Instance, error)
	// Repeatable tools end with every task they created exited and
	// measure from their own start, so Config.Warmup can run them back
	// to back on one kernel.
	Repeatable bool
}

// RepeatableTools names the tools Config.Warmup can repeat.
func RepeatableTools() []string {
	var out []string
	for _, t := range Tools() {
		if t.Repeatable {
			out = append(out, t.Name)
		}
	}
	return out
}

var tools = map[string]*Tool{}

func register(t *Tool) {
	if _, dup := tools[t.Name]; dup {
		panic("sim: tool " + t.Name + " registered twice")
	}
	tools[t.Name] = t
}

// Tools lists the tools by name.
func Tools() []*Tool {
	out := make([]*Tool, 0, len(tools))
	for _, t := range tools {
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Lookup finds a tool by name.
func Lookup(name string) (*Tool, bool) {
	t, ok := tools[name]
	return t, ok
}

// UnknownToolError names a workload that does not exist.
type UnknownToolError struct{ Name string }

func (e *UnknownToolError) Error() string {
	var names []string
	for _, t := range Tools() {
		names = append(names, t.Name)
	}
	return fmt.Sprintf("unknown workload %q (have %s)", e.Name, strings.Join(names, ", "))
}

// Parse builds the benchmark instance for a tool and its arguments.
func Parse(tool string, args []string) (*Tool, workload.Instance, error) {
	t, ok := Lookup(tool)
	if !ok {
		return nil, nil, &UnknownToolError{tool}
	}
	inst, err := t.Parse(args)
	return t, inst, err
}
