package sched

import (
	"fmt"

	"github.com/schedlab/schedlab/internal/costmodel"
	"github.com/schedlab/schedlab/internal/cpumask"
	"github.com/schedlab/schedlab/internal/engine"
)

// PID is a simulated task id; 0 is each CPU's idle task (swapper/N).
type PID int

func (p PID) String() string { return fmt.Sprintf("%d", int(p)) }

// TaskState mirrors the subset of task_struct::__state the fair class sees
// (every baseline).
type TaskState int

const (
	TaskRunning         TaskState = iota // TASK_RUNNING (queued or on a CPU)
	TaskInterruptible                    // TASK_INTERRUPTIBLE (sleeping, "S")
	TaskUninterruptible                  // TASK_UNINTERRUPTIBLE ("D")
	TaskNew                              // TASK_NEW: forked, not yet woken
	TaskDead                             // TASK_DEAD / EXIT_DEAD
	// TaskWaking is TASK_WAKING: try_to_wake_up has taken the task out of
	// its sleep and is choosing a CPU or has queued the wakeup on the
	// target's wake list; a second wakeup meanwhile finds it not sleeping.
	TaskWaking
)

// String gives the state letter ftrace prints.
func (s TaskState) String() string {
	switch s {
	case TaskRunning:
		return "R"
	case TaskInterruptible:
		return "S"
	case TaskUninterruptible:
		return "D"
	case TaskNew:
		return "N"
	case TaskWaking:
		return "W"
	default:
		return "X"
	}
}

// Policy mirrors the fair-class scheduling policies (every baseline).
type Policy int

const (
	SchedNormal Policy = 0
	SchedBatch  Policy = 3
	SchedIdle   Policy = 5
)

// task_on_rq values (sched.h).
const (
	taskOnRqQueued    = 1
	taskOnRqMigrating = 2
)

// Enqueue/dequeue flags (sched.h, v6.19 values; only their identity matters).
const (
	dequeueSleep     = 0x01
	dequeueSave      = 0x02
	dequeueMove      = 0x04
	dequeueNoclock   = 0x08
	dequeueSpecial   = 0x10
	dequeueMigrating = 0x100
	dequeueDelayed   = 0x200
	dequeueThrottle  = 0x800

	enqueueWakeup     = 0x01
	enqueueRestore    = 0x02
	enqueueMove       = 0x04
	enqueueNoclock    = 0x08
	enqueueMigrating  = 0x100
	enqueueDelayed    = 0x200
	enqueueHead       = 0x10000
	enqueueReplenish  = 0x20000
	enqueueMigrated   = 0x40000
	enqueueInitial    = 0x80000
	enqueueRqSelected = 0x100000
)

// Wake flags (sched.h, v6.19 values).
const (
	WFExec       = 0x02
	WFFork       = 0x04
	WFTTWU       = 0x08
	WFSync       = 0x10
	WFMigrated   = 0x20
	WFCurrentCPU = 0x40
	WFRqSelected = 0x80
)

// update_load_avg flags (fair.c).
const (
	updateTG    = 0x1
	skipAgeLoad = 0x2
	doAttach    = 0x4
	doDetach    = 0x8
)

