package sim

import (
	"runtime"
	"testing"
)

// TestHotPathDoesNotAllocate: a longer run of a workload allocates hardly
// more than a shorter one (issue 15: no allocation on hot paths). What a
// run allocates once (the machine, its tasks, the engine's arrays as they
// grow) is the same for both; what the longer one adds, per extra event,
// is the hot path's. Each wakeup used to allocate its wake flags (a
// pointer through a func value), each blocked-load update a copy of its
// leaf list, and each balancing pass its CPU mask and task list: 0.04 to
// 0.19 allocations an extra event in these runs, where the bound is 0.002.
func TestHotPathDoesNotAllocate(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a few million events")
	}
	for _, c := range []struct {
		machine, tool string
		full          bool
		short, long   []string
	}{
		{"zen3-2s-nps1", "hackbench", false, []string{"-p", "-T", "-l", "100", "-g", "2"}, []string{"-p", "-T", "-l", "1000", "-g", "2"}},
		{"zen3-2s-nps1", "tbench", true, []string{"-t", "1", "4"}, []string{"-t", "2", "4"}},
		{"hikey", "hackbench", false, []string{"-l", "100", "-g", "2"}, []string{"-l", "1000", "-g", "2"}},
	} {
		var events, allocs [2]uint64
		for i, args := range [][]string{c.short, c.long} {
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			res, err := Run(Config{Machine: c.machine, Seed: 1, Tool: c.tool, Args: args, FullLength: c.full}, Options{})
			runtime.ReadMemStats(&after)
			if err != nil {
				t.Fatal(err)
			}
			events[i], allocs[i] = res.Sim.Events, after.Mallocs-before.Mallocs
		}
		if events[1] <= events[0] {
			t.Fatalf("%s %v: %d events, not more than %v's %d", c.tool, c.long, events[1], c.short, events[0])
		}
		per := float64(allocs[1]-min(allocs[0], allocs[1])) / float64(events[1]-events[0])
		t.Logf("%s on %s: %d -> %d events, %d -> %d allocations, %.5f per extra event", c.tool, c.machine, events[0], events[1], allocs[0], allocs[1], per)
		if per > 0.002 {
			t.Errorf("%s %v on %s allocates %.4f times per extra event (%d more allocations for %d more events): something on the hot path allocates",
				c.tool, c.long, c.machine, per, allocs[1]-allocs[0], events[1]-events[0])
		}
	}
}
