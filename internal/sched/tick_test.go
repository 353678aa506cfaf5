package sched

import (
	"testing"

	"github.com/schedlab/schedlab/internal/cpumask"
	"github.com/schedlab/schedlab/internal/engine"
	"github.com/schedlab/schedlab/internal/kernels"
)

// TestSkewTick: where a CPU's tick falls, with and without skew_tick.
//
// Reference: tick-sched.c:tick_setup_sched_timer (v5.12–v6.19): the tick
// hrtimer starts on the jiffy boundary (tick_init_jiffy_update) and, with
// the boot parameter skew_tick set, is pushed by TICK_NSEC >> 1, divided
// (do_div) by num_possible_cpus(), times smp_processor_id();
// tick_nohz_restart forwards it from its last expiry by whole ticks, so a
// CPU leaving idle keeps its phase, and the periodic tick re-arms one
// TICK_NSEC later.
//
// On zen3-2s-nps1 (256 CPUs, HZ 250, TICK_NSEC 4,000,000 ns) the offset
// of CPU c is 2,000,000 / 256 = 7812 ns (7812.5 truncated) times c. A task
// forked on CPU c at 9,001,000 ns, between the jiffy boundaries at 8 and
// 12 ms, starts the CPU's tick at the first of 8 ms + offset and 12 ms +
// offset that comes after the fork: 9,992,060 ns for CPU 255 (its offset,
// 1,992,060 ns, puts it after the fork), 12 ms + offset for the others;
// without skew_tick every CPU ticks at 12 ms. The tick after that comes one
// TICK_NSEC later.
func TestSkewTick(t *testing.T) {
	const tick = 4000000
	fork := engine.Time(9*engine.Millisecond + 1000)
	for _, skew := range []bool{false, true} {
		for _, cpu := range []int{0, 1, 5, 128, 255} {
			s := MustBaseline(kernels.V619)
			s.SkewTick = skew
			k := newRigSettings(t, "zen3-2s-nps1", s).k
			if k.TickNsec() != tick {
				t.Fatalf("TICK_NSEC %d, want %d", k.TickNsec(), tick)
			}
			k.Eng.RunUntil(fork)
			lbFork(t, k, "spin", cpu, cpumask.Of(k.NrCPUs(), cpumask.CPU(cpu)), ProgramFunc(func(k *Kernel, t *Task) Op {
				return Run(engine.Second)
			}))
			rq := k.Rqs[cpu]
			k.Eng.RunUntil(fork + 1)
			off := engine.Time(0)
			if skew {
				off = engine.Time(tick / 2 / 256 * cpu)
			}
			// The first of 8 ms + off and 12 ms + off after the fork
			// (forking and waking take no time without the cost model).
			want := 2*tick + off
			if want <= fork {
				want += tick
			}
			if !rq.tickTimer.Armed() || rq.tickTimer.When() != want {
				t.Errorf("skew %v, CPU %d: first tick at %d (armed %v), want %d", skew, cpu, rq.tickTimer.When(), rq.tickTimer.Armed(), want)
				continue
			}
			k.Eng.RunUntil(want)
			if rq.tickTimer.When() != want+tick {
				t.Errorf("skew %v, CPU %d: tick after %d re-armed at %d, want %d", skew, cpu, want, rq.tickTimer.When(), want+tick)
			}
		}
	}
}
