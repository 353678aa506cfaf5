package sched

import (
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
