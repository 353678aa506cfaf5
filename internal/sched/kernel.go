package sched

import (
	"fmt"
	"math/rand/v2"
	"unsafe"

	"github.com/schedlab/schedlab/internal/costmodel"
	"github.com/schedlab/schedlab/internal/cpumask"
	"github.com/schedlab/schedlab/internal/engine"
	"github.com/schedlab/schedlab/internal/topology"
)

// Program is what a task does in user space. The kernel calls Next when the
// task is on a CPU and has finished its previous operation (a run segment
// completed, a sleep ended, it was just forked); Next may act on the kernel
// (wake another task, fork, create objects) through k, on t's CPU at the
// current time, and returns the task's next operation.
type Program interface {
	Next(k *Kernel, t *Task) Op
}

// ProgramFunc adapts a function to Program.
type ProgramFunc func(k *Kernel, t *Task) Op

// Next calls f.
func (f ProgramFunc) Next(k *Kernel, t *Task) Op { return f(k, t) }

// OpKind is the kind of a task operation.
type OpKind int

// Operations a program can return.
const (
	OpRun   OpKind = iota // run on the CPU for D ns of work at full capacity
	OpSleep               // sleep D ns (a timer wakes the task)
	OpBlock               // sleep until another task or timer wakes it
	OpYield               // sched_yield()
	OpExit                // exit
	OpExec                // execve(): sched_exec may move the task first
)

// Op is one operation of a task program.
type Op struct {
	Kind OpKind
	D    engine.Time
	// BW is the memory bandwidth an OpRun draws at full speed, in bytes
	// per µs (0: compute-bound). When the tasks running on an LLC or node
	// ask for more than it delivers, they share it and slow down.
	BW int64
}

// RunBW returns an operation that computes for d ns of CPU time while
// streaming memory at bw bytes per µs.
func RunBW(d engine.Time, bw int64) Op { return Op{Kind: OpRun, D: d, BW: bw} }

// Run returns an operation that computes for d ns of CPU time.
func Run(d engine.Time) Op { return Op{Kind: OpRun, D: d} }

// Sleep returns an operation that sleeps for d ns.
func Sleep(d engine.Time) Op { return Op{Kind: OpSleep, D: d} }

// Block returns an operation that sleeps until woken.
func Block() Op { return Op{Kind: OpBlock} }

// Yield returns a sched_yield operation.
func Yield() Op { return Op{Kind: OpYield} }

// Exit returns an exit operation.
func Exit() Op { return Op{Kind: OpExit} }

// Exec returns an execve operation: the exec balance (sched_exec) may move
// the task to another CPU; its program continues there.
func Exec() Op { return Op{Kind: OpExec} }

