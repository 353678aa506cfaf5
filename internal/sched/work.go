package sched

import (
	"fmt"
	"slices"
	"strings"

	"github.com/schedlab/schedlab/internal/costmodel"
	"github.com/schedlab/schedlab/internal/cpumask"
	"github.com/schedlab/schedlab/internal/engine"
	"github.com/schedlab/schedlab/internal/topology"
)

// The work model and the costs it charges. A task's operation is an amount
// of work: nanoseconds of CPU time on a CPU of capacity 1024 running alone
// on its core with all the memory bandwidth it wants. The running task
// progresses at rq.speed, which the machine's capacity, a busy SMT sibling
// and memory-bandwidth sharing lower; when the speed changes the running
// segment is re-timed (no per-nanosecond stepping). The costs a context
// switch, a migration's cache refill, an IPI, an idle-state exit and the
// scheduler's own paths add are charged where they occur. The formulas
// and their integer tables are the cost model's (costmodel.Table, installed
// by ApplyCosts as Kernel.Costs); this file decides when they are charged.

// ApplyCosts installs the cost model compiled for this machine
// (costmodel.Compile): from then on context switches, refills, IPIs,
// idle exits, the wakeup path's and the balancer's work are charged,
// costs are spread by Settings.CostJitterPct, and the cpufreq governors
// run. SIS_PROP's scan-time estimate takes sis_scan_cpu_ns (a --sysctl
// model_sis_scan_cost_ns set afterwards wins).
func (k *Kernel) ApplyCosts(t *costmodel.Table) {
	k.Costs = *t
	k.bwSharer = nil
	k.costsOn = true
	k.startCpufreq()
	k.S.SISScanCost = uint64(t.SISScanCPU)
}

// CostCounters count what the cost model charged on a CPU.
type CostCounters struct {
	ContextSwitches uint64
	Migrations      uint64 // switch-ins on a CPU other than the last one
	RefillNs        uint64
	IdleExitNs      uint64
	// LineTransfers and LineNs count the transfers of the balancer's
	// shared lines (Settings.NohzRdLines) charged to this CPU's task or
	// balancing work, and their time before scaling and jitter.
	LineTransfers uint64
	LineNs        uint64
	// The kernel time charged through Charge is Rq.OverheadNs, in the
	// line every segment end writes.
}

const speedShift = 20

// baseSpeed is the speed of a task alone on the CPU.
func baseSpeed(rq *Rq) int64 {
	return int64(rq.CPUCapacityOrig) << (speedShift - SchedCapacityShift)
}

// timeForWork is how long w ns of work takes at speed.
func timeForWork(w engine.Time, speed int64) engine.Time {
	return engine.Time((int64(w)<<speedShift + speed - 1) / speed)
}

// workInTime is the work done in d at speed.
func workInTime(d engine.Time, speed int64) engine.Time {
	return engine.Time(int64(d) * speed >> speedShift)
}

// accountSegment charges the running task's progress since the segment
// (re)started. It leaves the completion timer armed: the caller re-arms
// it (startSegment, or schedule for the next task) or cancels it.
func (k *Kernel) accountSegment(rq *Rq) {
	t := rq.Curr
	if t.IsIdleTask() {
		return
	}
	now := k.Eng.Now()
	if t.workLeft > 0 && rq.speed > 0 {
		done := workInTime(now-rq.segStart, rq.speed)
		if done > t.workLeft {
			done = t.workLeft
		}
		t.workLeft -= done
	}
	rq.segStart = now
}

// startSegment (re)computes the running task's speed and arms the end of
// its current work.
func (k *Kernel) startSegment(rq *Rq) {
	t := rq.Curr
	if t.IsIdleTask() {
		return
	}
	rq.speed = k.taskSpeed(rq)
	rq.segStart = k.Eng.Now()
	k.Eng.Schedule(rq.segTimer, rq.segStart+timeForWork(t.workLeft, rq.speed))
}

// retime re-plans the running task after its speed changed.
func (k *Kernel) retime(rq *Rq) {
	if rq.currIsIdle() || !rq.segTimer.Armed() || rq.Curr.workLeft == 0 {
		return
	}
	k.accountSegment(rq)
	k.startSegment(rq)
}

