package sched

import (
	"fmt"
	"github.com/schedlab/schedlab/internal/kernels"
	"reflect"
	"testing"

	"github.com/schedlab/schedlab/internal/cpumask"
	"github.com/schedlab/schedlab/internal/engine"
)

// TestShortTaskVariants shows which CPU the tip (the baseline) and each
// short-task variant choose for one wakeup in three machine states.
//
// Reference: fair.c:select_task_rq_fair, wake_affine_idle,
// wake_affine_weight, select_idle_sibling, select_idle_cpu (v6.19 and the
// v6.0-era tip) and the short-task postings (patches.md §1).
//
// The machine, zen3-2s-nps1. The waker W runs 100 µs and sleeps 100 µs in
// a loop, pinned to CPU 0 (LLC0); at 20 ms, from W's own CPU while W is
// current, it asks select_task_rq_fair where to wake P (no WF_SYNC). P ran
// 200 µs / slept 100 µs on CPU 8 (LLC1, same socket) until 12 ms and sleeps
// since; for the wakeup it may run anywhere, so prev_cpu = 8. Both are
// short by the RFC's test (sum_exec_runtime <= nvcsw × 2.8 ms on v6.19,
// 3 ms on v6.0: about 100 and 200 µs per switch). Hogs keep CPUs 128-135
// (the SMT siblings of LLC0) busy, so LLC0 has idle CPUs (1-7) but no idle
// core: its has_idle_cores stays 0 (so does LLC1's while CPU 8 is busy). nr_idle_scan of both LLCs is 3, what
// update_idle_cpu_scan gives at 75 % average utilisation, so SIS_UTIL's
// scan may look at three CPUs (nr = 4) and 5 × 4 < 3 × 16 opens the
// short-task scan skip.
//
// Walk: wake_wide is false (few flips), so want_affine; CPU 0's first
// SD_WAKE_AFFINE domain spanning 8 is PKG: wake_affine(PKG, P, 0, 8).
//
// (a) CPU 0 runs W + one hog (nr_running 2), CPU 8 is idle.
//   - tip, v1-v4, rfc2: wake_affine_idle: this_cpu busy, no sync, prev idle
//     -> prev 8 (the short-task checks of v1-v4/rfc2 come after this one);
//     select_idle_sibling(P, 8, 8): target idle -> 8.
//   - rfc: "(sync && nr==1) || short(curr(0)=W)" -> 0 before the prev
//     check; select_idle_sibling(P, 8, 0): 0 busy, prev not cache affine,
//     recent_used_cpu == prev, no idle core, prev not in LLC0 so no sibling
//     step; select_idle_cpu: nr = 4, and the scan skip (no idle core, 20 <
//     48, P short, W short) returns target 0.
//
// (b) CPU 0 runs only W (nr_running 1), CPU 8 runs a nice-19 hog.
//   - tip: wake_affine_idle: no opinion (this busy, no sync, prev busy).
//     wake_affine_weight: prev_eff = (cpu_load(8) − task_h_load(P)) × 108
//     < 0, since P's stale load exceeds its decayed blocked share of CPU 8's
//     load by more than the nice-19 hog's ~15 (the test checks it), so
//     this_eff < prev_eff fails -> prev 8. select_idle_sibling(P, 8, 8): 8
//     busy, no idle core in LLC1, prev == target shares its LLC: idle SMT
//     sibling of 8 -> 136.
//   - rfc, v1 (end, no nr_running test), v3 and rfc2 (nr_running(0) == 1):
//     this_cpu 0; select_idle_sibling(P, 8, 0) as in (a) reaches
//     select_idle_cpu, where rfc/v1/v3 skip the scan (P and W short) and
//     rfc2 skips it too (nr_running(0) == 1, W short) -> 0.
//   - v2, v4: this_cpu 0 but no scan skip: the scan from 1 finds 1 idle -> 1.
//
// (c) CPU 0 runs W + two hogs (nr_running 3), CPU 8 runs a nice-19 hog.
//   - tip: as in (b) -> 136.
//   - rfc, v1: this_cpu 0 regardless of nr_running; scan skip -> 0.
//   - v2: this_cpu 0, scan from 1 -> 1.
//   - v3, v4, rfc2: nr_running(0) == 3 fails the end check; weight -> prev
//     8; select_idle_sibling(P, 8, 8) -> 136 (the sibling step comes
//     before select_idle_cpu, so rfc2's scan skip is never reached).
func TestShortTaskVariants(t *testing.T) {
	cases := []struct {
		name     string
		extraOn0 int  // hogs sharing CPU 0 with W
		prevBusy bool // a nice-19 hog on CPU 8
		want     map[string]int
	}{
		{"a: nr_running 2 on this_cpu, prev idle", 1, false, map[string]int{
			"tip": 8, "short-task-rfc": 0, "short-task-v1": 8, "short-task-v2": 8,
			"short-task-v3": 8, "short-task-v4": 8, "short-task-rfc2": 8}},
		{"b: nr_running 1 on this_cpu, prev busy, no sync", 0, true, map[string]int{
			"tip": 136, "short-task-rfc": 0, "short-task-v1": 0, "short-task-v2": 1,
			"short-task-v3": 0, "short-task-v4": 1, "short-task-rfc2": 0}},
		{"c: nr_running 3 on this_cpu, prev busy", 2, true, map[string]int{
			"tip": 136, "short-task-rfc": 0, "short-task-v1": 0, "short-task-v2": 1,
			"short-task-v3": 136, "short-task-v4": 136, "short-task-rfc2": 136}},
	}
	variants := []string{"tip", "short-task-rfc", "short-task-v1", "short-task-v2", "short-task-v3", "short-task-v4", "short-task-rfc2"}
	// The patches' baseline (v6.0) and the default; v5.12 has no SIS_UTIL,
	// which the scan hunk needs.
	for _, kern := range []string{kernels.V60, kernels.V619} {
		for _, c := range cases {
			for _, v := range variants {
				t.Run(fmt.Sprintf("%s/%s/%s", kern, c.name[:1], v), func(t *testing.T) {
					got := shortTaskProbe(t, kern, v, ShortLifetime, c.extraOn0, c.prevBusy)
					if got != cpumask.CPU(c.want[v]) {
						t.Fatalf("%s: %s picks %v, want cpu%d", c.name, v, got, c.want[v])
					}
				})
			}
			// is_short_task by dur_avg (× 8 <= min_granularity): W's
			// ~100 µs and P's ~200 µs averages are short as well, so the
			// RFC picks the same CPU.
			t.Run(fmt.Sprintf("%s/%s/short-task-rfc-dur_avg", kern, c.name[:1]), func(t *testing.T) {
				if got := shortTaskProbe(t, kern, "short-task-rfc", ShortDurAvg, c.extraOn0, c.prevBusy); got != cpumask.CPU(c.want["short-task-rfc"]) {
					t.Fatalf("dur_avg metric: picks %v, want cpu%d", got, c.want["short-task-rfc"])
				}
			})
		}
	}
}

