package explain

import (
	"fmt"

	"github.com/schedlab/schedlab/internal/cpumask"
	"github.com/schedlab/schedlab/internal/sched"
	"github.com/schedlab/schedlab/internal/topology"
)

// Level is a distance between two CPUs: the same CPU, the lowest
// sched-domain level whose domain of the first spans the second, or no
// domain at all. A level is numbered by what the domain is (CanonicalLevel:
// SMT, CLS, MC, PKG or DIE, then NODE and NUMA by node distance), not by
// its index in the kernel's topology table, so that two kernels with
// different tables (a v5.12 tip without CLS against a variant that adds
// it) count an MC domain, or a NUMA domain of one distance, in the same
// row.
type Level int

// CanonicalLevel is the Level of a domain of topology t: 0 SMT, 1 CLS,
// 2 MC, 3 PKG or DIE, and 4 + i for the NODE or NUMA level of the i-th
// smallest node distance of the machine (Topology.NumaDistances,
// sched_domains_numa_distance). A name it does not know comes
// after them all, by its table index.
func CanonicalLevel(t *topology.Topology, d *topology.Domain) Level {
	switch d.Name {
	case "SMT":
		return 0
	case "CLS":
		return 1
	case "MC":
		return 2
	case "PKG", "DIE":
		return 3
	case "NODE", "NUMA":
		i := 0
		for _, x := range t.NumaDistances {
			if x < d.NumaDistance {
				i++
			}
		}
		return Level(4 + i)
	}
	return Level(4 + len(t.NumaDistances) + d.Level)
}

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
	// PKG or DIE, NODE, NUMA ...), and NumaDistances the node distance of
	// the NODE and NUMA ones.
	Names         map[Level]string
	NumaDistances map[Level]int
}

// NewCounts is an empty Counts.
func NewCounts() *Counts {
	return &Counts{Paths: map[PathKey]uint64{}, Affine: map[sched.Affine]uint64{}, MoveAffine: map[string]uint64{},
		Waker: map[Level]uint64{}, Prev: map[KindLevel]uint64{}, Balance: map[BalanceKey]uint64{}, Names: map[Level]string{}, NumaDistances: map[Level]int{}}
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
	for k, v := range o.NumaDistances {
		c.NumaDistances[k] = v
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

// nSlots is the number of distances a tally tells apart: the same CPU,
// the topology levels 0 to nSlots-3, none.
const nSlots = 34

// tally is a recorder's counts, in arrays: counting a decision costs a
// few increments and a table lookup, not map operations. It is folded
// into a Counts at the end (fold).
type tally struct {
	paths   [sched.NrDecisionKinds][2][sched.NrReasons]uint64
	affine  [sched.NrAffines]uint64
	move    [nSlots]uint64 // ttwu_move_affine by wake_affine's domain
	waker   [nSlots]uint64
	prev    [sched.NrDecisionKinds][nSlots]uint64
	balance [sched.NrReasons][nSlots]uint64
	names   [nSlots]string
	numaD   [nSlots]int
	// dist[a*n+b] is the slot of the distance from a to b, plus one (0:
	// not looked up yet).
	dist []uint8
	n    int
}

func newTally(n int) *tally { return &tally{dist: make([]uint8, n*n), n: n} }

func slotOf(l Level) int {
	switch {
	case l == LevelSame:
		return 0
	case l == LevelOther || l < 0 || int(l) > nSlots-3:
		return nSlots - 1
	}
	return int(l) + 1
}

func levelOf(slot int) Level {
	switch slot {
	case 0:
		return LevelSame
	case nSlots - 1:
		return LevelOther
	}
	return Level(slot - 1)
}

func (t *tally) add(k *sched.Kernel, d *sched.Decision) {
	slow := 0
	if d.Slow {
		slow = 1
	}
	t.paths[d.Kind][slow][d.Reason]++
	if d.Kind == sched.DecisionBalance {
		s := t.domainSlot(k, d.Domain)
		t.balance[d.Reason][s]++
		return
	}
	t.prev[d.Kind][t.distance(k, d.Prev, d.Chosen)]++
	if d.Kind != sched.DecisionWakeup {
		return
	}
	t.affine[d.Affine]++
	if d.Affine.TalliedAffine(&k.S) {
		t.move[t.domainSlot(k, d.Domain)]++
	}
	t.waker[t.distance(k, d.CPU, d.Chosen)]++
}

func (t *tally) domainSlot(k *sched.Kernel, sd *sched.SchedDomain) int {
	s := slotOf(CanonicalLevel(k.Topo, sd.T))
	if t.names[s] == "" {
		t.names[s] = sd.T.Name
		t.numaD[s] = sd.T.NumaDistance
	}
	return s
}

// distance is the slot of the level of the lowest domain of a that spans
// b, as ttwu_stat finds it for ttwu_wake_remote.
func (t *tally) distance(k *sched.Kernel, a, b cpumask.CPU) int {
	i := int(a)*t.n + int(b)
	if s := t.dist[i]; s != 0 {
		return int(s) - 1
	}
	s := nSlots - 1
	if a == b {
		s = 0
	} else {
		for _, sd := range k.Domains(int(a)) {
			if sd.T.Span.Test(b) {
				s = t.domainSlot(k, sd)
				break
			}
		}
	}
	t.dist[i] = uint8(s + 1)
	return s
}

// fold is the tally as Counts.
func (t *tally) fold() *Counts {
	c := NewCounts()
	for kind := range t.paths {
		for slow := range t.paths[kind] {
			for r, n := range t.paths[kind][slow] {
				if n > 0 {
					c.Paths[PathKey{sched.DecisionKind(kind), slow == 1, sched.Reason(r)}] = n
				}
			}
		}
	}
	for a, n := range t.affine {
		if n > 0 {
			c.Affine[sched.Affine(a)] = n
		}
	}
	for s := 0; s < nSlots; s++ {
		l := levelOf(s)
		if t.names[s] != "" {
			c.Names[l] = t.names[s]
			if n := t.names[s]; n == "NODE" || n == "NUMA" {
				c.NumaDistances[l] = t.numaD[s]
			}
		}
		if n := t.move[s]; n > 0 {
			c.MoveAffine[t.names[s]] += n
		}
		if n := t.waker[s]; n > 0 {
			c.Waker[l] = n
		}
		for kind := range t.prev {
			if n := t.prev[kind][s]; n > 0 {
				c.Prev[KindLevel{sched.DecisionKind(kind), l}] = n
			}
		}
		for r := range t.balance {
			if n := t.balance[r][s]; n > 0 {
				c.Balance[BalanceKey{sched.Reason(r), l}] = n
			}
		}
	}
	return c
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

// LevelLabel is LevelName, with the node distance for a NODE or NUMA
// level whose name another level of c shares (the kernel calls every NUMA
// level NUMA; /proc/schedstat tells them apart only by their order).
func (c *Counts) LevelLabel(l Level) string {
	if d, ok := c.NumaDistances[l]; ok && c.sharedName(l) {
		return fmt.Sprintf("%s (distance %d)", c.LevelName(l), d)
	}
	return c.LevelName(l)
}

// sharedName reports whether another level has level l's name (the
// kernel calls every NUMA level NUMA).
func (c *Counts) sharedName(l Level) bool {
	for o, n := range c.Names {
		if o != l && n == c.Names[l] {
			return true
		}
	}
	return false
}
