package sched

import (
	"github.com/schedlab/schedlab/internal/kernels"
	"strings"
	"testing"

	"github.com/schedlab/schedlab/internal/costmodel"
	"github.com/schedlab/schedlab/internal/cpumask"
	"github.com/schedlab/schedlab/internal/engine"
	"github.com/schedlab/schedlab/internal/topology"
)

func withCosts(t *testing.T, k *Kernel) {
	t.Helper()
	p, err := costmodel.For(k.Topo.Spec)
	if err != nil {
		t.Fatal(err)
	}
	k.S.CostJitterPct = 0
	k.ApplyCosts(costmodel.Compile(p, k.Topo.Spec))
}

// TestSchedutilFollowsUtilisation: on a HiKey (one frequency domain of 8
// CPUs, schedutil by default on arm64) an idle machine sits at the minimum
// frequency; a CPU hog drives the domain to the maximum, since schedutil
// asks for max(util)·1.25 of the capacity; the hog's 10 ms of work takes
// longer than 10 ms (it starts slow) but less than at the minimum
// frequency throughout. With the performance governor the hog runs at the
// maximum from the start.
// Reference: cpufreq_schedutil.c:sugov_update_shared, get_next_freq,
// map_util_perf (v6.19).
func TestSchedutilFollowsUtilisation(t *testing.T) {
	k := newTestKernel(t, "hikey", kernels.V619)
	withCosts(t, k)
	min := uint64(SchedCapacityScale * MinFreqPct / 100)
	for _, rq := range k.Rqs {
		if rq.FreqScale != min {
			t.Fatalf("cpu%d starts at %d/1024, want the minimum %d", rq.CPU, rq.FreqScale, min)
		}
	}
	p := runOnce(t, k, "hog", 0, Run(10*engine.Millisecond), 0)
	// A longer hog keeps the domain busy after the first one exits.
	runOnce(t, k, "long", 1, Run(300*engine.Millisecond), 0)
	k.Eng.RunUntil(200 * engine.Millisecond)
	if got := k.Rqs[5].FreqScale; got != SchedCapacityScale {
		t.Errorf("with a CPU hog, the domain runs at %d/1024, want 1024", got)
	}
	if k.FreqChanges == 0 {
		t.Error("no frequency change")
	}
	if p.Exited <= 10*engine.Millisecond || p.Exited >= 50*engine.Millisecond {
		t.Errorf("10 ms of work done at %v: want slower than at full speed, faster than at 20%%", p.Exited)
	}

	k2 := newTestKernel(t, "hikey", kernels.V619)
	k2.S.CpufreqGovernor = GovernorPerformance
	withCosts(t, k2)
	p2 := runOnce(t, k2, "hog", 0, Run(10*engine.Millisecond), 0)
	k2.Eng.RunUntil(100 * engine.Millisecond)
	if k2.Rqs[0].FreqScale != SchedCapacityScale || k2.FreqChanges != 0 {
		t.Errorf("performance governor: scale %d, %d changes", k2.Rqs[0].FreqScale, k2.FreqChanges)
	}
	if p.Exited <= p2.Exited {
		t.Errorf("schedutil finished at %v, performance at %v", p.Exited, p2.Exited)
	}
	// Context switch and idle-exit costs are charged, so the performance
	// run ends a little after 10 ms.
	if p2.Exited < 10*engine.Millisecond || p2.Exited > 11*engine.Millisecond {
		t.Errorf("performance governor: 10 ms of work done at %v", p2.Exited)
	}
}

