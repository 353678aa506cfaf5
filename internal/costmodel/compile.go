package costmodel

import (
	"math"
	"math/bits"
	"sync"

	"github.com/schedlab/schedlab/internal/cpumask"
	"github.com/schedlab/schedlab/internal/engine"
	"github.com/schedlab/schedlab/internal/topology"
)

// Table is one machine's cost model compiled to the integers the kernel
// model (internal/sched) and the kernel objects (internal/workload/kobj)
// charge: Compile builds it once per run from Params and the machine spec,
// and its methods are the cost formulas in the form the hot paths use. No
// method does floating-point arithmetic, so a run gives the same numbers
// on every processor; Compile's conversions are single correctly-rounded
// IEEE operations, done once.
//
// Work fields are ns at capacity 1024 and maximum frequency (the kernel
// model charges them as work, so they take longer on a smaller or slower
// CPU: ScaleWork); latencies are ns and do not scale. The exported fields
// are the compiled parameters; tests of the kernel model set them directly
// on a table from None to isolate one cost.
type Table struct {
	// ContextSwitch is charged to the task switched in; ContextSwitchMM
	// is added when it has another address space than the previous task
	// (context_switch_ns, context_switch_mm_ns).
	ContextSwitch, ContextSwitchMM engine.Time
	// RemoteEnqueue is the waker's extra work when the wakee is enqueued
	// on another CPU (remote_enqueue_ns).
	RemoteEnqueue engine.Time
	// SISScanCPU is charged to the waker per CPU select_idle_* examines
	// (sis_scan_cpu_ns); SISScanLoop instead, with the CPU's runqueue line
	// by distance, under model_sis_scan_lines (sis_scan_loop_ns).
	SISScanCPU, SISScanLoop engine.Time
	// Balance are the load balancer's and update_blocked_averages' work.
	Balance BalanceCosts
	// Syscalls are the system calls' work, which the workloads charge.
	Syscalls Syscalls
	// Kthreads are the runs of a quiet server's kernel threads
	// (package kthreads, --sysctl model_kthreads=1).
	Kthreads KthreadCosts

	// IPISameLLC is the latency of an IPI within an LLC; IPISameCluster
	// within a cluster inside the LLC (SubLLCClusters); IPIOther[a][b]
	// from a CPU of node a to a CPU of another LLC on node b (the
	// other-LLC figure within a node, interpolated by SLIT distance
	// beyond).
	IPISameLLC     engine.Time
	IPISameCluster engine.Time
	IPIOther       [][]engine.Time
	// IdleExit is the exit latency of a CPU whose machine spec lists no
	// cpuidle states (idle_exit_ns).
	IdleExit engine.Time
	// LineSameLLC and LineOther[a][b] are the costs of reading a cache
	// line that other CPUs of the target's LLC write, from within that
	// LLC and from a CPU of node a when the LLC is on node b;
	// LineSameCluster between two cores of a cluster inside the LLC
	// (SubLLCClusters).
	LineSameLLC     engine.Time
	LineSameCluster engine.Time
	LineOther       [][]engine.Time

	// Cache refill (CacheRefill): cache sizes in bytes; the turnover rate
	// of an absent task's lines in bytes per µs; refill costs in
	// femtoseconds per byte from the shared LLC, from memory, and from
	// another LLC (RefillFarFs[to node][from node]); the remote-memory
	// factor in 1/1024 (RemoteMem1024[cpu node][memory node]).
	PrivateBytes, LLCBytes int64
	// TaskStateBytes is every task's own kernel state (task_state_bytes),
	// which the kernel model adds to a task's declared footprint.
	TaskStateBytes           int64
	FillBytesPerUs           int64
	RefillLLCFs, RefillMemFs int64
	RefillFarFs              [][]int64
	RemoteMem1024            [][]int64

	// SMTShare is the speed of each of two SMT siblings running at once,
	// in 1/1024 of a thread alone (smt_factor); 0 or 1024: no slowdown.
	SMTShare int64
	// Memory bandwidth one thread, one LLC and one node deliver, in bytes
	// per µs; zero means unlimited.
	CoreBandwidth, LLCBandwidth, NodeBandwidth int64

	// The machine: each CPU's SMT core, LLC and node, as in the spec,
	// side by side so that a CPU's three are one load.
	cpus []cpuLoc
}

