// Package kobj models the kernel objects benchmark programs block on: wait
// queues, pipes, AF_UNIX stream sockets, futexes, mutexes, condition
// variables, semaphores and barriers. Each object keeps the kernel's
// accounting (pipe pages, socket buffer truesize) and wakes sleepers the way
// the kernel's code does, with the same wake flags (pipe_write and
// sock_def_readable wake with WF_SYNC; futex_wake does not), so that the
// scheduler model sees the wakeup pattern the real benchmark produces.
//
// # How a program uses an object
//
// A task program (sched.Program) issues a system call in two steps: first it
// returns sched.Run(cost) for the CPU time of the call (costmodel.Syscalls), then,
// when Next is called again, it performs the call on the object. If the call
// cannot complete (an empty pipe, a full socket buffer), the object has put
// the task on one of its wait queues and the program returns sched.Block();
// when the task is woken and runs again, the program repeats the call, as the
// kernel's wait loops (wait_event_interruptible_exclusive, sk_wait_event) do.
// Every object operation is atomic: a simulation event runs to completion, so
// there is no lost-wakeup window and no lock to model. The one lock the real
// pipes take (pipe->mutex) is not modelled; its contention is part of what the
// cost constants average over.
package kobj

import "github.com/schedlab/schedlab/internal/sched"

// waiter is a wait_queue_entry.
type waiter struct {
	t    *sched.Task
	excl bool // WQ_FLAG_EXCLUSIVE
}

// WaitQueue mirrors struct wait_queue_head (kernel/sched/wait.c, v6.19):
// non-exclusive waiters are added at the head (__add_wait_queue), exclusive
// ones at the tail (__add_wait_queue_entry_tail); a wakeup walks from the
// head.
type WaitQueue struct {
	q []waiter
}

// Len is the number of waiting tasks.
func (w *WaitQueue) Len() int { return len(w.q) }

// Add queues t as prepare_to_wait (exclusive false) or
// prepare_to_wait_exclusive (exclusive true) do. A task already queued is
// not queued twice.
func (w *WaitQueue) Add(t *sched.Task, exclusive bool) {
	for _, e := range w.q {
		if e.t == t {
			return
		}
	}
	if exclusive {
		w.q = append(w.q, waiter{t, true})
		return
	}
	w.q = append(w.q, waiter{})
	copy(w.q[1:], w.q)
	w.q[0] = waiter{t, false}
}

// Remove takes t off the queue (finish_wait).
func (w *WaitQueue) Remove(t *sched.Task) {
	for i, e := range w.q {
		if e.t == t {
			w.q = append(w.q[:i], w.q[i+1:]...)
			return
		}
	}
}

// Wake mirrors __wake_up_common with autoremove_wake_function (v6.19): every
// non-exclusive waiter is woken, and exclusive waiters until nrExclusive of
// them have been woken (nrExclusive <= 0 wakes all). Woken entries leave the
// queue. wakeFlags is passed to try_to_wake_up (sched.WFSync for the _sync
// variants). It returns the number of tasks woken.
func (w *WaitQueue) Wake(k *sched.Kernel, nrExclusive int, wakeFlags int) int {
	woken := 0
	i := 0
	for i < len(w.q) {
		e := w.q[i]
		if !k.WakeUp(e.t, wakeFlags) {
			// Not sleeping (still running on its way to sleep cannot
			// happen here, but a task woken by another object can):
			// leave it queued, as autoremove_wake_function does.
			i++
			continue
		}
		w.q = append(w.q[:i], w.q[i+1:]...)
		woken++
		if e.excl {
			nrExclusive--
			if nrExclusive == 0 {
				break
			}
		}
	}
	return woken
}

// WakeAll wakes every waiter.
func (w *WaitQueue) WakeAll(k *sched.Kernel, wakeFlags int) int { return w.Wake(k, 0, wakeFlags) }
