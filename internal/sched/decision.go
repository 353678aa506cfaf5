package sched

import (
	"github.com/schedlab/schedlab/internal/cpumask"
	"github.com/schedlab/schedlab/internal/engine"
)

// What the kernel decided and what a task's time went to, for observers
// (internal/explain: `schedlab explain`). Nothing here changes a decision,
// a cost or a random draw: the wakeup path records why it returned with
// one store per return point (Kernel.why, Kernel.affine), and the kernel
// calls Hooks.Decision, Hooks.Charge and Hooks.Delay when they are set.

// DecisionKind is what was placed: a waking task, a new one, an exec'ing
// one, or a task the balancer moved.
type DecisionKind uint8

const (
	// DecisionWakeup: try_to_wake_up (select_task_rq with WF_TTWU, or a
	// wakeup that needs no choice: the task is current or still queued).
	DecisionWakeup DecisionKind = iota
	// DecisionFork: wake_up_new_task (WF_FORK).
	DecisionFork
	// DecisionExec: sched_exec (WF_EXEC).
	DecisionExec
	// DecisionBalance: a task moved by the load balancer (detach_task,
	// or the stopper's push).
	DecisionBalance
	NrDecisionKinds
)

var decisionKindNames = []string{"wakeup", "fork", "exec", "balance"}

func (k DecisionKind) String() string { return enumName(decisionKindNames, int(k)) }

// Reason is why the CPU was chosen: the return point of
// select_idle_sibling (or of its callers) that produced it, or for a
// balance migration the kind of balancing.
type Reason uint8

const (
	ReasonNone Reason = iota
	// select_idle_sibling's return points.
	ReasonTargetIdle    // target is idle
	ReasonPrevIdle      // prev is cache-affine and idle
	ReasonRecentUsed    // recent_used_cpu is cache-affine and idle
	ReasonIdleCore      // select_idle_core: a whole idle core
	ReasonIdleCPU       // select_idle_cpu's scan: an idle CPU
	ReasonIdleSMT       // select_idle_smt: an idle SMT sibling of prev
	ReasonShortTask     // the short-task hunk of select_idle_cpu: target without a scan
	ReasonNode          // select_idle_node (SIS_NODE): an idle CPU of another LLC
	ReasonCluster       // a scan of target's cluster first: select_idle_cpu's (sis-cluster) or select_idle_cluster (cluster-level)
	ReasonCapacity      // select_idle_capacity (asymmetric capacity)
	ReasonPrevCluster   // prev, cache-affine but outside target's cluster, kept as the fallback
	ReasonRecentCluster // recent_used_cpu outside target's cluster, kept as the fallback
	ReasonFallback      // target: nothing idle found
	// select_task_rq_fair's other returns.
	ReasonFindDst    // the slow path, sched_balance_find_dst_cpu
	ReasonNoDomain   // fork or exec with no domain of its SD_BALANCE_* flag: prev
	ReasonCurrentCPU // WF_CURRENT_CPU
	// The core's, where select_task_rq_fair is not asked.
	ReasonRunning    // the wakee is current on the waking CPU
	ReasonQueued     // ttwu_runnable: still queued (delayed dequeue)
	ReasonPinned     // one allowed CPU
	ReasonFallbackRq // select_fallback_rq: the choice was not allowed
	// The balancer's kinds of pass.
	ReasonPeriodic // sched_balance_softirq on its own CPU
	ReasonNewidle  // sched_balance_newidle
	ReasonNohz     // a kicked idle load balancer's pass for an idle CPU
	ReasonActive   // the stopper's push (active_load_balance_cpu_stop)
	NrReasons
)

