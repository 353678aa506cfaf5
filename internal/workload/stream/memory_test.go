package stream_test

import (
	"math"
	"testing"

	"github.com/schedlab/schedlab/internal/costmodel"
	"github.com/schedlab/schedlab/internal/sim"
	"github.com/schedlab/schedlab/internal/topology"
)

func rates(t *testing.T, machine string, extra ...string) map[string]float64 {
	t.Helper()
	args := append([]string{"STREAM_ARRAY_SIZE=16000000", "NTIMES=3", "OMP_NUM_THREADS=16"}, extra...)
	res, err := sim.Run(sim.Config{Machine: machine, Seed: 1, Tool: "stream", Args: args}, sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, m := range res.Metrics {
		out[m.Name] = m.Value
	}
	return out
}

// Write-allocate: at one memory rate R, a kernel that stores through the
// cache moves one more word per element than STREAM counts, so the
// reported rates are R·counted/moved: with the default stores (Copy a
// non-temporal memcpy) Copy R, Scale 2/3 R, Add and Triad 3/4 R; with
// SCHEDLAB_STORES=nt all four are R; with =allocate Copy and Scale are
// 2/3 R and Add and Triad 3/4 R. On zen3-2s-nps1 the 16 threads (one per
// CCX, 8 per socket: TestForkPlacement) are bound by their cores'
// mem_bw_core_gbps (18 GB/s, fitted: 8 × 18 = 144 < the socket's 170),
// so R = 16 × mem_bw_core_gbps = 288,000 MB/s.
func TestWriteAllocate(t *testing.T) {
	core := coreGbps(t, "zen3-2s-nps1")
	if 8*core >= 170 {
		t.Fatalf("mem_bw_core_gbps %v: 8 cores no longer below the socket's 170 GB/s; the derivation below does not hold", core)
	}
	r := 16 * core * 1000.0 // MB/s
	for _, tc := range []struct {
		stores string
		want   [4]float64 // copy, scale, add, triad, as fractions of R
	}{
		{"", [4]float64{1, 2.0 / 3, 3.0 / 4, 3.0 / 4}},
		{"SCHEDLAB_STORES=nt", [4]float64{1, 1, 1, 1}},
		{"SCHEDLAB_STORES=allocate", [4]float64{2.0 / 3, 2.0 / 3, 3.0 / 4, 3.0 / 4}},
	} {
		var extra []string
		if tc.stores != "" {
			extra = append(extra, tc.stores)
		}
		got := rates(t, "zen3-2s-nps1", extra...)
		for i, name := range []string{"copy_mb_s", "scale_mb_s", "add_mb_s", "triad_mb_s"} {
			want := r * tc.want[i]
			// The spin-then-sleep barrier and the first touch cost a
			// little of each timed region: within 0.5%.
			if math.Abs(got[name]/want-1) > 0.005 {
				t.Errorf("%q %s: %.1f MB/s, want %.1f", tc.stores, name, got[name], want)
			}
		}
	}
}

// NPS1 and NPS4 differ as the memory model derives them: in NPS4 each of
// the 8 nodes holds 2 of the threads (first touch, local) and delivers
// mem_bw_node_gbps 42.5 GB/s, less than their cores' 2 × 28, so Triad is
// 8 × 42.5 × 3/4 = 255,000 MB/s; NPS1's cores (mem_bw_core_gbps, 18
// GB/s: interleaved memory, farther on average) bound it at 16 × 18 × 3/4
// = 216,000 MB/s.
func TestNPSMemory(t *testing.T) {
	n1, n4 := rates(t, "zen3-2s-nps1"), rates(t, "zen3-2s-nps4")
	for _, c := range []struct {
		name string
		got  float64
		want float64
	}{{"nps1", n1["triad_mb_s"], 16 * coreGbps(t, "zen3-2s-nps1") * 1000 * 3 / 4}, {"nps4", n4["triad_mb_s"], 255000}} {
		if math.Abs(c.got/c.want-1) > 0.005 {
			t.Errorf("%s Triad %.1f MB/s, want %.1f", c.name, c.got, c.want)
		}
	}
	if n4["triad_mb_s"] <= n1["triad_mb_s"]*1.03 {
		t.Errorf("NPS4 Triad %.1f is not above NPS1's %.1f", n4["triad_mb_s"], n1["triad_mb_s"])
	}
}

// coreGbps is a preset's mem_bw_core_gbps, the per-core memory rate the
// derivations above start from (a fitted value: docs/costs.md).
func coreGbps(t *testing.T, preset string) float64 {
	t.Helper()
	spec, ok := topology.Preset(preset)
	if !ok {
		t.Fatalf("no preset %s", preset)
	}
	ps, err := costmodel.For(spec)
	if err != nil {
		t.Fatal(err)
	}
	return ps.Get("mem_bw_core_gbps")
}
