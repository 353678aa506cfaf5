// Package sched is schedlab's model of the Linux kernel's fair scheduling
// class: kernel/sched/fair.c with the parts of core.c, pelt.c and sched.h it
// relies on. It reads like fair.c on purpose. Functions carry the kernel's
// names in Go case (enqueueEntity for enqueue_entity, pickEEVDF for
// __pick_eevdf) and their doc comments say "mirrors fair.c:NAME (vX)" and
// what is simplified, so that a kernel developer can port a fair.c diff by
// finding the same function here.
//
// # The model
//
// A Kernel is one machine: a runqueue (Rq) per CPU, each with a root CfsRq;
// task groups (cgroup v2 directories) with a CfsRq and a group SchedEntity
// per CPU; tasks, each with its SchedEntity. The state is the kernel's:
// load weights, vruntime, deadline, vlag, slice, the sum_w_vruntime and
// sum_weight that make avg_vruntime exact, the per-entity and per-queue PELT
// sums and averages, util_est, h_nr_queued/h_nr_runnable, the leaf cfs_rq
// list, cfs_tasks. The machine's topology (internal/topology) is read-only;
// the mutable halves of sched domains, sched_domain_shared and sched group
// capacity live here, indexed by the topology's IDs (domains.go).
//
// Time is virtual, in nanoseconds, kept by an engine.Engine. The rq clock is
// sched_clock: engine time plus ClockBase, so no timestamp is ever zero.
// clock_task equals clock (no IRQ or steal time); clock_pelt is scaled by CPU
// capacity and frequency as pelt.h does. jiffies advance every TICK_NSEC
// from INITIAL_JIFFIES.
//
// What happens on a CPU is driven by events: the tick (stopped while the
// CPU is idle, NOHZ), the end of the running task's current operation, the
// reschedule request (resched_curr; a remote CPU acts after an IPI latency),
// sleep timers and queued wakeups. Tasks run Programs: user space reduced
// to "compute this much", "sleep", "block until woken", "yield", "exit",
// and calls back into the kernel (wake another task, fork). Computation is
// measured in nanoseconds of CPU time at capacity 1024 and takes longer on
// a smaller CPU. A preempted task keeps the work it has left.
//
// # Baselines and variants
//
// Settings is one struct with every sched_feature, sysctl and model
// switch; a baseline (v6.19 EEVDF; v6.0 and v5.12 CFS; package kernels
// lists them) is a set of defaults (Baseline), and a variant is a named
// difference from a baseline. Every field whose default differs between
// baselines is named by one of kernels.Baseline.Differences, which
// differences_test.go checks. CFS and EEVDF share the queue machinery; the
// functions whose algorithm differs branch to their CFS versions in cfs.go,
// and an older baseline's form of a function is a branch on its switch
// (NewidleV512, SISPropV512, ...), documented in the function's comment.
// Each variant names the branches its patch changes, and the kernel counts
// how often each was taken and changed the decision from the comparison
// kernel's (branches.go: Kernel.Branches), so a run says whether the
// patch's code ran.
//
// # Observers
//
// Hooks are the tracepoints (sched_switch, sched_wakeup ...) and three
// hooks of the model's own (decision.go): Decision sees every placement
// with the return point of the wakeup path that produced it (recorded
// with one store per return point) or the balance type and domain,
// Charge what each task's run time is made of by cost category, and Delay
// the stretches a CPU cannot run a task waiting for it (an IPI, an idle
// exit, balancing). None changes a decision, a cost or a random draw;
// `schedlab explain` (internal/explain) is built on them.
//
// # What is not modelled
//
// Other scheduling classes (RT, deadline, the fair deadline server, sched_ext)
// and their load; CFS bandwidth control and throttling; NUMA balancing;
// energy-aware scheduling; uclamp; core scheduling; proxy execution; idle
// task groups (cpu.idle); autogroups; custom slices (sched_attr). The lazy
// preemption model: resched_curr_lazy acts like resched_curr (full
// preemption). The rb-tree is a sorted slice with the same order (tree.go).
// Where a function drops a branch for one of these, its comment says so.
//
// Under the build tag "invariants" every event ends with CheckInvariants,
// which recomputes the incrementally kept sums and panics on a mismatch.
package sched
