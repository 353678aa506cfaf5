package sched

import (
	"github.com/schedlab/schedlab/internal/kernels"
	"testing"

	"github.com/schedlab/schedlab/internal/cpumask"
	"github.com/schedlab/schedlab/internal/engine"
	"github.com/schedlab/schedlab/internal/topology"
)

// The machine of these tests is zen3-2s-nps1 unless said otherwise: CPU n
// and n+128 are SMT siblings; an LLC is 8 cores = 16 CPUs, LLC0 = 0-7 and
// 128-135, LLC1 = 8-15 and 136-143; socket 0 = 0-63 and 128-191. CPU 0's
// domains are SMT {0,128}, MC (LLC0), PKG (socket 0), NUMA (all; distance
// 32 is within AMD Zen's node_reclaim_distance of 32, so NUMA keeps
// SD_WAKE_AFFINE, SD_BALANCE_FORK and _EXEC).

const none = cpumask.None

// TestWakeAffineIdle covers every branch of wake_affine_idle.
//
// Reference: fair.c:wake_affine_idle, v6.19. In order:
//  1. this_cpu idle and sharing the LLC with prev_cpu: prev_cpu if it is
//     idle too, else this_cpu;
//  2. sync and this_cpu runs exactly one (non-delayed) task: this_cpu;
//  3. prev_cpu idle: prev_cpu;
//  4. otherwise no opinion (nr_cpumask_bits, here cpumask.None).
func TestWakeAffineIdle(t *testing.T) {
	tests := []struct {
		name       string
		hogs       []int // one busy task per entry, pinned there
		this, prev int
		sync       bool
		want       cpumask.CPU
	}{
		// Branch 1: both idle, same LLC -> prev (avoid the migration).
		{"this idle, prev idle, same LLC", nil, 1, 2, false, 2},
		// Branch 1: this idle, prev busy, same LLC -> this.
		{"this idle, prev busy, same LLC", []int{2}, 1, 2, false, 1},
		// Branch 1 needs the shared LLC: CPU 8 is in LLC1, so an idle
		// this_cpu says nothing; no sync, prev busy -> branch 4.
		{"this idle, other LLC, prev busy", []int{8}, 1, 8, false, none},
		// ... and with prev idle, branch 3.
		{"this idle, other LLC, prev idle", nil, 1, 8, false, 8},
		// Branch 2 comes before branch 3: the waker will sleep, so its
		// CPU is as good as idle.
		{"sync, this runs 1 task, prev idle", []int{0}, 0, 2, true, 0},
		{"sync, this runs 1 task, prev busy", []int{0, 2}, 0, 2, true, 0},
		// Two tasks on this_cpu: sync does not help; prev idle -> 3.
		{"sync, this runs 2 tasks, prev idle", []int{0, 0}, 0, 2, true, 2},
		{"no sync, this busy, prev idle", []int{0}, 0, 2, false, 2},
		// Branch 4.
		{"no sync, this busy, prev busy", []int{0, 2}, 0, 2, false, none},
		{"sync, this runs 2 tasks, prev busy", []int{0, 0, 2}, 0, 2, true, none},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, "zen3-2s-nps1", kernels.V619)
			for _, c := range tc.hogs {
				r.hog(c)
			}
			r.run(5 * engine.Millisecond)
			got := r.on(tc.this).wakeAffineIdle(r.cpu(tc.this), r.cpu(tc.prev), tc.sync)
			if got != tc.want {
				t.Fatalf("wake_affine_idle(this=%d, prev=%d, sync=%v) = %v, want %v", tc.this, tc.prev, tc.sync, got, tc.want)
			}
		})
	}
}

