package tbench

import (
	"fmt"
	"strconv"

	"github.com/schedlab/schedlab/internal/workload"
	"github.com/schedlab/schedlab/internal/workload/getopt"
)

// Usage is dbench 4.00's help text as `tbench --help` prints it.
const Usage = `dbench version 4.00 - Copyright Andrew Tridgell 1999-2004

Usage: [OPTION...]
  -t, --timelimit=integer           timelimit
  -c, --loadfile=filename           loadfile
  -D, --directory=STRING            working directory
  -T, --tcp-options=STRING          TCP socket options
  -R, --target-rate=DOUBLE          target throughput (MB/sec)
  -s, --sync                        use O_SYNC
  -S, --sync-dir                    sync directory changes
  -F, --fsync                       fsync on write
  -x, --xattr                       use xattrs
      --no-resolve                  disable name resolution simulation
      --clients-per-process=INT     number of clients per process
      --one-byte-write-fix          try to fix 1 byte writes
      --stat-check                  check for pointless calls with stat
      --fake-io                     fake up read/write calls
      --skip-cleanup                skip cleanup operations
      --per-client-results          show results per client

Help options:
  -?, --help                        Show this help message
      --usage                       Display brief usage message
`

var opts = []getopt.Option{
	{Short: 't', Long: "timelimit", HasArg: true},
	{Short: 'c', Long: "loadfile", HasArg: true},
	{Short: 'D', Long: "directory", HasArg: true},
	{Short: 'T', Long: "tcp-options", HasArg: true},
	{Short: 'R', Long: "target-rate", HasArg: true},
	{Short: 's', Long: "sync"},
	{Short: 'S', Long: "sync-dir"},
	{Short: 'F', Long: "fsync"},
	{Short: 'x', Long: "xattr"},
	{Long: "no-resolve"},
	{Long: "clients-per-process", HasArg: true},
	{Long: "one-byte-write-fix"},
	{Long: "stat-check"},
	{Long: "fake-io"},
	{Long: "skip-cleanup"},
	{Long: "per-client-results"},
	{Short: '?', Long: "help"},
	{Long: "usage"},
	// popt's help is -?; schedlab takes -h too, as for every tool
	// (docs/workloads.md).
	{Short: 'h'},
}

// Parse parses `tbench [OPTIONS] NPROCS [SERVER]`. Only the options that
// change the network exchange are modelled: -t; -c with the default
// loadfile; -D, -T and --no-resolve are accepted and have no effect here.
func Parse(args []string) (Config, error) {
	cfg := DefaultConfig()
	o, rest, err := getopt.Parse("tbench", opts, args)
	if err != nil {
		return cfg, err
	}
	for _, x := range o {
		switch {
		case x.Option.Short == 't':
			n, err := strconv.Atoi(x.Arg)
			if err != nil || n <= 0 || n > 1<<20 {
				return cfg, fmt.Errorf("tbench: %s %q: the time limit must be a positive number of seconds", x.Name, x.Arg)
			}
			cfg.TimeLimit = n
		case x.Option.Short == 'c':
			if x.Arg != Loadfile {
				return cfg, fmt.Errorf("tbench: %s %s: only the default loadfile (%s) is modelled", x.Name, x.Arg, Loadfile)
			}
		case x.Option.Short == 'D', x.Option.Short == 'T', x.Option.Long == "no-resolve":
		case x.Option.Short == '?', x.Option.Short == 'h', x.Option.Long == "usage":
			return cfg, workload.ErrHelp
		default:
			return cfg, fmt.Errorf("tbench: %s is not modelled", x.Name)
		}
	}
	if len(rest) == 0 {
		return cfg, fmt.Errorf("tbench: the number of clients is required (tbench [OPTIONS] NPROCS [SERVER])")
	}
	if len(rest) > 2 {
		return cfg, fmt.Errorf("tbench: unexpected argument %q", rest[2])
	}
	n, err := strconv.Atoi(rest[0])
	if err != nil || n <= 0 || n > 1<<19 {
		return cfg, fmt.Errorf("tbench: %q is not a number of clients", rest[0])
	}
	cfg.Clients = n
	if len(rest) == 2 {
		cfg.Server = rest[1]
	}
	// dbench 4.00: the warmup is a fifth of the time limit.
	cfg.Warmup = cfg.TimeLimit / 5
	return cfg, nil
}
