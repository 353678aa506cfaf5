package kobj

import "github.com/schedlab/schedlab/internal/sched"

// Futex is one futex word with its hash-bucket queue (kernel/futex). Wakes
// go through wake_up_q → wake_up_process: no WF_SYNC.
type Futex struct {
	Val int
	q   WaitQueue
}

// Wait mirrors FUTEX_WAIT (kernel/futex, v6.19): if the word still holds
// expect, t is queued and the program must block (true); otherwise it returns
// false (EAGAIN).
func (f *Futex) Wait(t *sched.Task, expect int) bool {
	if f.Val != expect {
		return false
	}
	f.q.Add(t, true)
	return true
}

// Wake mirrors FUTEX_WAKE (v6.19): wakes up to n waiters (n <= 0: all) in
// queue order and returns how many.
func (f *Futex) Wake(k *sched.Kernel, n int) int { return f.q.Wake(k, n, 0) }

// Waiters is the number of queued tasks.
func (f *Futex) Waiters() int { return f.q.Len() }

// Mutex is a futex-based user-space mutex (glibc's lowlevellock): Unlock
// wakes one waiter, which must try again; there is no hand-off, so a running
// task may take the lock first (lock stealing).
type Mutex struct {
	Owner *sched.Task
	q     WaitQueue
}

// Lock takes the mutex for t and reports success; on failure t is queued
// and the program must block, then call Lock again.
func (m *Mutex) Lock(t *sched.Task) bool {
	if m.Owner == nil || m.Owner == t {
		m.Owner = t
		return true
	}
	m.q.Add(t, true)
	return false
}

// Unlock releases the mutex and wakes one waiter.
func (m *Mutex) Unlock(k *sched.Kernel) {
	m.Owner = nil
	m.q.Wake(k, 1, 0)
}

// Cond is a condition variable (pthread_cond_t): Wait releases the mutex
// and sleeps until Signal or Broadcast.
type Cond struct {
	q WaitQueue
}

// Wait queues t on the condition and releases m; the program must block,
// then re-take m.
func (c *Cond) Wait(k *sched.Kernel, t *sched.Task, m *Mutex) {
	c.q.Add(t, true)
	if m != nil && m.Owner == t {
		m.Unlock(k)
	}
}

// Signal wakes one waiter.
func (c *Cond) Signal(k *sched.Kernel) int { return c.q.Wake(k, 1, 0) }

// Broadcast wakes every waiter.
func (c *Cond) Broadcast(k *sched.Kernel) int { return c.q.WakeAll(k, 0) }

// Sem is a counting semaphore (sem_t) starting at 0.
type Sem struct {
	Count int
	q     WaitQueue
}

// Post increments the count and wakes one waiter.
func (s *Sem) Post(k *sched.Kernel) {
	s.Count++
	s.q.Wake(k, 1, 0)
}

// TryWait decrements the count if it is positive and reports success; on
// failure t is queued and the program must block, then call TryWait again.
func (s *Sem) TryWait(t *sched.Task) bool {
	if s.Count > 0 {
		s.Count--
		return true
	}
	s.q.Add(t, true)
	return false
}

// Barrier is a pthread barrier for N tasks: the last to arrive wakes the
// others (a futex wake of all, no WF_SYNC) and the barrier resets.
type Barrier struct {
	N       int
	arrived int
	gen     uint64
	q       WaitQueue
}

// Arrive registers t at the barrier and returns the generation it must
// wait for the end of, and whether t was the last (then nobody waits).
// If not last, t is queued and the program must block until Passed(gen).
func (b *Barrier) Arrive(k *sched.Kernel, t *sched.Task) (gen uint64, last bool) {
	gen = b.gen
	b.arrived++
	if b.arrived >= b.N {
		b.arrived = 0
		b.gen++
		b.q.WakeAll(k, 0)
		return gen, true
	}
	b.q.Add(t, true)
	return gen, false
}

// Passed reports whether the barrier generation gen has completed; if not,
// t is queued again (a spurious wakeup) and the program must block.
func (b *Barrier) Passed(t *sched.Task, gen uint64) bool {
	if b.gen != gen {
		return true
	}
	b.q.Add(t, true)
	return false
}

// ArriveSpin registers an arrival like Arrive but does not queue t: the
// caller spins, polling Released, and calls Passed once it gives up.
func (b *Barrier) ArriveSpin(k *sched.Kernel) (gen uint64, last bool) {
	gen = b.gen
	b.arrived++
	if b.arrived >= b.N {
		b.arrived = 0
		b.gen++
		b.q.WakeAll(k, 0)
		return gen, true
	}
	return gen, false
}

// Released reports whether generation gen has ended.
func (b *Barrier) Released(gen uint64) bool { return b.gen != gen }
