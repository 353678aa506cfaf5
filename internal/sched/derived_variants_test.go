package sched

import (
	"fmt"
	"math/bits"
	"os"
	"path/filepath"
	"testing"

	"github.com/schedlab/schedlab/internal/cpumask"
	"github.com/schedlab/schedlab/internal/engine"
	"github.com/schedlab/schedlab/internal/kernels"
)

// Tests of the patch variants' own code (patches.md §1 and §3) whose
// expectations follow from the rules the postings state, at the edges where
// a comparison or a constant decides (issue 38, §5).

// llc20Machine writes a machine file of one socket whose LLC is 10 cores of
// two threads (20 CPUs, x86 numbering: the sibling of CPU n is n+10), and
// returns its path. With an LLC weight of 20, 3 × 20 = 60 is a multiple of
// 5, so the short-task scan skip's "5 × nr < 3 × llc_weight" meets its
// equality at nr = 12; no preset's LLC does (16, 24, 32, 4, 8).
func llc20Machine(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "llc20.yaml")
	const text = `name: llc20
description: one socket, one LLC of 10 cores x SMT2
arch: x86
sockets: 1
llcs_per_node: 1
cores_per_llc: 10
threads_per_core: 2
numbering: x86
`
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestShortTaskScanSkipEdges: the short-task hunk of select_idle_cpu
// (patches.md §1, hunk 2) at the edges of its threshold. After SIS_UTIL's
// nr = nr_idle_scan + 1 and its early return when nr == 1, the RFC, v1 and
// v3 return target without scanning when
//
//	!has_idle_core && 5 × nr < 3 × span_weight(sd_llc) && is_short(p) && is_short(curr(target))
//
// and the RFC v2 posting (short-task-rfc2) when
//
//	!has_idle_core && 5 × nr < 3 × span_weight(sd_llc) && nr_running(target) == 1 && is_short(curr(target)).
//
// The largest nr that skips is (3·W − 1)/5 and the next one scans: on the
// zen3's LLC (W = 16) nr = 9 skips (45 < 48) and nr = 10 scans (50); on a
// 20-CPU LLC nr = 11 skips (55 < 60) and nr = 12, where 5·nr = 3·W, scans.
//
// The machine state: target CPU 0 runs W (100 µs of work, 100 µs of sleep:
// short by every metric); P ran 100 µs once and blocked (short by the RFC's
// lifetime test, 100 µs <= 1 × min_granularity); Q ran 40 ms once and
// blocked (not short: 40 ms > 1 × min_granularity, and its RFC v2 dur_avg,
// 40 ms / 8 = 5 ms, is above min_granularity too). The
// rest of target's LLC is idle, so a scan from target+1 stops at CPU 1 (with
// an idle core known, select_idle_core finds CPU 1's idle core); the skip
// returns target. In a second state a hog shares CPU 0 with W
// (nr_running(target) == 2), which stops rfc2's skip and not the others'.
// From W's own event, select_idle_cpu(p, sd_llc(0), has_idle_core, 0) runs
// for every nr_idle_scan from 0 to the first that scans, with and without
// an idle core known, for P and Q.
//
// Reference: the short-task postings (patches.md §1) against
// fair.c:select_idle_cpu (v6.0, SIS_UTIL; the same lines in v6.19).
func TestShortTaskScanSkipEdges(t *testing.T) {
	machines := []struct {
		name   string
		weight int
	}{{"zen3-2s-nps1", 16}, {llc20Machine(t), 20}}
	for _, kern := range []string{kernels.V60, kernels.V619} {
		for _, m := range machines {
			for _, v := range []string{"short-task-rfc", "short-task-v1", "short-task-v3", "short-task-rfc2"} {
				for _, hogOnTarget := range []bool{false, true} {
					name := fmt.Sprintf("%s/llc%d/%s/nr_running=%d", kern, m.weight, v, 1+btoi(hogOnTarget))
					t.Run(name, func(t *testing.T) {
						shortScanEdges(t, kern, m.name, m.weight, v, hogOnTarget)
					})
				}
			}
		}
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

func shortScanEdges(t *testing.T, kern, machine string, weight int, variant string, hogOnTarget bool) {
	s := MustBaseline(kern)
	if err := ApplyVariant(&s, variant); err != nil {
		t.Fatal(err)
	}
	r := newRigSettings(t, machine, s)
	if w := r.llc(0).T.SpanWeight; w != weight {
		t.Fatalf("span_weight(sd_llc(0)) = %d, want %d", w, weight)
	}
	// P and Q live outside CPUs 0 and 1: in LLC1 on the zen3, at CPUs 5
	// and 6 of the single LLC otherwise.
	pc, qc := 5, 6
	if weight == 16 {
		pc, qc = 8, 9
	}
	p := r.spawn("p", pc, 0, SchedNormal, runThenBlock(100*engine.Microsecond))
	q := r.spawn("q", qc, 0, SchedNormal, runThenBlock(40*engine.Millisecond))
	if hogOnTarget {
		r.hog(0)
	}
	lastSkip := (3*weight - 1) / 5 // the largest nr with 5·nr < 3·W
	type result struct {
		nrIdleScan int
		idleCore   bool
		wakee      string
		got        cpumask.CPU
		hit        bool
	}
	var results []result
	probed := false
	wn := 0
	r.spawn("w", 0, 0, SchedNormal, ProgramFunc(func(k *Kernel, w *Task) Op {
		if k.Now() >= 50*engine.Millisecond && !probed {
			probed = true
			rq := k.Rqs[0]
			if k.Current() != w || k.ThisCPU() != 0 || p.OnRq != 0 || q.OnRq != 0 {
				t.Fatalf("probe state: current %s on cpu%d, p on_rq %d, q on_rq %d", k.Current().Comm, k.ThisCPU(), p.OnRq, q.OnRq)
			}
			// The premises of the rule, by the variant's own metric.
			if !k.isShortTask(w) {
				t.Fatalf("curr(target) is not short: sum %d, nvcsw %d", w.SE.SumExecRuntime, w.Nvcsw)
			}
			// (Q is not short by rfc2's metric either, so that rfc2's
			// skip for Q shows that it does not ask.)
			if !k.isShortTask(p) || k.isShortTask(q) {
				t.Fatalf("want P short and Q not: P %d/%d, Q %d/%d", p.SE.SumExecRuntime, p.Nvcsw, q.SE.SumExecRuntime, q.Nvcsw)
			}
			if nr := nrRunningNotDelayed(rq); nr != 1+btoi(hogOnTarget) {
				t.Fatalf("nr_running(0) = %d, want %d", nr, 1+btoi(hogOnTarget))
			}
			r.unpin(p)
			r.unpin(q)
			sd := k.sdLLC(0)
			sds := k.SdLLCShared(0)
			for n := 0; n <= lastSkip; n++ {
				for _, idleCore := range []bool{false, true} {
					for _, wk := range []*Task{p, q} {
						sds.NrIdleScan = n
						k.setIdleCores(0, idleCore)
						hits := k.Branches[BranchShortScan].Taken
						got := k.selectIdleCPU(wk, sd, idleCore, 0)
						results = append(results, result{n, idleCore, wk.Comm, got, k.Branches[BranchShortScan].Taken != hits})
					}
				}
			}
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
		t.Fatal("W never ran after 50 ms")
	}
	if len(results) != (lastSkip+1)*4 {
		t.Fatalf("%d probes, want %d", len(results), (lastSkip+1)*4)
	}
	for _, res := range results {
		nr := res.nrIdleScan + 1
		wakeeShort := res.wakee == "p"
		var skip bool
		switch variant {
		case "short-task-rfc2":
			skip = !res.idleCore && 5*nr < 3*weight && !hogOnTarget
		default:
			skip = !res.idleCore && 5*nr < 3*weight && wakeeShort
		}
		want := cpumask.CPU(1) // the scan's first idle CPU (or idle core)
		switch {
		case nr == 1:
			want, skip = cpumask.None, false
		case skip:
			want = 0
		}
		if res.got != want || res.hit != skip {
			t.Errorf("nr_idle_scan %d (nr %d, 5·nr = %d vs 3·W = %d), has_idle_core %v, wakee %s: select_idle_cpu = %v (skip counted %v), want %v (skip %v)",
				res.nrIdleScan, nr, 5*nr, 3*weight, res.idleCore, res.wakee, res.got, res.hit, want, skip)
		}
	}
}

// TestIsShortTaskEdges: is_short_task at exactly the threshold, one
// nanosecond over and one under, in each of the model's three forms.
//
//   - the RFC (lifetime): sum_exec_runtime <= nvcsw × min_granularity;
//   - RFC v3 and later (dur_avg): dur_avg × 8 <= min_granularity;
//   - the RFC v2 posting: dur_avg <= min_granularity.
//
// min_granularity is the scaled sysctl: 0.75 ms × (1 + ilog2(min(ncpus,
// 8))) on v6.0, 3 ms on the 8-CPU HiKey; v6.19 has no min_granularity and
// the model compares with base_slice, 0.70 ms × the same factor = 2.8 ms.
// Both thresholds are multiples of 8, so "dur_avg × 8 <= G" has its
// equality at dur_avg = G/8.
//
// A task that never ran nor switched is short in the lifetime form
// (0 <= 0, patches.md §1: "that includes freshly forked tasks") and the
// RFC v2 form (0 <= G). The dur_avg × 8 form requires a dur_avg
// ("p->se.dur_avg &&"): a task that ran without ever sleeping (nvcsw 0,
// dur_avg 0) is short only in the RFC v2 form (the lifetime form: sum >
// 0; the × 8 form: no dur_avg), and dur_avg = 1 ns is the smallest that
// counts there.
//
// Reference: the short-task postings (patches.md §1); core.c:sched_init's
// sysctl scaling (get_update_sysctl_factor, SCHED_TUNABLESCALING_LOG),
// v6.0 and v6.19.
func TestIsShortTaskEdges(t *testing.T) {
	for _, tc := range []struct {
		kern string
		base uint64 // the unscaled sysctl
	}{{kernels.V60, 750000}, {kernels.V619, 700000}} {
		k := newTestKernel(t, "hikey", tc.kern)
		factor := uint64(bits.Len(uint(min(k.NrCPUs(), 8)))) // 1 + ilog2(min(ncpus, 8))
		g := tc.base * factor
		if got := k.shortTaskGranularity(); got != g || g%8 != 0 {
			t.Fatalf("%s: granularity %d, want %d", tc.kern, got, g)
		}
		if k.S.ShortTaskDurAvgFactor != 8 {
			t.Fatalf("%s: dur_avg factor %d, want 8 (RFC v3)", tc.kern, k.S.ShortTaskDurAvgFactor)
		}
		for _, c := range []struct {
			name   string
			metric ShortTaskMetric
			sum    uint64 // se.sum_exec_runtime
			nvcsw  uint64
			dur    uint64 // se.dur_avg of the metric
			want   bool
		}{
			{"lifetime: sum = 3·G", ShortLifetime, 3 * g, 3, 0, true},
			{"lifetime: sum = 3·G + 1", ShortLifetime, 3*g + 1, 3, 0, false},
			{"lifetime: sum = 3·G − 1", ShortLifetime, 3*g - 1, 3, 0, true},
			{"lifetime: never ran nor slept", ShortLifetime, 0, 0, 0, true},
			{"lifetime: ran 1 ns, never slept", ShortLifetime, 1, 0, 0, false},
			{"dur_avg: 8·dur = G", ShortDurAvg, 0, 0, g / 8, true},
			{"dur_avg: dur = G/8 + 1", ShortDurAvg, 0, 0, g/8 + 1, false},
			{"dur_avg: dur = G/8 − 1", ShortDurAvg, 0, 0, g/8 - 1, true},
			{"dur_avg: never slept", ShortDurAvg, 10 * g, 0, 0, false},
			{"dur_avg: dur = 1", ShortDurAvg, 0, 0, 1, true},
			{"rfc2 dur_avg: dur = G", ShortDurAvgRFC2, 0, 0, g, true},
			{"rfc2 dur_avg: dur = G + 1", ShortDurAvgRFC2, 0, 0, g + 1, false},
			{"rfc2 dur_avg: dur = G − 1", ShortDurAvgRFC2, 0, 0, g - 1, true},
			{"rfc2 dur_avg: never slept", ShortDurAvgRFC2, 10 * g, 0, 0, true},
		} {
			p := &Task{Nvcsw: c.nvcsw}
			p.SE.SumExecRuntime = c.sum
			p.SE.DurAvg = c.dur
			p.SE.durAvgRFC2 = c.dur
			if got := k.isShortTaskAs(p, c.metric); got != c.want {
				t.Errorf("%s, G = %d: %s: is_short_task = %v, want %v", tc.kern, g, c.name, got, c.want)
			}
		}
	}
}

// TestIsShortTaskIdleAndNew: what is_short_task answers for the idle task
// and for a task just forked, found in a run rather than assumed. The
// kernel's idle class never adds to the idle task's se.sum_exec_runtime
// (update_curr_idle does nothing), and the idle task's switches come from
// schedule_idle with its state TASK_RUNNING, so they count in nivcsw, never
// nvcsw; its dur_avg is never sampled (it never sleeps). So
// sum_exec_runtime = nvcsw = dur_avg = 0: the lifetime and RFC v2 forms
// say short (0 <= 0, 0 <= G), the × 8 form not (no dur_avg). A task forked
// and not yet run has the same zeros (__sched_fork), so the same answers
// (patches.md §1 for the lifetime form).
//
// Reference: core.c:__schedule, schedule_idle, __sched_fork,
// idle.c:update_curr_idle (v6.0); patches.md §1.
func TestIsShortTaskIdleAndNew(t *testing.T) {
	r := newRig(t, "hikey", kernels.V60)
	r.spawn("s", 0, 0, SchedNormal, loop(100*engine.Microsecond, 300*engine.Microsecond))
	r.run(20 * engine.Millisecond)
	idle := r.k.Rqs[0].Idle
	if !idle.IsIdleTask() || idle.SE.SumExecRuntime != 0 || idle.Nvcsw != 0 || idle.Nivcsw == 0 || idle.SE.DurAvg != 0 || idle.SE.durAvgRFC2 != 0 {
		t.Fatalf("idle task: sum_exec_runtime %d, nvcsw %d, nivcsw %d, dur_avg %d/%d; want zeros and some involuntary switches",
			idle.SE.SumExecRuntime, idle.Nvcsw, idle.Nivcsw, idle.SE.DurAvg, idle.SE.durAvgRFC2)
	}
	fresh := r.spawn("fresh", 1, 0, SchedNormal, loop(engine.Millisecond, 0))
	if fresh.SE.SumExecRuntime != 0 || fresh.Nvcsw != 0 || fresh.SE.DurAvg != 0 {
		t.Fatalf("forked task: sum_exec_runtime %d, nvcsw %d, dur_avg %d", fresh.SE.SumExecRuntime, fresh.Nvcsw, fresh.SE.DurAvg)
	}
	for _, m := range []ShortTaskMetric{ShortLifetime, ShortDurAvg, ShortDurAvgRFC2} {
		want := m != ShortDurAvg
		if got := r.k.isShortTaskAs(idle, m); got != want {
			t.Errorf("%s: the idle task is short %v, want %v", m, got, want)
		}
		if got := r.k.isShortTaskAs(fresh, m); got != want {
			t.Errorf("%s: a task that never ran is short %v, want %v", m, got, want)
		}
	}
}

// TestBlockedAvgRatelimitPeriod: update_nohz_stats with Joel Fernandes'
// rate limit (patches.md §3) on both sides of its period. The patch
// changes the per-jiffy test
//
//	if (!force && !time_after(jiffies, rq->last_blocked_load_update_tick))
//
// to
//
//	if (!force && !time_after(jiffies, rq->last_blocked_load_update_tick + (HZ/20)))
//
// time_after is strict, so with d = jiffies − last_blocked_load_update_tick
// the refresh is skipped for d <= HZ/20 and happens at d = HZ/20 + 1; HZ/20
// is C's integer division: 12 at the model's default HZ = 250 (not 12.5, nor
// msecs_to_jiffies(50) = 13), 50 at HZ = 1000. Without the patch the refresh
// is skipped at d = 0 and happens at d = 1. force (the v5.12 ILB's forced
// stats update) refreshes at d = 0 either way.
//
// CPU 1 of a HiKey idles with its tick stopped (in nohz.idle_cpus_mask)
// and the blocked load of a task that ran 5 ms and slept; each case sets
// last_blocked_load_update_tick to jiffies − d and calls update_nohz_stats
// at the same instant.
//
// Reference: the patch (LKML, 22 Jan 2021, "sched/fair: Rate limit calls to
// update_blocked_averages() for NOHZ") against fair.c:update_nohz_stats
// (v5.12); include/linux/jiffies.h:time_after.
func TestBlockedAvgRatelimitPeriod(t *testing.T) {
	for _, hz := range []int{0, 1000} { // 0: the baseline's own HZ
		for _, limited := range []bool{false, true} {
			s := MustBaseline(kernels.V512)
			if hz != 0 {
				s.HZ = hz
			}
			if limited {
				if err := ApplyVariant(&s, "blocked-avg-ratelimit"); err != nil {
					t.Fatal(err)
				}
			}
			period := uint64(0)
			if limited {
				period = uint64(s.HZ) / 20
			}
			if s.HZ == 250 && limited && period != 12 {
				t.Fatalf("HZ/20 at HZ=250 is %d", period)
			}
			r := newRigSettings(t, "hikey", s)
			r.spawn("s", 1, 0, SchedNormal, runThenBlock(5*engine.Millisecond))
			r.run(30 * engine.Millisecond)
			k := r.on(0)
			rq := k.Rqs[1]
			type tc struct {
				d       uint64
				force   bool
				refresh bool
			}
			cases := []tc{{period + 1, false, true}, {period, false, false}, {0, true, true}}
			if period > 0 {
				cases = append(cases, tc{period - 1, false, false})
			}
			for _, c := range cases {
				if !rq.HasBlockedLoad || !k.bal.nohz.idleCPUsMask.Test(1) || !rq.IdleCPU() {
					t.Fatalf("HZ=%d: cpu1 has_blocked_load %v, in nohz.idle_cpus_mask %v, idle %v", s.HZ, rq.HasBlockedLoad, k.bal.nohz.idleCPUsMask.Test(1), rq.IdleCPU())
				}
				jiff := k.Jiffies()
				rq.LastBlockedLoadUpdateTick = jiff - c.d
				before := rq.BlockedUpdates
				still := k.updateNohzStatsForce(rq, c.force, BlockedByNohzStats)
				refreshed := rq.BlockedUpdates != before
				if refreshed != c.refresh {
					t.Errorf("HZ=%d, rate limit %v (HZ/20 = %d): jiffies − last = %d, force %v: refreshed %v, want %v",
						s.HZ, limited, period, c.d, c.force, refreshed, c.refresh)
				}
				if refreshed && rq.LastBlockedLoadUpdateTick != jiff {
					t.Errorf("HZ=%d: a refresh stamped %d, want jiffies %d", s.HZ, rq.LastBlockedLoadUpdateTick, jiff)
				}
				if !refreshed && !still {
					t.Errorf("HZ=%d: a skipped refresh reported no blocked load", s.HZ)
				}
			}
		}
	}
}
