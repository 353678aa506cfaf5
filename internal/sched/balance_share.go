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
// compute. When the sum moved, the group's sums are made again from a
// dense copy of what the loop reads of each CPU (sgCPU, one line instead
// of the runqueue's and the cfs_rq's), copied again for the CPUs whose
// own generation moved. -tags invariants recomputes every group's sums
// from the runqueues and panics on a difference (sgShareCheck), and
// TestShareSgStatsExact (internal/sim) compares whole runs with sharing
// on and off.
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
// when: one cache line.
type sgShared struct {
	// gen is the sum of the group's generation slots (sgSlots) when
	// the fields below were made; 0 if never (every slot starts at 1).
	gen uint64

	load, util, runnable uint64
	// misfitAsym is the largest misfit_task_load of a busy CPU
	// (SD_ASYM_CPUCAPACITY domains); misfitReduced the largest cpu_load
	// of a busy CPU with sched_reduced_capacity for imbalance_pct pct
	// (the other domains, when the balancing CPU is idle).
	misfitAsym    uint64
	misfitReduced uint64

	sumHNrRunning, sumNrRunning, idleCPUs int32
	pct                                   int16
	// overutilized: some CPU is cpu_overutilized (only computed with
	// RdFlagsV60 and NohzRdLines, the loop's condition).
	overutilized bool
	// overloaded: a busy CPU runs more than one task (sg_overloaded at
	// the root domain).
	overloaded bool
}

// initSgShare sets up the generation slots and the per-group entries.
// Slots 0..n-1 are the CPUs', one per LLC (sd_llc_shared) follows, and a
// last one takes the bumps of CPUs without an LLC domain. A CPU's change
// bumps its own slot and its LLC's; a group reads the slots of the LLCs
// it holds whole and of its other CPUs, so that a socket of 8 LLCs sums
// 8 slots, not 128. Every CPU of the group bumps a slot the group reads
// at each change, so an unchanged sum still means an unchanged group.
func (k *Kernel) initSgShare() {
	t := k.Topo
	n := t.NrCPUs
	b := &k.bal
	b.sgGen = make([]uint64, n+t.NrShared+1)
	for i := range b.sgGen {
		b.sgGen[i] = 1
	}
	b.sgLLCSlot = make([]int32, n)
	for cpu := range n {
		b.sgLLCSlot[cpu] = int32(n + t.NrShared)
		if sh := t.SdLLCShared[cpu]; sh >= 0 {
			b.sgLLCSlot[cpu] = int32(n + sh)
		}
	}
	b.sgCPU = make([]sgCPU, n)
	for cpu := range n {
		if c := t.Spec.CPUs[cpu].Capacity; c < 0 || c > SchedCapacityScale {
			panic("sched: a CPU's capacity is outside 0..1024")
		}
	}
	b.sgShare = make([]sgShared, len(t.Groups))
	b.sgSlots = make([][]int32, len(t.Groups))
	for i, g := range t.Groups {
		if g.Weight != g.Span.Weight() {
			panic("sched: group weight is not its span's")
		}
		var slots []int32
		whole := make([]bool, t.NrShared)
		for sh, info := range t.Shared {
			whole[sh] = info.Span.SubsetOf(g.Span)
			if whole[sh] {
				slots = append(slots, int32(n+sh))
			}
		}
		for _, cpu := range g.Span.CPUs() {
			if sh := t.SdLLCShared[cpu]; sh < 0 || !whole[sh] {
				slots = append(slots, int32(cpu))
			}
		}
		b.sgSlots[i] = slots
	}
}

// sgStatsChanged records a write to something update_sg_lb_stats reads
// of rq's CPU: its kept group sums are no longer current.
func (rq *Rq) sgStatsChanged() {
	if k := rq.k; k != nil {
		b := &k.bal
		b.sgGen[rq.CPU]++
		b.sgGen[b.sgLLCSlot[rq.CPU]]++
	}
}

// sgStatsChanged records a write to c's averages or h_nr_runnable (only
// the root cfs_rq's are read, but any of the CPU's will do).
func (c *CfsRq) sgStatsChanged() {
	if c.rq != nil {
		c.rq.sgStatsChanged()
	}
}

// sgGenSum is the sum of the generation slots.
func (k *Kernel) sgGenSum(slots []int32) uint64 {
	gen := k.bal.sgGen
	var s uint64
	for _, i := range slots {
		s += gen[i]
	}
	return s
}

// sgCPU is what updateSgLbStats's loop reads of one CPU, copied from its
// runqueue and root cfs_rq (two lines, of structures all over memory)
// into one line of a dense array, and copied again when the CPU's
// generation has moved.
type sgCPU struct {
	// gen is the CPU's generation (its own slot) when copied; 0 if never.
	gen                          uint64
	load, util, runnable, misfit uint64
	hNrRunnable, nrRunning       int32
	// capacity and capacityOrig are capacity_of and
	// arch_scale_cpu_capacity (at most SCHED_CAPACITY_SCALE: checked
	// at boot).
	capacity, capacityOrig uint32
	// idle: nr_running is 0 and idle_cpu; overutilized:
	// cpu_overutilized, with RdFlagsV60 and NohzRdLines only.
	idle, overutilized bool
}