// cpuLoc is where a CPU is: its SMT core, its cluster when that is
// smaller than its LLC (SubLLCClusters; -1 otherwise), its LLC and node
// (topology.CPUSpec's ids).
type cpuLoc struct{ core, cluster, llc, node int32 }

// sameCluster says whether a and b share a cluster inside their LLC.
func sameCluster(a, b cpuLoc) bool { return a.cluster >= 0 && a.cluster == b.cluster }

// KthreadCosts are the work of one run of each kernel thread of a quiet
// server, in ns at capacity 1024 and maximum frequency (the
// kthread_* parameters); the threads run it as an ordinary run, so it
// scales with the CPU's speed as other work does.
type KthreadCosts struct {
	Vmstat, ShepherdPerCPU, RCUGP, Kcompactd engine.Time
}

// BalanceCosts are the load balancer's work (the lb_*, nohz_cpu_ns,
// stopper_switch_ns, uba_* and cpufreq_update_* parameters), in ns at
// capacity 1024 and maximum frequency; the balancer charges them to the
// CPU doing the pass, scaled by that CPU's speed (ScaleWork). The zero
// value charges nothing.
type BalanceCosts struct {
	// BlockedAvgBase and BlockedAvgPerCfsRq make up one
	// update_blocked_averages call (BlockedAverages).
	BlockedAvgBase, BlockedAvgPerCfsRq engine.Time
	// CpufreqUpdateBase and CpufreqUpdatePerCPU make up one
	// cpufreq_update_util call into schedutil (CpufreqUpdate).
	CpufreqUpdateBase, CpufreqUpdatePerCPU engine.Time
	// BalanceRqBase is the fixed part of one sched_balance_rq pass.
	BalanceRqBase engine.Time
	// SgStatsPerGroup and SgStatsPerCPU make up update_sg_lb_stats
	// (SgStats).
	SgStatsPerGroup, SgStatsPerCPU engine.Time
	// FindBusiestQueuePerCPU is sched_balance_find_src_rq's cost per CPU
	// of the busiest group.
	FindBusiestQueuePerCPU engine.Time
	// TaskExamined is detach_tasks' cost per task looked at; TaskMigrated
	// moving one task (detach_task and attach_task).
	TaskExamined, TaskMigrated engine.Time
	// NohzPerCPU is _nohz_idle_balance's cost per idle CPU visited.
	NohzPerCPU engine.Time
	// StopperSwitch is the busiest CPU's cost of an active balance.
	StopperSwitch engine.Time
}

// Syscalls are the CPU work of the system calls the kernel objects and
// the workloads model, in ns at capacity 1024 and maximum frequency: a
// program charges them as work (sched.Run) before the call takes effect,
// so they take longer on a smaller or slower CPU. The copy costs are in ns
// per 1000 bytes, charged on each side.
type Syscalls struct {
	PipeWrite, PipeRead, PipeCopyPer1000B engine.Time
	PipeLockShare1024                     int64 // pipe_lock_share × 1024
	UnixSend, UnixRecv, UnixCopyPer1000B  engine.Time
	TCPSend, TCPRecv, TCPCopyPer1000B     engine.Time
	Poll, Futex, Clock                    engine.Time
	FgetShared                            engine.Time
	Fork, ThreadCreate                    engine.Time
	ThreadStart, ProcessStart             engine.Time
	ExitProcess, ExitThread, Reap         engine.Time
}

// PipeWriteCost is write(2) of n bytes to a pipe: pipe_write_ns + n ×
// pipe_ns_per_byte.
func (c *Syscalls) PipeWriteCost(n int) engine.Time {
	return c.PipeWrite + engine.Time(n)*c.PipeCopyPer1000B/1000
}

// PipeLockHold is how long a pipe write (or read) of n bytes holds
// pipe->mutex: pipe_lock_share of pipe_write_ns (pipe_read_ns) and the
// copy of n bytes.
func (c *Syscalls) PipeLockHold(write bool, n int) engine.Time {
	base := c.PipeRead
	if write {
		base = c.PipeWrite
	}
	return engine.Time(int64(base)*c.PipeLockShare1024/1024) + engine.Time(n)*c.PipeCopyPer1000B/1000
}

// PipeReadCost is read(2) of n bytes from a pipe.
func (c *Syscalls) PipeReadCost(n int) engine.Time {
	return c.PipeRead + engine.Time(n)*c.PipeCopyPer1000B/1000
}

