package sched

import "github.com/schedlab/schedlab/internal/engine"

// BalanceCosts are the times load-balancing code is taken to need, in ns of
// kernel work on a CPU of capacity 1024 running at its maximum frequency.
// The CPU doing the work takes longer in proportion to its speed
// (lbWorkTime): a Snapdragon 7c little core (capacity 415) needs 1024/415 ≈
// 2.5 times as long.
//
// They are documented constants until the cost model (issue 5) supplies
// per-machine values; each field says where its default comes from. A
// kernel charges them only once Kernel.LBCosts is set (to
// DefaultBalanceCosts() or the cost model's values): like Kernel.Costs,
// the zero value charges nothing, so that tests of exact timings are not
// disturbed by balancing. Figures
// marked "assumed" are order-of-magnitude estimates for a ~3 GHz core (one
// or two cache misses ≈ 100 ns, a function doing a little arithmetic on hot
// data ≈ 20–50 ns), not measurements.
type BalanceCosts struct {
	// BlockedAvgBase is the fixed part of one
	// sched_balance_update_blocked_averages call: taking the rq lock,
	// update_rq_clock, the RT/DL/IRQ/HW-pressure decays. Assumed 500 ns.
	BlockedAvgBase engine.Time
	// BlockedAvgPerCfsRq is the cost per leaf cfs_rq walked by
	// __update_blocked_fair: decay (update_cfs_rq_load_avg), publish
	// (update_tg_load_avg, an atomic on the task group's shared cache
	// line) and propagate into the parent (update_load_avg of the group
	// entity). 200 ns: chosen so that a walk of 100 leaf cfs_rqs on a
	// chromebook-7c little CPU takes 100 × 200 × 1024/415 ≈ 49 µs, the
	// middle of the 33–67 µs single calls Joel Fernandes measured on a
	// Snapdragon 7c Chromebook with many inactive cgroups (patches.md §3;
	// the cgroup count behind his figure is not stated, 100 is our
	// assumption).
	BlockedAvgPerCfsRq engine.Time
	// CpufreqUpdateBase and CpufreqUpdatePerCPU make up one
	// cpufreq_update_util call into schedutil: base + per-CPU × the CPUs
	// of the caller's frequency domain, because sugov_update_shared takes
	// the policy lock and sugov_next_freq_shared reads the utilisation of
	// every CPU of the policy (Joel's observation that "a lot of CPUs in a
	// cluster" slow it down). Assumed 300 ns + 100 ns per CPU; every call
	// is charged the full walk (schedutil's rate limit is not modelled).
	CpufreqUpdateBase   engine.Time
	CpufreqUpdatePerCPU engine.Time
	// BalanceRqBase is the fixed part of one sched_balance_rq pass
	// (lb_env setup, cpumask copies, the exit bookkeeping). Assumed 300 ns.
	BalanceRqBase engine.Time
	// SgStatsPerGroup and SgStatsPerCPU make up update_sg_lb_stats: per
	// group visited, and per CPU of the group read (a remote rq's cache
	// lines: cfs load/util/runnable, nr_running). Assumed 100 ns and
	// 60 ns.
	SgStatsPerGroup engine.Time
	SgStatsPerCPU   engine.Time
	// FindBusiestQueuePerCPU is sched_balance_find_src_rq's cost per CPU
	// of the busiest group. Assumed 30 ns (the lines were just read).
	FindBusiestQueuePerCPU engine.Time
	// TaskExamined is detach_tasks' cost per task looked at
	// (can_migrate_task, task_h_load). Assumed 150 ns.
	TaskExamined engine.Time
	// TaskMigrated is the cost of moving one task: detach_task
	// (dequeue, PELT detach, set_task_cpu) plus attach_task (enqueue,
	// PELT attach, wakeup_preempt), with both rq locks. Assumed 1500 ns
	// (ftrace function-graph timings of enqueue_task_fair on desktop
	// CPUs are around 0.5–1 µs).
	TaskMigrated engine.Time
	// NohzPerCPU is _nohz_idle_balance's loop cost per idle CPU visited
	// (idle_cpu(), next_balance bookkeeping). Assumed 50 ns.
	NohzPerCPU engine.Time
	// StopperSwitch is the cost on the busiest CPU of an active balance:
	// the switch to the stopper thread and back around
	// active_load_balance_cpu_stop. Assumed 3 µs (two context switches).
	StopperSwitch engine.Time
}

// DefaultBalanceCosts returns the documented defaults above.
func DefaultBalanceCosts() BalanceCosts {
	return BalanceCosts{
		BlockedAvgBase:         500,
		BlockedAvgPerCfsRq:     200,
		CpufreqUpdateBase:      300,
		CpufreqUpdatePerCPU:    100,
		BalanceRqBase:          300,
		SgStatsPerGroup:        100,
		SgStatsPerCPU:          60,
		FindBusiestQueuePerCPU: 30,
		TaskExamined:           150,
		TaskMigrated:           1500,
		NohzPerCPU:             50,
		StopperSwitch:          3000,
	}
}
