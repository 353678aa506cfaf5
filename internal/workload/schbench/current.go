package schbench

// The current (2023+) schbench (workloads-and-formats.md 2.2 and 2.4;
// masoncl/schbench after the April 2023 rewrite): m message threads, each
// with t workers, and a main thread that samples requests per second.
//
//   - A worker "messages and waits" (marks its futex BLOCKED, stamps
//     wake_time, pushes itself on its message thread's list, posts the
//     message thread, waits on its own futex). When it runs again it records
//     now − wake_time as a wakeup latency, where the message thread has
//     overwritten wake_time with the start of its wake loop. Then it does a
//     request: t = now; usleep(sleep_usec); take the lock of the CPU it is
//     on (spinning while another worker holds it); operations naive n×n
//     matrix multiplies; unlock; request latency = now − t.
//   - A message thread loops: mark its futex BLOCKED, wake every queued
//     worker with one timestamp, wait. No sleep, no think time.
//   - In RPS mode (-R) each message thread, every second, posts R/m
//     requests round robin over its workers (skipping, after a 100 µs
//     usleep, a worker with more than 128 pending) and sleeps out the
//     second; a woken worker takes all its pending requests and does them
//     back to back.
//   - The main thread wakes every second, adds Δloops/Δt as one sample of
//     the RPS histogram, prints a report every -i seconds, handles -w and
//     -z, and stops everything after -r seconds.
//
// The matrix math is charged as CPU time: NsPerMAC per multiply-accumulate,
// n³ of them per operation, n = floor(sqrt(F×1024/3/8)). The workers'
// TaskSpec.Footprint is the three matrices (3·n²·8 bytes), so the cost
// model also charges the cache refill after a migration or a long absence.

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/schedlab/schedlab/internal/costmodel"
	"github.com/schedlab/schedlab/internal/cpumask"
	"github.com/schedlab/schedlab/internal/engine"
	"github.com/schedlab/schedlab/internal/sched"
	"github.com/schedlab/schedlab/internal/workload"
	"github.com/schedlab/schedlab/internal/workload/kobj"
)

// NsPerMAC is the CPU time, in ns at capacity 1024, of one multiply-
// accumulate of do_some_math's naive triple loop (8-byte integers, the
// second matrix walked by column). Placeholder calibration: 1 ns makes the
// default request (-F 256 -n 5: 5 × 104³ = 5.6 M MACs) about 5.6 ms of CPU,
// about 180 requests per second per busy CPU, which is the order of the
// reference's sample output (average rps 3009) on a 16-CPU machine.
const NsPerMAC = 1

// lockSpin is how much CPU a worker burns between two tries of a busy
// per-CPU lock (the tool spins on pthread_mutex_trylock with a pause).
const lockSpin = 5 * engine.Microsecond

// rpsMaxPending is the RPS-mode limit of queued requests per worker.
const rpsMaxPending = 128

// CurrentConfig is a parsed current-schbench command line.
type CurrentConfig struct {
	MessageThreads int // -m
	Workers        int // -t, per message thread; 0 = ceil(nprocs/m)
	Runtime        int // -r, s
	FootprintKB    int // -F
	Operations     int // -n
	SleepUsec      int // -s
	RPS            int // -R, total over the message threads
	NoLocking      bool
	Calibrate      bool
	Warmup         int // -w, s
	Interval       int // -i, s
	ZeroTime       int // -z, s; 0 = never
	Costs          costmodel.Syscalls
}

// DefaultCurrentConfig is the tool's defaults: -m 1 -r 30 -F 256 -n 5
// -s 100 -i 10, -t from the CPU count.
func DefaultCurrentConfig() CurrentConfig {
	return CurrentConfig{MessageThreads: 1, Runtime: 30, FootprintKB: 256, Operations: 5, SleepUsec: 100, Interval: 10, Costs: costmodel.DefaultSyscalls()}
}

// MatrixSize is n = floor(sqrt(F×1024/3/8)).
func (c CurrentConfig) MatrixSize() int64 {
	return int64(math.Sqrt(float64(int64(c.FootprintKB) * 1024 / 3 / 8)))
}

// MathTime is the CPU time of one request's matrix work.
func (c CurrentConfig) MathTime() engine.Time {
	n := c.MatrixSize()
	return engine.Time(int64(c.Operations) * n * n * n * NsPerMAC)
}

// The current tool's percentile list; the latency blocks print 50..99.9
// (99.0 starred), the RPS block 20..90 (50.0 starred).
var (
	curPlist = []float64{20.0, 50.0, 90.0, 99.0, 99.9}
	latMask  = []bool{false, true, true, true, true}
	rpsMask  = []bool{true, true, true, false, false}
)