// TestSelectIdleSibling covers the branches of select_idle_sibling and of
// the select_idle_cpu / select_idle_core / select_idle_smt scans on an SMT
// machine.
//
// Reference: fair.c:select_idle_sibling, select_idle_cpu, select_idle_core,
// select_idle_smt, v6.19. "Idle" is available_idle_cpu || sched_idle_cpu.
// Shortcuts in order: (1) target idle; (2) prev idle and cache affine;
// (4) recent_used_cpu idle, cache affine, not prev nor target; (7) with SMT
// and no idle core known, an idle sibling of a cache-affine prev; (8) the
// LLC scan: with has_idle_cores a search for a fully idle core (not bounded
// by nr) that remembers the first idle CPU and clears the hint when it
// fails, else at most nr_idle_scan CPUs from target+1 (none at all while
// nr_idle_scan is 0); (10) target. (3), per-CPU kthread stacking, is not
// modelled; (5), (6) and (9) are covered by the asymmetric and cluster
// tests below.
func TestSelectIdleSibling(t *testing.T) {
	tests := []struct {
		name         string
		hogs         []int
		idleHogs     []int // SCHED_IDLE busy tasks
		prev, target int
		recent       int    // p->recent_used_cpu before the call
		scan         bool   // set nr_idle_scan from scanUtil (else it keeps its boot value 0)
		scanUtil     uint64 // LLC utilisation per CPU, out of 1024
		idleCores    bool   // has_idle_cores of the LLC before the call
		want         int
		wantIdleCore bool // has_idle_cores of target's LLC after the call
	}{
		// (1) target idle.
		{name: "target idle", prev: 2, target: 1, recent: 2, want: 1},
		// (1) a CPU running only SCHED_IDLE tasks counts as idle.
		{name: "target runs only SCHED_IDLE", idleHogs: []int{1}, prev: 2, target: 1, recent: 2, want: 1},
		// (2) target busy, prev idle in the same LLC.
		{name: "prev idle and cache affine", hogs: []int{1}, prev: 2, target: 1, recent: 2, want: 2},
		// (4) target and prev busy, recent_used_cpu 3 idle in the LLC.
		{name: "recent_used_cpu idle", hogs: []int{1, 2}, prev: 2, target: 1, recent: 3, want: 3},
		// (4) skipped: recent 8 is in LLC1. (7): no idle core known and
		// prev 2 shares target's LLC: its sibling 130 is idle.
		{name: "idle SMT sibling of prev", hogs: []int{1, 2}, prev: 2, target: 1, recent: 8, want: 130},
		// (8) has_idle_cores: scan cores from target+1 = 2: core
		// {2,130} is busy, core {3,131} is idle -> 3 (nr is no bound).
		{name: "idle core", hogs: []int{1, 2, 129, 130}, prev: 2, target: 1, recent: 2,
			scan: true, idleCores: true, want: 3, wantIdleCore: true},
		// (8) nr_idle_scan 16 (0 % utilisation) and has_idle_cores but every core of LLC0 has a busy sibling
		// (128-135): the search fails, clears the hint and returns the
		// first idle CPU it met, 2 (cores scanned from 2). prev 8 is not
		// cache affine, so (2) and (7) do not apply.
		{name: "no idle core: first idle CPU, hint cleared", hogs: []int{1, 128, 129, 130, 131, 132, 133, 134, 135},
			prev: 8, target: 1, recent: 8, scan: true, idleCores: true, want: 2},
		// (8) nr_idle_scan 0 (boot): no scan at all although CPUs 2-7 are
		// idle -> (10) target.
		{name: "nr_idle_scan 0", hogs: []int{1}, prev: 8, target: 1, recent: 8, want: 1},
		// (8) 75 % LLC utilisation: nr_idle_scan 3, nr = 4, so the scan
		// looks at 2, 3 and 4 at most ("--nr <= 0" ends it before 5).
		{name: "scan budget finds 4", hogs: []int{1, 2, 3}, prev: 8, target: 1, recent: 8, scan: true, scanUtil: 768, want: 4},
		{name: "scan budget exhausted", hogs: []int{1, 2, 3, 4}, prev: 8, target: 1, recent: 8, scan: true, scanUtil: 768, want: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, "zen3-2s-nps1", kernels.V619)
			for _, c := range tc.hogs {
				r.hog(c)
			}
			for _, c := range tc.idleHogs {
				r.spawn("idlehog", c, 0, SchedIdle, loop(engine.Second, 0))
			}
			p := r.sleeper(tc.prev, 100*engine.Microsecond)
			r.run(5 * engine.Millisecond)
			r.unpin(p)
			p.RecentUsedCPU = r.cpu(tc.recent)
			if tc.scan {
				r.setIdleScan(tc.target, tc.scanUtil)
			}
			r.k.setIdleCores(r.cpu(tc.target), tc.idleCores)
			got := r.on(tc.target).selectIdleSibling(p, r.cpu(tc.prev), r.cpu(tc.target))
			if got != r.cpu(tc.want) {
				t.Fatalf("select_idle_sibling(prev=%d, target=%d) = %v, want cpu%d", tc.prev, tc.target, got, tc.want)
			}
			if hic := r.k.SdLLCShared(tc.target).HasIdleCores; hic != tc.wantIdleCore {
				t.Errorf("has_idle_cores after the call = %v, want %v", hic, tc.wantIdleCore)
			}
		})
	}
}

// TestSelectIdleSiblingRecentUsed checks the recent_used_cpu bookkeeping:
// v6.19 sets p->recent_used_cpu = prev on every pass of that step, whether
// or not the old value is used.
//
// Reference: fair.c:select_idle_sibling, v6.19.
func TestSelectIdleSiblingRecentUsed(t *testing.T) {
	r := newRig(t, "zen3-2s-nps1", kernels.V619)
	r.hog(1)
	r.hog(2)
	p := r.sleeper(2, 100*engine.Microsecond)
	r.run(5 * engine.Millisecond)
	r.unpin(p)
	p.RecentUsedCPU = 3
	if got := r.on(1).selectIdleSibling(p, 2, 1); got != 3 || p.RecentUsedCPU != 2 {
		t.Fatalf("got cpu %v, recent_used_cpu %v; want 3 and 2", got, p.RecentUsedCPU)
	}
	// The next pass sees recent == prev and skips the step.
	if got := r.on(1).selectIdleSibling(p, 2, 1); got != 130 {
		t.Fatalf("second pass got %v, want 130 (the idle sibling of prev)", got)
	}
}

