package sched

import (
	"github.com/schedlab/schedlab/internal/kernels"
	"testing"

	"github.com/schedlab/schedlab/internal/engine"
)

// Wakeup-path tests whose expectations follow from fair.c's rules at the
// cases where a constant matters: WA_BIAS's half imbalance_pct, and
// SIS_UTIL's early exit ahead of the idle-core scan.

// TestWakeAffineWeightBiasMargin: wake_affine_weight with WA_BIAS compares
// (load(this) + task) × 100 with (load(prev) − task) × (100 +
// (imbalance_pct − 100)/2); on the zen3's PKG domain imbalance_pct is 117
// (sd_init's default, kept by PKG), so the bias is 108: the waker's CPU
// may be up to 8 % heavier than prev and still take the wakee, not the 17 %
// the full imbalance_pct would allow.
//
// CPU loads are cpu_load = cfs.avg.load_avg; a CPU's always-runnable hogs
// contribute their full weights (a task starts with load_avg = its weight,
// and a task that never leaves the runqueue keeps it, less PELT's
// truncation), so load(cpu) ≈ Σ weights. The wakee is nice 19 (weight 15),
// blocked most of the time: task_h_load(p) ≤ 15. Capacities are equal.
//
//   - inside the margin: this = nice 0 + nice 6 = 1024 + 272 = 1296, prev =
//     nice -1 = 1277: (1296 + tl)/(1277 − tl) ≤ 1311/1262 = 1.039 < 1.08:
//     affine (this_cpu). Without WA_BIAS the same loads compare unscaled,
//     1296 > 1277: prev.
//   - between 108 and 117: this = nice 0 + nice 4 = 1024 + 423 = 1447,
//     prev = nice -1 + nice 19 = 1277 + 15 = 1292: the ratio lies in
//     [1447/1292, 1462/1277] = [1.120, 1.145]: above 1.08, so prev (none);
//     a bias of the full 117 would have taken this_cpu.
//
// Reference: fair.c:wake_affine_weight, sd_init (v6.19).
func TestWakeAffineWeightBiasMargin(t *testing.T) {
	for _, tc := range []struct {
		name      string
		this      []int // nice values of the hogs on CPU 0
		prev      []int // on CPU 8
		noBias    bool
		wantAffin bool
	}{
		{"inside the 108/100 margin", []int{0, 6}, []int{-1}, false, true},
		{"inside the margin, NO_WA_BIAS", []int{0, 6}, []int{-1}, true, false},
		{"between 108 and 117", []int{0, 4}, []int{-1, 19}, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, "zen3-2s-nps1", kernels.V619)
			r.k.S.WABias = !tc.noBias
			sum := func(nices []int, cpu int) uint64 {
				var w uint64
				for _, n := range nices {
					r.spawn("hog", cpu, n, SchedNormal, loop(engine.Second, 0))
					w += schedPrioToWeight[n+20]
				}
				return w
			}
			wThis, wPrev := sum(tc.this, 0), sum(tc.prev, 8)
			p := r.spawn("p", 9, 19, SchedNormal, runThenBlock(100*engine.Microsecond))
			r.run(50 * engine.Millisecond)
			k := r.on(0)
			sd := k.Domains(0)[2]
			if sd.T.ImbalancePct != 117 || !sd.T.Span.Test(8) {
				t.Fatalf("setup: domain %s imbalance_pct %d", sd.T.Name, sd.T.ImbalancePct)
			}
			l0, l8, tl := cpuLoad(k.Rqs[0]), cpuLoad(k.Rqs[8]), k.taskHLoad(p)
			if l0 > wThis || l0+4 < wThis || l8 > wPrev || l8+4 < wPrev || tl > 15 || k.capacityOf(0) != k.capacityOf(8) {
				t.Fatalf("setup: load(0)=%d (weights %d), load(8)=%d (weights %d), h_load(p)=%d, capacities %d, %d",
					l0, wThis, l8, wPrev, tl, k.capacityOf(0), k.capacityOf(8))
			}
			t.Logf("load(0)=%d (weights %d), load(8)=%d (weights %d), task_h_load(p)=%d", l0, wThis, l8, wPrev, tl)
			want := none
			if tc.wantAffin {
				want = 0
			}
			if got := k.wakeAffineWeight(sd, p, 0, 8, false); got != want {
				t.Errorf("wake_affine_weight = %v, want %v (load 0: %d, load 8: %d, task: %d)", got, want, l0, l8, tl)
			}
		})
	}
}