// Current is one run of the current schbench.
type Current struct {
	cfg       CurrentConfig
	k         *sched.Kernel
	start     engine.Time
	stopping  bool
	done      bool
	out       bytes.Buffer
	msgs      []*msgThread
	workers   []*curWorker
	locks     []*curWorker // per-CPU lock holders
	rpsStats  Stats
	mathTime  engine.Time
	footprint int64
	// final results
	wake, req Stats
	loops     uint64
	// sched delay: mean over threads of run_delay/pcount, µs
	msgDelay, workerDelay uint64
}

// schedDelay is the "sched delay:" line's figures: for the message
// threads and for the workers, the mean over the threads of the task's
// run_delay/pcount (/proc/<tid>/schedstat), in µs. The tool's rounding is
// not in the reference; schedlab averages the per-thread ns and truncates.
func (b *Current) schedDelay() (msg, worker uint64) {
	mean := func(ts []*sched.Task) uint64 {
		var sum, n uint64
		for _, t := range ts {
			if t == nil {
				continue
			}
			if si := &t.SchedInfo; si.Pcount > 0 {
				sum += si.RunDelay / si.Pcount
			}
			n++
		}
		if n == 0 {
			return 0
		}
		return sum / n / 1000
	}
	var ms, ws []*sched.Task
	for _, m := range b.msgs {
		ms = append(ms, m.t)
	}
	for _, w := range b.workers {
		ws = append(ws, w.t)
	}
	return mean(ms), mean(ws)
}

// NewCurrent returns a run for cfg.
func NewCurrent(cfg CurrentConfig) *Current { return &Current{cfg: cfg} }

// SetCosts sets the system-call costs (workload.CostAware).
func (b *Current) SetCosts(c costmodel.Syscalls) { b.cfg.Costs = c }

// Start sizes the run for the machine and creates the main thread.
func (b *Current) Start(k *sched.Kernel) error {
	b.k = k
	b.start = k.Now()
	if b.cfg.Workers == 0 {
		m := b.cfg.MessageThreads
		b.cfg.Workers = (k.NrCPUs() + m - 1) / m
		fmt.Fprintf(&b.out, "setting worker threads to %d\n", b.cfg.Workers)
	}
	n := b.cfg.MatrixSize()
	b.footprint = 3 * n * n * 8
	b.mathTime = b.cfg.MathTime()
	b.locks = make([]*curWorker, k.NrCPUs())
	_, err := k.Fork(sched.TaskSpec{Comm: "schbench", CPU: 0, Prog: &curMain{b: b}})
	return err
}

// Done reports whether runtime has passed.
func (b *Current) Done() bool { return b.done }

// Progress is the fraction of runtime simulated.
func (b *Current) Progress() float64 {
	if b.k == nil {
		return 0
	}
	return float64(b.k.Now()-b.start) / float64(engine.Time(b.cfg.Runtime)*engine.Second)
}

// Report writes the interval reports and the final one.
func (b *Current) Report(w io.Writer) error {
	_, err := w.Write(b.out.Bytes())
	return err
}

// pctName is "p50", "p99_9" for 50.0, 99.9.
func pctName(p float64) string {
	return "p" + strings.ReplaceAll(fmt.Sprintf("%g", p), ".", "_")
}

// Metrics are wakeup_latency_us and request_latency_us (p50 … p99_9, min,
// max, samples), rps (p20, p50, p90, min, max, average), loops and
// sched_delay_us (message, worker).
func (b *Current) Metrics() workload.Metrics {
	var out []workload.Metric
	for _, h := range []struct {
		name string
		s    *Stats
	}{{"wakeup_latency_us", &b.wake}, {"request_latency_us", &b.req}} {
		v := h.s.Percentiles(curPlist)
		for i, p := range curPlist {
			if latMask[i] {
				out = append(out, workload.Metric{Name: h.name + "." + pctName(p), Value: float64(v[i]), Better: workload.LowerIsBetter})
			}
		}
		out = append(out,
			workload.Metric{Name: h.name + ".min", Value: float64(h.s.Min), Better: workload.LowerIsBetter},
			workload.Metric{Name: h.name + ".max", Value: float64(h.s.Max), Better: workload.LowerIsBetter},
			workload.Metric{Name: h.name + ".samples", Value: float64(h.s.Samples), Better: workload.HigherIsBetter})
	}
	// Requests per second: every percentile of the rate is better higher.
	v := b.rpsStats.Percentiles(curPlist)
	for i, p := range curPlist {
		if rpsMask[i] {
			out = append(out, workload.Metric{Name: "rps." + pctName(p), Value: float64(v[i]), Better: workload.HigherIsBetter})
		}
	}
	out = append(out,
		workload.Metric{Name: "rps.min", Value: float64(b.rpsStats.Min), Better: workload.HigherIsBetter},
		workload.Metric{Name: "rps.max", Value: float64(b.rpsStats.Max), Better: workload.HigherIsBetter},
		workload.Metric{Name: "rps.average", Value: float64(b.loops) / float64(b.cfg.Runtime), Better: workload.HigherIsBetter},
		workload.Metric{Name: "loops", Value: float64(b.loops), Better: workload.HigherIsBetter},
		workload.Metric{Name: "sched_delay_us.message", Value: float64(b.msgDelay), Better: workload.LowerIsBetter},
		workload.Metric{Name: "sched_delay_us.worker", Value: float64(b.workerDelay), Better: workload.LowerIsBetter})
	return out
}