// UnixSendCost is a send of n bytes on an AF_UNIX stream socket.
func (c *Syscalls) UnixSendCost(n int) engine.Time {
	return c.UnixSend + engine.Time(n)*c.UnixCopyPer1000B/1000
}

// UnixRecvCost is a receive of n bytes from an AF_UNIX stream socket.
func (c *Syscalls) UnixRecvCost(n int) engine.Time {
	return c.UnixRecv + engine.Time(n)*c.UnixCopyPer1000B/1000
}

// TCPSendCost is a send of n bytes on a loopback TCP socket.
func (c *Syscalls) TCPSendCost(n int) engine.Time {
	return c.TCPSend + engine.Time(n)*c.TCPCopyPer1000B/1000
}

// TCPRecvCost is a receive of n bytes from a loopback TCP socket.
func (c *Syscalls) TCPRecvCost(n int) engine.Time {
	return c.TCPRecv + engine.Time(n)*c.TCPCopyPer1000B/1000
}

// syscalls compiles the system-call parameters.
func (p *Params) syscalls() Syscalls {
	per1000 := func(nsPerByte float64) engine.Time { return engine.Time(math.Round(nsPerByte * 1000)) }
	return Syscalls{
		PipeWrite: p.PipeWrite, PipeRead: p.PipeRead, PipeCopyPer1000B: per1000(p.PipeByte), PipeLockShare1024: int64(math.Round(p.PipeLockShare * 1024)),
		UnixSend: p.UnixSend, UnixRecv: p.UnixRecv, UnixCopyPer1000B: per1000(p.UnixByte),
		TCPSend: p.TCPSend, TCPRecv: p.TCPRecv, TCPCopyPer1000B: per1000(p.TCPByte),
		Poll: p.Poll, Futex: p.Futex, Clock: p.Clock,
		FgetShared: p.FgetShared,
		Fork:       p.Fork, ThreadCreate: p.ThreadCreate,
		ThreadStart: p.ThreadStart, ProcessStart: p.ProcessStart,
		ExitProcess: p.ExitProcess, ExitThread: p.ExitThread, Reap: p.Reap,
	}
}

// DefaultSyscalls are the generic defaults' system-call costs: what the
// workloads charge when the run has no cost model (--no-costs).
var DefaultSyscalls = sync.OnceValue(func() Syscalls {
	p, _ := Defaults(GenericName)
	return p.syscalls()
})

// BlockedAverages is the work of one update_blocked_averages call that
// walked n leaf cfs_rqs: uba_base_ns + n × uba_cfs_rq_ns.
func (b *BalanceCosts) BlockedAverages(n uint64) engine.Time {
	return b.BlockedAvgBase + engine.Time(n)*b.BlockedAvgPerCfsRq
}

// CpufreqUpdate is the work of one cpufreq_update_util call that reads
// cpus CPUs of its frequency domain: cpufreq_update_ns + cpus ×
// cpufreq_update_cpu_ns.
func (b *BalanceCosts) CpufreqUpdate(cpus int) engine.Time {
	return b.CpufreqUpdateBase + engine.Time(cpus)*b.CpufreqUpdatePerCPU
}

// SgStats is update_sg_lb_stats' work for one group of which cpus CPUs
// are read: lb_group_ns + cpus × lb_cpu_ns.
func (b *BalanceCosts) SgStats(cpus int) engine.Time {
	return b.SgStatsPerGroup + engine.Time(cpus)*b.SgStatsPerCPU
}

// None returns a table for spec that charges nothing: the kernel model's
// state without the cost model, and the base tests set single costs on.
func None(spec *topology.MachineSpec) *Table {
	t := &Table{}
	t.machine(spec)
	return t
}

func (t *Table) machine(spec *topology.MachineSpec) {
	n := len(spec.CPUs)
	t.cpus = make([]cpuLoc, n)
	sub := SubLLCClusters(spec)
	for i, c := range spec.CPUs {
		cl := int32(-1)
		if sub[c.Cluster] {
			cl = int32(c.Cluster)
		}
		t.cpus[i] = cpuLoc{int32(c.Core), cl, int32(c.LLC), int32(c.Node)}
	}
}

