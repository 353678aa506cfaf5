package costmodel

import (
	"math/bits"

	"github.com/schedlab/schedlab/internal/cpumask"
)

// Memory bandwidth sharing. Running tasks that stream memory ask for a
// bandwidth (their demand at full speed); three kinds of limit hold: each
// task draws at most mem_bw_core_gbps, the tasks running on one LLC
// together at most mem_bw_llc_gbps, and the tasks whose memory is on one
// node together at most mem_bw_node_gbps. A task progresses at the
// fraction of its demand it is granted.
//
// The fractions are max-min fair (progressive filling) in that speed
// factor: every task's factor rises together from 0; when a limit is
// reached, its tasks stop there, and the others keep rising, up to 1 or
// their core limit. So the tasks behind one saturated limit are all slowed
// by the same factor — a shared memory controller or link inflates every
// requester's latency alike, so each gets bandwidth in proportion to its
// demand — and what a saturated limit leaves unused (its tasks cannot use
// more) goes to the tasks behind other limits. With equal demands this is
// max-min fairness in GB/s; when one limit is the tightest for every task
// sharing it, it is that limit's share, demand over total demand.

// MemTask is one running task's use of memory bandwidth.
type MemTask struct {
	CPU cpumask.CPU
	// Demand is the bandwidth it would draw alone, in bytes per µs.
	Demand int64
	// MemNode is the node its memory is on (first touch); negative for
	// the CPU's own node.
	MemNode int
}

// Share is the fraction Num/Den ≤ 1 of its demand a task is granted, and
// so the factor by which memory-bound work slows down.
type Share struct{ Num, Den int64 }

// Full is the share of a task nothing limits.
var Full = Share{1, 1}

// Of is the speed s scaled by the share.
func (f Share) Of(s int64) int64 {
	if f.Num >= f.Den {
		return s
	}
	return mul(s, f.Num).div(f.Den).int64()
}

// less reports a < b, exactly.
func (a Share) less(b Share) bool {
	h1, l1 := bits.Mul64(uint64(a.Num), uint64(b.Den))
	h2, l2 := bits.Mul64(uint64(b.Num), uint64(a.Den))
	return h1 < h2 || h1 == h2 && l1 < l2
}

// MemSharer computes bandwidth shares with the table's limits, reusing
// its buffers (one per kernel; not for concurrent use).
type MemSharer struct {
	t        *Table
	cpuLLC   []int32 // each CPU's LLC, numbered densely
	limits   []memLimit
	llcLimit []int    // dense LLC → index into limits (-1: none yet)
	nodeOf   []int    // node → index into limits (-1: none yet)
	members  [][2]int // per task: its LLC's and its node's limit (-1: none)
	active   []bool
	own      []Share // each task's own limit: mem_bw_core_gbps / demand, at most 1
	full     []bool
}

// memLimit is one LLC's or node's bandwidth, in bytes per µs ·2^shareShift
// (so that what is granted to frozen tasks keeps its fractions).
type memLimit struct {
	cap       int64
	used      int64 // granted to its frozen tasks
	sumActive int64 // demand of its tasks still rising
}

const shareShift = 20

// NewMemSharer returns a sharer for the table's machine and limits.
func (t *Table) NewMemSharer() *MemSharer {
	m := &MemSharer{t: t, cpuLLC: make([]int32, len(t.cpus))}
	dense := map[int32]int32{}
	for c, loc := range t.cpus {
		l := loc.llc
		d, ok := dense[l]
		if !ok {
			d = int32(len(dense))
			dense[l] = d
		}
		m.cpuLLC[c] = d
	}
	m.llcLimit = make([]int, len(dense))
	for i := range m.llcLimit {
		m.llcLimit[i] = -1
	}
	return m
}

// Limited reports whether the table limits bandwidth at all.
func (t *Table) Limited() bool {
	return t.CoreBandwidth > 0 || t.LLCBandwidth > 0 || t.NodeBandwidth > 0
}

// Shares computes each task's share into out (len(out) == len(tasks)),
// deterministically in the order given.
func (m *MemSharer) Shares(tasks []MemTask, out []Share) {
	t := m.t
	m.limits = m.limits[:0]
	m.nodeOf = m.nodeOf[:0]
	m.members = m.members[:0]
	m.own = m.own[:0]
	for _, tk := range tasks {
		m.llcLimit[m.cpuLLC[tk.CPU]] = -1
	}
	m.active = m.active[:0]
	limit := func(cap int64) int {
		m.limits = append(m.limits, memLimit{cap: cap})
		return len(m.limits) - 1
	}
	for _, tk := range tasks {
		mem := [2]int{-1, -1}
		if t.LLCBandwidth > 0 {
			llc := m.cpuLLC[tk.CPU]
			if m.llcLimit[llc] < 0 {
				m.llcLimit[llc] = limit(t.LLCBandwidth << shareShift)
			}
			mem[0] = m.llcLimit[llc]
		}
		if t.NodeBandwidth > 0 {
			node := tk.MemNode
			if node < 0 {
				node = int(t.cpus[tk.CPU].node)
			}
			for len(m.nodeOf) <= node {
				m.nodeOf = append(m.nodeOf, -1)
			}
			if m.nodeOf[node] < 0 {
				m.nodeOf[node] = limit(t.NodeBandwidth << shareShift)
			}
			mem[1] = m.nodeOf[node]
		}
		m.members = append(m.members, mem)
		m.active = append(m.active, tk.Demand > 0)
		own := Full
		if c := t.CoreBandwidth; c > 0 && c < tk.Demand {
			own = Share{c, tk.Demand}
		}
		m.own = append(m.own, own)
		out[len(m.members)-1] = Full
		if tk.Demand > 0 {
			for _, l := range mem {
				if l >= 0 {
					m.limits[l].sumActive += tk.Demand << shareShift
				}
			}
		}
	}
	limitLevel := func(l *memLimit) Share {
		return Share{max(0, l.cap-l.used), l.sumActive}
	}
	freeze := func(i int, level Share) {
		m.active[i] = false
		out[i] = level
		granted := mul(tasks[i].Demand, level.Num).mul(1 << shareShift).div(level.Den).int64()
		for _, l := range m.members[i] {
			if l >= 0 {
				m.limits[l].used += granted
				m.limits[l].sumActive -= tasks[i].Demand << shareShift
			}
		}
	}
	for {
		level, any := Full, false
		for i := range tasks {
			if m.active[i] {
				any = true
				if o := m.own[i]; o.less(level) {
					level = o
				}
			}
		}
		if !any {
			return
		}
		for i := range m.limits {
			if l := &m.limits[i]; l.sumActive > 0 {
				if f := limitLevel(l); f.less(level) {
					level = f
				}
			}
		}
		// Freeze what reached level: the tasks at their own limit, and
		// every task of a limit that is full (decided for all limits
		// first, since freezing a task moves its limits' sums).
		m.full = m.full[:0]
		for i := range m.limits {
			l := &m.limits[i]
			m.full = append(m.full, l.sumActive > 0 && !level.less(limitLevel(l)))
		}
		for i := range tasks {
			if !m.active[i] {
				continue
			}
			mem := m.members[i]
			if mem[0] >= 0 && m.full[mem[0]] || mem[1] >= 0 && m.full[mem[1]] || !level.less(m.own[i]) {
				freeze(i, level)
			}
		}
	}
}