// Histograms are the wakeup and request latency histograms behind their
// percentiles (workload.Histogrammer); the RPS one is left out, as a rate
// per second is not a latency.
func (b *Current) Histograms() []workload.Histogram {
	return []workload.Histogram{b.wake.Histogram("wakeup_latency_us"), b.req.Histogram("request_latency_us")}
}

// WakeupStats and RequestStats are the final merged histograms.
func (b *Current) WakeupStats() *Stats  { return &b.wake }
func (b *Current) RequestStats() *Stats { return &b.req }

// showLatencies mirrors show_latencies.
func showLatencies(w io.Writer, s *Stats, label, units string, runtime uint64, mask []bool, star int) {
	v, c := s.PercentileCounts(curPlist)
	fmt.Fprintf(w, "%s percentiles (%s) runtime %d (s) (%d total samples)\n", label, units, runtime, s.Samples)
	for i, p := range curPlist {
		if !mask[i] {
			continue
		}
		mark := "  "
		if i == star {
			mark = "* "
		}
		fmt.Fprintf(w, "\t%s%2.1fth: %-10d (%d samples)\n", mark, p, v[i], c[i])
	}
	fmt.Fprintf(w, "\t  min=%d, max=%d\n", s.Min, s.Max)
}

// combine mirrors combine_message_thread_stats.
func (b *Current) combine() (wake, req Stats, loops uint64) {
	for _, w := range b.workers {
		wake.Combine(&w.wake)
		req.Combine(&w.req)
		loops += w.loops
	}
	return
}

func (b *Current) loopCount() (n uint64) {
	for _, w := range b.workers {
		n += w.loops
	}
	return
}

func (b *Current) resetStats() {
	b.rpsStats = Stats{}
	for _, w := range b.workers {
		w.wake = Stats{}
		w.req = Stats{}
	}
}

// usec is a time as gettimeofday's whole microseconds.
func usec(t engine.Time) int64 { return int64(t / engine.Microsecond) }

func clampU32(d int64) uint32 {
	if d > math.MaxUint32 {
		return math.MaxUint32
	}
	return uint32(d)
}

// ---- main thread ------------------------------------------------------------

type curMain struct {
	b            *Current
	create       spawner
	looping      bool
	start        engine.Time
	lastCalc     engine.Time
	lastRPSCalc  engine.Time
	zeroTime     engine.Time
	lastLoops    uint64
	warmupDone   bool
	first        bool
	sleptOnce    bool
	finalWritten bool
}

