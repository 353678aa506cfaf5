package sched

import (
	"fmt"
	"github.com/schedlab/schedlab/internal/kernels"
	"reflect"
	"sort"
	"strconv"
	"strings"
)

// Settings holds every scheduler feature, sysctl and model constant of a run.
// Fields tagged `feature:"NAME"` mirror kernel/sched/features.h of the
// baseline (v6.19, v6.0 or v5.12; featuresNotIn lists what each lacks) and
// can be changed by name like /sys/kernel/debug/sched/features
// ("NO_PLACE_LAG"); fields tagged `sysctl:"name"` mirror the debugfs/sysctl
// knobs. Each field's comment gives its default per baseline.
type Settings struct {
	// Kernel is the baseline these settings started from.
	Kernel string

	// --- Algorithm family --------------------------------------------------

	// EEVDF selects the EEVDF pick/placement/preemption of v6.6+; false
	// selects CFS (v5.10–v6.5): vruntime, sched_latency, buddies.
	EEVDF bool

	// --- Timing ------------------------------------------------------------

	// HZ is the tick rate (CONFIG_HZ): 100, 250, 300 or 1000. Default 250.
	HZ int `sysctl:"hz"`

	// --- sysctls (unscaled "normalized_sysctl_*" values, ns) ---------------

	// BaseSlice is normalized_sysctl_sched_base_slice: 700000 (v6.19).
	BaseSlice uint64 `sysctl:"base_slice_ns"`
	// Latency is normalized_sysctl_sched_latency: 6 ms (CFS).
	Latency uint64 `sysctl:"latency_ns"`
	// MinGranularity is normalized_sysctl_sched_min_granularity: 0.75 ms (CFS).
	MinGranularity uint64 `sysctl:"min_granularity_ns"`
	// IdleMinGranularity is sysctl_sched_idle_min_granularity: 0.75 ms, not scaled (CFS, after v5.15: absent in 5.15.55, present in 5.17-rc5).
	IdleMinGranularity uint64 `sysctl:"idle_min_granularity_ns"`
	// WakeupGranularity is normalized_sysctl_sched_wakeup_granularity: 1 ms (CFS).
	WakeupGranularity uint64 `sysctl:"wakeup_granularity_ns"`
	// NrLatency is sched_nr_latency: 8 (CFS).
	NrLatency uint64 `sysctl:"sched_nr_latency"`
	// MigrationCost is sysctl_sched_migration_cost: 500000 ns.
	MigrationCost uint64 `sysctl:"migration_cost_ns"`
	// NrMigrate is sysctl_sched_nr_migrate: 32.
	NrMigrate int `sysctl:"nr_migrate"`
	// TunableScaling is sysctl_sched_tunable_scaling: 0 none, 1 log (default), 2 linear.
	TunableScaling int `sysctl:"tunable_scaling"`
	// ChildRunsFirst is sysctl_sched_child_runs_first (CFS): false.
	ChildRunsFirst bool `sysctl:"child_runs_first"`

	// --- sched_features ----------------------------------------------------

	GentleFairSleepers bool `feature:"GENTLE_FAIR_SLEEPERS"` // CFS: on
	StartDebit         bool `feature:"START_DEBIT"`          // CFS: on
	PlaceLag           bool `feature:"PLACE_LAG"`            // EEVDF: on
	PlaceDeadlineInit  bool `feature:"PLACE_DEADLINE_INITIAL"`
	PlaceRelDeadline   bool `feature:"PLACE_REL_DEADLINE"` // v6.12+: on
	RunToParity        bool `feature:"RUN_TO_PARITY"`      // EEVDF: on
	PreemptShort       bool `feature:"PREEMPT_SHORT"`      // v6.12+: on
	NextBuddy          bool `feature:"NEXT_BUDDY"`         // off
	PickBuddy          bool `feature:"PICK_BUDDY"`         // v6.12+: on
	LastBuddy          bool `feature:"LAST_BUDDY"`         // CFS: on
	CacheHotBuddy      bool `feature:"CACHE_HOT_BUDDY"`    // on
	DelayDequeue       bool `feature:"DELAY_DEQUEUE"`      // v6.12+: on
	DelayZero          bool `feature:"DELAY_ZERO"`         // v6.12+: on
	WakeupPreemption   bool `feature:"WAKEUP_PREEMPTION"`  // on
	TTWUQueue          bool `feature:"TTWU_QUEUE"`         // on
	SISProp            bool `feature:"SIS_PROP"`           // v5.12: on; v6.0: off; v6.19: absent
	SISUtil            bool `feature:"SIS_UTIL"`           // v6.0+: on; v5.12: absent
	WAIdle             bool `feature:"WA_IDLE"`            // on
	WAWeight           bool `feature:"WA_WEIGHT"`          // on
	WABias             bool `feature:"WA_BIAS"`            // on
	UtilEst            bool `feature:"UTIL_EST"`           // on
	UtilEstFastup      bool `feature:"UTIL_EST_FASTUP"`    // CFS: on; v6.19: absent
	AttachAgeLoad      bool `feature:"ATTACH_AGE_LOAD"`    // on
	AltPeriod          bool `feature:"ALT_PERIOD"`         // v6.0: on; v5.12, v6.19: absent
	BaseSliceFeat      bool `feature:"BASE_SLICE"`         // v6.0: on; v5.12, v6.19: absent
	NIRandom           bool `feature:"NI_RANDOM"`          // v6.19: on
	NontaskCapacity    bool `feature:"NONTASK_CAPACITY"`   // on

	// TgPropagate models the v4.10 series that propagates a sched_entity's
	// attach/detach into its task group's entity at once (patches.md §4).
	// Always on in real kernels since v4.10; the variant no-tg-propagate turns
	// it off.
	TgPropagate bool `feature:"TG_PROPAGATE"`
	// GroupSharesWeight computes a group entity's shares from its
	// queue's load.weight alone, as calc_cfs_shares did until v4.14
	// (load = cfs_rq->load.weight, tg_weight = tg->load_avg − this
	// queue's contribution + load.weight); v4.15's calc_group_shares
	// ("sched/fair: Rewrite PELT migration propagation" era) takes
	// max(load.weight, load_avg). The kernels of the v4.10 propagation
	// series (patches.md §4) had the old form, so no-tg-propagate and
	// the kernel it is compared with set it (the variant's base).
	// Every baseline: off.
	GroupSharesWeight bool `sysctl:"model_group_shares_weight"`

	// --- Model constants (documented simplifications) ----------------------

	// WakeupIPILatency is the delay, in ns, between a remote CPU being asked
	// to reschedule (resched_curr, or a queued wakeup) and it doing so,
	// when the run has no cost model; with it, the ipi_*_ns parameters
	// give the latency by distance (costmodel.Table.IPILatency).
	WakeupIPILatency uint64 `sysctl:"model_ipi_latency_ns"`

	// CostJitterPct spreads every cost the cost model charges (system
	// calls, context switches, cache refills, IPI latencies, idle-state
	// wake-ups) uniformly by
	// up to ± this many percent, drawn from the run's seed: a real machine
	// never repeats a run exactly (interrupts, cache and memory state), and
	// without this spread runs with different seeds would often be
	// identical. 0 makes every cost exact. Default 10.
	CostJitterPct uint64 `sysctl:"model_cost_jitter_pct"`

	// KobjLines makes a pipe or AF_UNIX socket operation pay for the
	// cache lines of the object that another CPU wrote last (the lock,
	// head and tail, the buffer or queue entry, the wait-queue head, and
	// for a read the data), at the cost of the distance between the two
	// CPUs (costmodel.Table.LineTransfer): the system-call costs were
	// measured with both ends on one CPU. Package kobj counts the lines.
	// On in every baseline (without the cost model every transfer is 0):
	// it brings hackbench on zen3 and Kunpeng near the published times
	// (docs/costs.md, "Kernel objects' lines").
	KobjLines bool `sysctl:"model_kobj_lines"`

	// TCPLines extends KobjLines to loopback TCP (tbench, hackbench -i):
	// a send or receive pays for the connection's lines that the other
	// end's CPU wrote last (kobj.TCPSendLines, TCPRecvLines: the sockets'
	// locks, sequence and queue lines, which each end's softirq writes in
	// the other's socket), by distance; the data's lines are not charged.
	// Off: TCP pays no lines, as when tcp_send_ns and tcp_recv_ns held an
	// average of them (fitted with the ends anywhere). On in every
	// baseline; it needs KobjLines.
	TCPLines bool `sysctl:"model_tcp_lines"`

	// LinesBeforeWake charges the lines a pipe write or a socket send
	// moves before the wakeup it issues, as the kernel touches them:
	// pipe_write (fs/pipe.c, v6.x) takes pipe->mutex, reads head and
	// tail and fills the pipe_buffer, and unlocks before
	// wake_up_interruptible_sync_poll, and only file_update_time's inode
	// line follows the wakeup; unix_stream_sendmsg and a loopback
	// tcp_sendmsg write every line they move before sk_data_ready wakes
	// the reader. The writer pays them as CPU time before the wakeup, so
	// a ping-pong's round trip waits for them (kobj.Pipe.WriteLines,
	// kobj.UnixStream.SendLines). Off: a write's lines are charged after
	// its wakeup, as before (the reader then runs while the writer pays
	// them). On in every baseline; it needs KobjLines.
	LinesBeforeWake bool `sysctl:"model_lines_before_wake"`

	// LazyMM follows each CPU's active_mm across idle (lazy TLB,
	// core.c:context_switch, v6.x): a task switched in after the idle
	// task pays context_switch_mm_ns only if the CPU last ran another
	// address space, as switch_mm does nothing for the same mm. Off:
	// every switch from idle pays it, as if the MMU had been switched to
	// the idle task's. On in every baseline.
	LazyMM bool `sysctl:"model_lazy_mm"`

	// LLCSharedLines models the LLC's sched_domain_shared, whose fields
	// share one cache line, as that line (issue 14's many-writer lines):
	// a load by test_idle_cores costs the line's transfer from its last
	// storer (costmodel.Table.LineTransfer) only when a store by another
	// CPU has invalidated this CPU's copy since it last loaded it; stores
	// are set_idle_cores's (the waker's in select_idle_cpu, an
	// idle-entering CPU's in __update_idle_core), nr_busy_cpus's
	// (set_cpu_sd_state_busy/idle) and a changed nr_idle_scan's. Only the
	// waker's are charged. Off: every load costs a transfer by distance
	// (costmodel.Table.LLCLineRead), stored to since or not. On in every
	// baseline: the quick fidelity corpus moves from median |log ratio|
	// 0.1100 to 0.1017 (docs/costs.md, "Shared lines of the wakeup path").
	LLCSharedLines bool `sysctl:"model_llc_shared_lines"`

	// RemoteEnqueueLines makes a wakeup onto another CPU pay, beside
	// remote_enqueue_ns, for the cache lines try_to_wake_up moves
	// (RemoteEnqueueTaskLines of the wakee's, which its last CPU wrote:
	// p->pi_lock and the line with __state and on_rq; RemoteEnqueueRqLines
	// of the target runqueue's, which the target CPU wrote: the lock or the
	// wake_list head, and nr_running with the clock), each at the cost of
	// the distance it crosses (costmodel.Table.LineTransfer). The waker
	// pays them all, also those the target's sched_ttwu_pending would
	// take after a queued wakeup (a simplification: they lengthen the
	// wakee's latency there, the waker's run here). Off: only
	// remote_enqueue_ns is charged (with it set to 300 on zen3, the flat
	// cost that stood for the lines inside a CCX before they were
	// charged by distance). On in every baseline.
	RemoteEnqueueLines bool `sysctl:"model_remote_enqueue_lines"`

	// NohzRdLines models the balancer's other many-writer cache lines as
	// cache lines (issue 14's, the way LLCSharedLines models
	// sd_llc_shared): fair.c's global nohz structure (nr_cpus,
	// has_blocked, needs_update, next_balance, next_blocked: one line),
	// nohz.idle_cpus_mask (a line of its own, as with
	// CONFIG_CPUMASK_OFFSTACK, which distribution kernels set) and the
	// root domain's overloaded and overutilized flags (one line). A load
	// costs the line's transfer from its last storer
	// (costmodel.Table.LineTransfer) only when another CPU's store has
	// invalidated this CPU's copy since it last loaded it. Stores are
	// nohz_balance_enter_idle's and _exit_idle's, kick_ilb's
	// next_balance, _nohz_idle_balance's, add_nr_running's
	// set_rd_overloaded (a change only) and update_sd_lb_stats' at the
	// root domain (a change only; always in v6.0 and v5.12,
	// RdFlagsV60); loads are nohz_balancer_kick's at every busy tick,
	// find_new_ilb's, the ILB's walk, nohz_newidle_balance's, the
	// newidle gate's and set_rd_overloaded's. Whoever the CPU works for
	// pays: the running task for a busy tick or an enqueue
	// (Kernel.Charge), the pass for balancing work; an idle CPU's
	// accesses (entering NOHZ, a queued wakeup's enqueue on it) cost
	// nobody. Off: these lines cost nothing. Off in every baseline: with
	// it the quick fidelity corpus's median |log ratio| rises from 0.1017
	// to 0.1154 at 3 seeds (it falls from 0.1069 to 0.1063 at 10, and
	// one more significant published delta gets its sign), HiKey's v5.12
	// hackbench points 9% slower (docs/costs.md, "Shared lines of the
	// wakeup path").
	NohzRdLines bool `sysctl:"model_nohz_rd_lines"`
	// RdFlagsV60 gives the root domain's line the accesses v6.10 removed
	// ("sched/fair: Add EAS checks before updating root_domain::
	// overutilized" and "sched/fair: Check root_domain::overload value
	// before update", Shrikanth Hegde): update_sd_lb_stats at the root
	// domain stores overload and overutilized whether they changed or
	// not, and below it stores overutilized when a CPU of the domain is
	// overutilized (its CFS utilisation above 80% of its capacity);
	// every wakeup's enqueue and every busy tick load overutilized
	// (update_overutilized_status) and store it when their CPU is
	// overutilized and the flag is not set. Without an energy model the
	// flag changes no decision; it costs only with NohzRdLines. v6.19:
	// off (both go through helpers that store a change only, and
	// overutilized is touched only with EAS); v6.0, v5.12: on.
	RdFlagsV60 bool `sysctl:"model_rd_flags_v60"`

	// PipeWakeWriterV60 is pipe_read's writer wakeup before v6.14
	// (kernels difference pipe-wake-writer): a read wakes a writer
	// waiting for room whenever the pipe was full when the read began,
	// although a read of less than a whole pipe_buffer frees no slot and
	// the writer, its wait_event condition still false, sleeps again.
	// Off (v6.19), a read wakes a writer only when it empties a buffer
	// while the pipe is full (aaec5a95d596, "pipe_read: don't wake up
	// the writer if the pipe is still full", v6.14), as
	// internal/workload/kobj's Pipe.Read does.
	PipeWakeWriterV60 bool `sysctl:"model_pipe_wake_writer_v60"`

	// ForkBalanceCost charges the task that forks or execs (and a waker
	// on a domain with SD_BALANCE_WAKE) for the slow path of
	// select_task_rq_fair: sched_balance_find_dst_group reads the load,
	// util, nr_running and idle state of every CPU of each domain it
	// balances at, and sched_balance_find_dst_group_cpu those of the
	// chosen group, at the load balancer's lb_group_ns and lb_cpu_ns
	// (costmodel, docs/costs.md). On zen3-2s-nps1 that is 418 CPUs and
	// 27 µs for a first fork (TestForkBalanceCost). Off in every baseline:
	// on, the quick fidelity corpus gets worse (median |log ratio| 0.110
	// → 0.119; zen3 perf bench messaging at 1 and 2 groups 10–25% faster,
	// further from the published times), so what else is wrong at the
	// start of those runs must be found first (docs/workloads.md,
	// hackbench). Without the cost model it costs nothing.
	ForkBalanceCost bool `sysctl:"model_fork_balance_cost"`

	// KobjLocks makes the calls on one pipe serialise on its
	// pipe->mutex: a call holds it for the last pipe_lock_share of its
	// cost and the copy (costmodel.Syscalls.PipeLockHold), and a call
	// that finds it held spins (mutex_optimistic_spin) until the holder
	// is done, in arrival order. Package kobj keeps the mutex. On in
	// every baseline (docs/costs.md, "Kernel objects' locks").
	KobjLocks bool `sysctl:"model_kobj_locks"`

	// SharedFdTable makes a system call on a descriptor pay for the
	// reference that fdget takes on its struct file when the caller's
	// descriptor table is shared with other threads (fs/file.c
	// __fget_light, v5.12–v6.19: a process whose files_struct has one
	// user borrows the file without touching it; threads take and drop
	// f_count): fget_shared_ns, plus the f_count line's transfer from the
	// CPU that last took a reference on that file (with KobjLines).
	// hackbench -T pays it on every read, write and poll, -P does not.
	// On in every baseline (docs/costs.md, "Shared descriptor tables").
	SharedFdTable bool `sysctl:"model_shared_fdtable"`

	// BalancePhase starts each sched domain's last_balance at a seeded
	// point of its balance interval before boot's jiffy instead of at it:
	// on a kernel that has been up a while, every CPU balanced each level
	// last at its own time (rebalance_domains and load_balance set
	// sd->last_balance when that CPU balanced it), so the idle CPUs of one
	// level do not all come due in the same jiffy as on a fresh boot, where
	// sd_init gives every domain last_balance = jiffies. Drawn from the
	// run's "balance_phase" stream (per CPU, bottom-up), uniformly in
	// [0, balance_interval] jiffies; balance_interval itself stays sd_init's
	// (a warm kernel may have doubled it on balanced passes: not modelled).
	// On in every baseline: a cold start made the 160 threads of hackbench
	// -g 4 on zen3 wait for one package-level balance ~400 ms in before
	// they spread past 6 of the 16 LLCs (docs/costs.md, "Balance phase").
	BalancePhase bool `sysctl:"model_balance_phase"`

	// WarmLLCShared starts each sd_llc_shared's nr_idle_scan (SIS_UTIL)
	// at the value update_idle_cpu_scan stores for an idle LLC, its
	// llc_weight, instead of the zero of a fresh allocation: on a kernel
	// that has been up a while, the last periodic balance of the LLC
	// domain (never a newly idle one) saw the idle machine's utilisation,
	// sum_util ≈ 0, and left the whole LLC to scan. With the zero, every
	// wakeup before the first such balance returns from select_idle_cpu
	// at once ("nr == 1"), so a benchmark's first wakeups stack their
	// tasks on busy targets though the LLC is idle, and what the later
	// scans (from target + 1) make of the stacks decides where pairs
	// settle: tbench's pairs on a Kunpeng 920 node all came to share a
	// cluster under tip, where sis-cluster has nothing left to gain
	// (docs/costs.md, "Warm sd_llc_shared"). A simplification as
	// BalancePhase is: the value is the idle machine's, not that of
	// whatever the machine ran last. With SMT it also starts
	// has_idle_cores set, as the idle machine's CPUs left it
	// (__update_idle_core on each idle entry; only a fruitless idle-core
	// scan clears it), where a fresh allocation has it clear until the
	// first CPU goes idle. On in every baseline; 0 gives the boot state.
	WarmLLCShared bool `sysctl:"model_warm_llc_shared"`

	// TbenchConnect sets tbench up as dbench 4.00 and its tbench_srv do:
	// the parent forks the clients one after another; each client
	// connects to the listener as soon as it runs (the loopback
	// handshake wakes the listener in accept(2), with WF_SYNC, from the
	// client's CPU), then waits at the start barrier; the listener
	// forks that client's server from wherever the wakeup put it; and
	// the parent polls the barrier every 100 ms and releases the clients
	// at the first poll that finds all of them waiting (dbench.c
	// create_procs, tbench_srv.c listener). Where the servers start
	// decides where the pairs begin. Off: the listener forks all the
	// servers from the start, one after another, without waiting for a
	// connection, while the parent forks the clients, and the last
	// client to be prepared releases them at once (the model before). On
	// in every baseline: it is the benchmark's, not a kernel's.
	TbenchConnect bool `sysctl:"model_tbench_connect"`

	// TbenchRecv makes tbench's receives dbench 4.00's: each side reads
	// an operation's 4-byte header, then its body, in two calls
	// (tbench_srv.c server, sockio.c do_packets), and the client takes
	// the reply's body with MSG_TRUNC, which TCP drops without a copy
	// (tcp_recvmsg_locked copies only without MSG_TRUNC). A call's work
	// is paid once the data it waits for has arrived: the header read
	// blocks in sk_wait_data before its work, so a receive is on the
	// round trip's path wherever the two ends run. Off: one receive a
	// side, copying the whole message, paid before the data is looked
	// for, so that a receiver on another CPU pays it while its peer
	// still works. Off in every baseline for now, though it is the
	// benchmark's way: the tcp_* costs were fitted with it off, and
	// refitted with it on (1600/400 ns on Zen3) they leave the corpus's
	// saturated tbench rows, a pair a CPU and more, 17–20% higher than
	// they already are (docs/workloads.md, "Receives as dbench makes
	// them").
	TbenchRecv bool `sysctl:"model_tbench_recv"`

	// ShareSgStats lets a balancing pass reuse the per-CPU sums that an
	// earlier pass's update_sg_lb_stats made of the same group while
	// none of the group's CPUs has changed since (balance_share.go), for
	// groups of at least this many CPUs; 0 shares none and recomputes
	// every group on every pass, as schedlab did before. The statistics
	// are the same either way, and so is every output: only the
	// simulator's own time changes (the pass charges the same work).
	// 8 in every baseline: a smaller group's sums cost about as much to
	// look up as to make (docs/performance.md, "Shared group
	// statistics").
	ShareSgStats int `sysctl:"model_share_sg_stats"`

	// CpufreqGovernor is the cpufreq governor when the cost model is on:
	// "performance", "schedutil", or "" for the machine's own
	// (cpufreq_governor in its spec: performance on the Kunpeng servers)
	// or else its architecture's usual default (performance on x86,
	// schedutil on arm64 phones and boards). CpufreqRateLimit is schedutil's
	// rate_limit_us, in ns (default 1 ms).
	CpufreqGovernor  string `sysctl:"model_cpufreq_governor"`
	CpufreqRateLimit uint64 `sysctl:"model_cpufreq_rate_limit_ns"`

	// IdleWakeActual makes a wakeup of an idle CPU take the hardware's
	// measured wake time of its idle state (topology.IdleState.WakeNs),
	// while the governor, find_idlest_group_cpu and PM QoS keep deciding
	// with the advertised exit latency, as on a real machine. Off: the
	// wakeup takes the advertised exit latency, as schedlab did before.
	// Only with the cost model.
	IdleWakeActual bool `sysctl:"model_idle_wake_actual"`
	// IdleDisable names idle states switched off on every CPU, comma
	// separated (cpupower idle-set -d; --idle-disable NAME), on top of
	// the machine file's idle_disable.
	IdleDisable string `sysctl:"model_idle_disable"`
	// IdleLatencyLimitUs is a PM QoS CPU latency request in µs
	// (/dev/cpu_dma_latency held open; --latency-limit US); -1 is none.
	// With the machine file's latency_limit_us the smaller one holds.
	IdleLatencyLimitUs int `sysctl:"model_idle_latency_limit_us"`

	// SkewTick mirrors the boot parameter skew_tick=1
	// (tick-sched.c:tick_setup_sched_timer, v5.12–v6.19): each CPU's tick
	// is offset from the jiffy boundary by TICK_NSEC/2 / nr_possible_cpus
	// × its CPU number, so the CPUs' ticks, and the periodic balancing
	// they trigger, do not all fall on one instant. Off in every baseline,
	// as the kernel's default (sched_skew_tick = 0) leaves every CPU's
	// tick on the jiffy boundary (a restarted tick keeps its CPU's phase,
	// tick_nohz_restart's hrtimer_forward from last_tick).
	SkewTick bool `sysctl:"model_skew_tick"`

	// Kthreads adds the kernel threads of a machine beside the workload
	// (package kthreads, added by the run pipeline): 0 none (every
	// baseline's default, as schedlab ran before), 1 those of a quiet
	// server: per CPU the vmstat kworker (vmstat_update, a deferrable
	// work every sysctl_stat_interval on a busy CPU) and the softlockup
	// watchdog's stopper every 4 s; vmstat_shepherd's kworker, the RCU
	// grace-period kthread and one kcompactd per node. The kernel model
	// itself does not read it.
	Kthreads int `sysctl:"model_kthreads"`

	// --- wakeup path ---

	// SISScanLines makes select_idle_cpu, select_idle_core and the
	// cluster scan pay for each CPU they examine with that CPU's runqueue
	// line at its distance from the waking CPU (available_idle_cpu reads
	// rq->curr, nr_running and ttwu_pending, which the examined CPU wrote
	// last: one line transfer, costmodel.Table.LineTransfer, nothing from
	// the same core) plus sis_scan_loop_ns for the loop's own work, and
	// SIS_PROP's avg_scan_cost takes that time. A simplification: one
	// line per CPU (idle_cpu's other loads overlap the first miss), a
	// core select_idle_core examines counts as its first CPU's line.
	// Off: a flat sis_scan_cpu_ns per CPU, whatever the distance (on
	// Zen3 30 ns, the line inside a CCX and the loop). On in every
	// baseline.
	SISScanLines bool `sysctl:"model_sis_scan_lines"`

	// SISScanInvalidate makes the CPUs a wakeup scan examined pay for
	// it too (with SISScanLines, under the cost model): the scan's reads
	// leave copies of each examined runqueue's line in the waking CPU,
	// and the examined CPU's next store to it (its rq lock, nr_running,
	// curr, at its next schedule()) waits for those copies to be
	// invalidated, as a cache-coherent store to a shared line does. The
	// wait is one transfer at the distance of the farthest CPU that read
	// the line since the last switch (invalidations go out together),
	// charged to the task the CPU switches to next (to nobody if it
	// switches to idle) as wakeup-scan time. SIS_PROP's avg_scan_cost
	// does not see it: cpu_clock() on the waking CPU cannot. A
	// simplification: the store is taken to be the next context switch;
	// enqueues onto the CPU between the scan and that switch, which take
	// the same lock, are not followed. Off: only the scanning CPU pays,
	// as until 2026-12-07. On in every baseline.
	SISScanInvalidate bool `sysctl:"model_sis_scan_invalidate"`

	// SISScanCost is the time, in ns, select_idle_cpu is taken to spend per
	// CPU it examines, which SIS_PROP measures with cpu_clock() and folds
	// into avg_scan_cost and wake_avg_idle: 25 ns without the cost model;
	// ApplyCosts sets it to sis_scan_cpu_ns, the time the scan is charged
	// (with SISScanLines under the cost model, SIS_PROP takes the charged
	// time instead and this is not read).
	SISScanCost uint64 `sysctl:"model_sis_scan_cost_ns"`

	// ShortTaskAffine, ShortTaskScan and ShortTaskMetric select the
	// short-task wakeup patches (patches.md §1, variants short-task-*):
	// where wake_affine_idle and select_idle_cpu consult is_short_task, and
	// how is_short_task decides. Off in every baseline.
	ShortTaskAffine ShortAffineMode
	ShortTaskScan   ShortScanMode
	ShortTaskMetric ShortTaskMetric
	// ShortTaskDurAvgFactor is the k of "dur_avg * k <= min_granularity"
	// when ShortTaskMetric is ShortDurAvg: 8 as from RFC v4 (whose
	// changelog lowers the threshold to min_granularity / 8).
	ShortTaskDurAvgFactor uint64

	// SISIdleCoresV512 selects v5.12's layout of the idle-core search
	// (before "sched/fair: Bring back select_idle_smt(), but differently",
	// v5.13, and "Fix clearing of has_idle_cores flag in
	// select_idle_cpu()", v5.13-rc3): select_idle_cpu itself asks
	// test_idle_cores(target) on every call, SMT or not, and scans for an
	// idle core when it answers yes; select_idle_sibling has no
	// select_idle_smt step; an idle-core scan that found nothing clears
	// has_idle_cores of the waking CPU's LLC, not target's. v5.12: on.
	SISIdleCoresV512 bool `sysctl:"model_sis_idle_cores_v512"`
	// SISPropV512 selects v5.12's SIS_PROP budget: nr = span_weight ×
	// (this_rq()->avg_idle / 512) / (avg_scan_cost + 1), at least 4, from
	// the waking CPU's avg_idle itself; v5.13's "Age the average idle
	// time" replaced it with wake_avg_idle, halved per jiffy and spent by
	// each scan. v5.12: on.
	SISPropV512 bool `sysctl:"model_sis_prop_v512"`
	// SISScanFromTarget: select_idle_cpu's scan starts at target itself
	// (v5.12–v5.14; "sched/fair: Avoid a second scan of target in
	// select_idle_cpu", v5.15, starts at target + 1). v5.12: on.
	SISScanFromTarget bool `sysctl:"model_sis_scan_from_target"`
	// RecentUsedCPU selects the p->recent_used_cpu rules of
	// select_idle_sibling: 0 (v6.2+, v6.19): the field becomes prev on
	// every fast-path wakeup and the candidate is tested against
	// p->cpus_ptr; 1 (v5.15–v6.1, v6.0): the same, but the affinity test
	// reads the already overwritten field, so it tests prev; 2 (v5.12):
	// the field becomes prev only when the candidate is used, and after
	// the fast path of an affine wakeup the waker's recent_used_cpu
	// becomes the waking CPU. The forms agree for tasks allowed
	// everywhere except v5.12's.
	RecentUsedCPU int `sysctl:"model_recent_used_cpu"`
	// WakeAffineTallyPrev is wake_affine's schedstat tally before "Fix
	// inaccurate tally of ttwu_move_affine" (39afe5d6fc59, v6.1): it
	// returns prev_cpu only when wake_affine_idle and wake_affine_weight
	// had no opinion (target == nr_cpumask_bits), so when
	// wake_affine_idle chose prev_cpu it counts ttwu_move_affine and
	// nr_wakeups_affine for a wakeup that stays on prev. The CPU it
	// returns is the same either way: only the counters differ. v6.0 and
	// v5.12: on; v6.19 counts only a move to the waking CPU.
	WakeAffineTallyPrev bool `sysctl:"model_wake_affine_tally_prev"`
	// TTWUQueueIdleTarget: ttwu_queue_cond also queues a wakeup on the
	// wake list of an idle CPU of the waker's LLC, and never on a CPU
	// outside p->cpus_ptr (v6.0: "sched: Remove the limitation of
	// WF_ON_CPU on wakelist if wakee cpu is idle"). Off (v5.12): only
	// wakeups across LLCs are queued (the WF_ON_CPU case, a task still
	// switching out on its CPU, does not arise: a switch is atomic here).
	TTWUQueueIdleTarget bool `sysctl:"model_ttwu_queue_idle_target"`
	// TestIdleCoresSMTCheck is Barry Song's "Optimize test_idle_cores() for
	// !SMT" (v5.13): test_idle_cores answers its default without reading
	// sd_llc_shared when sched_smt_present is false. Off in every
	// baseline (v6.0 and v6.19 no longer call it on !SMT machines at all;
	// the variant idle-cores-nosmt turns it on over v5.12).
	TestIdleCoresSMTCheck bool
	// SISNode is Peter Zijlstra's "sched/fair: Multi-LLC
	// select_idle_sibling()" (tip sched/core c7dfd6b9122d, 2023; reverted
	// before v6.5): when the LLC has no idle CPU, select_idle_sibling
	// scans the other LLCs of the LLC's parent domain if that is not a
	// NUMA level (selectIdleNode). The patch's SCHED_FEAT(SIS_NODE, true)
	// is not a schedlab feature flag, since no baseline has it: the
	// variant sis-node sets this.
	SISNode bool
	// SISCluster is Yicong Yang's "sched/fair: Scan cluster before
	// scanning LLC in wake-up path" (v9, <20230719092838.2302-3-yangyicong@huawei.com>,
	// on v6.5-rc1; merged for v6.6, so v6.19 has it) with its first patch,
	// "sched: Add cpus_share_resources API": the CLS level gets SD_CLUSTER
	// and sd_share_id (topology.Options.ClusterFlag, which
	// TopologyOptions sets from this), which turns on what v6.19's
	// select_idle_sibling and select_idle_cpu do on cluster machines:
	// prev and recent_used_cpu are taken at once only inside target's
	// cluster, target's cluster is scanned before the rest of the LLC, and
	// a cache-affine prev or recent CPU outside it is the fallback. The
	// variant sis-cluster sets this on v6.0.
	SISCluster bool
	// ClusterLevel is Barry Song's RFC v2 "scheduler: add scheduler level
	// for clusters" (<20201201025944.18260-3-song.bao.hua@hisilicon.com>,
	// Dec 2020, on v5.10-rc; merged in another form for v5.16): a CLS
	// level between SMT and MC from cpu_clustergroup_mask with
	// cpu_core_flags() (topology.Options.ClusterLevel, which
	// TopologyOptions sets from this; the LLC stays MC's), and
	// select_idle_cluster, a scan of target's cluster before
	// select_idle_cpu's of the LLC (selectIdleCluster). The variant
	// cluster-level sets this on v5.12.
	ClusterLevel bool
	// SISNodeLimit is Peter Zijlstra's limit on SISNode's search, posted
	// on top of tip sched/core on 2023-06-01
	// (<20230601111326.GV4253@hirez.programming.kicks-ass.net>; never
	// merged): select_idle_node starts with "int nr = 4" and gives up
	// ("if (!--nr) return -1") after each fourth other LLC it scanned
	// without finding a CPU (selectIdleNode). It acts only with SISNode
	// (Validate). The hack has no sched_feat, and no baseline has it: the
	// variant sis-node-limit sets it with SISNode. Off in every baseline.
	SISNodeLimit bool
	// SyncInTaskOnly is Libo Chen's "sched/fair: no sync wakeup from
	// interrupt context" (<20220711224704.1672831-1-libo.chen@oracle.com>,
	// July 2022; applied to tip sched/core as 14b3f2d9ee8d "sched/fair:
	// Disallow sync wakeup from interrupt context" and reverted after AMD's
	// tbench report): select_task_rq_fair takes WF_SYNC only when
	// in_task(), so a sync wakeup from hardirq or softirq context, such as
	// every loopback TCP wakeup from the network softirq (Kernel.InTask),
	// reaches wake_affine as not sync. The patch has no sched_feat: the
	// variant no-sync-irq sets it over v6.0. Off in every baseline.
	SyncInTaskOnly bool
	// SISUtilV1 is Chen Yu's "sched: Stop searching for idle cpu if the
	// LLC domain is overloaded" (RFC on the v5.17-rc tip,
	// <20220207034013.599214-1-yu.c.chen@intel.com>; SIS_UTIL's first
	// form, never merged): periodic (not newly idle) balancing of the LLC
	// domain stores in sd_llc_shared whether the LLC is overloaded,
	// total_capacity × 100 < sum_util × imbalance_pct (85 % for pct 117;
	// SchedDomainShared.Overloaded, updateLLCOverloaded), and
	// select_idle_cpu returns -1 before any scan, the idle-core scan
	// included, while target's LLC is marked overloaded. The RFC has no
	// sched_feat: the variant sis-util-v1 sets this over v6.0 with
	// SIS_PROP on and SIS_UTIL off, as its tip had them. Off in every
	// baseline.
	SISUtilV1 bool
	// SISUtilV2 is Chen Yu's "[PATCH v2][RFC] sched/fair: Change SIS_PROP
	// to search idle CPU based on sum of util_avg" (on the v5.17-rc tip,
	// <20220310005228.11737-1-yu.c.chen@intel.com>; never merged):
	// periodic balancing of the LLC domain stores max(4, llc_size −
	// (llc_size − 4) × 2 × sum_util / total_capacity) in sd_llc_shared's
	// nr_idle_scan (updateNrIdleScan), and SIS_PROP's budget in
	// select_idle_cpu is that nr_idle_scan in place of the
	// wake_avg_idle/avg_scan_cost estimate, whose bookkeeping after the
	// scan is gone; the idle-core scan stays unbounded. SIS_UTIL, which
	// came later and writes the same nr_idle_scan, must be off
	// (Validate). The RFC has no sched_feat of its own: the variant
	// sis-util-v2 sets this over v6.0 with SIS_PROP on and SIS_UTIL off,
	// as its tip had them. Off in every baseline.
	SISUtilV2 bool

	// --- load balancing ---
	// Differences between the baselines' load balancers, and
	// the blocked-load variants of patches.md §3. Each is a model switch,
	// settable by its sysctl-style name.

	// LBSerializeInBalanceRq: the SD_SERIALIZE token (NUMA levels) is taken
	// in sched_balance_rq after should_we_balance, and a busy token counts
	// as "balanced" (v6.19: on); off, rebalance_domains takes it and skips
	// the domain when busy (v6.0).
	LBSerializeInBalanceRq bool `sysctl:"model_lb_serialize_in_balance_rq"`
	// LBSMTAware: the v6.6 SMT/cluster balancing changes (v6.19: on):
	// should_we_balance prefers an idle CPU on a fully idle core, the
	// group_smt_balance type, SMT-vs-non-SMT preferences in
	// update_sd_pick_busiest, sibling_imbalance (tasks per core, 0 for a
	// busy balancer) and prefer_sibling taken from the busiest group.
	// Off: v6.0's first idle CPU, task-count difference and the child
	// domain's SD_PREFER_SIBLING (v6.0).
	LBSMTAware bool `sysctl:"model_lb_smt_aware"`
	// LBLocalAboveAvg: calculate_imbalance gives up when the local group
	// is already above the domain's average load (v6.2–v6.5: absent in
	// 6.1-rc7, present in 6.5; v6.19: on).
	LBLocalAboveAvg bool `sysctl:"model_lb_local_above_avg"`
	// LBUtilBoost is runnable boosting ("sched/fair, cpufreq: Introduce
	// 'runnable boosting'", 7d0583cf9ec7, v6.5): find_busiest_queue
	// compares cpu_util_cfs_boost (utilisation raised to runnable) for
	// migrate_util, and schedutil asks for it too (v6.19: on; v6.0 and
	// v5.12 read cpu_util_cfs in both).
	LBUtilBoost bool `sysctl:"model_lb_util_boost"`
	// LBMisfitNoFailCount: misfit migrations neither count balance
	// failures nor back the interval off (after v6.9; v6.19: on).
	LBMisfitNoFailCount bool `sysctl:"model_lb_misfit_no_fail_count"`
	// MisfitMaxAllowed exempts a task already on the biggest CPU it may
	// use (p->max_allowed_capacity) from update_misfit_status ("Check if
	// a task has a fitting CPU when updating misfit", v6.10). Without it
	// (v6.0, v5.12) a task too big for its CPU is misfit there whatever
	// its affinity allows, and the balancer keeps trying to move it.
	// v6.19: on.
	MisfitMaxAllowed bool `sysctl:"model_misfit_max_allowed"`
	// NewidleStopOnNoContinue: newidle balance stops walking up when
	// should_we_balance cleared continue_balancing (v6.19: on; v6.0
	// stopped only when a task was pulled or arrived).
	NewidleStopOnNoContinue bool `sysctl:"model_newidle_stop_on_no_continue"`
	// NewidleNohzStats selects the blocked-load paths from before v5.13's
	// "move update blocked load outside newidle_balance" (Vincent
	// Guittot's series, 0826530de3cb and the four after it): a newly idle
	// balance refreshes every idle CPU's blocked load it reads in
	// update_sg_lb_stats (LBF_NOHZ_STATS), or right away when its gate
	// fails (nohz_newidle_balance running _nohz_idle_balance), the ILB
	// forces its updates and refreshes itself after the others, and the
	// idle loop has no nohz_run_idle_balance. v5.12: on; v6.0, v6.19: off.
	// The variant blocked-load-outside-newidle turns it off over v5.12.
	NewidleNohzStats bool `sysctl:"model_newidle_nohz_stats"`
	// NewidleV512 selects v5.12's newly idle balance and
	// max_newidle_lb_cost bookkeeping, before Vincent Guittot's series of
	// October 2021 (v5.16): the gate is avg_idle <
	// sysctl_sched_migration_cost (not max_newidle_lb_cost), the
	// blocked-load update before the domain walk is not part of the first
	// domain's cost, a domain's cost only raises its max_newidle_lb_cost,
	// and sched_balance_domains decays every max_newidle_lb_cost by
	// 253/256 once a second whether or not it was raised (the decay flag
	// stays set for the domains above). v5.12: on.
	NewidleV512 bool `sysctl:"model_newidle_v512"`
	// NewidleTTWUPendingExit: newly idle balance returns at once when a
	// wakeup is pending on the CPU, and stops walking up when one arrives
	// ("sched,fair: Skip newidle_balance if a wakeup is pending", v5.14).
	// v6.0, v6.19: on.
	NewidleTTWUPendingExit bool `sysctl:"model_newidle_ttwu_pending_exit"`
	// ShouldWeBalanceNewidleBail: should_we_balance lets a newly idle CPU
	// balance only while it has nothing to run and no wakeup pending
	// ("sched: Allow newidle balancing to bail out of load_balance",
	// v6.0). Off (v5.12): a newly idle CPU always balances.
	ShouldWeBalanceNewidleBail bool `sysctl:"model_should_we_balance_newidle_bail"`
	// NohzNextKick: an idle CPU entering NOHZ sets nohz.needs_update and
	// the next kick carries NOHZ_NEXT_KICK, whose pass recomputes
	// nohz.next_balance (v5.16, "sched/fair: Add NOHZ balancer flag for
	// nohz.next_balance updates"). Off (v5.12): there is no such flag;
	// sched_balance_domains run for an idle CPU pulls nohz.next_balance
	// to that CPU's next balance.
	NohzNextKick bool `sysctl:"model_nohz_next_kick"`
	// DetachTasksEarlyExit: detach_tasks returns at once, clearing
	// LBF_ALL_PINNED, when the source runs at most one task (present in
	// v6.0 and 5.15.55; absent in v5.12). Without it a busy balancer
	// walks a one-task queue, finds the task running and counts every
	// CPU it tried as all pinned.
	DetachTasksEarlyExit bool `sysctl:"model_detach_tasks_early_exit"`
	// LBActiveBalanceV512 selects v5.12's active balance: no
	// LBF_ACTIVE_LB; after starting the stopper sched_balance_rq sets the
	// domain's nr_balance_failed to cache_nice_tries + 1, so that the
	// stopper's can_migrate_task (which runs the hot test in full) and the
	// next passes accept cache-hot tasks ("sched/fair: Clean up active
	// balance nr_balance_failed trickery", v5.13, replaced it). v5.12: on.
	LBActiveBalanceV512 bool `sysctl:"model_lb_active_balance_v512"`
	// LBUtilShrBound: detach_tasks compares a task's util_est with the
	// imbalance shifted by nr_balance_failed, as it does the load
	// (v6.19; added between v6.5 and v6.8). Off (v5.12, v6.0): the
	// unshifted util.
	LBUtilShrBound bool `sysctl:"model_lb_util_shr_bound"`
	// LBHotInDetach: a cache-hot task accepted by can_migrate_task (after
	// enough failures) is marked (p->sched_task_hot) and counted in
	// lb_hot_gained and nr_forced_migrations only when detach_task takes
	// it; one that detach_tasks then skips counts as
	// nr_failed_migrations_hot (v6.19). Off (v5.12, v6.0):
	// can_migrate_task counts lb_hot_gained and nr_forced_migrations when
	// it accepts the hot task, and detach_tasks counts nothing when it
	// skips one.
	LBHotInDetach bool `sysctl:"model_lb_hot_in_detach"`
	// IdleTickRetain models the idle governors' stop_tick: a CPU going
	// idle with a predicted idle period shorter than a tick keeps its
	// tick, stays out of nohz.idle_cpus_mask and in its LLC's
	// nr_busy_cpus, and balances itself from its tick (every baseline:
	// menu and teo, read in v5.12, v6.0 and v6.19). Off: every idle
	// entry stops the tick, as schedlab did before.
	IdleTickRetain bool `sysctl:"model_idle_tick_retain"`
	// BlockedOthersDecay models __update_blocked_others: the RT and
	// deadline PELT signals of the CPU, all zero here, are decayed at
	// every update_blocked_averages and report "decayed" whenever a
	// 1024 µs PELT period passed since their last update, which makes
	// update_blocked_averages call cpufreq_update_util almost every time
	// (every baseline; the IRQ and thermal/HW pressure signals, which
	// cross periods at nearly the same times, are not modelled). Off:
	// cpufreq_update_util only when the root cfs_rq decayed.
	BlockedOthersDecay bool `sysctl:"model_blocked_others_decay"`
	// UtilEstForm selects util_est's form: 0 (v6.8+, v6.19) one word, the
	// EWMA, kept also when within 1% of the dequeued util or when the task
	// did not get the CPU it wanted (runnable above util); 1 (v5.13–v6.7,
	// v6.0) two fields {enqueued, ewma}, UTIL_AVG_UNCHANGED in bit 31,
	// the estimate max(ewma, enqueued), an update skipped when the EWMA
	// is within 1% (unless enqueued moved by 1%) or when util exceeds the
	// CPU's original capacity; 2 (v5.12) as 1 but with the flag in bit 0
	// of the stored value, which the estimate includes (fixed by
	// "sched/fair: Fix util_est UTIL_AVG_UNCHANGED handling", v5.13).
	UtilEstForm int `sysctl:"model_util_est_form"`
	// SgWakeupStatsAllowedOnly: update_sg_wakeup_stats sums only the
	// group's CPUs the task may use and tests misfit per CPU
	// (task_fits_cpu) (v6.19). Off (v5.12, v6.0): every CPU of the group
	// counts, busy CPUs outside the task's mask included, and misfit is
	// tested once against the group's max_capacity. The two agree for
	// tasks allowed everywhere on symmetric machines.
	SgWakeupStatsAllowedOnly bool `sysctl:"model_sg_wakeup_stats_allowed_only"`
	// TgLoadAvgRatelimit: update_tg_load_avg publishes a cfs_rq's load
	// into tg->load_avg at most once per ms ("sched/fair: Ratelimit
	// update to tg->load_avg", v6.7; v6.19: on). Off (v5.12, v6.0): at
	// every call whose change exceeds 1/64 of the last published value.
	TgLoadAvgRatelimit bool `sysctl:"model_tg_load_avg_ratelimit"`
	// CFSClearBuddiesInPick: CFS's pick_next_entity clears the picked
	// entity's buddies, so a re-pick of prev clears them (v5.12);
	// v5.14's side-effect-free pick moved clear_buddies to
	// set_next_entity, which a re-pick of prev skips (v6.0). v5.12: on.
	CFSClearBuddiesInPick bool `sysctl:"model_cfs_clear_buddies_in_pick"`
	// CFSIdlePlacement: CFS's place_entity gives a waking SCHED_IDLE
	// entity the scaled sysctl_sched_min_granularity as its sleeper
	// credit instead of sched_latency (after v5.15: absent in 5.15.55,
	// present in 5.17-rc5, with idle_min_granularity; the commit is not
	// identified). v6.0: on; v5.12: off.
	CFSIdlePlacement bool `sysctl:"model_cfs_idle_placement"`
	// MigrateSEPeltLag: a waking task migrated away from an idle CPU has
	// its PELT averages decayed to an estimate of that CPU's current PELT
	// time (migrate_se_pelt_lag, "sched/fair: Decay task PELT values
	// during wakeup migration", v6.0). v5.12: off; v6.0, v6.19: on.
	MigrateSEPeltLag bool `sysctl:"model_migrate_se_pelt_lag"`
	// NumaImbalanceV512 selects the NUMA allowances of v5.11–v5.17
	// (allow_numa_imbalance: "dst_running < dst_weight / 4") instead of
	// v6.0's imb_numa_nr and idle-CPU difference: find_idlest_group keeps
	// a task on the local node while that node runs fewer tasks than a
	// quarter of the NUMA domain's CPUs, and calculate_imbalance halves
	// the task imbalance first and then ignores up to NUMA_IMBALANCE_MIN
	// tasks while the busiest group runs fewer than a quarter of its
	// CPUs. v5.12: on; v6.0, v6.19: off.
	NumaImbalanceV512 bool `sysctl:"model_numa_imbalance_v512"`
	// BlockedAvgRatelimit is Joel Fernandes' "Rate limit calls to
	// update_blocked_averages() for NOHZ" (patches.md §3): update_nohz_stats
	// refreshes a CPU at most once per HZ/20 jiffies unless forced. Off in
	// both baselines.
	BlockedAvgRatelimit bool `sysctl:"model_blocked_avg_ratelimit"`
}

