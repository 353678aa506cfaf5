package sched

import "github.com/schedlab/schedlab/internal/cpumask"

// The load, utilisation and idleness signals the placement code reads
// (fair.c, v6.19). They are shared with load balancing: the balancer's
// update_sg_lb_stats reads the same cpu_load / cpu_util_cfs / cpu_runnable.

// cfsRqLoadAvg mirrors fair.c:cfs_rq_load_avg (v6.19).
func cfsRqLoadAvg(c *CfsRq) uint64 { return c.Avg.LoadAvg }

// cpuLoad mirrors fair.c:cpu_load (v6.19): the root cfs_rq's load_avg.
func cpuLoad(rq *Rq) uint64 { return cfsRqLoadAvg(rq.CFS) }

// cpuRunnable mirrors fair.c:cpu_runnable (v6.19).
func cpuRunnable(rq *Rq) uint64 { return rq.CFS.Avg.RunnableAvg }

// capacityOf mirrors fair.c:capacity_of (v6.19).
func (k *Kernel) capacityOf(cpu cpumask.CPU) uint64 { return k.Rqs[cpu].CPUCapacity }

// archScaleCPUCapacity mirrors arch_scale_cpu_capacity (every baseline;
// capacity_orig_of in v6.0 and v5.12 reads the same value).
func (k *Kernel) archScaleCPUCapacity(cpu cpumask.CPU) uint64 { return k.Rqs[cpu].CPUCapacityOrig }

// lsubPositive mirrors lsub_positive (every baseline): *v -= min(*v, d).
func lsubPositive(v *uint64, d uint64) {
	if d > *v {
		*v = 0
		return
	}
	*v -= d
}

// hasContribution reports whether p still counts in cpu's PELT sums: it
// last ran there and is not brand new (the "Task has no contribution or is
// new" test of the *_without helpers).
func hasContribution(cpu cpumask.CPU, p *Task) bool {
	return p.cpu == cpu && p.SE.Avg.LastUpdateTime != 0
}

// cpuLoadWithout mirrors fair.c:cpu_load_without (v6.19): cpu_load with p's
// hierarchical load taken out if p counts on rq.
func (k *Kernel) cpuLoadWithout(rq *Rq, p *Task) uint64 {
	if !hasContribution(rq.CPU, p) {
		return cpuLoad(rq)
	}
	load := rq.CFS.Avg.LoadAvg
	lsubPositive(&load, k.taskHLoad(p))
	return load
}

// cpuRunnableWithout mirrors fair.c:cpu_runnable_without (v6.19).
func cpuRunnableWithout(rq *Rq, p *Task) uint64 {
	if !hasContribution(rq.CPU, p) {
		return cpuRunnable(rq)
	}
	runnable := rq.CFS.Avg.RunnableAvg
	lsubPositive(&runnable, p.SE.Avg.RunnableAvg)
	return runnable
}

// cpuUtil mirrors fair.c:cpu_util (v6.19): the CFS utilisation of cpu,
// predicted for p moving to dstCPU (p == nil: no prediction; dstCPU ==
// cpumask.None: p leaves cpu), optionally boosted by runnable_avg, raised to
// the util_est sum and capped at the CPU's original capacity.
func (k *Kernel) cpuUtil(cpu cpumask.CPU, p *Task, dstCPU cpumask.CPU, boost bool) uint64 {
	c := k.Rqs[cpu].CFS
	util := c.Avg.UtilAvg
	if boost && c.Avg.RunnableAvg > util {
		util = c.Avg.RunnableAvg
	}
	if p != nil && p.cpu == cpu && dstCPU != cpu {
		lsubPositive(&util, taskUtil(p))
	} else if p != nil && p.cpu != cpu && dstCPU == cpu {
		util += taskUtil(p)
	}
	if k.S.UtilEst {
		utilEst := uint64(c.Avg.UtilEst)
		if dstCPU == cpu {
			utilEst += k.taskUtilEstRaw(p)
		} else if p != nil && (p.OnRq == taskOnRqQueued || k.Current() == p) {
			lsubPositive(&utilEst, k.taskUtilEstRaw(p))
		}
		if utilEst > util {
			util = utilEst
		}
	}
	if capa := k.archScaleCPUCapacity(cpu); util > capa {
		util = capa
	}
	return util
}

// cpuUtilCfs mirrors fair.c:cpu_util_cfs (v6.19): cpu_util(cpu, NULL, -1,
// 0), cpuUtil without a task or a boost, which leaves util_avg raised to
// util_est and capped. The balancer reads it for every CPU of every group
// it examines, so it is spelled out here; TestCPUUtilCfs checks it against
// cpuUtil.
func (k *Kernel) cpuUtilCfs(cpu cpumask.CPU) uint64 {
	return cpuUtilCfsRq(k.Rqs[cpu], k.S.UtilEst)
}

// cpuUtilCfsRq is cpuUtilCfs of rq's CPU, with Settings.UtilEst as utilEst.
func cpuUtilCfsRq(rq *Rq, utilEst bool) uint64 {
	util := rq.CFS.Avg.UtilAvg
	if utilEst {
		util = max(util, uint64(rq.CFS.Avg.UtilEst))
	}
	return min(util, rq.CPUCapacityOrig)
}

// cpuUtilWithout mirrors fair.c:cpu_util_without (v6.19).
func (k *Kernel) cpuUtilWithout(cpu cpumask.CPU, p *Task) uint64 {
	if !hasContribution(cpu, p) {
		p = nil
	}
	return k.cpuUtil(cpu, p, cpumask.None, false)
}

