package engine

import (
	"math/rand/v2"
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
