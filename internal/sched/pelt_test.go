package sched

import (
	"github.com/schedlab/schedlab/internal/kernels"
	"math"
	"testing"

	"github.com/schedlab/schedlab/internal/cpumask"
	"github.com/schedlab/schedlab/internal/engine"
)

// The expectations in this file are derived from PELT's definition, not
// from the implementation: y = 0.5^(1/32) per 1024-µs period; a signal that
// is 1 while running and 0 otherwise accumulates 1024·Σ y^k per period and
// its average is sum / (LOAD_AVG_MAX - 1024 + period_contrib). The kernel's
// integer arithmetic (truncated decay, partial-period segments) differs from
// the real-valued formula by a few units, which is the tolerance used; exact
// values are taken from kernel-fair.md §4.8, computed there by an
// independent implementation of pelt.c.
// Reference: pelt.c:decay_load, accumulate_sum, ___update_load_sum,
// ___update_load_avg (v6.19).

var y = math.Pow(0.5, 1.0/32)

const periodNs = 1024 * 1024

func TestDecayLoadGolden(t *testing.T) {
	for _, tc := range []struct {
		val, n, want uint64
	}{
		{1024, 1, 1002}, {1024, 32, 511}, {47742, 32, 23870}, {1024, 0, 1023},
		{1 << 40, 64, 1<<38 - 64}, {12345, 32*63 + 1, 0},
	} {
		if got := decayLoad(tc.val, tc.n); got != tc.want {
			t.Errorf("decay_load(%d, %d) = %d, want %d", tc.val, tc.n, got, tc.want)
		}
		// Within one unit of val·y^n (the table holds ⌊(2^32-1)·y^n⌋).
		if f := float64(tc.val) * math.Pow(y, float64(tc.n)); math.Abs(float64(decayLoad(tc.val, tc.n))-f) > 1+f*1e-9 {
			t.Errorf("decay_load(%d, %d) = %d, real value %.2f", tc.val, tc.n, decayLoad(tc.val, tc.n), f)
		}
	}
}

// TestLoadAvgMax checks LOAD_AVG_MAX is the fixed point of max = max·y + 1024
// in the kernel's integer recurrence.
func TestLoadAvgMax(t *testing.T) {
	var max uint64
	for i := 0; i < 1000; i++ {
		max = decayLoad(max, 1) + 1024
	}
	if max != LoadAvgMax {
		t.Fatalf("integer recurrence converges to %d, LOAD_AVG_MAX is %d", max, LoadAvgMax)
	}
}

// runningAvg is the real-valued PELT average of a signal that has been 1
// for n whole periods since zero: each period contributes 1024·y^k.
func runningAvg(n int) float64 {
	var s float64
	for k := 1; k <= n; k++ {
		s += 1024 * math.Pow(y, float64(k))
	}
	return 1024 * s / PeltMinDivider
}