// shortTaskProbe builds the scenario of TestShortTaskVariants and returns
// the CPU select_task_rq_fair chooses.
func shortTaskProbe(t *testing.T, kern, variant string, metric ShortTaskMetric, extraOn0 int, prevBusy bool) cpumask.CPU {
	t.Helper()
	s := MustBaseline(kern)
	if variant != "tip" {
		if err := ApplyVariant(&s, variant); err != nil {
			t.Fatal(err)
		}
		s.ShortTaskMetric = metric
	}
	r := newRigSettings(t, "zen3-2s-nps1", s)
	for c := 128; c <= 135; c++ {
		r.hog(c)
	}
	if prevBusy {
		r.spawn("hog19", 8, 19, SchedNormal, loop(engine.Second, 0))
	}
	pn := 0
	p := r.spawn("wakee", 8, 0, SchedNormal, ProgramFunc(func(k *Kernel, t *Task) Op {
		pn++
		switch {
		case k.Now() >= 12*engine.Millisecond:
			return Block()
		case pn%2 == 1:
			return Run(200 * engine.Microsecond)
		}
		return Sleep(100 * engine.Microsecond)
	}))
	for i := 0; i < extraOn0; i++ {
		r.hog(0)
	}
	got := cpumask.None
	probed := false
	wn := 0
	r.spawn("waker", 0, 0, SchedNormal, ProgramFunc(func(k *Kernel, w *Task) Op {
		if k.Now() >= 20*engine.Millisecond && !probed {
			probed = true
			if k.Current() != w || k.ThisCPU() != 0 || p.State != TaskInterruptible || p.OnRq != 0 {
				t.Fatalf("probe state: current %s on cpu%d, wakee state %v", k.Current().Comm, k.ThisCPU(), p.State)
			}
			if nr := nrRunningNotDelayed(k.Rqs[0]); nr != 1+extraOn0 {
				t.Fatalf("nr_running(0) = %d, want %d", nr, 1+extraOn0)
			}
			if !k.isShortTaskAs(w, ShortLifetime) || !k.isShortTaskAs(p, ShortLifetime) {
				t.Fatalf("waker or wakee not short: W %d/%d, P %d/%d", w.SE.SumExecRuntime, w.Nvcsw, p.SE.SumExecRuntime, p.Nvcsw)
			}
			r.unpin(p)
			for _, c := range []int{0, 8} {
				if n := r.setIdleScan(c, 768); n != 3 {
					t.Fatalf("nr_idle_scan %d, want 3", n)
				}
			}
			// (In (a) CPU 8 goes idle next to an idle 136, which sets
			// LLC1's hint; no path of (a) reads it.)
			if k.SdLLCShared(0).HasIdleCores || prevBusy && k.SdLLCShared(8).HasIdleCores {
				t.Fatal("has_idle_cores is set; the scenario assumes no idle core")
			}
			if prevBusy {
				// wake_affine_weight's premise for the tip: prev_eff < 0.
				if l8, tl := cpuLoad(k.Rqs[8]), k.taskHLoad(p); int64(l8)-int64(tl) >= 0 {
					t.Fatalf("cpu_load(8) %d >= task_h_load(P) %d", l8, tl)
				}
			}
			got = k.selectTaskRqFair(p, p.WakeCPU, WFTTWU)
			return Block()
		}
		wn++
		if wn%2 == 1 {
			return Run(100 * engine.Microsecond)
		}
		return Sleep(100 * engine.Microsecond)
	}))
	for i := 0; i < 40 && !probed; i++ {
		r.run(5 * engine.Millisecond)
	}
	if !probed {
		t.Fatal("the waker never ran after 20 ms")
	}
	return got
}