// segmentDone runs when the current task finished its work: it carries out
// the operation it had pending behind charged overhead, or asks its program
// what it does next.
func (k *Kernel) segmentDone(rq *Rq) {
	k.thisCPU = rq.CPU
	t := rq.Curr
	t.workLeft = 0
	rq.segStart = k.Eng.Now()
	if t.hasPending {
		t.hasPending = false
		op := t.pendingOp
		if (op.Kind == OpSleep || op.Kind == OpBlock) && t.State == TaskRunning {
			// Woken while still on the CPU: schedule() would not block,
			// and the program sees the wakeup at once.
			k.runProgram(rq, t)
		} else {
			k.doOp(rq, t, op)
		}
	} else {
		k.runProgram(rq, t)
	}
	k.afterEvent()
}

// runProgram asks t's program for its next operation and carries it out.
// Zero-length runs are passed over without a new event, up to a bound that
// catches programs that never block.
func (k *Kernel) runProgram(rq *Rq, t *Task) {
	for i := 0; ; i++ {
		if i > 1000000 {
			panic(fmt.Sprintf("sched: program of %s[%d] returns zero-length operations forever", t.Comm, t.PID))
		}
		prev := k.progTask
		k.progTask = t
		op := t.Prog.Next(k, t)
		k.progTask = prev
		if op.Kind == OpRun && op.D > 0 {
			k.charge(t, CostProgram, op.D)
		}
		if t.overhead > 0 && op.Kind == OpRun && op.D > 0 && op.BW == 0 {
			// Kernel work the program caused, then a run that draws no
			// memory bandwidth: nothing takes effect between the two,
			// so they are one segment, one event instead of two. What
			// can differ is only the order of events due at the same
			// nanosecond and timeForWork's rounding at a speed below 1
			// (docs/performance.md, "Charged work in the next run").
			rq.OverheadNs += uint64(t.overhead)
			op.D += t.overhead
			t.overhead = 0
		}
		if t.overhead > 0 {
			// Kernel work the program caused (syscalls, wakeups) runs
			// before the operation takes effect.
			t.pendingOp, t.hasPending = op, true
			if op.Kind == OpSleep || op.Kind == OpBlock {
				// set_current_state before the kernel work, as a
				// task does before it checks its wait condition and
				// calls schedule(): a wakeup arriving meanwhile makes
				// it runnable again instead of being lost.
				t.State = TaskInterruptible
			}
			t.workLeft = t.overhead
			rq.OverheadNs += uint64(t.overhead)
			t.overhead = 0
			k.setRunBW(rq, 0)
			k.startSegment(rq)
			return
		}
		if op.Kind == OpRun && op.D <= 0 {
			continue
		}
		k.doOp(rq, t, op)
		return
	}
}

// doOp carries out one operation of the running task t.
func (k *Kernel) doOp(rq *Rq, t *Task, op Op) {
	switch op.Kind {
	case OpRun:
		if op.D <= 0 {
			k.runProgram(rq, t)
			return
		}
		t.workLeft = op.D
		t.opBW = op.BW
		k.setRunBW(rq, op.BW)
		k.startSegment(rq)
	case OpSleep:
		t.State = TaskInterruptible
		k.Eng.Schedule(t.sleepTimer, k.Eng.Now()+op.D)
		k.sleepTimerArmed(t, rq)
		k.schedule(rq, false)
	case OpBlock:
		t.State = TaskInterruptible
		k.schedule(rq, false)
	case OpYield:
		rq.Schedstat.YldCount++
		k.yieldTaskFair(rq)
		k.schedule(rq, false)
	case OpExit:
		k.doExit(rq, t)
	case OpExec:
		k.schedExec(rq, t)
	default:
		panic(fmt.Sprintf("sched: unknown operation %d", op.Kind))
	}
}

// Charge adds kernel time d of category c to the task running on the
// current event's CPU (a syscall, a line's transfer); it spends it before
// its next operation takes effect. Nothing is charged when that CPU is
// idle.
func (k *Kernel) Charge(c Cost, d engine.Time) {
	if d <= 0 {
		return
	}
	t := k.Rqs[k.thisCPU].Curr
	if t.IsIdleTask() {
		return
	}
	j := k.jitter(d)
	t.overhead += j
	k.charge(t, c, j)
}