// SchedEntity mirrors struct sched_entity (v6.19). Group entities have MyQ set.
type SchedEntity struct {
	Load               LoadWeight
	OnRq               bool
	ExecStart          uint64
	SumExecRuntime     uint64
	PrevSumExecRuntime uint64
	Vruntime           uint64
	Deadline           uint64
	Slice              uint64
	// Vlag is the virtual lag saved at dequeue (EEVDF); Vprot the end of
	// the protected slice while the entity is current. In v6.19.0 they share
	// storage (a union, until v7.0's 6b6d09f274bd separated them; 6.19.10
	// was not checked); here they are two fields, as in v7.0.
	// Simplification: where v6.19.0 writes the lag of the running entity
	// (reweight_entity of curr, a delayed curr's requeue with DELAY_ZERO),
	// its slice protection is in effect cancelled; here it is kept.
	Vlag         int64
	Vprot        uint64
	SchedDelayed bool
	RelDeadline  bool
	CustomSlice  bool
	NrMigrations uint64

	Depth          int
	Parent         *SchedEntity
	CfsRq          *CfsRq // the queue this entity is (or would be) queued on
	MyQ            *CfsRq // the queue this group entity owns; nil for tasks
	RunnableWeight uint64

	Avg SchedAvg

	// DurAvg mirrors se.dur_avg of the short-task patches (on v6.0): a 1/8
	// EWMA of the run time between being switched in and sleeping
	// voluntarily.
	DurAvg uint64

	// Statistics (struct sched_statistics).
	Stats SchedStatistics

	// --- wakeup path ---
	// PrevSleepSumRuntime is sum_exec_runtime when the task last slept
	// voluntarily (prev_sleep_sum_runtime of the short-task series, v6.4
	// dur_avg): dur_avg samples the run time between two sleeps, across
	// any preemptions in between.
	PrevSleepSumRuntime uint64
	// durAvgRFC2 and prevSumRuntimeVol are the RFC v2 posting's
	// se.dur_avg and se.prev_sum_runtime_vol (ShortDurAvgRFC2).
	durAvgRFC2, prevSumRuntimeVol uint64

	task *Task
	// run_node: the entity's links in its cfs_rq's tasks_timeline, and
	// the augmented values of its subtree there (min_vruntime,
	// min_slice, max_slice; tree.go).
	rbLeft, rbRight, rbParent       *SchedEntity
	rbRed, onTimeline               bool
	minVruntime, minSlice, maxSlice uint64
	// rq->cfs_tasks membership (group_node).
	groupPrev, groupNext *SchedEntity
	onCfsTasks           bool
}

// SchedStatistics mirrors the parts of struct sched_statistics schedlab keeps
// (v6.19; the same counters in v6.0 and v5.12).
type SchedStatistics struct {
	WaitStart          uint64
	WaitMax            uint64
	WaitCount          uint64
	WaitSum            uint64
	SleepStart         uint64
	BlockStart         uint64
	ExecMax            uint64
	SliceMax           uint64
	NrWakeups          uint64
	NrWakeupsSync      uint64
	NrWakeupsMigrate   uint64
	NrWakeupsLocal     uint64
	NrWakeupsRemote    uint64
	NrWakeupsAffine    uint64
	NrWakeupsAffineAtt uint64
	NrWakeupsPassive   uint64
	NrWakeupsIdle      uint64
	NrMigrationsCold   uint64
	NrForcedMigrations uint64

	// --- load balancing ---
	// Why can_migrate_task refused the task
	// (nr_failed_migrations_affine/_running/_hot).
	NrFailedMigrationsAffine  uint64
	NrFailedMigrationsRunning uint64
	NrFailedMigrationsHot     uint64
}

// IsTask reports whether the entity is a task's.
func (se *SchedEntity) IsTask() bool { return se.MyQ == nil }

// Task returns the task of a task entity (nil for group entities).
func (se *SchedEntity) Task() *Task { return se.task }

// Removed mirrors cfs_rq->removed (every baseline): load removed
// asynchronously (a task woken onto another CPU, or exited) that the queue
// subtracts at its next update.
type Removed struct {
	Nr          int
	LoadAvg     uint64
	UtilAvg     uint64
	RunnableAvg uint64
}

