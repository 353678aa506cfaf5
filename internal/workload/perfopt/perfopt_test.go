package perfopt

import (
	"errors"
	"math"
	"math/big"
	"strings"
	"testing"

	"github.com/schedlab/schedlab/internal/workload"
	"github.com/schedlab/schedlab/internal/workload/getopt"
)

var loop = getopt.Option{Short: 'l', Long: "loop", HasArg: true}

func short(arg string) getopt.Opt { return getopt.Opt{Option: &loop, Arg: arg, Name: "-l"} }

// Reference: tools/lib/subcmd/parse-options.c:get_value (perf 6.1),
// OPT_INTEGER: *(int *)value = strtol(arg, &s, 10); if (*s) "expects a
// numerical value". Checked against perf 6.1's `perf bench sched pipe -l
// X`: ' 5' runs 5 loops, '5x' and ” differ (the first is refused, the
// second runs 0), -5 runs -5.
func TestInt(t *testing.T) {
	for _, c := range []struct {
		arg  string
		want int
		ok   bool
	}{
		{"1000", 1000, true},
		{" 5", 5, true},
		{"+7", 7, true},
		{"-5", -5, true},
		{"", 0, true},
		{"0", 0, true},
		{"2147483647", math.MaxInt32, true},
		{"2147483648", math.MinInt32, true},   // (int)2147483648L
		{"99999999999", 1215752191, true},     // 99999999999 mod 2^32
		{"99999999999999999999999", -1, true}, // strtol saturates at LONG_MAX, whose low 32 bits are -1
		{"-99999999999999999999999", 0, true}, // LONG_MIN's low 32 bits
		{"5x", 0, false},
		{"5 ", 0, false},
		{" ", 0, false},
		{"-", 0, false},
		{"0x10", 0, false},
		{"1e3", 0, false},
	} {
		got, err := Int("perf bench sched pipe", short(c.arg))
		switch {
		case c.ok && (err != nil || got != c.want):
			t.Errorf("Int(%q) = %d, %v; want %d", c.arg, got, err, c.want)
		case !c.ok && (err == nil || err.Error() != "perf bench sched pipe: switch `l' expects a numerical value"):
			t.Errorf("Int(%q) = %d, %v; want perf's numerical-value error", c.arg, got, err)
		}
	}
	long := getopt.Opt{Option: &loop, Arg: "x", Name: "--loop"}
	if _, err := Int("perf bench sched pipe", long); err == nil || err.Error() != "perf bench sched pipe: option `loop' expects a numerical value" {
		t.Errorf("--loop x: %v", err)
	}
}

// FuzzInt checks Int against an oracle written from C's definitions with
// big integers: strtol's accepted prefix, its saturation at the range of
// a 64-bit long, and the conversion to a 32-bit int modulo 2^32.
func FuzzInt(f *testing.F) {
	for _, s := range []string{"1000", " -5", "", "+", "99999999999", "12a", "-9223372036854775809"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := Int("p", short(s))
		body := strings.TrimLeft(s, " \t\n\v\f\r")
		sign := 1
		if body != "" && (body[0] == '+' || body[0] == '-') {
			if body[0] == '-' {
				sign = -1
			}
			body = body[1:]
		}
		digits := body != "" && strings.Trim(body, "0123456789") == ""
		switch {
		case s == "":
			if err != nil || got != 0 {
				t.Fatalf("Int(%q) = %d, %v; want 0", s, got, err)
			}
			return
		case !digits:
			if err == nil {
				t.Fatalf("Int(%q) = %d accepted", s, got)
			}
			return
		case err != nil:
			t.Fatalf("Int(%q): %v", s, err)
		}
		v, _ := new(big.Int).SetString(body, 10)
		v.Mul(v, big.NewInt(int64(sign)))
		if v.Cmp(big.NewInt(math.MaxInt64)) > 0 {
			v.SetInt64(math.MaxInt64)
		}
		if v.Cmp(big.NewInt(math.MinInt64)) < 0 {
			v.SetInt64(math.MinInt64)
		}
		if want := int(int32(v.Int64())); got != want {
			t.Fatalf("Int(%q) = %d, want %d", s, got, want)
		}
	})
}

