package sched

import "github.com/schedlab/schedlab/internal/cpumask"

// NOHZ idle load balancing: CPUs whose tick is stopped are balanced, and
// their blocked load decayed, by one idle CPU kicked by a busy one.

// nohz_flags bits (sched.h).
const (
	nohzBalanceKick = 1 << 0 // NOHZ_BALANCE_KICK
	nohzStatsKick   = 1 << 1 // NOHZ_STATS_KICK
	nohzNewilbKick  = 1 << 2 // NOHZ_NEWILB_KICK
	nohzNextKick    = 1 << 3 // NOHZ_NEXT_KICK
	nohzKickMask    = nohzBalanceKick | nohzStatsKick | nohzNextKick
)

// setCPUSdStateIdle mirrors fair.c:set_cpu_sd_state_idle (v6.19): one busy CPU
// less in the LLC's nr_busy_cpus.
func (k *Kernel) setCPUSdStateIdle(cpu cpumask.CPU) {
	rq := k.Rqs[cpu]
	sds := k.SdLLCShared(int(cpu))
	if sds == nil || rq.sdLLCNohzIdle {
		return
	}
	rq.sdLLCNohzIdle = true
	sds.NrBusyCPUs--
	if k.S.LLCSharedLines {
		sds.line.store(k, cpu) // an atomic on the line; not charged
	}
}

// setCPUSdStateBusy mirrors fair.c:set_cpu_sd_state_busy (v6.19).
func (k *Kernel) setCPUSdStateBusy(cpu cpumask.CPU) {
	rq := k.Rqs[cpu]
	sds := k.SdLLCShared(int(cpu))
	if sds == nil || !rq.sdLLCNohzIdle {
		return
	}
	rq.sdLLCNohzIdle = false
	sds.NrBusyCPUs++
	if k.S.LLCSharedLines {
		sds.line.store(k, cpu) // an atomic on the line; not charged
	}
}

// nohzBalanceEnterIdle mirrors fair.c:nohz_balance_enter_idle (v6.19;
// v5.12 has no nohz.needs_update, Settings.NohzNextKick),
// called when an idle CPU stops its tick: it has blocked load to decay,
// and unless it is still registered from an earlier idle period, it joins
// nohz.idle_cpus_mask and leaves its LLC's busy count. With
// Settings.NohzRdLines its stores take the nohz line (has_blocked is
// stored every time) and the mask's, at no one's cost: the CPU is idle.
func (k *Kernel) nohzBalanceEnterIdle(rq *Rq) {
	rq.HasBlockedLoad = true
	if !rq.NohzIdle {
		if len(k.dom.SD[rq.CPU]) == 0 {
			return
		}
		rq.NohzIdle = true
		k.bal.nohz.idleCPUsMask.Set(rq.CPU)
		k.lineStoreIdle(&k.bal.nohz.maskLine, rq.CPU)
		k.bal.nohz.nrCPUs++
		k.setCPUSdStateIdle(rq.CPU)
		if k.S.NohzNextKick {
			k.bal.nohz.needsUpdate = true
		}
	}
	k.bal.nohz.hasBlocked = true
	k.lineStoreIdle(&k.bal.nohz.line, rq.CPU)
}

// nohzBalanceExitIdle mirrors fair.c:nohz_balance_exit_idle (v6.19): at the first
// busy tick after an idle period (nohz_balancer_kick), the CPU leaves the
// NOHZ idle set. Leaving idle does not call it: a CPU that idles again
// before its next tick stays registered, as in the kernel. With
// Settings.NohzRdLines its stores to the mask's and the nohz line are
// charged to the task the tick interrupted.
func (k *Kernel) nohzBalanceExitIdle(rq *Rq) {
	if !rq.NohzIdle {
		return
	}
	rq.NohzIdle = false
	k.bal.nohz.idleCPUsMask.Clear(rq.CPU)
	k.lineStore(&k.bal.nohz.maskLine)
	k.bal.nohz.nrCPUs--
	k.lineStore(&k.bal.nohz.line)
	k.setCPUSdStateBusy(rq.CPU)
}

// NohzIdleCPUs returns a copy of nohz.idle_cpus_mask.
func (k *Kernel) NohzIdleCPUs() cpumask.Mask { return k.bal.nohz.idleCPUsMask.Clone() }

// nohzKickFull is the flags of a full kick, STATS|BALANCE (v5.10 used its
// NOHZ_KICK_MASK, the same two bits); NEXT is added when needed.
const nohzKickFull = nohzStatsKick | nohzBalanceKick