// Baseline returns the default settings of a kernel baseline (package
// kernels lists them). A baseline is a complete Settings value; everything
// that differs between kernel versions is a field of Settings, named after
// the sched_feature or sysctl it models.
func Baseline(kernel string) (Settings, error) {
	if _, err := kernels.Lookup(kernel); err != nil || kernel == "" {
		return Settings{}, &kernels.UnknownError{Name: kernel}
	}
	s := Settings{
		Kernel:              kernel,
		HZ:                  250,
		BaseSlice:           700000,
		Latency:             6000000,
		MinGranularity:      750000,
		IdleMinGranularity:  750000,
		WakeupGranularity:   1000000,
		NrLatency:           8,
		MigrationCost:       500000,
		NrMigrate:           32,
		TunableScaling:      1,
		CacheHotBuddy:       true,
		WakeupPreemption:    true,
		TTWUQueue:           true,
		SISUtil:             true,
		WAIdle:              true,
		WAWeight:            true,
		WABias:              true,
		UtilEst:             true,
		AttachAgeLoad:       true,
		NontaskCapacity:     true,
		TgPropagate:         true,
		WakeupIPILatency:    2000,
		CostJitterPct:       10,
		CpufreqRateLimit:    1000000,
		IdleWakeActual:      true,
		IdleLatencyLimitUs:  -1,
		TTWUQueueIdleTarget: true,
		// load balancing: what v6.0 and v6.19 share, off for v5.12
		NewidleTTWUPendingExit:     true,
		ShouldWeBalanceNewidleBail: true,
		NohzNextKick:               true,
		DetachTasksEarlyExit:       true,
		MigrateSEPeltLag:           true,
		BlockedOthersDecay:         true,
		IdleTickRetain:             true,
		// kernel objects: pipe->mutex and the objects' shared cache
		// lines exist in every version
		KobjLocks: true,
		KobjLines: true,
		TCPLines:  true,
		// a write's lines before its wakeup: every version
		LinesBeforeWake: true,
		// lazy TLB across idle: every version
		LazyMM: true,
		// sd_llc_shared's has_idle_cores as a cache line: every version
		LLCSharedLines:     true,
		RemoteEnqueueLines: true,
		// select_idle_*'s runqueue reads as cache lines: every version
		SISScanLines:      true,
		SISScanInvalidate: true,
		// fdget's reference on a shared table: every version (the
		// files->count == 1 fast path is older than v5.12)
		SharedFdTable: true,
		// steady state: a booted-a-while kernel's balance phases
		BalancePhase: true,
		// steady state: an idle machine's last LLC balance
		WarmLLCShared: true,
		// tbench's own setup order: the benchmark's, every baseline
		TbenchConnect: true,
		// a simulator's saving, not a kernel's: every baseline
		ShareSgStats: 8,
		// wakeup path
		SISScanCost:           25,
		ShortTaskDurAvgFactor: 8,
	}
	switch kernel {
	case kernels.V619:
		s.EEVDF = true
		s.PlaceLag = true
		s.PlaceDeadlineInit = true
		s.PlaceRelDeadline = true
		s.RunToParity = true
		s.PreemptShort = true
		s.PickBuddy = true
		s.DelayDequeue = true
		s.DelayZero = true
		s.NIRandom = true
		// load balancing
		s.LBSerializeInBalanceRq = true
		s.LBSMTAware = true
		s.LBLocalAboveAvg = true
		s.LBUtilBoost = true
		s.LBMisfitNoFailCount = true
		s.MisfitMaxAllowed = true
		s.NewidleStopOnNoContinue = true
		s.LBUtilShrBound = true
		s.LBHotInDetach = true
		s.SgWakeupStatsAllowedOnly = true
		s.TgLoadAvgRatelimit = true
	case kernels.V60:
		s.RecentUsedCPU = 1
		s.WakeAffineTallyPrev = true
		s.CFSIdlePlacement = true
		s.UtilEstForm = 1
		s.EEVDF = false
		s.GentleFairSleepers = true
		s.StartDebit = true
		s.LastBuddy = true
		s.UtilEstFastup = true
		s.AltPeriod = true
		s.BaseSliceFeat = true
		s.SISProp = false
		s.RdFlagsV60 = true
		s.PipeWakeWriterV60 = true
	case kernels.V512:
		// features.h of v5.12: SIS_PROP on, no SIS_UTIL (v6.0), no
		// ALT_PERIOD or BASE_SLICE ("sched,fair: Alternative
		// sched_slice()", v5.13; 5.12.y has it as a stable backport).
		s.EEVDF = false
		s.GentleFairSleepers = true
		s.StartDebit = true
		s.LastBuddy = true
		s.UtilEstFastup = true
		s.SISProp = true
		s.SISUtil = false
		s.NumaImbalanceV512 = true
		s.SISIdleCoresV512 = true
		s.SISPropV512 = true
		s.SISScanFromTarget = true
		s.RecentUsedCPU = 2
		s.WakeAffineTallyPrev = true
		s.TTWUQueueIdleTarget = false
		// load balancing
		s.NewidleV512 = true
		s.NewidleTTWUPendingExit = false
		s.ShouldWeBalanceNewidleBail = false
		s.NohzNextKick = false
		s.RdFlagsV60 = true
		s.PipeWakeWriterV60 = true
		s.DetachTasksEarlyExit = false
		s.LBActiveBalanceV512 = true
		s.CFSClearBuddiesInPick = true
		s.MigrateSEPeltLag = false
		s.UtilEstForm = 2
		// Vincent Guittot's v5.13 "move update blocked load outside
		// newidle_balance" is not in v5.12.
		s.NewidleNohzStats = true
	default:
		panic("sched: no settings for baseline " + kernel)
	}
	return s, nil
}

