// Package schbench models Chris Mason's schbench as it was in 2016
// (workloads-and-formats.md 2.1; masoncl/schbench before the 2020 options):
// m message threads, each with t worker threads.
//
//   - A worker spins for cputime µs of wall time (usec_spin polls
//     gettimeofday), then "messages and waits": it marks its futex
//     BLOCKED, stamps wake_time, pushes itself on its message thread's list,
//     posts the message thread (FUTEX_WAKE only if that thread's futex was
//     BLOCKED) and waits on its own futex. When it runs again it records
//     now − wake_time, in µs, as a wakeup latency (if > 0).
//   - A message thread marks its futex BLOCKED, takes the whole list, reads
//     the clock once, and for each queued worker (most recent first) sets
//     its wake_time to that single timestamp and posts it; then waits for a
//     post, and sleeps sleeptime + rand() % (sleeptime/4) µs.
//   - The main thread creates the message threads (each creates its
//     workers), sleeps runtime seconds and stops everything.
//
// The latency therefore runs from the start of the message thread's wake
// loop to the worker being on a CPU: it charges the worker when the waker
// keeps its CPU. The output is the tool's "Latency percentiles (usec)"
// block (the 2016 format, "%2.4fth"), which the real tool writes to stderr;
// schedlab writes it to stdout.
//
// The current (2023+) schbench is modelled by Current (current.go), the
// tool schbench-current.
package schbench

import (
	"fmt"
	"io"

	"github.com/schedlab/schedlab/internal/costmodel"
	"github.com/schedlab/schedlab/internal/engine"
	"github.com/schedlab/schedlab/internal/sched"
	"github.com/schedlab/schedlab/internal/workload"
	"github.com/schedlab/schedlab/internal/workload/kobj"
)

// Config is a parsed schbench command line.
type Config struct {
	MessageThreads int         // -m
	Workers        int         // -t, per message thread
	Runtime        engine.Time // -r
	SleepTime      int         // -s, µs
	CPUTime        int         // -c, µs
	Costs          costmodel.Syscalls
}

// DefaultConfig is the 2016 defaults: -m 2 -t 16 -r 30 -s 30000 -c 30000.
func DefaultConfig() Config {
	return Config{MessageThreads: 2, Workers: 16, Runtime: 30 * engine.Second, SleepTime: 30000, CPUTime: 30000, Costs: costmodel.DefaultSyscalls()}
}

// plist is the percentiles the 2016 version prints; the fifth (99.0) is
// starred.
var plist = []float64{50.0, 75.0, 90.0, 95.0, 99.0, 99.5, 99.9}

const plistP99 = 4

// spinSlice is how much CPU a spinning worker uses between two looks at
// the clock: the spin is on wall time, so a worker preempted mid-spin
// stops spinning once cputime of wall time has passed, at most one slice
// late. (A real spin polls gettimeofday every few hundred ns.)
const spinSlice = 250 * engine.Microsecond

// Bench is one schbench run.
type Bench struct {
	cfg      Config
	stopping bool
	done     bool
	stats    Stats
	loops    uint64
	start    engine.Time
	k        *sched.Kernel
}

// New returns a run for cfg.
// SetCosts sets the system-call costs (workload.CostAware).
func (b *Bench) SetCosts(c costmodel.Syscalls) { b.cfg.Costs = c }

func New(cfg Config) *Bench { return &Bench{cfg: cfg} }

// Start creates the main thread.
func (b *Bench) Start(k *sched.Kernel) error {
	b.start = k.Now()
	b.k = k
	_, err := k.Fork(sched.TaskSpec{Comm: "schbench", CPU: 0, Prog: &mainThread{b: b}})
	return err
}

// Done reports whether runtime has passed.
func (b *Bench) Done() bool { return b.done }

// Progress is the fraction of runtime simulated.
func (b *Bench) Progress() float64 {
	if b.k == nil || b.cfg.Runtime <= 0 {
		return 0
	}
	return float64(b.k.Now()-b.start) / float64(b.cfg.Runtime)
}

// Report writes the latency block.
func (b *Bench) Report(w io.Writer) error {
	ovals := b.stats.Percentiles(plist)
	fmt.Fprintf(w, "Latency percentiles (usec)\n")
	for i, p := range plist {
		star := ""
		if i == plistP99 {
			star = "*"
		}
		fmt.Fprintf(w, "\t%s%2.4fth: %d\n", star, p, ovals[i])
	}
	fmt.Fprintf(w, "\tmin=%d, max=%d\n", b.stats.Min, b.stats.Max)
	return nil
}

