package costmodel

import (
	"fmt"
	"math"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"github.com/schedlab/schedlab/internal/engine"
)

// Params is every cost parameter of one machine. Each field's tag gives its
// name in machine and costs files (`cost`), its unit, the range a file may
// set it to, whether it is kernel or user work that scales with the CPU's
// speed (`work:"scaled"`, see ScaleWork) and, on the first field of a group,
// the group's title in the tables.
//
// Work parameters are in ns on a CPU of capacity 1024 running at its
// maximum frequency (the machine's biggest CPU); latencies, bandwidths and
// sizes do not scale.
//
// Sources says where each value comes from, by parameter name: a datasheet,
// a published microbenchmark (with its citation), "calibration", an
// estimate, or the file and line that set it.
type Params struct {
	// Name is the preset whose defaults these are ("generic" for the
	// default of host and YAML machines).
	Name string
	// Sources maps each parameter name to where its value comes from.
	Sources map[string]string

	// ContextSwitch is the direct cost of one voluntary switch between two
	// threads of one process on one CPU: __schedule, pick_next_task,
	// context_switch/switch_to, including the waker's local
	// try_to_wake_up (enqueue and wakeup preemption check). Not the cache
	// refill afterwards (CacheRefill).
	ContextSwitch engine.Time `cost:"context_switch_ns" unit:"ns" range:"0,1e7" work:"scaled" group:"Kernel entry, switches and IPC"`
	// ContextSwitchMM is the extra cost when the next task has another
	// address space (switch_mm: page-table base write, TLB and
	// ASID/PCID effects); hackbench -P pays it, -T does not.
	ContextSwitchMM engine.Time `cost:"context_switch_mm_ns" unit:"ns" range:"0,1e7" work:"scaled"`
	// Syscall is the entry and exit of a null system call (getppid).
	Syscall engine.Time `cost:"syscall_ns" unit:"ns" range:"0,1e7" work:"scaled"`
	// FgetShared is what a system call on a descriptor costs more when
	// the caller's descriptor table is shared with other threads:
	// fdget's __fget_files (the RCU lookup and the atomic increment of
	// the file's f_count) and fdput's fput (its decrement), instead of
	// __fget_light's borrowed reference (fs/file.c). Not the transfer of
	// the f_count line from another CPU (line_*_ns, model_kobj_lines).
	FgetShared engine.Time `cost:"fget_shared_ns" unit:"ns" range:"0,1e6" work:"scaled"`
	// PipeWrite is write(2) of a small message to a pipe, without the
	// copy (PipeByte) and without waking anyone.
	PipeWrite engine.Time `cost:"pipe_write_ns" unit:"ns" range:"0,1e7" work:"scaled"`
	// PipeRead is read(2) of a small message from a pipe that holds data,
	// without the copy.
	PipeRead engine.Time `cost:"pipe_read_ns" unit:"ns" range:"0,1e7" work:"scaled"`
	// PipeByte is the copy cost per byte, charged to the writer and again
	// to the reader.
	PipeByte float64 `cost:"pipe_ns_per_byte" unit:"ns/B" range:"0,1000" work:"scaled"`
	// PipeLockShare is the share of a pipe write or read (pipe_write_ns,
	// pipe_read_ns) spent holding pipe->mutex; the copy is inside it too.
	// With model_kobj_locks a call that finds the mutex held spins until
	// its holder is done (package kobj).
	PipeLockShare float64 `cost:"pipe_lock_share" unit:"×" range:"0,1"`
	// UnixSend is a send on an AF_UNIX stream socket (skb allocation,
	// queueing), without the copy.
	UnixSend engine.Time `cost:"unix_send_ns" unit:"ns" range:"0,1e7" work:"scaled"`
	// UnixRecv is a receive on an AF_UNIX stream socket, without the copy.
	UnixRecv engine.Time `cost:"unix_recv_ns" unit:"ns" range:"0,1e7" work:"scaled"`
	// UnixByte is the socket copy cost per byte, on each side.
	UnixByte float64 `cost:"unix_ns_per_byte" unit:"ns/B" range:"0,1000" work:"scaled"`
	// TCPSend is a send on a loopback TCP socket (tbench, hackbench -i),
	// without the copy.
	TCPSend engine.Time `cost:"tcp_send_ns" unit:"ns" range:"0,1e7" work:"scaled"`
	// TCPRecv is a receive on a loopback TCP socket, without the copy.
	TCPRecv engine.Time `cost:"tcp_recv_ns" unit:"ns" range:"0,1e7" work:"scaled"`
	// TCPByte is the loopback TCP copy cost per byte, on each side.
	TCPByte float64 `cost:"tcp_ns_per_byte" unit:"ns/B" range:"0,1000" work:"scaled"`
	// RemoteEnqueue is the waker's extra work when the wakee goes to
	// another CPU's runqueue: the remote rq lock or the wake list
	// (ttwu_queue_wakelist), the remote cache lines of its rq, sending the
	// IPI.
	RemoteEnqueue engine.Time `cost:"remote_enqueue_ns" unit:"ns" range:"0,1e7" work:"scaled"`

	// Poll is poll(2) of one descriptor that has data (hackbench's
	// children wait for the start with it).
	Poll engine.Time `cost:"poll_ns" unit:"ns" range:"0,1e7" work:"scaled" group:"Other system calls, processes and threads"`
	// Futex is one futex(2) wait or wake (schbench's threads).
	Futex engine.Time `cost:"futex_ns" unit:"ns" range:"0,1e7" work:"scaled"`
	// Clock is clock_gettime or gettimeofday through the vDSO.
	Clock engine.Time `cost:"clock_ns" unit:"ns" range:"0,1e7" work:"scaled"`
	// Fork is fork(2) in the parent (copying the address space).
	Fork engine.Time `cost:"fork_ns" unit:"ns" range:"0,1e8" work:"scaled"`
	// ThreadCreate is pthread_create(3) (clone with CLONE_VM).
	ThreadCreate engine.Time `cost:"thread_create_ns" unit:"ns" range:"0,1e8" work:"scaled"`
	// ThreadStart is a new thread's own CPU time on its first run, before
	// its program's first system call: ret_from_fork and schedule_tail,
	// the return to user space, the C library's thread start (TLS, rseq
	// and robust-list registration, the signal mask) and the first
	// touches of its stack, on the cold caches of the CPU it was placed
	// on. hackbench's children pay it before their ready write.
	ThreadStart engine.Time `cost:"thread_start_ns" unit:"ns" range:"0,1e8" work:"scaled"`
	// ProcessStart is the same for a forked child process, with the
	// copy-on-write faults of the pages it writes first (its stack, the
	// C library's and the program's data).
	ProcessStart engine.Time `cost:"process_start_ns" unit:"ns" range:"0,1e8" work:"scaled"`
	// ExitProcess is the exit of a process, with its mm teardown.
	ExitProcess engine.Time `cost:"exit_process_ns" unit:"ns" range:"0,1e8" work:"scaled"`
	// ExitThread is the exit of a thread.
	ExitThread engine.Time `cost:"exit_thread_ns" unit:"ns" range:"0,1e8" work:"scaled"`
	// Reap is waitpid(2) or pthread_join(3) returning for a child that
	// has exited.
	Reap engine.Time `cost:"reap_ns" unit:"ns" range:"0,1e7" work:"scaled"`

	// IPISameLLC is the latency of a reschedule IPI from its send to the
	// handler running on a busy or polling CPU of the sender's LLC; a CPU
	// in an idle state adds that state's exit latency (IdleExit).
	IPISameLLC engine.Time `cost:"ipi_same_llc_ns" unit:"ns" range:"0,1e8" group:"Wakeup latency and idle states"`
	// IPISameCluster is the same for a CPU of the sender's cluster where
	// a cluster is smaller than its LLC (SubLLCClusters: Kunpeng 920's
	// clusters of 4 cores); IPISameLLC is then the latency to the LLC's
	// other clusters. Where clusters are their LLC it is never used.
	IPISameCluster engine.Time `cost:"ipi_same_cluster_ns" unit:"ns" range:"0,1e8"`
	// IPIOtherLLC is the same for a CPU in another LLC of the node.
	IPIOtherLLC engine.Time `cost:"ipi_other_llc_ns" unit:"ns" range:"0,1e8"`
	// IPIOtherNode is the same for a CPU on the farthest node; nearer
	// nodes interpolate in SLIT distance (see Table.IPILatency).
	IPIOtherNode engine.Time `cost:"ipi_other_node_ns" unit:"ns" range:"0,1e8"`
	// IdleExit is the exit latency used for a CPU whose machine spec lists
	// no cpuidle states (a VM without a cpuidle driver, where idle is a
	// halt to the hypervisor). When the spec lists states, their
	// exit_latency_us win and this is not used.
	IdleExit engine.Time `cost:"idle_exit_ns" unit:"ns" range:"0,1e8"`

	// PrivateCacheKiB is the largest cache private to a core (Zen3 and
	// TaiShan: the L2; Cortex-A53/A55 without a private L2: the L1D).
	PrivateCacheKiB int64 `cost:"private_cache_kib" unit:"KiB" range:"1,1e8" group:"Caches and cache lines"`
	// LLCKiB is the size of one last-level cache.
	LLCKiB int64 `cost:"llc_kib" unit:"KiB" range:"1,1e9"`
	// TaskState is the per-task state every run of a task touches beside
	// its program's own data (TaskSpec.Footprint): the task_struct's hot
	// fields, the part of the kernel stack a system call reaches, the
	// FPU/vector registers' save area restored on the return to user
	// space. It adds to every task's footprint in CacheRefill; 0 leaves
	// only the declared footprints.
	TaskState int64 `cost:"task_state_bytes" unit:"B" range:"0,1e8"`
	// CacheFillBW is how fast other running work brings new lines into a
	// cache it shares with an absent task, evicting that task's lines:
	// the turnover rate of the decay in CacheRefill.
	CacheFillBW float64 `cost:"cache_fill_gbps" unit:"GB/s" range:"0.001,1e5"`
	// RefillLLCBW is the rate at which a task refills its private cache
	// from the LLC it shares with its previous CPU.
	RefillLLCBW float64 `cost:"refill_llc_gbps" unit:"GB/s" range:"0.001,1e5"`
	// RefillOtherLLCBW is the rate at which a task pulls its warm lines
	// from another LLC of the same node (cache-to-cache transfers).
	RefillOtherLLCBW float64 `cost:"refill_other_llc_gbps" unit:"GB/s" range:"0.001,1e5"`
	// RefillOtherNodeBW is the same from the farthest node.
	RefillOtherNodeBW float64 `cost:"refill_other_node_gbps" unit:"GB/s" range:"0.001,1e5"`
	// RefillMemoryBW is the rate at which one core refills lines that no
	// cache holds any more, from local memory.
	RefillMemoryBW float64 `cost:"refill_memory_gbps" unit:"GB/s" range:"0.001,1e5"`
	// LineSameLLC is the latency of reading a cache line another CPU of
	// the same LLC has written (sd_llc_shared->has_idle_cores and
	// nr_busy_cpus, a remote rq's fields): a cache-to-cache transfer.
	LineSameLLC engine.Time `cost:"line_same_llc_ns" unit:"ns" range:"0,1e6"`
	// LineSameCluster is the same between two cores of a cluster that is
	// smaller than its LLC (SubLLCClusters: Kunpeng 920's four cores on
	// one L3 tag); where clusters are LLCs it is not used. Setting it to
	// line_same_llc_ns turns the distinction off.
	LineSameCluster engine.Time `cost:"line_same_cluster_ns" unit:"ns" range:"0,1e6"`
	// LineOtherLLC is the same when the writer is in another LLC of the
	// node.
	LineOtherLLC engine.Time `cost:"line_other_llc_ns" unit:"ns" range:"0,1e6"`
	// LineOtherNode is the same when the writer is on the farthest node.
	LineOtherNode engine.Time `cost:"line_other_node_ns" unit:"ns" range:"0,1e6"`

	// SMTFactor is a thread's speed while its SMT sibling runs, relative
	// to running alone on the core (both threads slow down by it, so the
	// core's throughput is 2×SMTFactor).
	SMTFactor float64 `cost:"smt_factor" unit:"×" range:"0.05,1" group:"Throughput sharing"`
	// MemBWCore is the memory bandwidth one thread can draw alone.
	MemBWCore float64 `cost:"mem_bw_core_gbps" unit:"GB/s" range:"0.001,1e6"`
	// MemBWLLC is the memory bandwidth all CPUs of one LLC can draw
	// together (on Zen3 the CCD's link to the I/O die).
	MemBWLLC float64 `cost:"mem_bw_llc_gbps" unit:"GB/s" range:"0.001,1e6"`
	// MemBWNode is the memory bandwidth of one NUMA node's memory.
	MemBWNode float64 `cost:"mem_bw_node_gbps" unit:"GB/s" range:"0.001,1e6"`
	// RemoteMemFactor multiplies the memory time of work whose memory is
	// on the farthest node (first-touch placement); nearer nodes
	// interpolate in SLIT distance.
	RemoteMemFactor float64 `cost:"remote_mem_factor" unit:"×" range:"1,100"`

	// SISScanCPU is select_idle_cpu/select_idle_core's cost per CPU
	// examined (available_idle_cpu reads the remote rq's lines).
	SISScanCPU engine.Time `cost:"sis_scan_cpu_ns" unit:"ns" range:"0,1e6" work:"scaled" group:"Scheduler paths"`
	// SISScanLoop is the same scan's own work per CPU examined, without
	// the remote rq line, which the kernel model charges by distance
	// instead of SISScanCPU when --sysctl model_sis_scan_lines is on.
	SISScanLoop engine.Time `cost:"sis_scan_loop_ns" unit:"ns" range:"0,1e6" work:"scaled"`
	// BalanceRqBase is the fixed part of one sched_balance_rq pass
	// (BalanceCosts.BalanceRqBase).
	BalanceRqBase engine.Time `cost:"lb_base_ns" unit:"ns" range:"0,1e7" work:"scaled"`
	// LBGroup is update_sg_lb_stats' cost per group visited
	// (BalanceCosts.SgStatsPerGroup).
	LBGroup engine.Time `cost:"lb_group_ns" unit:"ns" range:"0,1e7" work:"scaled"`
	// LBCPU is update_sg_lb_stats' cost per CPU of a group read
	// (BalanceCosts.SgStatsPerCPU).
	LBCPU engine.Time `cost:"lb_cpu_ns" unit:"ns" range:"0,1e7" work:"scaled"`
	// LBFindBusiestCPU is sched_balance_find_src_rq's cost per CPU of the
	// busiest group (BalanceCosts.FindBusiestQueuePerCPU).
	LBFindBusiestCPU engine.Time `cost:"lb_find_busiest_cpu_ns" unit:"ns" range:"0,1e7" work:"scaled"`
	// LBTask is detach_tasks' cost per task examined: can_migrate_task,
	// task_h_load (BalanceCosts.TaskExamined).
	LBTask engine.Time `cost:"lb_task_ns" unit:"ns" range:"0,1e7" work:"scaled"`
	// LBMigrate is moving one task between runqueues: detach_task and
	// attach_task under both rq locks (BalanceCosts.TaskMigrated).
	LBMigrate engine.Time `cost:"lb_migrate_ns" unit:"ns" range:"0,1e7" work:"scaled"`
	// NohzCPU is _nohz_idle_balance's loop cost per idle CPU visited
	// (BalanceCosts.NohzPerCPU).
	NohzCPU engine.Time `cost:"nohz_cpu_ns" unit:"ns" range:"0,1e7" work:"scaled"`
	// StopperSwitch is the busiest CPU's cost of an active balance: the
	// switches to the stopper thread and back
	// (BalanceCosts.StopperSwitch).
	StopperSwitch engine.Time `cost:"stopper_switch_ns" unit:"ns" range:"0,1e8" work:"scaled"`
	// BlockedAvgBase is the fixed part of one update_blocked_averages
	// call: rq lock, clock update, RT/DL/IRQ decays
	// (BalanceCosts.BlockedAvgBase).
	BlockedAvgBase engine.Time `cost:"uba_base_ns" unit:"ns" range:"0,1e7" work:"scaled"`
	// BlockedAvgCfsRq is update_blocked_averages' cost per leaf cfs_rq
	// walked: PELT decay, update_tg_load_avg (an atomic on the task
	// group's shared line), propagation to the parent
	// (BalanceCosts.BlockedAvgPerCfsRq).
	BlockedAvgCfsRq engine.Time `cost:"uba_cfs_rq_ns" unit:"ns" range:"0,1e7" work:"scaled"`
	// CpufreqUpdate is the fixed part of one cpufreq_update_util call
	// into schedutil: the policy lock, the frequency choice, a fast switch
	// (BalanceCosts.CpufreqUpdateBase).
	CpufreqUpdate engine.Time `cost:"cpufreq_update_ns" unit:"ns" range:"0,1e7" work:"scaled"`
	// CpufreqUpdateCPU is schedutil's cost per CPU of the frequency domain
	// (sugov_next_freq_shared reads every CPU's utilisation)
	// (BalanceCosts.CpufreqUpdatePerCPU).
	CpufreqUpdateCPU engine.Time `cost:"cpufreq_update_cpu_ns" unit:"ns" range:"0,1e7" work:"scaled"`

	// KthreadVmstat is one run of vmstat_update on a CPU's kworker
	// (refresh_cpu_vm_stats folding the CPU's counter deltas into the
	// zones' and the node's), with --sysctl model_kthreads=1
	// (KthreadCosts.Vmstat).
	KthreadVmstat engine.Time `cost:"kthread_vmstat_ns" unit:"ns" range:"0,1e8" work:"scaled" group:"Kernel threads"`
	// KthreadShepherdCPU is vmstat_shepherd's cost per online CPU it
	// checks for counter deltas (need_update) (KthreadCosts.ShepherdPerCPU).
	KthreadShepherdCPU engine.Time `cost:"kthread_shepherd_cpu_ns" unit:"ns" range:"0,1e7" work:"scaled"`
	// KthreadRCUGP is one run of the RCU grace-period kthread
	// (rcu_gp_kthread: a grace period's start, a force-quiescent-state
	// scan or its cleanup) (KthreadCosts.RCUGP).
	KthreadRCUGP engine.Time `cost:"kthread_rcu_gp_ns" unit:"ns" range:"0,1e8" work:"scaled"`
	// KthreadKcompactd is one proactive-compaction check of a node's
	// kcompactd that finds nothing to do (KthreadCosts.Kcompactd).
	KthreadKcompactd engine.Time `cost:"kthread_kcompactd_ns" unit:"ns" range:"0,1e8" work:"scaled"`
}