// updateCfsRqHLoad mirrors fair.c:update_cfs_rq_h_load (v6.19): once per jiffy,
// walk from c up to the root recording the path, then push the root's
// load_avg down it, each level taking the share its group entity has of
// its parent queue's load.
func (k *Kernel) updateCfsRqHLoad(c *CfsRq) {
	now := k.Jiffies()
	if c.LastHLoadUpdate == now {
		return
	}
	se := c.tg.SE[c.rq.CPU]
	c.HLoadNext = nil
	for ; se != nil; se = se.Parent {
		c = cfsRqOf(se)
		c.HLoadNext = se
		if c.LastHLoadUpdate == now {
			break
		}
	}
	if se == nil {
		c.HLoad = cfsRqLoadAvg(c)
		c.LastHLoadUpdate = now
	}
	for se = c.HLoadNext; se != nil; se = c.HLoadNext {
		load := c.HLoad
		load = load * se.Avg.LoadAvg / (cfsRqLoadAvg(c) + 1)
		c = groupCfsRq(se)
		c.HLoad = load
		c.LastHLoadUpdate = now
	}
}

// taskHLoad mirrors fair.c:task_h_load (v6.19): p's load as seen from the root
// cfs_rq of its CPU. The idle task (a timer wakeup's "current") has none.
func (k *Kernel) taskHLoad(p *Task) uint64 {
	if p.IsIdleTask() || p.SE.CfsRq == nil {
		return 0
	}
	c := p.SE.CfsRq
	k.updateCfsRqHLoad(c)
	return p.SE.Avg.LoadAvg * c.HLoad / (cfsRqLoadAvg(c) + 1)
}

// taskHLoadPeek is taskHLoad, or with peek the same value computed
// without updating any cfs_rq's h_load (cfsRqHLoadPeek): for a variant's
// counters, which must not change the run.
func (k *Kernel) taskHLoadPeek(p *Task, peek bool) uint64 {
	if !peek {
		return k.taskHLoad(p)
	}
	if p.IsIdleTask() || p.SE.CfsRq == nil {
		return 0
	}
	c := p.SE.CfsRq
	return p.SE.Avg.LoadAvg * k.cfsRqHLoadPeek(c) / (cfsRqLoadAvg(c) + 1)
}

// cfsRqHLoadPeek is the h_load updateCfsRqHLoad would give c now, without
// storing it: the cached value of a cfs_rq updated this jiffy, else its
// parent's h_load times its group entity's share of the parent's load,
// else (the root) its load_avg.
func (k *Kernel) cfsRqHLoadPeek(c *CfsRq) uint64 {
	if c.LastHLoadUpdate == k.Jiffies() {
		return c.HLoad
	}
	se := c.tg.SE[c.rq.CPU]
	if se == nil {
		return cfsRqLoadAvg(c)
	}
	parent := cfsRqOf(se)
	return k.cfsRqHLoadPeek(parent) * se.Avg.LoadAvg / (cfsRqLoadAvg(parent) + 1)
}

// availableIdleCPU mirrors core.c:available_idle_cpu (v6.19): idle_cpu(), and no
// preempted vCPU (schedlab models bare metal).
func (k *Kernel) availableIdleCPU(cpu cpumask.CPU) bool { return k.Rqs[cpu].IdleCPU() }

// schedIdleRq mirrors fair.c:sched_idle_rq (v6.19): the rq runs only SCHED_IDLE tasks.
func schedIdleRq(rq *Rq) bool { return rq.NrRunning != 0 && rq.NrRunning == rq.CFS.HNrIdle }

// schedIdleCPU mirrors fair.c:sched_idle_cpu (v6.19).
func (k *Kernel) schedIdleCPU(cpu cpumask.CPU) bool { return schedIdleRq(k.Rqs[cpu]) }

// idleOrSchedIdle is "available_idle_cpu(c) || sched_idle_cpu(c)", the
// idleness every select_idle_* helper accepts.
func (k *Kernel) idleOrSchedIdle(cpu cpumask.CPU) bool {
	return k.availableIdleCPU(cpu) || k.schedIdleCPU(cpu)
}

// taskRunningOnCPU mirrors fair.c:task_running_on_cpu (v6.19): p is queued on cpu
// and counts in its statistics.
func taskRunningOnCPU(cpu cpumask.CPU, p *Task) int {
	if !hasContribution(cpu, p) {
		return 0
	}
	if p.OnRq == taskOnRqQueued {
		return 1
	}
	return 0
}

// idleCPUWithout mirrors fair.c:idle_cpu_without (v6.19): cpu would be idle if p
// left it (the caller has checked nr_running without p).
func (k *Kernel) idleCPUWithout(cpu cpumask.CPU, p *Task) bool {
	rq := k.Rqs[cpu]
	if rq.Curr != rq.Idle && rq.Curr != p {
		return false
	}
	return rq.TTWUPending == 0
}

// nrRunningNotDelayed is rq->nr_running less the delayed-dequeue tasks
// (v6.19's cfs_h_nr_delayed), which wake_affine_idle's sync test ignores.
// Without DELAY_DEQUEUE (the CFS baseline) it is nr_running.
func nrRunningNotDelayed(rq *Rq) int {
	return rq.NrRunning - (rq.CFS.HNrQueued - rq.CFS.HNrRunnable)
}

// utilFitsCPU mirrors fair.c:util_fits_cpu (v6.19) without uclamp (uclamp is not
// modelled): 1 if util fits capacity_of(cpu) with the 20 % margin, else 0.
func (k *Kernel) utilFitsCPU(util uint64, cpu cpumask.CPU) int {
	if fitsCapacity(util, k.capacityOf(cpu)) {
		return 1
	}
	return 0
}
