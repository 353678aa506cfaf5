package sched

import (
	"strings"
	"testing"

	"github.com/schedlab/schedlab/internal/cpumask"
	"github.com/schedlab/schedlab/internal/engine"
	"github.com/schedlab/schedlab/internal/kernels"
	"github.com/schedlab/schedlab/internal/topology"
)

// Tests of the differences between the kernel baselines (kernels.Baseline
// Differences). Each runs the same situation on the baseline and on the
// kernel it differs from and asserts the outcome the baseline's code
// gives, derived in the comment, so that it fails when the baseline's
// rule flips.

// TestCalculateImbalanceNumaV512: the task imbalance between two NUMA
// groups with spare capacity.
//
// Reference: fair.c:calculate_imbalance, adjust_numa_imbalance,
// allow_numa_imbalance, v5.12 and v6.0.
//
// The NUMA domain of zen3-2s-nps1 (256 CPUs, imb_numa_nr 8 in v6.0, none
// in v5.12) with prefer_sibling (its child DIE has SD_PREFER_SIBLING), so
// the raw imbalance is busiest.sum_nr_running − local.sum_nr_running.
//
//	v6.0: imb = adjust(raw, local + 1, 8) >> 1, where adjust returns 0 if
//	      local + 1 <= 8 and raw <= 2, else raw.
//	v5.12: imb = adjust(raw >> 1, busiest, 128), where adjust returns 0 if
//	      busiest < 128 >> 2 = 32 and raw >> 1 <= 2, else raw >> 1.
//
//	busiest local raw   v6.0            v5.12
//	   4      0    4    4 >> 1 = 2      2 <= 2, 4 < 32 -> 0
//	   3      0    3    3 >> 1 = 1      1 -> 0
//	   6      2    4    2               0
//	  40      0   40    20              20 (40 >= 32: no allowance)
//	  12     10    2    local + 1 > 8: 2 >> 1 = 1    1 -> 0
//	   2      0    2    0 (2 <= 2)      1 -> 0
func TestCalculateImbalanceNumaV512(t *testing.T) {
	cases := []struct {
		busiest, local int
		v60, v512      int64
	}{
		{4, 0, 2, 0}, {3, 0, 1, 0}, {6, 2, 2, 0}, {40, 0, 20, 20}, {12, 10, 1, 0}, {2, 0, 0, 0},
	}
	for _, kern := range []string{kernels.V60, kernels.V512} {
		k := newTestKernel(t, "zen3-2s-nps1", kern)
		numa := k.Domains(0)[3]
		if numa.T.Flags&topology.SDNuma == 0 {
			t.Fatalf("%s: CPU 0's top domain is %s", kern, numa.T.Name)
		}
		for _, tc := range cases {
			env := &lbEnv{sd: numa, idle: CPUIdle}
			sds := &sdLbStats{preferSibling: true}
			sds.busiestStat = SgLbStats{SumNrRunning: tc.busiest, SumHNrRunning: tc.busiest, GroupWeight: 128,
				IdleCPUs: 128 - tc.busiest, GroupType: GroupHasSpare, GroupCapacity: 128 * 1024}
			sds.localStat = SgLbStats{SumNrRunning: tc.local, SumHNrRunning: tc.local, GroupWeight: 128,
				IdleCPUs: 128 - tc.local, GroupType: GroupHasSpare, GroupCapacity: 128 * 1024}
			k.calculateImbalance(env, sds)
			want := tc.v60
			if kern == kernels.V512 {
				want = tc.v512
			}
			if env.imbalance != want || env.migrationType != migrateTask {
				t.Errorf("%s busiest %d local %d: imbalance %d (%v), want %d tasks", kern, tc.busiest, tc.local, env.imbalance, env.migrationType, want)
			}
		}
	}
}

// sisProbe builds a HiKey (two 4-CPU LLCs, no SMT) or zen3 rig with
// hogs on busy and returns it with a free task p to place.
func sisProbe(t *testing.T, machine string, s Settings, busy []int) (*rig, *Task) {
	t.Helper()
	r := newRigSettings(t, machine, s)
	for _, c := range busy {
		r.hog(c)
	}
	p := r.sleeper(busy[0], engine.Microsecond)
	r.run(5 * engine.Millisecond)
	r.unpin(p)
	return r, p
}

// TestSISPropBudgetV512: how many CPUs an SIS_PROP scan may examine, and
// what it charges.
//
// Reference: fair.c:select_idle_cpu, v5.12 and v6.0 (SIS_PROP branch).
//
// (a) Every CPU of zen3's LLC0 (0-7, 128-135) is busy, so the scan runs
// out of budget after examining nr − 1 CPUs and returns before it folds
// its time into anything. With avg_scan_cost 99 (avg_cost 100) and a span
// of 16:
//
//	v5.12: avg_idle = this_rq()->avg_idle / 512 = 51200 / 512 = 100;
//	       span_avg = 1600 > 400: nr = 16, 15 CPUs examined.
//	v6.0:  the same rq but wake_avg_idle = 0 (stamped now, so no aging):
//	       span_avg = 0: nr = 4, 3 CPUs examined.
//
// (b) CPU 134 is idle, wake_avg_idle 51200. v5.12 (nr 16, scan from 0)
// finds it as the 15th CPU: avg_scan_cost = 99 + (15 × 25 − 99) / 8 =
// 133 (25 ns per CPU, SISScanCost), wake_avg_idle untouched (v5.12 has
// none). v6.0 (nr 16 × 51200 / 100, scan from 1) finds it as the 14th:
// avg_scan_cost = 99 + (350 − 99) / 8 = 130 and the 350 ns are spent
// from wake_avg_idle: 50850.
func TestSISPropBudgetV512(t *testing.T) {
	all := []int{0, 1, 2, 3, 4, 5, 6, 7, 128, 129, 130, 131, 132, 133, 134, 135}
	for _, tc := range []struct {
		kern          string
		scanned       uint64
		cost, wakeAvg uint64 // after (b)
	}{{kernels.V512, 15, 133, 51200}, {kernels.V60, 3, 130, 50850}} {
		for _, idle134 := range []bool{false, true} {
			s := MustBaseline(tc.kern)
			s.SISProp = true
			s.SISUtil = false
			busy := all
			if idle134 {
				busy = append(append([]int(nil), all[:14]...), 135)
			}
			r, p := sisProbe(t, "zen3-2s-nps1", s, busy)
			k := r.on(0)
			k.setIdleCores(0, false)
			rq := k.Rqs[0]
			rq.AvgIdle = 51200
			rq.WakeAvgIdle, rq.WakeStamp = 0, k.Jiffies()
			if idle134 {
				rq.WakeAvgIdle = 51200
			}
			sd := k.sdLLC(0)
			sd.AvgScanCost = 99
			before := rq.Wakeup.SISScanned
			got := k.selectIdleCPU(p, sd, false, 0)
			n := rq.Wakeup.SISScanned - before
			switch {
			case !idle134 && (got != none || n != tc.scanned || sd.AvgScanCost != 99):
				t.Errorf("(a) %s: got %v after examining %d CPUs (want none after %d), avg_scan_cost %d (want 99)", tc.kern, got, n, tc.scanned, sd.AvgScanCost)
			case idle134 && (got != 134 || sd.AvgScanCost != tc.cost || rq.WakeAvgIdle != tc.wakeAvg):
				t.Errorf("(b) %s: got %v (want 134), avg_scan_cost %d (want %d), wake_avg_idle %d (want %d)", tc.kern, got, sd.AvgScanCost, tc.cost, rq.WakeAvgIdle, tc.wakeAvg)
			}
		}
	}
}

// TestSISScanStartV512: where the LLC scan starts.
//
// Reference: fair.c:select_idle_cpu, v5.12 (for_each_cpu_wrap(cpu, cpus,
// target)) and v6.0 (from target + 1).
//
// HiKey's LLC0 is CPUs 0-3; 0, 1 and 2 are busy, 3 is idle; target 0. The
// SIS_PROP budget is nr = 4 on both (v5.12: avg_idle 0; v6.0:
// wake_avg_idle 0), so three CPUs may be examined: v5.12 looks at 0, 1
// and 2 and gives up; v6.0 looks at 1, 2 and finds 3.
func TestSISScanStartV512(t *testing.T) {
	for _, tc := range []struct {
		kern string
		want cpumask.CPU
	}{{kernels.V512, none}, {kernels.V60, 3}} {
		s := MustBaseline(tc.kern)
		s.SISProp = true
		s.SISUtil = false
		r, p := sisProbe(t, "hikey", s, []int{0, 1, 2})
		k := r.on(0)
		k.Rqs[0].AvgIdle = 0
		k.Rqs[0].WakeAvgIdle, k.Rqs[0].WakeStamp = 0, k.Jiffies()
		if got := k.selectIdleCPU(p, k.sdLLC(0), false, 0); got != tc.want {
			t.Errorf("%s: select_idle_cpu = %v, want %v", tc.kern, got, tc.want)
		}
	}
}

// TestIdleCoreSearchV512: where v5.12 looks for idle cores and SMT
// siblings.
//
// Reference: fair.c:select_idle_sibling and select_idle_cpu, v5.12 and
// v6.0.
//
// (a) zen3's LLC0 has no idle core: every CPU is busy except 2 (its
// sibling 130 runs) and 133 (the sibling of prev = 5, which runs). The
// wakee's target is 0 (busy). v6.0: test_idle_cores says no, prev shares
// the LLC, select_idle_smt(prev) returns 133. v5.12 has no such step:
// the scan from target (budget ample: avg_idle 1 ms / 512 × 16 CPUs)
// finds 2 first.
//
// (b) A waker on CPU 8 (LLC1) wakes a task towards target 0 while LLC0's
// has_idle_cores hint is stale (set, but no core of LLC0 is idle) and
// LLC1's is set too. The idle-core scan of LLC0 fails; v6.0 clears
// target's (LLC0's) hint, v5.12 clears the waking CPU's (LLC1's).
func TestIdleCoreSearchV512(t *testing.T) {
	busy := []int{0, 1, 3, 4, 5, 6, 7, 128, 129, 130, 131, 132, 134, 135}
	for _, tc := range []struct {
		kern string
		want cpumask.CPU
	}{{kernels.V512, 2}, {kernels.V60, 133}} {
		s := MustBaseline(tc.kern)
		s.SISProp = true
		s.SISUtil = false
		r, p := sisProbe(t, "zen3-2s-nps1", s, busy)
		k := r.on(0)
		k.setIdleCores(0, false)
		k.Rqs[0].WakeAvgIdle, k.Rqs[0].WakeStamp = k.Rqs[0].AvgIdle, k.Jiffies()
		if got := k.selectIdleSibling(p, 5, 0); got != tc.want {
			t.Errorf("(a) %s: select_idle_sibling = %v, want %v", tc.kern, got, tc.want)
		}

		// (b)
		all := []int{}
		for c := 0; c < 8; c++ {
			all = append(all, c, c+128)
		}
		r, p = sisProbe(t, "zen3-2s-nps1", s, all)
		k = r.on(8)
		k.setIdleCores(0, true)
		k.setIdleCores(8, true)
		k.selectIdleCPU(p, k.sdLLC(0), true, 0)
		llc0, llc1 := k.SdLLCShared(0).HasIdleCores, k.SdLLCShared(8).HasIdleCores
		if tc.kern == kernels.V512 && (!llc0 || llc1) || tc.kern == kernels.V60 && (llc0 || !llc1) {
			t.Errorf("(b) %s: has_idle_cores LLC0 %v LLC1 %v after a failed scan from CPU 8", tc.kern, llc0, llc1)
		}
	}
}