// MustBaseline is Baseline for known-good names.
func MustBaseline(kernel string) Settings {
	s, err := Baseline(kernel)
	if err != nil {
		panic("sched: " + err.Error())
	}
	return s
}

// featuresNotIn lists, per baseline, the features its features.h lacks, so
// that enabling one is reported as "not in vX" rather than silently accepted.
var featuresNotIn = map[string][]string{
	kernels.V619: {"GENTLE_FAIR_SLEEPERS", "START_DEBIT", "LAST_BUDDY", "SIS_PROP", "UTIL_EST_FASTUP", "ALT_PERIOD", "BASE_SLICE"},
	kernels.V60:  {"PLACE_LAG", "PLACE_DEADLINE_INITIAL", "PLACE_REL_DEADLINE", "RUN_TO_PARITY", "PREEMPT_SHORT", "PICK_BUDDY", "DELAY_DEQUEUE", "DELAY_ZERO", "NI_RANDOM"},
	kernels.V512: {"PLACE_LAG", "PLACE_DEADLINE_INITIAL", "PLACE_REL_DEADLINE", "RUN_TO_PARITY", "PREEMPT_SHORT", "PICK_BUDDY", "DELAY_DEQUEUE", "DELAY_ZERO", "NI_RANDOM", "SIS_UTIL", "ALT_PERIOD", "BASE_SLICE"},
}