// TestSelectIdleSiblingClusters covers the cluster handling of v6.19 on a
// Kunpeng 920 (one 24-CPU LLC per die, clusters of 4 CPUs sharing an L3
// tag, no SMT).
//
// Reference: fair.c:select_idle_sibling and select_idle_cpu, v6.19: a
// cache-affine idle prev outside target's cluster is only remembered
// (prev_aff); select_idle_cpu scans target's cluster first (its LLC's first
// group); prev_aff is returned when the scan finds nothing.
func TestSelectIdleSiblingClusters(t *testing.T) {
	tests := []struct {
		name     string
		hogs     []int
		scanUtil uint64 // 0: nr_idle_scan stays 0
		want     int
	}{
		// nr_idle_scan 0: no scan; prev_aff 5 (LLC0, cluster 4-7).
		{"prev_aff after an empty scan", []int{0}, 0, 5},
		// nr_idle_scan 24 (0 % util): target 0's cluster 0-3 first,
		// from 1: 1 busy, 2 idle.
		{"target's cluster first", []int{0, 1}, 1, 2},
		// Cluster 0-3 all busy: the rest of the LLC from target+1 = 1,
		// i.e. 4 first... which is idle.
		{"then the rest of the LLC", []int{0, 1, 2, 3}, 1, 4},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, "kunpeng920-96", kernels.V619)
			if !r.k.Topo.ClusterActive || r.k.Topo.SMTPresent {
				t.Fatal("kunpeng920-96 should have clusters and no SMT")
			}
			for _, c := range tc.hogs {
				r.hog(c)
			}
			p := r.sleeper(5, 100*engine.Microsecond)
			r.run(5 * engine.Millisecond)
			r.unpin(p)
			if tc.scanUtil != 0 {
				if n := r.setIdleScan(0, 0); n != 24 {
					t.Fatalf("nr_idle_scan %d, want 24", n)
				}
			}
			if got := r.on(0).selectIdleSibling(p, 5, 0); got != r.cpu(tc.want) {
				t.Fatalf("got %v, want cpu%d", got, tc.want)
			}
		})
	}
}

// TestSelectIdleCapacity covers select_idle_sibling on an asymmetric
// machine, HiKey960: CPUs 0-3 have capacity 592, 4-7 have 1024, and
// sd_asym_cpucapacity is the 8-CPU domain.
//
// Reference: fair.c:select_idle_sibling and select_idle_capacity, v6.19.
// Every shortcut also needs asym_fits_cpu: util_est × 1.25 < capacity, so a
// task fits a little CPU below util 473 and a big one below 819. Then
// select_idle_capacity scans from target: the first idle CPU that fits, or
// the idle CPU of largest capacity.
func TestSelectIdleCapacity(t *testing.T) {
	tests := []struct {
		name string
		run  engine.Time // how long p ran on CPU 0 before sleeping
		hogs []int
		want int
	}{
		// p ran 100 ms on a little CPU: util ~ 592 does not fit a little
		// CPU, so idle 1-3 are passed over for the first idle big CPU.
		{"big task, big CPU idle", 100 * engine.Millisecond, []int{0}, 4},
		// A new task's util is half the little CPU's spare capacity
		// (296): it fits, and 1 is the first idle CPU after target 0.
		{"small task fits a little CPU", engine.Millisecond, []int{0}, 1},
		// No big CPU idle: the idle CPU of largest capacity, the first
		// little one (ties keep the first).
		{"big task, bigs busy", 100 * engine.Millisecond, []int{0, 4, 5, 6, 7}, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, "hikey960", kernels.V619)
			p := r.sleeper(0, tc.run)
			r.run(tc.run + engine.Millisecond)
			for _, c := range tc.hogs {
				r.hog(c)
			}
			r.run(engine.Millisecond)
			r.unpin(p)
			util := r.k.taskUtilEst(p)
			big := tc.run > 10*engine.Millisecond
			if fitsLittle := util*1280 < 592*1024; fitsLittle == big {
				t.Fatalf("util_est %d: fits a little CPU = %v, the test assumes %v", util, fitsLittle, !big)
			}
			if got := r.on(0).selectIdleSibling(p, 0, 0); got != r.cpu(tc.want) {
				t.Fatalf("got %v, want cpu%d (util_est %d)", got, tc.want, util)
			}
		})
	}
}