// sgCPUCopy copies what the loop reads of CPU i into s, at generation gen.
func (k *Kernel) sgCPUCopy(i cpumask.CPU, s *sgCPU, gen uint64) {
	rq := k.Rqs[i]
	s.gen = gen
	s.load = cpuLoad(rq)
	s.util = cpuUtilCfsRq(rq, k.S.UtilEst)
	s.runnable = cpuRunnable(rq)
	s.misfit = rq.MisfitTaskLoad
	s.hNrRunnable = int32(rq.CFS.HNrRunnable)
	s.nrRunning = int32(rq.NrRunning)
	s.capacity, s.capacityOrig = uint32(rq.CPUCapacity), uint32(rq.CPUCapacityOrig)
	s.idle = rq.NrRunning == 0 && rq.IdleCPU()
	s.overutilized = k.S.RdFlagsV60 && k.S.NohzRdLines && k.cpuOverutilized(i)
}

// sgShareable reports whether this pass can take g's statistics from the
// kept sums and the CPUs' copies: g has at least Settings.ShareSgStats
// CPUs (a smaller group's sums cost about as many cache lines to look up
// and check as to make: an SMT pair's or a 4-CPU cluster's gain nothing,
// a 16-CPU LLC's or a socket's do), the pass considers every CPU of g,
// and it neither refreshes nor looks for blocked load CPU by CPU.
func (k *Kernel) sgShareable(env *lbEnv, g *topology.Group) bool {
	return k.S.ShareSgStats > 0 && g.Weight >= k.S.ShareSgStats && env.flags&lbfNohzStats == 0 &&
		!env.nohzStatsSkipped && g.Span.SubsetOf(env.cpus)
}

// sgSharedStats returns g's sums: those kept if they are current, else
// made now from the CPUs' copies.
func (k *Kernel) sgSharedStats(env *lbEnv, g *topology.Group) *sgShared {
	e := &k.bal.sgShare[g.ID]
	gen := k.sgGenSum(k.bal.sgSlots[g.ID])
	if e.gen == gen && int(e.pct) == env.sd.T.ImbalancePct {
		k.bal.sgShareHits++
	} else {
		k.sgShareFill(env, g, e)
		e.gen = gen
	}
	if invariantsEnabled {
		k.sgShareCheck(env, g, e)
	}
	return e
}

// SgSharedReuses reports how many times a balancing pass took a group's
// statistics from an earlier pass (Settings.ShareSgStats) rather than
// from its CPUs.
func (k *Kernel) SgSharedReuses() uint64 { return k.bal.sgShareHits }

// sgShareFill makes e's sums from the copies of its CPUs, refreshing
// those whose generation moved, for env's domain: what updateSgLbStats's
// loop computes from the runqueues (sgShareFillRqs).
func (k *Kernel) sgShareFill(env *lbEnv, g *topology.Group, e *sgShared) {
	pct := env.sd.T.ImbalancePct
	*e = sgShared{pct: int16(pct)}
	gen, cpus := k.bal.sgGen, k.bal.sgCPU
	// every CPU of the group: sgShareable checked that env->cpus has them
	for i := range g.Span.AndCPUs(env.cpus) {
		s := &cpus[i]
		if g := gen[i]; s.gen != g {
			k.sgCPUCopy(i, s, g)
		}
		e.load += s.load
		e.util += s.util
		e.runnable += s.runnable
		e.sumHNrRunning += s.hNrRunnable
		e.sumNrRunning += s.nrRunning
		if s.overutilized {
			e.overutilized = true
		}
		if s.idle {
			e.idleCPUs++
			continue
		}
		if s.nrRunning > 1 {
			e.overloaded = true
		}
		e.misfitAsym = max(e.misfitAsym, s.misfit)
		// sched_reduced_capacity
		if s.hNrRunnable == 1 && capacityReduced(uint64(s.capacity), uint64(s.capacityOrig), pct) {
			e.misfitReduced = max(e.misfitReduced, s.load)
		}
	}
}

// sgShareFillRqs is sgShareFill from the runqueues themselves, as
// updateSgLbStats's loop reads them: the oracle of sgShareCheck.
func (k *Kernel) sgShareFillRqs(env *lbEnv, g *topology.Group, e *sgShared) {
	*e = sgShared{pct: int16(env.sd.T.ImbalancePct)}
	overutil := k.S.RdFlagsV60 && k.S.NohzRdLines
	for i := range g.Span.AndCPUs(env.cpus) {
		rq := k.Rqs[i]
		load := cpuLoad(rq)
		e.load += load
		e.util += cpuUtilCfsRq(rq, k.S.UtilEst)
		e.runnable += cpuRunnable(rq)
		e.sumHNrRunning += int32(rq.CFS.HNrRunnable)
		nrRunning := rq.NrRunning
		e.sumNrRunning += int32(nrRunning)
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
	sgs.SumHNrRunning = int(e.sumHNrRunning)
	sgs.SumNrRunning = int(e.sumNrRunning)
	sgs.IdleCPUs = int(e.idleCPUs)
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

// sgShareCheck panics if e's sums differ from those of its CPUs'
// runqueues now: a write that did not record itself (-tags invariants).
func (k *Kernel) sgShareCheck(env *lbEnv, g *topology.Group, e *sgShared) {
	var fresh sgShared
	k.sgShareFillRqs(env, g, &fresh)
	if fresh.load != e.load || fresh.util != e.util || fresh.runnable != e.runnable ||
		fresh.sumHNrRunning != e.sumHNrRunning || fresh.sumNrRunning != e.sumNrRunning ||
		fresh.idleCPUs != e.idleCPUs || fresh.overutilized != e.overutilized ||
		fresh.overloaded != e.overloaded || fresh.misfitAsym != e.misfitAsym ||
		fresh.misfitReduced != e.misfitReduced {
		panic("sched: shared group statistics are stale: a write to what update_sg_lb_stats reads did not call sgStatsChanged")
	}
}