// sysctlsNotIn lists, per baseline, the kernel tunables (sysctl or
// debugfs files) its fair.c lacks, so that setting one is an error, as
// writing a missing file would be: EEVDF (v6.6) replaced latency,
// min_granularity and wakeup_granularity with base_slice, and
// child_runs_first is gone by 6.8.1; idle_min_granularity arrived after
// v5.15 (absent in 5.15.55, present in 5.17-rc5). sched_nr_latency is a
// variable, not a file, but goes with them.
var sysctlsNotIn = map[string][]string{
	kernels.V619: {"latency_ns", "min_granularity_ns", "idle_min_granularity_ns", "wakeup_granularity_ns", "sched_nr_latency", "child_runs_first"},
	kernels.V60:  {"base_slice_ns"},
	kernels.V512: {"base_slice_ns", "idle_min_granularity_ns"},
}

// Sysctl is one sysctl-tagged setting with its current value, as
// --sysctl NAME=VALUE takes it. Model switches are named model_*.
type Sysctl struct {
	Name, Value string
}

// Sysctls lists the baseline's sysctls and model switches in name order,
// without the kernel tunables its version lacks.
func (s *Settings) Sysctls() []Sysctl {
	v := reflect.ValueOf(s).Elem()
	t := v.Type()
	absent := map[string]bool{}
	for _, n := range sysctlsNotIn[s.Kernel] {
		absent[n] = true
	}
	var out []Sysctl
	for i := 0; i < t.NumField(); i++ {
		name := t.Field(i).Tag.Get("sysctl")
		if name == "" || absent[name] {
			continue
		}
		out = append(out, Sysctl{name, fmt.Sprint(v.Field(i).Interface())})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// AbsentFeatures and AbsentSysctls list the features.h entries and kernel
// tunables schedlab models that the baseline does not have.
func (s *Settings) AbsentFeatures() []string {
	return append([]string(nil), featuresNotIn[s.Kernel]...)
}
func (s *Settings) AbsentSysctls() []string { return append([]string(nil), sysctlsNotIn[s.Kernel]...) }

// Absent is the value Settings.Value gives a feature or kernel tunable
// the baseline does not have.
const Absent = "absent"

// Value returns a setting by the name a kernels.Difference gives it: a
// sched_feature ("SIS_PROP": "on", "off" or Absent), a sysctl or model
// switch ("migration_cost_ns": its value, or Absent), or an exported
// field without a tag ("EEVDF").
func (s *Settings) Value(name string) (string, error) {
	v := reflect.ValueOf(s).Elem()
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		switch {
		case f.Tag.Get("feature") == name:
			for _, n := range featuresNotIn[s.Kernel] {
				if n == name {
					return Absent, nil
				}
			}
			if v.Field(i).Bool() {
				return "on", nil
			}
			return "off", nil
		case f.Tag.Get("sysctl") == name:
			for _, n := range sysctlsNotIn[s.Kernel] {
				if n == name {
					return Absent, nil
				}
			}
			return fmt.Sprint(v.Field(i).Interface()), nil
		case f.Name == name && f.IsExported() && f.Tag == "" && name != "Kernel":
			return fmt.Sprint(v.Field(i).Interface()), nil
		}
	}
	return "", fmt.Errorf("unknown setting %q", name)
}

// SettingNames lists every name Value takes, in field order.
func SettingNames() []string {
	t := reflect.TypeOf(Settings{})
	var out []string
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		switch {
		case f.Tag.Get("feature") != "":
			out = append(out, f.Tag.Get("feature"))
		case f.Tag.Get("sysctl") != "":
			out = append(out, f.Tag.Get("sysctl"))
		case f.IsExported() && f.Tag == "" && f.Name != "Kernel":
			out = append(out, f.Name)
		}
	}
	return out
}

