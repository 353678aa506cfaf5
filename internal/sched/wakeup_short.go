package sched

import "github.com/schedlab/schedlab/internal/cpumask"

// The short-task wakeup patches (Chen Yu, RFC September 2022, and the
// follow-ups measured on the same thread; patches.md §1). Two hunks:
//
//   - in wake_affine_idle, choose the waker's CPU when the task running
//     there is short (ShortAffineMode: where and under which condition);
//   - in select_idle_cpu, once SIS_UTIL says the LLC is more than half busy
//     (5 × nr < 3 × llc_weight, i.e. nr_idle_scan below 60 % of the LLC),
//     return target without scanning when target runs a short task
//     (ShortScanMode: which condition).

// ShortAffineMode selects the wake_affine_idle hunk.
type ShortAffineMode int

const (
	// ShortAffineOff: the kernel as is.
	ShortAffineOff ShortAffineMode = iota
	// ShortAffineSyncOr (RFC): "(sync && nr_running(this) == 1) ||
	// is_short_task(curr(this))" returns this_cpu, before the prev_cpu-idle
	// check: the waker's CPU wins whatever its queue and the sync hint.
	ShortAffineSyncOr
	// ShortAffineEnd (v1, v2): is_short_task(curr(this)) returns this_cpu,
	// after the prev_cpu-idle check, with no runqueue-length condition.
	ShortAffineEnd
	// ShortAffineEndSingle (v3, v4, RFC v2): "nr_running(this) == 1 &&
	// is_short_task(curr(this))", after the prev_cpu-idle check.
	ShortAffineEndSingle
)

var shortAffineNames = []string{"off", "sync-or", "end", "end-single"}

func (m ShortAffineMode) String() string { return enumName(shortAffineNames, int(m)) }

// ShortScanMode selects the select_idle_cpu hunk.
type ShortScanMode int

const (
	// ShortScanOff: scan as the kernel does.
	ShortScanOff ShortScanMode = iota
	// ShortScanWakee (RFC, v1, v3): no idle core known, 5 × nr < 3 ×
	// llc_weight, the wakee is short and curr(target) is short.
	ShortScanWakee
	// ShortScanSingle (RFC v2): no idle core known, 5 × nr < 3 ×
	// llc_weight, nr_running(target) == 1 and curr(target) is short.
	ShortScanSingle
)

var shortScanNames = []string{"off", "wakee", "single"}

func (m ShortScanMode) String() string { return enumName(shortScanNames, int(m)) }

// ShortTaskMetric selects is_short_task's test.
type ShortTaskMetric int

const (
	// ShortLifetime (RFC): p.se.sum_exec_runtime <= p.nvcsw ×
	// min_granularity, the lifetime average run per voluntary switch. A task
	// that has neither run nor slept (0 <= 0) is short, and so is the idle
	// task, whose sum_exec_runtime stays 0.
	ShortLifetime ShortTaskMetric = iota
	// ShortDurAvg (RFC v4 and later): se.dur_avg × ShortTaskDurAvgFactor
	// <= min_granularity, dur_avg being the 1/8 average of the run time
	// between voluntary sleeps, updated at every sleeping dequeue
	// (core.go: updateDurAvg).
	ShortDurAvg
	// ShortDurAvgRFC2 is the RFC v2 posting's metric (October 2022,
	// "[RFC PATCH v2 1/2] sched/fair: Introduce short duration task
	// check"): se.dur_avg <= sysctl_sched_min_granularity, dur_avg updated
	// in put_prev_task_fair for a task that is no longer queued — which
	// pick_next_task_fair's group-scheduling path skips, so only when its
	// CPU goes idle after it slept — from the run time since the last
	// such update, and only when that sample differs from dur_avg by at
	// least min_granularity (a zero sample resets it to 0, as the posted
	// code does, whatever its comment says).
	ShortDurAvgRFC2
)

var shortMetricNames = []string{"lifetime", "dur_avg", "dur_avg_rfc2"}

func (m ShortTaskMetric) String() string { return enumName(shortMetricNames, int(m)) }

func enumName(names []string, i int) string {
	if i >= 0 && i < len(names) {
		return names[i]
	}
	return "?"
}

// shortTaskGranularity is the sysctl_sched_min_granularity the patches
// compare with, scaled as the kernel scales it (0.75 ms × factor = 3 ms on
// 8 or more CPUs). EEVDF (v6.6+) renamed that knob base_slice, so on the
// v6.19 baseline the threshold is the scaled base_slice (0.70 ms × factor,
// 2.8 ms on 8 or more CPUs).
func (k *Kernel) shortTaskGranularity() uint64 {
	if k.S.EEVDF {
		return k.baseSlice
	}
	return k.minGranularity
}

// isShortTask mirrors the patches' is_short_task(p) (each posting's, on
// v6.0; Settings.ShortTaskMetric picks the posting's form). The dur_avg ×
// 8 form (RFC v3 on) requires a dur_avg ("p->se.dur_avg &&"): a task that
// never slept has none and is not short, nor is a task just forked or the
// idle task. The RFC's lifetime form has no such term: 0 <= 0 makes a task
// that never ran short (patches.md §1). Nor has the RFC v2 form here: its
// dur_avg starts at 0 and takes only samples that differ from it by a
// min_granularity (updateDurAvgRFC2), so with the term no task whose runs
// are shorter than that would ever be short, and the posting's hunks would
// never act.
func (k *Kernel) isShortTask(p *Task) bool {
	gran := k.shortTaskGranularity()
	switch k.S.ShortTaskMetric {
	case ShortDurAvg:
		return p.SE.DurAvg != 0 && p.SE.DurAvg*k.S.ShortTaskDurAvgFactor <= gran
	case ShortDurAvgRFC2:
		return p.SE.durAvgRFC2 <= gran
	}
	return p.SE.SumExecRuntime <= p.Nvcsw*gran
}

// updateDurAvgRFC2 is the RFC v2 posting's dur_avg update, run from
// put_prev_task_fair for a prev that is no longer queued (it slept): the
// run time since the last update is the sample, folded in with
// update_avg only when it differs from dur_avg by at least
// sysctl_sched_min_granularity; a zero sample sets dur_avg to 0.
func (k *Kernel) updateDurAvgRFC2(p *Task) {
	se := &p.SE
	dur := se.SumExecRuntime - se.prevSumRuntimeVol
	se.prevSumRuntimeVol = se.SumExecRuntime
	delta := int64(dur) - int64(se.durAvgRFC2)
	if delta < 0 {
		delta = -delta
	}
	if uint64(delta) < k.minGranularity {
		return
	}
	if dur == 0 {
		se.durAvgRFC2 = 0
		return
	}
	updateAvg(&se.durAvgRFC2, dur)
}

// shortTaskSkipScan is the short-task hunk of select_idle_cpu, evaluated
// right after SIS_UTIL's nr = nr_idle_scan + 1 has passed the nr == 1 exit.
func (k *Kernel) shortTaskSkipScan(p *Task, sd *SchedDomain, nr int, hasIdleCore bool, target cpumask.CPU) bool {
	if k.S.ShortTaskScan == ShortScanOff || hasIdleCore || 5*nr >= 3*sd.T.SpanWeight {
		return false
	}
	trq := k.Rqs[target]
	switch k.S.ShortTaskScan {
	case ShortScanWakee:
		return k.isShortTask(p) && k.isShortTask(trq.Curr)
	case ShortScanSingle:
		return nrRunningNotDelayed(trq) == 1 && k.isShortTask(trq.Curr)
	}
	return false
}