// chargeParts is Charge of the sum of parts, each part of category its
// index, with one jitter for the whole: what the wakeup path charges at
// once. Observers see the jittered sum shared out in proportion.
func (k *Kernel) chargeParts(parts *[NrCosts]engine.Time) {
	var d engine.Time
	for _, x := range parts {
		d += x
	}
	if d <= 0 {
		return
	}
	t := k.Rqs[k.thisCPU].Curr
	if t.IsIdleTask() {
		return
	}
	j := k.jitter(d)
	t.overhead += j
	if k.Hooks.Charge != nil {
		k.shareOut(t, parts, d, j)
	}
}

// shareOut reports j, the jittered sum d of parts, to Hooks.Charge in
// proportion to the parts (the last nonzero part takes the rounding).
func (k *Kernel) shareOut(t *Task, parts *[NrCosts]engine.Time, d, j engine.Time) {
	last := -1
	for c, x := range parts {
		if x != 0 {
			last = c
		}
	}
	left := j
	for c, x := range parts {
		if x == 0 {
			continue
		}
		share := left
		if c != last {
			share = engine.Time(int64(j) * int64(x) / int64(d))
		}
		left -= share
		k.charge(t, Cost(c), share)
	}
}

// jitter spreads a cost (a system call, a context switch, a cache refill,
// an IPI, an idle state's wake-up) by up to ±CostJitterPct percent (in steps of
// 0.1%), from the run's "costs" random stream. Nothing is drawn while the
// cost model is off, so runs without it do not depend on the seed here.
func (k *Kernel) jitter(d engine.Time) engine.Time {
	pct := int64(k.S.CostJitterPct)
	if pct == 0 || d <= 0 || !k.costsOn {
		return d
	}
	if k.costRand == nil {
		k.costRand = k.Eng.Rand("costs")
	}
	u := k.costRand.Int64N(20*pct+1) - 10*pct // per mille
	return d + engine.Time(int64(d)*u/1000)
}

// ipiLatency is the delay of an IPI from one CPU to another: the cost
// model's latency by distance (costmodel.Table.IPILatency), or
// Settings.WakeupIPILatency without the cost model.
func (k *Kernel) ipiLatency(from, to cpumask.CPU) engine.Time {
	if from == to {
		return 0
	}
	if !k.costsOn {
		return engine.Time(k.S.WakeupIPILatency)
	}
	return k.jitter(k.Costs.IPILatency(from, to))
}

// chargeWakeupPath charges the waker (the task running on rq, the CPU
// doing try_to_wake_up) for what select_task_rq just did, from the
// wakeup path's counters: sis_scan_cpu_ns per CPU select_idle_* examined
// (with Settings.SISScanLines sis_scan_loop_ns and the CPU's runqueue line
// by distance), a
// read of the target LLC's sd_llc_shared line (written by that LLC's CPUs
// on idle entry and exit) per test_idle_cores — or, with
// Settings.LLCSharedLines, what moving the sd_llc_shared line to this CPU
// took for those loads and set_idle_cores's stores —, and RemoteEnqueue with
// its lines (remoteEnqueueLines) when the wakee, which last ran on last,
// goes to another CPU. Nothing is charged when rq is idle (a timer
// wakeup from an idle CPU) or without the cost model.
func (k *Kernel) chargeWakeupPath(rq *Rq, before WakeupCounters, last, target cpumask.CPU) {
	if !k.costsOn {
		return
	}
	w := &rq.Wakeup
	var parts [NrCosts]engine.Time
	if k.S.SISScanLines {
		parts[CostWakeupScan] = engine.Time(w.SISScanned-before.SISScanned)*k.Costs.SISScanLoop + w.SISScanLineNs - before.SISScanLineNs
	} else {
		parts[CostWakeupScan] = engine.Time(w.SISScanned-before.SISScanned) * k.Costs.SISScanCPU
	}
	if k.S.LLCSharedLines {
		parts[CostLLCShared] = w.IdleCoresLineNs - before.IdleCoresLineNs
	} else if reads := w.TestIdleCoresReads - before.TestIdleCoresReads; reads > 0 {
		parts[CostLLCShared] = engine.Time(reads) * k.Costs.LLCLineRead(rq.CPU, target)
	}
	if target != rq.CPU {
		parts[CostRemoteEnqueue] = k.Costs.RemoteEnqueue + k.remoteEnqueueLines(rq.CPU, last, target)
	}
	parts[CostFindDst] = k.findDstCost(rq, before)
	k.chargeParts(&parts)
}

