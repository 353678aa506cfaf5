package sched

import (
	"fmt"

	"github.com/schedlab/schedlab/internal/costmodel"
	"github.com/schedlab/schedlab/internal/cpumask"
	"github.com/schedlab/schedlab/internal/engine"
	"github.com/schedlab/schedlab/internal/topology"
)

// Load balancing: how this package models fair.c's balancer.
//
// # Entry points
//
// The kernel balances from four places, and so does schedlab:
//
//   - Periodic balance. Every tick of a busy CPU runs sched_balance_trigger
//     (the tick's own event, schedTick). When jiffies reach rq->next_balance
//     it raises SCHED_SOFTIRQ; the softirq is modelled as running at the end
//     of the same tick event, after nohz_balancer_kick, as it would on the
//     way out of the timer interrupt. sched_balance_softirq updates this
//     CPU's blocked load and walks its domains (sched_balance_domains) with
//     the per-domain intervals, busy_factor and back-off of the kernel.
//     This file.
//   - Newly idle balance. pick_next_task_fair calls sched_balance_newidle
//     when it finds nothing to run; it pulls before the CPU goes idle, gated
//     by avg_idle against max_newidle_lb_cost. balance_newidle.go.
//   - NOHZ idle balance. Idle CPUs stop their tick, so a busy CPU's tick
//     (nohz_balancer_kick) kicks one idle CPU, the idle load balancer (ILB),
//     with an IPI that arrives Settings.WakeupIPILatency later (a per-CPU
//     "nohz_csd" timer); its softirq balances and decays blocked load on
//     behalf of every idle CPU. A CPU about to idle may also refresh the
//     blocked load itself (nohz_run_idle_balance). balance_nohz.go.
//   - Active balance. When tasks cannot be pulled because the only
//     candidate is running, the balancer queues the stopper on the busiest
//     CPU; it runs there after the IPI latency, preempts the running task
//     and moves one task (balance_rq.go).
//
// sched_balance_rq (load_balance) and everything below it are in
// balance_rq.go (env, find the busiest group and queue, detach/attach,
// active balance) and balance_groups.go (group statistics and
// classification).
//
// # Time spent balancing
//
// The kernel does this work on some CPU and for some time; a simulator that
// did it in zero time would hide exactly what patches such as
// blocked-avg-ratelimit change. Every balancing pass therefore adds up the
// work it does from the constants of cost_params.go (per leaf cfs_rq
// walked, per cpufreq update, per group and CPU examined, per task examined
// and moved), converts it into time on the CPU doing it (slower on a
// smaller CPU, lbWorkTime), and charges that time to that CPU when the pass
// ends (lbBegin/lbEnd):
//
//   - the CPU is busy in the kernel until rq.LBBusyUntil: the task it was
//     running (the periodic softirq interrupts one) makes no progress
//     until then, although, as on a kernel without IRQ time accounting,
//     the softirq time still counts as its runtime; a task chosen to run
//     next (after newidle balance pulls it) starts only then; a reschedule
//     requested meanwhile (a wakeup, a preemption) waits for it;
//   - a remote runqueue whose lock the pass held (update_blocked_averages
//     of another idle CPU, detaching its tasks) cannot reschedule before
//     the pass is done with it either;
//   - the measured time is what the kernel measures with sched_clock:
//     newidle's domain_cost, max_newidle_lb_cost, max_idle_balance_cost.
//
// The logic of a pass itself runs at one instant of the event that
// triggers it; only its consequences are delayed. So a wakeup landing on a
// CPU in the middle of its newidle balance is still seen by the decisions
// taken before it (the kernel would notice it at its next check of
// nr_running or need_resched); that simplification is deliberate.
//
// # Not modelled
//
// RT/DL/IRQ pressure (so capacity_of equals the original capacity and the
// reduced-capacity cases never trigger), SD_ASYM_PACKING (no ITMT), NUMA
// balancing (fbq_type is always "all"), energy-aware scheduling (no
// perf domains: the overutilized gate is open), CFS bandwidth
// (lb_throttled_hierarchy is false), per-CPU kthreads and proxy execution,
// CPU hotplug (every CPU is active), isolated CPUs and housekeeping masks.