// Metrics are latency_us.p50 … p99_9, min, max and the sample count.
func (b *Bench) Metrics() workload.Metrics {
	ovals := b.stats.Percentiles(plist)
	names := []string{"p50", "p75", "p90", "p95", "p99", "p99_5", "p99_9"}
	var out []workload.Metric
	for i, n := range names {
		out = append(out, workload.Metric{Name: "latency_us." + n, Value: float64(ovals[i]), Better: workload.LowerIsBetter})
	}
	out = append(out,
		workload.Metric{Name: "latency_us.min", Value: float64(b.stats.Min), Better: workload.LowerIsBetter},
		workload.Metric{Name: "latency_us.max", Value: float64(b.stats.Max), Better: workload.LowerIsBetter},
		workload.Metric{Name: "samples", Value: float64(b.stats.Samples), Better: workload.HigherIsBetter},
		workload.Metric{Name: "loops", Value: float64(b.loops), Better: workload.HigherIsBetter},
	)
	return out
}

// Stats returns the merged latency histogram.
func (b *Bench) Stats() *Stats { return &b.stats }

// Histograms is the latency histogram behind latency_us.p50 … p99_9
// (workload.Histogrammer).
func (b *Bench) Histograms() []workload.Histogram {
	return []workload.Histogram{b.stats.Histogram("latency_us")}
}

// ---- main thread ----------------------------------------------------------

type mainThread struct {
	b      *Bench
	create spawner
	slept  bool
}

func (m *mainThread) Next(k *sched.Kernel, t *sched.Task) sched.Op {
	b := m.b
	c := &b.cfg.Costs
	if op, done := m.create.step(b.cfg.MessageThreads, c.ThreadCreate, func(i int) { b.newMsgThread(k, i) }); !done {
		return op
	}
	if !m.slept {
		// sleep_for_runtime: sleep(runtime) from the start.
		m.slept = true
		return sched.Sleep(b.start + b.cfg.Runtime - k.Now())
	}
	b.stopping = true
	b.done = true
	k.Eng.Stop()
	return sched.Exit()
}

// newMsgThread creates message thread i: the shared message thread
// (msgthread.go) with the 2016 version's think time, sleeptime +
// rand() % (sleeptime/4) µs after each post it takes.
func (b *Bench) newMsgThread(k *sched.Kernel, i int) {
	rnd := k.Eng.Rand(fmt.Sprintf("schbench/message%d", i))
	mt := &msgThread{cfg: msgConfig{
		workers:  b.cfg.Workers,
		costs:    &b.cfg.Costs,
		stopping: &b.stopping,
		spawn: func(k *sched.Kernel, m *msgThread) {
			w := &worker{b: b, msg: m}
			task, err := k.Fork(sched.TaskSpec{Comm: "schbench", CPU: k.ThisCPU(), Prog: w})
			if err != nil {
				panic("schbench: " + err.Error())
			}
			w.t = task
		},
		think: func() engine.Time {
			s := b.cfg.SleepTime
			if s <= 0 {
				return 0
			}
			jitter := 0
			if s/4 > 0 {
				jitter = rnd.IntN(s / 4)
			}
			return engine.Time(s+jitter)*engine.Microsecond + kobj.TimerSlack
		},
	}}
	task, err := k.Fork(sched.TaskSpec{Comm: "schbench", CPU: k.ThisCPU(), Prog: mt})
	if err != nil {
		panic("schbench: " + err.Error())
	}
	mt.t = task
}

// ---- workers ------------------------------------------------------------------

type worker struct {
	waiter
	b         *Bench
	t         *sched.Task
	msg       *msgThread
	spinStart engine.Time
	state     int
	post      fpost
	wait      fwait
}

const (
	wTop = iota
	wSpin
	wPost
	wWait
)

func (w *worker) Next(k *sched.Kernel, t *sched.Task) sched.Op {
	b := w.b
	c := &b.cfg.Costs
	for {
		switch w.state {
		case wTop:
			if b.stopping {
				return sched.Block()
			}
			w.spinStart = k.Now()
			w.state = wSpin
		case wSpin:
			// usec_spin: until more than cputime µs of wall time.
			end := w.spinStart + engine.Time(b.cfg.CPUTime)*engine.Microsecond + engine.Microsecond
			if b.cfg.CPUTime > 0 && k.Now() < end {
				d := end - k.Now()
				if d > spinSlice {
					d = spinSlice
				}
				return sched.Run(d)
			}
			b.loops++
			w.msg.queue(&w.waiter, k.Now()) // msg_and_wait
			w.state = wPost
		case wPost:
			if op, done := w.post.step(k, &w.msg.futex, c.Futex); !done {
				return op
			}
			w.state = wWait
		case wWait:
			if b.stopping {
				return sched.Block()
			}
			if op, done := w.wait.step(t, &w.futex, c.Futex); !done {
				return op
			}
			// The 2016 version's latency: the difference in µs.
			if d := (k.Now() - w.wakeTime) / engine.Microsecond; d > 0 {
				if d > 1<<32-1 {
					d = 1<<32 - 1
				}
				b.stats.Add(uint32(d))
			}
			w.state = wTop
		}
	}
}
