package hackbench

import (
	"fmt"
	"strings"

	"github.com/schedlab/schedlab/internal/workload"
	"github.com/schedlab/schedlab/internal/workload/getopt"
	"github.com/schedlab/schedlab/internal/workload/perfopt"
)

// UsageRTTests is what rt-tests hackbench 2.4 prints for -h (captured from
// Debian's rt-tests 2.4-1).
const UsageRTTests = `hackbench V 2.40
Usage:
hackbench <options>

-f       --fds=NUM         number of fds
-F       --fifo            use SCHED_FIFO for main thread
-g       --groups=NUM      number of groups to be used
-h       --help            print this message
-l       --loops=LOOPS     how many message should be send
-p       --pipe            send data via a pipe
-i       --inet            send data via a inet tcp connection
-s       --datasize=SIZE   message size
-T       --threads         use POSIX threads
-P       --process         use fork (default)
`

// UsagePerf is what perf 6.1 prints for `perf bench sched messaging -h`.
const UsagePerf = `
 Usage: perf bench sched messaging <options>

    -g, --group <n>       Specify number of groups
    -l, --nr_loops <n>    Specify the number of loops to run (default: 100)
    -p, --pipe            Use pipe() instead of socketpair()
    -t, --thread          Be multi thread instead of multi process

`

var rtOpts = []getopt.Option{
	{Short: 'f', Long: "fds", HasArg: true},
	{Short: 'F', Long: "fifo"},
	{Short: 'g', Long: "groups", HasArg: true},
	{Short: 'h', Long: "help"},
	{Short: 'l', Long: "loops", HasArg: true},
	{Short: 'p', Long: "pipe"},
	{Short: 'i', Long: "inet"},
	{Short: 's', Long: "datasize", HasArg: true},
	{Short: 'T', Long: "threads"},
	{Short: 'P', Long: "processes"}, // the usage text says --process; the option table says processes
}

// atoi mirrors C's atoi: leading blanks, an optional sign and the leading
// digits; anything else gives 0.
func atoi(s string) int {
	s = strings.TrimLeft(s, " \t\n\v\f\r")
	neg := false
	if s != "" && (s[0] == '+' || s[0] == '-') {
		neg = s[0] == '-'
		s = s[1:]
	}
	n := 0
	for i := 0; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
		n = n*10 + int(s[i]-'0')
		if n > 1<<31-1 {
			n = 1<<31 - 1 // C's atoi is undefined here; clamp
		}
	}
	if neg {
		return -n
	}
	return n
}

// ParseRTTests parses rt-tests hackbench's arguments. -i (TCP over
// loopback) is modelled as a socket channel with the TCP costs; -F
// (SCHED_FIFO parent) is refused because schedlab models only the fair
// class.
func ParseRTTests(args []string) (Config, error) {
	cfg := DefaultConfig()
	cfg.Flavour = RTTests
	opts, _, err := getopt.Parse("hackbench", rtOpts, args)
	if err != nil {
		return cfg, err
	}
	inet := false
	positive := func(o getopt.Opt, name string, dst *int) error {
		v := atoi(o.Arg)
		if v <= 0 {
			return fmt.Errorf("hackbench: --%s|-%c requires an integer > 0", name, o.Option.Short)
		}
		*dst = v
		return nil
	}
	for _, o := range opts {
		var err error
		switch o.Option.Short {
		case 'f':
			err = positive(o, "fds", &cfg.Fds)
		case 'g':
			err = positive(o, "groups", &cfg.Groups)
		case 'l':
			err = positive(o, "loops", &cfg.Loops)
		case 's':
			err = positive(o, "datasize", &cfg.DataSize)
		case 'p':
			cfg.Pipe = true
		case 'i':
			inet = true
		case 'T':
			cfg.Threads = true
		case 'P':
			cfg.Threads = false
		case 'F':
			err = fmt.Errorf("hackbench: %s (a SCHED_FIFO parent) is not modelled: schedlab simulates the fair class only", o.Name)
		case 'h':
			return cfg, workload.ErrHelp
		}
		if err != nil {
			return cfg, err
		}
	}
	if inet && cfg.Pipe {
		return cfg, fmt.Errorf("hackbench: --pipe|-p and --inet|-i cannot be used together")
	}
	cfg.Inet = inet
	if int64(cfg.Groups)*int64(cfg.Fds) > 1<<20 {
		return cfg, fmt.Errorf("hackbench: %d groups of %d fds is more tasks than schedlab simulates (2^21)", cfg.Groups, cfg.Fds)
	}
	return cfg, nil
}

var perfOpts = []getopt.Option{
	{Short: 'g', Long: "group", HasArg: true},
	{Short: 'l', Long: "nr_loops", HasArg: true},
	{Short: 'p', Long: "pipe"},
	{Short: 't', Long: "thread"},
	{Short: 'h', Long: "help"},
}

// ParsePerf parses `perf bench sched messaging` arguments (perf 6.1:
// -g/--group, -l/--nr_loops, -p/--pipe, -t/--thread; 20 fds and 100-byte
// messages are fixed).
func ParsePerf(args []string) (Config, error) {
	cfg := DefaultConfig()
	cfg.Flavour = PerfBench
	const prog = "perf bench sched messaging"
	opts, _, err := getopt.Parse(prog, perfOpts, args)
	if err != nil {
		return cfg, perfopt.Error(prog, err)
	}
	for _, o := range opts {
		switch o.Option.Short {
		case 'g':
			if cfg.Groups, err = perfopt.Uint(prog, o); err != nil {
				return cfg, err
			}
		case 'l':
			if cfg.Loops, err = perfopt.Uint(prog, o); err != nil {
				return cfg, err
			}
		case 'p':
			cfg.Pipe = true
		case 't':
			cfg.Threads = true
		case 'h':
			return cfg, workload.ErrHelp
		}
	}
	if int64(cfg.Groups)*int64(cfg.Fds) > 1<<20 {
		return cfg, fmt.Errorf("perf bench sched messaging: %d groups is more tasks than schedlab simulates", cfg.Groups)
	}
	return cfg, nil
}

// ParsePerfCommand parses a whole `perf bench [--format=default|simple]
// sched messaging ARGS` command line (after "perf").
func ParsePerfCommand(args []string) (Config, error) {
	cmd, err := perfopt.SplitBench(args, "sched messaging")
	if err != nil {
		return Config{}, err
	}
	return ParsePerfBench(cmd)
}

// ParsePerfBench parses the arguments of a `perf bench sched messaging`
// command that perfopt.SplitBench took apart.
func ParsePerfBench(cmd perfopt.Command) (Config, error) {
	if cmd.Name() != "sched messaging" {
		return Config{}, fmt.Errorf("perf bench %s is not perf bench sched messaging", cmd.Name())
	}
	cfg, err := ParsePerf(cmd.Args)
	cfg.Simple = cmd.Simple
	return cfg, err
}