// Compile converts p for machine spec into integer tables. The pairwise
// quantities the parameters give for the farthest nodes are interpolated
// by SLIT distance once per pair of nodes (NodeFrac).
func Compile(p *Params, spec *topology.MachineSpec) *Table {
	t := None(spec)
	// fs per byte from a rate in GB/s (bytes per ns); bytes per µs.
	fs := func(gbps float64) int64 { return int64(math.Round(1e6 / gbps)) }
	bpus := func(gbps float64) int64 { return int64(math.Round(gbps * 1000)) }
	t.ContextSwitch, t.ContextSwitchMM = p.ContextSwitch, p.ContextSwitchMM
	t.RemoteEnqueue = p.RemoteEnqueue
	t.SISScanCPU, t.SISScanLoop = p.SISScanCPU, p.SISScanLoop
	t.Syscalls = p.syscalls()
	t.Balance = BalanceCosts{
		BlockedAvgBase:         p.BlockedAvgBase,
		BlockedAvgPerCfsRq:     p.BlockedAvgCfsRq,
		CpufreqUpdateBase:      p.CpufreqUpdate,
		CpufreqUpdatePerCPU:    p.CpufreqUpdateCPU,
		BalanceRqBase:          p.BalanceRqBase,
		SgStatsPerGroup:        p.LBGroup,
		SgStatsPerCPU:          p.LBCPU,
		FindBusiestQueuePerCPU: p.LBFindBusiestCPU,
		TaskExamined:           p.LBTask,
		TaskMigrated:           p.LBMigrate,
		NohzPerCPU:             p.NohzCPU,
		StopperSwitch:          p.StopperSwitch,
	}
	t.Kthreads = KthreadCosts{
		Vmstat:         p.KthreadVmstat,
		ShepherdPerCPU: p.KthreadShepherdCPU,
		RCUGP:          p.KthreadRCUGP,
		Kcompactd:      p.KthreadKcompactd,
	}
	t.IPISameLLC = p.IPISameLLC
	t.IPISameCluster = p.IPISameCluster
	t.IdleExit = p.IdleExit
	t.LineSameLLC = p.LineSameLLC
	t.LineSameCluster = p.LineSameCluster
	t.PrivateBytes, t.LLCBytes = p.PrivateCacheKiB*1024, p.LLCKiB*1024
	t.TaskStateBytes = p.TaskState
	t.FillBytesPerUs = bpus(p.CacheFillBW)
	t.RefillLLCFs, t.RefillMemFs = fs(p.RefillLLCBW), fs(p.RefillMemoryBW)
	t.SMTShare = int64(math.Round(p.SMTFactor * 1024))
	t.CoreBandwidth, t.LLCBandwidth, t.NodeBandwidth = bpus(p.MemBWCore), bpus(p.MemBWLLC), bpus(p.MemBWNode)

	nodes := spec.NrNodes()
	hasCPU := make([]bool, nodes)
	for _, c := range spec.CPUs {
		hasCPU[c.Node] = true
	}
	t.IPIOther = make([][]engine.Time, nodes)
	t.LineOther = make([][]engine.Time, nodes)
	t.RefillFarFs = make([][]int64, nodes)
	t.RemoteMem1024 = make([][]int64, nodes)
	for a := range nodes {
		t.IPIOther[a] = make([]engine.Time, nodes)
		t.LineOther[a] = make([]engine.Time, nodes)
		t.RefillFarFs[a] = make([]int64, nodes)
		t.RemoteMem1024[a] = make([]int64, nodes)
		for b := range nodes {
			if !hasCPU[a] || !hasCPU[b] {
				continue
			}
			// Within a node (f = 0) the "other LLC" figures.
			f := NodeFrac(spec, a, b)
			t.IPIOther[a][b] = engine.Time(math.Round(lerp(float64(p.IPIOtherLLC), float64(p.IPIOtherNode), f)))
			t.LineOther[a][b] = engine.Time(math.Round(lerp(float64(p.LineOtherLLC), float64(p.LineOtherNode), f)))
			t.RefillFarFs[a][b] = int64(math.Round(lerp(1/p.RefillOtherLLCBW, 1/p.RefillOtherNodeBW, f) * 1e6))
			t.RemoteMem1024[a][b] = int64(math.Round(lerp(1, p.RemoteMemFactor, f) * 1024))
		}
	}
	return t
}

