package engine

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"
)

func TestOrderByTimeThenSequence(t *testing.T) {
	e := New(1)
	var got []string
	mk := func(name string) *Timer {
		return NewTimer(name, func() { got = append(got, name) })
	}
	a, b, c, d := mk("a"), mk("b"), mk("c"), mk("d")
	e.Schedule(a, 10)
	e.Schedule(b, 5)
	e.Schedule(c, 10) // same time as a, armed later: fires after a
	e.Schedule(d, 7)
	e.Schedule(d, 10) // re-armed: now the last at t=10
	e.Run()
	want := []string{"b", "a", "c", "d"}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("got %v, want %v", got, want)
		}
	}
	if e.Now() != 10 || e.Events() != 4 {
		t.Fatalf("now %v events %d", e.Now(), e.Events())
	}
}

func TestCancel(t *testing.T) {
	e := New(1)
	fired := 0
	a := NewTimer("a", func() { fired++ })
	b := NewTimer("b", func() { fired += 10 })
	e.Schedule(a, 1)
	e.Schedule(b, 2)
	e.Cancel(a)
	e.Cancel(a) // no-op
	if a.Armed() || !b.Armed() {
		t.Fatal("armed state wrong")
	}
	e.Run()
	if fired != 10 {
		t.Fatalf("fired = %d", fired)
	}
}

func TestRunUntil(t *testing.T) {
	e := New(1)
	n := 0
	var tick *Timer
	tick = NewTimer("tick", func() { n++; e.After(tick, 4) })
	e.Schedule(tick, 0)
	e.RunUntil(10)
	if n != 3 || e.Now() != 10 || tick.When() != 12 {
		t.Fatalf("n=%d now=%v when=%v", n, e.Now(), tick.When())
	}
}

func TestSchedulePastPanics(t *testing.T) {
	e := New(1)
	e.RunUntil(100)
	defer func() {
		if recover() == nil {
			t.Fatal("no panic")
		}
	}()
	e.Schedule(NewTimer("x", func() {}), 50)
}

// TestAgainstSortedModel checks the heap against a brute-force sorted list
// under random arm, re-arm and cancel operations.
func TestAgainstSortedModel(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	e := New(1)
	type rec struct {
		when Time
		seq  int
		id   int
	}
	const n = 200
	var fired []int
	timers := make([]*Timer, n)
	for i := range timers {
		id := i
		timers[i] = NewTimer("t", func() { fired = append(fired, id) })
	}
	model := map[int]rec{}
	seq := 0
	for op := 0; op < 5000; op++ {
		i := r.IntN(n)
		if r.IntN(4) == 0 {
			e.Cancel(timers[i])
			delete(model, i)
		} else {
			w := Time(r.IntN(100))
			e.Schedule(timers[i], w)
			seq++
			model[i] = rec{w, seq, i}
		}
	}
	var want []rec
	for _, v := range model {
		want = append(want, v)
	}
	sort.Slice(want, func(a, b int) bool {
		if want[a].when != want[b].when {
			return want[a].when < want[b].when
		}
		return want[a].seq < want[b].seq
	})
	e.Run()
	if len(fired) != len(want) {
		t.Fatalf("fired %d, want %d", len(fired), len(want))
	}
	for k := range want {
		if fired[k] != want[k].id {
			t.Fatalf("position %d: fired %d, want %d", k, fired[k], want[k].id)
		}
	}
}

func TestRandStreamsDeterministicAndIndependent(t *testing.T) {
	a1 := New(42).Rand("hackbench")
	a2 := New(42).Rand("hackbench")
	b := New(42).Rand("schbench")
	c := New(43).Rand("hackbench")
	same, diffName, diffSeed := true, false, false
	for i := 0; i < 16; i++ {
		x, y, z, w := a1.Uint64(), a2.Uint64(), b.Uint64(), c.Uint64()
		same = same && x == y
		diffName = diffName || x != z
		diffSeed = diffSeed || x != w
	}
	if !same || !diffName || !diffSeed {
		t.Fatalf("same=%v diffName=%v diffSeed=%v", same, diffName, diffSeed)
	}
}

// refEngine is a brute-force event list with the engine's ordering rule.
type refEngine struct {
	now  Time
	seq  uint64
	when map[int]Time
	sq   map[int]uint64
}

func (r *refEngine) schedule(id int, at Time) { r.seq++; r.when[id] = at; r.sq[id] = r.seq }
func (r *refEngine) cancel(id int)            { delete(r.when, id); delete(r.sq, id) }
func (r *refEngine) next() (int, bool) {
	best := -1
	for id, w := range r.when {
		if best < 0 || w < r.when[best] || (w == r.when[best] && r.sq[id] < r.sq[best]) {
			best = id
		}
	}
	if best < 0 {
		return 0, false
	}
	r.now = r.when[best]
	r.cancel(best)
	return best, true
}

