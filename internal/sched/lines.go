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
