package explain

import "sync"

// Comparer finds where two runs' decisions part, reading both streams as
// the runs make them (Recorder.Stream), so that neither run's decisions
// are kept whole. The runs go on in parallel (one goroutine each, as
// compare's --jobs runs them); a run that gets more than a bound ahead of
// the other waits for it. What it finds depends only on the two streams,
// not on how the runs were interleaved.
type Comparer struct {
	mu   sync.Mutex
	cond *sync.Cond
	// context is how many matching decisions to keep before the first
	// different one; limit how far one stream may run ahead.
	context, limit int
	buf            [2][]Rec
	done           [2]bool
	n              int // decisions compared and matching
	ring           []pairVal
	d              Divergence
	stopped        bool
}

// Pair is a decision of both runs: Tip's and the variant's (either nil
// where that run had no more decisions), and its index in the streams.
type Pair struct {
	Index      int
	Tip, Other *Rec
}

// pairVal is a Pair kept by value (the context ring).
type pairVal struct {
	index      int
	tip, other Rec
}

// Divergence is where two runs' decisions part.
type Divergence struct {
	// Compared is the number of decisions that matched (kind, task, CPUs
	// and reason) before the first different one, or in all when none
	// differed.
	Compared int
	// Time is the first decision that is the same in both runs but taken
	// at a different time (nil if none before Decision).
	Time *Pair
	// Decision is the first decision with a different kind, task, CPU or
	// reason (nil if the runs never part).
	Decision *Pair
	// Before are the matching decisions just before Decision, oldest
	// first.
	Before []Pair
}

// NewComparer compares two streams, keeping context decisions before the
// first different one.
func NewComparer(context int) *Comparer {
	c := &Comparer{context: context, limit: 1 << 16}
	c.cond = sync.NewCond(&c.mu)
	return c
}

// Sink is the stream function for side 0 (tip) or 1 (the variant).
func (c *Comparer) Sink(side int) func([]Rec) {
	return func(recs []Rec) {
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.stopped {
			return
		}
		c.buf[side] = append(c.buf[side], recs...)
		c.compare()
		for !c.stopped && !c.done[1-side] && len(c.buf[side]) > c.limit {
			c.cond.Wait()
		}
	}
}

// Done is the Close function for side: its run has no more decisions
// (or failed).
func (c *Comparer) Done(side int) func() {
	return func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.done[side] = true
		c.compare()
		c.cond.Broadcast()
	}
}

// compare matches what both streams hold; c.mu is held.
func (c *Comparer) compare() {
	if c.stopped {
		return
	}
	a, b := c.buf[0], c.buf[1]
	m := min(len(a), len(b))
	for i := 0; i < m; i++ {
		x, y := &a[i], &b[i]
		if !x.Same(y) {
			tx, ty := *x, *y
			c.diverge(&tx, &ty)
			return
		}
		if x.T != y.T && c.d.Time == nil {
			tx, ty := *x, *y
			c.d.Time = &Pair{Index: c.n, Tip: &tx, Other: &ty}
		}
		if c.context > 0 {
			if len(c.ring) < c.context {
				c.ring = append(c.ring, pairVal{c.n, *x, *y}) // at c.n
			} else {
				c.ring[c.n%c.context] = pairVal{c.n, *x, *y}
			}
		}
		c.n++
	}
	c.buf[0] = append(c.buf[0][:0], a[m:]...)
	c.buf[1] = append(c.buf[1][:0], b[m:]...)
	switch {
	case c.done[0] && len(c.buf[0]) == 0 && len(c.buf[1]) > 0:
		y := c.buf[1][0]
		c.diverge(nil, &y)
	case c.done[1] && len(c.buf[1]) == 0 && len(c.buf[0]) > 0:
		x := c.buf[0][0]
		c.diverge(&x, nil)
	}
	c.cond.Broadcast()
}

func (c *Comparer) diverge(x, y *Rec) {
	c.d.Decision = &Pair{Index: c.n, Tip: x, Other: y}
	// The ring holds decision i at i mod context, so the oldest is at
	// the slot the next would take.
	c.d.Before = make([]Pair, 0, len(c.ring))
	for j := range c.ring {
		i := j
		if len(c.ring) == c.context {
			i = (c.n + j) % c.context
		}
		v := &c.ring[i]
		c.d.Before = append(c.d.Before, Pair{Index: v.index, Tip: &v.tip, Other: &v.other})
	}
	c.stopped = true
	c.buf[0], c.buf[1] = nil, nil
	c.cond.Broadcast()
}

// Result is what the comparison found; call it once both runs are done.
func (c *Comparer) Result() Divergence {
	c.mu.Lock()
	defer c.mu.Unlock()
	d := c.d
	d.Compared = c.n
	return d
}