// Kernel is one simulated machine running the fair class: the runqueues, the
// task groups and the tasks, driven by an engine. It is used from a single
// goroutine.
type Kernel struct {
	Eng  *engine.Engine
	Topo *topology.Topology
	S    Settings

	Rqs    []*Rq
	RootTG *TaskGroup
	TGs    []*TaskGroup
	Tasks  []*Task // every task ever created, by PID order (idle tasks excluded)
	// taskSlab is where the next tasks are allocated (newTask).
	taskSlab []taskSlot
	// leafScratch is updateBlockedFair's copy of a leaf list, kept so
	// that the blocked-load update, run at most idle entries, does not
	// allocate one each time.
	leafScratch []*CfsRq

	// Scaled sysctls (sysctl_sched_* = normalized × factor).
	baseSlice, latency, minGranularity, wakeupGranularity uint64
	tickNsec                                              uint64

	nextPID PID
	// thisCPU is the CPU executing the current event (smp_processor_id).
	thisCPU cpumask.CPU
	// inTimer is set while a sleep timer's expiry wakes its task: the
	// kernel's hrtimer_wakeup runs in hardirq context.
	inTimer bool
	// softirq counts the nested SoftirqEnter calls of the current
	// event: the work between them runs in softirq context.
	softirq int

	// Hooks lets observers (tracing, schedstat, invariants) see events.
	Hooks Hooks
	// SelectTaskRq chooses the CPU for a waking or forked task: the
	// class's select_task_rq, which takes the wake flags by value as the
	// kernel's does (core.c:select_task_rq passes *wake_flags). The core
	// default keeps the task on its previous CPU (or the first allowed
	// one); the wakeup path installs select_task_rq_fair. By value, the
	// flags also stay on the caller's stack: a pointer passed through
	// this func value made every wakeup allocate them.
	SelectTaskRq func(k *Kernel, p *Task, prevCPU cpumask.CPU, wakeFlags int) cpumask.CPU

	dom domainState

	// DefaultAllowed, when set, is the affinity of tasks forked from
	// outside any program (a workload's first tasks), as `taskset -c`
	// gives them; their children inherit it. progTask is the task whose
	// program is running (the parent of what it forks).
	DefaultAllowed cpumask.Mask
	progTask       *Task

	// Costs is the cost model compiled for this machine
	// (costmodel.Table; ApplyCosts installs it). Until then it charges
	// nothing, and IPIs take Settings.WakeupIPILatency.
	Costs costmodel.Table
	// The memory-bandwidth sharing (shareBandwidth) and its buffers.
	bwSharer    *costmodel.MemSharer
	bwTasks     []costmodel.MemTask
	bwRqs       []*Rq
	bwShares    []costmodel.Share
	smtSiblings [][]cpumask.CPU
	// coreOf numbers each CPU's SMT core densely; coreBusy counts the
	// busy CPUs of each core (work.go).
	coreOf   []int32
	coreBusy []int32
	// Frequency domains (cpufreq.go) and the number of changes made.
	freqDoms    []*freqDomain
	freqDomOf   []*freqDomain
	FreqChanges uint64
	// idleLimits are each CPU's idle governor constraints: the states
	// disabled and the PM QoS request (work.go: newIdleLimits).
	idleLimits []costmodel.IdleLimits
	// costsOn is set by ApplyCosts; costRand is the cost jitter's stream.
	costsOn  bool
	costRand *rand.Rand

	// --- load balancing ---
	bal balanceState
	// BalanceStats counts the balancer's calls and time (the run report's
	// "balance" section).
	BalanceStats BalanceStats
	// Branches counts the branches variants change (branches.go): the
	// run report's "variant_branches" section.
	Branches BranchCounters

	// --- what the wakeup path decided (decision.go) ---
	// why is the reason of the last select_task_rq_fair (one store per
	// return point), affine and affineSD wake_affine's outcome and
	// domain; dec is the Decision handed to Hooks.Decision.
	why      Reason
	affine   Affine
	affineSD *SchedDomain
	dec      Decision
	// dry is set while selectIdleCPU runs again as a variant's
	// comparison kernel would, to count whether the variant changed its
	// answer (branches.go): it then changes nothing. flatScan makes
	// that run scan the LLC without its cluster step. clusterDeferred is
	// the idle prev or recent CPU that selectIdleSibling kept as its
	// fallback because it is outside target's cluster (None if none).
	dry, flatScan   bool
	clusterDeferred cpumask.CPU
	// baseNohzStats is set when the run's baseline refreshes blocked
	// load in newly idle balance (v5.12: Settings.NewidleNohzStats), so
	// that turning it off is a variant whose branches are counted.
	baseNohzStats bool

	invariantsChecked uint64
}

// Hooks are called at the kernel's tracepoints. Any may be nil.
type Hooks struct {
	Switch     func(cpu cpumask.CPU, prev *Task, prevState TaskState, next *Task)
	Waking     func(p *Task)
	Wakeup     func(p *Task, cpu cpumask.CPU)
	WakeupNew  func(p *Task, cpu cpumask.CPU)
	Migrate    func(p *Task, orig, dest cpumask.CPU)
	Fork       func(parent, child *Task)
	Exit       func(p *Task)
	AfterEvent func(k *Kernel)
	// Decision sees every placement: each wakeup (also those that need
	// no choice), fork and exec, and each task the balancer moves
	// (decision.go). The Decision is the kernel's, reused.
	Decision func(d *Decision)
	// Charge sees what a task's run time is made of: the work of each
	// operation its program returns (CostProgram), the parts of it the
	// workload accounts (Kernel.Account), and each cost the kernel
	// charges it, after jitter.
	Charge func(p *Task, c Cost, d engine.Time)
	// Delay sees the stretches of time a CPU cannot run a task waiting
	// for it: an IPI on its way, an idle-state exit, balancing work.
	Delay func(cpu cpumask.CPU, why Delay, from, to engine.Time)
	// Frequency sees each change of a CPU's frequency (Rq.FreqScale,
	// 1024 at its highest) by cpufreq, once the running task's work up
	// to now is accounted at the old one.
	Frequency func(cpu cpumask.CPU, scale uint64)
}