// TestSchedutilShortDutyCycle: a task pinned to CPU 2 of a HiKey runs 1 ms
// of work every 3 ms of sleep, with the cost model on (schedutil, jitter
// off). The frequency it settles at follows from PELT and schedutil:
//
//  1. Idle states. The rest of CPU 2's cluster (CPUs 0-3) is idle and each
//     idle period is 3 ms of sleep plus the wake-up. The governor's
//     average leaves out the state's advertised exit latency, as
//     menu_update does: from cluster-sleep (advertised 1500 µs, the DT's
//     wakeup-latency-us) 3.7 ms − 1.5 ms = 2.2 ms, from cpu-sleep
//     (advertised 950 µs = entry + exit) 3.25 ms − 0.95 ms = 2.3 ms. Both
//     are below cluster-sleep's 2.7 ms target residency and above
//     cpu-sleep's 1 ms, so the CPU settles in cpu-sleep, and every wakeup
//     takes its 250 µs hardware exit (the DT's exit-latency-us;
//     Settings.IdleWakeActual).
//  2. What PELT sees. The sleep timer's handler runs once the CPU is out of
//     its idle state, so the task is enqueued only then, and it is alone:
//     it is runnable without running only while its CPU finishes work it
//     was doing when the timer fired, the periodic balance of the tick an
//     idle CPU keeps when its predicted idle (≈ 2.3 ms) is shorter than a
//     tick (4 ms at HZ=250): at most about one balance pass a cycle, so
//     runnable_sum stays within a pass's worth of util_sum and
//     runnable_avg within 1 of util_avg (pelt.c:__update_load_avg_se
//     passes se->on_rq as runnable and cfs_rq->curr == se as running).
//     While it runs, clock_pelt advances by wall time × freq/1024; at idle
//     entry clock_pelt syncs with clock_task (pelt.h:update_rq_clock_pelt,
//     _update_idle_rq_clock_pelt). So each cycle PELT counts 1 ms running
//     in a wall-clock cycle of T(f) = 1 ms·1024/f + 3 ms + 0.25 ms (plus
//     µs of switch costs).
//  3. The util the governor sees. At the end of a run util_avg peaks at
//     U(f) = 1024·(1 − y^a)/(1 − y^c), y = 2^(−1/32), a = 1 ms and c = T(f)
//     in 1.048576 ms periods: U(1024) ≈ 249, U(204) ≈ 133 (trough
//     U·y^(c−a) ≈ 115). util_est is the EWMA of util_avg at dequeue
//     (fair.c:util_est_update), so it is at most U(f) plus the 10-unit
//     margin once settled; with runnable equal to util, the "runnable
//     above util" skip never holds and it decays by a quarter of the
//     difference per cycle.
//  4. schedutil asks for 1.25 × max(util_avg, util_est) of the maximum
//     (map_util_perf, get_next_freq): 1.25·U(f) ≈ 311 at f = 1024, 167 at
//     f = 204. That is below f everywhere in [204, 1024], so every cycle
//     lowers the frequency until the policy's minimum, 1024·20/100 = 204,
//     and the request (≈ 167) keeps it there.
//
// Before idle exits were modelled (idle_exit.go) the task was enqueued
// when the timer fired and waited 700 µs runnable: runnable_avg ≈ 340
// against util_avg ≈ 200 kept util_est at the 512 of its first dequeue
// and the frequency at 1.25·512 = 640.
// Reference: pelt.c:___update_load_sum, pelt.h:update_rq_clock_pelt,
// fair.c:util_est_update, cpufreq_schedutil.c:get_next_freq (v6.19);
// drivers/cpuidle/governors/menu.c:menu_update; dt_idle_states.c.
func TestSchedutilShortDutyCycle(t *testing.T) {
	k := newTestKernel(t, "hikey", kernels.V619)
	withCosts(t, k)
	p, err := k.Fork(TaskSpec{Comm: "duty", CPU: 2, Allowed: cpumask.Of(8, 2), Prog: loop(engine.Millisecond, 3*engine.Millisecond)})
	if err != nil {
		t.Fatal(err)
	}
	k.Eng.RunUntil(engine.Second)
	// runnableSlack bounds runnable_sum − util_sum (step 2): the longest
	// periodic balance pass so far, in PELT's 1024 ns units scaled by
	// 1024, plus one unit of rounding; far below the 250 µs exit wait that
	// used to stop util_est decaying.
	runnableSlack := (uint64(k.BalanceStats.PeriodicBalance.Max)/1024 + 1) * 1024
	if k.BalanceStats.PeriodicBalance.Calls == 0 {
		t.Fatal("CPU 2 kept no tick: step 2's premise does not hold")
	}
	const minFreq = SchedCapacityScale * MinFreqPct / 100 // 204
	var maxUtil, maxGap uint64
	minUtil := uint64(SchedCapacityScale)
	exitBefore := k.Rqs[2].Costs.IdleExitNs
	for i := 1; i <= 4000; i++ {
		k.Eng.RunUntil(engine.Second + engine.Time(i)*engine.Millisecond/4)
		a := p.SE.Avg
		if a.RunnableAvg > a.UtilAvg+1 || a.RunnableSum > uint64(a.UtilSum)+runnableSlack {
			t.Fatalf("at %v: runnable_sum %d, util_sum %d (avg %d, %d): a lone task waits runnable only for its CPU's balancing",
				k.Eng.Now(), a.RunnableSum, a.UtilSum, a.RunnableAvg, a.UtilAvg)
		}
		maxGap = max(maxGap, a.RunnableSum-uint64(a.UtilSum))
		if s := k.Rqs[2].FreqScale; s != minFreq {
			t.Fatalf("at %v: frequency %d/1024, want the minimum %d (1.25 × util ≈ 167 is below it)", k.Eng.Now(), s, minFreq)
		}
		maxUtil, minUtil = max(maxUtil, a.UtilAvg), min(minUtil, a.UtilAvg)
	}
	// Integer PELT rounds a unit or two away from the real-valued U(204).
	if maxUtil < 131 || maxUtil > 135 || minUtil < 113 || minUtil > 117 {
		t.Errorf("util_avg between %d and %d, want the derived trough ≈ 115 and peak ≈ 133", minUtil, maxUtil)
	}
	if e := uint64(p.SE.Avg.UtilEst &^ utilAvgUnchanged); e < minUtil || e > maxUtil+utilEstMargin {
		t.Errorf("util_est %d, want it between the trough %d and the peak %d plus the margin", e, minUtil, maxUtil)
	}
	// One 250 µs cpu-sleep wake-up per cycle of T(204) ≈ 8.27 ms: about
	// 121 in the last second (and none from cluster-sleep, which would
	// charge 700 µs and break the multiple of 250 µs).
	if d := k.Rqs[2].Costs.IdleExitNs - exitBefore; d%250000 != 0 || d/250000 < 116 || d/250000 > 124 {
		t.Errorf("idle exits took %d ns in a second, want ≈ 121 cpu-sleep wake-ups of 250 µs", d)
	}
	t.Logf("1 ms every 4 ms: frequency %d/1024, util_avg %d..%d, util_est %d, runnable_sum above util_sum by at most %d", k.Rqs[2].FreqScale, minUtil, maxUtil, p.SE.Avg.UtilEst&^utilAvgUnchanged, maxGap)
}

