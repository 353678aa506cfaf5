package cli

import (
	"fmt"
	"strings"
	"testing"

	"github.com/schedlab/schedlab/internal/engine"
	"github.com/schedlab/schedlab/internal/sched"
)

// --shard i/n: an accepted shard has 0 <= i < n and reads back from its
// own "i/n"; a refused one is one line naming the flag and the value.
// (Fast: -fuzztime 15s is plenty.)
func FuzzParseShard(f *testing.F) {
	for _, s := range []string{"", "0/1", "3/4", "4/4", "-1/4", "1/0", "x/2", "1/2/3", "+1/2", " 1/2", "01/02", "9223372036854775807/9223372036854775807"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		i, n, err := parseShard(s)
		if err != nil {
			if msg := err.Error(); strings.Contains(msg, "\n") || !strings.HasPrefix(msg, fmt.Sprintf("--shard %q: ", s)) {
				t.Fatalf("%q: error %q", s, msg)
			}
			return
		}
		if i < 0 || n < 1 || i >= n {
			t.Fatalf("%q: accepted shard %d of %d", s, i, n)
		}
		if s == "" {
			return // no --shard: the whole sweep
		}
		if i2, n2, err := parseShard(fmt.Sprintf("%d/%d", i, n)); err != nil || i2 != i || n2 != n {
			t.Fatalf("%q is %d/%d, which reads back as %d/%d (%v)", s, i, n, i2, n2, err)
		}
	})
}

// --trace-from and --trace-to: an accepted window is non-empty, on the
// trace clock (simulated time + sched.ClockBase), and reads back from the
// durations engine.Time prints; a refused one is one line naming the flag.
// (Fast: -fuzztime 15s is plenty.)
func FuzzTraceWindow(f *testing.F) {
	for _, w := range [][2]string{{"", ""}, {"10ms", "20ms"}, {"20ms", "10ms"}, {"", "0"}, {"1.5s", ""}, {"x", "1s"}, {"1s", "1000000000ns"}, {"0.5us", "501ns"}} {
		f.Add(w[0], w[1])
	}
	f.Fuzz(func(t *testing.T, from, to string) {
		fr, tt, err := parseTraceWindow(from, to)
		if err != nil {
			if msg := err.Error(); strings.Contains(msg, "\n") || !strings.HasPrefix(msg, "--trace-from") && !strings.HasPrefix(msg, "--trace-to") {
				t.Fatalf("%q %q: error %q", from, to, msg)
			}
			return
		}
		if from != "" && fr < sched.ClockBase || from == "" && fr != 0 || to == "" && tt != 0 || to != "" && tt <= fr {
			t.Fatalf("%q %q: window [%d, %d)", from, to, fr, tt)
		}
		str := func(v uint64, given string) string {
			if given == "" {
				return ""
			}
			return engine.Time(v - sched.ClockBase).String()
		}
		f2, t2, err := parseTraceWindow(str(fr, from), str(tt, to))
		if err != nil || f2 != fr || t2 != tt {
			t.Fatalf("%q %q is [%d, %d), which reads back as [%d, %d) (%v)", from, to, fr, tt, f2, t2, err)
		}
	})
}

func TestTraceWindow(t *testing.T) {
	if f, to, err := parseTraceWindow("10ms", "20ms"); err != nil || f != sched.ClockBase+10e6 || to != sched.ClockBase+20e6 {
		t.Errorf("[%d, %d) %v", f, to, err)
	}
	for _, tc := range []struct{ from, to, want string }{
		{"20ms", "10ms", "--trace-to 10ms: the window must end after it starts (--trace-from 20ms)"},
		{"", "0s", "--trace-to 0s: the window must end after it starts (--trace-from 0)"},
		{"10 ms", "", `--trace-from: bad duration "10 ms" `},
		{"", "1.5", `--trace-to: bad duration "1.5" (a number and a unit: ns, us, ms, s; e.g. 1.5ms)`},
	} {
		if _, _, err := parseTraceWindow(tc.from, tc.to); err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%q %q: %v, want %q", tc.from, tc.to, err, tc.want)
		}
	}
	_, stderr, code := run("run", "--machine", "hikey", "--trace", t.TempDir()+"/t.txt", "--trace-from", "20ms", "--trace-to", "10ms", "hackbench")
	if code != 2 || stderr != "schedlab: --trace-to 10ms: the window must end after it starts (--trace-from 20ms)\n" {
		t.Errorf("exit %d, %q", code, stderr)
	}
}
