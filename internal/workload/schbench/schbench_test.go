package schbench

import (
	"strings"
	"testing"

	"github.com/schedlab/schedlab/internal/engine"
)

// Reference: schbench.c plat_val_to_idx / plat_idx_to_val (fio): exact
// below 512, then 256 buckets per power of two reporting their midpoint.
func TestHistogram(t *testing.T) {
	for _, c := range []struct{ val, idx, back uint32 }{
		{0, 0, 0}, {1, 1, 1}, {511, 511, 511}, {512, 512, 513}, {1000, 756, 1001}, {30000, 2004, 29984},
	} {
		if i := platValToIdx(c.val); i != c.idx || platIdxToVal(i) != c.back {
			t.Errorf("%d: idx %d val %d, want %d %d", c.val, i, platIdxToVal(i), c.idx, c.back)
		}
	}
	var s Stats
	for v := uint32(1); v <= 100; v++ {
		s.Add(v)
	}
	p := s.Percentiles(plist)
	if p[0] != 50 || p[4] != 99 || p[6] != 100 || s.Min != 0 || s.Max != 100 {
		t.Fatalf("percentiles %v min %d max %d", p, s.Min, s.Max)
	}
}

func TestParse(t *testing.T) {
	c, err := Parse([]string{"-m", "4", "-t", "8", "-r", "5", "-s", "1000", "-c", "2000"})
	if err != nil || c.MessageThreads != 4 || c.Workers != 8 || c.Runtime != 5*engine.Second || c.SleepTime != 1000 || c.CPUTime != 2000 {
		t.Fatalf("%+v %v", c, err)
	}
	for _, a := range []string{"-a", "-p 100", "-R 10", "-x", "extra", "-m 0"} {
		if _, err := Parse(strings.Fields(a)); err == nil || !strings.HasPrefix(err.Error(), "schbench: ") {
			t.Errorf("%q: %v", a, err)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add("-m 2 -t 16 -r 30")
	f.Add("--message-threads=1 -c0 -s 9")
	f.Fuzz(func(t *testing.T, s string) {
		c, err := Parse(strings.Fields(s))
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("multi-line error %q", err)
			}
			return
		}
		if c.MessageThreads <= 0 || c.Workers <= 0 || c.Runtime <= 0 || c.SleepTime < 0 || c.CPUTime < 0 {
			t.Fatalf("accepted %+v", c)
		}
	})
}
