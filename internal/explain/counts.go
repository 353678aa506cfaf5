package explain

import (
	"github.com/schedlab/schedlab/internal/cpumask"
	"github.com/schedlab/schedlab/internal/sched"
)

// Level is a distance between two CPUs: the same CPU, the lowest
// sched-domain level (topology.Domain.Level) whose domain of the first
// spans the second, or no domain at all.
type Level int

const (
	// LevelSame: the same CPU.
	LevelSame Level = -1
	// LevelOther: no domain of the first CPU spans the second (another
	// node or socket that no domain joins).
	LevelOther Level = 1 << 20
)

// PathKey is a decision's path and reason.
type PathKey struct {
	Kind   sched.DecisionKind
	Slow   bool
	Reason sched.Reason
}

// KindLevel is a placement's kind and distance.
type KindLevel struct {
	Kind  sched.DecisionKind
	Level Level
}

// BalanceKey is a balance migration's type and the level of the domain
// balanced.
type BalanceKey struct {
	Type  sched.Reason
	Level Level
}

// Counts are a run's decisions counted by path and reason, by distance,
// and its balance migrations by type and level. Counts of several runs
// add up (Add).
type Counts struct {
	// Paths counts every decision by path and reason.
	Paths map[PathKey]uint64
	// Affine counts the wakeups by wake_affine's outcome; MoveAffine
	// those it pulled to the waking CPU by the name of the domain it ran
	// at (schedstat's ttwu_move_affine).
	Affine     map[sched.Affine]uint64
	MoveAffine map[string]uint64
	// Waker counts the wakeups by the distance from the waking CPU to
	// the chosen one: schedstat's ttwu_local (LevelSame) and
	// ttwu_wake_remote by domain.
	Waker map[Level]uint64
	// Prev counts the placements (wakeups, forks, execs) by the distance
	// from prev to the chosen CPU: what a migration's cache refill pays
	// for.
	Prev map[KindLevel]uint64
	// Balance counts the balancer's migrations by type and level.
	Balance map[BalanceKey]uint64
	// Names are the kernel's names of the levels seen (SMT, CLS, MC,
	// PKG or DIE, NODE, NUMA ...).
	Names map[Level]string
}

// NewCounts is an empty Counts.
func NewCounts() *Counts {
	return &Counts{Paths: map[PathKey]uint64{}, Affine: map[sched.Affine]uint64{}, MoveAffine: map[string]uint64{},
		Waker: map[Level]uint64{}, Prev: map[KindLevel]uint64{}, Balance: map[BalanceKey]uint64{}, Names: map[Level]string{}}
}

// Add adds o's counts to c.
func (c *Counts) Add(o *Counts) {
	for k, v := range o.Paths {
		c.Paths[k] += v
	}
	for k, v := range o.Affine {
		c.Affine[k] += v
	}
	for k, v := range o.MoveAffine {
		c.MoveAffine[k] += v
	}
	for k, v := range o.Waker {
		c.Waker[k] += v
	}
	for k, v := range o.Prev {
		c.Prev[k] += v
	}
	for k, v := range o.Balance {
		c.Balance[k] += v
	}
	for k, v := range o.Names {
		c.Names[k] = v
	}
}

// Total is the number of decisions of kind.
func (c *Counts) Total(kind sched.DecisionKind) uint64 {
	var n uint64
	for k, v := range c.Paths {
		if k.Kind == kind {
			n += v
		}
	}
	return n
}

func (c *Counts) add(k *sched.Kernel, d *sched.Decision, rec *Rec) {
	c.Paths[PathKey{d.Kind, d.Slow, d.Reason}]++
	if d.Kind == sched.DecisionBalance {
		l := Level(d.Domain.T.Level)
		c.Names[l] = d.Domain.T.Name
		c.Balance[BalanceKey{d.Reason, l}]++
		return
	}
	c.Prev[KindLevel{d.Kind, c.distance(k, d.Prev, d.Chosen)}]++
	if d.Kind != sched.DecisionWakeup {
		return
	}
	c.Affine[d.Affine]++
	if d.Affine.MovedAffine() {
		c.MoveAffine[rec.Domain]++
	}
	c.Waker[c.distance(k, d.CPU, d.Chosen)]++
}

// distance is the level of the lowest domain of a that spans b, as
// ttwu_stat finds it for ttwu_wake_remote.
func (c *Counts) distance(k *sched.Kernel, a, b cpumask.CPU) Level {
	if a == b {
		return LevelSame
	}
	for _, sd := range k.Domains(int(a)) {
		if sd.T.Span.Test(b) {
			l := Level(sd.T.Level)
			if _, ok := c.Names[l]; !ok {
				c.Names[l] = sd.T.Name
			}
			return l
		}
	}
	return LevelOther
}

// LevelName is a level as the tables print it.
func (c *Counts) LevelName(l Level) string {
	switch l {
	case LevelSame:
		return "same CPU"
	case LevelOther:
		return "other node/socket (no domain)"
	}
	if n, ok := c.Names[l]; ok {
		return n
	}
	return "level ?"
}