// Load-balancing constants (fair.c, sched.h).
const (
	// maxPinnedInterval is MAX_PINNED_INTERVAL (ms).
	maxPinnedInterval = 512
	// schedNrMigrateBreak is SCHED_NR_MIGRATE_BREAK (32 without PREEMPT_RT).
	schedNrMigrateBreak = 32
	// loadAvgPeriodMs is LOAD_AVG_PERIOD, used in ms by nohz.next_blocked.
	loadAvgPeriodMs = 32
	// configPreemption mirrors CONFIG_PREEMPTION=y: the core models the full
	// preemption model, where newidle balance stops after one task
	// (detach_tasks, v6.19; the same in v6.0 and v5.12).
	configPreemption = true
)

// BlockedOrigin says who asked for a sched_balance_update_blocked_averages.
type BlockedOrigin int

// Callers of update_blocked_averages, counted per target CPU in
// Rq.BlockedUpdatesBy.
const (
	// BlockedBySoftirq: the CPU's own periodic sched_balance_softirq.
	BlockedBySoftirq BlockedOrigin = iota
	// BlockedByNewidle: the CPU's own newly idle balance.
	BlockedByNewidle
	// BlockedByNohzStats: update_nohz_stats from _nohz_idle_balance, run by
	// a kicked ILB or by a CPU about to idle (nohz_run_idle_balance, or
	// v5.10's nohz_newidle_balance).
	BlockedByNohzStats
	// BlockedByNewidleStats: update_nohz_stats from update_sg_lb_stats of
	// another CPU's newly idle balance (LBF_NOHZ_STATS, before v5.13).
	BlockedByNewidleStats
	// BlockedByNohzSelf: v5.10's _nohz_idle_balance refreshing the ILB
	// itself after the others.
	BlockedByNohzSelf
	NrBlockedOrigins
)

func (o BlockedOrigin) String() string {
	switch o {
	case BlockedBySoftirq:
		return "softirq"
	case BlockedByNewidle:
		return "newidle"
	case BlockedByNohzStats:
		return "nohz_stats"
	case BlockedByNewidleStats:
		return "newidle_nohz_stats"
	case BlockedByNohzSelf:
		return "nohz_self"
	}
	return fmt.Sprintf("origin%d", int(o))
}

// BalanceCounter counts calls of one balancing entry point and the
// simulated time they kept a CPU busy.
type BalanceCounter struct {
	Calls uint64
	Total engine.Time
	Max   engine.Time
}

func (c *BalanceCounter) add(d engine.Time) {
	c.Calls++
	c.Total += d
	if d > c.Max {
		c.Max = d
	}
}

// Mean is Total/Calls (0 without calls).
func (c BalanceCounter) Mean() engine.Time {
	if c.Calls == 0 {
		return 0
	}
	return c.Total / engine.Time(c.Calls)
}

// BalanceStats is what the balancer did on the whole machine, for run
// reports (the "balance" section of a run's JSON). Times are simulated
// time on the CPU doing the work (cost_params.go).
type BalanceStats struct {
	// UpdateBlockedAverages: every sched_balance_update_blocked_averages
	// call, whoever made it; the time is that of the call alone.
	UpdateBlockedAverages BalanceCounter
	// NewidleBalance: every sched_balance_newidle call that got past the
	// pending-wakeup test, including the nohz work it did (v5.10's direct
	// nohz_newidle_balance); gated calls count with their (small) time.
	NewidleBalance BalanceCounter
	// NewidleGatePassed counts the calls that got past the avg_idle and
	// overload gate and walked the domains.
	NewidleGatePassed uint64
	// PeriodicBalance: sched_balance_softirq runs, on ticking CPUs and on
	// kicked ILBs (including their work for other CPUs).
	PeriodicBalance BalanceCounter
	// NohzIdleBalance: _nohz_idle_balance passes (kicked ILBs and CPUs
	// refreshing blocked load before idling).
	NohzIdleBalance BalanceCounter
	// ActiveBalance: stopper runs (active_load_balance_cpu_stop), time
	// on the busiest CPU.
	ActiveBalance BalanceCounter
	// RqLockWaits counts the times a CPU's reschedule (a wakeup's IPI, a
	// preemption) or the start of its next task was pushed back because
	// balancing work held its rq lock or occupied it (LBBusyUntil:
	// update_blocked_averages, newidle and periodic balance, a NOHZ
	// kick's pass), with the time each push added.
	RqLockWaits BalanceCounter
	// IlbKicks counts kick_ilb IPIs sent.
	IlbKicks uint64
	// Migrations counts tasks moved by the balancer (detach_tasks and the
	// stopper).
	Migrations uint64
}

