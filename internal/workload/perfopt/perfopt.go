// Package perfopt reads perf's command lines for the `perf bench`
// benchmarks schedlab models: the `perf bench [--format=default|simple]
// COLLECTION BENCHMARK ARGS` frame of tools/perf/builtin-bench.c, and a
// benchmark's options as tools/lib/subcmd/parse-options.c (perf 6.1)
// parses them, with its messages ("unknown switch `x'", "switch `l'
// expects a numerical value") and its numeric conversions (OPT_INTEGER's
// strtol, OPT_UINTEGER's digits only).
//
// The options themselves are found by package getopt: parse-options
// accepts the spellings getopt_long does (bundled short options, attached
// values, unambiguous prefixes of long options, non-options anywhere);
// Error rewords getopt's messages as parse-options prints them.
package perfopt

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/schedlab/schedlab/internal/workload"
	"github.com/schedlab/schedlab/internal/workload/getopt"
)

// Command is a `perf bench` command line taken apart.
type Command struct {
	// Simple is --format=simple: the benchmark prints only its figure,
	// and builtin-bench.c prints no "# Running ..." line.
	Simple bool
	// Collection and Bench name the benchmark ("sched", "pipe").
	Collection, Bench string
	// Args are the benchmark's own arguments.
	Args []string
}

// Name is "COLLECTION BENCH", as SplitBench's modelled list names it.
func (c Command) Name() string { return c.Collection + " " + c.Bench }

// SplitBench takes apart a `perf bench [--format=default|simple]
// COLLECTION BENCH ARGS` command line (the words after "perf"). modelled
// lists the benchmarks the caller runs, as "COLLECTION BENCH"; another is
// an error naming them. -h or --help after perf, perf bench or perf bench
// COLLECTION asks for the usage (workload.ErrHelp).
func SplitBench(args []string, modelled ...string) (Command, error) {
	help := func(a string) bool { return a == "-h" || a == "--help" }
	switch {
	case len(args) > 0 && help(args[0]),
		len(args) > 1 && args[0] == "bench" && help(args[1]),
		len(args) > 2 && args[0] == "bench" && help(args[2]):
		return Command{}, workload.ErrHelp
	}
	models := func() string {
		q := make([]string, len(modelled))
		for i, m := range modelled {
			q[i] = "'perf bench " + m + "'"
		}
		return strings.Join(q, " and ")
	}
	if len(args) == 0 || args[0] != "bench" {
		return Command{}, fmt.Errorf("perf: schedlab models only %s", models())
	}
	var cmd Command
	i := 1
	for i < len(args) && strings.HasPrefix(args[i], "-") {
		a := args[i]
		switch {
		case a == "--format=simple":
			cmd.Simple = true
		case a == "--format=default":
		case (a == "--format" || a == "-f") && i+1 < len(args) && (args[i+1] == "simple" || args[i+1] == "default"):
			cmd.Simple = args[i+1] == "simple"
			i++
		default:
			return Command{}, fmt.Errorf("perf bench: unknown option %q (schedlab accepts --format=default|simple)", a)
		}
		i++
	}
	if i+2 > len(args) {
		return Command{}, fmt.Errorf("perf bench: schedlab models only %s", models())
	}
	cmd.Collection, cmd.Bench, cmd.Args = args[i], args[i+1], args[i+2:]
	for _, m := range modelled {
		if cmd.Name() == m {
			return cmd, nil
		}
	}
	return Command{}, fmt.Errorf("perf bench: schedlab models only %s, not 'perf bench %s'", models(), cmd.Name())
}

// Error rewords one of getopt's messages as parse-options prints it,
// after prog ("perf bench sched pipe: unknown switch `x'"). Other errors
// are returned as they are.
func Error(prog string, err error) error {
	var ge *getopt.Error
	if !errors.As(err, &ge) {
		return err
	}
	m := ge.Msg
	between := func(prefix, suffix string) (string, bool) {
		if !strings.HasPrefix(m, prefix) || !strings.HasSuffix(m, suffix) || len(m) < len(prefix)+len(suffix) {
			return "", false
		}
		return m[len(prefix) : len(m)-len(suffix)], true
	}
	if s, ok := between("invalid option -- '", "'"); ok {
		m = "unknown switch `" + s + "'"
	} else if s, ok := between("unrecognized option '--", "'"); ok {
		m = "unknown option `" + s + "'"
	} else if s, ok := between("option requires an argument -- '", "'"); ok {
		m = "switch `" + s + "' requires a value"
	} else if s, ok := between("option '--", "' requires an argument"); ok {
		m = "option `" + s + "' requires a value"
	} else if s, ok := between("option '--", "' doesn't allow an argument"); ok {
		m = "option `" + s + "' takes no value"
	}
	return fmt.Errorf("%s: %s", prog, m)
}

// numeric is parse-options' error for a value that is not a number:
// "switch `l' ..." for -l, "option `loop' ..." for --loop.
func numeric(prog string, o getopt.Opt) error {
	if strings.HasPrefix(o.Name, "--") {
		return fmt.Errorf("%s: option `%s' expects a numerical value", prog, o.Option.Long)
	}
	return fmt.Errorf("%s: switch `%c' expects a numerical value", prog, o.Option.Short)
}

// Uint mirrors OPT_UINTEGER (parse-options.c, perf 6.1): the whole value
// must be decimal digits; values beyond 2^30 are refused here (perf's
// strtoul would wrap them), as no schedlab run could use them.
func Uint(prog string, o getopt.Opt) (int, error) {
	n := 0
	if o.Arg == "" {
		return 0, numeric(prog, o)
	}
	for i := 0; i < len(o.Arg); i++ {
		c := o.Arg[i]
		if c < '0' || c > '9' || n > 1<<30 {
			return 0, numeric(prog, o)
		}
		n = n*10 + int(c-'0')
	}
	return n, nil
}

// Int mirrors OPT_INTEGER (parse-options.c, perf 6.1): strtol(arg, &end,
// 10) must use the whole value, so leading blanks and a sign are accepted
// and an empty value is 0; the long result is then stored in an int, as
// C's conversion does on LP64: saturated at the long's range, then
// truncated to 32 bits (perf -l 99999999999 runs 1215752191 loops).
func Int(prog string, o getopt.Opt) (int, error) {
	s := strings.TrimLeft(o.Arg, " \t\n\v\f\r")
	neg := false
	if s != "" && (s[0] == '+' || s[0] == '-') {
		neg = s[0] == '-'
		s = s[1:]
	}
	if s == "" {
		if o.Arg == "" {
			return 0, nil // strtol consumed nothing and *end is the NUL
		}
		return 0, numeric(prog, o) // blanks or a sign alone: *end is not the NUL
	}
	var v uint64
	over := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, numeric(prog, o)
		}
		if v > (math.MaxUint64-9)/10 {
			over = true
			continue
		}
		v = v*10 + uint64(c-'0')
	}
	var l int64
	switch {
	case !neg && (over || v > math.MaxInt64):
		l = math.MaxInt64
	case neg && (over || v > 1<<63):
		l = math.MinInt64
	case neg:
		l = -int64(v)
	default:
		l = int64(v)
	}
	return int(int32(l)), nil
}
