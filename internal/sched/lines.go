package sched

import (
	"github.com/schedlab/schedlab/internal/cpumask"
	"github.com/schedlab/schedlab/internal/engine"
)

// sharedLine is one cache line that many CPUs load and store (issue 14's
// many-writer lines: the LLC's sched_domain_shared, Settings.LLCSharedLines).
// It is followed as a cache line: a load is free while the loading CPU
// holds a copy that no store has invalidated since, else it pays the
// line's transfer from the CPU that stored last
// (costmodel.Table.LineTransfer: nothing from the same CPU or an SMT
// sibling, nor before the first store), after which that CPU holds a
// copy; a store invalidates every other copy, waiting for the line from
// its last writer unless the storer holds a copy already. Without the
// cost model every transfer is 0 (the copies are still followed). What a
// transfer costs, and whom, is the caller's to charge.
type sharedLine struct {
	// writer is the CPU that stored to the line last, plus one (0:
	// nobody since boot); holders are the CPUs holding a valid copy.
	writer  int32
	holders cpumask.Mask
}

// newSharedLine is a line of an n-CPU machine that nobody has stored to.
func newSharedLine(n int) sharedLine { return sharedLine{holders: cpumask.New(n)} }

// lastWriter is the CPU that stored last, or cpumask.None.
func (l *sharedLine) lastWriter() cpumask.CPU { return cpumask.CPU(l.writer) - 1 }

// load is a load of the line by cpu; it returns the time the transfer
// took.
func (l *sharedLine) load(k *Kernel, cpu cpumask.CPU) engine.Time {
	if l.holders.Test(cpu) {
		return 0
	}
	l.holders.Set(cpu)
	if !k.costsOn {
		return 0
	}
	return k.Costs.LineTransfer(l.lastWriter(), cpu)
}

// store is a store to the line by cpu; it returns the time the transfer
// took.
func (l *sharedLine) store(k *Kernel, cpu cpumask.CPU) engine.Time {
	var d engine.Time
	if !l.holders.Test(cpu) && k.costsOn {
		d = k.Costs.LineTransfer(l.lastWriter(), cpu)
	}
	l.holders.ClearAll()
	l.holders.Set(cpu)
	l.writer = int32(cpu) + 1
	return d
}

// lineLoad and lineStore are a load and a store, by the CPU running this
// code, of one of the balancer's shared lines (Settings.NohzRdLines:
// the nohz structure, nohz.idle_cpus_mask, the root domain's flags).
func (k *Kernel) lineLoad(l *sharedLine)  { k.lineAccess(l, false) }
func (k *Kernel) lineStore(l *sharedLine) { k.lineAccess(l, true) }

// lineAccess charges the transfer to whatever the CPU was doing: inside a
// balancing pass (newidle, the periodic softirq, a kicked ILB's pass) the
// pass's CPU does the access and the pass pays (lbCharge); otherwise the
// event's CPU does, and its running task pays (a busy tick, an enqueue
// done by a waker: Charge), or nobody when it is idle. Each paid transfer
// is counted on the paying CPU (CostCounters.LineTransfers, LineNs).
func (k *Kernel) lineAccess(l *sharedLine, store bool) {
	if !k.S.NohzRdLines {
		return
	}
	inPass := k.bal.depth > 0
	cpu := k.thisCPU
	if inPass {
		cpu = k.bal.cpu
	}
	var d engine.Time
	if store {
		d = l.store(k, cpu)
	} else {
		d = l.load(k, cpu)
	}
	rq := k.Rqs[cpu]
	switch {
	case d == 0:
		return
	case inPass:
		k.lbCharge(d)
	case rq.currIsIdle():
		return
	default:
		k.Charge(CostSharedLines, d)
	}
	rq.Costs.LineTransfers++
	rq.Costs.LineNs += uint64(d)
}

// lineStoreIdle is a store by cpu from its idle loop (entering NOHZ): it
// takes the line, at no one's cost.
func (k *Kernel) lineStoreIdle(l *sharedLine, cpu cpumask.CPU) {
	if k.S.NohzRdLines {
		l.store(k, cpu)
	}
}