// nohzState mirrors fair.c's global "nohz" structure (v6.19; v5.12 has
// no needs_update, which NohzNextKick gates).
type nohzState struct {
	idleCPUsMask cpumask.Mask
	nrCPUs       int
	hasBlocked   bool
	needsUpdate  bool
	nextBalance  uint64 // jiffies
	nextBlocked  uint64 // jiffies
	// line is the structure's own cache line (the fields above but the
	// mask), maskLine the line of idle_cpus_mask, which
	// CONFIG_CPUMASK_OFFSTACK allocates apart (Settings.NohzRdLines;
	// a machine of more than 512 CPUs would have several mask lines).
	line, maskLine sharedLine
}

// balanceState is the balancer's machine-wide state.
type balanceState struct {
	nohz nohzState
	// nohzPass is set while a kicked idle load balancer balances for
	// the idle CPUs (nohz_idle_balance), for Hooks.Decision.
	nohzPass bool
	// rdOverloaded mirrors rq->rd->overloaded (one root domain; v6.19,
	// rd->overload in v6.0 and v5.12).
	rdOverloaded bool
	// rdOverutilized mirrors rd->overutilized as v6.0 keeps it without
	// an energy model (Settings.RdFlagsV60); it decides nothing here.
	rdOverutilized bool
	// rdLine is the root domain's cache line with both flags
	// (Settings.NohzRdLines).
	rdLine sharedLine
	// maxLoadBalanceInterval mirrors max_load_balance_interval (jiffies;
	// v6.19, the same in v6.0 and v5.12).
	maxLoadBalanceInterval uint64
	// serializeUntil is when the SD_SERIALIZE token
	// (sched_balance_running) is free again: a NUMA-level pass holds it
	// for as long as its balancing work lasts. serializeHeld marks the
	// token taken by the pass in progress, serializeCPU the CPU that took
	// it last.
	serializeUntil engine.Time
	serializeHeld  bool
	serializeCPU   cpumask.CPU
	// Cost accounting of the pass in progress (lbBegin/lbEnd): the CPU
	// doing the work, the time spent so far, the nesting depth.
	cpu   cpumask.CPU
	spent engine.Time
	depth int
	// freqDomainCPUs[cpu] is the number of CPUs of cpu's cpufreq policy.
	freqDomainCPUs []int
	// niRand are the per-CPU streams of sched_rng() (NI_RANDOM).
	niRand []func() uint32
	// lbMask is each CPU's load_balance_mask, the env->cpus of its
	// sched_balance_rq (a per-CPU cpumask_var_t in fair.c, so that a
	// pass allocates nothing). A CPU's is taken while a pass uses it
	// (the zero Mask), and a pass that finds it taken clones the span.
	// lbTasks is likewise the array behind each CPU's env->tasks list.
	lbMask  []cpumask.Mask
	lbTasks [][]*Task
	// sgGen are the generation slots (CPUs', LLCs'), sgLLCSlot each
	// CPU's LLC slot, sgShare the groups' kept statistics and sgSlots
	// the slots each group reads (Settings.ShareSgStats,
	// balance_share.go).
	sgGen       []uint64
	sgLLCSlot   []int32
	sgCPU       []sgCPU
	sgShare     []sgShared
	sgSlots     [][]int32
	sgShareHits uint64
}