func TestAlwaysRunningAtPeriodBoundaries(t *testing.T) {
	golden := map[int][2]uint64{ // periods → util_avg, load_avg (kernel-fair.md §4.8)
		1: {21, 21}, 2: {43, 43}, 4: {85, 85}, 8: {163, 162}, 16: {300, 300}, 32: {512, 512},
		64: {768, 768}, 100: {907, 907}, 200: {1011, 1010}, 345: {1024, 1023}, 400: {1024, 1023},
	}
	var sa SchedAvg
	sa.LastUpdateTime = 1 << 30
	for n := 1; n <= 400; n++ {
		now := uint64(1<<30) + uint64(n)*periodNs
		if !updateLoadSum(now, &sa, 1, 1, true) {
			t.Fatalf("period %d: no period crossed", n)
		}
		updateLoadAvg(&sa, 1024)
		if n == 1 && sa.UtilSum != 1026048 {
			t.Errorf("util_sum after 1 period = %d, want 1026048", sa.UtilSum)
		}
		if g, ok := golden[n]; ok {
			if sa.UtilAvg != g[0] || sa.LoadAvg != g[1] {
				t.Errorf("after %d periods util_avg=%d load_avg=%d, want %d/%d", n, sa.UtilAvg, sa.LoadAvg, g[0], g[1])
			}
		}
		want := math.Min(runningAvg(n), 1024)
		if math.Abs(float64(sa.UtilAvg)-want) > 2 {
			t.Errorf("after %d periods util_avg=%d, formula gives %.1f", n, sa.UtilAvg, want)
		}
	}
	// Then blocked: every 32 periods halve it.
	blocked := map[int][2]uint64{1: {1002, 1001}, 8: {861, 860}, 32: {512, 511}, 64: {256, 255}, 100: {117, 116}}
	start := uint64(1<<30) + 400*periodNs
	u0 := float64(sa.UtilAvg)
	for n := 1; n <= 100; n++ {
		updateLoadSum(start+uint64(n)*periodNs, &sa, 0, 0, false)
		updateLoadAvg(&sa, 1024)
		if g, ok := blocked[n]; ok && (sa.UtilAvg != g[0] || sa.LoadAvg != g[1]) {
			t.Errorf("blocked %d periods: util_avg=%d load_avg=%d, want %d/%d", n, sa.UtilAvg, sa.LoadAvg, g[0], g[1])
		}
		if want := u0 * math.Pow(y, float64(n)); math.Abs(float64(sa.UtilAvg)-want) > 3 {
			t.Errorf("blocked %d periods: util_avg=%d, formula gives %.1f", n, sa.UtilAvg, want)
		}
	}
}

// TestAlwaysRunningTaskInKernel runs one CPU hog with HZ=1000 on an idle
// machine; its entity is updated at every 1 ms tick. A forked task starts
// with util_avg = half the spare capacity (post_init_entity_util_avg: 512
// here), attached at a period boundary, so after p whole periods the real
// valued average is 512·y^p plus the running contribution.
func TestAlwaysRunningTaskInKernel(t *testing.T) {
	for _, kern := range kernels.Names() {
		t.Run(kern, func(t *testing.T) {
			k := newTestKernel(t, "hikey", kern)
			k.S.HZ = 1000
			if err := k.ApplySettings(); err != nil {
				t.Fatal(err)
			}
			p, err := k.Fork(TaskSpec{Comm: "hog", Allowed: cpumask.Of(8, 0), Prog: loop(10*engine.Second, 0)})
			if err != nil {
				t.Fatal(err)
			}
			if p.SE.Avg.UtilAvg != 512 {
				t.Fatalf("initial util_avg %d, want (1024-0)/2", p.SE.Avg.UtilAvg)
			}
			lastPeriods, lastUnits := 0, uint64(0)
			for n := 1; n <= 1000; n++ {
				k.Eng.RunUntil(engine.Time(n) * engine.Millisecond)
				u := p.SE.Avg.UtilAvg
				// _avg values are recomputed only by an update that
				// crosses a period boundary: use the last such update.
				if nu := uint64(n) * 1000000 / 1024; int(nu/1024) > lastPeriods {
					lastPeriods, lastUnits = int(nu/1024), nu
				}
				// PELT's definition at an update T units (1024 ns) after
				// the attach: p = T/1024 whole periods, each weighted
				// y^k, the current partial one (r units) with weight 1,
				// divided by the divider LOAD_AVG_MAX-1024+r.
				units := lastUnits
				periods, r := int(units/1024), float64(units%1024)
				if periods == 0 {
					continue // no period crossed yet: util_avg not recomputed
				}
				var sum float64 = 512 * PeltMinDivider * math.Pow(y, float64(periods))
				for k := 1; k <= periods; k++ {
					sum += 1024 * 1024 * math.Pow(y, float64(k))
				}
				sum += 1024 * r
				want := math.Min(sum/(PeltMinDivider+r), 1024)
				if math.Abs(float64(u)-want) > 3 {
					t.Errorf("after %d ms (%d periods) util_avg=%d, formula gives %.1f", n, periods, u, want)
				}
			}
			// A lone nice-0 task always runnable: load_avg tends to its
			// weight (1023 after the integer truncations).
			if la := p.SE.Avg.LoadAvg; la != 1023 {
				t.Errorf("task load_avg = %d, want 1023", la)
			}
			if la := k.Rqs[0].CFS.Avg.LoadAvg; la < 1020 || la > 1024 {
				t.Errorf("root cfs_rq load_avg = %d", la)
			}
		})
	}
}