// TestSelectTaskRqFairWakeup covers the domain walk of select_task_rq_fair
// for wakeups.
//
// Reference: fair.c:select_task_rq_fair, record_wakee, wake_wide,
// wake_affine, v6.19: with WF_TTWU, record_wakee; WF_CURRENT_CPU returns
// this CPU; want_affine = !wake_wide && this CPU allowed. Walking up from
// this CPU, the first SD_WAKE_AFFINE domain spanning prev_cpu runs
// wake_affine (only if cpu != prev_cpu) and ends the walk; no domain has
// SD_BALANCE_WAKE, so the fast path select_idle_sibling(p, prev, new_cpu)
// follows. wake_affine counts nr_wakeups_affine_attempts, and
// ttwu_move_affine on that domain and nr_wakeups_affine when this CPU won.
func TestSelectTaskRqFairWakeup(t *testing.T) {
	tests := []struct {
		name           string
		hogs           []int
		waker, prev    int
		flags          int
		wide           bool // make the waker/wakee pair look M:N
		want           int
		wantAttempts   uint64
		wantMoveAffine uint64 // on the waker's PKG domain
		// generic builds the machine with RECLAIM_DISTANCE (30) instead of
		// Zen's node_reclaim_distance (32): NUMA then lacks SD_WAKE_AFFINE.
		generic bool
	}{
		// CPU 64 is on the other socket: with RECLAIM_DISTANCE no
		// SD_WAKE_AFFINE domain of CPU 64 spans 2 (NUMA lacks it), so
		// new_cpu stays prev and the fast path finds prev idle.
		{name: "no affine domain", hogs: []int{64}, waker: 64, prev: 2, want: 2, generic: true},
		// On Zen (reclaim distance 32) NUMA keeps SD_WAKE_AFFINE:
		// wake_affine is attempted there; wake_affine_idle: this CPU
		// busy, not sync, prev idle -> prev.
		{name: "cross-socket wake_affine keeps idle prev", hogs: []int{64}, waker: 64, prev: 2, want: 2, wantAttempts: 1},
		// Same socket: wake_affine at PKG; wake_affine_idle: prev idle.
		{name: "wake_affine keeps idle prev", hogs: []int{0}, waker: 0, prev: 8, want: 8, wantAttempts: 1},
		// sync, the waker alone on CPU 0: wake_affine_idle picks CPU 0
		// (ttwu_move_affine on PKG); select_idle_sibling(p, 8, 0): 0
		// busy, prev not cache affine, sibling step needs an affine prev,
		// nr_idle_scan 0 -> target 0.
		{name: "sync pulls to the waker", hogs: []int{0, 8}, waker: 0, prev: 8, flags: WFSync, want: 0, wantAttempts: 1, wantMoveAffine: 1},
		// wake_wide: want_affine is false, the walk stops at SMT (no
		// SD_BALANCE_WAKE): select_idle_sibling(p, 8, 8): 8 busy, its
		// sibling 136 idle.
		{name: "wake_wide", hogs: []int{0, 8}, waker: 0, prev: 8, flags: WFSync, wide: true, want: 136},
		// WF_CURRENT_CPU returns the waker's CPU before anything else.
		{name: "WF_CURRENT_CPU", hogs: []int{0}, waker: 0, prev: 8, flags: WFCurrentCPU, want: 0},
		// cpu == prev: no wake_affine; select_idle_sibling(p, 0, 0):
		// 0 busy, sibling 128 idle.
		{name: "waker on prev", hogs: []int{0}, waker: 0, prev: 0, want: 128},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, "zen3-2s-nps1", kernels.V619)
			if tc.generic {
				spec, err := topology.Load("zen3-2s-nps1")
				if err != nil {
					t.Fatal(err)
				}
				spec = spec.Clone()
				spec.ReclaimDistance = 0
				r = &rig{t: t, k: newTestKernelSpec(t, spec, kernels.V619)}
			}
			var waker *Task
			for i, c := range tc.hogs {
				h := r.hog(c)
				if i == 0 {
					waker = h
				}
			}
			p := r.sleeper(tc.prev, 100*engine.Microsecond)
			if tc.prev == tc.waker {
				// p slept on the waker's CPU before the waker started.
				p.SE.Stats = SchedStatistics{}
			}
			r.run(5 * engine.Millisecond)
			r.unpin(p)
			k := r.on(tc.waker)
			if k.Current() != waker {
				t.Fatalf("waker not current on cpu%d", tc.waker)
			}
			if tc.wide {
				// wake_wide: slave >= llc_size (16) and master >=
				// slave × 16.
				waker.WakeeFlips, waker.WakeeFlipDecayTs = 300, k.Jiffies()
				p.WakeeFlips = 18
			}
			got := k.selectTaskRqFair(p, p.WakeCPU, WFTTWU|tc.flags)
			if got != r.cpu(tc.want) {
				t.Fatalf("got %v, want cpu%d", got, tc.want)
			}
			if p.SE.Stats.NrWakeupsAffineAtt != tc.wantAttempts {
				t.Errorf("nr_wakeups_affine_attempts = %d, want %d", p.SE.Stats.NrWakeupsAffineAtt, tc.wantAttempts)
			}
			pkg := k.Domains(tc.waker)[2]
			if pkg.T.Name != "PKG" || pkg.Stats.TTWUMoveAffine != tc.wantMoveAffine || p.SE.Stats.NrWakeupsAffine != tc.wantMoveAffine {
				t.Errorf("%s ttwu_move_affine = %d, nr_wakeups_affine = %d, want %d", pkg.T.Name, pkg.Stats.TTWUMoveAffine, p.SE.Stats.NrWakeupsAffine, tc.wantMoveAffine)
			}
			if waker.LastWakee != p || waker.WakeeFlips == 0 {
				t.Errorf("record_wakee did not run on the waker")
			}
		})
	}
}

