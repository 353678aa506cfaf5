package schbench

import (
	"fmt"
	"strings"

	"github.com/schedlab/schedlab/internal/engine"
	"github.com/schedlab/schedlab/internal/workload"
	"github.com/schedlab/schedlab/internal/workload/getopt"
)

// Usage is the 2016 schbench's usage text (print_usage).
const Usage = `schbench usage:
	-m (--message-threads): number of message threads (def: 2)
	-t (--threads): worker threads per message thread (def: 16)
	-r (--runtime): How long to run before exiting (seconds, def: 30)
	-s (--sleeptime): Message thread latency (usec, def: 10000
	-c (--cputime): How long to think during loop (usec, def: 10000
	-a (--auto): grow thread count until latencies hurt (def: off)
	-p (--pipe): transfer size bytes to simulate a pipe test (def: 0)
	-R (--rps): requests per second mode (count, def: 0)
`

var opts = []getopt.Option{
	{Short: 'a', Long: "auto"},
	{Short: 'p', Long: "pipe", HasArg: true},
	{Short: 'm', Long: "message-threads", HasArg: true},
	{Short: 't', Long: "threads", HasArg: true},
	{Short: 'r', Long: "runtime", HasArg: true},
	{Short: 'R', Long: "rps", HasArg: true},
	{Short: 's', Long: "sleeptime", HasArg: true},
	{Short: 'c', Long: "cputime", HasArg: true},
	// The 2016 tool had only --help (and printed the usage for any
	// unknown option, exiting 1); schedlab takes -h too, as for every
	// tool (docs/workloads.md).
	{Short: 'h', Long: "help"},
}

// atoi mirrors C's atoi.
func atoi(s string) int {
	s = strings.TrimLeft(s, " \t\n\v\f\r")
	neg := false
	if s != "" && (s[0] == '+' || s[0] == '-') {
		neg, s = s[0] == '-', s[1:]
	}
	n := 0
	for i := 0; i < len(s) && s[i] >= '0' && s[i] <= '9' && n < 1<<31; i++ {
		n = n*10 + int(s[i]-'0')
	}
	if neg {
		return -n
	}
	return n
}

// Parse parses the 2016 schbench's options (getopt "p:am:t:s:c:r:R:"). The
// autobench (-a), pipe (-p) and requests-per-second (-R) modes are not
// modelled and are refused.
func Parse(args []string) (Config, error) {
	cfg := DefaultConfig()
	o, rest, err := getopt.Parse("schbench", opts, args)
	if err != nil {
		return cfg, err
	}
	if len(rest) > 0 {
		return cfg, fmt.Errorf("schbench: Error Extra arguments '%s'", rest[0])
	}
	for _, x := range o {
		v := atoi(x.Arg)
		switch x.Option.Short {
		case 'm':
			cfg.MessageThreads = v
		case 't':
			cfg.Workers = v
		case 'r':
			cfg.Runtime = engine.Time(v) * engine.Second
		case 's':
			cfg.SleepTime = v
		case 'c':
			cfg.CPUTime = v
		case 'a', 'p', 'R':
			return cfg, fmt.Errorf("schbench: %s is not modelled (schedlab runs the normal message/worker mode)", x.Name)
		case 'h':
			return cfg, workload.ErrHelp
		}
	}
	switch {
	case cfg.MessageThreads <= 0:
		return cfg, fmt.Errorf("schbench: -m %d: schedlab needs at least one message thread", cfg.MessageThreads)
	case cfg.Workers <= 0:
		return cfg, fmt.Errorf("schbench: -t %d: schedlab needs at least one worker per message thread", cfg.Workers)
	case cfg.Runtime <= 0:
		return cfg, fmt.Errorf("schbench: -r %d: the runtime must be at least one second", cfg.Runtime/engine.Second)
	case cfg.SleepTime < 0 || cfg.CPUTime < 0:
		return cfg, fmt.Errorf("schbench: -s and -c must not be negative")
	case cfg.MessageThreads*cfg.Workers > 1<<20:
		return cfg, fmt.Errorf("schbench: %d threads is more than schedlab simulates", cfg.MessageThreads*cfg.Workers)
	}
	return cfg, nil
}