var reasonNames = []string{
	"none",
	"target idle", "prev (cache-affine idle prev)", "recent_used_cpu", "idle core (select_idle_core)",
	"idle CPU (select_idle_cpu scan)", "SMT sibling (select_idle_smt)", "short task (select_idle_cpu scan skipped)",
	"SIS_NODE (select_idle_node)", "cluster scan (sis-cluster)", "asym capacity (select_idle_capacity)",
	"prev (cache-affine, other cluster)", "recent_used_cpu (other cluster)", "fallback target (nothing idle)",
	"find_dst_cpu", "prev (no SD_BALANCE_* domain)", "this CPU (WF_CURRENT_CPU)",
	"wakee running (no choice)", "still queued (ttwu_runnable)", "one CPU allowed", "select_fallback_rq",
	"periodic", "newidle", "nohz idle", "active",
}

func (r Reason) String() string { return enumName(reasonNames, int(r)) }

// Affine is wake_affine's outcome for a wakeup.
type Affine uint8

const (
	AffineNotTried   Affine = iota // no SD_WAKE_AFFINE domain spans the waker and prev, or not a wakeup
	AffineWakeWide                 // not tried: wake_wide
	AffineSameCPU                  // not needed: the waking CPU is prev
	AffineIdleThis                 // this_cpu by wake_affine_idle
	AffineIdlePrev                 // prev by wake_affine_idle
	AffineWeightThis               // this_cpu by wake_affine_weight
	AffinePrev                     // prev: no opinion
	AffineShortThis                // this_cpu by the short-task hunk of wake_affine_idle
	NrAffines
)

var affineNames = []string{
	"not tried", "not tried (wake_wide)", "waker is prev", "this_cpu by wake_affine_idle",
	"prev by wake_affine_idle", "this_cpu by wake_affine_weight", "prev (no opinion)", "this_cpu by short task",
}

func (a Affine) String() string { return enumName(affineNames, int(a)) }

// MovedAffine reports whether wake_affine chose the waking CPU.
func (a Affine) MovedAffine() bool {
	return a == AffineIdleThis || a == AffineWeightThis || a == AffineShortThis
}

// TalliedAffine reports whether wake_affine counted ttwu_move_affine on
// the domain: when it chose the waking CPU, and with
// Settings.WakeAffineTallyPrev (v6.0, v5.12) also when wake_affine_idle
// chose prev_cpu.
func (a Affine) TalliedAffine(s *Settings) bool {
	return a.MovedAffine() || s.WakeAffineTallyPrev && a == AffineIdlePrev
}

// Decision is one placement: what Hooks.Decision receives. The kernel
// reuses one Decision; an observer copies what it keeps.
type Decision struct {
	Kind   DecisionKind
	Reason Reason
	Affine Affine
	// Slow is set when a wakeup took select_task_rq_fair's slow path
	// (an SD_BALANCE_WAKE domain).
	Slow bool
	Task *Task
	// CPU is the CPU that decided: the waking CPU (this_cpu), the
	// forking or exec'ing one, or the one doing the balancing (a kicked
	// idle load balancer balances for another CPU; the stopper runs on
	// the busiest).
	CPU cpumask.CPU
	// Prev is the task's CPU before: prev_cpu (p->wake_cpu) of a
	// wakeup, the task's CPU at fork or exec, the source of a balance
	// migration.
	Prev cpumask.CPU
	// Chosen is where the task goes.
	Chosen cpumask.CPU
	// Domain is the domain balanced (a balance migration) or the one
	// wake_affine ran at (nil if it did not run).
	Domain *SchedDomain
}

// Cost is a category of a task's run time: the work its program asked for
// and each kind of kernel work the cost model charges it (Hooks.Charge).
type Cost uint8

const (
	// CostProgram is the work of the program's OpRun operations, less
	// what the workload accounted as CostSyscall, CostLockWait or
	// CostKobjLines (Kernel.Account).
	CostProgram       Cost = iota
	CostSyscall            // system calls the workload accounted
	CostLockWait           // spinning for a kernel mutex (pipe->mutex)
	CostKobjLines          // pipe, socket and f_count lines moved from another CPU
	CostContextSwitch      // the switch itself (and the mm switch)
	CostRefill             // cache refill after a move or a long absence
	CostWakeupScan         // CPUs select_idle_* examined
	CostLLCShared          // sd_llc_shared (has_idle_cores) reads and stores
	CostRemoteEnqueue      // enqueueing a wakee on another CPU
	CostFindDst            // the slow path's (fork, exec) groups and CPUs
	CostSharedLines        // the balancer's nohz and root-domain lines
	CostBalance            // balancing work on its CPU, counted as its run time
	CostIRQ                // interrupt and stopper work on its CPU
	NrCosts
)

