// Package kthreads adds the kernel threads a quiet server runs beside a
// benchmark (--sysctl model_kthreads=1; sched.Settings.Kthreads): the
// periodic housekeeping that wakes, preempts or charges the CPUs a
// benchmark runs on when nothing else does. Each thread's period is the
// kernel's own (v5.12–v6.19 defaults, named below); the work of one run is
// a cost-model parameter (costmodel.KthreadCosts, the kthread_* costs) and
// the softlockup watchdog's stopper costs stopper_switch_ns.
//
// The threads of a quiet server, and what is simplified:
//
//   - vmstat_update on each CPU's bound kworker (kworker/N:1, SCHED_NORMAL,
//     nice 0): mm/vmstat.c re-arms it every sysctl_stat_interval (HZ
//     jiffies, one second) through round_jiffies_relative, which places CPU
//     N's expiries on whole seconds less 3·N jiffies. It is deferrable
//     work: an expiry on a CPU idle with its tick stopped waits for the CPU
//     to wake, and by then quiet_vmstat has folded its counters at the tick
//     stop, so nothing is done; schedlab drops such an expiry. Simplified:
//     the timer wheel's rounding of a one-second expiry (8 or 64 jiffies)
//     is left out, and a busy CPU's expiry wakes the kworker at once rather
//     than at the CPU's next tick.
//   - vmstat_shepherd on CPU 0's kworker (kworker/0:2), every second on
//     whole seconds, deferrable likewise: it checks every online CPU's
//     counter deltas (need_update) and would queue the vmstat_update of an
//     idle CPU whose deltas are not folded, which the model never has.
//   - the softlockup watchdog (kernel/watchdog.c): a pinned hrtimer every
//     2 × watchdog_thresh / 5 = 4 s on each CPU, armed when the CPU came
//     online (the phase is drawn from the run's "kthreads" stream), wakes
//     the CPU's stopper (migration/N, the stop class), which preempts
//     whatever runs. schedlab has no stop class: the timer and the
//     stopper's two switches are charged to the task running on a busy CPU
//     (stopper_switch_ns), and an idle CPU's wakeup is not modelled.
//   - the RCU grace-period kthread (rcu_preempt; SCHED_NORMAL, as
//     kthread_prio is 0 without RCU_BOOST), unbound: it sleeps in
//     swait_event_idle_timeout between a grace period's phases; a quiet
//     machine runs a few grace periods a second (the development VM: 4.4
//     runs a second), so it wakes every 250 ms here.
//   - kcompactd per node (kcompactd0, kcompactd1, …; SCHED_NORMAL, bound to
//     its node's CPUs): proactive compaction wakes it every
//     HPAGE_FRAG_CHECK_INTERVAL_MSEC (500 ms) with compaction_proactiveness
//     20, and on a machine without fragmentation it finds nothing to do.
//
// ksoftirqd (a quiet machine raises few softirqs), kswapd and the other
// workqueues' kworkers are left out. Every thread is forked before the
// workload, so the workload's tasks keep their order of PIDs after them,
// as a benchmark's do after the kernel's threads on a real machine, and
// as a thread that has slept since long before the run
// (sched.TaskSpec.Settled): its PELT averages start at zero, not at a new
// task's, which would make every CPU look half busy to the workload's
// first forks.
package kthreads

import (
	"fmt"

	"github.com/schedlab/schedlab/internal/cpumask"
	"github.com/schedlab/schedlab/internal/engine"
	"github.com/schedlab/schedlab/internal/sched"
)

// Periods of the threads, kernel defaults (package comment).
const (
	// StatInterval is sysctl_stat_interval: HZ jiffies.
	StatInterval = engine.Second
	// WatchdogPeriod is the softlockup watchdog's sample_period with
	// watchdog_thresh = 10: 2 × 10 s / 5.
	WatchdogPeriod = 4 * engine.Second
	// RCUGPPeriod is how often the grace-period kthread runs on a quiet
	// machine (measured on the development VM: 4.4 runs a second).
	RCUGPPeriod = 250 * engine.Millisecond
	// KcompactdPeriod is HPAGE_FRAG_CHECK_INTERVAL_MSEC.
	KcompactdPeriod = 500 * engine.Millisecond
	// roundSkewJiffies is round_jiffies' per-CPU skew.
	roundSkewJiffies = 3
)