// TestMachineGovernor: without model_cpufreq_governor the governor is the
// machine's cpufreq_governor (the Kunpeng 920 presets: performance, as
// servers), else the architecture's (hikey, arm64: schedutil;
// zen3, x86: performance); the setting overrides the machine's.
func TestMachineGovernor(t *testing.T) {
	for _, tc := range []struct {
		machine, setting, want string
	}{
		{"kunpeng920-96", GovernorAuto, GovernorPerformance},
		{"hikey", GovernorAuto, GovernorSchedutil},
		{"zen3-2s-nps1", GovernorAuto, GovernorPerformance},
		{"kunpeng920-96", GovernorSchedutil, GovernorSchedutil},
	} {
		k := newTestKernel(t, tc.machine, kernels.V60)
		k.S.CpufreqGovernor = tc.setting
		if got := k.governor(); got != tc.want {
			t.Errorf("%s with %q: governor %s, want %s", tc.machine, tc.setting, got, tc.want)
		}
	}
	spec, err := topology.Load("hikey")
	if err != nil {
		t.Fatal(err)
	}
	spec.CpufreqGovernor = "turbo"
	if err := spec.Validate(); err == nil || !strings.Contains(err.Error(), `cpufreq_governor must be performance or schedutil, not "turbo"`) {
		t.Errorf("bad governor: %v", err)
	}
}