// TestRunSleep8ms runs a task 8 ms / sleeps 8 ms. In steady state the real
// valued PELT average at the end of a run is u = 1024(1-y^r)/(1-y^(r+s))
// and u·y^s at the end of a sleep, with r = s = 8 ms in periods; the
// reference gives ≈ 556 and ≈ 468.
func TestRunSleep8ms(t *testing.T) {
	k := newTestKernel(t, "hikey", kernels.V619)
	p, err := k.Fork(TaskSpec{Comm: "rs", Allowed: cpumask.Of(8, 3), CPU: 3, Prog: loop(8*engine.Millisecond, 8*engine.Millisecond)})
	if err != nil {
		t.Fatal(err)
	}
	var endRun, endSleep []uint64
	k.Hooks.Switch = func(cpu cpumask.CPU, prev *Task, st TaskState, next *Task) {
		if prev == p && st == TaskInterruptible {
			endRun = append(endRun, p.SE.Avg.UtilAvg)
		}
		if next == p {
			endSleep = append(endSleep, p.SE.Avg.UtilAvg)
		}
	}
	k.Eng.RunUntil(2 * engine.Second)
	r := 8e6 / periodNs
	uRun := 1024 * (1 - math.Pow(y, r)) / (1 - math.Pow(y, 2*r))
	uSleep := uRun * math.Pow(y, r)
	last := func(v []uint64) uint64 { return v[len(v)-1] }
	if len(endRun) < 100 {
		t.Fatalf("only %d cycles", len(endRun))
	}
	t.Logf("end of run %d (formula %.1f), end of sleep %d (formula %.1f)", last(endRun), uRun, last(endSleep), uSleep)
	// PELT only moves at period boundaries crossed by an update, so the
	// sampled value lags the real one by at most one period's change.
	if d := math.Abs(float64(last(endRun)) - uRun); d > 15 {
		t.Errorf("end of run util_avg %d, formula %.1f", last(endRun), uRun)
	}
	if d := math.Abs(float64(last(endSleep)) - uSleep); d > 15 {
		t.Errorf("end of sleep util_avg %d, formula %.1f", last(endSleep), uSleep)
	}
}

// TestBlockedLoadHalves puts a saturated task to sleep and checks its
// blocked contribution to the idle CPU's root cfs_rq halves after 32
// periods, as decay_load(x, 32) = x/2 says.
func TestBlockedLoadHalves(t *testing.T) {
	k := newTestKernel(t, "hikey", kernels.V619)
	n := 0
	prog := ProgramFunc(func(k *Kernel, t *Task) Op {
		n++
		if n == 1 {
			return Run(500 * engine.Millisecond)
		}
		return Block()
	})
	p, _ := k.Fork(TaskSpec{Comm: "b", Allowed: cpumask.Of(8, 2), CPU: 2, Prog: prog})
	var sleptAt engine.Time
	k.Hooks.Switch = func(cpu cpumask.CPU, prev *Task, st TaskState, next *Task) {
		if prev == p {
			sleptAt = k.Now()
		}
	}
	k.Eng.RunUntil(500*engine.Millisecond + 1000)
	if p.State != TaskInterruptible || sleptAt == 0 {
		t.Fatal("task did not block")
	}
	k.SchedBalanceUpdateBlockedAverages(2)
	c := k.Rqs[2].CFS
	l0, u0 := c.Avg.LoadAvg, c.Avg.UtilAvg
	base := k.Now()
	k.Eng.RunUntil(base + 32*periodNs)
	k.SchedBalanceUpdateBlockedAverages(2)
	l1, u1 := c.Avg.LoadAvg, c.Avg.UtilAvg
	t.Logf("blocked load %d -> %d, util %d -> %d after 32 periods", l0, l1, u0, u1)
	if l0 < 1000 || u0 < 1000 {
		t.Fatalf("task was not saturated: load %d util %d", l0, u0)
	}
	if math.Abs(float64(l1)-float64(l0)/2) > 2 || math.Abs(float64(u1)-float64(u0)/2) > 2 {
		t.Errorf("after 32 periods load %d→%d util %d→%d: not halved", l0, l1, u0, u1)
	}
	// Our two calls each walked the one leaf cfs_rq (the root); the NOHZ
	// idle balancer may have made more calls in between, which only
	// decays earlier (decay is the same however it is split).
	if k.Rqs[2].BlockedUpdates < 2 || k.Rqs[2].BlockedCfsRqsWalked != k.Rqs[2].BlockedUpdates {
		t.Errorf("update_blocked_averages calls %d walked %d", k.Rqs[2].BlockedUpdates, k.Rqs[2].BlockedCfsRqsWalked)
	}
}

