package stream

import (
	"math"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	c, err := Parse([]string{"STREAM_ARRAY_SIZE=22369621", "NTIMES=5", "OMP_NUM_THREADS=16"})
	if err != nil || c.ArraySize != 22369621 || c.NTimes != 5 || c.Threads != 16 || c.Stores != StoresAuto {
		t.Fatalf("%+v %v", c, err)
	}
	for name, want := range map[string]Stores{"auto": StoresAuto, "nt": StoresNT, "allocate": StoresAllocate} {
		if c, err := Parse([]string{"SCHEDLAB_STORES=" + name}); err != nil || c.Stores != want {
			t.Errorf("SCHEDLAB_STORES=%s: %v %v", name, c.Stores, err)
		}
	}
	for _, a := range []string{"NTIMES=1", "FOO=1", "OMP_NUM_THREADS=x", "-n 5", "SCHEDLAB_STORES=fast", "SCHEDLAB_STORES="} {
		if _, err := Parse(strings.Fields(a)); err == nil || !strings.HasPrefix(err.Error(), "stream: ") {
			t.Errorf("%q: %v", a, err)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add("STREAM_ARRAY_SIZE=100 NTIMES=2")
	f.Fuzz(func(t *testing.T, s string) {
		c, err := Parse(strings.Fields(s))
		if err == nil && (c.ArraySize < 1 || c.NTimes < 2 || c.Threads < 0) {
			t.Fatalf("accepted %+v", c)
		}
	})
}

// Metrics names the four rates before the run too (the fidelity corpus
// checks a case's metric name up front), with NaN values: nothing was
// measured yet.
func TestMetricsBeforeRun(t *testing.T) {
	cfg, err := Parse(nil)
	if err != nil {
		t.Fatal(err)
	}
	m := New(cfg).Metrics()
	if len(m) != 4 || m[3].Name != "triad_mb_s" || !math.IsNaN(m[3].Value) {
		t.Fatalf("metrics before a run: %+v", m)
	}
}