// Distance classifies CPUs a and b of the table's machine (DistanceOf).
func (t *Table) Distance(a, b cpumask.CPU) Distance {
	switch {
	case a == b:
		return SameCPU
	case t.cpus[a].core == t.cpus[b].core:
		return SameCore
	case sameCluster(t.cpus[a], t.cpus[b]):
		return SameCluster
	case t.cpus[a].llc == t.cpus[b].llc:
		return SameLLC
	case t.cpus[a].node == t.cpus[b].node:
		return OtherLLC
	}
	return OtherNode
}

// Node is cpu's NUMA node.
func (t *Table) Node(cpu cpumask.CPU) int { return int(t.cpus[cpu].node) }

// IPILatency is the time from sending an IPI on from to its handler
// running on to, when to is not in an idle state (IdleExitLatency adds
// the exit of one that is): nothing on the same CPU, IPISameCluster
// within a cluster inside the LLC, IPISameLLC elsewhere in the LLC,
// IPIOther beyond.
func (t *Table) IPILatency(from, to cpumask.CPU) engine.Time {
	switch {
	case from == to:
		return 0
	case t.cpus[from].llc == t.cpus[to].llc:
		if sameCluster(t.cpus[from], t.cpus[to]) {
			return t.IPISameCluster
		}
		return t.IPISameLLC
	case t.IPIOther != nil:
		return t.IPIOther[t.cpus[from].node][t.cpus[to].node]
	}
	return 0
}

// LLCLineRead is the time for reader to load a cache line that the CPUs
// of target's LLC keep writing (sd_llc_shared->has_idle_cores and
// nr_busy_cpus): a transfer within the LLC when reader is one of them,
// from another LLC or node otherwise.
func (t *Table) LLCLineRead(reader, target cpumask.CPU) engine.Time {
	switch {
	case t.cpus[reader].llc == t.cpus[target].llc:
		return t.LineSameLLC
	case t.LineOther != nil:
		return t.LineOther[t.cpus[reader].node][t.cpus[target].node]
	}
	return 0
}

// LineTransfer is the time for CPU to to get a cache line that CPU from
// last wrote: nothing when they share their private caches (the same CPU
// or SMT siblings) or when from is cpumask.None (nobody wrote it: a cold
// miss, which the system-call costs already include), a transfer within
// a cluster inside the LLC (line_same_cluster_ns), within the LLC
// (line_same_llc_ns), or from another LLC or node (line_other_*).
func (t *Table) LineTransfer(from, to cpumask.CPU) engine.Time {
	if from == cpumask.None || from == to {
		return 0
	}
	a, b := t.cpus[from], t.cpus[to]
	switch {
	case a.core == b.core:
		return 0
	case sameCluster(a, b):
		return t.LineSameCluster
	case a.llc == b.llc:
		return t.LineSameLLC
	case t.LineOther != nil:
		return t.LineOther[a.node][b.node]
	}
	return 0
}

// IdleExitLatency is the advertised exit latency of state idx of a CPU's
// cpuidle states (the machine spec's, which always win), or IdleExit for a
// CPU that lists none: what the kernel's governor believes.
func (t *Table) IdleExitLatency(states []topology.IdleState, idx int) engine.Time {
	if len(states) == 0 {
		return t.IdleExit
	}
	return engine.Time(states[max(0, min(idx, len(states)-1))].ExitLatencyNs)
}

// IdleWake is the time a CPU in state idx takes to wake when an interrupt
// arrives: the state's measured wake time (topology.IdleState.Wake, the
// advertised exit latency where none is known) when actual, the
// advertised exit latency otherwise; IdleExit for a CPU that lists no
// states.
func (t *Table) IdleWake(states []topology.IdleState, idx int, actual bool) engine.Time {
	if len(states) == 0 {
		return t.IdleExit
	}
	st := states[max(0, min(idx, len(states)-1))]
	if actual {
		return engine.Time(st.Wake())
	}
	return engine.Time(st.ExitLatencyNs)
}