// Param describes one parameter.
type Param struct {
	Key    string // name in files and tables
	Field  string // Go field name
	Unit   string
	Group  string // title of the group it belongs to
	Scaled bool   // work that scales with CPU capacity and frequency
	// Integer parameters (ns, KiB) take whole numbers; a file's value is
	// rounded.
	Integer bool
	Min     float64
	Max     float64
	index   int
}

// Clamp keeps v inside the parameter's range.
func (q Param) Clamp(v float64) float64 { return math.Max(q.Min, math.Min(q.Max, v)) }

var params []Param
var paramByKey = map[string]*Param{}

func init() {
	t := reflect.TypeFor[Params]()
	group := ""
	for i := range t.NumField() {
		f := t.Field(i)
		key := f.Tag.Get("cost")
		if key == "" {
			continue
		}
		if g := f.Tag.Get("group"); g != "" {
			group = g
		}
		lo, hi, ok := strings.Cut(f.Tag.Get("range"), ",")
		if !ok {
			panic("costmodel: " + f.Name + " has no range")
		}
		p := Param{Key: key, Field: f.Name, Unit: f.Tag.Get("unit"), Group: group, Scaled: f.Tag.Get("work") == "scaled", index: i}
		var err1, err2 error
		p.Min, err1 = strconv.ParseFloat(lo, 64)
		p.Max, err2 = strconv.ParseFloat(hi, 64)
		if err1 != nil || err2 != nil {
			panic("costmodel: bad range on " + f.Name)
		}
		switch f.Type {
		case reflect.TypeFor[engine.Time](), reflect.TypeFor[int64]():
			p.Integer = true
		case reflect.TypeFor[float64]():
		default:
			panic("costmodel: field " + f.Name + " has an unsupported type")
		}
		if _, dup := paramByKey[key]; dup {
			panic("costmodel: duplicate parameter " + key)
		}
		params = append(params, p)
	}
	for i := range params {
		paramByKey[params[i].Key] = &params[i]
	}
}

