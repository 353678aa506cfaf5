package sched

// Load balancing (periodic, newidle, NOHZ idle balance) lives here.
// Until it is modelled these entry points only keep the bookkeeping the rest
// of the model reads.

// schedBalanceTrigger mirrors fair.c:sched_balance_trigger, called from
// every tick. PLACEHOLDER: no periodic balance yet.
func (k *Kernel) schedBalanceTrigger(rq *Rq) {}

// nohzBalanceEnterIdle mirrors fair.c:nohz_balance_enter_idle.
// PLACEHOLDER.
func (k *Kernel) nohzBalanceEnterIdle(rq *Rq) {}

// nohzBalanceExitIdle mirrors fair.c:nohz_balance_exit_idle.
// PLACEHOLDER.
func (k *Kernel) nohzBalanceExitIdle(rq *Rq) {}

// schedBalanceNewidle mirrors fair.c:sched_balance_newidle. PLACEHOLDER:
// it records idle_stamp, as the kernel does before balancing, and pulls
// nothing.
func (k *Kernel) schedBalanceNewidle(rq *Rq) int {
	if rq.TTWUPending != 0 {
		return 0
	}
	rq.IdleStamp = rq.Clock
	return 0
}