// maxAllowedCapacity mirrors p->max_allowed_capacity (v6.19): the largest
// capacity among the CPUs p may run on. Simplified: the kernel caches it
// at set_cpus_allowed; schedlab computes it when asked.
func (k *Kernel) maxAllowedCapacity(p *Task) uint64 {
	var m uint64
	p.CPUsAllowed.ForEach(func(c cpumask.CPU) bool {
		m = max(m, k.archScaleCPUCapacity(c))
		return true
	})
	return m
}

// checkMisfitStatus mirrors fair.c:check_misfit_status (v6.19).
func checkMisfitStatus(rq *Rq) bool { return rq.MisfitTaskLoad != 0 }

// nohzBalancerKick mirrors fair.c:nohz_balancer_kick (v6.19), run at every
// busy tick: leave the NOHZ idle set, then kick an idle CPU to update the
// idle CPUs' blocked load (when due) and to balance on their behalf when
// this CPU has work to share — two tasks here, a misfit task, or another
// busy CPU in the LLC. (Asymmetric packing is not modelled.) With
// Settings.NohzRdLines the running task pays for the nohz line's
// transfer when another CPU stored to it since this CPU's last tick.
func (k *Kernel) nohzBalancerKick(rq *Rq) {
	now := k.Jiffies()
	nohz := &k.bal.nohz
	flags := 0
	cpu := rq.CPU
	if rq.IdleBalance {
		return
	}
	k.nohzBalanceExitIdle(rq)
	// One load of the nohz line covers every field read below.
	k.lineLoad(&nohz.line)
	if nohz.nrCPUs == 0 {
		return
	}
	if nohz.hasBlocked && timeAfter(now, nohz.nextBlocked) {
		flags = nohzStatsKick
	}
	if timeBefore(now, nohz.nextBalance) {
		goto out
	}
	if rq.NrRunning >= 2 {
		flags = nohzKickFull
		goto out
	}
	if sds := k.dom.SD[cpu]; len(sds) > 0 && rq.CFS.HNrRunnable >= 1 && k.checkCPUCapacity(rq, sds[0]) {
		flags = nohzKickFull
		goto out
	}
	if k.Topo.SdAsymCPUCapacity[cpu] != nil {
		if checkMisfitStatus(rq) {
			flags = nohzKickFull
		}
		goto out
	}
	if sds := k.SdLLCShared(int(cpu)); sds != nil && sds.NrBusyCPUs > 1 {
		flags = nohzKickFull
	}
out:
	if nohz.needsUpdate {
		flags |= nohzNextKick
	}
	if flags != 0 {
		k.kickIlb(flags)
	}
}

// findNewIlb mirrors fair.c:find_new_ilb (v6.19): the first idle CPU of the NOHZ
// idle set other than this one (every CPU is a housekeeping CPU).
func (k *Kernel) findNewIlb() cpumask.CPU {
	k.lineLoad(&k.bal.nohz.maskLine)
	m := k.bal.nohz.idleCPUsMask
	for c := m.First(); c != cpumask.None; c = m.Next(c) {
		if c == k.thisCPU {
			continue
		}
		if k.Rqs[c].IdleCPU() {
			return c
		}
	}
	return cpumask.None
}

// kickIlb mirrors fair.c:kick_ilb (v6.19): post the flags to the idle load
// balancer and, if it had no kick pending, send it an IPI (nohz_csd),
// which arrives an IPI latency later (the cost model's, by distance;
// Settings.WakeupIPILatency by default), plus the exit latency of the
// idle state it wakes from when the cost model charges those.
func (k *Kernel) kickIlb(flags int) {
	if flags&nohzBalanceKick != 0 {
		k.bal.nohz.nextBalance = k.Jiffies() + 1
		k.lineStore(&k.bal.nohz.line)
	}
	ilb := k.findNewIlb()
	if ilb == cpumask.None {
		return
	}
	irq := k.Rqs[ilb]
	if irq.NohzFlags&flags == flags {
		return
	}
	old := irq.NohzFlags
	irq.NohzFlags |= flags
	if old&nohzKickMask != 0 {
		return
	}
	k.BalanceStats.IlbKicks++
	k.Eng.Schedule(irq.ilbTimer, k.lbNow()+k.ipiLatency(k.thisCPU, ilb)+k.idleExitLatency(irq))
}

// nohzCsdFunc mirrors fair.c:nohz_csd_func (v6.19), the kick's IPI handler on the
// ILB: if the CPU is still idle, its softirq balances for the idle CPUs.
func (k *Kernel) nohzCsdFunc(rq *Rq) {
	k.thisCPU = rq.CPU
	flags := rq.NohzFlags
	rq.NohzFlags &^= nohzKickMask | nohzNewilbKick
	rq.IdleBalance = rq.IdleCPU()
	if rq.IdleBalance {
		rq.NohzIdleBalance = flags
		k.schedBalanceSoftirq(rq)
	}
	k.afterEvent()
}

