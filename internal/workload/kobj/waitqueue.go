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

// waiter is a wait_queue_entry, linked into its queue's list (entry).
type waiter struct {
	t          *sched.Task
	excl       bool // WQ_FLAG_EXCLUSIVE
	prev, next *waiter
}

// WaitQueue mirrors struct wait_queue_head (kernel/sched/wait.c, v6.19):
// non-exclusive waiters are added at the head (__add_wait_queue), exclusive
// ones at the tail (__add_wait_queue_entry_tail); a wakeup walks from the
// head. The list is doubly linked as the kernel's list_head is, so adding
// and removing a waiter cost the same however many wait (hackbench's
// thousands of tasks on one start pipe). The zero value is an empty queue.
type WaitQueue struct {
	head, tail *waiter
	n          int
	// index finds a task's entry while the queue is long (from
	// indexFrom waiters until it drains), so that Add's "already queued"
	// test (prepare_to_wait's list_empty(&wq_entry->entry)) does not walk
	// a long list; short queues, the common case, are walked.
	index map[*sched.Task]*waiter
	// spare is the index of the last long queue, emptied when it
	// drained: a thundering herd drains a long queue and refills it at
	// every wakeup (hackbench's start barrier, unix_write_space), and
	// building and growing a new table each time allocated 228 MB in a
	// run of hackbench -l 2 -g 1000.
	spare map[*sched.Task]*waiter
	// free keeps entries of woken waiters for reuse.
	free *waiter
}

// indexFrom is the queue length from which a WaitQueue indexes its
// waiters by task: below it a walk of the list costs less than the map.
const indexFrom = 32

// Len is the number of waiting tasks.
func (w *WaitQueue) Len() int { return w.n }

// find returns t's entry, or nil if t is not queued.
func (w *WaitQueue) find(t *sched.Task) *waiter {
	if w.index != nil {
		return w.index[t]
	}
	for e := w.head; e != nil; e = e.next {
		if e.t == t {
			return e
		}
	}
	return nil
}

// Add queues t as prepare_to_wait (exclusive false) or
// prepare_to_wait_exclusive (exclusive true) do. A task already queued is
// not queued twice.
func (w *WaitQueue) Add(t *sched.Task, exclusive bool) {
	if w.find(t) != nil {
		return
	}
	e := w.free
	if e != nil {
		w.free = e.next
		e.next = nil
	} else {
		e = &waiter{}
	}
	e.t, e.excl = t, exclusive
	if exclusive {
		// __add_wait_queue_entry_tail: list_add_tail
		e.prev = w.tail
		if w.tail != nil {
			w.tail.next = e
		} else {
			w.head = e
		}
		w.tail = e
	} else {
		// __add_wait_queue: list_add at the head
		e.next = w.head
		if w.head != nil {
			w.head.prev = e
		} else {
			w.tail = e
		}
		w.head = e
	}
	w.n++
	switch {
	case w.index != nil:
		w.index[t] = e
	case w.n >= indexFrom:
		w.index, w.spare = w.spare, nil
		if w.index == nil {
			w.index = make(map[*sched.Task]*waiter, 2*w.n)
		}
		for q := w.head; q != nil; q = q.next {
			w.index[q.t] = q
		}
	}
}

// del unlinks e (list_del_init) and keeps it for reuse.
func (w *WaitQueue) del(e *waiter) {
	if e.prev != nil {
		e.prev.next = e.next
	} else {
		w.head = e.next
	}
	if e.next != nil {
		e.next.prev = e.prev
	} else {
		w.tail = e.prev
	}
	w.n--
	if w.index != nil {
		delete(w.index, e.t)
		if w.n == 0 {
			// Short queues are walked; the table, cleared of the
			// deletions' tombstones, waits for the next long one.
			clear(w.index)
			w.index, w.spare = nil, w.index
		}
	}
	*e = waiter{next: w.free}
	w.free = e
}

// Remove takes t off the queue (finish_wait).
func (w *WaitQueue) Remove(t *sched.Task) {
	if e := w.find(t); e != nil {
		w.del(e)
	}
}

// Wake mirrors __wake_up_common with autoremove_wake_function (v6.19): every
// non-exclusive waiter is woken, and exclusive waiters until nrExclusive of
// them have been woken (nrExclusive <= 0 wakes all). Woken entries leave the
// queue. wakeFlags is passed to try_to_wake_up (sched.WFSync for the _sync
// variants). It returns the number of tasks woken.
func (w *WaitQueue) Wake(k *sched.Kernel, nrExclusive int, wakeFlags int) int {
	woken := 0
	// list_for_each_entry_safe_from: the next entry is taken before the
	// current one may leave the list.
	for e := w.head; e != nil; {
		next := e.next
		if !k.WakeUp(e.t, wakeFlags) {
			// Not sleeping (still running on its way to sleep cannot
			// happen here, but a task woken by another object can):
			// leave it queued, as autoremove_wake_function does.
			e = next
			continue
		}
		excl := e.excl
		w.del(e)
		woken++
		if excl {
			nrExclusive--
			if nrExclusive == 0 {
				break
			}
		}
		e = next
	}
	return woken
}

// WakeAll wakes every waiter.
func (w *WaitQueue) WakeAll(k *sched.Kernel, wakeFlags int) int { return w.Wake(k, 0, wakeFlags) }
