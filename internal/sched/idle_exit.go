package sched

import "github.com/schedlab/schedlab/internal/engine"

// Leaving an idle state, and what PELT sees meanwhile (cost model).
//
// A CPU in a cpuidle state handles nothing until it has left that state:
// the exit latency passes before the first instruction of the interrupt
// handler that woke it. What the handler does therefore happens after the
// exit, and that decides how PELT accounts the wait:
//
//   - A sleep ending on an idle CPU: the hrtimer interrupt (hrtimer_wakeup
//     → try_to_wake_up) runs once the CPU is out of its state, so the task
//     is enqueued only then. Until it is enqueued its entity is not on_rq:
//     ___update_load_sum accrues neither load nor runnable for it (PELT's
//     "runnable" is se->on_rq and not delayed; pelt.c:__update_load_avg_se
//     passes !!se->on_rq and se_runnable(se)), so the exit latency is sleep
//     time, as it is for the task's util.
//   - A wakeup queued on an idle CPU's wake list (ttwu_queue_wakelist, the
//     usual case for an idle target: ttwu_queue_cond accepts a CPU with
//     nr_running == 0): the IPI is handled after the exit, and
//     sched_ttwu_pending enqueues the task there. Again not runnable while
//     the CPU wakes up.
//   - A remote wakeup that enqueues directly under the target's rq lock
//     (TTWU_QUEUE off, or a fork's wake_up_new_task) and then sends the
//     reschedule IPI: the task is on the runqueue while the IPI travels and
//     the CPU leaves its state, and that time is runnable and not running,
//     as in the kernel.
//
// Before this was modelled, every wakeup enqueued at once and only the
// reschedule waited for the exit, so a task sleeping on a CPU that reached
// a deep state counted the exit latency as runnable: on a HiKey (700 µs
// cluster-sleep exit) a lone 1 ms-every-4 ms task showed runnable_avg ≈ 383
// against util_avg ≈ 227, and util_est_update's "runnable above util"
// check then kept its util_est from ever decaying.

// idleWakeAt returns when the CPU of rq can run the handler of an interrupt
// that arrives at at: at itself when the CPU is not idle (or the cost model
// charges no idle exit), otherwise after the exit latency of the state the
// CPU is in. An interrupt arriving while the CPU is already on its way out
// is handled when that exit completes; one arriving after an exit whose
// handler left the CPU idle finds it back in its idle state and pays the
// exit again. The exit latency is counted in rq.Costs.IdleExitNs once per
// exit.
func (k *Kernel) idleWakeAt(rq *Rq, at engine.Time) engine.Time {
	if !k.costsOn || !rq.currIsIdle() || rq.idleState < 0 {
		return at
	}
	if rq.idleExiting && at <= rq.idleExitDone {
		return rq.idleExitDone
	}
	d := k.idleExitLatency(rq)
	rq.idleExiting, rq.idleExitDone = true, at+d
	k.delay(rq.CPU, DelayIdleExit, at, at+d)
	return at + d
}

// deferUntilIdleExit re-arms timer for when rq's CPU has left its idle
// state and reports whether it did so: the handler that timer runs must
// wait for the exit (see above). Called from the handler itself, it returns
// false on the second firing, when the exit is complete.
func (k *Kernel) deferUntilIdleExit(rq *Rq, timer *engine.Timer) bool {
	now := k.Eng.Now()
	at := k.idleWakeAt(rq, now)
	if at <= now {
		return false
	}
	k.Eng.Schedule(timer, at)
	return true
}