// nohzIdleBalance mirrors fair.c:nohz_idle_balance (v6.19): in the softirq of a
// kicked idle CPU, balance for the NOHZ idle CPUs instead of itself.
func (k *Kernel) nohzIdleBalance(rq *Rq, idle int) bool {
	flags := rq.NohzIdleBalance
	if flags == 0 {
		return false
	}
	rq.NohzIdleBalance = 0
	if idle != CPUIdle {
		return false
	}
	k.bal.nohzPass = true
	k.nohzIdleBalanceRun(rq, flags, idle)
	k.bal.nohzPass = false
	return true
}

// nohzIdleBalanceRun runs _nohz_idle_balance in the form the settings
// select, and counts it.
func (k *Kernel) nohzIdleBalanceRun(rq *Rq, flags, idle int) bool {
	mark := k.lbBegin(rq.CPU)
	var done bool
	if k.S.NewidleNohzStats {
		done = k.nohzIdleBalanceV510(rq, flags, idle)
	} else {
		k.nohzIdleBalanceV619(rq, flags)
		done = true
	}
	k.BalanceStats.NohzIdleBalance.add(k.lbEnd(mark))
	return done
}

// nohzIdleBalanceV619 mirrors fair.c:_nohz_idle_balance (v6.19): for
// every NOHZ idle CPU, starting after this one and ending with it, update
// its blocked load (STATS) and run its due domain balancing on its behalf
// (BALANCE); then set nohz.next_balance and, after a stats pass,
// nohz.next_blocked 32 ms ahead.
func (k *Kernel) nohzIdleBalanceV619(thisRq *Rq, flags int) {
	nohz := &k.bal.nohz
	now := k.Jiffies()
	nextBalance := now + 60*uint64(k.S.HZ)
	hasBlockedLoad := false
	updateNextBalance := false
	thisCPU := thisRq.CPU
	aborted := false
	if flags&nohzStatsKick != 0 {
		nohz.hasBlocked = false
		k.lineStore(&nohz.line)
	}
	if flags&nohzNextKick != 0 {
		nohz.needsUpdate = false
		k.lineStore(&nohz.line)
	}
	k.lineLoad(&nohz.maskLine)
	mask := nohz.idleCPUsMask.Clone()
	mask.ForEachWrap(thisCPU+1, func(balanceCPU cpumask.CPU) bool {
		k.lbCharge(k.Costs.Balance.NohzPerCPU)
		if !k.Rqs[balanceCPU].IdleCPU() {
			return true
		}
		if !thisRq.IdleCPU() && thisRq.needResched {
			if flags&nohzStatsKick != 0 {
				hasBlockedLoad = true
			}
			if flags&nohzNextKick != 0 {
				nohz.needsUpdate = true
				k.lineStore(&nohz.line)
			}
			aborted = true
			return false
		}
		rq := k.Rqs[balanceCPU]
		if flags&nohzStatsKick != 0 && k.updateNohzStatsForce(rq, false, BlockedByNohzStats) {
			hasBlockedLoad = true
		}
		if timeAfterEq(k.Jiffies(), rq.NextBalance) {
			k.updateRqClock(rq)
			if flags&nohzBalanceKick != 0 {
				k.schedBalanceDomains(rq, CPUIdle)
			}
		}
		if timeAfter(nextBalance, rq.NextBalance) {
			nextBalance = rq.NextBalance
			updateNextBalance = true
		}
		return true
	})
	if !aborted {
		if updateNextBalance {
			nohz.nextBalance = nextBalance
			k.lineStore(&nohz.line)
		}
		if flags&nohzStatsKick != 0 {
			nohz.nextBlocked = now + k.msecsToJiffies(loadAvgPeriodMs)
			k.lineStore(&nohz.line)
		}
	}
	if hasBlockedLoad {
		nohz.hasBlocked = true
		k.lineStore(&nohz.line)
	}
}

