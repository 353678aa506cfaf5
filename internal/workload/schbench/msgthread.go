package schbench

// What both versions of schbench share: the message thread, the futex
// protocol between it and its workers, and thread creation
// (workloads-and-formats.md 2.1 and 2.2).
//
// A worker "messages and waits": it marks its futex BLOCKED, stamps its
// wake_time, pushes itself on its message thread's list, posts the message
// thread (fpost) and waits on its own futex (fwait). A message thread
// creates its workers, then loops: mark its futex BLOCKED, take the whole
// list, read the clock once, and for each queued worker (most recent
// first) set its wake_time to that one timestamp and post it; then wait
// for a post. What differs between the versions is a parameter
// (msgConfig): the 2016 thread then sleeps (think), the current one does
// not; the current one in RPS mode (-R) runs its own loop instead of this
// one once its workers exist; and each version creates its own workers.
// The workers themselves differ (the 2016 one spins and counts the
// latency as the µs of the difference, the current one does a request and
// takes the difference of µs timestamps); they share fpost, fwait and
// msgThread.queue.

import (
	"github.com/schedlab/schedlab/internal/costmodel"
	"github.com/schedlab/schedlab/internal/engine"
	"github.com/schedlab/schedlab/internal/sched"
	"github.com/schedlab/schedlab/internal/workload/kobj"
)

const (
	futexBlocked = 0
	futexRunning = 1
)

// needPost is the test-and-set of schbench's fpost: if the futex is
// BLOCKED, make it RUNNING and report that a FUTEX_WAKE is due.
func needPost(f *kobj.Futex) bool {
	if f.Val == futexBlocked {
		f.Val = futexRunning
		return true
	}
	return false
}

// fpost mirrors schbench's fpost as a two-step operation: the FUTEX_WAKE
// system call's cost, then the wake; nothing if the futex was not BLOCKED.
type fpost struct{ paid bool }

// step returns the operation to run first and false, or true when the
// post is done.
func (p *fpost) step(k *sched.Kernel, f *kobj.Futex, cost engine.Time) (sched.Op, bool) {
	if !p.paid {
		if !needPost(f) {
			return sched.Op{}, true
		}
		p.paid = true
		return sched.Run(cost), false
	}
	p.paid = false
	f.Wake(k, 1)
	return sched.Op{}, true
}

// fwait mirrors schbench's fwait: take a post (RUNNING becomes BLOCKED),
// or pay the FUTEX_WAIT system call and sleep until one comes.
type fwait struct{ paid bool }

// step returns the operation to run or block with and false, or true when
// a post was taken.
func (w *fwait) step(t *sched.Task, f *kobj.Futex, cost engine.Time) (sched.Op, bool) {
	for {
		if f.Val == futexRunning {
			f.Val = futexBlocked
			w.paid = false
			return sched.Op{}, true
		}
		if !w.paid {
			w.paid = true
			return sched.Run(cost), false
		}
		if f.Wait(t, futexBlocked) {
			return sched.Block(), false
		}
	}
}

// spawner creates threads one after another, each after the cost of its
// pthread_create.
type spawner struct {
	created int
	paid    bool
}

// step returns the operation to run and false until n threads exist, then
// true; spawn creates thread i on the current CPU.
func (s *spawner) step(n int, cost engine.Time, spawn func(i int)) (sched.Op, bool) {
	for s.created < n {
		if !s.paid {
			s.paid = true
			return sched.Run(cost), false
		}
		s.paid = false
		spawn(s.created)
		s.created++
	}
	return sched.Op{}, true
}

// waiter is what a message thread sees of a worker: the futex the worker
// waits on and the wake_time the message thread stamps.
type waiter struct {
	futex    kobj.Futex
	wakeTime engine.Time
}

// msgConfig is what differs between the versions' message threads.
type msgConfig struct {
	workers  int                 // per message thread
	costs    *costmodel.Syscalls // thread creation and futex system calls
	stopping *bool               // the run is over: block for good
	// spawn creates one worker of m on the current CPU.
	spawn func(k *sched.Kernel, m *msgThread)
	// think is the sleep after each post taken; 0 for none.
	think func() engine.Time
	// loop, if set, is what the thread runs once its workers exist,
	// instead of the wake loop.
	loop sched.Program
}

// msgThread is one message thread of either version.
type msgThread struct {
	cfg    msgConfig
	t      *sched.Task
	futex  kobj.Futex // posted by the workers
	list   []*waiter  // pushed by workers; woken most recent first
	waking []*waiter
	now    engine.Time
	state  int
	create spawner
	post   fpost
	wait   fwait
}

const (
	mCreate = iota
	mSplice
	mWake
	mWait
	mLoop
)

// queue is a worker's half of msg_and_wait before its post: mark its
// futex BLOCKED, stamp wake_time, push it on m's list.
func (m *msgThread) queue(w *waiter, now engine.Time) {
	w.futex.Val = futexBlocked
	w.wakeTime = now
	m.list = append(m.list, w)
}

func (m *msgThread) Next(k *sched.Kernel, t *sched.Task) sched.Op {
	c := m.cfg.costs
	for {
		switch m.state {
		case mCreate:
			op, done := m.create.step(m.cfg.workers, c.ThreadCreate, func(int) { m.cfg.spawn(k, m) })
			if !done {
				return op
			}
			m.state = mSplice
			if m.cfg.loop != nil {
				m.state = mLoop
			}
		case mSplice:
			// td->futex = FUTEX_BLOCKED; xlist_wake_all: splice, one
			// gettimeofday for the batch.
			m.futex.Val = futexBlocked
			m.waking = append(m.waking[:0], m.list...)
			m.list = m.list[:0]
			m.now = k.Now()
			m.state = mWake
		case mWake:
			if len(m.waking) == 0 {
				m.state = mWait
				continue
			}
			w := m.waking[len(m.waking)-1]
			if !m.post.paid {
				w.wakeTime = m.now
			}
			if op, done := m.post.step(k, &w.futex, c.Futex); !done {
				return op
			}
			m.waking = m.waking[:len(m.waking)-1]
		case mWait:
			if *m.cfg.stopping {
				return sched.Block()
			}
			if op, done := m.wait.step(t, &m.futex, c.Futex); !done {
				return op
			}
			m.state = mSplice
			if m.cfg.think != nil {
				if d := m.cfg.think(); d > 0 {
					return sched.Sleep(d)
				}
			}
		case mLoop:
			return m.cfg.loop.Next(k, t)
		}
	}
}