// UnsupportedFeatureError reports a feature a baseline does not have.
type UnsupportedFeatureError struct {
	Feature, Kernel string
}

func (e *UnsupportedFeatureError) Error() string {
	return fmt.Sprintf("feature %s is not in %s", e.Feature, e.Kernel)
}

// Feature is one sched_feature with its current value.
type Feature struct {
	Name    string
	Enabled bool
}

// Features lists the baseline's sched_features in name order.
func (s *Settings) Features() []Feature {
	v := reflect.ValueOf(s).Elem()
	t := v.Type()
	absent := map[string]bool{}
	for _, n := range featuresNotIn[s.Kernel] {
		absent[n] = true
	}
	var out []Feature
	for i := 0; i < t.NumField(); i++ {
		name := t.Field(i).Tag.Get("feature")
		if name == "" || absent[name] {
			continue
		}
		out = append(out, Feature{name, v.Field(i).Bool()})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// SetFeature sets a feature by its kernel name; "NO_X" clears X, as writing
// to the debugfs features file does.
func (s *Settings) SetFeature(spec string) error {
	name, val := spec, true
	if strings.HasPrefix(spec, "NO_") {
		name, val = spec[3:], false
	}
	for _, n := range featuresNotIn[s.Kernel] {
		if n == name && val {
			return &UnsupportedFeatureError{name, s.Kernel}
		}
	}
	v := reflect.ValueOf(s).Elem()
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		if t.Field(i).Tag.Get("feature") == name {
			v.Field(i).SetBool(val)
			return nil
		}
	}
	var known []string
	for _, f := range s.Features() {
		known = append(known, f.Name)
	}
	return fmt.Errorf("unknown sched feature %q (%s has %s; NO_X clears X)", spec, s.Kernel, strings.Join(known, " "))
}

// SetSysctl sets a sysctl-tagged field by name from its text value; a
// kernel tunable the baseline lacks is an error.
func (s *Settings) SetSysctl(name, value string) error {
	for _, n := range sysctlsNotIn[s.Kernel] {
		if n == name {
			return fmt.Errorf("sysctl %s is not in %s", name, s.Kernel)
		}
	}
	v := reflect.ValueOf(s).Elem()
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		if t.Field(i).Tag.Get("sysctl") != name {
			continue
		}
		f := v.Field(i)
		switch f.Kind() {
		case reflect.Bool:
			b, err := strconv.ParseBool(value)
			if err != nil {
				return fmt.Errorf("%s: %q is not a boolean", name, value)
			}
			f.SetBool(b)
		case reflect.Int:
			n, err := strconv.Atoi(value)
			if err != nil {
				return fmt.Errorf("%s: %q is not an integer", name, value)
			}
			f.SetInt(int64(n))
		case reflect.String:
			f.SetString(value)
		case reflect.Uint64:
			n, err := strconv.ParseUint(value, 10, 64)
			if err != nil {
				return fmt.Errorf("%s: %q is not a non-negative integer", name, value)
			}
			f.SetUint(n)
		}
		return s.Validate()
	}
	return fmt.Errorf("unknown sysctl %q", name)
}