// RemoteEnqueueTaskLines and RemoteEnqueueRqLines are the cache lines a
// wakeup onto another CPU moves to the waker (Settings.RemoteEnqueueLines;
// counted from what try_to_wake_up touches in v6.x, not measured): the
// wakee's p->pi_lock and its __state/on_rq line, last written on the CPU
// it last ran on, and the target runqueue's lock or wake_list head and
// its nr_running/clock line, last written by the target CPU.
const (
	RemoteEnqueueTaskLines = 2
	RemoteEnqueueRqLines   = 2
)

// remoteEnqueueLines is what waking a task that last ran on last onto
// target costs the waker on cpu in cache lines: the task's lines from
// last and the runqueue's from target, by distance
// (costmodel.Table.LineTransfer: nothing from the same core); nothing
// without Settings.RemoteEnqueueLines.
func (k *Kernel) remoteEnqueueLines(cpu, last, target cpumask.CPU) engine.Time {
	if !k.S.RemoteEnqueueLines {
		return 0
	}
	return RemoteEnqueueTaskLines*k.Costs.LineTransfer(last, cpu) + RemoteEnqueueRqLines*k.Costs.LineTransfer(target, cpu)
}

// chargeFindDst charges the task running on rq for the slow path's reads
// since before (findDstCost): fork and exec placement, which
// chargeWakeupPath does not see.
func (k *Kernel) chargeFindDst(rq *Rq, before WakeupCounters) {
	if !k.costsOn {
		return
	}
	k.Charge(CostFindDst, k.findDstCost(rq, before))
}

// findDstCost is the time the slow path of select_task_rq_fair
// (sched_balance_find_dst_cpu) took on rq since before: lb_group_ns per
// group sched_balance_find_dst_group compared and lb_cpu_ns per CPU whose
// runqueue it or sched_balance_find_dst_group_cpu read, the load
// balancer's per-group and per-CPU costs (update_sg_wakeup_stats reads
// the same fields of each rq as update_sg_lb_stats). 0 without
// Settings.ForkBalanceCost.
func (k *Kernel) findDstCost(rq *Rq, before WakeupCounters) engine.Time {
	if !k.S.ForkBalanceCost {
		return 0
	}
	w := &rq.Wakeup
	return engine.Time(w.FindDstGroups-before.FindDstGroups)*k.Costs.Balance.SgStatsPerGroup +
		engine.Time(w.FindDstCPUs-before.FindDstCPUs)*k.Costs.Balance.SgStatsPerCPU
}

// idleExitLatency is the time an idle CPU takes to leave its idle state
// when woken: the hardware's wake time from the state it is in
// (Settings.IdleWakeActual; the advertised exit latency when off).
func (k *Kernel) idleExitLatency(rq *Rq) engine.Time {
	if !k.costsOn || !rq.currIsIdle() || rq.idleState < 0 {
		return 0
	}
	states := k.Topo.Spec.IdleStatesOf(rq.CPU)
	idx := 0
	if len(states) > 0 {
		idx = k.effectiveIdleState(rq, states)
	}
	// The wake time is spread like every other cost (CostJitterPct): a
	// state's exit varies with voltage ramp and cache state on hardware.
	d := k.jitter(k.Costs.IdleWake(states, idx, k.S.IdleWakeActual))
	rq.Costs.IdleExitNs += uint64(d)
	return d
}