// TestRecentUsedCPUForms: p->recent_used_cpu in select_idle_sibling.
//
// Reference: fair.c:select_idle_sibling and select_task_rq_fair, v5.12,
// v6.0 and v6.19.
//
// HiKey LLC0 (0-3): target 0 and prev 1 run hogs; 2 and 3 are idle. p
// last ran on 1 (prev), recent_used_cpu is 3, and p may now run on 0, 2
// and 3 only (its affinity was changed after it ran on 1).
//
//	v6.19: recent_used_cpu := prev; the candidate 3 is allowed, idle,
//	       shares the LLC: 3.
//	v6.0:  recent_used_cpu := prev; the affinity test reads the field,
//	       now 1, which p may not use: no; the scan from target + 1 over
//	       {0, 2, 3} finds 2.
//	v5.12: the candidate 3 passes (its own affinity is tested): 3, and
//	       only then recent_used_cpu := prev.
//
// With 3 busy as well the candidate fails everywhere: v6.x still set the
// field to prev, v5.12 leaves it at 3. And after the fast path of an
// affine wakeup v5.12 sets the waker's recent_used_cpu to the waking CPU.
func TestRecentUsedCPUForms(t *testing.T) {
	for _, tc := range []struct {
		kern     string
		want     cpumask.CPU
		keptBusy cpumask.CPU // p.RecentUsedCPU after a failed candidate
	}{{kernels.V619, 3, 1}, {kernels.V60, 2, 1}, {kernels.V512, 3, 3}} {
		for _, busy3 := range []bool{false, true} {
			busy := []int{0, 1}
			if busy3 {
				busy = append(busy, 3)
			}
			r, p := sisProbe(t, "hikey", MustBaseline(tc.kern), busy)
			k := r.on(0)
			r.setIdleScan(0, 0)
			p.CPUsAllowed = cpumask.Of(8, 0, 2, 3)
			p.NrCPUsAllowed = 3
			p.RecentUsedCPU = 3
			got := k.selectIdleSibling(p, 1, 0)
			switch {
			case !busy3 && got != tc.want:
				t.Errorf("%s: select_idle_sibling = %v, want %v", tc.kern, got, tc.want)
			case !busy3 && p.RecentUsedCPU != 1:
				t.Errorf("%s: recent_used_cpu %v after its use, want prev (1)", tc.kern, p.RecentUsedCPU)
			case busy3 && (got != 2 || p.RecentUsedCPU != tc.keptBusy):
				t.Errorf("%s, 3 busy: picked %v (want 2), recent_used_cpu %v (want %v)", tc.kern, got, p.RecentUsedCPU, tc.keptBusy)
			}
		}
	}
	// The waker's field: a sleeper on CPU 1 woken by the hog of CPU 0.
	for _, kern := range []string{kernels.V512, kernels.V60} {
		r := newRig(t, "hikey", kern)
		w := r.hog(0)
		p := r.sleeper(1, engine.Microsecond)
		r.run(5 * engine.Millisecond)
		r.unpin(p)
		w.RecentUsedCPU = 7
		k := r.on(0)
		k.selectTaskRqFair(p, 1, WFTTWU)
		want := cpumask.CPU(7)
		if kern == kernels.V512 {
			want = 0
		}
		if w.RecentUsedCPU != want {
			t.Errorf("%s: the waker's recent_used_cpu is %v, want %v", kern, w.RecentUsedCPU, want)
		}
	}
}

// TestTTWUQueueCondV512: which wakeups go through the target's wake list.
//
// Reference: core.c:ttwu_queue_cond, v5.12 and v6.0.
//
// A task pinned to HiKey CPU 1 (idle, same LLC as the waker on CPU 0) is
// woken: v6.0 queues it on CPU 1's wake list (ttwu_pending, activated an
// IPI later), v5.12 activates it at once under CPU 1's lock. A task pinned
// to CPU 4 (the other LLC) is queued on both.
func TestTTWUQueueCondV512(t *testing.T) {
	for _, tc := range []struct {
		kern        string
		sameLLCWake bool // queued on the wake list
	}{{kernels.V512, false}, {kernels.V60, true}} {
		for _, target := range []int{1, 4} {
			r := newRig(t, "hikey", tc.kern)
			r.hog(0)
			p := r.sleeper(target, engine.Microsecond)
			r.run(5 * engine.Millisecond)
			k := r.on(0)
			k.TryToWakeUp(p, 0)
			queued := k.Rqs[target].TTWUPending == 1
			want := target == 4 || tc.sameLLCWake
			if queued != want || queued == (p.OnRq == taskOnRqQueued) {
				t.Errorf("%s, target cpu%d: queued on the wake list %v (on_rq %d), want %v", tc.kern, target, queued, p.OnRq, want)
			}
		}
	}
}

// twoOnCPU0 builds a HiKey under s with two CPU-bound tasks held on CPU 0
// until t; then a may also run on CPU 1, and b too if bFree.
func twoOnCPU0(t *testing.T, s Settings, bFree bool, until engine.Time) (k *Kernel, a, b *Task) {
	t.Helper()
	k = lbKernel(t, "hikey", s, false)
	a, b = twoOnCPU0Of(t, k, bFree, until)
	return k, a, b
}

// twoOnCPU0Of is twoOnCPU0 on an existing kernel; it returns a and b.
func twoOnCPU0Of(t *testing.T, k *Kernel, bFree bool, until engine.Time) (a, b *Task) {
	t.Helper()
	n := k.NrCPUs()
	zero, both := cpumask.Of(n, 0), cpumask.Of(n, 0, 1)
	a = lbFork(t, k, "a", 0, zero, loop(engine.Second, 0))
	b = lbFork(t, k, "b", 0, zero, loop(engine.Second, 0))
	k.Eng.RunUntil(until)
	a.CPUsAllowed, a.NrCPUsAllowed = both.Clone(), 2
	if bFree {
		b.CPUsAllowed, b.NrCPUsAllowed = both.Clone(), 2
	}
	return a, b
}

// TestNewidleGateV512: when a newly idle CPU balances.
//
// Reference: fair.c:newidle_balance, v5.12 (gate: avg_idle <
// sysctl_sched_migration_cost) and v6.0 (avg_idle < the lowest domain's
// max_newidle_lb_cost), both also shut while the root domain is not
// overloaded.
//
// HiKey CPU 0 runs two tasks (the root domain is overloaded); CPU 1 runs
// a task pinned to it that blocks at 14 ms and goes newly idle. With
// avg_idle 300 µs and max_newidle_lb_cost 0 v6.0 balances and v5.12
// (300 µs < 500 µs) does not; with avg_idle 600 µs and
// max_newidle_lb_cost 1 ms the other way round.
func TestNewidleGateV512(t *testing.T) {
	for _, tc := range []struct {
		avgIdle, maxCost uint64
		open             map[string]bool
	}{
		{300000, 0, map[string]bool{kernels.V60: true, kernels.V512: false}},
		{600000, 1000000, map[string]bool{kernels.V60: false, kernels.V512: true}},
	} {
		for _, kern := range []string{kernels.V60, kernels.V512} {
			k := lbKernel(t, "hikey", MustBaseline(kern), false)
			lbFork(t, k, "c", 1, cpumask.Of(k.NrCPUs(), 1), lbRunOnce(14*engine.Millisecond))
			twoOnCPU0Of(t, k, true, 14*engine.Millisecond-1)
			k.Rqs[1].AvgIdle = tc.avgIdle
			k.Domains(1)[0].MaxNewidleLbCost = tc.maxCost
			before := k.BalanceStats.NewidleGatePassed
			k.Eng.RunUntil(14 * engine.Millisecond)
			if got := k.BalanceStats.NewidleGatePassed > before; got != tc.open[kern] {
				t.Errorf("%s, avg_idle %d, max_newidle_lb_cost %d: gate passed %v, want %v", kern, tc.avgIdle, tc.maxCost, got, tc.open[kern])
			}
		}
	}
}

// TestMaxNewidleLbCostDecayV512: how max_newidle_lb_cost decays.
//
// Reference: fair.c:rebalance_domains, v5.12 (decay by 253/256 once
// next_decay_max_lb_cost has passed, then next = jiffies + HZ) and v6.0
// (update_newidle_cost: decay only HZ after the last raise or decay).
//
// The lowest domain of HiKey CPU 1 holds 256000 ns and its decay
// timestamp is one jiffy ago. v5.12 reads it as the next decay time,
// which has passed: 253000. v6.0 reads it as the last decay, less than a
// second ago: unchanged.
func TestMaxNewidleLbCostDecayV512(t *testing.T) {
	for _, tc := range []struct {
		kern string
		want uint64
	}{{kernels.V512, 253000}, {kernels.V60, 256000}} {
		k := newTestKernel(t, "hikey", tc.kern)
		k.Eng.RunUntil(engine.Second)
		sd := k.Domains(1)[0]
		sd.MaxNewidleLbCost = 256000
		sd.LastDecayMaxLbCost = k.Jiffies() - 1
		k.thisCPU = 1
		k.schedBalanceDomains(k.Rqs[1], CPUIdle)
		if sd.MaxNewidleLbCost != tc.want {
			t.Errorf("%s: max_newidle_lb_cost %d, want %d", tc.kern, sd.MaxNewidleLbCost, tc.want)
		}
	}
}