// Reference: parse-options.c, OPT_UINTEGER: digits only.
func TestUint(t *testing.T) {
	for arg, want := range map[string]int{"0": 0, "100": 100, "007": 7} {
		if got, err := Uint("p", short(arg)); err != nil || got != want {
			t.Errorf("Uint(%q) = %d, %v", arg, got, err)
		}
	}
	for _, arg := range []string{"", "-1", "+1", " 1", "1x", "99999999999"} {
		if got, err := Uint("p", short(arg)); err == nil {
			t.Errorf("Uint(%q) = %d accepted", arg, got)
		}
	}
}

// Each getopt message becomes the one perf 6.1 prints for the same
// command line (captured from `perf bench sched pipe ARGS`).
func TestError(t *testing.T) {
	opts := []getopt.Option{loop, {Short: 'T', Long: "threaded"}}
	for args, want := range map[string]string{
		"-x":           "unknown switch `x'",
		"--foo":        "unknown option `foo'",
		"-l":           "switch `l' requires a value",
		"--loop":       "option `loop' requires a value",
		"--threaded=1": "option `threaded' takes no value",
	} {
		_, _, err := getopt.Parse("p", opts, strings.Fields(args))
		if err == nil {
			t.Fatalf("%s: no getopt error", args)
		}
		if got := Error("perf bench sched pipe", err); got.Error() != "perf bench sched pipe: "+want {
			t.Errorf("%s: %q, want %q", args, got, want)
		}
	}
	other := errors.New("not getopt's")
	if Error("p", other) != other {
		t.Error("Error changed an error that is not getopt's")
	}
}

// Reference: tools/perf/builtin-bench.c: `perf bench [--format=...]
// COLLECTION BENCH ARGS`.
func TestSplitBench(t *testing.T) {
	models := []string{"sched messaging", "sched pipe"}
	for _, c := range []struct {
		args string
		want Command
		err  string
	}{
		{"bench sched pipe -l 10", Command{Collection: "sched", Bench: "pipe", Args: []string{"-l", "10"}}, ""},
		{"bench --format=simple sched messaging", Command{Simple: true, Collection: "sched", Bench: "messaging", Args: []string{}}, ""},
		{"bench -f simple sched pipe -T", Command{Simple: true, Collection: "sched", Bench: "pipe", Args: []string{"-T"}}, ""},
		{"bench --format default sched pipe", Command{Collection: "sched", Bench: "pipe", Args: []string{}}, ""},
		{"record ls", Command{}, "perf: schedlab models only 'perf bench sched messaging' and 'perf bench sched pipe'"},
		{"bench sched", Command{}, "perf bench: schedlab models only 'perf bench sched messaging' and 'perf bench sched pipe'"},
		{"bench mem memcpy", Command{}, "perf bench: schedlab models only 'perf bench sched messaging' and 'perf bench sched pipe', not 'perf bench mem memcpy'"},
		{"bench --repeat 3 sched pipe", Command{}, `perf bench: unknown option "--repeat" (schedlab accepts --format=default|simple)`},
	} {
		got, err := SplitBench(strings.Fields(c.args), models...)
		switch {
		case c.err != "":
			if err == nil || err.Error() != c.err {
				t.Errorf("%q: %v, want %q", c.args, err, c.err)
			}
		case err != nil:
			t.Errorf("%q: %v", c.args, err)
		case got.Simple != c.want.Simple || got.Name() != c.want.Name() || strings.Join(got.Args, " ") != strings.Join(c.want.Args, " "):
			t.Errorf("%q: %+v, want %+v", c.args, got, c.want)
		}
	}
	for _, h := range []string{"-h", "bench -h", "bench sched --help"} {
		if _, err := SplitBench(strings.Fields(h), models...); !errors.Is(err, workload.ErrHelp) {
			t.Errorf("%q: %v, want the usage", h, err)
		}
	}
}