// effectiveIdleState is the state a CPU is really in: the governor's
// choice, except that a cluster state needs every CPU of the cluster idle
// (the last one down takes the cluster down), and idle for at least the
// state's GateDelayNs counted from the last of them to go idle (a
// power-down the hardware starts on its own after a quiet spell: Kunpeng
// 920's cluster-gated WFI); otherwise the CPU sits in the deepest per-CPU
// state not deeper than its choice. A model of the hardware, not a kernel
// function: cpuidle records only the governor's choice (rq->idle_state).
func (k *Kernel) effectiveIdleState(rq *Rq, states []topology.IdleState) int {
	i := min(rq.idleState, len(states)-1)
	if !states[i].Cluster {
		return i
	}
	allIdle := true
	var quietSince engine.Time
	m := k.Topo.ClusterMask[rq.CPU]
	for c := m.First(); c != cpumask.None; c = m.Next(c) {
		if !k.Rqs[c].currIsIdle() {
			allIdle = false
			break
		}
		quietSince = max(quietSince, k.Rqs[c].idleSince)
	}
	if allIdle && k.Eng.Now()-quietSince >= engine.Time(states[i].GateDelayNs) {
		return i
	}
	for i > 0 && states[i].Cluster {
		i--
	}
	return i
}

// idleGovernorSelect is the idle governor (costmodel.SelectIdleState)
// with the CPU's average idle period as its prediction, a simplification
// of the menu and teo governors, under the CPU's disabled states and PM
// QoS request.
func (k *Kernel) idleGovernorSelect(rq *Rq) int {
	return costmodel.SelectIdleState(k.Topo.Spec.IdleStatesOf(rq.CPU), engine.Time(rq.idleAvg), k.idleLimits[rq.CPU])
}

// newIdleLimits builds each CPU's governor constraints from the machine
// (idle_disable, latency_limit_us) and the settings (model_idle_disable,
// model_idle_latency_limit_us): a state is disabled when either names it
// (cpuidle's per-CPU stateN/disable), and the smaller latency request
// holds (cpu_latency_qos keeps the minimum of all requests).
func newIdleLimits(spec *topology.MachineSpec, s Settings) ([]costmodel.IdleLimits, error) {
	names := append([]string(nil), spec.IdleDisable...)
	if s.IdleDisable != "" {
		for _, n := range strings.Split(s.IdleDisable, ",") {
			n = strings.TrimSpace(n)
			if !spec.HasIdleState(n) {
				return nil, fmt.Errorf("idle-disable %s: machine %s has no idle state %q (its states: %s)", s.IdleDisable, spec.Name, n, strings.Join(spec.IdleStateNames(), ", "))
			}
			names = append(names, n)
		}
	}
	var lim costmodel.IdleLimits
	if spec.LatencyLimitNs != nil {
		lim.Limited, lim.LatencyLimit = true, engine.Time(*spec.LatencyLimitNs)
	}
	if s.IdleLatencyLimitUs >= 0 {
		l := engine.Time(s.IdleLatencyLimitUs) * engine.Microsecond
		if !lim.Limited || l < lim.LatencyLimit {
			lim.Limited, lim.LatencyLimit = true, l
		}
	}
	out := make([]costmodel.IdleLimits, len(spec.CPUs))
	for i := range spec.CPUs {
		out[i] = lim
		if len(names) == 0 {
			continue
		}
		states := spec.IdleStatesOf(cpumask.CPU(i))
		out[i].Disabled = make([]bool, len(states))
		for j, st := range states {
			out[i].Disabled[j] = slices.Contains(names, st.Name)
		}
	}
	return out, nil
}

// costsEnterIdle records the idle entry for the governor.
func (k *Kernel) costsEnterIdle(rq *Rq) {
	rq.idleSince = k.Eng.Now()
	rq.idleState = k.idleGovernorSelect(rq)
}

// costsExitIdle folds the idle period into the governor's average. As
// cpuidle's menu_update does, the measured residency leaves out the exit
// latency of the state it was spent in (half the period when that latency
// is not small against it), so that a deep state's own wakeup delay does
// not make the next idle period look long.
func (k *Kernel) costsExitIdle(rq *Rq) {
	d := uint64(k.Eng.Now() - rq.idleSince)
	if k.costsOn && rq.idleState >= 0 {
		exit := uint64(k.Costs.IdleExitLatency(k.Topo.Spec.IdleStatesOf(rq.CPU), rq.idleState))
		if d > 2*exit {
			d -= exit
		} else {
			d /= 2
		}
	}
	updateAvg(&rq.idleAvg, d)
	rq.idleState = -1
}

