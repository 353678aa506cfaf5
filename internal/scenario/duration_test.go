package scenario

import (
	"strconv"
	"strings"
	"testing"

	"github.com/schedlab/schedlab/internal/engine"
)

func TestParseDuration(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want engine.Time
	}{
		{"8ms", 8 * engine.Millisecond},
		{"1.5s", 1500 * engine.Millisecond},
		{"250us", 250 * engine.Microsecond},
		{"3µs", 3 * engine.Microsecond},
		{"100ns", 100},
		{"100", 100},
		{"0.5ns", 1}, // to the nearest ns, halves up
		{"0.4999ns", 0},
		{".25ms", 250 * engine.Microsecond},
		{"2.ms", 2 * engine.Millisecond},
		{"1.0000000015s", 1000000002},
		{"12345678.987654321s", 12345678987654321},
		{"1000000000s", 1e18},
	} {
		if got, err := ParseDuration(tc.in); err != nil || got != tc.want {
			t.Errorf("%q: %v %v, want %v", tc.in, int64(got), err, int64(tc.want))
		}
	}
	for _, in := range []string{"", "s", "ms", ".s", "-1s", "1.5", "1e3ms", "inf s", "NaNs", "1,5s", "1 s", "0x10ms", "1000000000.000000001s", "1000000001s", "99999999999999999999ns", "1.5h"} {
		_, err := ParseDuration(in)
		if err == nil || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), strconv.Quote(in)) {
			t.Errorf("%q: %v", in, err)
		}
	}
}

// Every duration ParseDuration accepts reads back exactly from what
// engine.Time prints ("1.500000000s") and from its count of ns; errors are
// one line naming the input. (Fast: -fuzztime 15s is plenty.)
func FuzzParseDuration(f *testing.F) {
	for _, s := range []string{"8ms", "1.5s", "250us", "3µs", "100ns", "100", "0.0000000005s", ".5ms", "1e3ms", "-0s", "+2s", "9223372036854775807", "1000000000s"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseDuration(s)
		if err != nil {
			if msg := err.Error(); strings.Contains(msg, "\n") || !strings.Contains(msg, strconv.Quote(s)) {
				t.Fatalf("%q: error %q is not one line naming the input", s, msg)
			}
			return
		}
		if d < 0 || d > MaxDuration {
			t.Fatalf("%q: accepted %d", s, int64(d))
		}
		for _, w := range []string{d.String(), strconv.FormatInt(int64(d), 10) + "ns", strconv.FormatInt(int64(d), 10)} {
			if back, err := ParseDuration(w); err != nil || back != d {
				t.Fatalf("%q is %d ns, but %q reads back as %d (%v)", s, int64(d), w, int64(back), err)
			}
		}
	})
}
