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
	when  Time
	seq   uint64
	index int // position in the heap, -1 when not armed
	Fire  func()
	// Name is used only in panics and debugging.
	Name string
}

// NewTimer returns an unarmed timer that calls fire when it expires.
func NewTimer(name string, fire func()) *Timer {
	return &Timer{index: -1, Fire: fire, Name: name}
}

// Armed reports whether the timer is pending.
func (t *Timer) Armed() bool { return t.index >= 0 }

// When is the expiry of an armed timer.
func (t *Timer) When() Time { return t.when }

// Engine is the event loop of one run.
type Engine struct {
	now    Time
	seq    uint64
	heap   []*Timer
	events uint64
	seed   uint64
	stop   bool
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
func (e *Engine) Pending() int { return len(e.heap) }

// Schedule arms t to fire at time at, re-arming it if it was pending. Arming a
// timer in the past is a bug.
func (e *Engine) Schedule(t *Timer, at Time) {
	if at < e.now {
		panic(fmt.Sprintf("engine: timer %q armed at %v, before now %v", t.Name, at, e.now))
	}
	e.seq++
	t.when = at
	t.seq = e.seq
	if t.index >= 0 {
		e.fix(t.index)
		return
	}
	t.index = len(e.heap)
	e.heap = append(e.heap, t)
	e.up(t.index)
}

// After arms t to fire d from now.
func (e *Engine) After(t *Timer, d Time) { e.Schedule(t, e.now+d) }

// Cancel disarms t; cancelling an unarmed timer does nothing.
func (e *Engine) Cancel(t *Timer) {
	i := t.index
	if i < 0 {
		return
	}
	last := len(e.heap) - 1
	if i != last {
		e.swap(i, last)
	}
	e.heap[last] = nil
	e.heap = e.heap[:last]
	t.index = -1
	if i != last {
		e.fix(i)
	}
}

// Stop makes the current Run return after the event being processed.
func (e *Engine) Stop() { e.stop = true }

// Step fires the earliest timer. It reports false when none is pending.
func (e *Engine) Step() bool {
	if len(e.heap) == 0 {
		return false
	}
	t := e.heap[0]
	e.Cancel(t)
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
	for len(e.heap) > 0 && e.heap[0].when <= limit && !e.stop {
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
	a, b := e.heap[i], e.heap[j]
	if a.when != b.when {
		return a.when < b.when
	}
	return a.seq < b.seq
}

func (e *Engine) swap(i, j int) {
	e.heap[i], e.heap[j] = e.heap[j], e.heap[i]
	e.heap[i].index = i
	e.heap[j].index = j
}

func (e *Engine) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
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
		l := 2*i + 1
		if l >= n {
			break
		}
		m := l
		if r := l + 1; r < n && e.less(r, l) {
			m = r
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
