package sched

import (
	"fmt"

	"github.com/schedlab/schedlab/internal/cpumask"
	"github.com/schedlab/schedlab/internal/engine"
)

// This file mirrors the parts of kernel/sched/core.c the fair class relies
// on (v6.19): activation, __schedule, try_to_wake_up, fork, exit and the
// tick, plus the work model that turns a task's program into CPU time.

// addNrRunning mirrors sched.h:add_nr_running (v6.19).
func (k *Kernel) addNrRunning(rq *Rq, n int) {
	prev := rq.NrRunning
	rq.NrRunning += n
	rq.sgStatsChanged()
	// load balancing: a second runnable task overloads the root domain.
	if prev < 2 && rq.NrRunning >= 2 {
		k.setRdOverloaded(true)
	}
}

// subNrRunning mirrors sched.h:sub_nr_running (v6.19).
func (k *Kernel) subNrRunning(rq *Rq, n int) {
	rq.NrRunning -= n
	rq.sgStatsChanged()
}

// sched_info accounting (kernel/sched/stats.h).
func (k *Kernel) schedInfoEnqueue(rq *Rq, t *Task) {
	if t.SchedInfo.LastQueued == 0 {
		t.SchedInfo.LastQueued = rq.Clock
	}
}

func (k *Kernel) schedInfoDequeue(rq *Rq, t *Task) {
	if t.SchedInfo.LastQueued != 0 {
		delta := rq.Clock - t.SchedInfo.LastQueued
		t.SchedInfo.LastQueued = 0
		t.SchedInfo.RunDelay += delta
		rq.Schedstat.RunDelay += delta
	}
}

func (k *Kernel) schedInfoArrive(rq *Rq, t *Task) {
	var delta uint64
	if t.SchedInfo.LastQueued != 0 {
		delta = rq.Clock - t.SchedInfo.LastQueued
		t.SchedInfo.LastQueued = 0
		t.SchedInfo.RunDelay += delta
	}
	t.SchedInfo.LastArrival = rq.Clock
	t.SchedInfo.Pcount++
	rq.Schedstat.RunDelay += delta
	rq.Schedstat.Pcount++
}

func (k *Kernel) schedInfoDepart(rq *Rq, t *Task) {
	delta := rq.Clock - t.SchedInfo.LastArrival
	rq.Schedstat.RqCPUTime += delta
	if t.State == TaskRunning {
		k.schedInfoEnqueue(rq, t)
	}
}

func (k *Kernel) schedInfoSwitch(rq *Rq, prev, next *Task) {
	if prev != rq.Idle {
		k.schedInfoDepart(rq, prev)
	}
	if next != rq.Idle {
		k.schedInfoArrive(rq, next)
	}
}

// enqueueTask mirrors core.c:enqueue_task (v6.19).
func (k *Kernel) enqueueTask(rq *Rq, p *Task, flags int) {
	if flags&enqueueNoclock == 0 {
		k.updateRqClock(rq)
	}
	k.enqueueTaskFair(rq, p, flags)
	if flags&enqueueRestore == 0 {
		k.schedInfoEnqueue(rq, p)
	}
}

// dequeueTask mirrors core.c:dequeue_task (v6.19).
func (k *Kernel) dequeueTask(rq *Rq, p *Task, flags int) bool {
	if flags&dequeueNoclock == 0 {
		k.updateRqClock(rq)
	}
	if flags&dequeueSave == 0 {
		k.schedInfoDequeue(rq, p)
	}
	return k.dequeueTaskFair(rq, p, flags)
}

// activateTask mirrors core.c:activate_task (v6.19): a task that is being
// moved (TASK_ON_RQ_MIGRATING: the balancer's detach/attach, the stopper,
// sched_exec) is enqueued with ENQUEUE_MIGRATED, so that enqueue_entity
// zeroes its exec_start and task_hot sees it cold on its new CPU. v6.0 and
// v5.12 do not set the flag here; their migrate_task_rq_fair zeroes
// exec_start on every set_task_cpu instead, with the same result.
func (k *Kernel) activateTask(rq *Rq, p *Task, flags int) {
	if k.S.EEVDF && p.OnRq == taskOnRqMigrating {
		flags |= enqueueMigrated
	}
	k.enqueueTask(rq, p, flags)
	p.OnRq = taskOnRqQueued
}

// deactivateTask mirrors core.c:deactivate_task (v6.19; a move, not a sleep).
func (k *Kernel) deactivateTask(rq *Rq, p *Task, flags int) {
	p.OnRq = taskOnRqMigrating
	k.dequeueTask(rq, p, flags)
}

// blockTask mirrors core.c:__block_task (v6.19).
func (k *Kernel) blockTask(rq *Rq, p *Task) { p.OnRq = 0 }