// All lists every parameter in table order.
func All() []Param { return append([]Param(nil), params...) }

// Lookup finds a parameter by name.
func Lookup(key string) (Param, bool) {
	p, ok := paramByKey[key]
	if !ok {
		return Param{}, false
	}
	return *p, true
}

// UnknownParamError names a parameter that does not exist, with the nearest
// names as a hint.
type UnknownParamError struct{ Key string }

func (e *UnknownParamError) Error() string {
	var near []string
	for _, p := range params {
		if strings.Contains(p.Key, strings.TrimSuffix(strings.SplitN(e.Key, "_", 2)[0], "s")) {
			near = append(near, p.Key)
		}
	}
	sort.Strings(near)
	if len(near) > 0 && len(near) <= 6 {
		return fmt.Sprintf("unknown cost parameter %q (did you mean %s? 'schedlab costs' lists them all)", e.Key, strings.Join(near, ", "))
	}
	return fmt.Sprintf("unknown cost parameter %q ('schedlab costs' lists them all)", e.Key)
}

// Check validates a value for a parameter: the name must exist and the
// value lie in the parameter's range.
func Check(key string, v float64) error {
	p, ok := paramByKey[key]
	if !ok {
		return &UnknownParamError{Key: key}
	}
	if math.IsNaN(v) || v < p.Min || v > p.Max {
		return fmt.Errorf("%s must be in %s..%s %s, not %s", key, FormatNumber(p.Min), FormatNumber(p.Max), p.Unit, FormatNumber(v))
	}
	return nil
}