// TestWakeAffineWeight checks the load comparison of wake_affine_weight.
//
// Reference: fair.c:wake_affine_weight, v6.19 (WA_BIAS on):
// this_eff = (cpu_load(this) [− task_h_load(current) if sync] +
// task_h_load(p)) × 100 × capacity_of(prev); prev_eff = (cpu_load(prev) −
// task_h_load(p)) × (100 + (imbalance_pct−100)/2) × capacity_of(this)
// [+1 if sync]; this_cpu iff this_eff < prev_eff. On the PKG domain
// imbalance_pct is 117, so prev is favoured by 108/100.
func TestWakeAffineWeight(t *testing.T) {
	r := newRig(t, "zen3-2s-nps1", kernels.V619)
	r.hog(0)
	r.hog(8)
	r.hog(8)
	// A nice-19 wakee (weight 15): task_h_load(p) <= 15 cannot tip the
	// comparison, so the CPU loads decide it.
	p := r.spawn("p", 9, 19, SchedNormal, runThenBlock(100*engine.Microsecond))
	r.run(50 * engine.Millisecond)
	k := r.on(0)
	sd := k.Domains(0)[2]
	l0, l8, tl := cpuLoad(k.Rqs[0]), cpuLoad(k.Rqs[8]), k.taskHLoad(p)
	thisEff := int64(l0+tl) * 100 * 1024
	prevEff := (int64(l8) - int64(tl)) * 108 * 1024
	want := none
	if thisEff < prevEff {
		want = 0
	}
	// Two hogs on 8 against one on 0: prev is about twice as loaded, and
	// (l0 + 15) × 100 < (2·l0 − 15) × 108.
	if want != 0 {
		t.Fatalf("setup: load(0)=%d load(8)=%d h_load(p)=%d does not favour this_cpu", l0, l8, tl)
	}
	if got := k.wakeAffineWeight(sd, p, 0, 8, false); got != want {
		t.Fatalf("wake_affine_weight = %v, want %v (load 0: %d, load 8: %d, task: %d)", got, want, l0, l8, tl)
	}
	// Reversed roles: from CPU 8 towards prev 0 the comparison fails.
	if got := r.on(8).wakeAffineWeight(sd, p, 8, 0, false); got != none {
		t.Fatalf("reverse wake_affine_weight = %v, want none", got)
	}
	// sync: task_h_load(current) > this_eff is impossible here (current's
	// load is part of cpu_load), so sync subtracts the waker: CPU 0 minus
	// its hog is lighter still.
	if got := r.on(0).wakeAffineWeight(sd, p, 0, 8, true); got != 0 {
		t.Fatalf("sync wake_affine_weight = %v, want cpu0", got)
	}
}

// TestUpdateIdleCPUScan checks SIS_UTIL's nr_idle_scan against the
// reference's worked values.
//
// Reference: fair.c:update_idle_cpu_scan, v6.19: x = sum_util/llc_weight;
// tmp = min(x² × pct² / (10000 × 1024), 1024); nr = (1024 − tmp) ×
// llc_weight / 1024, pct = 117 (MC). For a 16-CPU LLC: 0 % → 16, 25 %
// (x=256, tmp=87) → 14, 50 % (x=512, tmp=350) → 10, 75 % (x=768, tmp=788) →
// 3, 85 % (x=870, tmp=1011) → 0. Kunpeng's 24-CPU LLC at 50 % → 674×24/1024
// = 15. Only periodic balancing at the LLC level updates it.
func TestUpdateIdleCPUScan(t *testing.T) {
	r := newRig(t, "zen3-2s-nps1", kernels.V619)
	if n := r.k.SdLLCShared(0).NrIdleScan; n != 0 {
		t.Fatalf("boot nr_idle_scan = %d, want 0", n)
	}
	for _, tc := range []struct {
		util uint64
		want int
	}{{0, 16}, {256, 14}, {512, 10}, {768, 3}, {870, 0}} {
		if got := r.setIdleScan(0, tc.util); got != tc.want {
			t.Errorf("util %d: nr_idle_scan %d, want %d", tc.util, got, tc.want)
		}
	}
	r.setIdleScan(0, 512)
	k := r.k
	// Newly idle balancing and non-LLC domains leave it alone.
	k.updateIdleCPUScan(0, r.llc(0), CPUNewlyIdle, 0)
	k.updateIdleCPUScan(0, k.Domains(0)[2], CPUNotIdle, 0)
	if n := k.SdLLCShared(0).NrIdleScan; n != 10 {
		t.Fatalf("nr_idle_scan changed to %d by newly idle / PKG updates", n)
	}
	kp := newRig(t, "kunpeng920-96", kernels.V619)
	if got := kp.setIdleScan(0, 512); got != 15 {
		t.Errorf("kunpeng 24-CPU LLC at 50 %%: %d, want 15", got)
	}
}