// TestMigrationInsideCgroupPropagates moves a sleeping task of cgroup /a
// from CPU 0 to CPU 1 and wakes it there. With propagation (v4.10+) the
// root cfs_rq of CPU 1 gains the task's utilisation in the same enqueue and
// CPU 0's root loses it at its next update; without it (the no-tg-propagate
// behaviour) the roots only converge through PELT.
// Reference: fair.c:attach_entity_load_avg, remove_entity_load_avg,
// propagate_entity_load_avg, update_tg_cfs_util (v6.19); patches.md §4.
func TestMigrationInsideCgroupPropagates(t *testing.T) {
	for _, propagate := range []bool{true, false} {
		k := newTestKernel(t, "hikey", kernels.V619)
		k.S.TgPropagate = propagate
		a, err := k.CreateGroup(nil, "a", 100)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		prog := ProgramFunc(func(k *Kernel, t *Task) Op {
			n++
			if n%2 == 1 {
				return Run(300 * engine.Millisecond)
			}
			return Block()
		})
		p, _ := k.Fork(TaskSpec{Comm: "m", Group: a, CPU: 0, Prog: prog})
		k.Eng.RunUntil(300 * engine.Millisecond)
		k.Eng.RunUntil(301 * engine.Millisecond) // blocked by now
		if p.State != TaskInterruptible || p.CPU() != 0 {
			t.Fatalf("setup: state %v cpu %d", p.State, p.CPU())
		}
		k.SchedBalanceUpdateBlockedAverages(0)
		root0, root1 := k.Rqs[0].CFS, k.Rqs[1].CFS
		before0 := root0.Avg.UtilAvg
		taskUtil := p.SE.Avg.UtilAvg
		if err := k.MigrateTask(p, 1); err != nil {
			t.Fatal(err)
		}
		k.SetThisCPU(1)
		k.WakeUp(p, 0)
		k.Eng.RunUntil(301*engine.Millisecond + 10000)
		k.SchedBalanceUpdateBlockedAverages(0)
		after0, after1 := root0.Avg.UtilAvg, root1.Avg.UtilAvg
		t.Logf("propagate=%v task util %d: cpu0 root %d -> %d, cpu1 root 0 -> %d", propagate, taskUtil, before0, after0, after1)
		if taskUtil < 900 || before0 < 900 {
			t.Fatalf("setup: task util %d, cpu0 root util %d", taskUtil, before0)
		}
		if propagate {
			// The whole task utilisation moves at once (±1% for the
			// decay between the samples).
			// cpu1's root holds exactly the attached task's signal (the
			// group entity copies its queue's util, update_tg_cfs_util).
			attached := p.SE.Avg.UtilAvg
			if float64(after1) < 0.98*float64(taskUtil) || after0 > before0/50 || absDiff(after1, attached) > 2 {
				t.Errorf("propagation: cpu0 %d→%d, cpu1 %d (task %d)", before0, after0, after1, taskUtil)
			}
		} else {
			// Only PELT convergence: cpu1's root has gained almost nothing
			// and cpu0's root still holds the old group entity's signal.
			if after1 > taskUtil/10 || after0 < before0*9/10 {
				t.Errorf("without propagation: cpu0 %d→%d, cpu1 %d (task %d)", before0, after0, after1, taskUtil)
			}
		}
	}
}

func absDiff(a, b uint64) uint64 {
	if a > b {
		return a - b
	}
	return b - a
}
