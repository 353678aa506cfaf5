// Package engine is schedlab's discrete-event core: virtual time in
// nanoseconds, timers ordered by (time, sequence) so that ties always resolve
// the same way, and the run's random streams, all derived from one seed.
//
// A run owns one Engine and uses it from one goroutine. Nothing in a run may
// read the wall clock, start goroutines or depend on map iteration order: the
// same inputs and seed give the same sequence of events on any machine.
//
// Timers are long-lived objects (like the kernel's hrtimers): a CPU's tick, a
// task's sleep timeout or a run segment's end is one Timer armed again and
// again, so the hot path allocates nothing.
//
// Pending timers live in a 4-ary heap ordered by (when, seq). Timers armed
// for the current instant, which are frequent (a reschedule on the local CPU,
// a program step that follows a context switch), go to a FIFO instead: every
// heap entry due now was armed before them, so the order is unchanged.
package engine

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
)

// Time is virtual time in nanoseconds since the start of the run.
type Time int64

// Common durations.
const (
	Nanosecond  Time = 1
	Microsecond Time = 1000
	Millisecond Time = 1000 * Microsecond
	Second      Time = 1000 * Millisecond
)

// String prints seconds with nanosecond precision ("1.000250000s").
func (t Time) String() string {
	sign := ""
	if t < 0 {
		sign = "-"
		t = -t
	}
	return fmt.Sprintf("%s%d.%09ds", sign, int64(t/Second), int64(t%Second))
}

// Timer is an event source that can be armed, re-armed and cancelled. Fire is
// called with the engine's clock set to the timer's expiry.
type Timer struct {
	when Time
	seq  uint64
	// index is the position in the heap (>= 0), or inNow when queued in
	// the FIFO of timers due now, or -1 when not armed.
	index int
	Fire  func()
	// Name is used only in panics and debugging.
	Name string
}

const inNow = -2

// NewTimer returns an unarmed timer that calls fire when it expires.
func NewTimer(name string, fire func()) *Timer {
	return &Timer{index: -1, Fire: fire, Name: name}
}

// Armed reports whether the timer is pending.
func (t *Timer) Armed() bool { return t.index != -1 }

// When is the expiry of an armed timer.
func (t *Timer) When() Time { return t.when }

// Engine is the event loop of one run.
type Engine struct {
	now    Time
	seq    uint64
	heap   []heapEnt
	nowQ   []*Timer // FIFO of timers due at now; nil slots were cancelled
	nowHd  int
	nowN   int // live entries in nowQ
	events uint64
	seed   uint64
	stop   bool
}

// heapEnt keeps a timer's key next to it, so that heap comparisons do not
// chase the timer pointer.
type heapEnt struct {
	when Time
	seq  uint64
	t    *Timer
}

// New returns an engine at time 0 whose random streams derive from seed.
func New(seed uint64) *Engine { return &Engine{seed: seed} }

// Now is the current virtual time.
func (e *Engine) Now() Time { return e.now }

// Events is the number of timer expiries processed so far.
func (e *Engine) Events() uint64 { return e.events }

// Seed is the run's seed.
func (e *Engine) Seed() uint64 { return e.seed }

// Pending is the number of armed timers.
func (e *Engine) Pending() int { return len(e.heap) + e.nowN }

// Schedule arms t to fire at time at, re-arming it if it was pending. Arming a
// timer in the past is a bug.
func (e *Engine) Schedule(t *Timer, at Time) {
	if at < e.now {
		panic(fmt.Sprintf("engine: timer %q armed at %v, before now %v", t.Name, at, e.now))
	}
	e.seq++
	if t.index >= 0 && at != e.now {
		// Re-arm in place: one sift instead of a removal and an insertion.
		t.when, t.seq = at, e.seq
		e.heap[t.index].when, e.heap[t.index].seq = at, e.seq
		e.fix(t.index)
		return
	}
	if t.index != -1 {
		e.Cancel(t)
	}
	t.when = at
	t.seq = e.seq
	if at == e.now {
		t.index = inNow
		e.nowQ = append(e.nowQ, t)
		e.nowN++
		return
	}
	t.index = len(e.heap)
	e.heap = append(e.heap, heapEnt{at, t.seq, t})
	e.up(t.index)
}

