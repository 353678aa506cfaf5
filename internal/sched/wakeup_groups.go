package sched

import "github.com/schedlab/schedlab/internal/topology"

// Group statistics and classification shared by fork/exec placement
// (update_sg_wakeup_stats, sched_balance_find_dst_group) and load balancing
// (update_sg_lb_stats, sched_balance_find_src_group).

// GroupType mirrors enum group_type (v6.19 order: a higher value is a
// busier group). group_smt_balance exists from v6.6; the v6.0 baseline
// never produces it.
type GroupType int

const (
	// GroupHasSpare: the group has spare capacity for more tasks.
	GroupHasSpare GroupType = iota
	// GroupFullyBusy: no spare capacity, but no contention either.
	GroupFullyBusy
	// GroupMisfitTask: a task does not fit the capacity of its CPU.
	GroupMisfitTask
	// GroupSMTBalance: tasks on a busy SMT core should move (v6.6+).
	GroupSMTBalance
	// GroupAsymPacking: tasks should move to a preferred CPU (ITMT).
	GroupAsymPacking
	// GroupImbalanced: affinity kept a previous balance from succeeding.
	GroupImbalanced
	// GroupOverloaded: more tasks than CPUs and they contend.
	GroupOverloaded
)

var groupTypeNames = []string{"has_spare", "fully_busy", "misfit_task", "smt_balance", "asym_packing", "imbalanced", "overloaded"}

// String gives the kernel's name without the group_ prefix.
func (t GroupType) String() string { return enumName(groupTypeNames, int(t)) }

// SgLbStats mirrors struct sg_lb_stats (v6.19): a group's statistics for one
// balancing or placement decision.
type SgLbStats struct {
	AvgLoad       uint64 // group_load × 1024 / group_capacity (fully_busy, overloaded)
	GroupLoad     uint64 // sum of cpu_load (…_without(p) for placement)
	GroupCapacity uint64 // sgc->capacity
	GroupUtil     uint64 // sum of cpu_util (…_without(p))
	GroupRunnable uint64 // sum of cpu_runnable (…_without(p))
	SumNrRunning  int    // tasks of every class
	SumHNrRunning int    // CFS tasks (v6.19: h_nr_runnable)
	IdleCPUs      int
	GroupWeight   int
	GroupType     GroupType
	// GroupAsymPacking and GroupSMTBalance are set by the balancer only.
	GroupAsymPacking    bool
	GroupSMTBalance     bool
	GroupMisfitTaskLoad uint64
	// NUMA balancing counters (not modelled; always 0).
	NrNumaRunning, NrPreferredRunning int
}

// groupIsOverloaded mirrors fair.c:group_is_overloaded (v6.19): more tasks than
// CPUs, and utilisation or runnable pressure beyond imbalance_pct.
func groupIsOverloaded(imbalancePct int, sgs *SgLbStats) bool {
	if sgs.SumNrRunning <= sgs.GroupWeight {
		return false
	}
	pct := uint64(imbalancePct)
	if sgs.GroupCapacity*100 < sgs.GroupUtil*pct {
		return true
	}
	if sgs.GroupCapacity*pct < sgs.GroupRunnable*100 {
		return true
	}
	return false
}

// groupHasCapacity mirrors fair.c:group_has_capacity (v6.19): fewer tasks than
// CPUs, or no runnable pressure and utilisation below capacity/pct.
func groupHasCapacity(imbalancePct int, sgs *SgLbStats) bool {
	if sgs.SumNrRunning < sgs.GroupWeight {
		return true
	}
	pct := uint64(imbalancePct)
	if sgs.GroupCapacity*pct < sgs.GroupRunnable*100 {
		return false
	}
	if sgs.GroupCapacity*100 > sgs.GroupUtil*pct {
		return true
	}
	return false
}

// sgImbalanced mirrors fair.c:sg_imbalanced (v6.19): the group's sgc->imbalance
// flag, set by a balance pass that affinity defeated.
func (k *Kernel) sgImbalanced(g *topology.Group) bool { return k.SGC(g).Imbalance != 0 }

// groupClassify mirrors fair.c:group_classify (v6.19).
func (k *Kernel) groupClassify(imbalancePct int, g *topology.Group, sgs *SgLbStats) GroupType {
	switch {
	case groupIsOverloaded(imbalancePct, sgs):
		return GroupOverloaded
	case k.sgImbalanced(g):
		return GroupImbalanced
	case sgs.GroupAsymPacking:
		return GroupAsymPacking
	case sgs.GroupSMTBalance:
		return GroupSMTBalance
	case sgs.GroupMisfitTaskLoad != 0:
		return GroupMisfitTask
	case !groupHasCapacity(imbalancePct, sgs):
		return GroupFullyBusy
	}
	return GroupHasSpare
}

// numaImbalanceMin mirrors NUMA_IMBALANCE_MIN (2 in v5.12, v6.0 and v6.19).
const numaImbalanceMin = 2

// adjustNumaImbalance mirrors fair.c:adjust_numa_imbalance (v6.19): while
// the destination would run at most imb_numa_nr tasks
// (allow_numa_imbalance), an imbalance of up to NUMA_IMBALANCE_MIN idle
// CPUs is tolerated (returns 0) so a communicating pair stays local.
func adjustNumaImbalance(imbalance, dstRunning, imbNumaNr int) int {
	if dstRunning > imbNumaNr {
		return imbalance
	}
	if imbalance <= numaImbalanceMin {
		return 0
	}
	return imbalance
}

// allowNumaImbalanceV512 mirrors fair.c:allow_numa_imbalance (v5.11–v5.17):
// a node running fewer tasks than a quarter of the domain's (or group's)
// CPUs may stay imbalanced.
func allowNumaImbalanceV512(dstRunning, dstWeight int) bool {
	return dstRunning < dstWeight>>2
}

// adjustNumaImbalanceV512 mirrors fair.c:adjust_numa_imbalance (v5.11–
// v5.17): while the allowance holds, an imbalance of up to
// NUMA_IMBALANCE_MIN tasks is ignored.
func adjustNumaImbalanceV512(imbalance, dstRunning, dstWeight int) int {
	if !allowNumaImbalanceV512(dstRunning, dstWeight) {
		return imbalance
	}
	if imbalance <= numaImbalanceMin {
		return 0
	}
	return imbalance
}