// reschedCurr mirrors core.c:resched_curr (v6.19): set need_resched; a remote CPU
// acts on it after the IPI latency, the local one when the current event
// ends.
func (k *Kernel) reschedCurr(rq *Rq) {
	if rq.needResched {
		return
	}
	rq.needResched = true
	now := k.Eng.Now()
	at := now
	if rq.CPU != k.thisCPU {
		at += k.ipiLatency(k.thisCPU, rq.CPU)
		k.delay(rq.CPU, DelayIPI, now, at)
	}
	at = k.idleWakeAt(rq, at) // an idle CPU acts once out of its idle state
	// load balancing: balancing work on this CPU or its rq lock delays it.
	if at < rq.LBBusyUntil {
		k.BalanceStats.RqLockWaits.add(rq.LBBusyUntil - at)
		k.delay(rq.CPU, DelayBalance, at, rq.LBBusyUntil)
		at = rq.LBBusyUntil
	}
	if !rq.reschedTimer.Armed() || rq.reschedTimer.When() > at {
		k.Eng.Schedule(rq.reschedTimer, at)
	}
}

// reschedCurrLazy mirrors core.c:resched_curr_lazy (v6.19). schedlab models the full
// preemption model, where a lazy request is an immediate one.
func (k *Kernel) reschedCurrLazy(rq *Rq) { k.reschedCurr(rq) }

// reschedule is the reschedule timer: the CPU honours need_resched.
func (k *Kernel) reschedule(rq *Rq) {
	k.thisCPU = rq.CPU
	if !rq.needResched {
		return
	}
	k.schedule(rq, true)
	k.afterEvent()
}

// schedule mirrors core.c:__schedule (v6.19) on rq's CPU. preempt is true for an
// involuntary switch (need_resched), false when the task blocks, yields or
// exits.
func (k *Kernel) schedule(rq *Rq, preempt bool) {
	prev := rq.Curr
	k.accountSegment(rq)
	k.updateRqClock(rq)
	rq.Schedstat.SchedCount++
	prevState := prev.State
	switchCount := &prev.Nivcsw
	if !preempt && prev.State != TaskRunning {
		if !prev.IsIdleTask() {
			if k.dequeueTask(rq, prev, dequeueSleep|dequeueNoclock) {
				k.blockTask(rq, prev)
			}
			k.updateDurAvg(prev)
		}
		switchCount = &prev.Nvcsw
	}
	var next *Task
	if prev.IsIdleTask() {
		next = k.pickNextTaskFair(rq, prev)
	} else {
		next = k.pickNextTaskFair(rq, prev)
		if next == nil {
			k.putPrevTaskFair(rq, prev)
		}
	}
	if next == nil {
		next = rq.Idle
	}
	rq.needResched = false
	if next != prev {
		rq.NrSwitches++
		*switchCount++
		rq.Curr = next
		rq.sgStatsChanged()
		prev.OnCPU = false
		next.OnCPU = true
		k.schedInfoSwitch(rq, prev, next)
		if k.Hooks.Switch != nil {
			k.Hooks.Switch(rq.CPU, prev, prevState, next)
		}
		if next.IsIdleTask() {
			rq.Schedstat.SchedGoidle++
			k.enterIdle(rq)
		} else {
			next.lastSwitchIn = rq.ClockTask
			if prev.IsIdleTask() {
				k.exitIdle(rq)
			}
		}
		if prev.State == TaskDead {
			k.finishTaskDead(rq, prev)
		}
		k.switchCosts(rq, prev, next)
	}
	if next.IsIdleTask() {
		k.Eng.Cancel(rq.segTimer)
	} else {
		if next.workLeft > 0 {
			k.startSegment(rq)
		} else {
			// The task's last operation (a sleep, a fork) is complete:
			// its program runs when this event is over.
			rq.segStart = k.Eng.Now()
			k.Eng.Schedule(rq.segTimer, rq.segStart)
		}
		k.lbDelayNext(rq) // load balancing: wait for balancing work in progress
	}
}

// updateDurAvg keeps se.dur_avg of the short-task patches: the run time
// from switch-in to a voluntary switch-out, averaged with weight 1/8.
// Wakeup path: as the patches define it (and v6.4's
// dur_avg_update), the sample runs from the previous voluntary sleep to this
// one, so a task preempted in between is measured whole (1 ms + preemption
// + 0.5 ms counts 1.5 ms), not from its last switch-in.
func (k *Kernel) updateDurAvg(p *Task) {
	if p.IsIdleTask() {
		return
	}
	dur := p.SE.SumExecRuntime - p.SE.PrevSleepSumRuntime
	p.SE.PrevSleepSumRuntime = p.SE.SumExecRuntime
	// update_avg(&se->dur_avg, dur): avg += (sample - avg) / 8
	diff := int64(dur) - int64(p.SE.DurAvg)
	p.SE.DurAvg = uint64(int64(p.SE.DurAvg) + diff/8)
}

// enterIdle models the switch to the idle task: set_next_task_idle
// (update_idle_core, the PELT idle clock) and the idle loop's first pass:
// the governor picks a state and says whether to stop the tick
// (idle.c:cpuidle_idle_call, v6.19; v6.0 and v5.12 the same).
func (k *Kernel) enterIdle(rq *Rq) {
	updateIdleRqClockPelt(rq)
	k.costsEnterIdle(rq)
	rq.idleExiting = false
	rq.idleTicks = 0
	k.updateIdleCore(rq)
	k.nohzRunIdleBalance(rq) // load balancing: do_idle's blocked-load refresh
	if !rq.NohzTickStopped && k.idleStopsTick(rq) {
		k.stopIdleTick(rq)
	}
}

