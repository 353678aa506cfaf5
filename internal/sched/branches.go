package sched

// Did the patch's code run? Each variant names the branches of the kernel
// model its patch changes (VariantInfo.Branches), and the kernel counts,
// for every branch, how often it was taken and how often taking it changed
// the decision from what the variant's comparison kernel would have
// decided at that point (Kernel.Branches, one array for the whole run:
// plain increments, nothing allocated). The counters run in every kernel;
// a run reports those of its variants (sim.Result.VariantBranches), so a
// column that equals tip to the nanosecond says whether its patch's code
// was reached at all.
//
// "Changed" is counted where the comparison kernel's answer can be had at
// the branch without changing anything: the variant's condition against
// the baseline's (update_nohz_stats' rate limit), or the baseline's code
// run again without side effects (select_idle_cpu's scan without the
// short-task skip, wake_affine_weight without storing h_load). Where it
// cannot, Branch.CountsChanged is false, the branch's description says
// why, and only "taken" is counted.
//
// A branch's name is the kernel function whose code the patch changes and
// a tag, "function:tag" (select_idle_cpu:is_short_task), the same in
// `run --json`, `compare` and the counters' metric paths.

// Branch is one branch of the kernel model that a variant changes.
type Branch uint8

const (
	// BranchShortAffine: wake_affine_idle chose this_cpu because
	// curr(this_cpu) is short (the short-task variants' hunk 1).
	BranchShortAffine Branch = iota
	// BranchShortScan: select_idle_cpu returned target without scanning
	// (the short-task variants' hunk 2).
	BranchShortScan
	// BranchIdleCoresNoSMT: test_idle_cores answered false without
	// reading sd_llc_shared (idle-cores-nosmt).
	BranchIdleCoresNoSMT
	// BranchSISNode: select_idle_node walked the other LLCs (sis-node).
	BranchSISNode
	// BranchSISNodeLimit: the limit ended select_idle_node's walk with
	// other LLCs left (sis-node-limit).
	BranchSISNodeLimit
	// BranchClusterPrev: an idle cache-affine prev_cpu or recent_used_cpu
	// outside target's cluster was not taken at once (sis-cluster).
	BranchClusterPrev
	// BranchClusterScan: select_idle_cpu scanned target's cluster first
	// (sis-cluster).
	BranchClusterScan
	// BranchLLCOverloaded: select_idle_cpu scanned nothing in an LLC
	// marked overloaded (sis-util-v1).
	BranchLLCOverloaded
	// BranchNrIdleScan: select_idle_cpu's SIS_PROP scan took
	// nr_idle_scan as its budget (sis-util-v2).
	BranchNrIdleScan
	// BranchBlockedRatelimit: update_nohz_stats skipped a refresh under
	// the HZ/20 rate limit (blocked-avg-ratelimit).
	BranchBlockedRatelimit
	// BranchNewidleNoStats: a newly idle balance no longer refreshed the
	// idle CPUs' blocked load (blocked-load-outside-newidle).
	BranchNewidleNoStats
	// BranchRunIdleBalance: a CPU about to idle refreshed the idle CPUs'
	// blocked load itself (blocked-load-outside-newidle).
	BranchRunIdleBalance
	// BranchNoTgPropagate: an attach or detach on a task group's cfs_rq
	// was not propagated to the group's entity (no-tg-propagate).
	BranchNoTgPropagate
	// BranchClusterLevel: a load-balance pass ran at the CLS level, which
	// the comparison kernel does not have (cluster-level).
	BranchClusterLevel
	// BranchSelectIdleCluster: select_idle_cluster found an idle CPU in
	// target's cluster before select_idle_cpu ran (cluster-level).
	BranchSelectIdleCluster
	// BranchSyncInTask: a WF_SYNC wakeup from interrupt context reached
	// wake_affine as not sync (no-sync-irq).
	BranchSyncInTask
	// NrBranches is the number of branches.
	NrBranches
)

// BranchInfo describes a branch.
type BranchInfo struct {
	// Name is "function:tag", function being the kernel's.
	Name string
	// Description says what "taken" counts, and "changed" (or why it is
	// not counted).
	Description string
	// CountsChanged is false where the comparison kernel's decision
	// cannot be had at the branch: only Taken is counted.
	CountsChanged bool
}