// TopologyOptions are the topology.Build options a kernel with settings s
// needs: its baseline, SD_CLUSTER on the CLS level for sis-cluster, and a
// CLS level for cluster-level.
func TopologyOptions(s Settings) topology.Options {
	return topology.Options{Kernel: s.Kernel, ClusterFlag: s.SISCluster, ClusterLevel: s.ClusterLevel}
}

// New builds a kernel for topo with settings s, on engine eng. Every CPU
// starts idle at time 0 with its tick stopped.
func New(eng *engine.Engine, topo *topology.Topology, s Settings) (*Kernel, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	if s.SISCluster {
		for _, d := range topo.AllDomains {
			if d.Name == "CLS" && d.Flags&topology.SDCluster == 0 {
				panic("sched: sis-cluster needs a topology built with sched.TopologyOptions (SD_CLUSTER on the CLS level)")
			}
		}
	}
	n := topo.NrCPUs
	k := &Kernel{Eng: eng, Topo: topo, S: s, nextPID: 1, thisCPU: 0}
	if b, err := Baseline(s.Kernel); err == nil {
		k.baseNohzStats = b.NewidleNohzStats
	}
	factor := tunableFactor(s.TunableScaling, n)
	k.baseSlice = s.BaseSlice * factor
	k.latency = s.Latency * factor
	k.minGranularity = s.MinGranularity * factor
	k.wakeupGranularity = s.WakeupGranularity * factor
	k.tickNsec = (1000000000 + uint64(s.HZ)/2) / uint64(s.HZ)
	k.SelectTaskRq = selectTaskRqFair
	k.Costs = *costmodel.None(topo.Spec)
	lim, err := newIdleLimits(topo.Spec, s)
	if err != nil {
		return nil, err
	}
	k.idleLimits = lim

	root := &TaskGroup{Name: "/", Shares: NiceZeroLoad, Weight: 100}
	k.RootTG = root
	k.TGs = []*TaskGroup{root}
	root.CfsRq = make([]*CfsRq, n)
	root.SE = make([]*SchedEntity, n)
	k.Rqs = make([]*Rq, n)
	rqs := make([]rqSlot, n)
	cfsRqs := make([]CfsRq, n)
	for i := 0; i < n; i++ {
		cpu := cpumask.CPU(i)
		rq := &rqs[i].Rq
		*rq = Rq{CPU: cpu, k: k, FreqScale: SchedCapacityScale,
			Clock: ClockBase, ClockTask: ClockBase, ClockPelt: ClockBase, ClockIdle: ClockBase, ClockPeltIdle: ClockBase}
		rq.CPUCapacityOrig = uint64(topo.Spec.CPUs[i].Capacity)
		rq.CPUCapacity = rq.CPUCapacityOrig
		cfs := &cfsRqs[i]
		*cfs = *newCfsRq(rq, root)
		rq.CFS = cfs
		root.CfsRq[i] = cfs
		rq.AvgIdle = 2 * s.MigrationCost
		rq.MaxIdleBalanceCost = s.MigrationCost
		rq.NextBalance = k.Jiffies()
		idle := k.newTask()
		*idle = Task{PID: 0, Comm: fmt.Sprintf("swapper/%d", i), State: TaskRunning, cpu: cpu, OnCPU: true, TG: root}
		idle.SE.task = idle
		rq.Idle = idle
		rq.Curr = idle
		rq.tickTimer = engine.NewTimer("tick", func() { k.schedTick(rq) })
		rq.segTimer = engine.NewTimerOf("segment", (*rqSegEnd)(rq))
		rq.reschedTimer = engine.NewTimer("resched", func() { k.reschedule(rq) })
		rq.NohzTickStopped = true
		// Idle since boot: the governor's history says "long".
		rq.idleAvg = uint64(engine.Second)
		rq.idleState = k.idleGovernorSelect(rq)
		k.Rqs[i] = rq
	}
	k.buildDomainState()
	k.initCores()
	k.initBalance() // load balancing
	return k, nil
}