// menuIdleTicksToStop is how many consecutive tick wakeups, with no timer
// due within a tick, an idle CPU that kept its tick takes before its
// governor stops the tick: menu_update records each as 9/10 × 50 ms, and
// get_typical_interval discards at most two upside outliers of its eight
// intervals before it gives up its short prediction.
const menuIdleTicksToStop = 3

// idleStopsTick says whether rq's idle CPU stops its tick now: the
// governor's stop_tick (menu_select and teo_select keep the tick when the
// predicted idle time is shorter than TICK_NSEC; without a cpuidle
// driver, a machine that lists no idle states, cpuidle_idle_call asks to
// stop it) and tick_nohz_idle_stop_tick, which keeps the tick anyway when
// the CPU's next timer is due within a tick. The prediction is the
// governor model's average idle period (idleGovernorSelect's input),
// capped by the time to the next timer (menu: the lowest expected
// interval). Simplified: menu's and teo's predictors (correction factors,
// intercepts) are that average, polling states are not modelled, and the
// timers looked at are the sleep timers armed on this CPU. Without
// Settings.IdleTickRetain the tick is always stopped.
func (k *Kernel) idleStopsTick(rq *Rq) bool {
	if !k.S.IdleTickRetain {
		return true
	}
	if len(k.Topo.Spec.IdleStatesOf(rq.CPU)) > 0 && rq.idleAvg < k.tickNsec {
		return false
	}
	next, ok := k.nextSleepTimer(rq.CPU)
	return !ok || uint64(next-k.Eng.Now()) > k.tickNsec
}

// nextSleepTimer is the earliest sleep timer armed on cpu (hrtimers fire
// where they were armed), the next timer event tick_nohz_next_event and
// the governors look at. It looks only at the tasks that armed their timer
// on cpu, dropping those whose timer has fired or was cancelled since, so
// an idle entry costs what is armed there, not the number of tasks.
func (k *Kernel) nextSleepTimer(cpu cpumask.CPU) (engine.Time, bool) {
	rq := k.Rqs[cpu]
	var next engine.Time
	found := false
	for i := 0; i < len(rq.sleepers); {
		t := rq.sleepers[i]
		if !t.sleepTimer.Armed() {
			rq.dropSleeper(t)
			continue
		}
		if !found || t.sleepTimer.When() < next {
			next, found = t.sleepTimer.When(), true
		}
		i++
	}
	return next, found
}

// sleepTimerArmed records that t armed its sleep timer on rq's CPU.
func (k *Kernel) sleepTimerArmed(t *Task, rq *Rq) {
	if t.sleepListed && t.sleepCPU != rq.CPU {
		k.Rqs[t.sleepCPU].dropSleeper(t)
	}
	t.sleepCPU = rq.CPU
	if !t.sleepListed {
		t.sleepListed, t.sleepIdx = true, len(rq.sleepers)
		rq.sleepers = append(rq.sleepers, t)
	}
}

// dropSleeper takes t out of rq.sleepers (order does not matter: only the
// earliest expiry is read).
func (rq *Rq) dropSleeper(t *Task) {
	last := len(rq.sleepers) - 1
	moved := rq.sleepers[last]
	rq.sleepers[t.sleepIdx] = moved
	moved.sleepIdx = t.sleepIdx
	rq.sleepers[last] = nil
	rq.sleepers = rq.sleepers[:last]
	t.sleepListed = false
}

// idleTickGovernor is the idle loop's next pass after a tick woke rq's
// idle CPU (menu_reflect/menu_update, then cpuidle_select again). A tick
// wakeup with no timer due within a tick counts as a long idle period;
// after menuIdleTicksToStop of them in a row the prediction is long and
// the tick stops (unless a timer is now due within a tick). Simplified:
// the governor model's average and its state choice are left alone (menu
// discards such outliers from its typical interval), and teo is taken to
// behave alike.
func (k *Kernel) idleTickGovernor(rq *Rq) {
	if next, ok := k.nextSleepTimer(rq.CPU); ok && uint64(next-k.Eng.Now()) <= k.tickNsec {
		rq.idleTicks = 0
		return
	}
	rq.idleTicks++
	if rq.idleTicks >= menuIdleTicksToStop {
		k.stopIdleTick(rq)
	}
}

// stopIdleTick mirrors tick_nohz_idle_stop_tick for an idle CPU (v6.19;
// the same in v6.0 and v5.12): the tick stops and the CPU joins the NOHZ
// idle set (nohz_balance_enter_idle).
func (k *Kernel) stopIdleTick(rq *Rq) {
	k.nohzBalanceEnterIdle(rq)
	rq.NohzTickStopped = true
	k.Eng.Cancel(rq.tickTimer)
}

// exitIdle restarts the tick at the CPU's next tick instant after now
// (tick_nohz_idle_exit; tick_nohz_restart forwards the tick's hrtimer from
// its last expiry by whole ticks, so the CPU keeps its phase).
func (k *Kernel) exitIdle(rq *Rq) {
	k.costsExitIdle(rq)
	if rq.NohzTickStopped {
		// load balancing: the CPU leaves the NOHZ idle set at its
		// first busy tick (nohz_balancer_kick), not here.
		rq.NohzTickStopped = false
		k.Eng.Schedule(rq.tickTimer, k.nextTick(rq.CPU, k.Eng.Now()))
	}
}