var costNames = []string{
	"program work", "system calls", "lock waits (pipe mutex)", "kobj lines (pipe, socket, f_count)",
	"context switch", "cache refill after a move", "wakeup scan (select_idle_*)", "sd_llc_shared reads",
	"remote enqueue", "fork/exec placement (find_dst)", "balancer's shared lines", "balancing on its CPU", "interrupt work",
}

func (c Cost) String() string { return enumName(costNames, int(c)) }

// Delay is why a CPU could not run a task that was waiting for it
// (Hooks.Delay).
type Delay uint8

const (
	DelayIPI      Delay = iota // an IPI in flight to it (a queued wakeup, a reschedule)
	DelayIdleExit              // leaving its idle state
	DelayBalance               // balancing work on it, or its rq lock held by a pass
	NrDelays
)

var delayNames = []string{"IPI", "idle exit", "balancing"}

func (d Delay) String() string { return enumName(delayNames, int(d)) }

// Account says that d of the operation the running program is about to
// return is of category c (a system call, a lock's spin, a line's
// transfer), for observers only: it changes nothing.
func (k *Kernel) Account(c Cost, d engine.Time) {
	h := k.Hooks.Charge
	if h == nil || d == 0 {
		return
	}
	t := k.progTask
	if t == nil {
		t = k.Rqs[k.thisCPU].Curr
	}
	h(t, c, d)
	h(t, CostProgram, -d)
}

// decide reports a placement made by the core to Hooks.Decision, with
// the reason and wake_affine outcome the wakeup path recorded.
func (k *Kernel) decide(kind DecisionKind, p *Task, prev, chosen cpumask.CPU) {
	h := k.Hooks.Decision
	if h == nil {
		return
	}
	d := &k.dec
	*d = Decision{Kind: kind, Reason: k.why, Affine: k.affine, Slow: k.why == ReasonFindDst && kind == DecisionWakeup,
		Task: p, CPU: k.thisCPU, Prev: prev, Chosen: chosen, Domain: k.affineSD}
	h(d)
}

// decideAs reports a wakeup that needed no choice (the wakee is current,
// or still queued): it stays on its CPU.
func (k *Kernel) decideAs(why Reason, p *Task) {
	if k.Hooks.Decision == nil {
		return
	}
	k.why, k.affine, k.affineSD = why, AffineNotTried, nil
	k.decide(DecisionWakeup, p, p.cpu, p.cpu)
}

// decideBalance reports a balance migration of p from src to env's
// destination.
func (k *Kernel) decideBalance(env *lbEnv, p *Task) {
	h := k.Hooks.Decision
	if h == nil {
		return
	}
	why := ReasonPeriodic
	switch {
	case env.flags&lbfActiveLB != 0:
		why = ReasonActive
	case env.idle == CPUNewlyIdle:
		why = ReasonNewidle
	case k.bal.nohzPass:
		why = ReasonNohz
	}
	d := &k.dec
	*d = Decision{Kind: DecisionBalance, Reason: why, Task: p, CPU: k.thisCPU, Prev: env.srcCPU, Chosen: env.dstCPU, Domain: env.sd}
	h(d)
}

// charge reports d of category c charged to t (Hooks.Charge).
func (k *Kernel) charge(t *Task, c Cost, d engine.Time) {
	if h := k.Hooks.Charge; h != nil && d != 0 {
		h(t, c, d)
	}
}

// delay reports that cpu cannot run a waiting task over [from, to)
// (Hooks.Delay).
func (k *Kernel) delay(cpu cpumask.CPU, why Delay, from, to engine.Time) {
	if h := k.Hooks.Delay; h != nil && to > from {
		h(cpu, why, from, to)
	}
}