// TestNewidleCostExcludesBlockedUpdateV512: what a newly idle pass charges
// to its first domain.
//
// Reference: fair.c:newidle_balance, v5.12 (t0 is taken per domain, after
// update_blocked_averages) and v6.0 (t0 before update_blocked_averages,
// 9e9af819db5d, v5.16).
//
// The same pass on v6.0 and on v6.0 with v5.12's newly idle bookkeeping
// (NewidleV512, everything else equal), with the cost model's balancing
// costs, between two ticks so that nothing else updates blocked load:
// v6.0's MC max_newidle_lb_cost exceeds the v5.12 form's by exactly the
// time of CPU 1's update_blocked_averages.
func TestNewidleCostExcludesBlockedUpdateV512(t *testing.T) {
	if !MustBaseline(kernels.V512).NewidleV512 {
		t.Fatal("v5.12 lacks its newly idle balance")
	}
	cost := map[bool]uint64{}
	var blocked engine.Time
	for _, v512 := range []bool{false, true} {
		s := MustBaseline(kernels.V60)
		s.NewidleV512 = v512
		k := lbKernel(t, "hikey", s, true)
		lbFork(t, k, "c", 1, cpumask.Of(k.NrCPUs(), 1), lbRunOnce(13500*engine.Microsecond))
		twoOnCPU0Of(t, k, true, 13*engine.Millisecond)
		k.Rqs[1].AvgIdle = uint64(4 * engine.Millisecond)
		mc := k.Domains(1)[0]
		mc.MaxNewidleLbCost = 0
		ub, nb := k.BalanceStats.UpdateBlockedAverages, k.Rqs[1].BlockedUpdatesBy[BlockedByNewidle]
		k.Eng.RunUntil(15900 * engine.Microsecond)
		if k.Rqs[1].BlockedUpdatesBy[BlockedByNewidle] != nb+1 || k.BalanceStats.UpdateBlockedAverages.Calls != ub.Calls+1 {
			t.Fatalf("v512 form %v: %d newly idle blocked-load updates, %d in all; want one", v512,
				k.Rqs[1].BlockedUpdatesBy[BlockedByNewidle]-nb, k.BalanceStats.UpdateBlockedAverages.Calls-ub.Calls)
		}
		cost[v512] = mc.MaxNewidleLbCost
		if !v512 {
			blocked = k.BalanceStats.UpdateBlockedAverages.Total - ub.Total
		}
	}
	if blocked == 0 || cost[true] == 0 || cost[false] != cost[true]+uint64(blocked) {
		t.Errorf("MC cost v6.0 %d, v5.12 form %d, update_blocked_averages %d: want v6.0 = v5.12 + the update", cost[false], cost[true], blocked)
	}
}

// TestShouldWeBalanceNewidleV512: a newly idle CPU that got work.
//
// Reference: fair.c:should_we_balance, v5.12 (CPU_NEWLY_IDLE: always 1)
// and v6.0 (0 once the CPU has a task or a wakeup pending, 792b9f65a568).
func TestShouldWeBalanceNewidleV512(t *testing.T) {
	for _, tc := range []struct {
		kern string
		want bool
	}{{kernels.V512, true}, {kernels.V60, false}} {
		k, _, _ := twoOnCPU0(t, MustBaseline(tc.kern), true, 5*engine.Millisecond)
		sd := k.Domains(0)[0]
		env := &lbEnv{sd: sd, dstCPU: 0, dstRq: k.Rqs[0], idle: CPUNewlyIdle, cpus: sd.T.Span.Clone()}
		if got := k.shouldWeBalance(env); got != tc.want {
			t.Errorf("%s: should_we_balance with %d tasks on dst = %v, want %v", tc.kern, k.Rqs[0].NrRunning, got, tc.want)
		}
	}
}

// TestNohzNextKickV512: NOHZ bookkeeping of nohz.next_balance.
//
// Reference: fair.c:nohz_balance_enter_idle and rebalance_domains, v5.12
// (no nohz.needs_update; rebalance_domains(CPU_IDLE) pulls
// nohz.next_balance to rq->next_balance) and v6.0 (needs_update set on
// entry, efd984c481ab, v5.16; rebalance_domains leaves nohz alone).
func TestNohzNextKickV512(t *testing.T) {
	for _, kern := range []string{kernels.V512, kernels.V60} {
		k := newTestKernel(t, "hikey", kern)
		if k.bal.nohz.needsUpdate != (kern == kernels.V60) {
			t.Errorf("%s: needs_update %v after the CPUs entered NOHZ at boot", kern, k.bal.nohz.needsUpdate)
		}
		k.Eng.RunUntil(engine.Second)
		k.bal.nohz.nextBalance = k.Jiffies() + 1000
		k.thisCPU = 3
		k.schedBalanceDomains(k.Rqs[3], CPUIdle)
		pulled := k.bal.nohz.nextBalance == k.Rqs[3].NextBalance
		if pulled != (kern == kernels.V512) || k.Rqs[3].NextBalance == k.Jiffies()+1000 {
			t.Errorf("%s: nohz.next_balance %d, rq 3 next_balance %d", kern, k.bal.nohz.nextBalance, k.Rqs[3].NextBalance)
		}
	}
}

// TestDetachTasksOneTaskV512: detach_tasks on a source left with one task.
//
// Reference: fair.c:detach_tasks, v5.12 (no early return: a busy pass
// looks at the running task, which can_migrate_task refuses as running)
// and v6.0 (returns 0 at once, clearing LBF_ALL_PINNED).
func TestDetachTasksOneTaskV512(t *testing.T) {
	for _, kern := range []string{kernels.V512, kernels.V60} {
		k := lbKernel(t, "hikey", MustBaseline(kern), false)
		a := lbFork(t, k, "a", 0, cpumask.Of(k.NrCPUs(), 0, 1), loop(engine.Second, 0))
		k.Eng.RunUntil(5 * engine.Millisecond)
		sd := k.Domains(1)[0]
		env := &lbEnv{sd: sd, dstCPU: 1, dstRq: k.Rqs[1], srcCPU: 0, srcRq: k.Rqs[0], idle: CPUNotIdle,
			imbalance: 1, migrationType: migrateTask, loopMax: 1, loopBreak: schedNrMigrateBreak,
			flags: lbfAllPinned, cpus: sd.T.Span.Clone(), dstGrpmask: sd.T.Groups[0].BalanceMask}
		k.thisCPU = 1
		if n := k.detachTasks(env); n != 0 || env.flags&lbfAllPinned != 0 {
			t.Fatalf("%s: detached %d, flags %#x", kern, n, env.flags)
		}
		looked := a.SE.Stats.NrFailedMigrationsRunning == 1
		if looked != (kern == kernels.V512) {
			t.Errorf("%s: nr_failed_migrations_running %d", kern, a.SE.Stats.NrFailedMigrationsRunning)
		}
	}
}

// TestActiveBalanceV512: what starting an active balance does to the
// domain, and how the stopper treats a cache-hot task.
//
// Reference: fair.c:load_balance and active_load_balance_cpu_stop, v5.12
// (nr_balance_failed = cache_nice_tries + 1 after kicking the stopper;
// the stopper's can_migrate_task runs the hot test) and v6.0
// (LBF_ACTIVE_LB, 23fb06d9602b, v5.13: nr_balance_failed keeps counting,
// the stopper moves a hot task without looking).
//
// HiKey CPU 0 runs a (may use 0, 1) with b (pinned to 0) waiting; CPU 1
// is idle. CPU 1's MC balance (CPU_IDLE) finds b pinned and a running:
// it fails, and with nr_balance_failed already 3 > cache_nice_tries (1) +
// 2 imbalanced_active_balance starts the stopper. v6.0 leaves
// nr_balance_failed at 4, v5.12 sets it to 2. a ran a moment ago and
// migration_cost is raised to 100 ms, so a is hot: v5.12's stopper
// accepts it (2 > 1) and counts lb_hot_gained; v6.0 counts nothing.
func TestActiveBalanceV512(t *testing.T) {
	for _, tc := range []struct {
		kern      string
		failed    int
		hotGained uint64
	}{{kernels.V512, 2, 1}, {kernels.V60, 4, 0}} {
		s := MustBaseline(tc.kern)
		s.MigrationCost = 100000000
		k, a, _ := twoOnCPU0(t, s, false, 5*engine.Millisecond)
		if !a.OnCPU {
			k.Eng.RunUntil(20 * engine.Millisecond)
		}
		if !a.OnCPU {
			t.Fatalf("%s: a is not running", tc.kern)
		}
		sd := k.Domains(1)[0]
		sd.NrBalanceFailed = sd.T.CacheNiceTries + 2
		k.thisCPU = 1
		cont := true
		if moved := k.schedBalanceRq(1, k.Rqs[1], sd, CPUIdle, &cont); moved != 0 || !k.Rqs[0].ActiveBalance {
			t.Fatalf("%s: moved %d, active balance %v", tc.kern, moved, k.Rqs[0].ActiveBalance)
		}
		if sd.NrBalanceFailed != tc.failed {
			t.Errorf("%s: nr_balance_failed %d after kicking the stopper, want %d", tc.kern, sd.NrBalanceFailed, tc.failed)
		}
		k.Eng.RunUntil(k.Now() + engine.Millisecond)
		if a.CPU() != 1 || sd.Stats.LbHotGained[CPUIdle] != tc.hotGained {
			t.Errorf("%s: a on cpu%d, lb_hot_gained %d (want cpu1, %d)", tc.kern, a.CPU(), sd.Stats.LbHotGained[CPUIdle], tc.hotGained)
		}
	}
}

// TestDetachUtilShrBound: migrate_util against the imbalance.
//
// Reference: fair.c:detach_tasks, v6.0 (util_est(p) > imbalance skips
// it) and v6.19 (shr_bound(util, nr_balance_failed) > imbalance).
//
// The waiting task b has util_est u; the imbalance is u − 1 and the
// domain failed once: v6.19 compares u >> 1 < u − 1 and takes b, v6.0
// compares u > u − 1 and skips it.
func TestDetachUtilShrBound(t *testing.T) {
	for _, kern := range []string{kernels.V60, kernels.V619} {
		s := MustBaseline(kern)
		s.MigrationCost = 0 // nothing is cache hot
		k, a, b := twoOnCPU0(t, s, true, 30*engine.Millisecond)
		if b.OnCPU {
			a, b = b, a
		}
		u := k.taskUtilEst(b)
		sd := k.Domains(1)[0]
		sd.NrBalanceFailed = 1
		env := &lbEnv{sd: sd, dstCPU: 1, dstRq: k.Rqs[1], srcCPU: 0, srcRq: k.Rqs[0], idle: CPUIdle,
			imbalance: int64(u) - 1, migrationType: migrateUtil, loopMax: 2, loopBreak: schedNrMigrateBreak,
			cpus: sd.T.Span.Clone(), dstGrpmask: sd.T.Groups[0].BalanceMask}
		k.thisCPU = 1
		k.updateRqClock(k.Rqs[0])
		n := k.detachTasks(env)
		if u < 4 || (n == 1) != (kern == kernels.V619) {
			t.Errorf("%s: util_est %d, imbalance %d: detached %d", kern, u, u-1, n)
		}
		if n == 1 {
			k.attachTasks(env)
		}
	}
}