// initBalance sets up the balancer's state at boot (init_sched_fair_class,
// sd_init's last_decay_max_lb_cost, the per-CPU timers).
func (k *Kernel) initBalance() {
	n := k.NrCPUs()
	b := &k.bal
	b.nohz.idleCPUsMask = cpumask.New(n)
	b.nohz.line, b.nohz.maskLine, b.rdLine = newSharedLine(n), newSharedLine(n), newSharedLine(n)
	jiff := k.Jiffies()
	b.nohz.nextBalance = jiff
	b.nohz.nextBlocked = jiff
	k.updateMaxInterval()
	b.freqDomainCPUs = make([]int, n)
	b.niRand = make([]func() uint32, n)
	b.lbMask = make([]cpumask.Mask, n)
	b.lbTasks = make([][]*Task, n)
	k.initSgShare()
	for i := range b.lbMask {
		b.lbMask[i] = cpumask.New(n)
	}
	for i := 0; i < n; i++ {
		fd := k.Topo.Spec.CPUs[i].FreqDomain
		for j := 0; j < n; j++ {
			if k.Topo.Spec.CPUs[j].FreqDomain == fd {
				b.freqDomainCPUs[i]++
			}
		}
		rq := k.Rqs[i]
		rq.PushCPU = cpumask.None
		rq.ilbTimer = engine.NewTimer("nohz_csd", func() { k.nohzCsdFunc(rq) })
		rq.stopperTimer = engine.NewTimer("stopper", func() { k.activeLoadBalanceCPUStop(rq) })
		for _, sd := range k.dom.SD[i] {
			sd.LastDecayMaxLbCost = jiff
		}
	}
	// Every CPU boots into the idle loop with its tick stopped: it joins
	// the NOHZ idle set as nohz_balance_enter_idle would have made it.
	for _, rq := range k.Rqs {
		if rq.NohzTickStopped && rq.IdleCPU() {
			k.nohzBalanceEnterIdle(rq)
		}
	}
}

// updateMaxInterval mirrors fair.c:update_max_interval (v6.19):
// max_load_balance_interval = HZ × online CPUs / 10 jiffies.
func (k *Kernel) updateMaxInterval() {
	k.bal.maxLoadBalanceInterval = max(uint64(k.S.HZ)*uint64(k.NrCPUs())/10, 1)
}

// schedRng mirrors sched_rng() on cpu (v6.19, NI_RANDOM only): a
// deterministic stream per CPU derived from the run's seed (the kernel
// uses a per-CPU prandom state).
func (k *Kernel) schedRng(cpu cpumask.CPU) uint32 {
	if k.bal.niRand[cpu] == nil {
		r := k.Eng.Rand(fmt.Sprintf("sched_rng/%d", cpu))
		k.bal.niRand[cpu] = r.Uint32
	}
	return k.bal.niRand[cpu]()
}

// setRdOverloaded mirrors sched.h:set_rd_overloaded (v6.19): load the
// flag and store it only if it changes (add_nr_running's form in every
// baseline; v6.0's update_sd_lb_stats stores without looking,
// Settings.RdFlagsV60).
func (k *Kernel) setRdOverloaded(v bool) {
	k.lineLoad(&k.bal.rdLine)
	if k.bal.rdOverloaded != v {
		k.bal.rdOverloaded = v
		k.lineStore(&k.bal.rdLine)
	}
}

// getRdOverloaded mirrors sched.h:get_rd_overloaded (v6.19).
func (k *Kernel) getRdOverloaded() bool {
	k.lineLoad(&k.bal.rdLine)
	return k.bal.rdOverloaded
}

// cpuOverutilized mirrors fair.c:cpu_overutilized (v6.0): the CPU's CFS
// utilisation does not fit 80% of its capacity.
func (k *Kernel) cpuOverutilized(cpu cpumask.CPU) bool {
	return !fitsCapacity(k.cpuUtilCfs(cpu), k.capacityOf(cpu))
}

