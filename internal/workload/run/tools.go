package run

import (
	"github.com/schedlab/schedlab/internal/workload"
	"github.com/schedlab/schedlab/internal/workload/hackbench"
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
	})
	register(&Tool{
		Name:    "perf",
		Summary: "perf bench [--format=simple] sched messaging ARGS (the same as perf-bench-messaging)",
		Usage:   hackbench.UsagePerf,
		Parse: func(args []string) (workload.Instance, error) {
			cfg, err := hackbench.ParsePerfCommand(args)
			if err != nil {
				return nil, err
			}
			return hackbench.New(cfg), nil
		},
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
}