func (m *curMain) Next(k *sched.Kernel, t *sched.Task) sched.Op {
	b := m.b
	cfg := &b.cfg
	if op, done := m.create.step(cfg.MessageThreads, cfg.Costs.ThreadCreate, func(int) { b.newMsgThread(k) }); !done {
		return op
	}
	now := k.Now()
	if !m.looping {
		// sleep_for_runtime
		m.looping = true
		m.start, m.lastCalc, m.lastRPSCalc, m.zeroTime = now, now, now, now
		m.first = true
	}
	runtimeDelta := usec(now) - usec(m.start)
	done := runtimeDelta >= int64(cfg.Runtime)*1e6
	if cfg.RPS == 0 && runtimeDelta > int64(cfg.Warmup)*1e6 && !m.warmupDone && cfg.Warmup > 0 {
		m.warmupDone = true
		fmt.Fprintf(&b.out, "warmup done, zeroing stats\n")
		m.zeroTime = now
		b.resetStats()
	} else if !m.first {
		// The tool also samples at time 0 (Δt of a few µs, no loops);
		// the reference's samples (min well above 0) have no such
		// sample, so schedlab takes the first one after one second.
		delta := usec(now) - usec(m.lastRPSCalc)
		loops := b.loopCount()
		rps := 0.0
		if delta > 0 {
			rps = float64((loops-m.lastLoops)*1e6) / float64(delta)
		}
		m.lastLoops = loops
		m.lastRPSCalc = now
		b.rpsStats.AddLat(uint32(rps))
		if usec(now)-usec(m.lastCalc) >= int64(cfg.Interval)*1e6 {
			wake, req, _ := b.combine()
			m.lastCalc = now
			el := uint64(runtimeDelta / 1e6)
			showLatencies(&b.out, &wake, "Wakeup Latencies", "usec", el, latMask, 3)
			showLatencies(&b.out, &req, "Request Latencies", "usec", el, latMask, 3)
			showLatencies(&b.out, &b.rpsStats, "RPS", "requests", el, rpsMask, 1)
			fmt.Fprintf(&b.out, "current rps: %.2f\n", rps)
		}
	}
	m.first = false
	if cfg.ZeroTime > 0 && usec(now)-usec(m.zeroTime) > int64(cfg.ZeroTime)*1e6 {
		m.zeroTime = now
		b.resetStats()
	}
	if !done {
		return sched.Sleep(engine.Second + kobj.TimerSlack)
	}
	b.stopping = true
	b.wake, b.req, b.loops = b.combine()
	rt := uint64(cfg.Runtime)
	showLatencies(&b.out, &b.wake, "Wakeup Latencies", "usec", rt, latMask, 3)
	showLatencies(&b.out, &b.req, "Request Latencies", "usec", rt, latMask, 3)
	showLatencies(&b.out, &b.rpsStats, "RPS", "requests", rt, rpsMask, 1)
	fmt.Fprintf(&b.out, "average rps: %.2f\n", float64(b.loops)/float64(cfg.Runtime))
	b.msgDelay, b.workerDelay = b.schedDelay()
	fmt.Fprintf(&b.out, "sched delay: message %d (usec) worker %d (usec)\n", b.msgDelay, b.workerDelay)
	b.done = true
	k.Eng.Stop()
	return sched.Exit()
}

// ---- message thread -----------------------------------------------------------

// newMsgThread creates a message thread: the shared message thread
// (msgthread.go) with no think time, whose workers have the matrices'
// footprint; in RPS mode it runs rpsLoop instead of the wake loop.
func (b *Current) newMsgThread(k *sched.Kernel) {
	var rps *rpsLoop
	mt := &msgThread{cfg: msgConfig{
		workers:  b.cfg.Workers,
		costs:    &b.cfg.Costs,
		stopping: &b.stopping,
		spawn: func(k *sched.Kernel, m *msgThread) {
			w := &curWorker{b: b, msg: m, lockCPU: cpumask.None}
			task, err := k.Fork(sched.TaskSpec{Comm: "schbench", CPU: k.ThisCPU(), Prog: w, Footprint: b.footprint})
			if err != nil {
				panic("schbench: " + err.Error())
			}
			w.t = task
			b.workers = append(b.workers, w)
			if rps != nil {
				rps.workers = append(rps.workers, w)
			}
		},
	}}
	if b.cfg.RPS > 0 {
		rps = &rpsLoop{b: b}
		mt.cfg.loop = rps
	}
	b.msgs = append(b.msgs, mt)
	task, err := k.Fork(sched.TaskSpec{Comm: "schbench", CPU: k.ThisCPU(), Prog: mt})
	if err != nil {
		panic("schbench: " + err.Error())
	}
	mt.t = task
}

// rpsLoop is a message thread in RPS mode: every second it posts
// RPS/m requests round robin over its workers, skipping (after a 100 µs
// usleep) a worker with more than rpsMaxPending queued, then sleeps out
// the second.
type rpsLoop struct {
	b        *Current
	workers  []*curWorker
	state    int
	secStart engine.Time
	issued   int
	cur      int
	posting  *curWorker
}

const (
	rpsSecond = iota
	rpsIssue
	rpsRest
)