// nohzIdleBalanceV510 mirrors _nohz_idle_balance as it was before v5.13's
// "move update blocked load outside newidle_balance" (Settings.
// NewidleNohzStats; v5.12's): every NOHZ idle CPU but this one gets a
// forced blocked-load update and, when due, a balance; then this CPU
// refreshes itself (unless newly idle) and balances its own domains for a
// BALANCE kick. v5.12 clears nohz.has_blocked unconditionally, as every
// kick it sends carries NOHZ_STATS_KICK; with NohzNextKick (a later
// baseline with the pre-v5.13 paths turned on) NEXT-only kicks exist, and
// the blocked-load work is gated by NOHZ_STATS_KICK as in v5.16+. It
// reports whether the pass completed.
func (k *Kernel) nohzIdleBalanceV510(thisRq *Rq, flags, idle int) bool {
	nohz := &k.bal.nohz
	now := k.Jiffies()
	nextBalance := now + 60*uint64(k.S.HZ)
	hasBlockedLoad := false
	updateNextBalance := false
	thisCPU := thisRq.CPU
	stats := flags&nohzStatsKick != 0
	if stats {
		nohz.hasBlocked = false
		k.lineStore(&nohz.line)
	}
	if flags&nohzNextKick != 0 {
		nohz.needsUpdate = false
		k.lineStore(&nohz.line)
	}
	k.lineLoad(&nohz.maskLine)
	mask := nohz.idleCPUsMask.Clone()
	for balanceCPU := mask.First(); balanceCPU != cpumask.None; balanceCPU = mask.Next(balanceCPU) {
		k.lbCharge(k.Costs.Balance.NohzPerCPU)
		if balanceCPU == thisCPU || !k.Rqs[balanceCPU].IdleCPU() {
			continue
		}
		if thisRq.needResched {
			if stats {
				nohz.hasBlocked = true
				k.lineStore(&nohz.line)
			}
			if flags&nohzNextKick != 0 {
				nohz.needsUpdate = true
				k.lineStore(&nohz.line)
			}
			return false
		}
		rq := k.Rqs[balanceCPU]
		if stats && k.updateNohzStatsForce(rq, true, BlockedByNohzStats) {
			hasBlockedLoad = true
		}
		if timeAfterEq(k.Jiffies(), rq.NextBalance) {
			k.updateRqClock(rq)
			if flags&nohzBalanceKick != 0 {
				k.schedBalanceDomains(rq, CPUIdle)
			}
		}
		if timeAfter(nextBalance, rq.NextBalance) {
			nextBalance = rq.NextBalance
			updateNextBalance = true
		}
	}
	if updateNextBalance {
		nohz.nextBalance = nextBalance
		k.lineStore(&nohz.line)
	}
	if stats && idle != CPUNewlyIdle {
		k.lbUpdateBlockedAverages(thisCPU, BlockedByNohzSelf)
		if thisRq.HasBlockedLoad {
			hasBlockedLoad = true
		}
	}
	if flags&nohzBalanceKick != 0 {
		k.schedBalanceDomains(thisRq, CPUIdle)
	}
	if stats {
		nohz.nextBlocked = now + k.msecsToJiffies(loadAvgPeriodMs)
		k.lineStore(&nohz.line)
	}
	if hasBlockedLoad {
		nohz.hasBlocked = true
		k.lineStore(&nohz.line)
	}
	return true
}

// updateNohzStatsForce mirrors fair.c:update_nohz_stats: refresh the
// blocked load of an idle CPU that still has some, at most once per jiffy
// — or, with Settings.BlockedAvgRatelimit (Joel Fernandes' patch,
// patches.md §3), at most once per HZ/20 jiffies (20 per second) unless
// forced. It reports whether the CPU still has blocked load. force exists
// only in the v5.10 form (NewidleNohzStats), whose ILB forced the update;
// the v5.13+ function has no such parameter (force is false).
func (k *Kernel) updateNohzStatsForce(rq *Rq, force bool, origin BlockedOrigin) bool {
	if !rq.HasBlockedLoad {
		return false
	}
	k.lineLoad(&k.bal.nohz.maskLine)
	if !k.bal.nohz.idleCPUsMask.Test(rq.CPU) {
		return false
	}
	if !force {
		// Every kernel's "at most once per jiffy": time_after(jiffies,
		// last_blocked_load_update_tick).
		due := timeAfter(k.Jiffies(), rq.LastBlockedLoadUpdateTick)
		if k.S.BlockedAvgRatelimit {
			if !timeAfter(k.Jiffies(), rq.LastBlockedLoadUpdateTick+blockedRatelimit(k.S.HZ)) {
				k.countBranch(BranchBlockedRatelimit, due)
				return true
			}
		} else if !due {
			return true
		}
	}
	k.lbUpdateBlockedAverages(rq.CPU, origin)
	return rq.HasBlockedLoad
}

// blockedRatelimit is the rate limit of Joel Fernandes' patch
// (Settings.BlockedAvgRatelimit), in jiffies: HZ/20, 20 refreshes a
// second.
func blockedRatelimit(hz int) uint64 { return uint64(hz) / 20 }

// nohzStatsDue is update_nohz_stats' test of an unforced refresh without
// a rate limit, and without its load of the NOHZ mask's line: rq has
// blocked load, is in nohz.idle_cpus_mask, and was last refreshed before
// this jiffy. blocked-load-outside-newidle's counter asks it what v5.12's
// newly idle balance would have done.
func (k *Kernel) nohzStatsDue(rq *Rq) bool {
	return rq.HasBlockedLoad && k.bal.nohz.idleCPUsMask.Test(rq.CPU) &&
		timeAfter(k.Jiffies(), rq.LastBlockedLoadUpdateTick)
}