// TestReentrantAgainstReference fires timers that arm, re-arm and cancel
// other timers (many for the current instant) and checks the firing order
// against the brute-force reference.
func TestReentrantAgainstReference(t *testing.T) {
	const n = 64
	e := New(1)
	ref := &refEngine{when: map[int]Time{}, sq: map[int]uint64{}}
	r := rand.New(rand.NewPCG(3, 4))
	var got []int
	timers := make([]*Timer, n)
	var actions [][]int // per firing: ops drawn up front so both engines see the same
	for i := range timers {
		id := i
		timers[i] = NewTimer("t", func() {
			got = append(got, id)
			for k := 0; k < 3; k++ {
				j := r.IntN(n)
				switch r.IntN(4) {
				case 0:
					e.Cancel(timers[j])
					actions = append(actions, []int{0, j, 0})
				case 1:
					e.Schedule(timers[j], e.Now())
					actions = append(actions, []int{1, j, int(e.Now())})
				default:
					at := e.Now() + Time(r.IntN(5))
					e.Schedule(timers[j], at)
					actions = append(actions, []int{1, j, int(at)})
				}
			}
		})
	}
	for i := 0; i < 8; i++ {
		e.Schedule(timers[i], Time(i%3))
		ref.schedule(i, Time(i%3))
	}
	for steps := 0; steps < 5000 && e.Step(); steps++ {
	}
	// Replay the same actions on the reference and compare the order.
	ai := 0
	for k, id := range got {
		rid, ok := ref.next()
		if !ok || rid != id {
			t.Fatalf("firing %d: engine fired %d, reference %d (ok=%v)", k, id, rid, ok)
		}
		for j := 0; j < 3 && ai < len(actions); j++ {
			a := actions[ai]
			ai++
			if a[0] == 0 {
				ref.cancel(a[1])
			} else {
				ref.schedule(a[1], Time(a[2]))
			}
		}
	}
	if len(got) < 1000 {
		t.Fatalf("only %d firings", len(got))
	}
}

// sortedModel is the ordering rule written as plainly as possible: a slice
// of armed timers, each with the sequence number of its arming, kept sorted
// by (when, seq).
type sortedModel struct {
	seq uint64
	ent []modelEnt
}

type modelEnt struct {
	when Time
	seq  uint64
	id   int
}

func (m *sortedModel) cancel(id int) {
	m.ent = slices.DeleteFunc(m.ent, func(x modelEnt) bool { return x.id == id })
}

func (m *sortedModel) schedule(id int, at Time) {
	m.cancel(id)
	m.seq++
	m.ent = append(m.ent, modelEnt{at, m.seq, id})
	slices.SortFunc(m.ent, func(a, b modelEnt) int {
		if a.when != b.when {
			return cmp.Compare(a.when, b.when)
		}
		return cmp.Compare(a.seq, b.seq)
	})
}

func (m *sortedModel) when(id int) (Time, bool) {
	for _, x := range m.ent {
		if x.id == id {
			return x.when, true
		}
	}
	return 0, false
}

// TestMixAgainstSortedModel runs the engine and the sorted model side by
// side under a random mix of what the simulator does: timers armed for now,
// inside the current 64 ns slot, across the wheel and beyond it (also
// seconds ahead, and many at the same instant, as aligned ticks are),
// re-armed while pending, cancelled whether armed or not, from inside
// expiries and between RunUntil calls. Every expiry must be the model's
// next one, at the model's time, and Pending, Armed and When must agree.
func TestMixAgainstSortedModel(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3} {
		r := rand.New(rand.NewPCG(seed, 15))
		e := New(1)
		m := &sortedModel{}
		const n = 300
		timers := make([]*Timer, n)
		delay := func() Time {
			switch r.IntN(10) {
			case 0:
				return 0
			case 1:
				return Time(r.IntN(64))
			case 2, 3, 4, 5:
				return Time(r.IntN(2000))
			case 6:
				return Time(r.IntN(70_000)) // the wheel's edge
			case 7:
				// an aligned instant, shared by many timers
				tick := 4 * Millisecond
				return (e.Now()/tick+1)*tick - e.Now()
			case 8:
				return Time(r.IntN(20 * int(Millisecond)))
			default:
				return Time(r.Int64N(int64(3 * Second)))
			}
		}
		ops := func(k int) {
			for ; k > 0; k-- {
				id := r.IntN(n)
				if r.IntN(4) == 0 {
					e.Cancel(timers[id])
					m.cancel(id)
					continue
				}
				at := e.Now() + delay()
				e.Schedule(timers[id], at)
				m.schedule(id, at)
			}
			if e.base > slot(e.Now()) {
				t.Fatalf("seed %d: base slot %d is ahead of the clock's %d", seed, e.base, slot(e.Now()))
			}
			id := r.IntN(n)
			w, ok := m.when(id)
			if e.Pending() != len(m.ent) || timers[id].Armed() != ok || ok && timers[id].When() != w {
				t.Fatalf("seed %d at %v: pending %d, model %d; timer %d armed %v when %v, model %v %v",
					seed, e.Now(), e.Pending(), len(m.ent), id, timers[id].Armed(), timers[id].When(), ok, w)
			}
		}
		fired := 0
		for i := range timers {
			id := i
			timers[i] = NewTimer("t", func() {
				fired++
				if len(m.ent) == 0 || m.ent[0].id != id || m.ent[0].when != e.Now() {
					t.Fatalf("seed %d expiry %d: engine fired %d at %v, model has %v", seed, fired, id, e.Now(), m.ent[:min(3, len(m.ent))])
				}
				m.ent = m.ent[1:]
				if timers[id].Armed() {
					t.Fatalf("timer %d armed while it fires", id)
				}
				ops(r.IntN(4))
			})
		}
		ops(200)
		for round := 0; round < 2000; round++ {
			limit := e.Now() + Time(r.Int64N(int64(10*Millisecond)))
			e.RunUntil(limit)
			if e.Now() != limit || len(m.ent) > 0 && m.ent[0].when <= limit {
				t.Fatalf("seed %d: RunUntil(%v) stopped at %v with %v pending", seed, limit, e.Now(), m.ent[:1])
			}
			ops(r.IntN(40))
		}
		e.Run()
		if len(m.ent) != 0 || e.Pending() != 0 {
			t.Fatalf("seed %d: %d left in the model, %d pending", seed, len(m.ent), e.Pending())
		}
		if fired < 100_000 {
			t.Fatalf("seed %d: only %d expiries", seed, fired)
		}
	}
}

