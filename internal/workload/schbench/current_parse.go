package schbench

import (
	"fmt"

	"github.com/schedlab/schedlab/internal/workload"
	"github.com/schedlab/schedlab/internal/workload/getopt"
)

// CurrentUsage is the current schbench's usage text (print_usage), limited
// to the options it documents.
const CurrentUsage = `schbench usage:
	-C (--calibrate): run our work loop and report on timing
	-L (--no-locking): don't spinlock during CPU work (def: locking on)
	-m (--message-threads): number of message threads (def: 1)
	-t (--threads): worker threads per message thread (def: num_cpus)
	-r (--runtime): How long to run before exiting (seconds, def: 30)
	-F (--cache_footprint): cache footprint (kb, def: 256)
	-n (--operations): think time operations to perform (def: 5)
	-s (--sleep_usec): simulated network usleep per request (usec, def: 100)
	-A (--auto-rps): grow RPS until cpu utilization hits target (def: none)
	-p (--pipe): transfer size bytes to simulate a pipe test (def: 0)
	-R (--rps): requests per second mode (count, def: 0)
	-w (--warmuptime): how long to warmup before resetting stats (seconds, def: 0)
	-i (--intervaltime): interval for printing latencies (seconds, def: 10)
	-z (--zerotime): interval for zeroing latencies (seconds, def: never)
schedlab does not model -A, -p, -M, -W, --split, -j and -J.
`

var currentOpts = []getopt.Option{
	{Short: 'p', Long: "pipe", HasArg: true},
	{Short: 'm', Long: "message-threads", HasArg: true},
	{Short: 't', Long: "threads", HasArg: true},
	{Short: 'r', Long: "runtime", HasArg: true},
	{Short: 'R', Long: "rps", HasArg: true},
	{Short: 'A', Long: "auto-rps", HasArg: true},
	// The tool's long form maps to 'f', which no case handles: the
	// option is accepted and ignored (workloads-and-formats.md 2.2).
	{Long: "cache_footprint", HasArg: true},
	{Short: 'F', HasArg: true},
	{Short: 'C', Long: "calibrate"},
	{Short: 'L', Long: "no-locking"},
	{Short: 'n', Long: "operations", HasArg: true},
	{Short: 's', Long: "sleep_usec", HasArg: true},
	{Short: 'w', Long: "warmuptime", HasArg: true},
	{Short: 'i', Long: "intervaltime", HasArg: true},
	{Short: 'z', Long: "zerotime", HasArg: true},
	{Short: 'M', Long: "message-cpus", HasArg: true},
	{Short: 'W', Long: "worker-cpus", HasArg: true},
	{Short: 'j', Long: "json", HasArg: true},
	{Short: 'J', Long: "jobname", HasArg: true},
	{Long: "split", HasArg: true},
	{Short: 'h', Long: "help"},
}

// ParseCurrent parses the current (2023+) schbench's options
// (workloads-and-formats.md 2.2). The auto-RPS (-A), pipe (-p), pinning
// (-M, -W), split-footprint (--split) and JSON (-j, -J) options are not
// modelled and are refused; -r 0 (run forever) is refused too.
func ParseCurrent(args []string) (CurrentConfig, error) {
	cfg := DefaultCurrentConfig()
	o, rest, err := getopt.Parse("schbench", currentOpts, args)
	if err != nil {
		return cfg, err
	}
	if len(rest) > 0 {
		return cfg, fmt.Errorf("schbench: Error Extra arguments '%s'", rest[0])
	}
	warmup := -1
	for _, x := range o {
		v := atoi(x.Arg)
		switch x.Option.Short {
		case 'm':
			cfg.MessageThreads = v
		case 't':
			cfg.Workers = v
		case 'r':
			cfg.Runtime = v
		case 'R':
			cfg.RPS = v
		case 'F':
			cfg.FootprintKB = v
		case 'C':
			cfg.Calibrate = true
		case 'L':
			cfg.NoLocking = true
		case 'n':
			cfg.Operations = v
		case 's':
			cfg.SleepUsec = v
		case 'w':
			warmup = v
		case 'i':
			cfg.Interval = v
		case 'z':
			cfg.ZeroTime = v
		case 'A', 'p', 'M', 'W', 'j', 'J':
			what := map[byte]string{'A': "auto-RPS", 'p': "pipe mode", 'M': "CPU pinning", 'W': "CPU pinning", 'j': "the tool's JSON; use schedlab run --json", 'J': "the tool's JSON; use schedlab run --json"}[x.Option.Short]
			return cfg, fmt.Errorf("schbench: %s is not modelled (%s)", x.Name, what)
		case 'h':
			return cfg, workload.ErrHelp
		case 0:
			if x.Option.Long == "split" {
				return cfg, fmt.Errorf("schbench: %s is not modelled (every worker has a private footprint)", x.Name)
			}
			// --cache_footprint: accepted and ignored, as by the tool.
		}
	}
	if warmup >= 0 {
		cfg.Warmup = warmup
	}
	if cfg.Calibrate {
		cfg.NoLocking = true
	}
	if cfg.Runtime < 30 {
		cfg.Warmup = 0
	}
	switch {
	case cfg.MessageThreads <= 0:
		return cfg, fmt.Errorf("schbench: -m %d: schedlab needs at least one message thread", cfg.MessageThreads)
	case cfg.Workers < 0:
		return cfg, fmt.Errorf("schbench: -t %d: the worker count must not be negative", cfg.Workers)
	case cfg.Runtime <= 0:
		return cfg, fmt.Errorf("schbench: -r %d: schedlab needs a runtime of at least one second", cfg.Runtime)
	case cfg.Runtime > 1<<20:
		return cfg, fmt.Errorf("schbench: -r %d: more than schedlab simulates", cfg.Runtime)
	case cfg.FootprintKB < 0 || cfg.FootprintKB > 1<<30:
		return cfg, fmt.Errorf("schbench: -F %d: the footprint must be 0..%d KB", cfg.FootprintKB, 1<<30)
	case cfg.Operations < 0 || cfg.Operations > 1<<20:
		return cfg, fmt.Errorf("schbench: -n %d: the operations must be 0..%d", cfg.Operations, 1<<20)
	case cfg.SleepUsec < 0:
		return cfg, fmt.Errorf("schbench: -s %d: the sleep must not be negative", cfg.SleepUsec)
	case cfg.RPS < 0:
		return cfg, fmt.Errorf("schbench: -R %d: the rate must not be negative", cfg.RPS)
	case cfg.RPS > 0 && cfg.RPS < cfg.MessageThreads:
		return cfg, fmt.Errorf("schbench: -R %d: fewer requests per second than message threads (-m %d)", cfg.RPS, cfg.MessageThreads)
	case cfg.Interval <= 0:
		return cfg, fmt.Errorf("schbench: -i %d: the interval must be at least one second", cfg.Interval)
	case cfg.Warmup < 0 || cfg.ZeroTime < 0:
		return cfg, fmt.Errorf("schbench: -w and -z must not be negative")
	case cfg.MessageThreads > 1<<20 || cfg.Workers > 1<<20 || cfg.MessageThreads*cfg.Workers > 1<<20:
		return cfg, fmt.Errorf("schbench: %d×%d threads is more than schedlab simulates", cfg.MessageThreads, cfg.Workers)
	}
	return cfg, nil
}