// TestHotAccounting: the schedstats of a cache-hot task that
// can_migrate_task accepts (the domain failed more than cache_nice_tries
// times) and detach_tasks then skips because its load exceeds the
// imbalance.
//
// Reference: fair.c:can_migrate_task, detach_task and detach_tasks, v6.0
// and v5.12 (lb_hot_gained and nr_forced_migrations counted on
// acceptance; nothing at the skip) and v6.19 (p->sched_task_hot: counted
// in detach_task only, and the skip counts nr_failed_migrations_hot).
//
// The waiting task b is hot (migration_cost 100 ms), nr_balance_failed is
// cache_nice_tries + 1 and the load imbalance is 1.
func TestHotAccounting(t *testing.T) {
	for _, tc := range []struct {
		kern                string
		gained, forced, hot uint64
	}{{kernels.V60, 1, 1, 0}, {kernels.V512, 1, 1, 0}, {kernels.V619, 0, 0, 1}} {
		s := MustBaseline(tc.kern)
		s.MigrationCost = 100000000
		k, a, b := twoOnCPU0(t, s, true, 30*engine.Millisecond)
		if b.OnCPU {
			a, b = b, a
		}
		sd := k.Domains(1)[0]
		sd.NrBalanceFailed = sd.T.CacheNiceTries + 1
		env := &lbEnv{sd: sd, dstCPU: 1, dstRq: k.Rqs[1], srcCPU: 0, srcRq: k.Rqs[0], idle: CPUIdle,
			imbalance: 1, migrationType: migrateLoad, loopMax: 2, loopBreak: schedNrMigrateBreak,
			cpus: sd.T.Span.Clone(), dstGrpmask: sd.T.Groups[0].BalanceMask}
		k.thisCPU = 1
		k.updateRqClock(k.Rqs[0])
		if n := k.detachTasks(env); n != 0 {
			t.Fatalf("%s: detached %d", tc.kern, n)
		}
		if g, f, h := sd.Stats.LbHotGained[CPUIdle], b.SE.Stats.NrForcedMigrations, b.SE.Stats.NrFailedMigrationsHot; g != tc.gained || f != tc.forced || h != tc.hot {
			t.Errorf("%s: lb_hot_gained %d, nr_forced_migrations %d, nr_failed_migrations_hot %d; want %d %d %d", tc.kern, g, f, h, tc.gained, tc.forced, tc.hot)
		}
	}
}

// TestCFSRepickKeepsBuddies: buddies of a prev that pick_next_task_fair
// picks again.
//
// Reference: fair.c:pick_next_entity, set_next_entity and
// pick_next_task_fair, v5.12 (pick_next_entity clears the picked
// entity's buddies) and v6.0 (set_next_entity clears them, and a re-pick
// of prev calls neither put_prev_entity nor set_next_entity).
//
// HiKey CPU 0 runs a and b; the running one, a, is the last buddy (as
// check_preempt_wakeup's LAST_BUDDY makes a preempted curr) and is made
// the leftmost entity, so schedule() re-picks it. v6.0 keeps the last
// buddy; v5.12 clears it.
func TestCFSRepickKeepsBuddies(t *testing.T) {
	for _, tc := range []struct {
		kern string
		kept bool
	}{{kernels.V60, true}, {kernels.V512, false}} {
		k, a, b := twoOnCPU0(t, MustBaseline(tc.kern), false, 30*engine.Millisecond)
		if !a.OnCPU {
			a, b = b, a
		}
		rq, c := k.Rqs[0], k.Rqs[0].CFS
		k.thisCPU = 0
		k.updateRqClock(rq)
		k.updateCurr(c)
		a.SE.Vruntime = b.SE.Vruntime - 2*k.wakeupGranularity // leftmost by far
		c.Last = &a.SE
		k.schedule(rq, true)
		if rq.Curr != a {
			t.Fatalf("%s: schedule picked %s, want a again", tc.kern, rq.Curr.Comm)
		}
		if kept := c.Last == &a.SE; kept != tc.kept {
			t.Errorf("%s: last buddy kept %v after a re-pick, want %v", tc.kern, kept, tc.kept)
		}
	}
}

// TestCFSIdleSleeperCredit: where place_entity puts a waking SCHED_IDLE
// task that slept long.
//
// Reference: fair.c:place_entity, v6.0 (thresh = sysctl_sched_min_granularity
// for an idle entity) and v5.12 (sysctl_sched_latency for every entity);
// both halve it (GENTLE_FAIR_SLEEPERS).
//
// On HiKey (8 CPUs: factor 1 + ilog2(8) = 4) the tunables are latency
// 24 ms and min_granularity 3 ms: v6.0 places the entity 1.5 ms before
// min_vruntime, v5.12 12 ms before. A nice-0 SCHED_NORMAL entity gets
// 12 ms on both.
func TestCFSIdleSleeperCredit(t *testing.T) {
	for _, tc := range []struct {
		kern        string
		policy      Policy
		credit, min uint64
	}{
		{kernels.V60, SchedIdle, 1500000, 0},
		{kernels.V512, SchedIdle, 12000000, 0},
		{kernels.V60, SchedNormal, 12000000, 0},
		{kernels.V512, SchedNormal, 12000000, 0},
	} {
		k := newTestKernel(t, "hikey", tc.kern)
		c := k.Rqs[0].CFS
		c.ZeroVruntime = 1 << 40
		p := &Task{Policy: tc.policy}
		p.SE.task = p
		p.SE.Vruntime = 0
		k.placeEntityCFS(c, &p.SE, false)
		if got := c.ZeroVruntime - p.SE.Vruntime; got != tc.credit {
			t.Errorf("%s policy %d: placed %d ns before min_vruntime, want %d", tc.kern, tc.policy, got, tc.credit)
		}
	}
}

// TestSliceMaxNeedsCompetition: set_next_entity records slice_max only
// when the CPU's root cfs_rq holds at least twice the entity's weight.
//
// Reference: fair.c:set_next_entity (the same condition in v5.12, v6.0
// and v6.19). A task alone on its CPU never competed for it: its
// slice_max stays 0 however long it ran; two tasks on one CPU record
// their slices.
func TestSliceMaxNeedsCompetition(t *testing.T) {
	for _, kern := range kernels.Names() {
		k := lbKernel(t, "hikey", MustBaseline(kern), false)
		n := k.NrCPUs()
		alone := lbFork(t, k, "alone", 1, cpumask.Of(n, 1), ProgramFunc(func(k *Kernel, t *Task) Op {
			if k.Now() < 100*engine.Millisecond {
				if t.Nvcsw%2 == 0 {
					return Run(5 * engine.Millisecond)
				}
				return Sleep(engine.Millisecond)
			}
			return Block()
		}))
		a := lbFork(t, k, "a", 0, cpumask.Of(n, 0), loop(engine.Second, 0))
		lbFork(t, k, "b", 0, cpumask.Of(n, 0), loop(engine.Second, 0))
		k.Eng.RunUntil(100 * engine.Millisecond)
		if alone.SE.Stats.SliceMax != 0 || alone.SE.SumExecRuntime == 0 {
			t.Errorf("%s: a task alone on its CPU has slice_max %d (ran %d)", kern, alone.SE.Stats.SliceMax, alone.SE.SumExecRuntime)
		}
		if a.SE.Stats.SliceMax == 0 {
			t.Errorf("%s: a task sharing its CPU has no slice_max", kern)
		}
	}
}

// TestSetPreemptBuddy: NEXT_BUDDY under EEVDF.
//
// Reference: fair.c:set_preempt_buddy and check_preempt_wakeup_fair,
// v6.19: an existing next buddy whose deadline is earlier than the
// wakee's stays (and preempt_sync is then not consulted); on a tie the
// wakee replaces it.
func TestSetPreemptBuddy(t *testing.T) {
	k := newTestKernel(t, "hikey", kernels.V619)
	c := k.Rqs[0].CFS
	next := &SchedEntity{Deadline: 1000, CfsRq: c}
	for _, tc := range []struct {
		pseDeadline uint64
		replaced    bool
	}{{2000, false}, {1000, true}, {500, true}} {
		p := &Task{}
		p.SE.task, p.SE.Deadline, p.SE.CfsRq = p, tc.pseDeadline, c
		pse := &p.SE
		c.Next = next
		got := k.setPreemptBuddy(c, pse)
		if got != tc.replaced || (c.Next == pse) != tc.replaced {
			t.Errorf("next deadline 1000, wakee %d: set_preempt_buddy %v, next is the wakee %v; want %v", tc.pseDeadline, got, c.Next == pse, tc.replaced)
		}
	}
}

// TestMigrateSEPeltLagV512: the PELT averages of a task woken onto
// another CPU after sleeping on an idle one.
//
// Reference: fair.c:migrate_task_rq_fair and migrate_se_pelt_lag, v6.0
// (e2f3e35f1f5a: decay the task to an estimate of the idle CPU's current
// PELT time) and v5.12 (none: the task keeps the averages of the old
// cfs_rq's last update).
//
// A task runs 10 ms on HiKey CPU 1 and sleeps; CPU 1 stays idle. 100 ms
// later it is moved to CPU 2 while asleep. v6.0 decays its util_avg over
// the ~100 ms since CPU 1's cfs_rq was last updated; v5.12 leaves it as
// it was, strictly larger.
func TestMigrateSEPeltLagV512(t *testing.T) {
	util := map[string]uint64{}
	for _, kern := range []string{kernels.V60, kernels.V512} {
		k := lbKernel(t, "hikey", MustBaseline(kern), false)
		p := lbFork(t, k, "p", 1, cpumask.Of(k.NrCPUs(), 1, 2), lbRunOnce(10*engine.Millisecond))
		k.Eng.RunUntil(110 * engine.Millisecond)
		if p.State != TaskInterruptible || !k.Rqs[1].Curr.IsIdleTask() {
			t.Fatalf("%s: p %v, cpu1 runs %s", kern, p.State, k.Rqs[1].Curr.Comm)
		}
		k.thisCPU = 0
		if err := k.MigrateTask(p, 2); err != nil {
			t.Fatal(err)
		}
		util[kern] = p.SE.Avg.UtilAvg
	}
	if !(util[kernels.V512] > util[kernels.V60]) || util[kernels.V60] == 0 {
		t.Errorf("util_avg after the move: v5.12 %d, v6.0 %d; want v5.12's undecayed value above v6.0's", util[kernels.V512], util[kernels.V60])
	}
}

// TestUtilEstForms: util_est_update's result for the same task on each
// baseline.
//
// Reference: fair.c:util_est_update and _task_util_est, v6.19 (one word),
// v6.0 (two fields, flag in bit 31) and v5.12 (two fields, flag in bit 0
// of the stored value, included in the estimate).
//
// (a) HiKey: the stored estimate is 800 and the task's util at its
// sleeping dequeue 400, its runnable_avg 600 (it waited for the CPU).
//
//	v6.19: dequeued + 10 < runnable: keep 800.
//	v6.0:  enqueued = 400, ewma = (4 × 800 + (400 − 800)) >> 2 = 700;
//	       estimate max(700, 400) = 700.
//	v5.12: enqueued = 400 | 1 = 401, ewma = (3200 − 399) >> 2 = 700;
//	       estimate max(700, 401) | 1 = 701.
//
// (b) hikey960 CPU 0 (capacity 592): estimate 700, util 600 = runnable.
//
//	v6.19: ewma = (2800 − 100) >> 2 = 675.
//	v6.0:  util 600 > capacity_orig 592: no update, 700 stays.
func TestUtilEstForms(t *testing.T) {
	for _, tc := range []struct {
		machine, kern  string
		util, runnable uint64
		want           uint64
	}{
		{"hikey", kernels.V619, 400, 600, 800},
		{"hikey", kernels.V60, 400, 600, 700},
		{"hikey", kernels.V512, 400, 600, 701},
		{"hikey960", kernels.V619, 600, 600, 675},
		{"hikey960", kernels.V60, 600, 600, 700},
	} {
		k := newTestKernel(t, tc.machine, tc.kern)
		p := &Task{}
		p.SE.task = p
		start := uint32(800)
		if tc.machine == "hikey960" {
			start = 700
		}
		p.SE.Avg.UtilEst, p.SE.Avg.UtilEstEwma = start, start
		p.SE.Avg.UtilAvg, p.SE.Avg.RunnableAvg = tc.util, tc.runnable
		if k.taskUtilEstRaw(p) != uint64(start) && tc.kern != kernels.V512 {
			t.Fatalf("%s: the starting estimate reads %d", tc.kern, k.taskUtilEstRaw(p))
		}
		k.utilEstUpdate(k.Rqs[0].CFS, p, true)
		if got := k.taskUtilEstRaw(p); got != tc.want {
			t.Errorf("%s on %s: _task_util_est %d after the update, want %d", tc.kern, tc.machine, got, tc.want)
		}
	}
}