// TestHasIdleCores checks where has_idle_cores is set.
//
// Reference: fair.c:__update_idle_core via update_idle_core from
// set_next_task_idle, v6.19: when a CPU switches to idle and every other
// SMT sibling is idle, set sd_llc_shared->has_idle_cores (it starts 0: the
// structure is zero-allocated). It is cleared only by a failed idle-core
// search (TestSelectIdleSibling, "no idle core").
func TestHasIdleCores(t *testing.T) {
	r := newRig(t, "zen3-2s-nps1", kernels.V619)
	r.hog(136) // CPU 8's sibling stays busy
	r.sleeper(8, 100*engine.Microsecond)
	r.run(engine.Millisecond)
	if r.k.SdLLCShared(8).HasIdleCores {
		t.Fatal("LLC1: CPU 8 went idle next to a busy sibling, yet has_idle_cores is set")
	}
	r.sleeper(0, 100*engine.Microsecond)
	r.run(engine.Millisecond)
	if !r.k.SdLLCShared(0).HasIdleCores {
		t.Fatal("LLC0: CPU 0 went idle with sibling 128 idle, has_idle_cores not set")
	}
	if r.k.Rqs[0].Wakeup.TestIdleCoresReads == 0 {
		t.Error("__update_idle_core reads the hint first; no read counted")
	}
}

// TestSISProp checks the v6.0-era SIS_PROP bound of select_idle_cpu.
//
// Reference: fair.c:select_idle_cpu (v6.0 SIS_PROP branch) and
// core.c:sched_init / ttwu_do_activate: wake_avg_idle starts at avg_idle =
// 2 × migration_cost = 1 ms with wake_stamp = boot jiffies and halves for
// every jiffy it ages; nr = span × wake_avg_idle / (avg_scan_cost + 1),
// at least 4; "!--nr" ends the scan before a CPU. After a scan that did
// not run out, wake_avg_idle loses the scan time and avg_scan_cost takes
// 1/8 of it (schedlab: 25 ns per CPU examined, Settings.SISScanCost).
func TestSISProp(t *testing.T) {
	s := MustBaseline(kernels.V60)
	s.SISProp, s.SISUtil = true, false
	for _, tc := range []struct {
		name     string
		scanCost uint64 // avg_scan_cost before the wakeup
		want     int
	}{
		// 5 ms after boot (1 jiffy at HZ=250): wake_avg_idle 1 ms >> 1 =
		// 500 µs; nr = 16 × 500000 / 1 = 8,000,000: the scan runs until
		// 6, the first idle CPU after 1-5; 6 CPUs × 25 ns = 150 ns.
		{"budget ample", 0, 6},
		// avg_scan_cost 10 ms: 16 × 500000 = 8e6 <= 4 × 10e6, nr = 4:
		// CPUs 1, 2, 3 are examined, all busy, the scan gives up ->
		// select_idle_sibling returns target 0.
		{"budget of 3 CPUs", 10000000, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRigSettings(t, "zen3-2s-nps1", s)
			for c := 0; c <= 5; c++ {
				r.hog(c)
			}
			p := r.sleeper(8, 100*engine.Microsecond)
			r.run(5 * engine.Millisecond)
			r.unpin(p)
			llc := r.llc(0)
			llc.AvgScanCost = tc.scanCost
			got := r.on(0).selectIdleSibling(p, 8, 0)
			if got != r.cpu(tc.want) {
				t.Fatalf("got %v, want cpu%d", got, tc.want)
			}
			rq := r.k.Rqs[0]
			if tc.scanCost == 0 {
				if rq.WakeAvgIdle != 500000-150 || llc.AvgScanCost != 150/8 {
					t.Errorf("wake_avg_idle %d, avg_scan_cost %d; want 499850, 18", rq.WakeAvgIdle, llc.AvgScanCost)
				}
			} else if rq.WakeAvgIdle != 500000 || llc.AvgScanCost != tc.scanCost {
				t.Errorf("an exhausted scan returns before accounting: wake_avg_idle %d, avg_scan_cost %d", rq.WakeAvgIdle, llc.AvgScanCost)
			}
		})
	}
}

