// Package explain says why a kernel variant's run differs from tip's:
// `schedlab explain` and `schedlab compare --explain` (docs/explain.md).
// It watches two runs of one configuration, tip (the kernel the variant
// is compared with, "base:V") and the variant, on the same seeds, through
// the kernel's hooks, and reports three things.
//
// # The first divergence
//
// Every placement is a decision (sched.Decision): a wakeup (the CPU
// select_task_rq_fair chose and the return point that produced it, with
// wake_affine's outcome), a fork or exec placement (the slow path,
// sched_balance_find_dst_cpu), a task the balancer moved (periodic,
// newidle, NOHZ idle or active balance, at a domain level). The Recorder
// hands run 0's decisions to a Comparer as they are made; it finds the
// first decision that differs in kind, task, deciding CPU, prev, chosen
// CPU or reason, the first that is the same but taken at a different
// time (a variant that only changes costs moves times before it moves a
// CPU), and keeps the few matching decisions before the first.
//
// # The decision table
//
// Counts over all runs: decisions by path and reason, wakeups by
// wake_affine's outcome, by the distance from the waking CPU to the
// chosen one (schedstat's ttwu_local and ttwu_wake_remote per domain:
// the lowest domain level of the waking CPU that spans the chosen one,
// named as the kernel names it), placements by the distance from prev
// (a migration's, which its cache refill pays for), and the balancer's
// migrations by type and level. They equal the kernel's own counters
// (tests check it).
//
// # The attribution
//
// Each workload task's time in the measured window (the stretch of the
// run the workload's primary metric measures, workload.Windowed; the
// whole run otherwise) is run + wait + sleep. Run time is split into the
// work its program asked for at full speed (less the system calls, lock
// spins and line transfers the workload accounted), each cost the kernel
// charged it (sched.Cost: context switch, refill, the wakeup path's scan,
// sd_llc_shared reads, remote enqueue, fork/exec placement, the
// balancer's lines, balancing on its CPU, interrupt work), and slower
// execution, the rest (a smaller or slower-clocked CPU, a busy SMT
// sibling, shared memory bandwidth). Wait is split by what the task's CPU
// was doing (sched.Hooks.Delay): an IPI on its way (the queued wakeup's,
// before the enqueue, or the reschedule's), an idle-state exit,
// balancing work, and the rest, queueing behind other tasks.
//
// With T the window, W the units of work done in it (messages,
// operations), A the tasks' active time (run + wait) and k = A/T the mean
// number of active tasks, the time per unit of work is
//
//	τ = T/W = A/(k·W) = α/k,  α = A/W = Σ_part A_part/W,
//
// and exactly
//
//	τ_v − τ_tip = Σ_part (α_part,v − α_part,tip)/k_tip + α_v·(1/k_v − 1/k_tip).
//
// The last term is the concurrency term: the same active time spread over
// more or fewer tasks at once (for a set of ping-pong pairs k is the
// number of pairs, and the term vanishes). The metric moves with τ (a
// time ∝ τ, a rate ∝ 1/τ), so its percent change (positive = better) is
// f·Δτ with f = −100/τ_tip for a time and −100/τ_v for a rate, exactly
// linear: each part's term of Δτ times f is its share of the change. What
// the metric's simulated change has beyond f·Δτ (a steady-state estimate,
// bytes rather than operations, a percentile) and the concurrency term
// make the remainder, so that the parts plus the remainder are the
// simulated change exactly; the report prints both in words.
package explain