// rqSegEnd is a runqueue as the firer of its segment timer: the expiry
// reaches the kernel through rq.k, in the line segmentDone writes first,
// not through a closure's captured variables, a line of their own.
type rqSegEnd Rq

func (r *rqSegEnd) Fire() {
	rq := (*Rq)(r)
	rq.k.segmentDone(rq)
}

// rqSlot is an Rq padded to an odd number of cache lines. The runqueues
// and the root cfs_rqs (5 lines) are each one array, so that the same
// line of consecutive CPUs' structs falls in different sets of a 64-set
// L1 (set = address bits 6-11): every set holds some. Allocated one by
// one, in the allocator's 896-byte size class (14 lines, 9 to an 8 KB
// span), all 256 CPUs' first lines shared 9 of the 64 sets, so a balance
// pass visiting 184 CPUs, and every event after it, missed on each.
type rqSlot struct {
	Rq
	_ [rqLines*64 - unsafe.Sizeof(Rq{})]byte
}

// rqLines is the Rq's size in cache lines, rounded up to an odd number.
const rqLines = (unsafe.Sizeof(Rq{})+63)/64 | 1

// taskSlot is a Task padded to an odd number of cache lines, allocated
// taskSlabLen at a time (newTask), for the reason of rqSlot: one by one, in
// the 1024-byte size class (16 lines), the same line of every task fell in
// 4 of the 64 sets.
// The padding is a literal (Kernel holds the slab, and a size computed
// from Task would make the types recursive); TestSlotLines checks it.
type taskSlot struct {
	Task
	_ [24]byte
}

// taskSlabLen is how many tasks newTask allocates at once: 60 KB.
const taskSlabLen = 64

// newTask returns a zero Task from the slab. Tasks are never freed
// (Kernel.Tasks keeps them all), so a slab holds nothing longer than its
// tasks would be held anyway.
func (k *Kernel) newTask() *Task {
	if len(k.taskSlab) == 0 {
		k.taskSlab = make([]taskSlot, taskSlabLen)
	}
	p := &k.taskSlab[0].Task
	k.taskSlab = k.taskSlab[1:]
	return p
}

func newCfsRq(rq *Rq, tg *TaskGroup) *CfsRq {
	return &CfsRq{rq: rq, tg: tg, ZeroVruntime: uint64(1<<64 - (1 << 20))}
}

// NrCPUs is the number of CPUs.
func (k *Kernel) NrCPUs() int { return len(k.Rqs) }

// Now is the simulated time in ns.
func (k *Kernel) Now() engine.Time { return k.Eng.Now() }

// initialJiffies mirrors INITIAL_JIFFIES on 64-bit kernels (every
// baseline): the jiffies counter starts 300 s before its 32-bit wrap.
func (k *Kernel) initialJiffies() uint64 { return uint64(1<<32) - 300*uint64(k.S.HZ) }

// Jiffies is the jiffies counter at the current time.
func (k *Kernel) Jiffies() uint64 {
	return k.initialJiffies() + uint64(k.Eng.Now())/k.tickNsec
}

// TickNsec is TICK_NSEC.
func (k *Kernel) TickNsec() uint64 { return k.tickNsec }

// BaseSlice is sysctl_sched_base_slice (scaled).
func (k *Kernel) BaseSlice() uint64 { return k.baseSlice }

// ThisCPU is the CPU executing the current event.
func (k *Kernel) ThisCPU() cpumask.CPU { return k.thisCPU }

// InTimerIRQ reports whether the current wakeup comes from a sleep timer's
// expiry (hrtimer_wakeup, in hardirq context) rather than from the task
// current on the CPU.
func (k *Kernel) InTimerIRQ() bool { return k.inTimer }

// SoftirqEnter and SoftirqExit bracket work that the kernel does in softirq
// context on the current CPU (in_serving_softirq): the network receive
// that loopback TCP runs on the sender's CPU when its transmit raises
// NET_RX (net_rx_action from local_bh_enable's do_softirq), whose socket
// wakeups come from there. Simplified: the softirq always runs inline on
// the raising CPU, never deferred to ksoftirqd.
func (k *Kernel) SoftirqEnter() { k.softirq++ }

// SoftirqExit ends a SoftirqEnter.
func (k *Kernel) SoftirqExit() { k.softirq-- }