// CfsRq mirrors struct cfs_rq (v6.19 names; CFS-era fields noted).
type CfsRq struct {
	Load      LoadWeight
	NrQueued  int
	HNrQueued int
	HNrIdle   int

	// ZeroVruntime is v6.19's zero_vruntime (the reference for
	// SumWVruntime); in CFS mode the same field holds min_vruntime.
	ZeroVruntime uint64
	SumWVruntime int64
	SumWeight    uint64

	// tasks_timeline (see tree.go): the rb-tree's root, its cached
	// leftmost entity and how many entities it holds.
	rbRoot, rbLeftmost *SchedEntity
	nrTimeline         int

	Curr *SchedEntity

	// Avg starts at byte 96 of the struct, so that its load, runnable,
	// util and util_est averages and HNrRunnable after it share one
	// cache line: all that update_sg_lb_stats reads of a CPU's cfs_rq
	// (TestCfsRqBalanceLine).
	Avg         SchedAvg
	HNrRunnable int

	Next, Last, Skip *SchedEntity

	Removed             Removed
	TgLoadAvgContrib    uint64
	LastUpdateTgLoadAvg uint64
	Propagate           bool
	// IdleNrQueued is v6.0's idle_nr_running: the entities queued here
	// that are idle (SCHED_IDLE tasks; idle groups are not modelled),
	// for sched_idle_cfs_rq. (An int32 in Propagate's padding: the
	// struct stays five cache lines, TestSlotLines.)
	IdleNrQueued           int32
	PropRunnableSum        int64
	HLoad                  uint64
	LastHLoadUpdate        uint64
	HLoadNext              *SchedEntity
	OnList                 bool
	ThrottledClockPeltTime uint64

	rq *Rq
	tg *TaskGroup
}

// Rq returns the runqueue (CPU) the cfs_rq belongs to.
func (c *CfsRq) Rq() *Rq { return c.rq }

// TG returns the task group owning the cfs_rq.
func (c *CfsRq) TG() *TaskGroup { return c.tg }

// Entities returns the queued entities in pick order (tree order), with curr
// first if it is queued.
func (c *CfsRq) Entities() []*SchedEntity {
	out := make([]*SchedEntity, 0, c.nrTimeline+1)
	if c.Curr != nil && c.Curr.OnRq {
		out = append(out, c.Curr)
	}
	for se := c.rbLeftmost; se != nil; se = rbNext(se) {
		out = append(out, se)
	}
	return out
}

// TaskGroup mirrors struct task_group (CONFIG_FAIR_GROUP_SCHED; v6.19, the
// fields v6.0 and v5.12 share): a cgroup v2 directory with cpu.weight.
type TaskGroup struct {
	Name     string // path, "/" for the root
	Parent   *TaskGroup
	Children []*TaskGroup
	Shares   uint64 // scaled, like tg->shares
	Weight   int    // cpu.weight (1..10000)
	LoadAvg  int64  // tg->load_avg
	SE       []*SchedEntity
	CfsRq    []*CfsRq
	depth    int
}

// IsRoot reports whether tg is the root task group.
func (tg *TaskGroup) IsRoot() bool { return tg.Parent == nil }

// RqSchedstat mirrors the per-rq schedstat counters (/proc/schedstat cpu
// lines; the same in versions 15 to 17).
type RqSchedstat struct {
	YldCount    uint64
	SchedCount  uint64
	SchedGoidle uint64
	TTWUCount   uint64
	TTWULocal   uint64
	RqCPUTime   uint64 // sched_info.run_time: total time tasks ran, ns
	RunDelay    uint64 // sched_info.run_delay: total time tasks waited, ns
	Pcount      uint64 // timeslices (sched_info.pcount)
}

