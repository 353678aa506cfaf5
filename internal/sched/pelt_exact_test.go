package sched

import (
	"github.com/schedlab/schedlab/internal/kernels"
	"testing"

	"github.com/schedlab/schedlab/internal/cpumask"
	"github.com/schedlab/schedlab/internal/engine"
)

// PELT and util_est checked exactly: every expected number below is worked
// out in the comments from kernel-fair.md §4.2 and §4.7 (pelt.c's integer
// algorithm with the runnable_avg_yN_inv table), with no tolerance.

// TestPELTSumsExact follows one task entity (load 1, weight 1024) through
// four updates, starting at a period boundary with empty sums:
//
//  1. running, 1536 units later: one period crossed, d1 = 1024 (the rest of
//     the old period), d3 = 512. contrib = decay_load(1024, 1) +
//     (LOAD_AVG_MAX − decay_load(LOAD_AVG_MAX, 1) − 1024) + 512 = 1002 +
//     (47742 − 46718 − 1024) + 512 = 1514. load_sum = 1514, runnable_sum =
//     util_sum = 1514·1024 = 1550336, period_contrib = 512. The divider is
//     46718 + 512 = 47230: util_avg = 1550336/47230 = 32, load_avg =
//     1024·1514/47230 = 32.
//  2. running, 1536 units more: 512 + 1536 = 2048, two periods crossed, d1 =
//     1024 − 512 = 512, d3 = 0. The sums decay first: decay_load(1550336, 2)
//     = 1484606, decay_load(1514, 2) = 1449. contrib = decay_load(512, 2) +
//     (47742 − decay_load(47742, 2) − 1024) + 0 = 490 + (47742 − 45717 −
//  1024. = 1491. load_sum = 1449 + 1491 = 2940, util_sum = 1484606 +
//     1491·1024 = 3011390, period_contrib = 0; divider 46718: util_avg =
//     64, load_avg = 1024·2940/46718 = 64.
//  3. blocked, 512 units later: no period crossed, nothing added (load 0),
//     period_contrib = 512, the averages are not recomputed.
//  4. blocked, 1536 units more: 2048 again, two periods: only decay.
//     util_sum = decay_load(3011390, 2) = 2883716, load_sum =
//     decay_load(2940, 2) = 2815, period_contrib = 0: util_avg = 2883716 /
//     46718 = 61, load_avg = 1024·2815/46718 = 61.
//
// Reference: pelt.c:decay_load, __accumulate_pelt_segments, accumulate_sum,
// ___update_load_sum, ___update_load_avg (v6.19).
func TestPELTSumsExact(t *testing.T) {
	var sa SchedAvg
	now := uint64(1 << 30)
	sa.LastUpdateTime = now
	for i, st := range []struct {
		units            uint64
		running          bool
		crossed          bool
		loadSum, utilSum uint64
		pc               uint32
		loadAvg, utilAvg uint64
	}{
		{1536, true, true, 1514, 1550336, 512, 32, 32},
		{1536, true, true, 2940, 3011390, 0, 64, 64},
		{512, false, false, 2940, 3011390, 512, 64, 64},
		{1536, false, true, 2815, 2883716, 0, 61, 61},
	} {
		now += st.units << 10
		var load, runnable uint64
		if st.running {
			load, runnable = 1, 1
		}
		if got := updateLoadSum(now, &sa, load, runnable, st.running); got != st.crossed {
			t.Fatalf("update %d: crossed a period = %v, want %v", i+1, got, st.crossed)
		}
		if st.crossed {
			updateLoadAvg(&sa, 1024)
		}
		if sa.LoadSum != st.loadSum || uint64(sa.UtilSum) != st.utilSum || sa.RunnableSum != st.utilSum || sa.PeriodContrib != st.pc {
			t.Errorf("update %d: load_sum %d util_sum %d runnable_sum %d period_contrib %d, want %d %d %d %d",
				i+1, sa.LoadSum, sa.UtilSum, sa.RunnableSum, sa.PeriodContrib, st.loadSum, st.utilSum, st.utilSum, st.pc)
		}
		if sa.LoadAvg != st.loadAvg || sa.UtilAvg != st.utilAvg || sa.RunnableAvg != st.utilAvg {
			t.Errorf("update %d: load_avg %d util_avg %d runnable_avg %d, want %d %d %d",
				i+1, sa.LoadAvg, sa.UtilAvg, sa.RunnableAvg, st.loadAvg, st.utilAvg, st.utilAvg)
		}
	}
}