// tickOffset is the CPU's tick phase within a jiffy: 0, or with
// Settings.SkewTick the offset tick_setup_sched_timer adds when the boot
// parameter skew_tick is set (v5.12–v6.19): TICK_NSEC/2 divided by the
// number of possible CPUs (do_div's integer quotient), times the CPU's
// number.
func (k *Kernel) tickOffset(cpu cpumask.CPU) uint64 {
	if !k.S.SkewTick {
		return 0
	}
	return (k.tickNsec >> 1) / uint64(k.NrCPUs()) * uint64(cpu)
}

// nextTick is the first of cpu's tick instants strictly after now
// (hrtimer_forward's expiry): jiffy boundaries plus the CPU's offset.
func (k *Kernel) nextTick(cpu cpumask.CPU, now engine.Time) engine.Time {
	off := k.tickOffset(cpu)
	t := uint64(now)
	if t < off {
		return engine.Time(off)
	}
	return engine.Time(((t-off)/k.tickNsec+1)*k.tickNsec + off)
}

// schedTick mirrors core.c:sched_tick (v6.19) for a CPU whose tick runs:
// a busy CPU, or an idle one whose governor kept the tick, which then
// balances its own domains as an idle CPU and, back in the idle loop,
// asks the governor again (menu_update counts a tick wakeup as a long
// idle period, so the tick is usually stopped then).
func (k *Kernel) schedTick(rq *Rq) {
	k.thisCPU = rq.CPU
	k.updateRqClock(rq)
	curr := rq.Curr
	if !curr.IsIdleTask() {
		k.taskTickFair(rq, curr)
	}
	rq.IdleBalance = rq.IdleCPU()
	k.schedBalanceTrigger(rq)
	if k.S.IdleTickRetain && curr.IsIdleTask() && !rq.NohzTickStopped && rq.IdleCPU() && !rq.needResched {
		k.idleTickGovernor(rq)
	}
	if !rq.NohzTickStopped {
		k.Eng.Schedule(rq.tickTimer, k.Eng.Now()+engine.Time(k.tickNsec))
	}
	k.afterEvent()
}

// TaskSpec describes a task to create.
type TaskSpec struct {
	Comm   string
	Nice   int
	Policy Policy
	Group  *TaskGroup // nil: the root group
	// Allowed CPUs; the zero Mask means all.
	Allowed cpumask.Mask
	// CPU is where the parent runs (the fork's smp_processor_id).
	CPU  cpumask.CPU
	Prog Program
	// Footprint is the task's cache footprint in bytes (cost model).
	Footprint int64
	// MM is the address space (threads of a process share one); 0 gives
	// the task its own.
	MM int64
	// Settled creates a task that has existed since long before the run
	// and is asleep when it starts (a kernel thread that wakes for a few
	// µs now and then): it is not woken as a new task (no
	// wake_up_new_task, no fork balancing, no first run at time 0), and
	// its PELT averages are zero, as they have decayed to by then, not a
	// new task's (init_entity_runnable_average's full load,
	// post_init_entity_util_avg's half of the spare capacity). It waits
	// for a wakeup (Kernel.WakeUp, TimerWakeUp), or with SleepFor > 0 in
	// a timed sleep that ends then, armed on CPU; its program's first Next
	// comes when it first runs.
	Settled  bool
	SleepFor engine.Time
}