// After arms t to fire d from now.
func (e *Engine) After(t *Timer, d Time) { e.Schedule(t, e.now+d) }

// Cancel disarms t; cancelling an unarmed timer does nothing.
func (e *Engine) Cancel(t *Timer) {
	i := t.index
	switch {
	case i == -1:
		return
	case i == inNow:
		for j := e.nowHd; j < len(e.nowQ); j++ {
			if e.nowQ[j] == t {
				e.nowQ[j] = nil
				break
			}
		}
		e.nowN--
		t.index = -1
		return
	}
	last := len(e.heap) - 1
	if i != last {
		e.swap(i, last)
	}
	e.heap[last] = heapEnt{}
	e.heap = e.heap[:last]
	t.index = -1
	if i != last {
		e.fix(i)
	}
}

// Stop makes the current Run return after the event being processed.
func (e *Engine) Stop() { e.stop = true }

// next removes and returns the earliest timer, or nil.
func (e *Engine) next() *Timer {
	if len(e.heap) > 0 && (e.heap[0].when == e.now || e.nowN == 0) {
		t := e.heap[0].t
		e.Cancel(t)
		return t
	}
	for e.nowN > 0 {
		t := e.nowQ[e.nowHd]
		e.nowQ[e.nowHd] = nil
		e.nowHd++
		if t != nil {
			e.nowN--
			t.index = -1
			if e.nowN == 0 {
				e.nowQ, e.nowHd = e.nowQ[:0], 0
			}
			return t
		}
	}
	e.nowQ, e.nowHd = e.nowQ[:0], 0
	return nil
}

// peekWhen is the expiry of the earliest timer; ok is false when none.
func (e *Engine) peekWhen() (Time, bool) {
	if e.nowN > 0 {
		return e.now, true
	}
	if len(e.heap) > 0 {
		return e.heap[0].when, true
	}
	return 0, false
}

// Step fires the earliest timer. It reports false when none is pending.
func (e *Engine) Step() bool {
	t := e.next()
	if t == nil {
		return false
	}
	e.now = t.when
	e.events++
	t.Fire()
	return true
}

// RunUntil fires timers in order until the next one is after limit, none is
// pending, or Stop is called; the clock is then set to limit (if it was not
// stopped early) so that callers observe the state at limit.
func (e *Engine) RunUntil(limit Time) {
	e.stop = false
	for !e.stop {
		w, ok := e.peekWhen()
		if !ok || w > limit {
			break
		}
		e.Step()
	}
	if !e.stop && e.now < limit {
		e.now = limit
	}
}

// Run fires timers until none is pending or Stop is called.
func (e *Engine) Run() {
	e.stop = false
	for !e.stop && e.Step() {
	}
}

// Rand returns a random stream named name, derived from the run's seed: the
// same seed and name always give the same stream, and streams with different
// names are independent, so adding a new random consumer never changes the
// numbers another one draws.
func (e *Engine) Rand(name string) *rand.Rand {
	h := fnv.New64a()
	h.Write([]byte(name))
	return rand.New(rand.NewPCG(e.seed, h.Sum64()))
}

func (e *Engine) less(i, j int) bool {
	a, b := &e.heap[i], &e.heap[j]
	if a.when != b.when {
		return a.when < b.when
	}
	return a.seq < b.seq
}

func (e *Engine) swap(i, j int) {
	e.heap[i], e.heap[j] = e.heap[j], e.heap[i]
	e.heap[i].t.index = i
	e.heap[j].t.index = j
}

// The heap is 4-ary: parent of i is (i-1)/4, children 4i+1..4i+4.
func (e *Engine) up(i int) {
	for i > 0 {
		p := (i - 1) / 4
		if !e.less(i, p) {
			return
		}
		e.swap(i, p)
		i = p
	}
}

func (e *Engine) down(i int) bool {
	start := i
	n := len(e.heap)
	for {
		c := 4*i + 1
		if c >= n {
			break
		}
		m := c
		end := c + 4
		if end > n {
			end = n
		}
		for j := c + 1; j < end; j++ {
			if e.less(j, m) {
				m = j
			}
		}
		if !e.less(m, i) {
			break
		}
		e.swap(i, m)
		i = m
	}
	return i > start
}

func (e *Engine) fix(i int) {
	if !e.down(i) {
		e.up(i)
	}
}
