package kobj

import "github.com/schedlab/schedlab/internal/engine"

// KMutex is a kernel struct mutex (kernel/locking/mutex.c, v6.x) held for
// a known time by each call that takes it, such as pipe->mutex: calls on
// one object from different CPUs serialise on it.
//
// A call's state change happens at one instant, the end of its cost
// segment; its critical section is the last hold of that segment. Enter
// is called at that instant: if the previous holder's section ends later
// than this one's would begin, the call must wait the difference before
// it commits, and its section then ends that much later. A waiter spins
// (mutex_optimistic_spin while the owner runs), so the wait is CPU time of
// the caller, and waiters are served in arrival order (the OSQ's MCS
// queue). Simplified: no waiter ever sleeps on the wait list (the owner of
// a pipe mutex never sleeps holding it in these calls, and is preempted
// only in the model's segment, not in its section), no handoff, and the
// hold is work at the caller's speed, the spin wall time at the waiter's.
type KMutex struct {
	free engine.Time // when the last section handed out ends
	// Statistics: sections, those that waited, and the total wait.
	Taken, Contended uint64
	Waited           engine.Time
}

// Enter reserves the section of a call committing at now that held the
// mutex for hold, and returns how long it must spin before it may commit
// (0: the mutex was free).
func (m *KMutex) Enter(now, hold engine.Time) engine.Time {
	m.Taken++
	start := now - hold
	if m.free <= start {
		m.free = now
		return 0
	}
	wait := m.free - start
	m.free += hold
	m.Contended++
	m.Waited += wait
	return wait
}
