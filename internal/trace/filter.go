package trace

import (
	"fmt"
	"strings"
)

// Filter selects events by tracepoint and by time. The zero Filter keeps
// everything.
type Filter struct {
	// Events keeps only these tracepoints; empty keeps all.
	Events []EventType
	// From and To are the time window [From, To) in ns; To == 0 means no
	// upper bound.
	From, To uint64

	mask uint16 // bit per EventType; built lazily from Events
	init bool
}

// ParseFilter builds a filter from a comma-separated list of tracepoint
// names ("sched_switch,sched_wakeup"; "" for all) and a window.
func ParseFilter(names string, from, to uint64) (Filter, error) {
	f := Filter{From: from, To: to}
	if to != 0 && to <= from {
		return Filter{}, fmt.Errorf("trace filter: empty time window [%d,%d)", from, to)
	}
	for _, n := range strings.Split(names, ",") {
		n = strings.TrimSpace(n)
		if n == "" {
			continue
		}
		t, ok := EventTypeByName(n)
		if !ok {
			return Filter{}, fmt.Errorf("trace filter: unknown event %q", n)
		}
		f.Events = append(f.Events, t)
	}
	return f, nil
}

func (f *Filter) build() {
	f.mask = 0
	for _, t := range f.Events {
		f.mask |= 1 << t
	}
	if len(f.Events) == 0 {
		f.mask = 0xffff
	}
	f.init = true
}

// Match reports whether ev passes the filter.
func (f *Filter) Match(ev *Event) bool {
	if !f.init {
		f.build()
	}
	if f.mask&(1<<ev.Type) == 0 {
		return false
	}
	if ev.TS < f.From {
		return false
	}
	return f.To == 0 || ev.TS < f.To
}