// TestWakeupSchedstats checks the wakeup counters on real wakeups.
//
// Reference: core.c:ttwu_stat and fair.c:wake_affine, v6.19. ttwu_stat runs
// on the waker's CPU: ttwu_count++; if the wakee's new CPU is the waker's,
// ttwu_local++ and nr_wakeups_local++, else nr_wakeups_remote++ and
// ttwu_wake_remote++ on the lowest domain of the waker's CPU spanning the
// wakee's CPU; nr_wakeups_migrate for WF_MIGRATED, nr_wakeups_sync for
// WF_SYNC, nr_wakeups always. A self-wakeup counts too. ttwu_move_balance
// is never incremented.
func TestWakeupSchedstats(t *testing.T) {
	r := newRig(t, "zen3-2s-nps1", kernels.V619)
	r.hog(8)
	// p sleeps on CPU 8 (busy with a hog), then w on CPU 0 wakes it at
	// 10 ms with WF_SYNC: wake_affine_idle's sync test picks CPU 0 (w is
	// its only task), select_idle_sibling keeps 0 (nr_idle_scan 0).
	p := r.sleeper(8, 100*engine.Microsecond)
	woke := false
	w := r.spawn("waker", 0, 0, SchedNormal, ProgramFunc(func(k *Kernel, t *Task) Op {
		if k.Now() >= 10*engine.Millisecond && !woke {
			woke = true
			k.WakeUp(p, WFSync)
			return Block()
		}
		return Run(100 * engine.Microsecond)
	}))
	r.run(9 * engine.Millisecond) // p has had its 100 µs on CPU 8 and sleeps
	r.unpin(p)
	r.run(4 * engine.Millisecond)
	if !woke || p.CPU() != 0 {
		t.Fatalf("p woke on cpu%d", p.CPU())
	}
	rq0 := r.k.Rqs[0]
	st := p.SE.Stats
	if rq0.Schedstat.TTWUCount != 1 || rq0.Schedstat.TTWULocal != 1 {
		t.Errorf("cpu0 ttwu_count %d ttwu_local %d, want 1 1", rq0.Schedstat.TTWUCount, rq0.Schedstat.TTWULocal)
	}
	if st.NrWakeups != 1 || st.NrWakeupsLocal != 1 || st.NrWakeupsSync != 1 || st.NrWakeupsMigrate != 1 ||
		st.NrWakeupsAffine != 1 || st.NrWakeupsAffineAtt != 1 {
		t.Errorf("p stats %+v", st)
	}
	pkg := r.k.Domains(0)[2]
	if pkg.Stats.TTWUMoveAffine != 1 || pkg.Stats.TTWUMoveBalance != 0 {
		t.Errorf("PKG ttwu_move_affine %d ttwu_move_balance %d", pkg.Stats.TTWUMoveAffine, pkg.Stats.TTWUMoveBalance)
	}
	_ = w

	// A remote wakeup: from CPU 0, wake a task pinned to CPU 8: counted
	// on CPU 0, ttwu_wake_remote on PKG (the lowest domain of CPU 0 that
	// spans 8).
	q := r.sleeper(9, 100*engine.Microsecond)
	r.run(engine.Millisecond)
	r.on(0).WakeUp(q, 0)
	if rq0.Schedstat.TTWUCount != 2 || pkg.Stats.TTWUWakeRemote != 1 || q.SE.Stats.NrWakeupsRemote != 1 {
		t.Errorf("remote wakeup: ttwu_count %d, PKG ttwu_wake_remote %d, nr_wakeups_remote %d",
			rq0.Schedstat.TTWUCount, pkg.Stats.TTWUWakeRemote, q.SE.Stats.NrWakeupsRemote)
	}
	// A self-wakeup (p == current) is counted as a local wakeup.
	calls := 0
	self := r.spawn("self", 20, 0, SchedNormal, ProgramFunc(func(k *Kernel, t *Task) Op {
		if calls++; calls == 2 {
			t.State = TaskInterruptible // set_current_state, then woken before schedule()
			k.WakeUp(t, 0)
		}
		return Run(100 * engine.Microsecond)
	}))
	r.run(engine.Millisecond)
	if self.SE.Stats.NrWakeups != 1 || r.k.Rqs[20].Schedstat.TTWULocal != 1 {
		t.Errorf("self-wakeup: nr_wakeups %d, cpu20 ttwu_local %d", self.SE.Stats.NrWakeups, r.k.Rqs[20].Schedstat.TTWULocal)
	}
}

// TestDurAvgAcrossPreemption checks se.dur_avg as the short-task patches
// define it: the run time from one voluntary sleep to the next, however
// often the task was preempted in between, averaged with weight 1/8.
//
// Reference: the dur_avg posting of "sched/fair: Introduce short duration
// task check" (2022) and v6.4's dur_avg_update: dur = sum_exec_runtime −
// prev_sleep_sum_runtime at a sleeping dequeue; update_avg(&dur_avg, dur).
func TestDurAvgAcrossPreemption(t *testing.T) {
	for _, kern := range kernels.Names() {
		t.Run(kern, func(t *testing.T) {
			r := newRig(t, "hikey", kern)
			r.hog(0)
			p := r.spawn("p", 0, 0, SchedNormal, runThenBlock(20*engine.Millisecond))
			r.run(200 * engine.Millisecond)
			if p.Nvcsw != 1 || p.SchedInfo.Pcount < 2 {
				t.Fatalf("p slept %d times after %d switch-ins; the test needs one sleep after preemptions", p.Nvcsw, p.SchedInfo.Pcount)
			}
			// One sample, the whole 20 ms of CPU time: dur_avg = 0 + (20 ms − 0)/8.
			sum := p.SE.PrevSleepSumRuntime
			if d := int64(sum) - int64(20*engine.Millisecond); d < -10000 || d > 10000 {
				t.Fatalf("sum_exec_runtime at the sleep %d, want 20 ms", sum)
			}
			if p.SE.DurAvg != sum/8 {
				t.Fatalf("dur_avg %d after one sleep, want %d (= %d/8)", p.SE.DurAvg, sum/8, sum)
			}
		})
	}
}