var branchInfos = [NrBranches]BranchInfo{
	BranchClusterLevel: {"sched_balance_rq:CLS",
		"taken: a load-balance pass (periodic, idle or newly idle) ran at the CLS level; changed: it moved a task, which the comparison kernel, without that level, did not do at that point", true},
	BranchSelectIdleCluster: {"select_idle_sibling:select_idle_cluster",
		"taken: select_idle_cluster returned an idle CPU of target's cluster; changed: the CPU differs from the one v5.12's select_idle_cpu finds from the same state", true},
	BranchShortAffine: {"wake_affine_idle:is_short_task",
		"taken: wake_affine_idle chose this_cpu because curr(this_cpu) is short; changed: wake_affine's choice differs from the comparison kernel's (prev_cpu when it is idle and the check comes first, else wake_affine_weight's)", true},
	BranchShortScan: {"select_idle_cpu:is_short_task",
		"taken: select_idle_cpu returned target without scanning the LLC; changed: the scan it skipped would have found an idle CPU", true},
	BranchIdleCoresNoSMT: {"test_idle_cores:no_smt",
		"taken: test_idle_cores answered false without reading sd_llc_shared (no SMT); changed: the read would have found has_idle_cores set", true},
	BranchSISNode: {"select_idle_sibling:select_idle_node",
		"taken: select_idle_node walked the other LLCs after target's had no idle CPU; changed: it found one (the comparison kernel stays in target's LLC)", true},
	BranchSISNodeLimit: {"select_idle_node:limit",
		"taken: the limit of 4 LLCs ended select_idle_node's walk with other LLCs left unscanned; changed: those LLCs' scans (each as select_idle_cpu would run it, without the time earlier scans spent) would have found an idle CPU", true},
	BranchClusterPrev: {"select_idle_sibling:cluster",
		"taken: an idle cache-affine prev_cpu or recent_used_cpu outside target's cluster was kept as the fallback instead of taken at once; changed: the wakeup went elsewhere", true},
	BranchClusterScan: {"select_idle_cpu:cluster",
		"taken: select_idle_cpu scanned target's cluster before the rest of the LLC; changed: the CPU it found differs from the scan of the whole LLC from target+1", true},
	BranchLLCOverloaded: {"select_idle_cpu:overloaded",
		"taken: select_idle_cpu scanned nothing because target's LLC was marked overloaded; changed: the comparison kernel's scan (SIS_PROP) would have found an idle CPU", true},
	BranchNrIdleScan: {"select_idle_cpu:nr_idle_scan",
		"taken: select_idle_cpu's scan took nr_idle_scan as its budget; changed: the CPU it found differs from the one SIS_PROP's avg_idle budget finds", true},
	BranchBlockedRatelimit: {"update_nohz_stats:ratelimit",
		"taken: update_nohz_stats skipped an idle CPU's blocked-load refresh under the HZ/20 limit; changed: the comparison kernel's once-per-jiffy test would have refreshed it", true},
	BranchNewidleNoStats: {"update_sd_lb_stats:nohz_stats",
		"taken: a newly idle balance pass with blocked load pending (nohz.has_blocked) did not refresh the idle CPUs' blocked load; changed: v5.12's update_nohz_stats would have refreshed at least one CPU in that pass", true},
	BranchRunIdleBalance: {"nohz_run_idle_balance:refresh",
		"taken: a CPU about to idle refreshed the idle CPUs' blocked load itself, as a newly idle balance asked; changed: not counted (v5.12 refreshed in a different place and time, which the branch cannot reproduce)", false},
	BranchSyncInTask: {"select_task_rq_fair:in_task",
		"taken: a WF_SYNC wakeup from softirq or hardirq context was not treated as sync; changed: wake_affine chose another CPU than it chooses from the same state with sync (0 where wake_affine did not run: the waker's CPU is prev_cpu, or the wakeup is not affine)", true},
	BranchNoTgPropagate: {"add_tg_cfs_propagate:off",
		"taken: an entity's attach, detach or removed load on a task group's cfs_rq was not propagated to the group's entity; changed: not counted (the propagation only moves PELT sums, which reach decisions later through loads and shares)", false},
}

// Info describes b.
func (b Branch) Info() BranchInfo { return branchInfos[b] }

func (b Branch) String() string { return branchInfos[b].Name }

// BranchCounter counts one branch.
type BranchCounter struct {
	// Taken counts the times the branch was taken; Changed those that
	// changed the decision (0 unless the branch's CountsChanged).
	Taken, Changed uint64
}

// BranchCounters are a run's branch counters, indexed by Branch.
type BranchCounters [NrBranches]BranchCounter

// count counts one taking of branch b, which changed the decision if
// changed.
func (k *Kernel) countBranch(b Branch, changed bool) {
	c := &k.Branches[b]
	c.Taken++
	if changed {
		c.Changed++
	}
}

// countClusterLevel counts a balance pass of sd that moved moved tasks when
// sd is the CLS level the cluster-level variant adds (BranchClusterLevel).
func (k *Kernel) countClusterLevel(sd *SchedDomain, moved int) {
	if k.S.ClusterLevel && sd.T.Name == "CLS" {
		k.countBranch(BranchClusterLevel, moved > 0)
	}
}
