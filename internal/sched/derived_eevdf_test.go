package sched

import (
	"github.com/schedlab/schedlab/internal/kernels"
	"math/big"
	"testing"

	"github.com/schedlab/schedlab/internal/cpumask"
	"github.com/schedlab/schedlab/internal/engine"
)

// Tests of EEVDF's pick and slice protection whose expectations follow from
// the algorithm's definition (kernel-fair.md §3.1), not from recorded runs.
// The worked schedules are in the scenario files eevdf_eligibility.txt and
// protect_slice_wakeup*.txt.

// eevdfOracle checks a pick against the definition of EEVDF: among the
// entities queued on c (curr included), the eligible ones are those whose
// vruntime is at most the load-weighted average V = Σ w·v / Σ w, and the
// pick is an eligible entity with the earliest virtual deadline. It
// computes V from the entities themselves, in exact rational arithmetic,
// without the queue's incrementally kept sums.
type eevdfOracle struct {
	ents []*SchedEntity
	sumW *big.Int
	sumV *big.Int // Σ w·v, v taken relative to ref
	ref  uint64
}

func newEEVDFOracle(c *CfsRq) *eevdfOracle {
	o := &eevdfOracle{sumW: new(big.Int), sumV: new(big.Int)}
	if c.Curr != nil && c.Curr.OnRq {
		o.ents = append(o.ents, c.Curr)
	}
	o.ents = append(o.ents, c.timelineEntities()...)
	if len(o.ents) > 0 {
		o.ref = o.ents[0].Vruntime
	}
	for _, e := range o.ents {
		w := big.NewInt(int64(seWeight(e)))
		o.sumW.Add(o.sumW, w)
		o.sumV.Add(o.sumV, new(big.Int).Mul(w, big.NewInt(int64(e.Vruntime-o.ref))))
	}
	return o
}

// eligible reports v ≤ V, i.e. Σ w_i·v_i ≥ v·Σ w_i.
func (o *eevdfOracle) eligible(e *SchedEntity) bool {
	rhs := new(big.Int).Mul(big.NewInt(int64(e.Vruntime-o.ref)), o.sumW)
	return o.sumV.Cmp(rhs) >= 0
}

func before(a, b *SchedEntity) bool { return int64(a.Deadline-b.Deadline) < 0 }

// TestPickEEVDFOracle runs six tasks of different weights on one CPU, two
// hogs and four that sleep and wake (so they come back with lags, some
// positive, some negative and delayed), and checks every switch to a task
// against the oracle: the task switched in is eligible, and no eligible
// queued entity has an earlier deadline. (A switch happens only when the
// pick is not the protected or best current task, so the check covers the
// whole pick.) It also requires that the run contains the picks where the
// definition matters: an ineligible entity with an earlier deadline than
// the one picked, both as the previous task and elsewhere in the tree — a
// plain earliest-deadline pick would have chosen it.
// Reference: fair.c:avg_vruntime, vruntime_eligible, __pick_eevdf (v6.19).
func TestPickEEVDFOracle(t *testing.T) {
	k := newTestKernel(t, "hikey", kernels.V619)
	one := cpumask.Of(k.NrCPUs(), 0)
	for _, s := range []struct {
		nice       int
		run, sleep engine.Time
		name       string
	}{
		{-5, engine.Second, 0, "hog-5"},
		{0, engine.Second, 0, "hog0"},
		{5, engine.Millisecond, 2 * engine.Millisecond, "s5"},
		{0, 300 * engine.Microsecond, 700 * engine.Microsecond, "s0"},
		{10, 2 * engine.Millisecond, 5 * engine.Millisecond, "s10"},
		{-3, 500 * engine.Microsecond, 1500 * engine.Microsecond, "s-3"},
	} {
		if _, err := k.Fork(TaskSpec{Comm: s.name, Nice: s.nice, Allowed: one, Prog: loop(s.run, s.sleep)}); err != nil {
			t.Fatal(err)
		}
	}
	var picks, prevMissed, treeMissed int
	k.Hooks.Switch = func(cpu cpumask.CPU, prev *Task, _ TaskState, next *Task) {
		if next.IsIdleTask() {
			return
		}
		c := k.Rqs[cpu].CFS
		o := newEEVDFOracle(c)
		se := &next.SE
		picks++
		if !o.eligible(se) {
			t.Fatalf("at %v: switched to %s, which is not eligible", k.Now(), next.Comm)
		}
		for _, e := range o.ents {
			if e == se {
				continue
			}
			if o.eligible(e) && before(e, se) {
				t.Fatalf("at %v: switched to %s (deadline %d), but %s is eligible with deadline %d",
					k.Now(), next.Comm, se.Deadline, taskOf(e).Comm, e.Deadline)
			}
			if !o.eligible(e) && before(e, se) {
				if e == &prev.SE {
					prevMissed++
				} else {
					treeMissed++
				}
			}
		}
	}
	k.Eng.RunUntil(2 * engine.Second)
	t.Logf("%d picks; an ineligible entity with an earlier deadline was passed over %d times as the previous task, %d times elsewhere in the tree", picks, prevMissed, treeMissed)
	if picks < 1000 || prevMissed == 0 || treeMissed == 0 {
		t.Fatalf("the run does not exercise eligibility: %d picks, %d and %d ineligible earlier deadlines", picks, prevMissed, treeMissed)
	}
}