// TestUtilEstFilterV512: util_est_update when the EWMA is within 1% of
// the task's util but its enqueued value moved.
//
// Reference: fair.c:util_est_dequeue, v5.12 (within_margin(last_ewma_diff)
// returns, nothing stored) and fair.c:util_est_update, v6.0 (stores the
// new enqueued when it moved by 1% or more, b89997aa88f0, v5.13).
//
// HiKey: enqueued 300, ewma 500, util 495 at a sleeping dequeue (no
// FASTUP: 500 > 495; 495 − 500 is within the margin; 300 → 495 is not):
// v6.0 stores enqueued 495, v5.12 keeps 300.
func TestUtilEstFilterV512(t *testing.T) {
	for _, tc := range []struct {
		kern string
		want uint32
	}{{kernels.V60, 495}, {kernels.V512, 300}} {
		k := newTestKernel(t, "hikey", tc.kern)
		p := &Task{}
		p.SE.task = p
		p.SE.Avg.UtilEst, p.SE.Avg.UtilEstEwma = 300, 500
		p.SE.Avg.UtilAvg, p.SE.Avg.RunnableAvg = 495, 495
		k.utilEstUpdate(k.Rqs[0].CFS, p, true)
		if got := p.SE.Avg.UtilEst &^ utilAvgUnchanged &^ utilAvgUnchangedV512; got != tc.want&^utilAvgUnchangedV512 {
			t.Errorf("%s: enqueued %d after the update, want %d", tc.kern, got, tc.want)
		}
	}
}

// TestSgWakeupStatsAffinity: fork placement of a task whose affinity
// covers only part of each group.
//
// Reference: fair.c:update_sg_wakeup_stats, v6.0 (every CPU of the group)
// and v6.19 (only the CPUs in p->cpus_ptr).
//
// HiKey, DIE level: clusters {0-3} and {4-7}; CPUs 2 and 3 run hogs. A
// task allowed on {0, 1, 4, 5} is forked on CPU 0. v6.19 counts the
// allowed CPUs: two idle in each cluster, a tie, so it stays in cluster 0
// and on CPU 0. v6.0 (and v5.12) count the whole groups: 2 idle CPUs
// locally against 4 in cluster 1, which wins: its first idle allowed CPU,
// 4.
func TestSgWakeupStatsAffinity(t *testing.T) {
	for _, tc := range []struct {
		kern string
		want cpumask.CPU
	}{{kernels.V619, 0}, {kernels.V60, 4}, {kernels.V512, 4}} {
		r := newRig(t, "hikey", tc.kern)
		r.hog(2)
		r.hog(3)
		r.run(engine.Millisecond)
		p, err := r.k.Fork(TaskSpec{Comm: "p", CPU: 0, Allowed: cpumask.Of(8, 0, 1, 4, 5), Prog: loop(engine.Second, 0)})
		if err != nil {
			t.Fatal(err)
		}
		if p.CPU() != tc.want {
			t.Errorf("%s: forked onto cpu%d, want %d", tc.kern, p.CPU(), tc.want)
		}
	}
}

// TestTgLoadAvgRatelimit: two updates of a group cfs_rq's contribution
// within the same millisecond.
//
// Reference: fair.c:update_tg_load_avg, v6.19 (at most once per ms,
// 1528c661c24b, v6.7) and v6.0 (every change above 1/64).
func TestTgLoadAvgRatelimit(t *testing.T) {
	for _, tc := range []struct {
		kern string
		want int64
	}{{kernels.V619, 1000}, {kernels.V60, 2000}, {kernels.V512, 2000}} {
		k := newTestKernel(t, "hikey", tc.kern)
		k.Eng.RunUntil(10 * engine.Millisecond)
		tg, err := k.CreateGroup(nil, "g", 100)
		if err != nil {
			t.Fatal(err)
		}
		c := tg.CfsRq[0]
		base := tg.LoadAvg
		c.LastUpdateTgLoadAvg, c.TgLoadAvgContrib = 0, 0
		c.Avg.LoadAvg = 1000
		c.sgStatsChanged()
		k.updateTgLoadAvg(c)
		c.Avg.LoadAvg = 2000
		c.sgStatsChanged()
		k.updateTgLoadAvg(c)
		if got := tg.LoadAvg - base; got != tc.want {
			t.Errorf("%s: tg->load_avg grew by %d, want %d", tc.kern, got, tc.want)
		}
	}
}

// TestMigratedTaskIsCold: a queued task moved to another CPU (the
// balancer's and the stopper's detach/attach, MigrateTask here) starts
// there with exec_start 0, so task_hot calls it cold.
//
// Reference: core.c:activate_task and fair.c:enqueue_entity, v6.19
// (TASK_ON_RQ_MIGRATING sets ENQUEUE_MIGRATED, which zeroes exec_start);
// fair.c:migrate_task_rq_fair, v6.0 and v5.12 (zeroes it on every
// set_task_cpu).
func TestMigratedTaskIsCold(t *testing.T) {
	for _, kern := range kernels.Names() {
		k, a, b := twoOnCPU0(t, MustBaseline(kern), true, 30*engine.Millisecond)
		if b.OnCPU {
			b = a
		}
		if b.SE.ExecStart == 0 || b.OnRq != taskOnRqQueued {
			t.Fatalf("%s: b waits with exec_start %d", kern, b.SE.ExecStart)
		}
		k.thisCPU = 0
		if err := k.MigrateTask(b, 1); err != nil {
			t.Fatal(err)
		}
		if b.CPU() != 1 || b.SE.ExecStart != 0 {
			t.Errorf("%s: after the move b is on cpu%d with exec_start %d, want cpu1 and 0", kern, b.CPU(), b.SE.ExecStart)
		}
	}
}

// TestBlockedUpdateAsksCpufreq: update_blocked_averages on an idle CPU
// whose cfs_rqs have nothing left to decay.
//
// Reference: fair.c:sched_balance_update_blocked_averages and
// __update_blocked_others, pelt.c:update_rt_rq_load_avg and
// ___update_load_sum (v6.19; the same in v6.0 and v5.12): the RT and DL
// signals are decayed on every call and report "decayed" whenever a
// 1024 µs PELT period passed since the last call, all zero as they are;
// any decay makes it call cpufreq_update_util.
//
// HiKey CPU 3 never ran a task, so its leaf cfs_rq list is empty. The
// first call decays the RT/DL signals from time 0: one cpufreq update; a
// second at the same time crosses no period: none; one 3 ms later: one
// more. With BlockedOthersDecay off (the root cfs_rq alone decides, as
// schedlab had it): none at all.
func TestBlockedUpdateAsksCpufreq(t *testing.T) {
	for _, kern := range kernels.Names() {
		for _, others := range []bool{true, false} {
			s := MustBaseline(kern)
			s.BlockedOthersDecay = others
			k := lbKernel(t, "hikey", s, false)
			k.Eng.RunUntil(10 * engine.Millisecond)
			rq := k.Rqs[3]
			if len(rq.leafCfsRqs) != 0 {
				t.Fatalf("%s: cpu3 has leaf cfs_rqs", kern)
			}
			var got []uint64
			for _, at := range []engine.Time{10 * engine.Millisecond, 10 * engine.Millisecond, 13 * engine.Millisecond} {
				k.Eng.RunUntil(at)
				k.SchedBalanceUpdateBlockedAverages(3)
				got = append(got, rq.CpufreqUpdates)
			}
			want := []uint64{1, 1, 2}
			if !others {
				want = []uint64{0, 0, 0}
			}
			for i := range want {
				if got[i] != want[i] {
					t.Errorf("%s, others decay %v: cpufreq updates after each call %v, want %v", kern, others, got, want)
					break
				}
			}
		}
	}
}

// TestSchedutilRunnableBoost: the utilisation schedutil asks a frequency
// for.
//
// Reference: cpufreq_schedutil.c:sugov_get_util, v6.19
// (cpu_util_cfs_boost: util raised to runnable_avg, "runnable boosting",
// 7d0583cf9ec7, v6.5) and v6.0 (cpu_util_cfs).
//
// HiKey CPU 0's root cfs_rq has util_avg 300 and runnable_avg 700 (its
// tasks waited); every other CPU of the frequency domain is empty.
// get_next_freq maps util × 1.25 to capacity 1024: v6.19 asks for
// 700 × 1.25 = 875, v6.0 for 300 × 1.25 = 375.
func TestSchedutilRunnableBoost(t *testing.T) {
	for _, tc := range []struct {
		kern string
		want uint64
	}{{kernels.V619, 875}, {kernels.V60, 375}} {
		k := newTestKernel(t, "hikey", tc.kern)
		withCosts(t, k)
		c := k.Rqs[0].CFS
		c.Avg.UtilAvg, c.Avg.RunnableAvg, c.Avg.UtilEst = 300, 700, 0
		c.sgStatsChanged()
		k.thisCPU = 0
		k.cpufreqUpdateUtil(k.Rqs[0])
		k.Eng.RunUntil(k.Now() + engine.Microsecond)
		if got := k.Rqs[0].FreqScale; got != tc.want {
			t.Errorf("%s: frequency %d/1024, want %d", tc.kern, got, tc.want)
		}
	}
}