// TestPELTDividerExact: ___update_load_avg divides by get_pelt_divider =
// PELT_MIN_DIVIDER + period_contrib = 46718 + period_contrib, so a sum that
// is an exact multiple of it gives that multiple and one unit less gives
// one less. With period_contrib 100 (divider 46818): util_sum 512·46818 =
// 23970816 → 512 and 23970815 → 511; load_sum 46818 of weight 1024 →
// 1024·46818/46818 = 1024, 46817 → 1023.
// Reference: pelt.h:get_pelt_divider, pelt.c:___update_load_avg (v6.19).
func TestPELTDividerExact(t *testing.T) {
	for _, tc := range []struct {
		sum          uint64
		want         uint64
		loadSum      uint64
		wantLoadAvg1 uint64
	}{
		{512 * 46818, 512, 46818, 1024},
		{512*46818 - 1, 511, 46817, 1023},
	} {
		sa := SchedAvg{PeriodContrib: 100, UtilSum: uint32(tc.sum), RunnableSum: tc.sum, LoadSum: tc.loadSum}
		updateLoadAvg(&sa, 1024)
		if sa.UtilAvg != tc.want || sa.RunnableAvg != tc.want || sa.LoadAvg != tc.wantLoadAvg1 {
			t.Errorf("sums %d/%d with period_contrib 100: util_avg %d runnable_avg %d load_avg %d, want %d %d %d",
				tc.sum, tc.loadSum, sa.UtilAvg, sa.RunnableAvg, sa.LoadAvg, tc.want, tc.want, tc.wantLoadAvg1)
		}
	}
}

// TestAttachSumsExact: a task forked at 2.3 ms onto an idle HiKey CPU in
// cgroup /a. post_init_entity_util_avg gives it util_avg = runnable_avg =
// (1024 − 0)/2 = 512 and init_entity_runnable_average load_avg = its
// weight, 1024. Its first enqueue attaches it to /a's queue on CPU 0
// (attach_entity_load_avg): it takes the queue's period_contrib pc and
// rebuilds its sums with the queue's divider d = 46718 + pc: util_sum =
// runnable_sum = 512·d, load_sum = 1024·d/1024 = d; the queue, empty
// before, then holds exactly those sums (its load_sum weighted:
// 1024·d). Propagation then gives the group entity /a the queue's
// util_avg, 512, and util_sum = 512·(46718 + pc of the root queue)
// (update_tg_cfs_util uses the parent's divider).
// Reference: fair.c:post_init_entity_util_avg, attach_entity_load_avg,
// update_tg_cfs_util (v6.19).
func TestAttachSumsExact(t *testing.T) {
	k := newTestKernel(t, "hikey", kernels.V619)
	tg, err := k.CreateGroup(nil, "a", 100)
	if err != nil {
		t.Fatal(err)
	}
	k.Eng.RunUntil(2300 * engine.Microsecond)
	p, err := k.Fork(TaskSpec{Comm: "p", CPU: 0, Allowed: cpumask.Of(8, 0), Group: tg, Prog: loop(engine.Millisecond, engine.Millisecond)})
	if err != nil {
		t.Fatal(err)
	}
	a, gq, root := &p.SE.Avg, &tg.CfsRq[0].Avg, &k.Rqs[0].CFS.Avg
	d := uint64(PeltMinDivider + gq.PeriodContrib)
	if gq.PeriodContrib == 0 {
		t.Fatal("the group queue's period_contrib is 0: the test would not see the period_contrib term")
	}
	if a.UtilAvg != 512 || a.RunnableAvg != 512 || a.LoadAvg != 1024 || a.PeriodContrib != gq.PeriodContrib {
		t.Fatalf("task averages %d/%d/%d, period_contrib %d (queue %d)", a.UtilAvg, a.RunnableAvg, a.LoadAvg, a.PeriodContrib, gq.PeriodContrib)
	}
	if uint64(a.UtilSum) != 512*d || a.RunnableSum != 512*d || a.LoadSum != d {
		t.Errorf("task sums util %d runnable %d load %d, want %d %d %d (divider %d)", a.UtilSum, a.RunnableSum, a.LoadSum, 512*d, 512*d, d, d)
	}
	if uint64(gq.UtilSum) != 512*d || gq.RunnableSum != 512*d || gq.LoadSum != 1024*d || gq.UtilAvg != 512 {
		t.Errorf("/a queue sums util %d runnable %d load %d (util_avg %d), want %d %d %d (512)", gq.UtilSum, gq.RunnableSum, gq.LoadSum, gq.UtilAvg, 512*d, 512*d, 1024*d)
	}
	ge := &tg.SE[0].Avg
	if dr := uint64(PeltMinDivider + root.PeriodContrib); ge.UtilAvg != 512 || uint64(ge.UtilSum) != 512*dr {
		t.Errorf("group entity util_avg %d util_sum %d, want 512 and %d (root divider %d)", ge.UtilAvg, ge.UtilSum, 512*dr, dr)
	}
}