// Add forks the kernel threads of a quiet server on k (model_kthreads=1),
// before the workload; with 0 it adds nothing.
func Add(k *sched.Kernel, level int) error {
	if level == 0 {
		return nil
	}
	if level != 1 {
		return fmt.Errorf("kthreads: level %d: only 0 (none) and 1 (a quiet server) exist", level)
	}
	n := k.NrCPUs()
	rnd := k.Eng.Rand("kthreads")
	hz := uint64(engine.Second) / k.TickNsec()
	for c := range n {
		cpu := cpumask.CPU(c)
		w, err := fork(k, fmt.Sprintf("kworker/%d:1", c), cpu, cpumask.Of(n, cpu), func(k *sched.Kernel) engine.Time {
			return k.Costs.Kthreads.Vmstat
		})
		if err != nil {
			return err
		}
		// round_jiffies_relative: whole seconds less 3·cpu jiffies.
		skew := engine.Time((roundSkewJiffies*uint64(c))%hz) * engine.Time(k.TickNsec())
		deferrable(k, cpu, w, StatInterval-skew)
		// The watchdog's hrtimer, armed when the CPU came online.
		phase := engine.Time(rnd.Int64N(int64(WatchdogPeriod)))
		watchdog(k, cpu, phase)
	}
	shepherd, err := fork(k, "kworker/0:2", 0, cpumask.Of(n, 0), func(k *sched.Kernel) engine.Time {
		return k.Costs.Kthreads.ShepherdPerCPU * engine.Time(k.NrCPUs())
	})
	if err != nil {
		return err
	}
	deferrable(k, 0, shepherd, StatInterval)
	if err := sleeper(k, "rcu_preempt", 0, cpumask.Full(n), RCUGPPeriod, engine.Time(rnd.Int64N(int64(RCUGPPeriod))), func(k *sched.Kernel) engine.Time {
		return k.Costs.Kthreads.RCUGP
	}); err != nil {
		return err
	}
	for node, cpus := range k.Topo.NodeMask {
		if cpus.Empty() {
			continue // a memory-only node: its kcompactd has no CPU of its own
		}
		if err := sleeper(k, fmt.Sprintf("kcompactd%d", node), cpus.First(), cpus, KcompactdPeriod, engine.Time(rnd.Int64N(int64(KcompactdPeriod))), func(k *sched.Kernel) engine.Time {
			return k.Costs.Kthreads.Kcompactd
		}); err != nil {
			return err
		}
	}
	return nil
}

// fork creates a thread, asleep (a long-lived thread, sched.TaskSpec.Settled),
// that each time it is woken runs work(k) and blocks again.
func fork(k *sched.Kernel, comm string, cpu cpumask.CPU, allowed cpumask.Mask, work func(*sched.Kernel) engine.Time) (*sched.Task, error) {
	ran := false
	prog := sched.ProgramFunc(func(k *sched.Kernel, t *sched.Task) sched.Op {
		ran = !ran
		if ran {
			return sched.Run(work(k))
		}
		return sched.Block()
	})
	return k.Fork(sched.TaskSpec{Comm: comm, CPU: cpu, Allowed: allowed, Prog: prog, Settled: true})
}

// deferrable wakes w on cpu at first and every StatInterval after, unless
// cpu is idle with its tick stopped then (a deferrable timer does not wake
// it, and the work has nothing to do by the time it would run).
func deferrable(k *sched.Kernel, cpu cpumask.CPU, w *sched.Task, first engine.Time) {
	var tm *engine.Timer
	tm = engine.NewTimer("kworker", func() {
		if !k.TickStopped(cpu) {
			k.TimerWakeUp(cpu, w)
		}
		k.Eng.Schedule(tm, k.Now()+StatInterval)
	})
	k.Eng.Schedule(tm, first)
}

// watchdog charges cpu's running task the stopper's switches every
// WatchdogPeriod from phase.
func watchdog(k *sched.Kernel, cpu cpumask.CPU, phase engine.Time) {
	var tm *engine.Timer
	tm = engine.NewTimer("watchdog", func() {
		if !k.TickStopped(cpu) {
			k.ChargeCPU(cpu, k.Costs.Balance.StopperSwitch)
		}
		k.Eng.Schedule(tm, k.Now()+WatchdogPeriod)
	})
	k.Eng.Schedule(tm, phase)
}

// sleeper creates a thread asleep in a timed sleep that ends at first,
// which then runs work(k) and sleeps period, again and again: a kthread
// waiting with a timeout. The timer is armed on cpu.
func sleeper(k *sched.Kernel, comm string, cpu cpumask.CPU, allowed cpumask.Mask, period, first engine.Time, work func(*sched.Kernel) engine.Time) error {
	ran := false
	prog := sched.ProgramFunc(func(k *sched.Kernel, t *sched.Task) sched.Op {
		ran = !ran
		if ran {
			return sched.Run(work(k))
		}
		return sched.Sleep(period)
	})
	_, err := k.Fork(sched.TaskSpec{Comm: comm, CPU: cpu, Allowed: allowed, Prog: prog, Settled: true, SleepFor: max(first, 1)})
	return err
}