// TestBurstArraysLetGo: a burst of 20,000 timers in a few slots (a machine
// waking 100,000 tasks at once) grows those buckets' arrays; once the
// burst has fired no bucket keeps more than keepCap entries of capacity,
// however the arrays were passed between the run and the buckets, and the
// wheel still fires in order afterwards.
func TestBurstArraysLetGo(t *testing.T) {
	e := New(1)
	var last Time
	fired := 0
	var ts []*Timer
	for i := 0; i < 20000; i++ {
		var tm *Timer
		tm = NewTimer("burst", func() {
			if e.Now() < last {
				t.Fatalf("fired at %v after %v", e.Now(), last)
			}
			last = e.Now()
			fired++
		})
		ts = append(ts, tm)
		e.Schedule(tm, Time(1000+(i%7)*64)) // 7 slots
	}
	e.RunUntil(Second)
	if fired != len(ts) {
		t.Fatalf("%d of %d fired", fired, len(ts))
	}
	check := func(when string) {
		for s := range e.wheel {
			if c := cap(e.wheel[s]); c > 64 { // keepCap
				t.Errorf("%s: bucket %d keeps an array of %d entries", when, s, c)
			}
		}
	}
	check("after the burst")
	// A second wave through other slots, then quiet.
	for i, tm := range ts[:5000] {
		e.Schedule(tm, e.Now()+Time(100+(i%3)*64))
	}
	e.RunUntil(2 * Second)
	check("after the second wave")
}

// TestBurstReusesArrays: a burst of timers armed beyond the wheel and
// due in one slot (every busy CPU's tick on one jiffy) outgrows keepCap
// when the wheel reaches it; it takes a spare array of an earlier burst
// and gives it back once its slot has fired, so that repeated bursts
// allocate nothing once the spares exist, and still fire in order.
// (Timers armed within the wheel's reach, a herd's wakeups, grow their
// bucket by append: a test there would cost every arming.)
func TestBurstReusesArrays(t *testing.T) {
	e := New(1)
	var last Time
	fired := 0
	ts := make([]*Timer, 3000)
	for i := range ts {
		ts[i] = NewTimer("burst", func() {
			if e.Now() < last {
				t.Fatalf("fired at %v after %v", e.Now(), last)
			}
			last = e.Now()
			fired++
		})
	}
	// Each wave lasts two of the wheel's spans, so it uses the same
	// buckets: 1,000 timers in each of three slots beyond the wheel.
	span := Time(nslot << slotShift)
	wave := func() {
		now := e.Now()
		for i, tm := range ts {
			e.Schedule(tm, now+span+Time(1000+(i%3)*640))
		}
		e.RunUntil(now + 2*span)
	}
	for range 4 {
		wave()
	}
	if fired != 4*len(ts) {
		t.Fatalf("%d of %d fired", fired, 4*len(ts))
	}
	if a := testing.AllocsPerRun(5, wave); a != 0 {
		t.Errorf("a burst after the first allocates %v times", a)
	}
	if e.bigCap == 0 || len(e.small) > nslot || e.bigCap > max(2*len(ts), 1024) {
		t.Errorf("big spares of %d entries for %d timers, %d small", e.bigCap, len(ts), len(e.small))
	}
	for s := range e.wheel {
		if c := cap(e.wheel[s]); c > keepCap {
			t.Errorf("bucket %d keeps an array of %d entries", s, c)
		}
	}
}