// TestIdleCoresLine follows the sd_llc_shared cache line, whose
// has_idle_cores test_idle_cores loads (Settings.LLCSharedLines), on zen3-2s-nps1, where CPUs 0-7 and their SMT
// siblings 128-135 are LLC 0 and CPUs 8-15 LLC 1 (same node): a load is
// free while the loader's copy is valid, else the line comes from its last
// writer at costmodel.Table.LineTransfer's price (nothing from an SMT
// sibling or when nobody has written it); a store invalidates every other
// copy and is free when the storer held one.
func TestIdleCoresLine(t *testing.T) {
	k := newTestKernel(t, "zen3-2s-nps1", kernels.V619)
	withCosts(t, k)
	k.S.LLCSharedLines = true
	sds := k.SdLLCShared(0)
	// As if nobody had stored to the line since boot (boot's nohz
	// bookkeeping did).
	sds.line = newSharedLine(k.NrCPUs())
	sameLLC, otherLLC := k.Costs.LineTransfer(2, 1), k.Costs.LineTransfer(2, 8)
	if sameLLC <= 0 || otherLLC <= sameLLC {
		t.Fatalf("line transfers: same LLC %v, other LLC %v; the steps below need 0 < same < other", sameLLC, otherLLC)
	}
	steps := []struct {
		what  string
		cpu   cpumask.CPU
		store bool
		want  engine.Time
	}{
		{"load, never written", 1, false, 0},
		{"store by a CPU without a copy, nobody wrote before", 2, true, 0},
		{"load by CPU 1, invalidated by CPU 2's store", 1, false, sameLLC},
		{"load again by CPU 1", 1, false, 0},
		{"load by CPU 2's SMT sibling", 130, false, 0},
		{"load from LLC 1", 8, false, otherLLC},
		{"store by CPU 1, which holds a copy", 1, true, 0},
		{"load by CPU 2, invalidated by CPU 1's store", 2, false, sameLLC},
		{"load by CPU 8, invalidated too", 8, false, otherLLC},
		{"store by CPU 9, which has no copy", 9, true, k.Costs.LineTransfer(1, 9)},
	}
	for _, s := range steps {
		var got engine.Time
		if s.store {
			got = sds.line.store(k, s.cpu)
		} else {
			got = sds.line.load(k, s.cpu)
		}
		if got != s.want {
			t.Errorf("%s: %v, want %v", s.what, got, s.want)
		}
	}
}

// wake_affine's tally (Settings.WakeAffineTallyPrev): in v6.0 and v5.12
// a prev_cpu from wake_affine_idle counts as an affine move, because the
// return test is "target == nr_cpumask_bits"; since 39afe5d6fc59 (v6.1,
// so v6.19) only a move to the waking CPU counts. The CPU returned is the
// same. Reference: fair.c:wake_affine, v6.0 and v6.19.
func TestWakeAffineTally(t *testing.T) {
	for _, tc := range []struct {
		kernel     string
		hogs       []int
		this, prev int
		sync       bool
		want       cpumask.CPU
		counted    bool
	}{
		// wake_affine_idle: both idle, one LLC -> prev. v6.0 counts it.
		{kernels.V60, nil, 1, 2, false, 2, true},
		{kernels.V512, nil, 1, 2, false, 2, true},
		{kernels.V619, nil, 1, 2, false, 2, false},
		// wake_affine_idle: sync, one task on this -> this: counted in all.
		{kernels.V60, []int{0}, 0, 2, true, 0, true},
		{kernels.V619, []int{0}, 0, 2, true, 0, true},
		// No opinion from either (both busy, no sync, weights favour
		// prev: this runs two hogs) -> prev, counted in none.
		{kernels.V60, []int{0, 0, 2}, 0, 2, false, 2, false},
		{kernels.V619, []int{0, 0, 2}, 0, 2, false, 2, false},
	} {
		r := newRig(t, "zen3-2s-nps1", tc.kernel)
		for _, c := range tc.hogs {
			r.hog(c)
		}
		r.run(5 * engine.Millisecond)
		p := r.sleeper(2, engine.Microsecond)
		r.run(engine.Millisecond)
		sd := r.llc(tc.this)
		before, att := sd.Stats.TTWUMoveAffine, p.SE.Stats.NrWakeupsAffineAtt
		got := r.on(tc.this).wakeAffine(sd, p, r.cpu(tc.this), r.cpu(tc.prev), tc.sync)
		counted := sd.Stats.TTWUMoveAffine - before
		if got != tc.want || (counted == 1) != tc.counted || counted > 1 || p.SE.Stats.NrWakeupsAffineAtt != att+1 {
			t.Errorf("%s, hogs %v, this %d, prev %d, sync %v: wake_affine = %v, ttwu_move_affine +%d; want %v, counted %v",
				tc.kernel, tc.hogs, tc.this, tc.prev, tc.sync, got, counted, tc.want, tc.counted)
		}
	}
}