// updateOverutilizedStatus mirrors fair.c:update_overutilized_status
// (v6.0), called for a wakeup's enqueue and at every busy tick: load
// rd->overutilized and set it if this CPU is overutilized. Only with
// Settings.RdFlagsV60 (v6.10 does it only with an energy model) and
// NohzRdLines: the flag decides nothing here, its line is all it costs.
func (k *Kernel) updateOverutilizedStatus(rq *Rq) {
	if !k.S.RdFlagsV60 || !k.S.NohzRdLines {
		return
	}
	k.lineLoad(&k.bal.rdLine)
	if !k.bal.rdOverutilized && k.cpuOverutilized(rq.CPU) {
		k.bal.rdOverutilized = true
		k.lineStore(&k.bal.rdLine)
	}
}

// RdOverloaded reports the root domain's overloaded flag.
func (k *Kernel) RdOverloaded() bool { return k.bal.rdOverloaded }

// jiffies comparisons (include/linux/jiffies.h), on the 64-bit counter.
func timeAfter(a, b uint64) bool   { return int64(b-a) < 0 }
func timeAfterEq(a, b uint64) bool { return int64(a-b) >= 0 }
func timeBefore(a, b uint64) bool  { return timeAfter(b, a) }

// msecsToJiffies mirrors msecs_to_jiffies: rounded up (every baseline).
func (k *Kernel) msecsToJiffies(ms uint64) uint64 {
	hz := uint64(k.S.HZ)
	return (ms*hz + 999) / 1000
}

// --- Time spent balancing ----------------------------------------------------

// lbWorkTime converts kernel work w (ns at capacity 1024 and full speed)
// into time on rq's CPU, scaled by its capacity and current frequency
// (costmodel.ScaleWork).
func lbWorkTime(rq *Rq, w engine.Time) engine.Time {
	return costmodel.ScaleWork(w, rq.CPUCapacityOrig, rq.FreqScale)
}

// lbBegin starts a balancing pass done by cpu (or nests into the pass in
// progress, whose CPU it keeps) and returns the time spent so far, to
// measure this part of it.
func (k *Kernel) lbBegin(cpu cpumask.CPU) engine.Time {
	if k.bal.depth == 0 {
		k.bal.cpu = cpu
		k.bal.spent = 0
	}
	k.bal.depth++
	return k.bal.spent
}

// lbEnd ends a part of a pass started at mark and returns its duration;
// when the outermost part ends, the whole pass is charged to its CPU.
func (k *Kernel) lbEnd(mark engine.Time) engine.Time {
	d := k.bal.spent - mark
	k.bal.depth--
	if k.bal.depth == 0 {
		k.delayCPU(k.Rqs[k.bal.cpu], k.bal.spent)
		k.bal.spent = 0
	}
	return d
}

// lbCharge adds work w to the pass in progress.
func (k *Kernel) lbCharge(w engine.Time) {
	if k.bal.depth == 0 {
		return
	}
	k.bal.spent += lbWorkTime(k.Rqs[k.bal.cpu], w)
}

// lbNow is the simulated time the pass in progress has reached.
func (k *Kernel) lbNow() engine.Time { return k.Eng.Now() + k.bal.spent }

// cpuFreeAt is when rq's CPU is done with balancing work: now, or later if
// a pass keeps it busy or holds its rq lock.
func (k *Kernel) cpuFreeAt(rq *Rq) engine.Time {
	if now := k.Eng.Now(); rq.LBBusyUntil > now {
		return rq.LBBusyUntil
	}
	return k.Eng.Now()
}

// delayCPU makes rq's CPU spend d in the kernel from now (or from the end of
// the kernel work it is already doing): its running task's work and any
// pending reschedule are pushed back.
func (k *Kernel) delayCPU(rq *Rq, d engine.Time) {
	if d <= 0 {
		return
	}
	from := k.cpuFreeAt(rq)
	rq.LBBusyUntil = from + d
	k.delay(rq.CPU, DelayBalance, from, rq.LBBusyUntil)
	k.lbExtendSegment(rq, d)
	if rq.reschedTimer.Armed() && rq.reschedTimer.When() < rq.LBBusyUntil {
		k.Eng.Schedule(rq.reschedTimer, rq.LBBusyUntil)
	}
}