// TestUtilEstUpdateRules applies util_est_update at a task's sleep to each
// case of its definition (v6.19, UTIL_EST_MARGIN = 1024/100 = 10,
// UTIL_EST_WEIGHT_SHIFT = 2, the UTIL_AVG_UNCHANGED flag in bit 31):
//
//   - flag still set (no PELT update since the enqueue): unchanged;
//   - not a sleep (a migration's dequeue): unchanged;
//   - ewma ≤ util_avg: ewma = util_avg (300 → 400);
//   - ewma − util_avg < 10: kept (400 with util 391);
//   - util_avg + 10 < runnable_avg (the task waited): kept (400, util 300,
//     runnable 311);
//   - otherwise ewma = (4·ewma − (ewma − util))/4: 400 with util 300 →
//     (1600 − 100)/4 = 375; 401 with util 300 → (1604 − 101)/4 = 375
//     (1503/4 truncated); 1000 with util 0 → 750.
//
// The result always carries the flag again. util_est_enqueue and
// util_est_dequeue add and remove the task's estimate from the root
// queue's, flooring at 0.
// Reference: fair.c:util_est_update, util_est_enqueue, util_est_dequeue,
// cfs_se_util_change (v6.19).
func TestUtilEstUpdateRules(t *testing.T) {
	k := newTestKernel(t, "hikey", kernels.V619)
	c := k.Rqs[0].CFS
	for _, tc := range []struct {
		name                 string
		ewma                 uint32
		flag                 bool
		sleep                bool
		util, runnable, want uint64
	}{
		{"flag set: PELT unchanged since enqueue", 300, true, true, 400, 400, 300},
		{"not a sleep", 300, false, false, 400, 400, 300},
		{"increase: fast up", 300, false, true, 400, 400, 400},
		{"within the margin", 400, false, true, 391, 391, 400},
		{"runnable above util", 400, false, true, 300, 311, 400},
		{"runnable at the margin decays", 400, false, true, 300, 310, 375},
		{"decay by a quarter", 400, false, true, 300, 300, 375},
		{"decay truncates", 401, false, true, 300, 300, 375},
		{"decay to zero util", 1000, false, true, 0, 0, 750},
	} {
		p := &Task{}
		p.SE.task = p
		p.SE.Avg.UtilEst = tc.ewma
		if tc.flag {
			p.SE.Avg.UtilEst |= utilAvgUnchanged
		}
		p.SE.Avg.UtilAvg, p.SE.Avg.RunnableAvg = tc.util, tc.runnable
		k.utilEstUpdate(c, p, tc.sleep)
		got := p.SE.Avg.UtilEst
		wantFlag := tc.flag || tc.sleep
		if uint64(got&^utilAvgUnchanged) != tc.want || (got&utilAvgUnchanged != 0) != wantFlag {
			t.Errorf("%s: util_est %d (flag %v), want %d (flag %v)", tc.name, got&^utilAvgUnchanged, got&utilAvgUnchanged != 0, tc.want, wantFlag)
		}
	}
	p := &Task{}
	p.SE.Avg.UtilEst = 200 | utilAvgUnchanged
	c.Avg.UtilEst = 50
	c.sgStatsChanged()
	k.utilEstEnqueue(c, p)
	if c.Avg.UtilEst != 250 {
		t.Errorf("util_est_enqueue: root util_est %d, want 50 + 200", c.Avg.UtilEst)
	}
	c.Avg.UtilEst = 150
	c.sgStatsChanged()
	k.utilEstDequeue(c, p)
	if c.Avg.UtilEst != 0 {
		t.Errorf("util_est_dequeue: root util_est %d, want max(150 − 200, 0)", c.Avg.UtilEst)
	}
}

