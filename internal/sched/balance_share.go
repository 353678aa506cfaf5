package sched

import (
	"github.com/schedlab/schedlab/internal/cpumask"
	"github.com/schedlab/schedlab/internal/topology"
)

// Shared group statistics (Settings.ShareSgStats): a simulator's saving,
// not a kernel mechanism.
//
// Each balancing pass sums, for every group of the domain it balances,
// what update_sg_lb_stats reads of the group's CPUs: load, utilisation and
// runnable averages, task counts, idleness, misfit load. The kernel
// recomputes them on every pass, and schedlab did too; but many passes
// read a group none of whose CPUs changed since the last pass read it (on
// zen3-2s-nps1 in hackbench -g 4, about half of the groups a newly idle
// pass reads: the other LLCs of its socket, most of them idle). The sums
// are then the same, and this file keeps them per group and reuses them.
//
// "Unchanged" is decided by generations. Every write to a field the sums
// read increments its CPU's generation (Rq.sgStatsChanged, called where
// nr_running, curr, ttwu_pending, misfit_task_load and capacity_of are
// written, and CfsRq.sgStatsChanged, where a cfs_rq's load, runnable,
// util and util_est averages and h_nr_runnable are). A group's sums are
// kept with the sum of its CPUs' generations when they were made; as
// generations only grow, the same sum later means that no CPU of the
// group changed in between, and the kept sums are what the loop would
// compute. -tags invariants recomputes every reused sum and panics on a
// difference (sgShareCheck), and TestShareSgStatsExact (internal/sim)
// compares whole runs with sharing on and off.
//
// What else the loop depends on: which CPUs the pass considers (env->cpus,
// which drops CPUs whose tasks are pinned on a retry: only a pass that
// considers the whole group shares), the domain's imbalance_pct
// (sched_reduced_capacity; kept with the sums, another value recomputes)
// and the settings (fixed for a run). What depends on the pass itself
// (local group or not, SD_ASYM_CPUCAPACITY, the balancing CPU's idle
// type, balancing at the root domain) is applied to per-group summaries
// that serve every pass: the largest misfit load of each kind, whether a
// busy CPU runs more than one task, whether a CPU is overutilized. A pass
// that refreshes blocked load as it goes (LBF_NOHZ_STATS, before v5.13),
// or looks for a CPU it would have refreshed (BranchNewidleNoStats),
// writes or counts per CPU and neither uses nor keeps shared sums.

// sgShared is what updateSgLbStats's loop made of one group's CPUs, and
// when.
type sgShared struct {
	// cpus is the group's span; gen the sum of their generations when
	// the fields below were made; ok that they were.
	cpus []cpumask.CPU
	gen  uint64
	ok   bool

	load, util, runnable uint64
	sumHNrRunning        int
	sumNrRunning         int
	idleCPUs             int
	// overutilized: some CPU is cpu_overutilized (only computed with
	// RdFlagsV60 and NohzRdLines, the loop's condition).
	overutilized bool
	// overloaded: a busy CPU runs more than one task (sg_overloaded at
	// the root domain).
	overloaded bool
	// misfitAsym is the largest misfit_task_load of a busy CPU
	// (SD_ASYM_CPUCAPACITY domains); misfitReduced the largest cpu_load
	// of a busy CPU with sched_reduced_capacity for imbalance_pct pct
	// (the other domains, when the balancing CPU is idle).
	misfitAsym    uint64
	misfitReduced uint64
	pct           int
}

// initSgShare sets up the per-CPU generations and the per-group entries.
func (k *Kernel) initSgShare() {
	k.bal.sgGen = make([]uint64, k.NrCPUs())
	k.bal.sgShare = make([]sgShared, len(k.Topo.Groups))
	for i, g := range k.Topo.Groups {
		k.bal.sgShare[i].cpus = g.Span.CPUs()
	}
}

// sgStatsChanged records a write to something update_sg_lb_stats reads
// of rq's CPU: its kept group sums are no longer current.
func (rq *Rq) sgStatsChanged() {
	if k := rq.k; k != nil {
		k.bal.sgGen[rq.CPU]++
	}
}

// sgStatsChanged records a write to c's averages or h_nr_runnable (only
// the root cfs_rq's are read, but any of the CPU's will do).
func (c *CfsRq) sgStatsChanged() {
	if c.rq != nil {
		c.rq.sgStatsChanged()
	}
}

// sgGenSum is the sum of the generations of cpus.
func (k *Kernel) sgGenSum(cpus []cpumask.CPU) uint64 {
	gen := k.bal.sgGen
	var s uint64
	for _, c := range cpus {
		s += gen[c]
	}
	return s
}