// Validate checks values the kernel would refuse.
func (s *Settings) Validate() error {
	switch s.HZ {
	case 100, 250, 300, 1000:
	default:
		return fmt.Errorf("hz must be 100, 250, 300 or 1000, not %d", s.HZ)
	}
	if s.IdleLatencyLimitUs < -1 || s.IdleLatencyLimitUs > 1e9 {
		return fmt.Errorf("model_idle_latency_limit_us must be -1 (no request) or 0..1000000000, not %d", s.IdleLatencyLimitUs)
	}
	if s.ShareSgStats < 0 {
		return fmt.Errorf("model_share_sg_stats must be 0 (no sharing) or the smallest group that shares, in CPUs, not %d", s.ShareSgStats)
	}
	if s.Kthreads < 0 || s.Kthreads > 1 {
		return fmt.Errorf("model_kthreads must be 0 (none) or 1 (a quiet server's), not %d", s.Kthreads)
	}
	if s.TunableScaling < 0 || s.TunableScaling > 2 {
		return fmt.Errorf("tunable_scaling must be 0, 1 or 2")
	}
	if s.BaseSlice < 100000 || s.BaseSlice > 100000000 {
		return fmt.Errorf("base_slice_ns must be between 100000 and 100000000")
	}
	if s.NrMigrate < 1 {
		return fmt.Errorf("nr_migrate must be positive")
	}
	if s.UtilEstForm < 0 || s.UtilEstForm > 2 {
		return fmt.Errorf("model_util_est_form must be 0 (v6.19), 1 (v6.0) or 2 (v5.12), not %d", s.UtilEstForm)
	}
	if s.RecentUsedCPU < 0 || s.RecentUsedCPU > 2 {
		return fmt.Errorf("model_recent_used_cpu must be 0 (v6.19), 1 (v6.0) or 2 (v5.12), not %d", s.RecentUsedCPU)
	}
	switch s.CpufreqGovernor {
	case GovernorAuto, GovernorPerformance, GovernorSchedutil:
	default:
		return fmt.Errorf("model_cpufreq_governor must be performance or schedutil, not %q", s.CpufreqGovernor)
	}
	if s.SISNodeLimit && !s.SISNode {
		return fmt.Errorf("SISNodeLimit limits SIS_NODE's search (select_idle_node), which is off")
	}
	if s.SISUtilV2 && s.SISUtil {
		return fmt.Errorf("SIS_UTIL writes the nr_idle_scan that the SIS_UTIL v2 RFC (SISUtilV2) sets, and the RFC's kernel has no SIS_UTIL: turn it off (NO_SIS_UTIL)")
	}
	return nil
}

// tunableFactor mirrors fair.c:get_update_sysctl_factor (v6.19) for ncpus online CPUs.
func tunableFactor(scaling, ncpus int) uint64 {
	cpus := ncpus
	if cpus > 8 {
		cpus = 8
	}
	switch scaling {
	case 0:
		return 1
	case 2:
		return uint64(cpus)
	default:
		f := uint64(1)
		for c := cpus; c > 1; c >>= 1 {
			f++
		}
		return f
	}
}
