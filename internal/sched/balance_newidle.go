package sched

import "github.com/schedlab/schedlab/internal/topology"

// schedBalanceNewidle mirrors fair.c:sched_balance_newidle (v6.19; the
// v6.0 newidle_balance with !NewidleStopOnNoContinue and NI_RANDOM off;
// v5.12's with NewidleV512, !NewidleTTWUPendingExit and NewidleNohzStats),
// called by pick_next_task_fair when this CPU has nothing to run: pull a
// task before going idle.
//
//   - Gate: nothing to do unless the root domain is overloaded and the CPU
//     is expected to stay idle (avg_idle) longer than the lowest domain's
//     max_newidle_lb_cost (v5.12: than sysctl_sched_migration_cost).
//   - Otherwise refresh this CPU's blocked load, then balance each domain
//     bottom-up with CPU_NEWLY_IDLE while the cost spent so far plus the
//     domain's worst cost fits in avg_idle. The time each domain took (the
//     modelled cost of its pass, cost_params.go, which includes the blocked
//     load update for the first one) feeds max_newidle_lb_cost and
//     max_idle_balance_cost as the kernel's sched_clock measurement does.
//   - NI_RANDOM (v6.19) runs a domain's balance with probability
//     (1 + newidle_ratio)/1024, from this CPU's sched_rng stream (the
//     engine's per-CPU random stream, not the kernel's prandom), and
//     weights a success by the inverse of that probability.
//   - A CPU that pulled nothing may ask to refresh the idle CPUs' blocked
//     load before it idles (nohz_newidle_balance); v5.12 refreshes them at
//     once, and only when the gate was shut.
//   - Simplified: v6.0 also stops the domain walk when a task or a wakeup
//     arrived meanwhile; the pass is atomic here, so none can.
//
// The whole call is charged to this CPU (balance.go): a task it pulls
// starts running only when the balancing is done, and so does a task woken
// on this CPU meanwhile.
func (k *Kernel) schedBalanceNewidle(rq *Rq) int {
	thisCPU := rq.CPU
	nextBalance := k.Jiffies() + uint64(k.S.HZ)
	continueBalancing := true
	var currCost uint64
	pulled := 0
	var t0 uint64

	k.updateMisfitStatus(nil, rq)
	if k.S.NewidleTTWUPendingExit && rq.TTWUPending != 0 {
		return 0
	}
	rq.IdleStamp = rq.Clock
	mark := k.lbBegin(thisCPU)
	domains := k.dom.SD[thisCPU]
	if len(domains) == 0 {
		goto out
	}
	if !k.getRdOverloaded() || k.newidleGateShut(rq, domains[0]) {
		k.updateNextBalance(domains[0], &nextBalance)
		if k.S.NewidleNohzStats {
			// v5.10 refreshed the idle CPUs' blocked load only here.
			k.nohzNewidleBalance(rq)
		}
		goto out
	}
	k.BalanceStats.NewidleGatePassed++
	t0 = uint64(k.bal.spent)
	k.lbUpdateBlockedAverages(thisCPU, BlockedByNewidle)
	if k.S.NewidleV512 {
		// v5.12 times each domain's load_balance alone.
		t0 = uint64(k.bal.spent)
	}
	for _, sd := range domains {
		k.updateNextBalance(sd, &nextBalance)
		if rq.AvgIdle < currCost+sd.MaxNewidleLbCost {
			break
		}
		if sd.T.Flags&topology.SDBalanceNewidle != 0 {
			weight := uint64(1)
			if k.S.NIRandom {
				d1k := uint64(k.schedRng(thisCPU) % 1024)
				weight = 1 + sd.NewidleRatio
				if d1k > weight {
					updateNewidleStats(sd, 0)
					continue
				}
				weight = (1024 + weight/2) / weight
			}
			pulled = k.schedBalanceRq(thisCPU, rq, sd, CPUNewlyIdle, &continueBalancing)
			k.countClusterLevel(sd, pulled)
			t1 := uint64(k.bal.spent)
			domainCost := t1 - t0
			currCost += domainCost
			t0 = t1
			var success uint64
			if pulled != 0 {
				success = weight
			}
			if k.S.NewidleV512 {
				sd.MaxNewidleLbCost = max(sd.MaxNewidleLbCost, domainCost)
			} else {
				k.updateNewidleCost(sd, domainCost, success)
			}
		}
		if pulled != 0 || (k.S.NewidleStopOnNoContinue && !continueBalancing) {
			break
		}
	}
	if currCost > rq.MaxIdleBalanceCost {
		rq.MaxIdleBalanceCost = currCost
	}
	// A task may have arrived while the lock was dropped (not in this
	// model: the pass is atomic), and there are no other classes.
	if rq.CFS.HNrQueued != 0 && pulled == 0 {
		pulled = 1
	}
out:
	if timeAfter(rq.NextBalance, nextBalance) {
		rq.NextBalance = nextBalance
	}
	if pulled != 0 {
		rq.IdleStamp = 0
	} else if !k.S.NewidleNohzStats {
		k.nohzNewidleBalance(rq)
	}
	k.BalanceStats.NewidleBalance.add(k.lbEnd(mark))
	return pulled
}

// newidleGateShut is the avg_idle half of newly idle balance's gate: the
// CPU expects to be idle for less than the balance would cost (v5.16+:
// the lowest domain's max_newidle_lb_cost; v5.12: migration_cost).
func (k *Kernel) newidleGateShut(rq *Rq, lowest *SchedDomain) bool {
	if k.S.NewidleV512 {
		return rq.AvgIdle < k.S.MigrationCost
	}
	return rq.AvgIdle < lowest.MaxNewidleLbCost
}

// nohzNewidleBalance mirrors fair.c:nohz_newidle_balance (v6.19, since
// v5.13): if this CPU will stay idle a while and the idle CPUs' blocked
// load is due for a refresh, ask for it to be done just before idling
// (nohz_run_idle_balance). With Settings.NewidleNohzStats it is v5.10's
// form, which refreshed them right away and kicked an ILB if that was cut
// short.
func (k *Kernel) nohzNewidleBalance(rq *Rq) {
	if rq.AvgIdle < k.S.MigrationCost {
		return
	}
	k.lineLoad(&k.bal.nohz.line)
	if !k.bal.nohz.hasBlocked || timeBefore(k.Jiffies(), k.bal.nohz.nextBlocked) {
		return
	}
	if k.S.NewidleNohzStats {
		if !k.nohzIdleBalanceV510(rq, nohzStatsKick, CPUNewlyIdle) {
			k.kickIlb(nohzStatsKick)
		}
		return
	}
	rq.NohzFlags |= nohzNewilbKick
}

// nohzRunIdleBalance mirrors fair.c:nohz_run_idle_balance (v5.13+), called
// by the idle loop before it idles: do the blocked-load refresh a newly
// idle balance asked for, unless an ILB kick will do it anyway or there is
// work to do.
func (k *Kernel) nohzRunIdleBalance(rq *Rq) {
	flags := rq.NohzFlags
	rq.NohzFlags &^= nohzNewilbKick
	if flags == nohzNewilbKick && !rq.needResched {
		if k.baseNohzStats {
			// blocked-load-outside-newidle on v5.12.
			k.Branches[BranchRunIdleBalance].Taken++
		}
		mark := k.lbBegin(rq.CPU)
		k.nohzIdleBalanceRun(rq, nohzStatsKick, CPUNewlyIdle)
		k.lbEnd(mark)
	}
}