// lbExtendSegment makes the task running on rq lose d to kernel work: its
// current work ends d later (the time still counts as its runtime, as
// softirq time does without IRQ time accounting), or, if its program is
// due, the program runs when the kernel work is over.
func (k *Kernel) lbExtendSegment(rq *Rq, d engine.Time) {
	t := rq.Curr
	if t.IsIdleTask() || !rq.segTimer.Armed() || d <= 0 {
		return
	}
	if t.workLeft == 0 {
		if w := rq.segTimer.When(); w < rq.LBBusyUntil {
			k.charge(t, CostBalance, rq.LBBusyUntil-w)
			k.Eng.Schedule(rq.segTimer, rq.LBBusyUntil)
		}
		return
	}
	k.accountSegment(rq)
	speed := rq.speed
	if speed <= 0 {
		speed = baseSpeed(rq)
	}
	t.workLeft += workInTime(d, speed)
	k.charge(t, CostBalance, d)
	k.startSegment(rq)
}

// lbDelayNext is called by schedule once it has started the next task: if
// the CPU is still busy with balancing work (the newly idle balance that
// found this task) or its rq lock is held by another CPU's pass, the task
// starts when that is over.
func (k *Kernel) lbDelayNext(rq *Rq) {
	if d := rq.LBBusyUntil - k.Eng.Now(); d > 0 {
		k.BalanceStats.RqLockWaits.add(d)
		k.lbExtendSegment(rq, d)
	}
}

// holdRqLock records that the pass in progress held rq's lock up to the
// time it has reached: rq cannot reschedule before then.
func (k *Kernel) holdRqLock(rq *Rq) {
	if k.bal.depth == 0 || rq.CPU == k.bal.cpu {
		return
	}
	if t := k.lbNow(); t > rq.LBBusyUntil {
		k.delay(rq.CPU, DelayBalance, max(rq.LBBusyUntil, k.Eng.Now()), t)
		rq.LBBusyUntil = t
		if rq.reschedTimer.Armed() && rq.reschedTimer.When() < t {
			k.BalanceStats.RqLockWaits.add(t - rq.reschedTimer.When())
			k.Eng.Schedule(rq.reschedTimer, t)
		}
	}
}

// lbUpdateBlockedAverages is sched_balance_update_blocked_averages(cpu)
// (fair_pelt.go) as a balancing pass calls it: its cost — a fixed part, each
// leaf cfs_rq walked, each cpufreq update it caused (a remote CPU of
// another frequency domain cannot change that domain's frequency, so
// schedutil returns at once) — is charged to the pass and to the time cpu's
// rq lock is held, and the call is counted.
func (k *Kernel) lbUpdateBlockedAverages(cpu cpumask.CPU, origin BlockedOrigin) {
	rq := k.Rqs[cpu]
	idle := rq.IdleCPU()
	walked, freq := rq.BlockedCfsRqsWalked, rq.CpufreqUpdates
	k.SchedBalanceUpdateBlockedAverages(cpu)
	c := &k.Costs.Balance
	w := c.BlockedAverages(rq.BlockedCfsRqsWalked - walked)
	if n := rq.CpufreqUpdates - freq; n > 0 {
		cpus := 0
		if k.Topo.Spec.CPUs[cpu].FreqDomain == k.Topo.Spec.CPUs[k.bal.cpu].FreqDomain {
			cpus = k.bal.freqDomainCPUs[cpu]
		}
		w += engine.Time(n) * c.CpufreqUpdate(cpus)
	}
	before := k.bal.spent
	k.lbCharge(w)
	k.holdRqLock(rq)
	k.BalanceStats.UpdateBlockedAverages.add(k.bal.spent - before)
	if idle {
		rq.BlockedUpdatesIdle++
	}
	rq.BlockedUpdatesBy[origin]++
}

// --- Periodic balance ----------------------------------------------------------