// sgShareable reports whether this pass can use and keep g's shared sums:
// sharing is on, the pass considers every CPU of g, and it neither
// refreshes nor looks for blocked load CPU by CPU.
func (k *Kernel) sgShareable(env *lbEnv, g *topology.Group) bool {
	return k.S.ShareSgStats && env.flags&lbfNohzStats == 0 && !env.nohzStatsSkipped &&
		g.Span.SubsetOf(env.cpus)
}

// sgSharedStats returns g's sums, made now if none are current.
func (k *Kernel) sgSharedStats(env *lbEnv, g *topology.Group) *sgShared {
	e := &k.bal.sgShare[g.ID]
	pct := env.sd.T.ImbalancePct
	gen := k.sgGenSum(e.cpus)
	if e.ok && e.gen == gen && e.pct == pct {
		k.bal.sgShareHits++
		if invariantsEnabled {
			k.sgShareCheck(env, e)
		}
		return e
	}
	k.sgShareFill(env, e)
	e.gen, e.ok = gen, true
	return e
}

// SgSharedReuses reports how many times a balancing pass took a group's
// statistics from an earlier pass (Settings.ShareSgStats) rather than
// from its CPUs.
func (k *Kernel) SgSharedReuses() uint64 { return k.bal.sgShareHits }

// sgShareFill makes e's sums from its CPUs, as updateSgLbStats's loop
// reads them, for env's domain.
func (k *Kernel) sgShareFill(env *lbEnv, e *sgShared) {
	*e = sgShared{cpus: e.cpus, pct: env.sd.T.ImbalancePct}
	overutil := k.S.RdFlagsV60 && k.S.NohzRdLines
	for _, i := range e.cpus {
		rq := k.Rqs[i]
		load := cpuLoad(rq)
		e.load += load
		e.util += cpuUtilCfsRq(rq, k.S.UtilEst)
		e.runnable += cpuRunnable(rq)
		e.sumHNrRunning += rq.CFS.HNrRunnable
		nrRunning := rq.NrRunning
		e.sumNrRunning += nrRunning
		if overutil && k.cpuOverutilized(i) {
			e.overutilized = true
		}
		if nrRunning == 0 && rq.IdleCPU() {
			e.idleCPUs++
			continue
		}
		if nrRunning > 1 {
			e.overloaded = true
		}
		e.misfitAsym = max(e.misfitAsym, rq.MisfitTaskLoad)
		if k.schedReducedCapacity(rq, env.sd) {
			e.misfitReduced = max(e.misfitReduced, load)
		}
	}
}

// sgShareApply gives sgs, sds and sgOverloaded what updateSgLbStats's
// loop would have given them, from the group's shared sums: the sums as
// they are, the rest as this pass would have taken it.
func (k *Kernel) sgShareApply(env *lbEnv, sds *sdLbStats, e *sgShared, localGroup bool, sgs *SgLbStats, sgOverloaded *bool) {
	sgs.GroupLoad = e.load
	sgs.GroupUtil = e.util
	sgs.GroupRunnable = e.runnable
	sgs.SumHNrRunning = e.sumHNrRunning
	sgs.SumNrRunning = e.sumNrRunning
	sgs.IdleCPUs = e.idleCPUs
	if e.overutilized {
		sds.overutilized = true
	}
	if env.sd.Parent == nil && e.overloaded {
		*sgOverloaded = true
	}
	if localGroup {
		return
	}
	if env.sd.T.Flags&topology.SDAsymCPUCapacity != 0 {
		if e.misfitAsym > 0 {
			sgs.GroupMisfitTaskLoad = e.misfitAsym
			*sgOverloaded = true
		}
	} else if env.idle != CPUNotIdle {
		sgs.GroupMisfitTaskLoad = e.misfitReduced
	}
}

// sgShareCheck panics if e's sums differ from those of its CPUs now: a
// write that did not record itself (-tags invariants).
func (k *Kernel) sgShareCheck(env *lbEnv, e *sgShared) {
	var fresh sgShared
	fresh.cpus = e.cpus
	k.sgShareFill(env, &fresh)
	fresh.gen, fresh.ok = e.gen, e.ok
	if fresh.load != e.load || fresh.util != e.util || fresh.runnable != e.runnable ||
		fresh.sumHNrRunning != e.sumHNrRunning || fresh.sumNrRunning != e.sumNrRunning ||
		fresh.idleCPUs != e.idleCPUs || fresh.overutilized != e.overutilized ||
		fresh.overloaded != e.overloaded || fresh.misfitAsym != e.misfitAsym ||
		fresh.misfitReduced != e.misfitReduced {
		panic("sched: shared group statistics are stale: a write to what update_sg_lb_stats reads did not call sgStatsChanged")
	}
}
