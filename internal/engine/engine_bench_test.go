package engine

import "testing"

// BenchmarkEngine measures the bare event loop: 1024 periodic timers with
// different periods (a busy machine's ticks and run segments), reporting
// events per second of wall time.
func BenchmarkEngine(b *testing.B) {
	e := New(1)
	const n = 1024
	for i := 0; i < n; i++ {
		period := Time(1000 + 37*i)
		var t *Timer
		t = NewTimer("periodic", func() { e.After(t, period) })
		e.Schedule(t, Time(i))
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		e.Step()
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
}

// BenchmarkEngineMix drives the engine with the timer traffic of the
// simulator on a 256-CPU machine, reporting events per second of wall time.
//
// The mix was measured by counting Schedule, Cancel and expiries per timer
// (and the delay of each arming) in `schedlab run --machine zen3-2s-nps1
// hackbench -p -T -l 2000 -g 4` (6.70 M events) and `tbench -t 1 64`
// (28.3 M events):
//
//   - The run segment's end (one timer per CPU) is nearly every event: 98%
//     of hackbench's and 57% of tbench's expiries. It is armed 0.5–1 µs
//     ahead in 97% of hackbench's armings (tbench: 0.25–4 µs), and 1% of
//     hackbench's and 19% of tbench's armings move it while it is pending
//     (a preemption or a speed change); a switch to idle cancels it.
//   - A remote wakeup's IPI (ttwu, one timer per task): 1.2% of hackbench's
//     expiries, 28% of tbench's, armed 0.5–1 µs ahead, a few 8–16 µs.
//   - A reschedule (one timer per CPU): 1% and 14% of expiries, two thirds
//     of hackbench's and all of tbench's armed for now (zero delay).
//   - The tick (one per CPU): 4 ms, on the jiffy boundary, so every busy CPU
//     ticks at the same instant; 0.03% and 0.05% of expiries, and idle
//     entry cancels it (5,014 cancels against 1,883 expiries in hackbench).
//   - Sleep timers: every wakeup cancels the task's sleep timer, which in
//     these two workloads is not armed (78 k and 4.1 M such no-op Cancels);
//     schbench arms one for 16–1000 ms sleeps.
//   - Pending timers: 64–255 at 74% of hackbench's events and 99% of
//     tbench's.
//
// The model: each of 256 CPUs runs a task (segments 0.5–1 µs, some 1–8
// µs), and at a segment's end the task continues (72%), wakes a task on
// another CPU (15%: its IPI 0.5–1 µs ahead or, one in eight, 8–16 µs, and
// a Cancel of the woken task's sleep timer, which is armed with a 1–8 ms
// timeout a fifth of the time), asks for a reschedule now (8%, which
// cancels and re-arms the segment, a context switch) or sleeps (5%: the
// CPU cancels its segment and its tick). An IPI to a busy CPU moves its
// pending segment (a preemption); to an idle one it restarts the tick on
// the next jiffy and starts a segment. About two thirds of the CPUs are
// busy, so about 390 timers are pending: the tick and segment of each busy
// CPU and the IPIs and sleep timeouts in flight. Of the expiries 83% are
// segment ends, 10% IPIs, 7% reschedules and 0.02% ticks; every sleep
// timeout is cancelled before it expires.
func BenchmarkEngineMix(b *testing.B) {
	const (
		ncpu = 256
		tick = 4 * Millisecond
	)
	e := New(1)
	rng := uint64(0x9e3779b97f4a7c15)
	rnd := func() uint64 { // xorshift64*: cheap next to the engine
		rng ^= rng >> 12
		rng ^= rng << 25
		rng ^= rng >> 27
		return rng * 2685821657736338717
	}
	segLen := func(r uint64) Time {
		if r&15 == 0 {
			return Microsecond + Time(r>>8)%(7*Microsecond)
		}
		return 512 + Time(r>>8)%512
	}
	type cpu struct {
		seg, tick, resched, ipi, sleep *Timer
		busy                           bool
	}
	cpus := make([]*cpu, ncpu)
	var wake func(c *cpu)
	wake = func(c *cpu) {
		e.Cancel(c.sleep) // the wakeup cancels the sleep timeout
		if c.busy {
			e.After(c.seg, segLen(rnd())) // preemption: the segment moves
			return
		}
		c.busy = true
		e.Schedule(c.tick, (e.Now()/tick+1)*tick)
		e.After(c.seg, segLen(rnd()))
	}
	for i := range cpus {
		c := &cpu{busy: true}
		c.seg = NewTimer("segment", func() {
			r := rnd()
			switch p := r % 100; {
			case p < 72:
				e.After(c.seg, segLen(r>>8))
			case p < 87:
				o := cpus[(r>>8)%ncpu]
				d := 512 + Time(r>>20)%512
				if r>>40&7 == 0 {
					d = 8*Microsecond + Time(r>>20)%(8*Microsecond)
				}
				if !o.ipi.Armed() {
					e.After(o.ipi, d)
				}
				e.After(c.seg, segLen(r>>16))
			case p < 95:
				e.After(c.resched, 0)
			default:
				c.busy = false
				if r>>8%5 == 0 {
					e.After(c.sleep, Millisecond+Time(r>>16)%(7*Millisecond))
				}
				e.Cancel(c.seg)
				e.Cancel(c.tick)
			}
		})
		c.tick = NewTimer("tick", func() {
			e.After(c.tick, tick)
		})
		c.resched = NewTimer("resched", func() {
			e.Cancel(c.seg) // a context switch: the next task's segment
			e.After(c.seg, segLen(rnd()))
		})
		c.ipi = NewTimer("ttwu", func() { wake(c) })
		c.sleep = NewTimer("sleep", func() { wake(c) })
		cpus[i] = c
		e.Schedule(c.tick, tick)
		e.Schedule(c.seg, segLen(rnd()))
	}
	// Reach the steady state (about two thirds of the CPUs busy).
	for i := 0; i < 1_000_000; i++ {
		e.Step()
	}
	pending := 0
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		e.Step()
		pending += e.Pending()
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
	b.ReportMetric(float64(pending)/float64(b.N), "pending")
}