// CacheRefill is the time a task spends refetching its working set when
// it resumes on CPU to after last running on from, its footprint being
// footprint bytes, away the time it was off the CPU, and memNode the node
// its memory is on (first touch; a negative memNode means from's node).
// docs/costs.md writes the formula out:
//
//	P = min(footprint, private cache), L = min(footprint, LLC)
//	warmP = P·exp(−away·cache_fill / private cache)   what survived in the old core's private cache
//	warmL = L·exp(−away·cache_fill / LLC)             what survived in the old LLC
//	cold  = L − warmL                                  must come from memory wherever the task runs
//	same CPU or SMT sibling:  (min(P, warmL) − warmP)/refill_llc + cold/refill_memory
//	same LLC:                 min(P, warmL)/refill_llc           + cold/refill_memory
//	other LLC or node:        warmL/refill_far                   + cold·remote/refill_memory
//
// The decay exp(−x) is Decay32's series of 1/32 halvings, interpolated
// linearly within a step. warmP ⊆ warmL is assumed (an inclusive LLC). Nothing is charged when
// the table has no cache sizes.
func (t *Table) CacheRefill(from, to cpumask.CPU, footprint int64, away engine.Time, memNode int) engine.Time {
	if footprint <= 0 || t.PrivateBytes <= 0 || t.LLCBytes <= 0 {
		return 0
	}
	P := min(footprint, t.PrivateBytes)
	L := min(footprint, t.LLCBytes)
	warmP := survive(P, away, t.FillBytesPerUs, t.PrivateBytes)
	warmL := survive(L, away, t.FillBytesPerUs, t.LLCBytes)
	cold := L - warmL
	// The sums are in fs: 128-bit, since a costs file may give caches of
	// many GB and rates of MB/s.
	var fs u128
	switch t.Distance(from, to) {
	case SameCPU, SameCore:
		fs = mul(max(0, min(P, warmL)-warmP), t.RefillLLCFs).add(mul(cold, t.RefillMemFs))
	case SameCluster, SameLLC:
		fs = mul(min(P, warmL), t.RefillLLCFs).add(mul(cold, t.RefillMemFs))
	default:
		na, nb := t.cpus[to].node, t.cpus[from].node
		if memNode < 0 {
			memNode = int(nb)
		}
		var far, remote int64 = t.RefillMemFs, 1024
		if t.RefillFarFs != nil {
			far = t.RefillFarFs[na][nb]
		}
		if t.RemoteMem1024 != nil {
			remote = t.RemoteMem1024[na][memNode]
		}
		fs = mul(warmL, far).add(mul(cold, t.RefillMemFs).mul(remote).div(1024))
	}
	return fs.div(1000000).time()
}

// survive is how many of n cached bytes are still there after away, with
// other work filling a cache of size bytes at fill bytes per µs:
// n·exp(−away·fill/size) = n·2^(−s/32) for s = x/ln2·32 steps, Decay32 at
// the whole steps around s and linear between them (within 6·10^−5 of
// exp; whole steps alone would count up to 2.2 % of n as still cached).
func survive(n int64, away engine.Time, fill, size int64) int64 {
	if away <= 0 || fill <= 0 {
		return n
	}
	// exp(-x) = 0.5^(x/ln2); halvings in 1/32 steps: x/ln2·32, with
	// ln2 = 45426/65536 and x = away[ns]·fill[B/µs]/(size[B]·1000).
	den := mul(size, 1000*45426).div(32 * 65536).int64()
	if den <= 0 {
		return 0
	}
	if int64(away) > den*(decaySteps*63+1)/fill {
		return 0
	}
	x := int64(away) * fill
	steps, r := x/den, x%den
	at := func(s int64) int64 {
		if s == 0 {
			return n // the table's first entry is 1 − 2^−32
		}
		return int64(Decay32(uint64(n), uint64(s)))
	}
	d0, d1 := at(steps), at(steps+1)
	return d0 - mul(d0-d1, r).div(den).int64()
}

// u128 is an unsigned 128-bit integer, for products of byte counts and
// femtoseconds that may pass 2^63.
type u128 struct{ hi, lo uint64 }

// mul is a·b for non-negative a and b.
func mul(a, b int64) u128 {
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	return u128{hi, lo}
}

func (x u128) add(y u128) u128 {
	lo, c := bits.Add64(x.lo, y.lo, 0)
	hi, _ := bits.Add64(x.hi, y.hi, c)
	return u128{hi, lo}
}

// mul multiplies by m ≥ 0, saturating at 2^128−1.
func (x u128) mul(m int64) u128 {
	h1, lo := bits.Mul64(x.lo, uint64(m))
	h2, l2 := bits.Mul64(x.hi, uint64(m))
	hi, c := bits.Add64(h1, l2, 0)
	if h2 != 0 || c != 0 {
		return u128{math.MaxUint64, math.MaxUint64}
	}
	return u128{hi, lo}
}