// Fork creates a task as sched_fork + wake_up_new_task do, from the current
// event's CPU (the parent is the task running there, if any).
func (k *Kernel) Fork(spec TaskSpec) (*Task, error) {
	if spec.Nice < -20 || spec.Nice > 19 {
		return nil, fmt.Errorf("nice %d out of range -20..19", spec.Nice)
	}
	if spec.Prog == nil {
		return nil, fmt.Errorf("task %q has no program", spec.Comm)
	}
	n := k.NrCPUs()
	if spec.CPU < 0 || int(spec.CPU) >= n {
		return nil, fmt.Errorf("cpu %d out of range", spec.CPU)
	}
	// The parent is the task whose program is forking on this CPU; a
	// fork from outside any program (a workload's first task, a scenario
	// command) has none.
	var parent *Task
	if pt := k.progTask; pt != nil && pt.OnCPU && pt.cpu == spec.CPU {
		parent = pt
	}
	allowed := spec.Allowed
	if allowed.Size() == 0 {
		switch {
		case parent != nil:
			allowed = parent.CPUsAllowed // copy_process: the child inherits cpus_mask
		case k.DefaultAllowed.Size() != 0:
			allowed = k.DefaultAllowed
		default:
			allowed = cpumask.Full(n)
		}
	}
	if allowed.Empty() {
		return nil, fmt.Errorf("task %q may run on no CPU", spec.Comm)
	}
	tg := spec.Group
	if tg == nil {
		tg = k.RootTG
	}
	k.thisCPU = spec.CPU
	p := k.newTask()
	*p = Task{
		PID:           k.nextPID,
		Comm:          spec.Comm,
		State:         TaskNew,
		CPUsAllowed:   allowed.Clone(),
		NrCPUsAllowed: allowed.Weight(),
		Policy:        spec.Policy,
		Nice:          spec.Nice,
		StaticPrio:    DefaultPrio + spec.Nice,
		TG:            tg,
		Prog:          spec.Prog,
		Created:       k.Eng.Now(),
		RecentUsedCPU: cpumask.None,
		Footprint:     spec.Footprint,
		MM:            spec.MM,
		lastRanCPU:    cpumask.None,
		homeNode:      -1,
	}
	if parent != nil {
		p.Parent = parent
	}
	k.nextPID++
	if p.MM == 0 {
		p.MM = -int64(p.PID) // its own address space
	}
	p.SE.task = p
	p.sleepTimer = engine.NewTimer("sleep", func() { k.sleepTimerFired(p) })
	p.wakeTimer = engine.NewTimer("ttwu", func() { k.ttwuPendingFired(p) })
	k.setLoadWeight(p)
	// sched_fork: __set_task_cpu(p, smp_processor_id()), then the class
	// task_fork hook.
	cpu := spec.CPU
	if !allowed.Test(cpu) {
		cpu = allowed.First()
	}
	k.setTaskCPUNoMigrate(p, cpu)
	initEntityRunnableAverage(&p.SE)
	if spec.Settled {
		return k.forkSettled(p, spec), nil
	}
	if !k.S.EEVDF {
		k.taskForkFairCFS(p)
	}
	k.Tasks = append(k.Tasks, p)
	if k.Hooks.Fork != nil {
		hp := parent
		if hp == nil {
			hp = k.Rqs[spec.CPU].Curr // what ran on the CPU the fork came from
		}
		k.Hooks.Fork(hp, p)
	}
	k.wakeUpNewTask(p)
	return p, nil
}

// forkSettled finishes a TaskSpec.Settled task: asleep, PELT at zero
// (last_update_time 0, so its first enqueue attaches it as a migrated
// task's would be), in a timed sleep if the spec asks for one.
func (k *Kernel) forkSettled(p *Task, spec TaskSpec) *Task {
	p.SE.Avg = SchedAvg{}
	p.State = TaskInterruptible
	k.Tasks = append(k.Tasks, p)
	if spec.SleepFor > 0 {
		k.Eng.Schedule(p.sleepTimer, k.Eng.Now()+spec.SleepFor)
		k.sleepTimerArmed(p, k.Rqs[p.cpu])
	}
	return p
}

// setLoadWeight mirrors core.c:set_load_weight (v6.19).
func (k *Kernel) setLoadWeight(p *Task) {
	if p.Policy == SchedIdle {
		p.SE.Load = LoadWeight{scaleLoad(WeightIdleprio), WMultIdleprio}
		return
	}
	i := p.StaticPrio - MaxRTPrio
	p.SE.Load = LoadWeight{scaleLoad(schedPrioToWeight[i]), schedPrioToWmult[i]}
}

// setTaskRq mirrors core.c:set_task_rq (v6.19) for the fair class.
func (k *Kernel) setTaskRq(p *Task, cpu cpumask.CPU) {
	se := &p.SE
	next := p.TG.CfsRq[cpu]
	k.setTaskRqFair(se, se.CfsRq, next)
	se.CfsRq = next
	se.Parent = p.TG.SE[cpu]
	se.Depth = p.TG.depth
}

// setTaskCPUNoMigrate mirrors core.c:__set_task_cpu (v6.19).
func (k *Kernel) setTaskCPUNoMigrate(p *Task, cpu cpumask.CPU) {
	k.setTaskRq(p, cpu)
	p.cpu = cpu
	p.WakeCPU = cpu
}

// setTaskCPU mirrors core.c:set_task_cpu (v6.19).
func (k *Kernel) setTaskCPU(p *Task, newCPU cpumask.CPU) {
	if p.cpu != newCPU {
		if k.Hooks.Migrate != nil {
			k.Hooks.Migrate(p, p.cpu, newCPU)
		}
		k.migrateTaskRqFair(p, newCPU)
		p.SE.NrMigrations++
	}
	k.setTaskCPUNoMigrate(p, newCPU)
}

// migrateTaskRqFair mirrors fair.c:migrate_task_rq_fair (v6.19; the CFS
// baselines also make a waking task's vruntime relative and zero its
// exec_start here, and v5.12 has no migrate_se_pelt_lag).
func (k *Kernel) migrateTaskRqFair(p *Task, newCPU cpumask.CPU) {
	se := &p.SE
	if !k.S.EEVDF {
		if p.waking {
			se.Vruntime -= se.CfsRq.ZeroVruntime
		}
		se.ExecStart = 0
	}
	if p.OnRq != taskOnRqMigrating {
		removeEntityLoadAvg(se)
		if k.S.MigrateSEPeltLag {
			k.migrateSEPeltLag(se)
		}
	}
	se.Avg.LastUpdateTime = 0
}

