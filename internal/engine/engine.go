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
// Pending timers live in a timing wheel with exact order. Time is cut into
// 64 ns slots; the current slot's timers form a run sorted by (when, seq),
// the next 1023 slots are buckets kept unsorted (arming, moving or
// cancelling a timer there is O(1)), and timers further ahead (ticks, sleep
// timeouts) wait in a 4-ary heap until the wheel reaches them. When the run
// is used up, a bitmap finds the next non-empty bucket, which is sorted and
// becomes the run. Timers armed for the current instant, which are frequent
// (a reschedule on the local CPU, a program step that follows a context
// switch), go to a FIFO instead: every timer due now in the run was armed
// before them, so the order is unchanged. Every timer fires in (when, seq)
// order, exactly as from one heap; the slot width only decides how the work
// is split between sorting buckets and skipping empty ones.
package engine

import (
	"fmt"
	"hash/fnv"
	"math/bits"
	"math/rand/v2"
	"slices"
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

// Timer is an event source that can be armed, re-armed and cancelled. Its
// firer is called with the engine's clock set to the timer's expiry.
type Timer struct {
	when Time
	seq  uint64
	// index is the timer's position in the container that where names.
	index int
	where where
	fire  Firer
	// Name is used only in panics and debugging.
	Name string
}

// A Firer is what a timer calls when it expires. A type of the caller's
// whose Fire method starts from the object the timer belongs to (a CPU,
// a task) saves the load of a closure's captured variables, a cache line
// of its own, on every expiry (NewTimerOf).
type Firer interface{ Fire() }

// funcFirer is a func as a Firer (NewTimer).
type funcFirer func()

func (f funcFirer) Fire() { f() }

// where says which of the engine's containers holds an armed timer.
type where uint8

const (
	unarmed where = iota
	inNow         // the FIFO of timers due now
	inRun         // the sorted run of the current slot
	inWheel       // a bucket of the wheel
	inHeap        // the heap of timers beyond the wheel
)

// NewTimer returns an unarmed timer that calls fire when it expires.
func NewTimer(name string, fire func()) *Timer {
	return &Timer{fire: funcFirer(fire), Name: name}
}

// NewTimerOf returns an unarmed timer that calls f.Fire when it expires.
func NewTimerOf(name string, f Firer) *Timer {
	return &Timer{fire: f, Name: name}
}

// Armed reports whether the timer is pending.
func (t *Timer) Armed() bool { return t.where != unarmed }

// When is the expiry of an armed timer.
func (t *Timer) When() Time { return t.when }

// The wheel has nslot buckets of 1<<slotShift ns each (64 ns, 65.5 µs in
// all): a run segment's end (0.5–8 µs ahead), an IPI (0.5–16 µs) or a
// wakeup preemption lands in it, a tick (1–4 ms) or a sleep timeout goes to
// the heap. The width only trades the cost of sorting a bucket against that
// of skipping empty ones; the order never depends on it.
const (
	slotShift = 6
	nslot     = 1024
	slotMask  = nslot - 1
)

// keepCap is the largest array a bucket keeps once it is empty: a busy
// machine puts 10–15 timers in a slot, so buckets never reallocate then.
const keepCap = 64

// bigClasses is the number of size classes of spare arrays (Engine.big).
const bigClasses = 32

// slot is the wheel slot of time w: slots count 64 ns intervals from 0.
func slot(w Time) int64 { return int64(w) >> slotShift }

// Engine is the event loop of one run.
type Engine struct {
	now Time
	seq uint64
	n   int // armed timers

	// base is the current slot. run holds every armed timer (but those
	// in nowQ) in slots up to base, sorted by (when, seq) from runHd;
	// wheel[s&slotMask] those of slot s for base < s < base+nslot, in
	// the order they came, with a bit of occ (and of occSum, one per
	// word of occ) set for each bucket that is not empty; heap the rest.
	base   int64
	run    []ent
	runHd  int
	wheel  [nslot][]ent
	occ    [nslot / 64]uint64
	occSum uint64
	heap   []ent

	nowQ  []*Timer // FIFO of timers due at now; nil slots were cancelled
	nowHd int
	nowN  int // live entries in nowQ

	events uint64
	seed   uint64
	stop   bool

	// Cold: touched only when a burst fills a bucket or a slot's run
	// was a burst's (kept apart from the fields every event reads).
	// big and small are empty arrays kept for reuse (grow, keep): a
	// burst of timers from the heap in one slot (every busy CPU's tick
	// on one jiffy) grows a bucket past keepCap into one of big, and
	// when a slot's run was such an array it returns there, the bucket
	// getting one of small, so that such bursts after the first
	// allocate nothing and no bucket keeps a burst's array. big holds
	// bigCap entries, by size class so that a burst finds an array
	// that fits, and takes no more once that is twice the most timers
	// ever armed (nMax; or 1,024 entries); small one array per bucket.
	big    [bigClasses][][]ent // by capacity: big[k] holds 2^k ≤ cap < 2^(k+1)
	small  [][]ent
	bigCap int
	nMax   int // the most timers armed when a burst grew or fired
}

// ent keeps a timer's key next to it, so that sorting, sifting and
// comparing do not chase the timer pointer.
type ent struct {
	when Time
	seq  uint64
	t    *Timer
}

func (a *ent) before(b *ent) bool {
	if a.when != b.when {
		return a.when < b.when
	}
	return a.seq < b.seq
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
func (e *Engine) Pending() int { return e.n }

// Schedule arms t to fire at time at, re-arming it if it was pending. Arming a
// timer in the past is a bug.
func (e *Engine) Schedule(t *Timer, at Time) {
	if at < e.now {
		panic(fmt.Sprintf("engine: timer %q armed at %v, before now %v", t.Name, at, e.now))
	}
	e.seq++
	if t.where != unarmed {
		// Re-arm in place when the timer stays where it is: a new key
		// in its wheel bucket, or one sift in the heap.
		switch {
		case at == e.now:
		case t.where == inWheel && slot(at) == slot(t.when):
			t.when, t.seq = at, e.seq
			b := &e.wheel[slot(at)&slotMask][t.index]
			b.when, b.seq = at, e.seq
			return
		case t.where == inHeap && slot(at) >= e.base+nslot:
			t.when, t.seq = at, e.seq
			h := &e.heap[t.index]
			h.when, h.seq = at, e.seq
			e.fix(t.index)
			return
		}
		e.remove(t)
	}
	t.when, t.seq = at, e.seq
	e.n++
	if at == e.now {
		t.where, t.index = inNow, len(e.nowQ)
		e.nowQ = append(e.nowQ, t)
		e.nowN++
		return
	}
	switch s := slot(at); {
	case s <= e.base:
		e.runInsert(ent{at, e.seq, t})
	case s < e.base+nslot:
		e.wheelAdd(s, ent{at, e.seq, t})
	default:
		e.heapPush(ent{at, e.seq, t})
	}
}

// After arms t to fire d from now.
func (e *Engine) After(t *Timer, d Time) { e.Schedule(t, e.now+d) }

// Cancel disarms t; cancelling an unarmed timer does nothing.
func (e *Engine) Cancel(t *Timer) {
	if t.where != unarmed {
		e.remove(t)
	}
}

// remove takes the armed timer t out of its container.
func (e *Engine) remove(t *Timer) {
	i := t.index
	switch t.where {
	case inNow:
		e.nowQ[i] = nil
		e.nowN--
	case inRun:
		// Close the gap from the shorter side.
		r := e.run
		if i-e.runHd < len(r)-1-i {
			for j := i; j > e.runHd; j-- {
				r[j] = r[j-1]
				r[j].t.index = j
			}
			r[e.runHd] = ent{}
			e.runHd++
		} else {
			for j := i; j < len(r)-1; j++ {
				r[j] = r[j+1]
				r[j].t.index = j
			}
			r[len(r)-1] = ent{}
			e.run = r[:len(r)-1]
		}
		if e.runHd == len(e.run) {
			e.run, e.runHd = e.run[:0], 0
		}
	case inWheel:
		s := slot(t.when) & slotMask
		b := e.wheel[s]
		last := len(b) - 1
		if i != last {
			b[i] = b[last]
			b[i].t.index = i
		}
		b[last] = ent{}
		e.wheel[s] = b[:last]
		if last == 0 {
			e.occClear(s)
		}
	case inHeap:
		e.heapRemove(i)
	}
	t.where = unarmed
	e.n--
}

// runInsert adds x to the sorted run. x has the largest seq, so it goes
// after every timer that is not later.
func (e *Engine) runInsert(x ent) {
	if e.runHd > 0 && len(e.run) == cap(e.run) {
		n := copy(e.run, e.run[e.runHd:])
		clear(e.run[n:])
		e.run, e.runHd = e.run[:n], 0
		for j := range e.run {
			e.run[j].t.index = j
		}
	}
	e.run = append(e.run, x)
	r := e.run
	j := len(r) - 1
	for j > e.runHd && r[j-1].when > x.when {
		r[j] = r[j-1]
		r[j].t.index = j
		j--
	}
	r[j] = x
	x.t.where, x.t.index = inRun, j
}

func (e *Engine) wheelAdd(s int64, x ent) {
	s &= slotMask
	x.t.where, x.t.index = inWheel, len(e.wheel[s])
	e.wheel[s] = append(e.wheel[s], x)
	e.occ[s>>6] |= 1 << (s & 63)
	e.occSum |= 1 << (s >> 6)
}

func (e *Engine) occClear(s int64) {
	w := s >> 6
	e.occ[w] &^= 1 << (s & 63)
	if e.occ[w] == 0 {
		e.occSum &^= 1 << w
	}
}

// grow returns a, or a with room for one more entry when it is full:
// where doubling it would pass keepCap, its entries copied into the
// empty run's array or a spare array when one is larger (from the
// smallest size class that has one), else into a new array; a itself,
// emptied, becomes the run's array or a spare (keep). So a burst reuses
// an earlier burst's arrays. A timer's index (its position) is
// unchanged by the copy.
func (e *Engine) grow(a []ent) []ent {
	if len(a) < cap(a) || 2*len(a) < keepCap {
		return a // room left, or append's doubling stays small
	}
	return e.growFull(a)
}

// growFull is grow's work for a full array. Only timers that move from
// the heap into the wheel or the run (a tick, a sleep timeout: every busy
// CPU's tick lands on one jiffy) come through it; an arming within the
// wheel's reach appends to its bucket without the test, which would cost
// every arming 4–6% of BenchmarkEngine.
func (e *Engine) growFull(a []ent) []ent {
	e.nMax = max(e.nMax, e.n)
	var b []ent
	switch k := e.spareFor(len(a)); {
	case len(e.run) == 0 && cap(e.run) > len(a):
		// Between slots the run is empty, and its array, the last
		// burst's when it is this large, is idle until the next
		// refill: it takes the burst and a becomes the run's.
		b = append(e.run, a...)
		clear(a)
		e.run = a[:0]
		return b
	case k >= 0:
		n := len(e.big[k]) - 1
		b = e.big[k][n]
		e.big[k][n] = nil
		e.big[k] = e.big[k][:n]
		e.bigCap -= cap(b)
		b = append(b, a...)
	default:
		b = append(a, ent{})[:len(a)]
	}
	clear(a)
	e.keep(a[:0])
	return b
}

// keep adds a, an empty array whose entries are zero, to the spares.
func (e *Engine) keep(a []ent) {
	if cap(a) <= keepCap {
		if len(e.small) < nslot {
			e.small = append(e.small, a)
		}
		return
	}
	if e.bigCap+cap(a) <= max(2*e.nMax, 1024) {
		k := min(bits.Len(uint(cap(a)))-1, bigClasses-1)
		e.big[k] = append(e.big[k], a)
		e.bigCap += cap(a)
	}
}

// spareFor is the smallest size class of e.big that holds an array of
// more than n entries, or -1.
func (e *Engine) spareFor(n int) int {
	for k := bits.Len(uint(n)); k < bigClasses; k++ {
		if len(e.big[k]) > 0 {
			return k
		}
	}
	return -1
}

// release keeps a, the used-up run's array, larger than keepCap and its
// entries zero, among the spares and returns a small spare array, or nil,
// for the bucket that would have had it.
func (e *Engine) release(a []ent) []ent {
	e.nMax = max(e.nMax, e.n)
	e.keep(a[:0])
	if n := len(e.small); n > 0 {
		b := e.small[n-1]
		e.small[n-1] = nil
		e.small = e.small[:n-1]
		return b
	}
	return nil
}

// nextSlot is the first slot after base that holds a timer, in the wheel
// or, when the wheel is empty, in the heap; ok is false when neither holds
// one.
func (e *Engine) nextSlot() (s int64, ok bool) {
	if e.occSum == 0 {
		if len(e.heap) == 0 {
			return 0, false
		}
		return slot(e.heap[0].when), true
	}
	return e.wheelNext(), true
}

// wheelNext is the first slot after base whose bucket is not empty; the
// wheel must not be empty.
func (e *Engine) wheelNext() int64 {
	p := int((e.base + 1) & slotMask)
	w := p >> 6
	var r int
	if m := e.occ[w] &^ (1<<(p&63) - 1); m != 0 {
		r = w<<6 | bits.TrailingZeros64(m)
	} else if m := e.occSum &^ (1<<(w+1) - 1); m != 0 {
		w2 := bits.TrailingZeros64(m)
		r = w2<<6 | bits.TrailingZeros64(e.occ[w2])
	} else if m := e.occSum & (1<<w - 1); m != 0 {
		w2 := bits.TrailingZeros64(m)
		r = w2<<6 | bits.TrailingZeros64(e.occ[w2])
	} else {
		r = w<<6 | bits.TrailingZeros64(e.occ[w])
	}
	return e.base + 1 + int64((r-p)&slotMask)
}

// refill makes s, the next slot that holds a timer, current: its bucket,
// or the heap's timers in it when the wheel is empty, become the sorted
// run, and the heap's timers that the wheel now covers move into it. The
// run must be empty. Its caller fires the run's first timer next, so base
// is never ahead of the clock when a timer is armed: only a timer due in
// the current slot is inserted into the run.
func (e *Engine) refill(s int64) {
	e.base = s
	e.run, e.runHd = e.run[:0], 0
	if len(e.wheel[s&slotMask]) > 0 {
		// The bucket becomes the run and the empty run's array the
		// bucket's, so nothing is copied. An array grown past
		// keepCap by a burst (100,000 tasks woken at once) goes back
		// to the spares instead and the bucket gets a small one:
		// passed from bucket to bucket, such arrays would end up in
		// every bucket and stay (358 MB at hackbench -g 2500, 3.6 KB
		// a task).
		old := e.run
		if cap(old) > keepCap {
			old = e.release(old)
		}
		e.run, e.wheel[s&slotMask] = e.wheel[s&slotMask], old
		e.occClear(s & slotMask)
	}
	for len(e.heap) > 0 {
		x := e.heap[0]
		xs := slot(x.when)
		if xs >= s+nslot {
			break
		}
		e.heapRemove(0)
		if xs == s {
			e.run = append(e.grow(e.run), x)
		} else {
			e.wheel[xs&slotMask] = e.grow(e.wheel[xs&slotMask])
			e.wheelAdd(xs, x)
		}
	}
	r := e.run
	if len(r) <= 32 && e.seq < 1<<(64-slotShift) {
		// Insertion sort on one key: the timers of one slot differ
		// only in when's low slotShift bits, and seq fits below them.
		key := func(x *ent) uint64 { return uint64(x.when)<<(64-slotShift) | x.seq }
		for i := 1; i < len(r); i++ {
			x := r[i]
			k := key(&x)
			j := i
			for ; j > 0 && k < key(&r[j-1]); j-- {
				r[j] = r[j-1]
			}
			r[j] = x
		}
	} else {
		slices.SortFunc(r, func(a, b ent) int {
			if a.before(&b) {
				return -1
			}
			return 1 // keys are unique
		})
	}
	for i := range r {
		r[i].t.where, r[i].t.index = inRun, i
	}
}

// Stop makes the current Run return after the event being processed.
func (e *Engine) Stop() { e.stop = true }

// next removes and returns the earliest timer, or nil. A timer of the run
// due now was armed before any in nowQ (it was armed at an earlier instant),
// so it goes first; none in the wheel or the heap is due now.
func (e *Engine) next() *Timer {
	if e.runHd == len(e.run) && e.nowN == 0 {
		if s, ok := e.nextSlot(); ok {
			e.refill(s)
		}
	}
	if e.runHd < len(e.run) && (e.run[e.runHd].when == e.now || e.nowN == 0) {
		t := e.run[e.runHd].t
		e.run[e.runHd] = ent{}
		e.runHd++
		if e.runHd == len(e.run) {
			e.run, e.runHd = e.run[:0], 0
		}
		t.where = unarmed
		e.n--
		return t
	}
	for e.nowN > 0 {
		t := e.nowQ[e.nowHd]
		e.nowQ[e.nowHd] = nil
		e.nowHd++
		if t != nil {
			e.nowN--
			e.n--
			t.where = unarmed
			if e.nowN == 0 {
				e.nowQ, e.nowHd = e.nowQ[:0], 0
			}
			return t
		}
	}
	e.nowQ, e.nowHd = e.nowQ[:0], 0
	return nil
}

// peekWhen is the expiry of the earliest timer, or a time after limit
// when that timer is after limit; ok is false when none is pending. It
// makes a slot current only if the slot is not after limit's, so that the
// clock, set to limit, is not behind base.
func (e *Engine) peekWhen(limit Time) (Time, bool) {
	if e.nowN > 0 {
		return e.now, true
	}
	if e.runHd == len(e.run) {
		s, ok := e.nextSlot()
		if !ok {
			return 0, false
		}
		if s > slot(limit) {
			return Time(s << slotShift), true
		}
		e.refill(s)
	}
	return e.run[e.runHd].when, true
}

// Step fires the earliest timer. It reports false when none is pending.
func (e *Engine) Step() bool {
	t := e.next()
	if t == nil {
		return false
	}
	e.now = t.when
	e.events++
	t.fire.Fire()
	return true
}

// RunUntil fires timers in order until the next one is after limit, none is
// pending, or Stop is called; the clock is then set to limit (if it was not
// stopped early) so that callers observe the state at limit.
func (e *Engine) RunUntil(limit Time) {
	e.stop = false
	for !e.stop {
		var t *Timer
		if e.nowN == 0 && e.runHd < len(e.run) {
			// The common case, peekWhen and next in one: the run's
			// first timer, with none due now.
			x := &e.run[e.runHd]
			if x.when > limit {
				break
			}
			t = x.t
			*x = ent{}
			e.runHd++
			if e.runHd == len(e.run) {
				e.run, e.runHd = e.run[:0], 0
			}
			t.where = unarmed
			e.n--
		} else {
			w, ok := e.peekWhen(limit)
			if !ok || w > limit {
				break
			}
			t = e.next()
		}
		e.now = t.when
		e.events++
		t.fire.Fire()
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

// The heap holds the timers beyond the wheel. It is 4-ary: parent of i is
// (i-1)/4, children 4i+1..4i+4.

func (e *Engine) heapPush(x ent) {
	x.t.where, x.t.index = inHeap, len(e.heap)
	e.heap = append(e.heap, x)
	e.up(len(e.heap) - 1)
}

func (e *Engine) heapRemove(i int) {
	last := len(e.heap) - 1
	if i != last {
		e.swap(i, last)
	}
	e.heap[last] = ent{}
	e.heap = e.heap[:last]
	if i != last {
		e.fix(i)
	}
}

func (e *Engine) less(i, j int) bool { return e.heap[i].before(&e.heap[j]) }

func (e *Engine) swap(i, j int) {
	e.heap[i], e.heap[j] = e.heap[j], e.heap[i]
	e.heap[i].t.index = i
	e.heap[j].t.index = j
}

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