// TestUtilEstFollowsDutyCycle checks every util_est update of a real run
// against the rules of TestUtilEstUpdateRules. A task on CPU 3 of a HiKey
// (no cost model) runs 8 ms and sleeps 8 ms for a second, so its util_avg
// swings around ≈ 468..556, then runs 1 ms every 16 ms, so what it shows at
// each dequeue falls towards ≈ 60 and util_est must decay by a quarter of
// the difference per sleep (the task is alone and wakes on its own CPU:
// runnable_avg equals util_avg, so the "runnable above util" rule never
// holds). util_est_update runs in dequeue_task_fair before the dequeue
// updates PELT, so it sees util_avg, runnable_avg and the
// UTIL_AVG_UNCHANGED flag as the previous event left them (PELT changes
// only inside events); the test records them after every event and, at
// each sleep, computes the new util_est from them. The root queue's
// util_est holds the task's estimate while it is queued, 0 while it sleeps.
// Reference: fair.c:util_est_update, util_est_enqueue, util_est_dequeue,
// dequeue_task_fair (v6.19).
func TestUtilEstFollowsDutyCycle(t *testing.T) {
	k := newTestKernel(t, "hikey", kernels.V619)
	n := 0
	p, err := k.Fork(TaskSpec{Comm: "rs", Allowed: cpumask.Of(8, 3), CPU: 3, Prog: ProgramFunc(func(k *Kernel, t *Task) Op {
		n++
		run, sleep := 8*engine.Millisecond, 8*engine.Millisecond
		if k.Now() >= engine.Second {
			run, sleep = engine.Millisecond, 15*engine.Millisecond
		}
		if n%2 == 1 {
			return Run(run)
		}
		return Sleep(sleep)
	})})
	if err != nil {
		t.Fatal(err)
	}
	var seen SchedAvg // p's PELT state at the end of the previous event
	k.Hooks.AfterEvent = func(k *Kernel) { seen = p.SE.Avg }
	var sleeps, fastUp, kept, decayed int
	k.Hooks.Switch = func(cpu cpumask.CPU, prev *Task, st TaskState, next *Task) {
		rootEst := k.Rqs[3].CFS.Avg.UtilEst
		if prev == p && st == TaskInterruptible {
			sleeps++
			ewma, u := uint64(seen.UtilEst), seen.UtilAvg
			switch {
			case ewma&utilAvgUnchanged != 0:
				kept++
			case ewma <= u:
				ewma = u
				fastUp++
			case ewma-u < 10 || u+10 < seen.RunnableAvg:
				kept++
			default:
				ewma = (4*ewma - (ewma - u)) / 4
				decayed++
			}
			ewma &^= utilAvgUnchanged
			// (The flag util_est_update sets may already be cleared
			// again: the dequeue's own PELT update that follows it
			// calls cfs_se_util_change when it crosses a period.)
			if got := uint64(p.SE.Avg.UtilEst &^ utilAvgUnchanged); got != ewma {
				t.Fatalf("sleep %d at %v: util_est %d, want %d from util_est %d, util_avg %d, runnable_avg %d",
					sleeps, k.Now(), got, ewma, seen.UtilEst&^utilAvgUnchanged, u, seen.RunnableAvg)
			}
			if rootEst != 0 {
				t.Errorf("sleep %d: root util_est %d while the task sleeps", sleeps, rootEst)
			}
		}
		if next == p && sleeps > 0 && uint64(rootEst) != uint64(p.SE.Avg.UtilEst&^utilAvgUnchanged) {
			t.Errorf("after sleep %d: root util_est %d, the task's %d", sleeps, rootEst, p.SE.Avg.UtilEst&^utilAvgUnchanged)
		}
	}
	k.Eng.RunUntil(2 * engine.Second)
	t.Logf("%d sleeps: %d fast-up, %d kept, %d decayed; util_est %d at the end, util_avg %d",
		sleeps, fastUp, kept, decayed, p.SE.Avg.UtilEst&^utilAvgUnchanged, p.SE.Avg.UtilAvg)
	// The light phase settles at util_avg ≈ 1024·(1 − y^a)/(1 − y^c) ≈ 74
	// at the end of a run (a = 1 ms, c = 16 ms, in 1.048576 ms periods)
	// and ≈ 74·y^(15 ms) ≈ 55 at the end of a sleep; after ≈ 60 sleeps
	// util_est has come down from ≈ 550 to the dequeued values, between
	// the trough and the peak plus the margin.
	if fastUp == 0 || decayed < 5 || sleeps < 100 {
		t.Errorf("the run did not exercise util_est: %d fast-up, %d decayed updates in %d sleeps", fastUp, decayed, sleeps)
	}
	if e := p.SE.Avg.UtilEst &^ utilAvgUnchanged; e < 55 || e > 74+utilEstMargin+1 {
		t.Errorf("util_est %d after the light phase, want it between ≈ 55 and ≈ 74 + 10", e)
	}
}