// loadAvgIsDecayed mirrors fair.c:load_avg_is_decayed (v6.19).
func loadAvgIsDecayed(sa *SchedAvg) bool {
	return sa.LoadSum == 0 && sa.UtilSum == 0 && sa.RunnableSum == 0
}

// migrateSEPeltLag mirrors fair.c:migrate_se_pelt_lag (v6.19): when the old CPU is
// idle its clocks are stale, so estimate the current PELT time.
func (k *Kernel) migrateSEPeltLag(se *SchedEntity) {
	if loadAvgIsDecayed(&se.Avg) {
		return
	}
	c := cfsRqOf(se)
	rq := rqOf(c)
	if !rq.currIsIdle() {
		return
	}
	now := rq.ClockPeltIdle
	lut := c.Avg.LastUpdateTime
	if now < lut {
		now = lut
	} else {
		now += k.schedClock() - rq.ClockIdle
	}
	updateLoadAvgBlockedSE(now, se)
}

// wakeUpNewTask mirrors core.c:wake_up_new_task (v6.19).
func (k *Kernel) wakeUpNewTask(p *Task) {
	p.State = TaskRunning
	p.RecentUsedCPU = p.cpu
	wakeFlags := WFFork
	thisRq := k.Rqs[k.thisCPU]
	before := thisRq.Wakeup
	prev := p.cpu
	cpu := k.selectTaskRq(p, prev, &wakeFlags)
	k.decide(DecisionFork, p, prev, cpu)
	k.chargeFindDst(thisRq, before)
	k.setTaskCPUNoMigrate(p, cpu)
	rq := k.Rqs[cpu]
	k.updateRqClock(rq)
	postInitEntityUtilAvg(p)
	flags := enqueueNoclock
	if k.S.EEVDF {
		flags |= enqueueInitial
	}
	k.activateTask(rq, p, flags)
	if k.Hooks.WakeupNew != nil {
		k.Hooks.WakeupNew(p, cpu)
	}
	k.wakeupPreempt(rq, p, wakeFlags)
}

// selectTaskRq mirrors core.c:select_task_rq (v6.19).
func (k *Kernel) selectTaskRq(p *Task, cpu cpumask.CPU, wakeFlags *int) cpumask.CPU {
	k.why, k.affine, k.affineSD = ReasonNone, AffineNotTried, nil
	if p.NrCPUsAllowed > 1 {
		cpu = k.SelectTaskRq(k, p, cpu, *wakeFlags)
		*wakeFlags |= WFRqSelected
	} else {
		cpu = p.CPUsAllowed.First()
		k.why = ReasonPinned
	}
	if !p.CPUsAllowed.Test(cpu) {
		cpu = p.CPUsAllowed.First() // select_fallback_rq
		k.why = ReasonFallbackRq
	}
	return cpu
}

// sleepTimerFired wakes a task whose sleep ended, from the CPU that armed
// the timer (hrtimers fire where they were armed). On an idle CPU the
// handler runs once the CPU has left its idle state (idle_exit.go).
func (k *Kernel) sleepTimerFired(p *Task) {
	if k.deferUntilIdleExit(k.Rqs[p.sleepCPU], p.sleepTimer) {
		return
	}
	k.thisCPU = p.sleepCPU
	k.inTimer = true
	k.TryToWakeUp(p, 0)
	k.inTimer = false
	k.afterEvent()
}

// TimerWakeUp wakes p from a timer expiring on cpu that is not p's own
// sleep timer (a workqueue's delayed work, a timer-wheel timeout), as the
// timer interrupt or softirq does on that CPU: the wakeup's waker is cpu,
// in interrupt context. The caller decides whether the timer may wake an
// idle CPU (a deferrable one does not); the wakeup itself does not wait
// for an idle CPU to leave its idle state. It reports whether p was
// sleeping.
func (k *Kernel) TimerWakeUp(cpu cpumask.CPU, p *Task) bool {
	k.thisCPU = cpu
	k.inTimer = true
	woke := k.TryToWakeUp(p, 0)
	k.inTimer = false
	k.afterEvent()
	return woke
}

// TickStopped reports whether cpu is idle with its tick stopped (NOHZ),
// so that a deferrable timer due on it waits for the CPU to wake.
func (k *Kernel) TickStopped(cpu cpumask.CPU) bool {
	rq := k.Rqs[cpu]
	return rq.NohzTickStopped && rq.currIsIdle()
}

// ChargeCPU charges d of interrupt-context or higher-class work to the
// task running on cpu (the softlockup watchdog's hrtimer and stopper): it
// spends it before its next operation takes effect. Nothing is charged on
// an idle CPU.
func (k *Kernel) ChargeCPU(cpu cpumask.CPU, d engine.Time) {
	k.thisCPU = cpu
	k.Charge(CostIRQ, d)
	k.afterEvent()
}

// WakeUp wakes p from the current event's CPU (wake_up_process), with
// wake flags such as WFSync. It reports whether p was sleeping.
func (k *Kernel) WakeUp(p *Task, wakeFlags int) bool { return k.TryToWakeUp(p, wakeFlags) }