// Rq mirrors struct rq for one CPU (v6.19; the fields the modelled paths
// of every baseline use).
type Rq struct {
	// --- the queue ---
	// The first cache line: what every event on the CPU and every CPU a
	// balance pass visits read (update_sg_lb_stats: nr_running, the
	// idle test, the cfs_rq, arch_scale_cpu_capacity, capacity_of).
	CPU             cpumask.CPU
	NrRunning       int
	CPUCapacityOrig uint64 // arch_scale_cpu_capacity()
	CFS             *CfsRq
	Curr            *Task
	Idle            *Task
	// TTWUPending counts wakeups queued on this CPU's wake_list.
	TTWUPending int32
	needResched bool
	// CPUCapacity is capacity_of(), which the balancer reads of every
	// CPU it visits (sched_reduced_capacity).
	CPUCapacity uint64

	// --- the running task's work segment ---
	// Every event of a running task reads these, so they share the
	// queue's first cache lines (work.go). segTimer ends the segment;
	// segStart is when it was last accounted. speed is the running
	// task's progress per ns in units of 2^-20 ns of work: capacity,
	// SMT sharing and memory-bandwidth sharing applied. runBW is the
	// bandwidth demand of the running task (0 when idle; bwShare below
	// is the fraction of it the cost model grants). coreBusy is the busy
	// count of this CPU's SMT core (Kernel.coreBusy). k is the kernel,
	// which the segment timer's expiry reaches through it (rqSegEnd).
	// FreqScale is arch_scale_freq_capacity() (1024 = max), which
	// taskSpeed reads with them.
	segTimer *engine.Timer
	segStart engine.Time
	speed    int64
	runBW    int64
	// OverheadNs is the kernel time charged through Charge on this CPU
	// (the cost model's): added at most segment ends, so it shares
	// their line.
	OverheadNs uint64
	coreBusy   *int32
	k          *Kernel
	FreqScale  uint64
	// cfs_tasks: queued fair tasks, most recently picked at the head. The
	// kernel's list_head is circular (the tail is head->prev); here the
	// list keeps both ends, so the balancer's list_last_entry is O(1).
	cfsTasksHead, cfsTasksTail *SchedEntity
	// leaf_cfs_rq_list: cfs_rqs with load, children before parents.
	leafCfsRqs []*CfsRq
	NrSwitches uint64

	// --- clocks ---
	Clock         uint64
	ClockTask     uint64
	ClockPelt     uint64
	ClockIdle     uint64
	ClockPeltIdle uint64
	LostIdleTime  uint64

	// bwShare is the fraction of runBW the cost model grants
	// (shareBandwidth): read only while runBW > 0.
	bwShare costmodel.Share

	// --- capacity and frequency (CPUCapacityOrig, CPUCapacity and FreqScale above) ---
	// CpufreqUpdates counts cpufreq_update_util calls from the fair class.
	CpufreqUpdates uint64

	// --- idle ---
	AvgIdle         uint64
	IdleStamp       uint64
	NohzTickStopped bool
	// idleState is the cpuidle state the governor chose at idle entry
	// (-1 when running); idleAvg an average of past idle durations (ns).
	idleState int
	idleAvg   uint64
	idleSince engine.Time
	// activeMM is the address space the CPU's MMU holds: the MM of the
	// last task switched in, which the idle task keeps (lazy TLB,
	// active_mm); 0 before any task ran. Settings.LazyMM.
	activeMM int64
	// idleExiting is set while the CPU leaves its idle state for an
	// interrupt; idleExitDone is when it can run the handler (idle_exit.go).
	idleExiting  bool
	idleExitDone engine.Time
	// idleTicks counts the tick wakeups of the current idle period of a
	// CPU that kept its tick (core.go: idleTickGovernor).
	idleTicks int
	// sleepers are the tasks whose sleep timer was last armed on this CPU
	// and may still be armed (the CPU's hrtimer base; core.go:
	// nextSleepTimer drops the ones that fired or were cancelled).
	sleepers []*Task

	// --- blocked load (PELT) ---
	HasBlockedLoad            bool
	LastBlockedLoadUpdateTick uint64
	// avgOthers stands for rq->avg_rt and rq->avg_dl, the PELT signals of
	// the RT and deadline classes: always zero here, but
	// __update_blocked_others decays them (Settings.BlockedOthersDecay).
	avgOthers SchedAvg
	// BlockedUpdates counts sched_balance_update_blocked_averages calls
	// and BlockedCfsRqsWalked the leaf cfs_rqs they visited.
	BlockedUpdates      uint64
	BlockedCfsRqsWalked uint64
	// BlockedUpdatesIdle counts the BlockedUpdates made while the CPU was
	// idle; BlockedUpdatesBy splits BlockedUpdates by caller.
	BlockedUpdatesIdle uint64
	BlockedUpdatesBy   [NrBlockedOrigins]uint64

	// --- wakeup path ---
	// WakeStamp (jiffies) and WakeAvgIdle (ns) mirror rq->wake_stamp and
	// rq->wake_avg_idle (v5.15–v6.9, SIS_PROP): the idle time a waker on
	// this CPU may still spend scanning, halved per jiffy of age.
	WakeStamp   uint64
	WakeAvgIdle uint64
	// Wakeup counts what the wakeup path did on this CPU, for the cost model.
	Wakeup WakeupCounters
	// sisInvalNs is what this CPU's next store to its runqueue line
	// waits to invalidate the copies that other CPUs' wakeup scans read
	// since its last switch (Settings.SISScanInvalidate): the transfer
	// time to the farthest of them, 0 for none.
	sisInvalNs engine.Time

	// --- load balancing ---
	MaxIdleBalanceCost uint64
	NextBalance        uint64
	IdleBalance        bool
	MisfitTaskLoad     uint64
	// NohzIdle mirrors rq->nohz_tick_stopped as the balancer keeps it
	// (every baseline): set by nohz_balance_enter_idle when the idle CPU
	// stops its tick, cleared by nohz_balance_exit_idle at its first busy
	// tick. (NohzTickStopped is the tick's own state.)
	NohzIdle bool
	// NohzFlags mirrors rq->nohz_flags (pending NOHZ_*_KICK bits; no
	// NOHZ_NEXT_KICK before v5.16) and NohzIdleBalance
	// rq->nohz_idle_balance (the kick being served).
	NohzFlags       int
	NohzIdleBalance int
	// ActiveBalance and PushCPU mirror rq->active_balance and
	// rq->push_cpu (every baseline).
	ActiveBalance bool
	PushCPU       cpumask.CPU
	// LBBusyUntil is the engine time until which balancing work occupies
	// this CPU or holds its rq lock: the running task's work, the start
	// of the next task and any reschedule wait for it (balance.go).
	LBBusyUntil engine.Time
	// sdLLCNohzIdle mirrors per_cpu(sd_llc)->nohz_idle (every baseline).
	sdLLCNohzIdle bool
	// ilbTimer delivers a NOHZ kick's IPI (nohz_csd); stopperTimer runs
	// the active-balance stopper.
	ilbTimer, stopperTimer *engine.Timer

	// --- cost model ---
	// Costs counts what the cost model charged on this CPU.
	Costs CostCounters

	// --- schedstat ---
	Schedstat RqSchedstat

	// --- the engine's timers for this CPU ---
	tickTimer    *engine.Timer
	reschedTimer *engine.Timer
}