// schedBalanceTrigger mirrors fair.c:sched_balance_trigger (v6.19), called
// from every tick: raise SCHED_SOFTIRQ when the rq's next balance is due,
// and see whether idle CPUs need a NOHZ balance. The softirq runs in the
// same event, after the kick, as it would on irq exit.
func (k *Kernel) schedBalanceTrigger(rq *Rq) {
	if len(k.dom.SD[rq.CPU]) == 0 {
		return
	}
	raise := timeAfterEq(k.Jiffies(), rq.NextBalance)
	k.nohzBalancerKick(rq)
	if raise {
		k.schedBalanceSoftirq(rq)
	}
}

// schedBalanceSoftirq mirrors fair.c:sched_balance_softirq (v6.19): a CPU
// kicked as idle load balancer balances for the idle CPUs; otherwise it
// refreshes its own blocked load and balances its own domains.
func (k *Kernel) schedBalanceSoftirq(rq *Rq) {
	mark := k.lbBegin(rq.CPU)
	idle := CPUNotIdle
	if rq.IdleBalance {
		idle = CPUIdle
	}
	if !k.nohzIdleBalance(rq, idle) {
		k.lbUpdateBlockedAverages(rq.CPU, BlockedBySoftirq)
		k.schedBalanceDomains(rq, idle)
	}
	k.BalanceStats.PeriodicBalance.add(k.lbEnd(mark))
}

// getSdBalanceInterval mirrors fair.c:get_sd_balance_interval (v6.19): the
// domain's interval in jiffies, busy_factor times longer for a busy CPU
// (and one jiffy less, so that levels do not fire together), clamped to
// [1, max_load_balance_interval].
func (k *Kernel) getSdBalanceInterval(sd *SchedDomain, busy bool) uint64 {
	ms := sd.BalanceInterval
	if busy {
		ms *= uint64(sd.T.BusyFactor)
	}
	interval := k.msecsToJiffies(ms)
	if busy && interval > 0 {
		interval--
	}
	return min(max(interval, 1), k.bal.maxLoadBalanceInterval)
}

// updateNextBalance mirrors fair.c:update_next_balance (v6.19; idle intervals).
func (k *Kernel) updateNextBalance(sd *SchedDomain, nextBalance *uint64) {
	next := sd.LastBalance + k.getSdBalanceInterval(sd, false)
	if timeAfter(*nextBalance, next) {
		*nextBalance = next
	}
}

// updateNewidleStats mirrors fair.c:update_newidle_stats (v6.19): the
// success ratio NI_RANDOM samples by, refreshed every 1024 calls.
func updateNewidleStats(sd *SchedDomain, success uint64) {
	sd.NewidleCall++
	sd.NewidleSuccess += success
	if sd.NewidleCall >= 1024 {
		sd.NewidleRatio = sd.NewidleSuccess
		sd.NewidleCall /= 2
		sd.NewidleSuccess /= 2
	}
}

// updateNewidleCost mirrors fair.c:update_newidle_cost (v6.19; v5.16+
// without the success statistics): keep the domain's worst newidle cost,
// decaying it by 1% per second. It reports whether a decay happened.
func (k *Kernel) updateNewidleCost(sd *SchedDomain, cost, success uint64) bool {
	nextDecay := sd.LastDecayMaxLbCost + uint64(k.S.HZ)
	now := k.Jiffies()
	if cost != 0 {
		updateNewidleStats(sd, success)
	}
	if cost > sd.MaxNewidleLbCost {
		sd.MaxNewidleLbCost = cost
		sd.LastDecayMaxLbCost = now
	} else if timeAfter(now, nextDecay) {
		sd.MaxNewidleLbCost = sd.MaxNewidleLbCost * 253 / 256
		sd.LastDecayMaxLbCost = now
		return true
	}
	return false
}

// cpuBusyForBalance is "idle != CPU_IDLE && !sched_idle_cpu(cpu)": the
// busy test of sched_balance_domains.
func (k *Kernel) cpuBusyForBalance(cpu cpumask.CPU, idle int) bool {
	return idle != CPUIdle && !k.schedIdleCPU(cpu)
}