// mmSwitch reports whether switching from prev to the user task next
// changes the CPU's address space, which costs ContextSwitchMM. It
// mirrors core.c:context_switch (v6.x): a switch to a task with an mm
// calls switch_mm_irqs_off(prev->active_mm, next->mm), which does no
// work when the two are the same (arm64's switch_mm tests prev != next;
// x86's checks only the TLB generation). The idle task has no mm and
// keeps the last one as its active_mm (enter_lazy_tlb), so that a task
// switched in after idle pays only if another address space ran last
// (activeMM). With lazy false (model_lazy_mm=0) every switch from idle
// pays, as before 2026-12-06. Simplification: kernel threads here have
// their own MM and pay as processes do, where the kernel's borrow
// active_mm as the idle task does.
func mmSwitch(lazy bool, activeMM int64, prev, next *Task) bool {
	if prev.IsIdleTask() {
		return !lazy || activeMM != next.MM
	}
	return prev.MM != next.MM
}

// switchCosts charges a context switch on rq from prev to next: the direct
// cost and, after a migration, the cache refill, and updates the sharing of
// the core and of memory bandwidth.
func (k *Kernel) switchCosts(rq *Rq, prev, next *Task) {
	prev.lastStopped = k.Eng.Now()
	// schedule() stored to the runqueue's line: the copies wakeup scans
	// left are invalidated now (Settings.SISScanInvalidate).
	inval := rq.sisInvalNs
	rq.sisInvalNs = 0
	if next.IsIdleTask() {
		k.coreRunStateChanged(rq.CPU, false)
		k.setRunBW(rq, 0)
		k.smtChanged(rq)
		return
	}
	if prev.IsIdleTask() {
		k.coreRunStateChanged(rq.CPU, true)
	}
	rq.Costs.ContextSwitches++
	extra := k.Costs.ContextSwitch
	if mmSwitch(k.S.LazyMM, rq.activeMM, prev, next) {
		extra += k.Costs.ContextSwitchMM
	}
	rq.activeMM = next.MM
	if inval > 0 {
		extra += inval
		rq.Wakeup.SISInvalNs += inval
	}
	var refill engine.Time
	if next.lastRanCPU != cpumask.None {
		if next.lastRanCPU != rq.CPU {
			rq.Costs.Migrations++
		}
		if r := k.refillCost(next, next.lastRanCPU, rq.CPU, k.Eng.Now()-next.lastStopped); r > 0 {
			refill = r
			extra += r
			rq.Costs.RefillNs += uint64(r)
		}
	}
	if next.homeNode < 0 {
		next.homeNode = k.Topo.CPUNode[rq.CPU]
	}
	next.lastRanCPU = rq.CPU
	if extra > 0 {
		j := k.jitter(extra)
		next.workLeft += j
		if k.Hooks.Charge != nil {
			var parts [NrCosts]engine.Time
			parts[CostContextSwitch], parts[CostRefill], parts[CostWakeupScan] = extra-refill-inval, refill, inval
			k.shareOut(next, &parts, extra, j)
		}
	}
	k.setRunBW(rq, next.opBW)
	if prev.IsIdleTask() {
		k.smtChanged(rq)
	}
}

// refillCost is the time a task spends refetching its working set on CPU
// to after last running on from and being away for away
// (costmodel.Table.CacheRefill): its declared footprint and its own kernel
// state (task_state_bytes); its memory is where it first ran.
func (k *Kernel) refillCost(p *Task, from, to cpumask.CPU, away engine.Time) engine.Time {
	return k.Costs.CacheRefill(from, to, p.Footprint+k.Costs.TaskStateBytes, away, p.homeNode)
}

