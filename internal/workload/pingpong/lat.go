package pingpong

import (
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

// LatUsage is lat_pipe's usage line (lmbench_usage), and schedlab's own
// option.
const LatUsage = `Usage: lat_pipe [-P <parallelism>] [-W <warmup>] [-N <repetitions>]

schedlab's own option (lmbench pins with LMBENCH_SCHED instead):
  --cpus-pair A,B   the benchmark process on CPU A, its writer on CPU B
                    (LMBENCH_SCHED="CUSTOM_SPREAD A B"); A:B is the same
`

const latProg = "lat_pipe"

// lmbench 3's timing constants (bench.h).
const (
	// latEnough is get_enough(SHORT): benchmp wants intervals of a
	// second (SHORT is 1000000 µs; the machine's own timing resolution,
	// compute_enough's 5 to 100 ms, never exceeds it).
	latEnough = 1000000
	// latTries is TRIES, the repetitions a result_t holds inline.
	latTries = 11
	// latResultSize is sizeof(result_t) on LP64: int N, padding, and
	// TRIES {u, n} pairs of uint64.
	latResultSize = 8 + latTries*16
	// maxParallel and maxRepetitions bound what a run may ask for.
	maxParallel    = 1 << 16
	maxRepetitions = 1 << 16
)

// LatConfig is a parsed lat_pipe command line.
type LatConfig struct {
	Parallel    int  // -P: benchmark processes, each with its writer
	Warmup      int  // -W: µs the children run before timing starts
	Repetitions int  // -N: timed intervals per process; < 0 is benchmp's default
	Pair        Pair // --cpus-pair (schedlab's)
	Costs       costmodel.Syscalls
	// CPU is where lat_pipe starts (the shell's CPU): 0.
	CPU cpumask.CPU
}

// DefaultLatConfig is lat_pipe's defaults: -P 1, no warmup, benchmp's
// default repetitions.
func DefaultLatConfig() LatConfig {
	return LatConfig{Parallel: 1, Repetitions: -1, Costs: costmodel.DefaultSyscalls()}
}

// repetitions is benchmp's: with -N below 0, one interval when there are
// several processes or the intervals are a second or longer (always, for
// lat_pipe's SHORT), else TRIES.
func (c *LatConfig) repetitions() int {
	if c.Repetitions < 0 {
		if c.Parallel > 1 || latEnough >= 1000000 {
			return 1
		}
		return latTries
	}
	return c.Repetitions
}

// resultSize is sizeof_result(repetitions): what a child sends the parent.
func resultSize(reps int) int {
	if reps <= latTries {
		return latResultSize
	}
	return latResultSize + (reps-latTries)*16
}

// ParseLat parses lat_pipe's arguments as lmbench's own getopt
// (src/getopt.c, options "P:W:N:") does: options end at the first word
// that is not one; a value is attached ("-N20") or the next word, which
// must not start with '-'; -P below 1, an unknown option or a word left
// over is lmbench_usage's error. The values are atoi's. -h, which lat_pipe
// answers with its usage and status 255, is the usage (workload.ErrHelp).
// --cpus-pair A,B, schedlab's, may come anywhere among the options.
func ParseLat(args []string) (LatConfig, error) {
	cfg := DefaultLatConfig()
	usage := func(format string, a ...any) (LatConfig, error) {
		return cfg, fmt.Errorf("%s: %s; usage: lat_pipe [-P <parallelism>] [-W <warmup>] [-N <repetitions>] [--cpus-pair A,B]", latProg, fmt.Sprintf(format, a...))
	}
	i := 0
	for i < len(args) {
		a := args[i]
		if a == "-h" || a == "--help" {
			return cfg, workload.ErrHelp
		}
		if v, ok := strings.CutPrefix(a, "--cpus-pair"); ok && (v == "" || v[0] == '=') {
			if v == "" {
				if i+1 >= len(args) {
					return usage("--cpus-pair needs A,B")
				}
				v = args[i+1]
				i++
			} else {
				v = v[1:]
			}
			var err error
			if cfg.Pair, err = ParsePair(latProg, v); err != nil {
				return cfg, err
			}
			i++
			continue
		}
		if len(a) < 2 || a[0] != '-' {
			break // getopt's EOF: the first non-option
		}
		c := a[1]
		if c != 'P' && c != 'W' && c != 'N' {
			return usage("illegal option %q", a)
		}
		val := a[2:]
		if val == "" {
			if i+1 >= len(args) || strings.HasPrefix(args[i+1], "-") {
				return usage("-%c needs a value", c)
			}
			val = args[i+1]
			i++
		}
		i++
		n := atoi(val)
		switch c {
		case 'P':
			if n <= 0 {
				return usage("-P %s: the parallelism must be at least 1", val)
			}
			if n > maxParallel {
				return usage("-P %d: more processes than schedlab simulates (%d)", n, maxParallel)
			}
			cfg.Parallel = n
		case 'W':
			cfg.Warmup = n
		case 'N':
			if n > maxRepetitions {
				return usage("-N %d: more repetitions than schedlab simulates (%d)", n, maxRepetitions)
			}
			cfg.Repetitions = n
		}
	}
	if i < len(args) {
		return usage("unexpected argument %q", args[i])
	}
	return cfg, nil
}

// atoi mirrors C's atoi: leading blanks, a sign, the leading digits.
func atoi(s string) int {
	s = strings.TrimLeft(s, " \t\n\v\f\r")
	neg := false
	if s != "" && (s[0] == '+' || s[0] == '-') {
		neg, s = s[0] == '-', s[1:]
	}
	n := 0
	for i := 0; i < len(s) && s[i] >= '0' && s[i] <= '9' && n < 1<<31; i++ {
		n = n*10 + int(s[i]-'0')
	}
	if neg {
		return -n
	}
	return n
}

// sample is one timed interval: u µs for n round trips (value_t).
type sample struct {
	u, n uint64
}

// insertSort mirrors lib_timing.c:insertsort: biggest time per iteration
// first, a new value after those equal to it; a zero time is dropped.
func insertSort(r []sample, s sample) []sample {
	if s.u == 0 {
		return r
	}
	i := 0
	for ; i < len(r); i++ {
		if float64(s.u)/float64(s.n) > float64(r[i].u)/float64(r[i].n) {
			break
		}
	}
	r = append(r, sample{})
	copy(r[i+1:], r[i:])
	r[i] = s
	return r
}

// median mirrors lib_timing.c:save_median: the middle value, or for an
// even count the integer means of the two middle ones' times and counts;
// {0, 1} for none.
func median(r []sample) sample {
	n := len(r)
	switch {
	case n == 0:
		return sample{0, 1}
	case n%2 == 1:
		return r[n/2]
	}
	a, b := r[n/2], r[n/2-1]
	return sample{(a.u + b.u) / 2, (a.n + b.n) / 2}
}

// Lat is one lat_pipe run: lib_timing.c's benchmp around lat_pipe.c's
// doit. The parent (benchmp_parent) forks -P benchmark processes; each
// (benchmp_child) runs lat_pipe's initialize (two pipes, fork the writer,
// one round trip), tells the parent it is ready and runs batches of one
// round trip until the parent, after -W µs, says start; then it times
// intervals of state->iterations round trips between two gettimeofday
// calls, growing the count (×8 while an interval is 150 µs or less, then
// to 1.1 s's worth) and keeping an interval of more than 0.95 s as a
// sample, until it has -N; it says done, runs single round trips until
// the parent asks for its samples, sends them, kills its writer and waits
// to be told to exit. The parent takes the median of all the samples
// (save_median) and lat_pipe prints its time per round trip (micro). With
// -P above 1, benchmp first does all that with one process to find the
// interval's count, then every process times intervals of that count.
//
// Simplified: the calibrations before the first fork (compute_enough's
// timing loops, t_overhead, l_overhead) are not run and their overheads
// are taken as 0 µs (gettimeofday's and an empty loop's cost, a few
// nanoseconds per round trip); select()'s one-second timeouts never
// expire here (every wait ends with a byte within the second); getppid,
// signal(2), close(2), pipe(2) and sched_setaffinity cost nothing; a
// --cpus-pair task is pinned from its fork rather than moving when
// handle_scheduler runs. The output, on stderr in lmbench, is on stdout.
type Lat struct {
	cfg  LatConfig
	reps int
	k    *sched.Kernel
	// round is 0 for -P 1 or benchmp's baseline with one process, then
	// 1 for the -P processes.
	round, rounds int
	// The round's control pipes (benchmp's response, start_signal,
	// result_signal, exit_signal) and processes.
	response, start, result, exit *kobj.Pipe
	parent                        *latParent
	children                      []*latChild
	// iterations is the round's first state->iterations (1, or the
	// baseline's median count).
	iterations uint64
	merged     []sample
	final      sample
	done       bool
	// The reported round's timed samples: from the first one's start to
	// the last one's end, their round trips (workload.Windowed).
	from, to engine.Time
	work     uint64
	mark     func()
}

// NewLat returns a run for cfg.
func NewLat(cfg LatConfig) *Lat {
	b := &Lat{cfg: cfg, reps: cfg.repetitions(), rounds: 1}
	if cfg.Parallel > 1 {
		b.rounds = 2
	}
	return b
}

// SetCosts sets the system-call costs (workload.CostAware).
func (b *Lat) SetCosts(c costmodel.Syscalls) { b.cfg.Costs = c }

// WatchWindow installs the function called at every timed interval's
// two gettimeofday calls (workload.Windowed).
func (b *Lat) WatchWindow(mark func()) { b.mark = mark }

// MeasuredWindow spans the reported round's samples (workload.Windowed):
// with one process the median is one of them or the mean of two, so the
// window's time per round trip is close to the printed latency, not equal.
func (b *Lat) MeasuredWindow() (workload.Window, bool) {
	if !b.done || b.work == 0 || b.to <= b.from {
		return workload.Window{}, false
	}
	return workload.Window{From: b.from, To: b.to, Work: float64(b.work), Unit: "round trip"}, true
}

// Start creates the lat_pipe process, benchmp's parent.
func (b *Lat) Start(k *sched.Kernel) error {
	if err := b.cfg.Pair.check(latProg, k); err != nil {
		return err
	}
	b.k = k
	b.parent = &latParent{b: b}
	b.newRound()
	t, err := k.Fork(sched.TaskSpec{Comm: latProg, CPU: b.cfg.CPU, Prog: b.parent})
	if err != nil {
		return err
	}
	b.parent.t = t
	return nil
}

// newRound makes the round's control pipes and clears its results.
func (b *Lat) newRound() {
	b.response, b.start, b.result, b.exit = newPipe(), newPipe(), newPipe(), newPipe()
	b.children = b.children[:0]
	b.merged = b.merged[:0]
	b.from, b.to, b.work = 0, 0, 0
	if b.round == 0 || b.iterations == 0 {
		b.iterations = 1
	}
}

// parallel is the round's number of benchmark processes.
func (b *Lat) parallel() int {
	if b.round == 0 && b.rounds == 2 {
		return 1
	}
	return b.cfg.Parallel
}

// Done reports whether the parent has the result.
func (b *Lat) Done() bool { return b.done }

// Progress is the share of the simulated time such a run takes: about
// 1.1 s per sample and process, plus the growth of the first intervals.
func (b *Lat) Progress() float64 {
	if b.done {
		return 1
	}
	if b.k == nil {
		return 0
	}
	want := float64(b.reps*(b.rounds-1+b.cfg.Parallel)) * 1.15e9
	return math.Min(0.99, float64(b.k.Now())/(want+0.1e9))
}

// micro is what micro() divides: the median's µs per round trip, 0 when
// there is none.
func (b *Lat) micro() float64 {
	if b.final.u == 0 {
		return 0
	}
	return float64(b.final.u) / float64(b.final.n)
}

// Report writes lat_pipe's line, micro("Pipe latency", get_n()); nothing
// when there is no result, as micro prints nothing for 0.
func (b *Lat) Report(w io.Writer) error {
	if m := b.micro(); m != 0 {
		_, err := fmt.Fprintf(w, "Pipe latency: %.4f microseconds\n", m)
		return err
	}
	return nil
}

// Metrics are latency_us, the printed figure at full precision (null
// without a result), the samples it is the median of and the round trips
// of the median interval.
func (b *Lat) Metrics() workload.Metrics {
	lat := math.NaN()
	if m := b.micro(); m != 0 {
		lat = m
	}
	return workload.Metrics{
		{Name: "latency_us", Value: lat, Better: workload.LowerIsBetter},
		{Name: "samples", Value: float64(len(b.merged)), Better: workload.HigherIsBetter},
		{Name: "iterations", Value: float64(b.final.n), Better: workload.HigherIsBetter},
	}
}

// ---- benchmp's parent -----------------------------------------------------

type parentState uint8

const (
	pFork parentState = iota
	pReady
	pWarmup
	pStart
	pDone
	pResultAsk
	pResultRead
	pExit
	pReap
	pFinish
	pEnd
)

// latParent is benchmp and benchmp_parent in lat_pipe's main process.
type latParent struct {
	b     *Lat
	t     *sched.Task
	state parentState
	paid  bool
	call  call
	n     int // children forked, bytes read or written, child asked
	got   int // bytes of the current child's results read
}

func (p *latParent) Next(k *sched.Kernel, t *sched.Task) sched.Op {
	b := p.b
	c := &b.cfg.Costs
	par := b.parallel()
	for {
		switch p.state {
		case pFork:
			if p.n == par {
				p.n = 0
				p.state = pReady
				continue
			}
			if !p.paid {
				p.paid = true
				return sched.Run(sys(k, c.Fork))
			}
			p.paid = false
			ch := &latChild{b: b, id: p.n, iterations: b.iterations}
			// handle_scheduler(i, 0, 0), then initialize's
			// handle_scheduler(childid, 0, 1): CPU list entry
			// 2·i, the pair's A.
			ct, err := k.Fork(sched.TaskSpec{Comm: latProg, CPU: k.ThisCPU(), Prog: ch, Allowed: b.cfg.Pair.on(k, b.cfg.Pair.A)})
			if err != nil {
				panic("pingpong: " + err.Error())
			}
			ch.t = ct
			b.children = append(b.children, ch)
			p.n++
		case pReady, pDone:
			// Collect the 'ready' (then 'done') bytes: select, read.
			if p.n == par {
				p.n = 0
				if p.state == pReady {
					p.state = pWarmup
				} else {
					p.state = pResultAsk
				}
				continue
			}
			if !p.paid {
				p.paid = true
				return sched.Run(sys(k, c.Poll))
			}
			op, done := p.call.read(k, t, b.response, par-p.n, c, nil)
			if !done {
				return op
			}
			p.paid = false
			p.n += p.call.io.Done
		case pWarmup:
			p.state = pStart
			if w := b.cfg.Warmup; w > 0 {
				// select(0, NULL, NULL, NULL, &delay): an hrtimer
				// sleep that ends at the end of the timer slack.
				return sched.Sleep(engine.Time(w)*engine.Microsecond + kobj.TimerSlack)
			}
		case pStart, pExit:
			// write(start_signal, signals, parallel), later the same
			// to exit_signal.
			pipe := b.start
			if p.state == pExit {
				pipe = b.exit
			}
			op, done := p.call.write(k, t, pipe, par, c, nil)
			if !done {
				return op
			}
			if p.state == pStart {
				p.state = pDone
			} else {
				p.state = pReap
				p.n = par
			}
		case pResultAsk:
			if p.n == par {
				p.state = pExit
				continue
			}
			// Tell one child to report its results.
			op, done := p.call.write(k, t, b.result, 1, c, nil)
			if !done {
				return op
			}
			p.got = 0
			p.state = pResultRead
		case pResultRead:
			size := resultSize(b.reps)
			if p.got == size {
				p.n++
				p.state = pResultAsk
				continue
			}
			if !p.paid {
				p.paid = true
				return sched.Run(sys(k, c.Poll))
			}
			op, done := p.call.read(k, t, b.response, size-p.got, c, nil)
			if !done {
				return op
			}
			p.paid = false
			p.got += p.call.io.Done
		case pReap:
			// benchmp's cleanup_exit: waitpid each child, the last
			// first.
			if p.n == 0 {
				p.state = pFinish
				continue
			}
			ch := b.children[p.n-1]
			if !ch.exited {
				ch.reaper = t
				return sched.Block()
			}
			if !p.paid {
				p.paid = true
				return sched.Run(sys(k, c.Reap))
			}
			p.paid = false
			p.n--
		case pFinish:
			// set_results(merged_results): the median.
			b.final = median(b.merged)
			if b.round+1 < b.rounds && b.final.u != 0 {
				// benchmp with -P: the parallel run's iterations
				// are the baseline's median count.
				b.round++
				b.iterations = b.final.n
				b.newRound()
				p.state = pFork
				continue
			}
			b.done = true
			p.state = pEnd
			k.Eng.Stop()
			return sched.Exit()
		default:
			return sched.Exit()
		}
	}
}

// ---- the benchmark process ------------------------------------------------

type childState uint8

const (
	cStart childState = iota
	cFork
	cHelloWrite
	cHelloRead
	cStop
	cWarmSelect
	cWarmRead
	cReady
	cSendDone
	cCoolSelect
	cReadResult
	cSendResults
	cKill
	cReap
	cReadExit
	cExit
	cClock
	cDoit
)

// phase is benchmp_child_state.state.
type phase uint8

const (
	phWarmup phase = iota
	phTiming
	phCooldown
)

// latChild is benchmp_child running lat_pipe's initialize and doit, with
// benchmp_interval between the batches.
type latChild struct {
	b          *Lat
	t          *sched.Task
	id         int
	state      childState
	phase      phase
	needWarmup bool
	paid       bool
	call       call
	p1, p2     *kobj.Pipe // to the writer, from the writer
	writer     *latWriter
	iterations uint64 // state->iterations
	next       uint64 // what this interval's doit runs
	left       uint64
	second     bool // doit's read is next
	i          int  // samples taken
	tStart     engine.Time
	startUs    int64
	exited     bool
	reaper     *sched.Task
}

func (ch *latChild) Next(k *sched.Kernel, t *sched.Task) sched.Op {
	b := ch.b
	c := &b.cfg.Costs
	for {
		switch ch.state {
		case cStart:
			ch.state = cFork
			ch.needWarmup = true
			if c.ProcessStart > 0 {
				return sched.Run(c.ProcessStart)
			}
		case cFork:
			// initialize: pipe(p1), pipe(p2), fork the writer.
			if !ch.paid {
				ch.paid = true
				return sched.Run(sys(k, c.Fork))
			}
			ch.paid = false
			ch.p1, ch.p2 = newPipe(), newPipe()
			ch.writer = &latWriter{child: ch}
			wt, err := k.Fork(sched.TaskSpec{Comm: latProg, CPU: k.ThisCPU(), Prog: ch.writer, Allowed: b.cfg.Pair.on(k, b.cfg.Pair.B)})
			if err != nil {
				panic("pingpong: " + err.Error())
			}
			ch.writer.t = wt
			ch.state = cHelloWrite
		case cHelloWrite:
			// "One time around to make sure both processes are
			// started."
			op, done := ch.call.write(k, t, ch.p1, 1, c, nil)
			if !done {
				return op
			}
			ch.state = cHelloRead
		case cHelloRead:
			op, done := ch.call.read(k, t, ch.p2, 1, c, nil)
			if !done {
				return op
			}
			ch.state = cStop
		case cStop:
			// benchmp_interval.
			if op, ok := ch.interval(k); ok {
				return op
			}
		case cWarmSelect, cCoolSelect:
			// select(fd + 1, &fds, NULL, NULL, &timeout {0, 0})
			if !ch.paid {
				ch.paid = true
				return sched.Run(sys(k, c.Poll))
			}
			ch.paid = false
			switch {
			case ch.state == cWarmSelect && b.start.Readable():
				ch.state = cWarmRead
			case ch.state == cWarmSelect && ch.needWarmup:
				ch.next = 1 // iterations_batch
				ch.state = cReady
			case ch.state == cCoolSelect && b.result.Readable():
				ch.state = cReadResult
			default:
				ch.next = 1
				ch.state = cClock
			}
		case cWarmRead:
			op, done := ch.call.read(k, t, b.start, 1, c, nil)
			if !done {
				return op
			}
			ch.phase = phTiming
			ch.next = ch.iterations
			ch.state = cClock
			if ch.needWarmup {
				ch.state = cReady
			}
		case cReady, cSendDone:
			// 'ready' and 'done' are one byte on response.
			op, done := ch.call.write(k, t, b.response, 1, c, nil)
			if !done {
				return op
			}
			ch.needWarmup = false
			ch.state = cClock
		case cReadResult:
			op, done := ch.call.read(k, t, b.result, 1, c, nil)
			if !done {
				return op
			}
			ch.state = cSendResults
		case cSendResults:
			op, done := ch.call.write(k, t, b.response, resultSize(b.reps), c, nil)
			if !done {
				return op
			}
			ch.state = cKill
		case cKill:
			// lat_pipe's cleanup: kill(pid, SIGKILL), waitpid.
			w := ch.writer
			w.killed = true
			ch.p1.Interrupt(k, w.t)
			ch.p2.Interrupt(k, w.t)
			ch.state = cReap
		case cReap:
			if !ch.writer.exited {
				ch.writer.reaper = t
				return sched.Block()
			}
			if !ch.paid {
				ch.paid = true
				return sched.Run(sys(k, c.Reap))
			}
			ch.paid = false
			ch.state = cReadExit
		case cReadExit:
			// "Now wait for signal to exit".
			op, done := ch.call.read(k, t, b.exit, 1, c, nil)
			if !done {
				return op
			}
			ch.state = cExit
		case cExit:
			if !ch.paid {
				ch.paid = true
				return sched.Run(sys(k, c.ExitProcess))
			}
			ch.exited = true
			if ch.reaper != nil {
				k.WakeUp(ch.reaper, 0)
				ch.reaper = nil
			}
			return sched.Exit()
		case cClock:
			// start(0): gettimeofday, then doit(iterations).
			ch.tStart = k.Now()
			ch.startUs = gettimeofday(k)
			if ch.phase == phTiming && b.mark != nil {
				b.mark()
			}
			ch.left = ch.next
			ch.state = cDoit
			return sched.Run(sys(k, c.Clock))
		case cDoit:
			for ch.left > 0 {
				if !ch.second {
					op, done := ch.call.write(k, t, ch.p1, 1, c, nil)
					if !done {
						return op
					}
					ch.second = true
				}
				op, done := ch.call.read(k, t, ch.p2, 1, c, nil)
				if !done {
					return op
				}
				ch.second = false
				ch.left--
			}
			ch.state = cStop
		}
	}
}

// interval is benchmp_interval's bookkeeping after a batch: the stop
// timestamp and the state machine's decision; ok reports an operation to
// return (the gettimeofday's cost), after which Next goes on from the
// state it set.
func (ch *latChild) interval(k *sched.Kernel) (sched.Op, bool) {
	b := ch.b
	c := &b.cfg.Costs
	par := b.parallel()
	if ch.needWarmup {
		// The first call: no stop, result = enough.
		ch.state = cWarmSelect
		return sched.Op{}, false
	}
	// result = stop(0, 0); save_n(state->iterations); overheads 0.
	now := k.Now()
	result := gettimeofday(k) - ch.startUs
	if result < 0 {
		result = 0
	}
	n := ch.iterations
	switch ch.phase {
	case phWarmup:
		ch.state = cWarmSelect
	case phCooldown:
		ch.state = cCoolSelect
	case phTiming:
		if b.mark != nil {
			b.mark()
		}
		iterations := ch.iterations
		r := float64(result)
		if par > 1 || r > 0.95*latEnough {
			b.merged = insertSort(b.merged, sample{uint64(result), n})
			if result > 0 {
				if b.work == 0 || ch.tStart < b.from {
					b.from = ch.tStart
				}
				b.to = max(b.to, now)
				b.work += n
			}
			ch.i++
			if ch.i >= b.reps {
				ch.phase = phCooldown
			}
		}
		if par == 1 && (r < 0.99*latEnough || r > 1.2*latEnough) {
			if r > 150 {
				tmp := float64(iterations) / r
				tmp *= 1.1 * latEnough
				iterations = uint64(tmp + 1)
			} else {
				iterations <<= 3
				if iterations > 1<<27 {
					ch.phase = phCooldown
				}
			}
		}
		ch.iterations = iterations
		ch.next = iterations
		ch.state = cClock
		if ch.phase == phCooldown {
			ch.next = 1 // iterations_batch
			ch.state = cSendDone
		}
	}
	return sched.Run(sys(k, c.Clock)), true
}

// ---- the writer -----------------------------------------------------------

// latWriter is lat_pipe's writer: read a byte from p1, write it to p2,
// forever, until its benchmark process kills it.
type latWriter struct {
	child                            *latChild
	t                                *sched.Task
	started, second, killed, exiting bool
	call                             call
	exited                           bool
	reaper                           *sched.Task
}

func (w *latWriter) Next(k *sched.Kernel, t *sched.Task) sched.Op {
	ch := w.child
	c := &ch.b.cfg.Costs
	if !w.started {
		w.started = true
		if c.ProcessStart > 0 {
			return sched.Run(c.ProcessStart)
		}
	}
	for {
		if w.killed {
			// SIGKILL: do_exit at the return to user space.
			if !w.exiting {
				w.exiting = true
				return sched.Run(sys(k, c.ExitProcess))
			}
			w.exited = true
			if w.reaper != nil {
				k.WakeUp(w.reaper, 0)
				w.reaper = nil
			}
			return sched.Exit()
		}
		if !w.second {
			op, done := w.call.read(k, t, ch.p1, 1, c, nil)
			if !done {
				return op
			}
			w.second = true
		}
		op, done := w.call.write(k, t, ch.p2, 1, c, nil)
		if !done {
			return op
		}
		w.second = false
	}
}