// schedBalanceDomains mirrors fair.c:sched_balance_domains (v6.19; with
// !LBSerializeInBalanceRq the v6.0 rebalance_domains, which takes the
// SD_SERIALIZE token here and skips the domain when it is busy; v5.12's
// decay with NewidleV512 and its nohz.next_balance update without
// NohzNextKick): walk rq's domains bottom-up, balance those whose interval
// has passed, decay max_newidle_lb_cost, and set rq.next_balance.
func (k *Kernel) schedBalanceDomains(rq *Rq, idle int) {
	continueBalancing := true
	cpu := rq.CPU
	busy := k.cpuBusyForBalance(cpu, idle)
	jiff := k.Jiffies()
	nextBalance := jiff + 60*uint64(k.S.HZ)
	updateNextBalance := false
	needDecay := false
	var maxCost uint64
	for _, sd := range k.dom.SD[cpu] {
		if k.S.NewidleV512 {
			// v5.12 decays once a second whatever happened, and
			// need_decay stays set. LastDecayMaxLbCost holds v5.12's
			// next_decay_max_lb_cost here (both start at jiffies).
			if timeAfter(jiff, sd.LastDecayMaxLbCost) {
				sd.MaxNewidleLbCost = sd.MaxNewidleLbCost * 253 / 256
				sd.LastDecayMaxLbCost = jiff + uint64(k.S.HZ)
				needDecay = true
			}
		} else {
			needDecay = k.updateNewidleCost(sd, 0, 0)
		}
		maxCost += sd.MaxNewidleLbCost
		if !continueBalancing {
			if needDecay {
				continue
			}
			break
		}
		interval := k.getSdBalanceInterval(sd, busy)
		needSerialize := !k.S.LBSerializeInBalanceRq && sd.T.Flags&topology.SDSerialize != 0
		if needSerialize && !k.serializeTryLock() {
			goto out
		}
		if timeAfterEq(jiff, sd.LastBalance+interval) {
			moved := k.schedBalanceRq(cpu, rq, sd, idle, &continueBalancing)
			k.countClusterLevel(sd, moved)
			if moved > 0 {
				// LBF_DST_PINNED may have moved the pull elsewhere:
				// recompute this CPU's idleness.
				idle = CPUNotIdle
				if rq.IdleCPU() {
					idle = CPUIdle
				}
				busy = k.cpuBusyForBalance(cpu, idle)
			}
			sd.LastBalance = jiff
			interval = k.getSdBalanceInterval(sd, busy)
		}
		if needSerialize {
			k.serializeUnlock()
		}
	out:
		if timeAfter(nextBalance, sd.LastBalance+interval) {
			nextBalance = sd.LastBalance + interval
			updateNextBalance = true
		}
	}
	if needDecay {
		rq.MaxIdleBalanceCost = max(k.S.MigrationCost, maxCost)
	}
	if updateNextBalance {
		rq.NextBalance = nextBalance
		// Before NOHZ_NEXT_KICK (v5.16) an idle CPU balanced here pulls
		// nohz.next_balance to its own next balance.
		if !k.S.NohzNextKick && idle == CPUIdle && timeAfter(k.bal.nohz.nextBalance, rq.NextBalance) {
			k.bal.nohz.nextBalance = rq.NextBalance
			k.lineStore(&k.bal.nohz.line)
		}
	}
}

// serializeTryLock takes the SD_SERIALIZE token (sched_balance_running, or
// v6.0's "balancing" spinlock) for the pass in progress. The token is busy
// while another CPU's NUMA-level pass is still doing its work; the CPU that
// released it last may take it again at once (an idle load balancer
// balancing one idle CPU after another).
func (k *Kernel) serializeTryLock() bool {
	if k.bal.serializeHeld {
		return false
	}
	if k.lbNow() < k.bal.serializeUntil && k.bal.serializeCPU != k.bal.cpu {
		return false
	}
	k.bal.serializeHeld = true
	k.bal.serializeCPU = k.bal.cpu
	return true
}

// serializeUnlock releases the token at the time the pass has reached.
func (k *Kernel) serializeUnlock() {
	k.bal.serializeHeld = false
	k.bal.serializeUntil = k.lbNow()
}