// TestIdleTickRetained: a CPU whose idle periods are short keeps its tick.
//
// Reference: idle.c:cpuidle_idle_call (stop the tick only if the
// governor says so or it is already stopped), menu.c:menu_select (keep
// the tick when the predicted idle time is below TICK_NSEC) and
// menu_update (a tick wakeup counts as 9/10 × 50 ms) and
// get_typical_interval (at most two such outliers discarded), fair.c:
// nohz_balance_enter_idle (reached only from a tick stop), v6.19; the
// same in v6.0 and v5.12.
//
// A task on HiKey CPU 2 runs 1.5 ms and sleeps 0.7 ms: the CPU's average
// idle period falls to about 0.7 ms, below the 4 ms tick, and its sleep
// timer is due within a tick, so while the task sleeps CPU 2 is idle with
// its tick running, outside nohz.idle_cpus_mask (it left at its first busy
// tick) and counted in LLC0's nr_busy_cpus. Once the task stops for good
// no timer is due; each idle tick counts as a 45 ms idle period, and by
// the third the governor's short prediction is gone and the tick stops
// (20 ms later it has). With IdleTickRetain off every idle entry stops it.
func TestIdleTickRetained(t *testing.T) {
	for _, kern := range kernels.Names() {
		for _, retain := range []bool{true, false} {
			s := MustBaseline(kern)
			s.IdleTickRetain = retain
			k := lbKernel(t, "hikey", s, false)
			stop := false
			n := 0
			lbFork(t, k, "p", 2, cpumask.Of(8, 2), ProgramFunc(func(k *Kernel, t *Task) Op {
				if stop {
					return Block()
				}
				n++
				if n%2 == 1 {
					return Run(1500 * engine.Microsecond)
				}
				return Sleep(700 * engine.Microsecond)
			}))
			rq := k.Rqs[2]
			found := false
			for at := 100 * engine.Millisecond; at < 104*engine.Millisecond; at += 200 * engine.Microsecond {
				k.Eng.RunUntil(at)
				if rq.Curr.IsIdleTask() {
					found = true
					break
				}
			}
			if !found {
				t.Fatalf("%s: CPU 2 never idle", kern)
			}
			inNohz := rq.NohzTickStopped || rq.NohzIdle || k.NohzIdleCPUs().Test(2)
			busy := k.SdLLCShared(2).NrBusyCPUs
			if retain && (inNohz || busy != 1) || !retain && (!inNohz || busy != 0) {
				t.Errorf("%s retain %v: idle CPU 2 tick stopped %v, NOHZ %v, in mask %v, LLC nr_busy_cpus %d", kern, retain,
					rq.NohzTickStopped, rq.NohzIdle, k.NohzIdleCPUs().Test(2), busy)
			}
			stop = true
			k.Eng.RunUntil(k.Now() + 20*engine.Millisecond)
			if !rq.Curr.IsIdleTask() || !rq.NohzTickStopped || !k.NohzIdleCPUs().Test(2) {
				t.Errorf("%s retain %v: long idle: tick stopped %v, in mask %v", kern, retain, rq.NohzTickStopped, k.NohzIdleCPUs().Test(2))
			}
		}
	}
}

// TestShortTaskRFC2Metric: is_short_task as the RFC v2 posting computes
// it, on its baseline (v6.0, HiKey: sysctl_sched_min_granularity 3 ms).
//
// Reference: "[RFC PATCH v2 1/2] sched/fair: Introduce short duration task
// check" (Chen Yu, 23 Oct 2022), the code only: is_short_task is
// dur_avg <= sysctl_sched_min_granularity; put_prev_task_fair, for a prev
// no longer on the runqueue, takes the run time since its last update as
// the sample and folds it in with update_avg only when it differs from
// dur_avg by at least min_granularity. With CONFIG_FAIR_GROUP_SCHED,
// pick_next_task_fair's own path does not call put_prev_task_fair, so the
// update happens when the CPU goes idle after the task slept
// (__pick_next_task's put_prev_task).
//
// (a) A task alone on CPU 1 runs 5 ms and sleeps 10 ms, ten times: the
// samples are 5 ms, and dur_avg goes 0 → 625000 → 1171875 → 1650390 →
// 2069091 ns; the next difference, 2930909 ns, is under 3 ms, so it stays
// there: the task counts as short although it runs 5 ms at a time (the
// lifetime metric of the RFC says 50 ms over 10 sleeps is not short).
// (b) The same task sharing CPU 2 with a hog never leaves its CPU idle:
// dur_avg stays 0, short.
func TestShortTaskRFC2Metric(t *testing.T) {
	s := MustBaseline(kernels.V60)
	if err := ApplyVariant(&s, "short-task-rfc2"); err != nil || s.ShortTaskMetric != ShortDurAvgRFC2 {
		t.Fatalf("short-task-rfc2: %v, metric %s", err, s.ShortTaskMetric)
	}
	k := lbKernel(t, "hikey", s, false)
	cycles := func() Program {
		n := 0
		return ProgramFunc(func(k *Kernel, t *Task) Op {
			n++
			switch {
			case n > 20:
				return Block()
			case n%2 == 1:
				return Run(5 * engine.Millisecond)
			}
			return Sleep(10 * engine.Millisecond)
		})
	}
	alone := lbFork(t, k, "alone", 1, cpumask.Of(8, 1), cycles())
	lbFork(t, k, "hog", 2, cpumask.Of(8, 2), loop(engine.Second, 0))
	shared := lbFork(t, k, "shared", 2, cpumask.Of(8, 2), cycles())
	k.Eng.RunUntil(400 * engine.Millisecond)
	if alone.Nvcsw < 10 || alone.SE.SumExecRuntime != 50*uint64(engine.Millisecond) {
		t.Fatalf("alone: %d sleeps, %d ns run", alone.Nvcsw, alone.SE.SumExecRuntime)
	}
	if alone.SE.durAvgRFC2 != 2069091 || !k.isShortTask(alone) {
		t.Errorf("alone: dur_avg %d (want 2069091), short %v (want true)", alone.SE.durAvgRFC2, k.isShortTask(alone))
	}
	if k.isShortTaskAs(alone, ShortLifetime) {
		t.Errorf("alone: the RFC's lifetime metric calls it short")
	}
	if shared.Nvcsw == 0 || shared.SE.durAvgRFC2 != 0 || !k.isShortTask(shared) {
		t.Errorf("shared: %d sleeps, dur_avg %d (want 0, short)", shared.Nvcsw, shared.SE.durAvgRFC2)
	}
}

// TestBaselineFeatures: the sched_features each baseline starts with.
//
// Reference: kernel/sched/features.h of v5.12, v6.0 and v6.19 (the
// features schedlab models; HRTICK, DOUBLE_TICK, RT_*, LB_MIN,
// WARN_DOUBLE_CLOCK and LATENCY_WARN are not). v5.12 is the release: the
// ALT_PERIOD and BASE_SLICE lines of 5.12.y's features.h are the stable
// backport of v5.13's "sched,fair: Alternative sched_slice()". TG_PROPAGATE
// is schedlab's own switch (no-tg-propagate), on in every baseline.
func TestBaselineFeatures(t *testing.T) {
	for _, tc := range []struct{ kern, want string }{
		{kernels.V512, "ATTACH_AGE_LOAD CACHE_HOT_BUDDY GENTLE_FAIR_SLEEPERS LAST_BUDDY NONTASK_CAPACITY SIS_PROP START_DEBIT TG_PROPAGATE TTWU_QUEUE UTIL_EST UTIL_EST_FASTUP WAKEUP_PREEMPTION WA_BIAS WA_IDLE WA_WEIGHT | NEXT_BUDDY"},
		{kernels.V60, "ALT_PERIOD ATTACH_AGE_LOAD BASE_SLICE CACHE_HOT_BUDDY GENTLE_FAIR_SLEEPERS LAST_BUDDY NONTASK_CAPACITY SIS_UTIL START_DEBIT TG_PROPAGATE TTWU_QUEUE UTIL_EST UTIL_EST_FASTUP WAKEUP_PREEMPTION WA_BIAS WA_IDLE WA_WEIGHT | NEXT_BUDDY SIS_PROP"},
		{kernels.V619, "ATTACH_AGE_LOAD CACHE_HOT_BUDDY DELAY_DEQUEUE DELAY_ZERO NI_RANDOM NONTASK_CAPACITY PICK_BUDDY PLACE_DEADLINE_INITIAL PLACE_LAG PLACE_REL_DEADLINE PREEMPT_SHORT RUN_TO_PARITY SIS_UTIL TG_PROPAGATE TTWU_QUEUE UTIL_EST WAKEUP_PREEMPTION WA_BIAS WA_IDLE WA_WEIGHT | NEXT_BUDDY"},
	} {
		s := MustBaseline(tc.kern)
		var on, off []string
		for _, f := range s.Features() {
			if f.Enabled {
				on = append(on, f.Name)
			} else {
				off = append(off, f.Name)
			}
		}
		if got := strings.Join(on, " ") + " | " + strings.Join(off, " "); got != tc.want {
			t.Errorf("%s features (on | off):\n got %s\nwant %s", tc.kern, got, tc.want)
		}
	}
}

// TestBaselineSysctls: the kernel tunables each baseline has.
//
// Reference: the sysctl_sched_* and debugfs tunables of fair.c, v5.12
// (latency, min_granularity, wakeup_granularity, child_runs_first), v6.0
// (and idle_min_granularity, v5.15) and v6.19 (base_slice only, of these).
// Setting one a baseline lacks fails, as writing a missing file would;
// listing it is omitted.
func TestBaselineSysctls(t *testing.T) {
	for _, tc := range []struct {
		kern         string
		have, absent []string
	}{
		{kernels.V512, []string{"latency_ns", "min_granularity_ns", "wakeup_granularity_ns", "child_runs_first"}, []string{"base_slice_ns", "idle_min_granularity_ns"}},
		{kernels.V60, []string{"latency_ns", "min_granularity_ns", "idle_min_granularity_ns", "wakeup_granularity_ns", "child_runs_first"}, []string{"base_slice_ns"}},
		{kernels.V619, []string{"base_slice_ns", "migration_cost_ns"}, []string{"latency_ns", "min_granularity_ns", "idle_min_granularity_ns", "wakeup_granularity_ns", "sched_nr_latency", "child_runs_first"}},
	} {
		s := MustBaseline(tc.kern)
		listed := map[string]bool{}
		for _, c := range s.Sysctls() {
			listed[c.Name] = true
		}
		for _, n := range tc.have {
			if !listed[n] {
				t.Errorf("%s: %s not listed", tc.kern, n)
			}
		}
		for _, n := range tc.absent {
			if listed[n] {
				t.Errorf("%s: %s listed", tc.kern, n)
			}
			if err := s.SetSysctl(n, "1000000"); err == nil || err.Error() != "sysctl "+n+" is not in "+tc.kern {
				t.Errorf("%s: setting %s: %v", tc.kern, n, err)
			}
		}
	}
}

// TestNewidleTTWUPendingV512: a newly idle CPU with a wakeup queued on it.
//
// Reference: fair.c:newidle_balance, v5.12 (no ttwu_pending test) and
// v6.0 ("if (this_rq->ttwu_pending) return 0;" before anything else,
// e5e678e4fea2, v5.14).
//
// HiKey CPU 0 runs two tasks (the root domain is overloaded); CPU 1, idle
// with avg_idle 4 ms (above both gates), has a wakeup pending: v5.12
// passes the gate and balances, v6.0 returns at once.
func TestNewidleTTWUPendingV512(t *testing.T) {
	for _, tc := range []struct {
		kern   string
		passed bool
	}{{kernels.V512, true}, {kernels.V60, false}} {
		k, _, _ := twoOnCPU0(t, MustBaseline(tc.kern), true, 5*engine.Millisecond)
		rq := k.Rqs[1]
		rq.AvgIdle = uint64(4 * engine.Millisecond)
		rq.TTWUPending = 1
		rq.sgStatsChanged() // as ttwuQueue does
		before := k.BalanceStats.NewidleGatePassed
		k.thisCPU = 1
		k.schedBalanceNewidle(rq)
		rq.TTWUPending = 0
		rq.sgStatsChanged()
		if got := k.BalanceStats.NewidleGatePassed > before; got != tc.passed {
			t.Errorf("%s: newly idle balance with a wakeup pending passed the gate: %v, want %v", tc.kern, got, tc.passed)
		}
	}
}