// InTask mirrors in_task() (include/linux/preempt.h): false while the
// current CPU serves a softirq (SoftirqEnter) or a sleep timer's hardirq
// (InTimerIRQ). The model's other wakeups come from tasks.
func (k *Kernel) InTask() bool { return k.softirq == 0 && !k.inTimer }

// Current is the task running on the CPU executing the current event.
func (k *Kernel) Current() *Task { return k.Rqs[k.thisCPU].Curr }

// cpuRq mirrors cpu_rq() (every baseline).
func (k *Kernel) cpuRq(cpu cpumask.CPU) *Rq { return k.Rqs[cpu] }

// taskRq mirrors task_rq() (every baseline).
func (k *Kernel) taskRq(p *Task) *Rq { return k.Rqs[p.cpu] }

// rqOf mirrors rq_of(cfs_rq) (every baseline).
func rqOf(c *CfsRq) *Rq { return c.rq }

// cfsRqOf mirrors cfs_rq_of(se) (every baseline).
func cfsRqOf(se *SchedEntity) *CfsRq { return se.CfsRq }

// groupCfsRq mirrors group_cfs_rq(se) (every baseline).
func groupCfsRq(se *SchedEntity) *CfsRq { return se.MyQ }

// parentEntity mirrors parent_entity(se) (every baseline).
func parentEntity(se *SchedEntity) *SchedEntity { return se.Parent }

// taskOf mirrors task_of(se) (every baseline).
func taskOf(se *SchedEntity) *Task { return se.task }

// ClockBase is sched_clock() at engine time 0: the simulated machine has
// been up for 2^30 ns (1024 PELT periods) when a run starts, so that no
// clock or PELT timestamp is ever 0 (PELT reads last_update_time == 0 as
// "not attached").
const ClockBase = 1 << 30

// schedClock mirrors sched_clock_cpu() (every baseline): the CPU clock in
// ns. Simplified: one clock for every CPU, offset by ClockBase.
func (k *Kernel) schedClock() uint64 { return uint64(k.Eng.Now()) + ClockBase }

// updateRqClock mirrors core.c:update_rq_clock (v6.19; no IRQ or steal time, so
// clock_task == clock) followed by pelt.h:update_rq_clock_pelt.
func (k *Kernel) updateRqClock(rq *Rq) {
	now := k.schedClock()
	if now <= rq.Clock {
		return
	}
	delta := now - rq.Clock
	rq.Clock = now
	rq.ClockTask += delta
	k.updateRqClockPelt(rq, delta)
}

// updateRqClockPelt mirrors pelt.h:update_rq_clock_pelt (v6.19).
func (k *Kernel) updateRqClockPelt(rq *Rq, delta uint64) {
	if rq.currIsIdle() {
		updateIdleRqClockPeltSync(rq)
		return
	}
	delta = delta * rq.CPUCapacityOrig >> SchedCapacityShift
	delta = delta * rq.FreqScale >> SchedCapacityShift
	rq.ClockPelt += delta
}

// updateIdleRqClockPeltSync mirrors pelt.h:_update_idle_rq_clock_pelt (v6.19).
func updateIdleRqClockPeltSync(rq *Rq) {
	rq.ClockPelt = rq.ClockTask
	rq.ClockIdle = rq.Clock
	rq.ClockPeltIdle = rqClockPelt(rq)
}

// updateIdleRqClockPelt mirrors pelt.h:update_idle_rq_clock_pelt (v6.19): when a
// saturated CPU goes idle, the time its PELT clock lagged is lost idle time.
func updateIdleRqClockPelt(rq *Rq) {
	divider := uint32((LoadAvgMax-1024)<<SchedCapacityShift) - LoadAvgMax
	utilSum := rq.CFS.Avg.UtilSum
	if utilSum >= divider {
		rq.LostIdleTime += rq.ClockTask - rq.ClockPelt
	}
	updateIdleRqClockPeltSync(rq)
}

// rqClockPelt mirrors pelt.h:rq_clock_pelt (v6.19).
func rqClockPelt(rq *Rq) uint64 { return rq.ClockPelt - rq.LostIdleTime }

// cfsRqClockPelt mirrors pelt.h:cfs_rq_clock_pelt (v6.19; no bandwidth throttling).
func cfsRqClockPelt(c *CfsRq) uint64 { return rqClockPelt(c.rq) }