// TryToWakeUp mirrors core.c:try_to_wake_up (v6.19) for TASK_NORMAL
// wakeups of fair tasks, run on the CPU k.ThisCPU().
func (k *Kernel) TryToWakeUp(p *Task, wakeFlags int) bool {
	wakeFlags |= WFTTWU
	thisRq := k.Rqs[k.thisCPU]
	if p == thisRq.Curr {
		if p.State == TaskRunning {
			return false
		}
		if k.Hooks.Waking != nil {
			k.Hooks.Waking(p)
		}
		p.State = TaskRunning
		if k.Hooks.Wakeup != nil {
			k.Hooks.Wakeup(p, p.cpu)
		}
		k.decideAs(ReasonRunning, p)
		k.ttwuStat(p, p.cpu, wakeFlags) // wakeup path: core.c counts self-wakeups too
		return true
	}
	if p.State != TaskInterruptible && p.State != TaskUninterruptible {
		return false
	}
	if k.Hooks.Waking != nil {
		k.Hooks.Waking(p)
	}
	k.Eng.Cancel(p.sleepTimer)
	if p.OnRq != 0 {
		// ttwu_runnable: still queued (delayed dequeue).
		rq := k.taskRq(p)
		k.updateRqClock(rq)
		if p.SE.SchedDelayed {
			k.enqueueTask(rq, p, enqueueNoclock|enqueueDelayed)
		}
		if rq.Curr != p {
			k.wakeupPreempt(rq, p, wakeFlags)
		}
		p.State = TaskRunning
		if k.Hooks.Wakeup != nil {
			k.Hooks.Wakeup(p, p.cpu)
		}
		k.decideAs(ReasonQueued, p)
		k.ttwuStat(p, p.cpu, wakeFlags)
		return true
	}
	// WRITE_ONCE(p->__state, TASK_WAKING) (v6.19, v6.0 and v5.12 alike):
	// a wakeup that comes before ttwu_do_activate fails ttwu_state_match.
	p.State = TaskWaking
	p.waking = true
	before := thisRq.Wakeup
	prev := p.WakeCPU
	cpu := k.selectTaskRq(p, prev, &wakeFlags)
	k.decide(DecisionWakeup, p, prev, cpu)
	k.chargeWakeupPath(thisRq, before, p.cpu, cpu)
	if cpu != p.cpu {
		wakeFlags |= WFMigrated
		k.setTaskCPU(p, cpu)
	}
	p.waking = false
	k.ttwuQueue(p, cpu, wakeFlags)
	k.ttwuStat(p, cpu, wakeFlags)
	return true
}

// ttwuQueueCond mirrors core.c:ttwu_queue_cond (v6.19, = v6.0 for the
// fair class; without Settings.TTWUQueueIdleTarget v5.12's form, which
// queues only wakeups across LLCs: its WF_ON_CPU case, a task still
// switching out, cannot arise as a switch is atomic here).
func (k *Kernel) ttwuQueueCond(p *Task, cpu cpumask.CPU) bool {
	if !k.S.TTWUQueueIdleTarget {
		return !k.cpusShareCache(k.thisCPU, cpu)
	}
	if !p.CPUsAllowed.Test(cpu) {
		return false
	}
	if !k.cpusShareCache(k.thisCPU, cpu) {
		return true
	}
	if cpu == k.thisCPU {
		return false
	}
	return k.Rqs[cpu].NrRunning == 0
}

// ttwuQueue mirrors core.c:ttwu_queue (v6.19): either queue the wakeup on the
// target's wake list (it is activated there after the IPI latency) or
// activate it now under the target's lock.
func (k *Kernel) ttwuQueue(p *Task, cpu cpumask.CPU, wakeFlags int) {
	rq := k.Rqs[cpu]
	if k.S.TTWUQueue && k.ttwuQueueCond(p, cpu) {
		rq.TTWUPending++
		rq.sgStatsChanged()
		p.pendingWakeFlags = wakeFlags
		now := k.Eng.Now()
		at := now + k.ipiLatency(k.thisCPU, cpu)
		k.delay(cpu, DelayIPI, now, at)
		k.Eng.Schedule(p.wakeTimer, at)
		return
	}
	k.updateRqClock(rq)
	k.ttwuDoActivate(rq, p, wakeFlags)
}

// ttwuPendingFired mirrors core.c:sched_ttwu_pending (v6.19) on the target
// CPU, which handles the IPI once out of its idle state (idle_exit.go).
func (k *Kernel) ttwuPendingFired(p *Task) {
	rq := k.Rqs[p.cpu]
	if k.deferUntilIdleExit(rq, p.wakeTimer) {
		return
	}
	k.thisCPU = rq.CPU
	rq.TTWUPending--
	rq.sgStatsChanged()
	k.updateRqClock(rq)
	k.ttwuDoActivate(rq, p, p.pendingWakeFlags)
	k.afterEvent()
}