// div is x/d, rounded down, for d > 0.
func (x u128) div(d int64) u128 {
	q1, r := x.hi/uint64(d), x.hi%uint64(d)
	q0, _ := bits.Div64(r, x.lo, uint64(d))
	return u128{q1, q0}
}

// int64 is x, saturating at the largest int64.
func (x u128) int64() int64 {
	if x.hi != 0 || x.lo > math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(x.lo)
}

func (x u128) time() engine.Time { return engine.Time(x.int64()) }

// decaySteps is the number of steps per halving in Decay32.
const decaySteps = 32

// halvingInv is (2^32−1)·2^(−i/32): the same series as PELT's
// runnable_avg_yN_inv (sched-pelt.h, y^32 = 1/2), whose arithmetic
// Decay32 repeats (internal/sched checks that the two agree).
var halvingInv = [decaySteps]uint32{
	0xffffffff, 0xfa83b2da, 0xf5257d14, 0xefe4b99a, 0xeac0c6e6, 0xe5b906e6,
	0xe0ccdeeb, 0xdbfbb796, 0xd744fcc9, 0xd2a81d91, 0xce248c14, 0xc9b9bd85,
	0xc5672a10, 0xc12c4cc9, 0xbd08a39e, 0xb8fbaf46, 0xb504f333, 0xb123f581,
	0xad583ee9, 0xa9a15ab4, 0xa5fed6a9, 0xa2704302, 0x9ef5325f, 0x9b8d39b9,
	0x9837f050, 0x94f4efa8, 0x91c3d373, 0x8ea4398a, 0x8b95c1e3, 0x88980e80,
	0x85aac367, 0x82cd8698,
}

// Decay32 is val·2^(−n/32) in integers, as pelt.c:decay_load computes
// y^n: 0 beyond 63 halvings.
func Decay32(val, n uint64) uint64 {
	if n > decaySteps*63 {
		return 0
	}
	if n >= decaySteps {
		val >>= n / decaySteps
		n %= decaySteps
	}
	hi, lo := bits.Mul64(val, uint64(halvingInv[n]))
	return lo>>32 | hi<<32
}

// SMTSpeed is the speed s of a thread (any fixed-point unit) while its
// SMT sibling runs a task: s × smt_factor; s otherwise.
func (t *Table) SMTSpeed(s int64, siblingBusy bool) int64 {
	if siblingBusy && t.SMTShare > 0 {
		return s * t.SMTShare >> 10
	}
	return s
}

// RemoteMemSpeed is the speed s of memory-bound work running on a CPU of
// node cpuNode whose memory is on memNode: s divided by the remote-memory
// factor (1 locally; remote_mem_factor for the farthest node).
func (t *Table) RemoteMemSpeed(s int64, cpuNode, memNode int) int64 {
	if memNode < 0 || memNode == cpuNode || t.RemoteMem1024 == nil {
		return s
	}
	return s * 1024 / t.RemoteMem1024[cpuNode][memNode]
}

// ScaleWork converts work w, in ns at capacity 1024 and maximum frequency,
// into time on a CPU of capacity capacityOrig (arch_scale_cpu_capacity)
// running at freqScale/1024 of its maximum frequency
// (arch_scale_freq_capacity; 0 means 1024). It is the rule for every
// parameter marked scaled: kernel and user work take longer on a smaller
// or slower CPU in proportion, time = w × 1024/capacity × 1024/freq_scale.
// Latencies (IPIs, idle exits, cache-line transfers) and bandwidths are
// not scaled. The load balancer charges its work this way; the running
// task's work (system calls, context switches, refill) progresses at the
// CPU's speed, which follows the same rule.
func ScaleWork(w engine.Time, capacityOrig, freqScale uint64) engine.Time {
	if w <= 0 {
		return 0
	}
	if capacityOrig == 0 {
		capacityOrig = 1024
	}
	t := w * 1024 / engine.Time(capacityOrig)
	if freqScale != 0 && freqScale != 1024 {
		t = t * 1024 / engine.Time(freqScale)
	}
	return t
}

// lerp interpolates; the conversion keeps the compiler from fusing the
// multiply-add (which some architectures would round differently).
func lerp(a, b, f float64) float64 { return a + float64((b-a)*f) }