// rqClockTask mirrors rq_clock_task() (every baseline; no IRQ time is
// subtracted: there are no interrupts).
func rqClockTask(rq *Rq) uint64 { return rq.ClockTask }

// ApplySettings re-derives the values the kernel computes from its settings
// (the scaled sysctls and TICK_NSEC), as writing a debugfs knob does. Call
// it after changing k.S.
func (k *Kernel) ApplySettings() error {
	if err := k.S.Validate(); err != nil {
		return err
	}
	factor := tunableFactor(k.S.TunableScaling, k.NrCPUs())
	k.baseSlice = k.S.BaseSlice * factor
	k.latency = k.S.Latency * factor
	k.minGranularity = k.S.MinGranularity * factor
	k.wakeupGranularity = k.S.WakeupGranularity * factor
	k.tickNsec = (1000000000 + uint64(k.S.HZ)/2) / uint64(k.S.HZ)
	k.updateMaxInterval() // load balancing: max_load_balance_interval follows HZ
	return nil
}

// SetThisCPU sets the CPU on which the next externally driven action (a
// scenario's wake, a fork) executes, as if it ran there.
func (k *Kernel) SetThisCPU(cpu cpumask.CPU) { k.thisCPU = cpu }

// MigrateTask moves a task that is not running to dst, as
// core.c:move_queued_task does for a queued task (the stopper's path) and
// as a wakeup's set_task_cpu does for a sleeping one.
func (k *Kernel) MigrateTask(p *Task, dst cpumask.CPU) error {
	if int(dst) < 0 || int(dst) >= k.NrCPUs() {
		return fmt.Errorf("cpu %d out of range", dst)
	}
	if !p.CPUsAllowed.Test(dst) {
		return fmt.Errorf("task %d may not run on cpu %d", p.PID, dst)
	}
	if p.OnCPU {
		return fmt.Errorf("task %d is running on cpu %d; only queued or sleeping tasks can be migrated", p.PID, p.cpu)
	}
	if p.cpu == dst {
		return nil
	}
	if p.State == TaskDead {
		return fmt.Errorf("task %d has exited", p.PID)
	}
	src := k.taskRq(p)
	if p.OnRq == taskOnRqQueued {
		k.updateRqClock(src)
		k.deactivateTask(src, p, dequeueNoclock)
		k.setTaskCPU(p, dst)
		drq := k.Rqs[dst]
		k.updateRqClock(drq)
		k.activateTask(drq, p, enqueueNoclock)
		k.wakeupPreempt(drq, p, 0)
		return nil
	}
	// Sleeping: the next wakeup enqueues it on dst.
	p.waking = true
	k.setTaskCPU(p, dst)
	p.waking = false
	return nil
}

// TaskByPID returns a task, or nil.
func (k *Kernel) TaskByPID(pid PID) *Task {
	i := int(pid) - 1
	if i < 0 || i >= len(k.Tasks) {
		return nil
	}
	return k.Tasks[i]
}

// Task accessors for observers.

// WorkLeft is the CPU work left in the task's current operation.
func (t *Task) WorkLeft() int64 { return int64(t.workLeft) }

// Kernel returns the rq's kernel.
func (rq *Rq) Kernel() *Kernel { return rq.k }

// NeedResched reports TIF_NEED_RESCHED of the rq's current task.
func (rq *Rq) NeedResched() bool { return rq.needResched }

// UpdateClock brings the rq clocks to the current time (update_rq_clock).
func (k *Kernel) UpdateClock(cpu cpumask.CPU) { k.updateRqClock(k.Rqs[cpu]) }

// AvgVruntime returns avg_vruntime(cfs_rq) without moving zero_vruntime.
func (k *Kernel) AvgVruntime(c *CfsRq) uint64 { return c.ZeroVruntime + uint64(avgVruntimeDelta(c)) }

// Eligible reports entity_eligible for a queued entity.
func Eligible(c *CfsRq, se *SchedEntity) bool { return entityEligible(c, se) }

// SEWeight is se_weight(se).
func SEWeight(se *SchedEntity) uint64 { return seWeight(se) }

// CalcDeltaFair exposes calc_delta_fair for tests.
func CalcDeltaFair(delta uint64, se *SchedEntity) uint64 { return calcDeltaFair(delta, se) }