// isShortTaskAs is is_short_task with a given metric.
func (k *Kernel) isShortTaskAs(p *Task, m ShortTaskMetric) bool {
	saved := k.S.ShortTaskMetric
	k.S.ShortTaskMetric = m
	defer func() { k.S.ShortTaskMetric = saved }()
	return k.isShortTask(p)
}

// TestNoSyncIRQ: where a WF_SYNC wakeup goes with and without no-sync-irq,
// from task and from interrupt context.
//
// Reference: fair.c:select_task_rq_fair and wake_affine_idle (v6.0) and Libo
// Chen's patch (<20220711224704.1672831-1-libo.chen@oracle.com>): "int sync
// = in_task() && (wake_flags & WF_SYNC) && !(current->flags & PF_EXITING)".
//
// The machine, zen3-2s-nps1 on v6.0. A hog is the waker, alone on CPU 0
// (LLC0, nr_running 1); P slept on CPU 8 (LLC1, same socket), now idle;
// sd_llc_shared is zero (no idle cores recorded, nr_idle_scan 0). CPU 0's
// first SD_WAKE_AFFINE domain spanning 8 is DIE: wake_affine(DIE, P, 0, 8).
//   - sync: wake_affine_idle's "sync && nr_running == 1" -> this_cpu 0;
//     select_idle_sibling(P, 8, 0): 0 busy, prev not cache affine, no idle
//     core, SIS_UTIL's nr_idle_scan 0 ends the scan -> target 0.
//   - not sync: this_cpu busy, prev idle -> prev 8; select_idle_sibling(P,
//     8, 8): target idle -> 8.
//
// The patch makes a sync wakeup from softirq or hardirq context take the
// second path; from task context, or without WF_SYNC, nothing changes. Its
// counter is taken once per sync wakeup it un-syncs, changed when
// wake_affine's answer with sync (0) differs from its answer (8), and taken
// but not changed when wake_affine does not run (the waker's CPU is prev).
func TestNoSyncIRQ(t *testing.T) {
	// The variant changes SyncInTaskOnly alone, against plain v6.0.
	info, ok := LookupVariant("no-sync-irq")
	if !ok || info.Baseline != kernels.V60 || info.Base != "" || len(info.Branches) != 1 || info.Branches[0] != BranchSyncInTask {
		t.Fatalf("no-sync-irq: %+v", info)
	}
	patched, base := MustBaseline(kernels.V60), MustBaseline(kernels.V60)
	if err := ApplyVariant(&patched, "no-sync-irq"); err != nil || !patched.SyncInTaskOnly || base.SyncInTaskOnly {
		t.Fatalf("no-sync-irq: %v, SyncInTaskOnly %v", err, patched.SyncInTaskOnly)
	}
	patched.SyncInTaskOnly = false
	if !reflect.DeepEqual(patched, base) {
		t.Error("no-sync-irq changes more than SyncInTaskOnly")
	}

	type ctx int
	const (
		task ctx = iota
		softirq
		hardirq
	)
	tests := []struct {
		name    string
		variant bool
		ctx     ctx
		flags   int
		prev    int // P's CPU before it slept (the waker is on 0)
		want    int
		taken   uint64
		changed uint64
	}{
		{name: "v6.0, task", ctx: task, flags: WFSync, prev: 8, want: 0},
		{name: "v6.0, softirq", ctx: softirq, flags: WFSync, prev: 8, want: 0},
		{name: "patch, task", variant: true, ctx: task, flags: WFSync, prev: 8, want: 0},
		{name: "patch, softirq", variant: true, ctx: softirq, flags: WFSync, prev: 8, want: 8, taken: 1, changed: 1},
		{name: "patch, hardirq", variant: true, ctx: hardirq, flags: WFSync, prev: 8, want: 8, taken: 1, changed: 1},
		{name: "patch, softirq, not sync", variant: true, ctx: softirq, prev: 8, want: 8},
		// cpu == prev: no wake_affine, so sync reaches nothing;
		// select_idle_sibling(P, 0, 0): 0 busy, its SMT sibling 128
		// idle.
		{name: "patch, softirq, waker on prev", variant: true, ctx: softirq, flags: WFSync, prev: 0, want: 128, taken: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := MustBaseline(kernels.V60)
			if tc.variant {
				if err := ApplyVariant(&s, "no-sync-irq"); err != nil {
					t.Fatal(err)
				}
			}
			r := newRigSettings(t, "zen3-2s-nps1", s)
			waker := r.hog(0)
			p := r.sleeper(tc.prev, 100*engine.Microsecond)
			if tc.prev == 0 {
				// p slept on the waker's CPU before the waker started.
				p.SE.Stats = SchedStatistics{}
			}
			r.run(5 * engine.Millisecond)
			r.unpin(p)
			k := r.on(0)
			if k.Current() != waker || k.Rqs[0].NrRunning != 1 {
				t.Fatalf("the waker is not alone on cpu0")
			}
			switch tc.ctx {
			case softirq:
				k.SoftirqEnter()
				defer k.SoftirqExit()
			case hardirq:
				k.inTimer = true
				defer func() { k.inTimer = false }()
			}
			if k.InTask() != (tc.ctx == task) {
				t.Fatalf("in_task() = %v in context %d", k.InTask(), tc.ctx)
			}
			if got := k.selectTaskRqFair(p, p.WakeCPU, WFTTWU|tc.flags); got != r.cpu(tc.want) {
				t.Errorf("got %v, want cpu%d", got, tc.want)
			}
			if c := k.Branches[BranchSyncInTask]; c.Taken != tc.taken || c.Changed != tc.changed {
				t.Errorf("select_task_rq_fair:in_task taken %d changed %d, want %d and %d", c.Taken, c.Changed, tc.taken, tc.changed)
			}
		})
	}
}