// taskSpeed is the running task's progress rate on rq. rq.Curr is not
// the idle task, so an SMT sibling runs a task when rq's core counts
// another busy CPU.
func (k *Kernel) taskSpeed(rq *Rq) int64 {
	s := baseSpeed(rq) * int64(rq.FreqScale) >> SchedCapacityShift
	s = k.Costs.SMTSpeed(s, k.Costs.SMTShare > 0 && *rq.coreBusy > 1)
	if rq.runBW > 0 {
		// Memory-bound work: the share of its demand the cost model
		// grants (shareBandwidth), slower still when its memory is on
		// another node.
		s = rq.bwShare.Of(s)
		s = k.Costs.RemoteMemSpeed(s, k.Topo.CPUNode[rq.CPU], rq.Curr.homeNode)
	}
	if s < 1 {
		s = 1
	}
	return s
}

// initCores numbers the SMT cores densely and counts their busy CPUs.
func (k *Kernel) initCores() {
	k.coreOf = make([]int32, k.NrCPUs())
	ids := map[int]int32{}
	for c, spec := range k.Topo.Spec.CPUs {
		id, ok := ids[spec.Core]
		if !ok {
			id = int32(len(ids))
			ids[spec.Core] = id
		}
		k.coreOf[c] = id
	}
	k.coreBusy = make([]int32, len(ids))
	for c, rq := range k.Rqs {
		rq.coreBusy = &k.coreBusy[k.coreOf[c]]
		if !rq.currIsIdle() {
			*rq.coreBusy++
		}
	}
}

// coreRunStateChanged keeps the core's busy count when cpu goes idle or
// busy.
func (k *Kernel) coreRunStateChanged(cpu cpumask.CPU, busy bool) {
	if busy {
		k.coreBusy[k.coreOf[cpu]]++
	} else {
		k.coreBusy[k.coreOf[cpu]]--
	}
}

// siblings are cpu's SMT siblings other than itself.
func (k *Kernel) siblings(cpu cpumask.CPU) []cpumask.CPU {
	if k.smtSiblings == nil {
		k.smtSiblings = make([][]cpumask.CPU, k.NrCPUs())
		for c := range k.smtSiblings {
			for _, s := range k.Topo.SMTMask[c].CPUs() {
				if s != cpumask.CPU(c) {
					k.smtSiblings[c] = append(k.smtSiblings[c], s)
				}
			}
		}
	}
	return k.smtSiblings[cpu]
}

// smtChanged re-times the siblings of cpu after it went idle or busy.
func (k *Kernel) smtChanged(rq *Rq) {
	if k.Costs.SMTShare <= 0 {
		return
	}
	for _, c := range k.siblings(rq.CPU) {
		k.retime(k.Rqs[c])
	}
}

// setRunBW records the bandwidth demand of what rq runs now and, when it
// changed, shares the memory bandwidth again.
func (k *Kernel) setRunBW(rq *Rq, bw int64) {
	if rq.runBW == bw {
		return
	}
	rq.runBW = bw
	if k.Costs.Limited() {
		k.shareBandwidth(rq)
	}
}

// shareBandwidth divides memory bandwidth among the running tasks that
// stream memory (costmodel.MemSharer: max-min fair in the fraction of
// their demand, under the core, LLC and memory-node limits) and re-times
// the tasks other than rq whose share moved; rq's caller starts its
// segment.
func (k *Kernel) shareBandwidth(rq *Rq) {
	if k.bwSharer == nil {
		k.bwSharer = k.Costs.NewMemSharer()
	}
	k.bwTasks, k.bwRqs = k.bwTasks[:0], k.bwRqs[:0]
	for _, o := range k.Rqs {
		if o.runBW > 0 {
			k.bwTasks = append(k.bwTasks, costmodel.MemTask{CPU: o.CPU, Demand: o.runBW, MemNode: o.Curr.homeNode})
			k.bwRqs = append(k.bwRqs, o)
		}
	}
	k.bwShares = slices.Grow(k.bwShares[:0], len(k.bwTasks))[:len(k.bwTasks)]
	k.bwSharer.Shares(k.bwTasks, k.bwShares)
	for i, o := range k.bwRqs {
		if o.bwShare == k.bwShares[i] {
			continue
		}
		o.bwShare = k.bwShares[i]
		if o != rq {
			k.retime(o)
		}
	}
}
