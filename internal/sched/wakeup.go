package sched

import "github.com/schedlab/schedlab/internal/cpumask"

// Wakeup and fork placement (select_task_rq_fair and friends) live here.
// Until that path is modelled, a task stays on its previous CPU.

// selectTaskRqFair mirrors fair.c:select_task_rq_fair.
// PLACEHOLDER: keeps prev_cpu (or the first allowed CPU).
func selectTaskRqFair(k *Kernel, p *Task, prev cpumask.CPU, wakeFlags *int) cpumask.CPU {
	if p.CPUsAllowed.Test(prev) {
		return prev
	}
	return p.CPUsAllowed.First()
}

// updateIdleCore mirrors sched.h:update_idle_core (set_next_task_idle).
// PLACEHOLDER until the wakeup path keeps has_idle_cores.
func (k *Kernel) updateIdleCore(rq *Rq) {}