func (m *rpsLoop) Next(k *sched.Kernel, t *sched.Task) sched.Op {
	b := m.b
	c := &b.cfg.Costs
	for {
		switch m.state {
		case rpsSecond:
			if b.stopping {
				return sched.Block()
			}
			m.secStart = k.Now()
			m.issued = 0
			m.state = rpsIssue
		case rpsIssue:
			if m.posting != nil {
				// the FUTEX_WAKE after its syscall cost
				m.posting.futex.Wake(k, 1)
				m.posting = nil
			}
			if m.issued >= b.cfg.RPS/b.cfg.MessageThreads {
				m.state = rpsRest
				continue
			}
			w := m.workers[m.cur%len(m.workers)]
			m.cur++
			m.issued++
			if w.pending > rpsMaxPending {
				return sched.Sleep(100*engine.Microsecond + kobj.TimerSlack)
			}
			w.pending++
			w.reqs++
			w.wakeTime = k.Now()
			if needPost(&w.futex) {
				m.posting = w
				return sched.Run(c.Futex)
			}
		case rpsRest:
			if d := k.Now() - m.secStart; d < engine.Second {
				m.state = rpsSecond
				return sched.Sleep(engine.Second - d + kobj.TimerSlack)
			}
			m.state = rpsSecond
		}
	}
}

// ---- workers ----------------------------------------------------------------------

type curWorker struct {
	waiter
	b         *Current
	t         *sched.Task
	msg       *msgThread
	workStart engine.Time
	wake, req Stats
	loops     uint64
	pending   int // RPS mode: requests queued since the last splice
	reqs      int // RPS mode: queued requests
	batch     int // requests left in this batch
	lockCPU   cpumask.CPU
	state     int
	post      fpost
	wait      fwait
}

const (
	cwTop = iota
	cwPost
	cwWait
	cwRequest
	cwSlept
	cwLock
	cwDone
)

func (w *curWorker) Next(k *sched.Kernel, t *sched.Task) sched.Op {
	b := w.b
	cfg := &b.cfg
	c := &cfg.Costs
	for {
		switch w.state {
		case cwTop:
			if b.stopping {
				return sched.Block()
			}
			// msg_and_wait; in RPS mode the message thread queues
			// requests, not the worker itself.
			if cfg.RPS > 0 {
				w.futex.Val = futexBlocked
				w.wakeTime = k.Now()
				w.pending = 0
				if w.reqs > 0 {
					w.futex.Val = futexRunning
					w.batch, w.reqs = w.reqs, 0
					w.state = cwRequest
					continue
				}
			} else {
				w.msg.queue(&w.waiter, k.Now())
			}
			w.state = cwPost
		case cwPost:
			if op, done := w.post.step(k, &w.msg.futex, c.Futex); !done {
				return op
			}
			w.state = cwWait
		case cwWait:
			if b.stopping {
				return sched.Block()
			}
			if op, done := w.wait.step(t, &w.futex, c.Futex); !done {
				return op
			}
			// The current version's latency: the difference of the
			// µs timestamps.
			if d := usec(k.Now()) - usec(w.wakeTime); d > 0 {
				w.wake.AddLat(clampU32(d))
			}
			if cfg.RPS > 0 {
				w.state = cwTop
			} else {
				w.batch = 1
				w.state = cwRequest
			}
		case cwRequest:
			if b.stopping {
				return sched.Block()
			}
			// "simulated networking": usleep(sleep_usec), timed
			// unless -C.
			w.workStart = k.Now()
			w.state = cwSlept
			if cfg.SleepUsec > 0 {
				return sched.Sleep(engine.Time(cfg.SleepUsec)*engine.Microsecond + kobj.TimerSlack)
			}
		case cwSlept:
			if cfg.Calibrate {
				w.workStart = k.Now()
			}
			w.state = cwLock
			if cfg.NoLocking {
				w.state = cwDone
				if b.mathTime > 0 {
					return sched.Run(b.mathTime)
				}
			}
		case cwLock:
			// lock_this_cpu: spin on the lock of the CPU we are on.
			cpu := k.ThisCPU()
			if h := b.locks[cpu]; h != nil && h != w {
				return sched.Run(lockSpin)
			}
			b.locks[cpu] = w
			w.lockCPU = cpu
			w.state = cwDone
			if b.mathTime > 0 {
				return sched.Run(b.mathTime)
			}
		case cwDone:
			if w.lockCPU != cpumask.None {
				b.locks[w.lockCPU] = nil
				w.lockCPU = cpumask.None
			}
			w.loops++
			if d := usec(k.Now()) - usec(w.workStart); d > 0 {
				w.req.AddLat(clampU32(d))
			}
			w.batch--
			if w.batch > 0 {
				w.state = cwRequest
			} else {
				w.state = cwTop
			}
		}
	}
}