// TestSelectIdleCPUSISUtil: SIS_UTIL bounds select_idle_cpu by the LLC's
// nr_idle_scan, and nr_idle_scan = 0 (an LLC the last periodic balance found
// ≥ 85 % busy, or one no periodic balance has seen yet: the shared
// structure is zero-allocated) makes it return at once, before the
// idle-core scan, which nr does not bound otherwise. The zen3's LLC 0 is
// CPUs 0-7 and their SMT siblings 128-135; CPU 1 (target) runs a hog, prev
// is CPU 8 in another LLC, so neither shortcut of select_idle_sibling
// applies.
//
//   - nr_idle_scan 0, has_idle_cores set, core {2,130} idle: no scan, the
//     target (1) comes back, and has_idle_cores stays set (only a failed
//     scan clears it).
//   - nr_idle_scan 0, no idle core known: target.
//   - nr_idle_scan 1 (utilisation 821/1024 per CPU: x = 821,
//     tmp = 821²·117²/(10000·1024) = 901, nr = (1024 − 901)·16/1024 = 1),
//     has_idle_cores set: nr = 2, but the idle-core scan is unbounded and
//     returns core 2.
//   - nr_idle_scan 1, no idle core known, CPU 2 idle: "--nr <= 0" allows
//     one CPU, target+1 = 2: found.
//   - nr_idle_scan 1, no idle core known, CPUs 1 and 2 busy, CPU 3 idle:
//     the budget ends before CPU 3: target.
//
// Reference: fair.c:select_idle_cpu, select_idle_core, update_idle_cpu_scan
// (v6.19).
func TestSelectIdleCPUSISUtil(t *testing.T) {
	for _, tc := range []struct {
		name      string
		hogs      []int
		scanUtil  int // -1: nr_idle_scan keeps its boot value 0
		idleCores bool
		wantScan  int
		want      int
		wantHint  bool
	}{
		{"nr_idle_scan 0, idle core known", []int{1}, -1, true, 0, 1, true},
		{"nr_idle_scan 0, no idle core known", []int{1}, -1, false, 0, 1, false},
		{"nr_idle_scan 1, idle core known", []int{1}, 821, true, 1, 2, true},
		{"nr_idle_scan 1, CPU 2 idle", []int{1}, 821, false, 1, 2, false},
		{"nr_idle_scan 1, budget ends before CPU 3", []int{1, 2}, 821, false, 1, 1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, "zen3-2s-nps1", kernels.V619)
			for _, c := range tc.hogs {
				r.hog(c)
			}
			p := r.sleeper(8, 100*engine.Microsecond)
			r.run(5 * engine.Millisecond)
			r.unpin(p)
			p.RecentUsedCPU = 8
			if tc.scanUtil >= 0 {
				r.setIdleScan(1, uint64(tc.scanUtil))
			}
			if n := r.k.SdLLCShared(1).NrIdleScan; n != tc.wantScan {
				t.Fatalf("nr_idle_scan %d, want %d", n, tc.wantScan)
			}
			r.k.setIdleCores(1, tc.idleCores)
			if got := r.on(1).selectIdleSibling(p, 8, 1); got != r.cpu(tc.want) {
				t.Errorf("select_idle_sibling(prev=8, target=1) = %v, want cpu%d", got, tc.want)
			}
			if hint := r.k.SdLLCShared(1).HasIdleCores; hint != tc.wantHint {
				t.Errorf("has_idle_cores after the call = %v, want %v", hint, tc.wantHint)
			}
		})
	}
}
