package kthreads

import (
	"strings"
	"testing"

	"github.com/schedlab/schedlab/internal/costmodel"
	"github.com/schedlab/schedlab/internal/cpumask"
	"github.com/schedlab/schedlab/internal/engine"
	"github.com/schedlab/schedlab/internal/kernels"
	"github.com/schedlab/schedlab/internal/sched"
	"github.com/schedlab/schedlab/internal/topology"
)

// kernel builds zen3-2s-nps1 (256 CPUs, 2 nodes, HZ 250) with its cost
// model and a quiet server's kernel threads.
func kernel(t *testing.T, mutate func(*sched.Kernel)) *sched.Kernel {
	t.Helper()
	spec, err := topology.Load("zen3-2s-nps1")
	if err != nil {
		t.Fatal(err)
	}
	s := sched.MustBaseline(kernels.V619)
	topo, err := topology.Build(spec, sched.TopologyOptions(s))
	if err != nil {
		t.Fatal(err)
	}
	k, err := sched.New(engine.New(1), topo, s)
	if err != nil {
		t.Fatal(err)
	}
	p, ok := costmodel.Defaults("zen3-2s-nps1")
	if !ok {
		t.Fatal("no zen3 costs")
	}
	k.ApplyCosts(costmodel.Compile(p, spec))
	if mutate != nil {
		mutate(k)
	}
	if err := Add(k, 1); err != nil {
		t.Fatal(err)
	}
	return k
}

// TestQuietServer: when each kernel thread wakes, and where.
//
// Reference: mm/vmstat.c (vmstat_update re-armed with
// round_jiffies_relative(sysctl_stat_interval), a deferrable work;
// vmstat_shepherd likewise), kernel/time/timer.c:round_jiffies_common
// (add 3·cpu jiffies, round to the second, subtract them again),
// kernel/watchdog.c (sample_period = 2 × watchdog_thresh / 5), and
// mm/compaction.c (HPAGE_FRAG_CHECK_INTERVAL_MSEC), v6.19.
//
// CPU 3 runs a spinning task from the start; CPU 4 stays idle. At HZ 250
// (4 ms jiffies) CPU 3's vmstat_update is due 3·3 = 9 jiffies (36 ms)
// before each second, so its kworker wakes at 0.964, 1.964, ... 4.964 s;
// CPU 100's skew is 300 mod 250 = 50 jiffies (200 ms). CPU 4's kworker,
// deferrable on an idle CPU, never wakes. The RCU grace-period kthread
// and kcompactd sleep a relative timeout after each run (250 ms, 500 ms),
// from a first sleep shorter than that: in 5.5 s the first wakes 21 or 22
// times, each kcompactd 10 or 11, as the phase falls.
func TestQuietServer(t *testing.T) {
	k := kernel(t, nil)
	n := k.NrCPUs()
	spin := func(cpu int) {
		if _, err := k.Fork(sched.TaskSpec{Comm: "spin", CPU: cpumask.CPU(cpu), Allowed: cpumask.Of(n, cpumask.CPU(cpu)),
			Prog: sched.ProgramFunc(func(k *sched.Kernel, t *sched.Task) sched.Op { return sched.Run(10 * engine.Millisecond) })}); err != nil {
			t.Fatal(err)
		}
	}
	spin(3)
	spin(100)
	wakes := map[string][]engine.Time{}
	k.Hooks.Wakeup = func(p *sched.Task, cpu cpumask.CPU) {
		wakes[p.Comm] = append(wakes[p.Comm], k.Now())
	}
	const end = 5500 * engine.Millisecond
	k.Eng.RunUntil(end)

	check := func(comm string, first engine.Time) {
		t.Helper()
		var want []engine.Time
		for at := first; at <= end; at += StatInterval {
			want = append(want, at)
		}
		got := wakes[comm]
		if len(got) != len(want) {
			t.Errorf("%s woke at %v, want %v", comm, got, want)
			return
		}
		for i := range want {
			if got[i] != want[i] {
				t.Errorf("%s woke at %v, want %v", comm, got, want)
				return
			}
		}
	}
	check("kworker/3:1", engine.Second-9*4*engine.Millisecond)
	check("kworker/100:1", engine.Second-50*4*engine.Millisecond)
	if w := wakes["kworker/4:1"]; len(w) != 0 {
		t.Errorf("the idle CPU's deferrable vmstat work woke its kworker at %v", w)
	}
	if w := len(wakes["rcu_preempt"]); w < 21 || w > 22 {
		t.Errorf("rcu_preempt woke %d times in 5.5 s, want 21 or 22", w)
	}
	for _, c := range []string{"kcompactd0", "kcompactd1"} {
		if w := len(wakes[c]); w < 10 || w > 11 {
			t.Errorf("%s woke %d times in 5.5 s, want 10 or 11", c, w)
		}
	}
	var names []string
	for _, p := range k.Tasks {
		names = append(names, p.Comm)
	}
	// 256 vmstat kworkers, the shepherd, rcu_preempt, two kcompactd, two spinners.
	if len(k.Tasks) != n+1+1+2+2 {
		t.Errorf("%d tasks (%s...), want %d", len(k.Tasks), strings.Join(names[:5], " "), n+6)
	}
}

// TestWatchdogCharge: the softlockup watchdog's stopper is charged to the
// task running on a busy CPU every 4 s and to nobody on an idle one. Over
// 8.5 s every CPU's watchdog fires twice (its phase is under 4 s). Two
// runs without the cost spread (model_cost_jitter_pct 0), one with
// stopper_switch_ns at zero: a spinner alone on CPU 3 (10 ms operations
// back to back, beside CPU 3's vmstat kworker) accounts exactly two
// stopper_switch_ns more overhead in the first; idle CPU 4 is charged
// nothing in either.
func TestWatchdogCharge(t *testing.T) {
	overhead := func(stopper bool) (busy, idle uint64, sw engine.Time) {
		k := kernel(t, func(k *sched.Kernel) {
			k.S.CostJitterPct = 0
			if !stopper {
				k.Costs.Balance.StopperSwitch = 0
			}
		})
		n := k.NrCPUs()
		if _, err := k.Fork(sched.TaskSpec{Comm: "spin", CPU: 3, Allowed: cpumask.Of(n, 3),
			Prog: sched.ProgramFunc(func(k *sched.Kernel, t *sched.Task) sched.Op { return sched.Run(10 * engine.Millisecond) })}); err != nil {
			t.Fatal(err)
		}
		k.Eng.RunUntil(8500 * engine.Millisecond)
		return k.Rqs[3].OverheadNs, k.Rqs[4].OverheadNs, k.Costs.Balance.StopperSwitch
	}
	with, idle, sw := overhead(true)
	without, _, _ := overhead(false)
	if sw == 0 {
		t.Fatal("zen3's stopper_switch_ns is 0")
	}
	if got := engine.Time(with - without); got != 2*sw {
		t.Errorf("CPU 3's overhead with the watchdog %d ns, without %d ns: the watchdog charged %v, want 2 × %v", with, without, got, sw)
	}
	if idle != 0 {
		t.Errorf("idle CPU 4 was charged %d ns", idle)
	}
}