// currIsIdle reports whether rq's CPU runs its idle task: the same as
// rq.Curr.IsIdleTask() (an rq's current task is a real one or its own
// idle task, as IdleCPU assumes too), without loading the current task's
// line, which is another CPU's and cold where a wakeup or a sibling's
// re-timing asks.
func (rq *Rq) currIsIdle() bool { return rq.Curr == rq.Idle }

// IdleCPU mirrors core.c:idle_cpu (v6.19): curr is idle, nothing queued, no pending
// wakeups.
func (rq *Rq) IdleCPU() bool {
	return rq.Curr == rq.Idle && rq.NrRunning == 0 && rq.TTWUPending == 0
}

// CfsTasks returns rq->cfs_tasks from head (most recently picked) to tail.
func (rq *Rq) CfsTasks() []*Task {
	var out []*Task
	for se := rq.cfsTasksHead; se != nil; se = se.groupNext {
		out = append(out, se.task)
	}
	return out
}

// cfsTasksAdd mirrors list_add(&se->group_node, &rq->cfs_tasks) (v6.19):
// se becomes the head.
func (rq *Rq) cfsTasksAdd(se *SchedEntity) {
	se.groupPrev = nil
	se.groupNext = rq.cfsTasksHead
	if rq.cfsTasksHead != nil {
		rq.cfsTasksHead.groupPrev = se
	} else {
		rq.cfsTasksTail = se
	}
	rq.cfsTasksHead = se
	se.onCfsTasks = true
}