// Get returns a parameter's value as a float64 in its unit.
func (ps *Params) Get(key string) float64 {
	p, ok := paramByKey[key]
	if !ok {
		panic("costmodel: Get of unknown parameter " + key)
	}
	f := reflect.ValueOf(ps).Elem().Field(p.index)
	switch f.Kind() {
	case reflect.Float64:
		return f.Float()
	default:
		return float64(f.Int())
	}
}

// Set sets a parameter after checking it, recording its source.
func (ps *Params) Set(key string, v float64, source string) error {
	if err := Check(key, v); err != nil {
		return err
	}
	p := paramByKey[key]
	f := reflect.ValueOf(ps).Elem().Field(p.index)
	switch f.Kind() {
	case reflect.Float64:
		f.SetFloat(v)
	default:
		f.SetInt(int64(math.Round(v)))
	}
	if ps.Sources == nil {
		ps.Sources = map[string]string{}
	}
	ps.Sources[key] = source
	return nil
}

// Source says where a parameter's value comes from.
func (ps *Params) Source(key string) string { return ps.Sources[key] }

// Clone returns a deep copy.
func (ps *Params) Clone() *Params {
	c := *ps
	c.Sources = make(map[string]string, len(ps.Sources))
	for k, v := range ps.Sources {
		c.Sources[k] = v
	}
	return &c
}

// FormatValue prints a parameter's value the way tables and files show it.
func (ps *Params) FormatValue(key string) string { return FormatNumber(ps.Get(key)) }

// FormatNumber prints a value the way tables and files show it: whole
// numbers without a point, others to 4 significant digits.
func FormatNumber(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return strconv.FormatInt(int64(v), 10)
	}
	return strconv.FormatFloat(v, 'g', 4, 64)
}

// RoundSig3 rounds to 3 significant digits (to whole numbers at 100 and
// above): how derived defaults and calibrated values are written.
func RoundSig3(v float64) float64 {
	if v == 0 {
		return 0
	}
	if math.Abs(v) >= 100 {
		return math.Round(v)
	}
	mag := math.Pow(10, 2-math.Floor(math.Log10(math.Abs(v))))
	return math.Round(v*mag) / mag
}