// ttwuDoActivate mirrors core.c:ttwu_do_activate (v6.19).
func (k *Kernel) ttwuDoActivate(rq *Rq, p *Task, wakeFlags int) {
	enFlags := enqueueWakeup | enqueueNoclock
	if wakeFlags&WFMigrated != 0 {
		enFlags |= enqueueMigrated
	}
	if wakeFlags&WFRqSelected != 0 {
		enFlags |= enqueueRqSelected
	}
	k.activateTask(rq, p, enFlags)
	k.wakeupPreempt(rq, p, wakeFlags)
	p.State = TaskRunning
	if k.Hooks.Wakeup != nil {
		k.Hooks.Wakeup(p, rq.CPU)
	}
	if rq.IdleStamp != 0 {
		delta := rq.Clock - rq.IdleStamp
		maxCost := 2 * rq.MaxIdleBalanceCost
		updateAvg(&rq.AvgIdle, delta)
		if rq.AvgIdle > maxCost {
			rq.AvgIdle = maxCost
		}
		k.updateWakeAvgIdle(rq) // wakeup path: SIS_PROP's wake_avg_idle/wake_stamp
		rq.IdleStamp = 0
	}
}

// updateAvg mirrors sched.h:update_avg (v6.19): avg += (sample - avg) / 8.
func updateAvg(avg *uint64, sample uint64) {
	diff := int64(sample - *avg)
	*avg += uint64(diff / 8)
}

// ttwuStat mirrors core.c:ttwu_stat (v6.19): counted on the waker's CPU.
func (k *Kernel) ttwuStat(p *Task, cpu cpumask.CPU, wakeFlags int) {
	rq := k.Rqs[k.thisCPU]
	p.SE.Stats.NrWakeups++
	if cpu == rq.CPU {
		rq.Schedstat.TTWULocal++
		p.SE.Stats.NrWakeupsLocal++
	} else {
		p.SE.Stats.NrWakeupsRemote++
		for _, sd := range k.dom.SD[rq.CPU] {
			if sd.T.Span.Test(cpu) {
				sd.Stats.TTWUWakeRemote++
				break
			}
		}
	}
	if wakeFlags&WFMigrated != 0 {
		p.SE.Stats.NrWakeupsMigrate++
	}
	rq.Schedstat.TTWUCount++
	if wakeFlags&WFSync != 0 {
		p.SE.Stats.NrWakeupsSync++
	}
}

// doExit mirrors the scheduler's part of do_exit (v6.19; the same in v6.0
// and v5.12): the task is marked dead and schedules away for the last time.
func (k *Kernel) doExit(rq *Rq, p *Task) {
	if k.Hooks.Exit != nil {
		k.Hooks.Exit(p)
	}
	p.State = TaskDead
	p.Exited = k.Eng.Now()
	k.schedule(rq, false)
}

// finishTaskDead mirrors finish_task_switch's put of a dead task:
// task_dead_fair (v6.19; the same in v6.0 and v5.12).
func (k *Kernel) finishTaskDead(rq *Rq, p *Task) {
	se := &p.SE
	if se.SchedDelayed {
		trq := k.taskRq(p)
		k.updateRqClock(trq)
		k.dequeueEntities(trq, se, dequeueSleep|dequeueDelayed)
	}
	removeEntityLoadAvg(se)
}

// afterEvent runs per-event observers (invariant checks under the
// invariants build tag).
func (k *Kernel) afterEvent() {
	if invariantsEnabled {
		k.CheckInvariants()
	}
	if k.Hooks.AfterEvent != nil {
		k.Hooks.AfterEvent(k)
	}
}

// cpusShareCache mirrors sched.h:cpus_share_cache (v6.19).
func (k *Kernel) cpusShareCache(a, b cpumask.CPU) bool {
	if a == b {
		return true
	}
	return k.llcID(a) == k.llcID(b)
}

// schedExec mirrors core.c:sched_exec (v6.19): at execve the task's class
// picks a CPU with WF_EXEC (select_task_rq_fair's exec balance, the
// find_idlest_cpu slow path); if that is another CPU, the stopper of the
// task's CPU moves it there (migration_cpu_stop → move_queued_task). The
// stopper thread is not a task here: the move is the core's deactivate,
// schedule, set_task_cpu and activate, as for active balance. The task's
// program then continues on the new CPU.
func (k *Kernel) schedExec(rq *Rq, p *Task) {
	flags := WFExec
	before := rq.Wakeup
	prev := p.cpu
	dest := k.selectTaskRq(p, prev, &flags)
	k.decide(DecisionExec, p, prev, dest)
	k.chargeFindDst(rq, before)
	if dest == k.thisCPU {
		k.runProgram(rq, p)
		return
	}
	k.updateRqClock(rq)
	k.deactivateTask(rq, p, dequeueNoclock)
	k.schedule(rq, true)
	k.setTaskCPU(p, dest)
	drq := k.Rqs[dest]
	k.updateRqClock(drq)
	k.activateTask(drq, p, enqueueNoclock)
	k.wakeupPreempt(drq, p, 0)
}

// ExpireSleep ends p's timed sleep now: its sleep timer fires at the
// current time on the CPU it was armed on, in timer context, as an hrtimer
// re-armed with an expiry already past (hrtimer_start_range_ns). The wakeup
// is then the timer's, not the caller's. It reports whether p was in a
// timed sleep.
func (k *Kernel) ExpireSleep(p *Task) bool {
	if !p.sleepTimer.Armed() {
		return false
	}
	k.Eng.Schedule(p.sleepTimer, k.Eng.Now())
	return true
}