// TestMisfitFailCount: a misfit balance that moves nothing.
//
// Reference: fair.c:load_balance, v6.0 (every failure of a busy or idle
// pass counts in nr_balance_failed) and fair.c:sched_balance_rq, v6.19
// (a migrate_misfit failure counts neither nr_balance_failed nor backs
// the interval off, v6.14).
//
// HiKey960: a CPU-bound task that ran 300 ms pinned to little CPU 0
// (util about 580 > 80% of 592) may then run anywhere, which makes it
// misfit. Big CPU 4's DIE pass (CPU_IDLE) classifies CPUs 0–3 as
// group_misfit_task: migrate_misfit, imbalance 1. CPU 0 runs only that
// task, so nothing is detached; need_active_balance starts the stopper.
// v6.0 counts the failure (nr_balance_failed 1), v6.19 does not (0).
func TestMisfitFailCount(t *testing.T) {
	for _, tc := range []struct {
		kern   string
		failed int
	}{{kernels.V60, 1}, {kernels.V619, 0}} {
		k := lbKernel(t, "hikey960", MustBaseline(tc.kern), false)
		n := k.NrCPUs()
		m := lbFork(t, k, "m", 0, cpumask.Of(n, 0), loop(engine.Second, 0))
		k.Eng.RunUntil(300 * engine.Millisecond)
		m.CPUsAllowed, m.NrCPUsAllowed = cpumask.Of(n, 0, 1, 2, 3, 4, 5, 6, 7), n
		k.updateMisfitStatus(m, k.Rqs[0])
		if k.Rqs[0].MisfitTaskLoad == 0 {
			t.Fatalf("%s: the task (util_est %d) is not misfit on CPU 0", tc.kern, k.taskUtilEst(m))
		}
		sd := k.Domains(4)[1]
		sd.NrBalanceFailed = 0
		k.thisCPU = 4
		cont := true
		if moved := k.schedBalanceRq(4, k.Rqs[4], sd, CPUIdle, &cont); moved != 0 || !k.Rqs[0].ActiveBalance {
			t.Fatalf("%s: moved %d, active balance %v", tc.kern, moved, k.Rqs[0].ActiveBalance)
		}
		if sd.NrBalanceFailed != tc.failed || sd.Stats.LbFailed[CPUIdle] != 1 {
			t.Errorf("%s: nr_balance_failed %d (want %d), lb_failed %d (want 1)", tc.kern, sd.NrBalanceFailed, tc.failed, sd.Stats.LbFailed[CPUIdle])
		}
	}
}

// TestLocalAboveAverage: calculate_imbalance when the local group is
// busier than the domain's average but less than the busiest group.
//
// Reference: fair.c:calculate_imbalance, v6.0 (no test of local against
// sds->avg_load: min((1000 − 800) × 1024, (800 − 900) × 1024, wrapped) /
// 1024 = 200) and v6.19 ("if (local->avg_load >= sds->avg_load)
// imbalance = 0", v6.6).
//
// Local fully busy with load 900 on capacity 1024; busiest overloaded at
// avg_load 1000; the domain at 2400 over 3072, avg_load 800.
func TestLocalAboveAverage(t *testing.T) {
	for _, tc := range []struct {
		kern string
		want int64
	}{{kernels.V60, 200}, {kernels.V512, 200}, {kernels.V619, 0}} {
		k := newTestKernel(t, "hikey", tc.kern)
		env := &lbEnv{sd: k.Domains(0)[1], idle: CPUNotIdle}
		sds := &sdLbStats{totalLoad: 2400, totalCapacity: 3072}
		sds.localStat = SgLbStats{GroupType: GroupFullyBusy, GroupLoad: 900, GroupCapacity: 1024, GroupWeight: 1}
		sds.busiestStat = SgLbStats{GroupType: GroupOverloaded, AvgLoad: 1000, GroupCapacity: 1024, GroupWeight: 1}
		k.calculateImbalance(env, sds)
		if env.imbalance != tc.want {
			t.Errorf("%s: imbalance %d (%v), want %d", tc.kern, env.imbalance, env.migrationType, tc.want)
		}
	}
}

// TestSerializeToken: where the SD_SERIALIZE token is taken.
//
// Reference: fair.c:rebalance_domains, v6.0 (need_serialize: the token is
// taken before the interval test and, when busy, the domain is skipped
// without calling load_balance) and fair.c:sched_balance_rq, v6.19 (taken
// after should_we_balance; a busy token is "balanced", v6.6).
//
// Zen3 2S NPS1, idle, CPU 0's interval has passed at every level and the
// token is held elsewhere: v6.19 enters the NUMA pass (lb_count and
// lb_balanced + 1), v6.0 and v5.12 skip it (both unchanged).
func TestSerializeToken(t *testing.T) {
	for _, tc := range []struct {
		kern    string
		entered bool
	}{{kernels.V60, false}, {kernels.V512, false}, {kernels.V619, true}} {
		k := newTestKernel(t, "zen3-2s-nps1", tc.kern)
		k.Eng.RunUntil(100 * engine.Millisecond)
		var numa *SchedDomain
		for _, sd := range k.Domains(0) {
			sd.LastBalance = k.Jiffies() - 1000
			if sd.T.Flags&topology.SDSerialize != 0 {
				numa = sd
			}
		}
		if numa == nil {
			t.Fatalf("%s: no SD_SERIALIZE level", tc.kern)
		}
		k.thisCPU = 0
		k.bal.serializeHeld = true // another CPU balances a NUMA level
		count, balanced := numa.Stats.LbCount[CPUIdle], numa.Stats.LbBalanced[CPUIdle]
		k.schedBalanceDomains(k.Rqs[0], CPUIdle)
		k.bal.serializeHeld = false
		entered := numa.Stats.LbCount[CPUIdle] == count+1 && numa.Stats.LbBalanced[CPUIdle] == balanced+1
		if entered != tc.entered || (!entered && numa.Stats.LbCount[CPUIdle] != count) {
			t.Errorf("%s: NUMA lb_count %d→%d, lb_balanced %d→%d; want the pass entered: %v", tc.kern,
				count, numa.Stats.LbCount[CPUIdle], balanced, numa.Stats.LbBalanced[CPUIdle], tc.entered)
		}
	}
}

// TestShouldWeBalanceIdleCore: which idle CPU of a group balances above
// the SMT level.
//
// Reference: fair.c:should_we_balance, v6.0 (the first idle CPU of the
// group's balance mask) and v6.19 (the first idle CPU on a fully idle
// core, else the first idle SMT sibling, v6.6).
//
// Zen3 2S NPS1: CPU 128, CPU 0's sibling, runs a task; everything else
// is idle. At DIE/PKG (the socket) the local group is CPU 0's LLC:
// v6.0's first idle CPU is 0, so CPU 0 balances; v6.19 skips core 0
// (busy sibling) and picks CPU 1 on the idle core 1, so CPU 0 does not.
func TestShouldWeBalanceIdleCore(t *testing.T) {
	for _, tc := range []struct {
		kern string
		want bool
	}{{kernels.V60, true}, {kernels.V512, true}, {kernels.V619, false}} {
		k := lbKernel(t, "zen3-2s-nps1", MustBaseline(tc.kern), false)
		lbFork(t, k, "s", 128, cpumask.Of(k.NrCPUs(), 128), loop(engine.Second, 0))
		k.Eng.RunUntil(10 * engine.Millisecond)
		sd := k.Domains(0)[2]
		if !k.Rqs[0].IdleCPU() || k.Rqs[128].IdleCPU() || sd.T.Flags&topology.SDShareLLC != 0 {
			t.Fatalf("%s: set-up: cpu0 idle %v, cpu128 idle %v, level %s", tc.kern, k.Rqs[0].IdleCPU(), k.Rqs[128].IdleCPU(), sd.T.Name)
		}
		env := &lbEnv{sd: sd, dstCPU: 0, dstRq: k.Rqs[0], idle: CPUIdle, cpus: sd.T.Span.Clone()}
		if got := k.shouldWeBalance(env); got != tc.want {
			t.Errorf("%s: should_we_balance(cpu0, %s) = %v, want %v", tc.kern, sd.T.Name, got, tc.want)
		}
	}
}

// TestNIRandom: a newly idle pass at a domain whose newidle_ratio is 0.
//
// Reference: fair.c:sched_balance_newidle, v6.19 (NI_RANDOM: the domain
// is balanced only when sched_rng() % 1024 <= 1 + newidle_ratio, else it
// counts a call without success) and fair.c:newidle_balance, v6.0 (no
// such feature: every domain within the cost budget is balanced).
//
// HiKey, CPU 0 overloaded, CPU 1 newly idle with avg_idle 4 ms; the MC
// domain's newidle_ratio is 0, a chance of 2 in 1024 which this seed does
// not draw: v6.19 skips MC (lb_count unchanged, newidle_call + 1), v6.0
// balances it (lb_count + 1).
func TestNIRandom(t *testing.T) {
	for _, tc := range []struct {
		kern     string
		balanced bool
	}{{kernels.V60, true}, {kernels.V619, false}} {
		k, _, _ := twoOnCPU0(t, MustBaseline(tc.kern), true, 5*engine.Millisecond)
		rq := k.Rqs[1]
		rq.AvgIdle = uint64(4 * engine.Millisecond)
		mc := k.Domains(1)[0]
		mc.NewidleRatio, mc.MaxNewidleLbCost = 0, 0
		count, calls := mc.Stats.LbCount[CPUNewlyIdle], mc.NewidleCall
		k.thisCPU = 1
		k.schedBalanceNewidle(rq)
		if got := mc.Stats.LbCount[CPUNewlyIdle] == count+1; got != tc.balanced {
			t.Errorf("%s: MC newly idle lb_count %d→%d, want balanced %v", tc.kern, count, mc.Stats.LbCount[CPUNewlyIdle], tc.balanced)
		}
		if tc.kern == kernels.V619 && mc.NewidleCall != calls+1 {
			t.Errorf("%s: newidle_call %d→%d, want one more", tc.kern, calls, mc.NewidleCall)
		}
	}
}

