package sched

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/schedlab/schedlab/internal/cpumask"
	"github.com/schedlab/schedlab/internal/engine"
	"github.com/schedlab/schedlab/internal/kernels"
)

// variantSettings is kernel's baseline with the variant name applied, or
// its comparison kernel with base.
func variantSettings(t *testing.T, kernel, name string, base bool) Settings {
	t.Helper()
	s := MustBaseline(kernel)
	apply := ApplyVariant
	if base {
		apply = ApplyVariantBase
	}
	if err := apply(&s, name); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestVariantBranches: every variant names at least one branch, every
// branch belongs to a variant, and a branch is named after a kernel
// function its variant touches ("function:tag", unique).
func TestVariantBranches(t *testing.T) {
	used := map[Branch]bool{}
	for _, v := range Variants() {
		if len(v.Branches) == 0 {
			t.Errorf("%s: no branch counted", v.Name)
		}
		for _, b := range v.Branches {
			used[b] = true
			fn, tag, ok := strings.Cut(b.Info().Name, ":")
			if !ok || tag == "" {
				t.Errorf("%s: branch name %q is not function:tag", v.Name, b.Info().Name)
			}
			touched := false
			for _, f := range v.Touches {
				touched = touched || f == fn
			}
			if !touched {
				t.Errorf("%s: branch %s is in %s, which the variant does not touch (%v)", v.Name, b, fn, v.Touches)
			}
		}
	}
	names := map[string]bool{}
	for b := Branch(0); b < NrBranches; b++ {
		if !used[b] {
			t.Errorf("branch %s belongs to no variant", b)
		}
		if names[b.String()] || b.Info().Description == "" {
			t.Errorf("branch %d: name %q repeated or no description", b, b)
		}
		names[b.String()] = true
	}
}

// TestBlockedRatelimitBranch: update_nohz_stats' unforced test at the
// rate limit's edges. The patch skips the refresh unless
// time_after(jiffies, last_blocked_load_update_tick + HZ/20); the kernel
// it is compared with unless time_after(jiffies, last_...); time_after is
// strict. So with d = jiffies − last: the patch skips (taken) for d <= HZ/20,
// the equality included, and that changes the decision for 1 <= d <= HZ/20
// (d = 0 is skipped by both); a forced update (the ILB's) is never
// limited. The comparison kernel counts nothing.
//
// Reference: "sched/fair: Rate limit calls to update_blocked_averages()
// for NOHZ" (patches.md §3) against fair.c:update_nohz_stats (v5.12).
func TestBlockedRatelimitBranch(t *testing.T) {
	for _, hz := range []int{100, 250, 1000} {
		limit := uint64(hz / 20)
		for _, patched := range []bool{false, true} {
			for _, d := range []uint64{0, 1, limit - 1, limit, limit + 1} {
				for _, force := range []bool{false, true} {
					s := variantSettings(t, kernels.V512, "blocked-avg-ratelimit", !patched)
					s.HZ = hz
					k := newRigSettings(t, "hikey", s).k
					rq := k.Rqs[3]
					rq.HasBlockedLoad = true
					k.bal.nohz.idleCPUsMask.Set(3)
					rq.LastBlockedLoadUpdateTick = k.Jiffies() - d
					k.thisCPU = 0
					calls := k.BalanceStats.UpdateBlockedAverages.Calls
					k.updateNohzStatsForce(rq, force, BlockedByNewidleStats)
					refreshed := k.BalanceStats.UpdateBlockedAverages.Calls != calls
					limited := patched && !force && d <= limit
					wantRefresh := force || (!limited && d > 0)
					want := BranchCounter{}
					if limited {
						want.Taken = 1
						if d > 0 {
							want.Changed = 1
						}
					}
					got := k.Branches[BranchBlockedRatelimit]
					if refreshed != wantRefresh || got != want {
						t.Errorf("HZ %d, patched %v, force %v, jiffies = last + %d (limit %d): refreshed %v, counted %+v; want %v, %+v",
							hz, patched, force, d, limit, refreshed, got, wantRefresh, want)
					}
				}
			}
		}
	}
}

// TestNewidleNoStatsBranch: blocked-load-outside-newidle removes v5.12's
// refresh of the idle CPUs' blocked load from newly idle balance
// (LBF_NOHZ_STATS, set when nohz.has_blocked): a newly idle
// update_sd_lb_stats with has_blocked set is the branch taken, and it
// changed the decision when v5.12's update_nohz_stats(rq, false) would
// have refreshed a CPU of the domain: one with blocked load, in
// nohz.idle_cpus_mask, last refreshed before this jiffy (time_after is
// strict: refreshed this jiffy is not due). Neither v5.12 itself nor a
// kernel without the refresh in its baseline (v6.19) counts.
//
// Reference: Vincent Guittot's "sched/fair: Remove update of blocked
// load from newidle_balance" (v5.13) against fair.c:update_sd_lb_stats,
// update_sg_lb_stats and update_nohz_stats (v5.12).
func TestNewidleNoStatsBranch(t *testing.T) {
	for _, tc := range []struct {
		name       string
		s          Settings
		hasBlocked bool
		blocked    bool   // cpu2 has blocked load
		age        uint64 // jiffies since cpu2's last refresh
		want       BranchCounter
	}{
		{"variant, nothing pending", variantSettings(t, kernels.V512, "blocked-load-outside-newidle", false), false, true, 1, BranchCounter{}},
		{"variant, no CPU with blocked load", variantSettings(t, kernels.V512, "blocked-load-outside-newidle", false), true, false, 1, BranchCounter{1, 0}},
		{"variant, refreshed this jiffy", variantSettings(t, kernels.V512, "blocked-load-outside-newidle", false), true, true, 0, BranchCounter{1, 0}},
		{"variant, due", variantSettings(t, kernels.V512, "blocked-load-outside-newidle", false), true, true, 1, BranchCounter{1, 1}},
		{"v5.12", variantSettings(t, kernels.V512, "blocked-load-outside-newidle", true), true, true, 1, BranchCounter{}},
		{"v6.19", MustBaseline(kernels.V619), true, true, 1, BranchCounter{}},
	} {
		k := newRigSettings(t, "hikey", tc.s).k
		sd := k.Domains(0)[0]
		for cpu := range sd.T.Span.AndCPUs(sd.T.Span) {
			k.Rqs[cpu].HasBlockedLoad = false
		}
		if !k.bal.nohz.idleCPUsMask.Test(2) {
			t.Fatalf("%s: cpu2 is not in nohz.idle_cpus_mask after boot", tc.name)
		}
		rq := k.Rqs[2]
		rq.HasBlockedLoad = tc.blocked
		rq.LastBlockedLoadUpdateTick = k.Jiffies() - tc.age
		k.bal.nohz.hasBlocked = tc.hasBlocked
		env := &lbEnv{sd: sd, dstCPU: 0, dstRq: k.Rqs[0], idle: CPUNewlyIdle, cpus: sd.T.Span.Clone()}
		var sds sdLbStats
		initSdLbStats(&sds)
		k.thisCPU = 0
		mark := k.lbBegin(0)
		k.updateSdLbStats(env, &sds)
		k.lbEnd(mark)
		if got := k.Branches[BranchNewidleNoStats]; got != tc.want {
			t.Errorf("%s: counted %+v, want %+v", tc.name, got, tc.want)
		}
	}
}

// TestNoTgPropagateBranch: no-tg-propagate counts each attach and detach
// on a task group's cfs_rq that add_tg_cfs_propagate would have marked
// for propagation; the root cfs_rq has no group entity to propagate to,
// so what happens there is not counted. Moving a sleeping task from the
// root to a group is a detach from the root's cfs_rq and an attach to
// the group's (core.c:sched_move_task, task_change_group_fair): one; back,
// one. The kernel with propagation counts nothing.
//
// Reference: "sched: reflect sched_entity move into task_group's load"
// (patches.md §4) against fair.c:attach_entity_load_avg,
// detach_entity_load_avg (v6.19).
func TestNoTgPropagateBranch(t *testing.T) {
	for _, patched := range []bool{false, true} {
		r := newRigSettings(t, "hikey", variantSettings(t, kernels.V619, "no-tg-propagate", !patched))
		k := r.k
		tg, err := k.CreateGroup(nil, "app", 100)
		if err != nil {
			t.Fatal(err)
		}
		p := r.sleeper(1, 100*engine.Microsecond)
		r.run(5 * engine.Millisecond)
		if p.OnRq != 0 {
			t.Fatal("the task did not go to sleep")
		}
		before := k.Branches[BranchNoTgPropagate].Taken
		k.MoveTask(p, tg)
		toGroup := k.Branches[BranchNoTgPropagate].Taken - before
		k.MoveTask(p, k.RootTG)
		back := k.Branches[BranchNoTgPropagate].Taken - before - toGroup
		want := uint64(btoi(patched))
		if toGroup != want || back != want || k.Branches[BranchNoTgPropagate].Changed != 0 {
			t.Errorf("no-tg-propagate %v: counted %d moving into the group, %d moving out; want %d each", patched, toGroup, back, want)
		}
	}
}

// TestIdleCoresNoSMTBranch: without SMT the patched test_idle_cores
// answers false without reading has_idle_cores (taken); the comparison
// kernel reads it, so the answer changes only where the hint is set —
// which nothing does on a machine without SMT (set here by hand). On an
// SMT machine the patch's check does not return.
//
// Reference: "sched/fair: Optimize test_idle_cores() for !SMT"
// (patches.md §2) against fair.c:test_idle_cores (v5.12).
func TestIdleCoresNoSMTBranch(t *testing.T) {
	for _, m := range []struct {
		name string
		smt  bool
	}{{"hikey", false}, {"zen3-2s-nps1", true}} {
		k := newRigSettings(t, m.name, variantSettings(t, kernels.V512, "idle-cores-nosmt", false)).k
		k.thisCPU = 0
		for _, hint := range []bool{false, true} {
			k.Branches = BranchCounters{}
			k.SdLLCShared(0).HasIdleCores = hint
			got := k.testIdleCores(0)
			want := BranchCounter{}
			if !m.smt {
				want = BranchCounter{1, uint64(btoi(hint))}
			}
			if got != (m.smt && hint) || k.Branches[BranchIdleCoresNoSMT] != want {
				t.Errorf("%s, has_idle_cores %v: test_idle_cores = %v, counted %+v; want %v, %+v",
					m.name, hint, got, k.Branches[BranchIdleCoresNoSMT], m.smt && hint, want)
			}
		}
	}
}

// TestShortScanBranchBudget: the short-task skip of select_idle_cpu
// (short-task-v3: no idle core, 5 × nr < 3 × llc_weight, the wakee and
// curr(target) short) returns target; it changed the decision if the
// scan it skipped — SIS_UTIL's, nr = nr_idle_scan + 1, whose "--nr <= 0"
// examines nr_idle_scan CPUs from target+1 — would have found an idle
// CPU. On zen3-2s-nps1 target 0's LLC is scanned 1, 2, …, 7, 128, …: with
// CPUs 1..j−1 busy and j idle, the scan finds j when j <= nr_idle_scan.
// The edges: j = nr_idle_scan (changed) and j = nr_idle_scan + 1 (not).
//
// Reference: the short-task postings (patches.md §1) against
// fair.c:select_idle_cpu (v6.0, SIS_UTIL).
func TestShortScanBranchBudget(t *testing.T) {
	for _, n := range []int{2, 5} {
		for _, j := range []int{n, n + 1} {
			t.Run(fmt.Sprintf("nr_idle_scan=%d/idle=cpu%d", n, j), func(t *testing.T) {
				r := newRigSettings(t, "zen3-2s-nps1", variantSettings(t, kernels.V60, "short-task-v3", false))
				for c := 1; c < j; c++ {
					r.hog(c)
				}
				p := r.spawn("p", 8, 0, SchedNormal, runThenBlock(100*engine.Microsecond))
				var got cpumask.CPU
				var counted BranchCounter
				probed, wn := false, 0
				r.spawn("w", 0, 0, SchedNormal, ProgramFunc(func(k *Kernel, w *Task) Op {
					if k.Now() >= 50*engine.Millisecond && !probed {
						probed = true
						if !k.isShortTask(w) || !k.isShortTask(p) || p.OnRq != 0 || !k.idleOrSchedIdle(cpumask.CPU(j)) {
							t.Fatalf("premises: w short %v, p short %v, p on_rq %d, cpu%d idle %v",
								k.isShortTask(w), k.isShortTask(p), p.OnRq, j, k.idleOrSchedIdle(cpumask.CPU(j)))
						}
						r.unpin(p)
						k.SdLLCShared(0).NrIdleScan = n
						k.setIdleCores(0, false)
						k.Branches = BranchCounters{}
						got = k.selectIdleCPU(p, k.sdLLC(0), false, 0)
						counted = k.Branches[BranchShortScan]
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
				want := BranchCounter{1, uint64(btoi(j <= n))}
				if got != 0 || counted != want {
					t.Errorf("select_idle_cpu = %v, counted %+v; want cpu0 (target), %+v", got, counted, want)
				}
			})
		}
	}
}

// TestShortAffineBranch: wake_affine_idle's short-task hunk chose this_cpu
// (taken); it changed wake_affine's choice unless the comparison kernel
// would have chosen this_cpu too. There, the RFC's hunk, which comes
// before the prev_cpu-idle check, would have given way to an idle
// prev_cpu; the later hunks (v1–v4) come after that check, so their
// comparison kernel has no opinion and wake_affine_weight decides: with
// prev_cpu running a nice −20 hog (load ≈ 60 000) this_cpu's load (a
// short nice-0 task at 50 %) plus the wakee's is far below prev's ×
// 108/100 (WA_BIAS, imbalance_pct 117), so this_cpu (not changed); with a
// nice 19 hog (load ≤ 15) far above it, so prev_cpu (changed). An idle
// prev_cpu that a nice −20 task left 10 ms ago keeps most of its load, so
// wake_affine_weight would choose this_cpu: the RFC's comparison kernel
// still takes the idle prev_cpu first (changed). The
// comparison kernel's wake_affine_weight reads task_h_load without
// updating any cfs_rq's h_load.
//
// Reference: the short-task postings (patches.md §1) against
// fair.c:wake_affine_idle and wake_affine_weight (v6.0).
func TestShortAffineBranch(t *testing.T) {
	for _, tc := range []struct {
		variant string
		prevHog int  // nice of the hog on prev_cpu; 99: prev idle
		sleeps  bool // the hog blocks after 40 ms
		want    BranchCounter
		wantCPU cpumask.CPU
	}{
		{"short-task-v3", -20, false, BranchCounter{1, 0}, 0},
		{"short-task-v3", 19, false, BranchCounter{1, 1}, 0},
		{"short-task-v3", 99, false, BranchCounter{}, 2},
		{"short-task-rfc", 99, false, BranchCounter{1, 1}, 0},
		{"short-task-rfc", -20, false, BranchCounter{1, 0}, 0},
		{"short-task-rfc", -20, true, BranchCounter{1, 1}, 0},
		{"short-task-v3", -20, true, BranchCounter{}, 2},
	} {
		name := fmt.Sprintf("%s/prev-nice=%d/sleeps=%v", tc.variant, tc.prevHog, tc.sleeps)
		t.Run(name, func(t *testing.T) {
			r := newRigSettings(t, "zen3-2s-nps1", variantSettings(t, kernels.V60, tc.variant, false))
			switch {
			case tc.sleeps:
				r.spawn("hog", 2, tc.prevHog, SchedNormal, runThenBlock(40*engine.Millisecond))
			case tc.prevHog != 99:
				r.spawn("hog", 2, tc.prevHog, SchedNormal, loop(engine.Second, 0))
			}
			p := r.spawn("p", 3, 0, SchedNormal, runThenBlock(100*engine.Microsecond))
			var got cpumask.CPU
			var counted BranchCounter
			var stamps [2]uint64
			probed, wn := false, 0
			r.spawn("w", 0, 0, SchedNormal, ProgramFunc(func(k *Kernel, w *Task) Op {
				if k.Now() >= 50*engine.Millisecond && !probed {
					probed = true
					if !k.isShortTask(w) || nrRunningNotDelayed(k.Rqs[0]) != 1 || p.OnRq != 0 || k.availableIdleCPU(2) != (tc.prevHog == 99 || tc.sleeps) {
						t.Fatalf("premises: w short %v, nr_running(0) %d, p on_rq %d, prev idle %v", k.isShortTask(w), nrRunningNotDelayed(k.Rqs[0]), p.OnRq, k.availableIdleCPU(2))
					}
					sd := k.Domains(0)[0]
					for !sd.T.Span.Test(2) {
						sd = sd.Parent
					}
					if tc.sleeps && k.wakeAffineWeightPeek(sd, p, 0, 2, false, true) != 0 {
						t.Fatal("premise: wake_affine_weight would not choose this_cpu")
					}
					r.unpin(p)
					k.Branches = BranchCounters{}
					stamps = [2]uint64{k.Rqs[0].CFS.LastHLoadUpdate, k.Rqs[2].CFS.LastHLoadUpdate}
					k.affine = AffineSameCPU // as select_task_rq_fair sets it
					got = k.wakeAffine(sd, p, 0, 2, false)
					counted = k.Branches[BranchShortAffine]
					if s := [2]uint64{k.Rqs[0].CFS.LastHLoadUpdate, k.Rqs[2].CFS.LastHLoadUpdate}; s != stamps {
						t.Errorf("counting updated h_load: stamps %v → %v", stamps, s)
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
			if got != tc.wantCPU || counted != tc.want {
				t.Errorf("wake_affine = %v, counted %+v; want cpu%d, %+v", got, counted, tc.wantCPU, tc.want)
			}
		})
	}
}

// TestHLoadPeek: cfsRqHLoadPeek gives every cfs_rq the h_load that
// update_cfs_rq_h_load then stores, in a hierarchy two groups deep, with
// and without fresh ancestors, over several jiffies.
func TestHLoadPeek(t *testing.T) {
	r := newRigSettings(t, "hikey", MustBaseline(kernels.V619))
	k := r.k
	a, err := k.CreateGroup(nil, "a", 100)
	if err != nil {
		t.Fatal(err)
	}
	b, err := k.CreateGroup(a, "b", 300)
	if err != nil {
		t.Fatal(err)
	}
	for i, tg := range []*TaskGroup{k.RootTG, a, b, b, a} {
		if _, err := k.Fork(TaskSpec{Comm: "t", Group: tg, CPU: cpumask.CPU(i % 2), Prog: loop(3*engine.Millisecond, 2*engine.Millisecond)}); err != nil {
			t.Fatal(err)
		}
	}
	for step := 0; step < 5; step++ {
		r.run(7 * engine.Millisecond)
		for cpu := 0; cpu < 2; cpu++ {
			// Leaf first, then its ancestors (fresh after it), then
			// the middle one first at the next step.
			order := []*TaskGroup{b, a, k.RootTG}
			if step%2 == 1 {
				order = []*TaskGroup{a, b, k.RootTG}
			}
			for _, tg := range order {
				c := tg.CfsRq[cpu]
				want := k.cfsRqHLoadPeek(c)
				k.updateCfsRqHLoad(c)
				if c.HLoad != want {
					t.Errorf("step %d, cpu%d, %s: peek %d, update_cfs_rq_h_load %d", step, cpu, tg.Name, want, c.HLoad)
				}
			}
		}
	}
}

// TestSelectIdleCPUDry: a dry select_idle_cpu answers as the real one
// does and changes nothing the real one changes: wake_stamp,
// wake_avg_idle, avg_scan_cost (SIS_PROP on: the v5.17-rc tip of
// sis-util-v2's comparison kernel), has_idle_cores, the scan counters.
func TestSelectIdleCPUDry(t *testing.T) {
	for _, idleCore := range []bool{false, true} {
		r := newRigSettings(t, "zen3-2s-nps1", variantSettings(t, kernels.V60, "sis-util-v2", true))
		k := r.k
		for _, c := range []int{1, 2, 3, 130, 131, 4, 5} {
			r.hog(c)
		}
		p := r.sleeper(64, 100*engine.Microsecond)
		r.run(5 * engine.Millisecond)
		r.unpin(p)
		k.setIdleCores(1, idleCore)
		rq, llc := k.Rqs[1], k.sdLLC(1)
		type state struct {
			stamp, avgIdle, avgCost, scans, scanned uint64
			idleCores                               bool
			why                                     Reason
		}
		now := func() state {
			return state{rq.WakeStamp, rq.WakeAvgIdle, llc.AvgScanCost, rq.Wakeup.SISScans, rq.Wakeup.SISScanned, k.SdLLCShared(1).HasIdleCores, k.why}
		}
		before := now()
		dry := r.on(1).selectIdleCPUDry(p, llc, idleCore, 1)
		if after := now(); after != before {
			t.Errorf("has_idle_cores %v: the dry run changed %+v into %+v", idleCore, before, after)
		}
		if real := r.on(1).selectIdleCPU(p, llc, idleCore, 1); real != dry || real == cpumask.None {
			t.Errorf("has_idle_cores %v: dry %v, real %v", idleCore, dry, real)
		}
		if after := now(); after == before {
			t.Errorf("has_idle_cores %v: the real run changed nothing, so the check above shows nothing", idleCore)
		}
	}
}

// TestVariantBranchesDocumented: docs/variants.md's table of branches
// names every variant's every branch on one row with the variant.
func TestVariantBranchesDocumented(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "variants.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range Variants() {
		for _, b := range v.Branches {
			found := false
			for _, line := range strings.Split(string(doc), "\n") {
				if !strings.HasPrefix(line, "| ") || !strings.Contains(line, "`"+b.String()+"`") {
					continue
				}
				// A row names variants in full or by their last part
				// after the first of a family ("`short-task-rfc`, `-v1`").
				i := strings.LastIndex(v.Name, "-")
				if strings.Contains(line, "`"+v.Name+"`") || (strings.Contains(line, "`"+v.Name[:i+1]) && strings.Contains(line, "`"+v.Name[i:]+"`")) {
					found = true
				}
			}
			if !found {
				t.Errorf("docs/variants.md has no row for %s's branch %s", v.Name, b)
			}
		}
	}
}