// cfsTasksDel mirrors list_del_init(&se->group_node) (v6.19); a task not on
// the list is left alone.
func (rq *Rq) cfsTasksDel(se *SchedEntity) {
	if !se.onCfsTasks {
		return
	}
	if se.groupPrev != nil {
		se.groupPrev.groupNext = se.groupNext
	} else {
		rq.cfsTasksHead = se.groupNext
	}
	if se.groupNext != nil {
		se.groupNext.groupPrev = se.groupPrev
	} else {
		rq.cfsTasksTail = se.groupPrev
	}
	se.groupPrev, se.groupNext, se.onCfsTasks = nil, nil, false
}

// cfsTasksMove mirrors list_move(&se->group_node, &rq->cfs_tasks) (v6.19):
// se moves to the head.
func (rq *Rq) cfsTasksMove(se *SchedEntity) {
	rq.cfsTasksDel(se)
	rq.cfsTasksAdd(se)
}

// TaskSchedInfo mirrors struct sched_info (delay accounting for schedstat;
// every baseline).
type TaskSchedInfo struct {
	Pcount      uint64
	RunDelay    uint64
	LastArrival uint64
	LastQueued  uint64
}

// Task mirrors the scheduler-relevant part of task_struct (v6.19; the
// short-task fields are the patches', on v6.0).
type Task struct {
	// --- identity and state ---
	// PID and the work model come first: every event of a running task
	// reads them (IsIdleTask, work.go), so they share the task's first
	// cache line.
	PID PID
	// Prog is the program the task runs.
	Prog Program
	// workLeft is the CPU time left in the current operation, ns at full
	// speed.
	workLeft engine.Time
	// overhead is kernel time charged to the task (syscalls, scans) that
	// it spends before carrying out pendingOp.
	overhead   engine.Time
	hasPending bool
	// opBW is the memory bandwidth the current operation draws at full
	// speed, in bytes per µs.
	opBW          int64
	pendingOp     Op
	Comm          string
	SE            SchedEntity
	State         TaskState
	OnRq          int
	OnCPU         bool
	cpu           cpumask.CPU
	WakeCPU       cpumask.CPU
	RecentUsedCPU cpumask.CPU

	// --- affinity, policy and group ---
	CPUsAllowed   cpumask.Mask
	NrCPUsAllowed int
	Policy        Policy
	StaticPrio    int
	Nice          int

	TG *TaskGroup

	// --- wakeup path (wake_wide's flips) ---
	WakeeFlips       uint64
	WakeeFlipDecayTs uint64
	LastWakee        *Task

	// --- statistics ---
	Nvcsw, Nivcsw uint64
	SchedInfo     TaskSchedInfo

	// --- family, the work model's timers, lifetime ---
	Parent     *Task
	sleepTimer *engine.Timer
	sleepCPU   cpumask.CPU
	// sleepListed: t is in Rqs[sleepCPU].sleepers, at sleepIdx.
	sleepListed      bool
	sleepIdx         int
	wakeTimer        *engine.Timer
	pendingWakeFlags int
	waking           bool
	// lastSwitchIn is when the task last started running (for dur_avg).
	lastSwitchIn uint64
	exitCode     int
	// Created/Exited record lifetime for reports.
	Created, Exited engine.Time

	// --- cost model ---
	// Footprint is the task's cache footprint in bytes: what it must
	// refill after a migration.
	Footprint int64
	// lastRanCPU is the CPU the task last ran on (cpumask.None before it
	// first ran); homeNode the NUMA node of its memory (first touch).
	lastRanCPU cpumask.CPU
	homeNode   int
	// lastStopped is when the task last left a CPU.
	lastStopped engine.Time
	// MM identifies the task's address space: a switch between tasks of
	// different MMs costs ContextSwitchMM. Threads share their parent's.
	MM int64
}

// CPU mirrors task_cpu(p) (every baseline).
func (t *Task) CPU() cpumask.CPU { return t.cpu }

// IsIdleTask reports whether t is a CPU's idle task.
func (t *Task) IsIdleTask() bool { return t.PID == 0 }