// TestTTWUWakingState: a second wakeup of a task whose first wakeup waits
// on the target's wake list finds it TASK_WAKING and does nothing.
//
// Reference: core.c:try_to_wake_up (v6.19; v6.0 and v5.12 alike): once a
// wakeup has found the task dequeued it sets p->__state = TASK_WAKING before
// select_task_rq and ttwu_queue, so ttwu_state_match fails for any wakeup
// that comes before sched_ttwu_pending activates it on the target; the task
// is enqueued once. Without TASK_WAKING the second wakeup would run the
// whole path again and enqueue it twice when the IPI arrives.
func TestTTWUWakingState(t *testing.T) {
	r := newRig(t, "hikey", kernels.V619)
	r.hog(0)
	p := r.sleeper(4, engine.Microsecond) // the other LLC: queued on its wake list
	r.run(5 * engine.Millisecond)
	k := r.on(0)
	if !k.TryToWakeUp(p, 0) || k.Rqs[4].TTWUPending != 1 {
		t.Fatalf("first wakeup: pending %d, state %v", k.Rqs[4].TTWUPending, p.State)
	}
	if p.State != TaskWaking {
		t.Errorf("state %v while the wakeup is queued, want W (TASK_WAKING)", p.State)
	}
	if k.TryToWakeUp(p, 0) {
		t.Error("a second wakeup while the first is queued reported a wakeup")
	}
	for i := 0; k.Rqs[4].TTWUPending > 0 && i < 1000; i++ {
		k.Eng.Step() // up to sched_ttwu_pending on CPU 4
	}
	if k.Rqs[4].TTWUPending != 0 || p.State != TaskRunning || p.OnRq != taskOnRqQueued {
		t.Errorf("after the IPI: pending %d, state %v, on_rq %d", k.Rqs[4].TTWUPending, p.State, p.OnRq)
	}
	if n := k.Rqs[4].CFS.HNrQueued; n != 1 {
		t.Errorf("cpu4 has %d queued fair tasks, want 1 (the task once)", n)
	}
}

// ExpireSleep cuts a timed sleep short: the task wakes at the call's
// time, in timer context (so a tracer reports no task as the waker); a
// task not in a timed sleep is left alone.
func TestExpireSleep(t *testing.T) {
	r := newRig(t, "hikey", kernels.V619)
	var woke engine.Time
	inIRQ := false
	slept := false
	p := r.spawn("sleeper", 2, 0, SchedNormal, ProgramFunc(func(k *Kernel, t *Task) Op {
		if !slept {
			slept = true
			return Sleep(engine.Second)
		}
		if woke == 0 {
			woke = k.Now()
		}
		return Block()
	}))
	r.k.Hooks.Waking = func(q *Task) {
		if q == p {
			inIRQ = r.k.InTimerIRQ()
		}
	}
	r.run(engine.Millisecond)
	at := r.k.Now()
	if !r.on(0).ExpireSleep(p) {
		t.Fatal("ExpireSleep reported no timed sleep")
	}
	r.run(engine.Millisecond)
	if woke < at || woke > at+engine.Millisecond/2 {
		t.Errorf("woke at %v, want soon after %v (not the 1 s timeout)", woke, at)
	}
	if !inIRQ {
		t.Error("the wakeup was not in timer context")
	}
	if r.k.ExpireSleep(p) {
		t.Error("ExpireSleep on a blocked task (no timer) reported a timed sleep")
	}
}

// TestCFSWakeupBuddyScale: check_preempt_wakeup's buddy scale reads the
// entities of curr's own cfs_rq (task_cfs_rq(curr)), not the root's.
//
// Reference: fair.c:check_preempt_wakeup, v6.0 ("struct cfs_rq *cfs_rq =
// task_cfs_rq(curr); int scale = cfs_rq->nr_running >= sched_nr_latency;"),
// with LAST_BUDDY on: a preempted curr becomes the last buddy only when
// scale holds (and the matched entity is a task, so the wakee is in
// curr's group).
//
// HiKey CPU 0 (sched_nr_latency 8): curr runs in group g beside 7 root
// tasks, so the root cfs_rq holds 8 entities (g's and the 7). A task of g
// woken with a vruntime far behind curr's preempts it; g's cfs_rq then
// holds curr and the wakee, 2, so curr is not the last buddy (the root's 8
// would make it one). With 7 more tasks in g, g's cfs_rq holds 9 and it
// is.
func TestCFSWakeupBuddyScale(t *testing.T) {
	for _, tc := range []struct {
		inGroup int
		last    bool
	}{{0, false}, {7, true}} {
		k := newTestKernel(t, "hikey", kernels.V60)
		tg, err := k.CreateGroup(nil, "g", 100)
		if err != nil {
			t.Fatal(err)
		}
		cpu0 := cpumask.Of(k.NrCPUs(), 0)
		fork := func(comm string, g *TaskGroup, prog Program) *Task {
			p, err := k.Fork(TaskSpec{Comm: comm, CPU: 0, Allowed: cpu0, Group: g, Prog: prog})
			if err != nil {
				t.Fatal(err)
			}
			return p
		}
		curr := fork("curr", tg, loop(engine.Second, 0))
		for i := 0; i < tc.inGroup; i++ {
			fork("g", tg, loop(engine.Second, 0))
		}
		for i := 0; i < 7; i++ {
			fork("root", nil, loop(engine.Second, 0))
		}
		wakee := fork("wakee", tg, runThenBlock(engine.Microsecond))
		k.Eng.RunUntil(200 * engine.Millisecond)
		rq := k.Rqs[0]
		if wakee.State == TaskRunning {
			t.Fatalf("inGroup %d: the wakee did not block", tc.inGroup)
		}
		for rq.Curr != curr {
			k.Eng.RunUntil(k.Now() + engine.Millisecond)
		}
		if n := rq.CFS.NrQueued; n != 8 {
			t.Fatalf("inGroup %d: the root cfs_rq holds %d entities, want 8", tc.inGroup, n)
		}
		for c := curr.SE.CfsRq; c != nil; c = parentCfsRq(c) {
			c.Last = nil
		}
		// A wakeup far behind in vruntime: it preempts.
		wakee.SE.Vruntime = 0
		k.thisCPU = 0
		k.WakeUp(wakee, 0)
		if !rq.needResched {
			t.Fatalf("inGroup %d: the wakeup did not preempt curr", tc.inGroup)
		}
		if n := curr.SE.CfsRq.NrQueued; n != tc.inGroup+2 {
			t.Fatalf("g's cfs_rq holds %d entities, want %d", n, tc.inGroup+2)
		}
		if got := curr.SE.CfsRq.Last == &curr.SE; got != tc.last {
			t.Errorf("inGroup %d: curr is the last buddy %v, want %v (g's cfs_rq has %d entities, the root %d)", tc.inGroup, got, tc.last, curr.SE.CfsRq.NrQueued, rq.CFS.NrQueued)
		}
	}
}

// TestMisfitMaxAllowed: a task too big for a little CPU, allowed only the
// little CPUs, is misfit on v6.0 (the fit test alone) and not on v6.19 (it
// is on a CPU of its max_allowed_capacity); allowed a big CPU too, it is
// misfit on both.
//
// Reference: fair.c:update_misfit_status, v6.0 ("if
// (task_fits_capacity(p, capacity_of(cpu_of(rq)))) misfit_task_load = 0")
// and v6.19 (also "if (task_fits_cpu(p, cpu) || arch_scale_cpu_capacity
// (cpu) == p->max_allowed_capacity)").
func TestMisfitMaxAllowed(t *testing.T) {
	for _, tc := range []struct {
		kern    string
		allowed []cpumask.CPU
		misfit  bool
	}{
		{kernels.V60, []cpumask.CPU{0, 1, 2, 3}, true},
		{kernels.V512, []cpumask.CPU{0, 1, 2, 3}, true},
		{kernels.V619, []cpumask.CPU{0, 1, 2, 3}, false},
		{kernels.V60, []cpumask.CPU{0, 4}, true},
		{kernels.V619, []cpumask.CPU{0, 4}, true},
	} {
		k := lbKernel(t, "hikey960", MustBaseline(tc.kern), false)
		n := k.NrCPUs()
		m := lbFork(t, k, "m", 0, cpumask.Of(n, 0), loop(engine.Second, 0))
		k.Eng.RunUntil(300 * engine.Millisecond)
		if k.taskFitsCPU(m, 0) {
			t.Fatalf("%s: the task (util_est %d) fits CPU 0", tc.kern, k.taskUtilEst(m))
		}
		m.CPUsAllowed, m.NrCPUsAllowed = cpumask.Of(n, tc.allowed...), len(tc.allowed)
		k.updateMisfitStatus(m, k.Rqs[0])
		if got := k.Rqs[0].MisfitTaskLoad != 0; got != tc.misfit {
			t.Errorf("%s, allowed %v: misfit %v, want %v", tc.kern, tc.allowed, got, tc.misfit)
		}
	}
}

// TestCFSIdleSliceFloor: BASE_SLICE's floor for a SCHED_IDLE entity is
// idle_min_granularity unless everything queued on its own cfs_rq is idle
// (sched_idle_cfs_rq), when it is min_granularity like any other's.
//
// Reference: fair.c:sched_slice and sched_idle_cfs_rq, v6.0 ("if
// (se_is_idle(init_se) && !sched_idle_cfs_rq(cfs_rq)) min_gran =
// sysctl_sched_idle_min_granularity; else min_gran =
// sysctl_sched_min_granularity"; the loop walks qcfs_rq, so cfs_rq stays
// the entity's own; cfs_rq->idle_nr_running counts its idle entities).
//
// HiKey CPU 0: group g holds 16 SCHED_IDLE tasks, the root a SCHED_NORMAL
// task beside g. An idle task's share of the period is small (the period
// of 17 tasks, 51 ms, × 3/48 in g × g's half of the root): 1.6 ms. g's
// cfs_rq is all idle, so the floor is min_granularity, 3 ms (0.75 ms ×
// 4), and the slice 3 ms. With a SCHED_NORMAL task in g too, g is not all
// idle: the floor is idle_min_granularity (0.75 ms, not scaled), below
// the share, which stays.
func TestCFSIdleSliceFloor(t *testing.T) {
	for _, normalInGroup := range []bool{false, true} {
		k := newTestKernel(t, "hikey", kernels.V60)
		tg, err := k.CreateGroup(nil, "g", 100)
		if err != nil {
			t.Fatal(err)
		}
		cpu0 := cpumask.Of(k.NrCPUs(), 0)
		fork := func(comm string, pol Policy, g *TaskGroup) *Task {
			p, err := k.Fork(TaskSpec{Comm: comm, CPU: 0, Allowed: cpu0, Policy: pol, Group: g, Prog: loop(engine.Second, 0)})
			if err != nil {
				t.Fatal(err)
			}
			return p
		}
		var idle *Task
		for i := 0; i < 16; i++ {
			idle = fork("idle", SchedIdle, tg)
		}
		fork("normal", SchedNormal, nil)
		if normalInGroup {
			fork("normal-g", SchedNormal, tg)
		}
		k.Eng.RunUntil(20 * engine.Millisecond)
		c := idle.SE.CfsRq
		if want := 16 + btoi(normalInGroup); c.NrQueued != want || c.IdleNrQueued != 16 {
			t.Fatalf("normal in g %v: g holds %d, %d idle; want %d and 16", normalInGroup, c.NrQueued, c.IdleNrQueued, want)
		}
		got := k.schedSlice(c, &idle.SE)
		if normalInGroup {
			if got < k.S.IdleMinGranularity || got >= k.minGranularity {
				t.Errorf("normal in g: slice %d, want the share, above the idle floor %d and below min_granularity %d", got, k.S.IdleMinGranularity, k.minGranularity)
			}
		} else if got != k.minGranularity {
			t.Errorf("g all idle: slice %d, want min_granularity %d", got, k.minGranularity)
		}
	}
}
