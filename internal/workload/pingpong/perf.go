package pingpong

import (
	"fmt"
	"io"
	"math"

	"github.com/schedlab/schedlab/internal/costmodel"
	"github.com/schedlab/schedlab/internal/cpumask"
	"github.com/schedlab/schedlab/internal/engine"
	"github.com/schedlab/schedlab/internal/sched"
	"github.com/schedlab/schedlab/internal/workload"
	"github.com/schedlab/schedlab/internal/workload/getopt"
	"github.com/schedlab/schedlab/internal/workload/kobj"
	"github.com/schedlab/schedlab/internal/workload/perfopt"
)

// PerfUsage is what perf 6.1 prints for `perf bench sched pipe -h` (after
// its "# Running" line), and schedlab's own option.
const PerfUsage = `
 Usage: perf bench sched pipe <options>

    -l, --loop <n>        Specify number of loops
    -T, --threaded        Specify threads/process based task setup

 schedlab's own option (perf has none):
        --cpus-pair <A,B> pin worker 0 (the child, or the first thread) to CPU A
                          and worker 1 (the parent, or the second thread) to CPU B

`

// perfProg names the tool in messages, as parse-options does.
const perfProg = "perf bench sched pipe"

// PerfConfig is a parsed `perf bench sched pipe` command line.
type PerfConfig struct {
	Loops   int  // -l/--loop (OPT_INTEGER: may be 0 or negative)
	Threads bool // -T/--threaded
	// Simple is perf bench --format=simple: print only the time.
	Simple bool
	Pair   Pair // --cpus-pair (schedlab's)
	Costs  costmodel.Syscalls
	// CPU is where perf starts (the shell's CPU): 0.
	CPU cpumask.CPU
}

// DefaultPerfConfig is sched-pipe.c's defaults: LOOPS_DEFAULT (1000000)
// loops between two processes.
func DefaultPerfConfig() PerfConfig {
	return PerfConfig{Loops: 1000000, Costs: costmodel.DefaultSyscalls()}
}

var perfOpts = []getopt.Option{
	{Short: 'l', Long: "loop", HasArg: true},
	{Short: 'T', Long: "threaded"},
	// parse-options takes --no-NAME for every option: OPT_BOOLEAN
	// clears it, OPT_INTEGER sets 0.
	{Long: "no-loop"},
	{Long: "no-threaded"},
	{Long: "cpus-pair", HasArg: true},
	{Short: 'h', Long: "help"},
}

// ParsePerf parses `perf bench sched pipe` arguments as perf 6.1 does
// (sched-pipe.c's options through parse-options): -l is OPT_INTEGER, so
// -l 0 and negative counts are accepted (perf then prints inf or negative
// figures, and so does schedlab); non-option arguments are ignored, as
// sched-pipe.c ignores what parse_options leaves.
func ParsePerf(args []string) (PerfConfig, error) {
	cfg := DefaultPerfConfig()
	opts, _, err := getopt.Parse(perfProg, perfOpts, args)
	if err != nil {
		return cfg, perfopt.Error(perfProg, err)
	}
	for _, o := range opts {
		switch o.Option.Long {
		case "loop":
			if cfg.Loops, err = perfopt.Int(perfProg, o); err != nil {
				return cfg, err
			}
		case "no-loop":
			cfg.Loops = 0
		case "threaded":
			cfg.Threads = true
		case "no-threaded":
			cfg.Threads = false
		case "cpus-pair":
			if cfg.Pair, err = ParsePair(perfProg, o.Arg); err != nil {
				return cfg, err
			}
		case "help":
			return cfg, workload.ErrHelp
		}
	}
	return cfg, nil
}

// ParsePerfCommand parses a whole `perf bench [--format=default|simple]
// sched pipe ARGS` command line (after "perf").
func ParsePerfCommand(args []string) (PerfConfig, error) {
	cmd, err := perfopt.SplitBench(args, "sched pipe")
	if err != nil {
		return PerfConfig{}, err
	}
	return ParsePerfBench(cmd)
}

// ParsePerfBench parses the arguments of a `perf bench sched pipe`
// command that perfopt.SplitBench took apart.
func ParsePerfBench(cmd perfopt.Command) (PerfConfig, error) {
	if cmd.Name() != "sched pipe" {
		return PerfConfig{}, fmt.Errorf("perf bench %s is not perf bench sched pipe", cmd.Name())
	}
	cfg, err := ParsePerf(cmd.Args)
	cfg.Simple = cmd.Simple
	return cfg, err
}

// Perf is one `perf bench sched pipe` run.
type Perf struct {
	cfg PerfConfig
	// pipe1 carries worker 1's ints to worker 0, pipe2 worker 0's to
	// worker 1; files are their ends as struct files ([pipe][0 read, 1
	// write]), which threads' shared descriptor table makes fdget take.
	pipe1, pipe2 *kobj.Pipe
	files        [2][2]kobj.File
	main         *perfMain
	workers      [2]*perfWorker
	t0, t1       engine.Time
	// us is the gettimeofday difference, as perf computes it.
	us      int64
	done    bool
	opsDone int64 // loops finished by worker 0, for Progress
	mark    func()
}

// NewPerf returns a run for cfg.
func NewPerf(cfg PerfConfig) *Perf {
	return &Perf{cfg: cfg}
}

// SetCosts sets the system-call costs (workload.CostAware).
func (b *Perf) SetCosts(c costmodel.Syscalls) { b.cfg.Costs = c }

// WatchWindow installs the function called at the two gettimeofday
// calls (workload.Windowed).
func (b *Perf) WatchWindow(mark func()) { b.mark = mark }

// MeasuredWindow is the timed stretch and its loops (workload.Windowed).
func (b *Perf) MeasuredWindow() (workload.Window, bool) {
	if !b.done || b.t1 <= b.t0 || b.cfg.Loops <= 0 {
		return workload.Window{}, false
	}
	return workload.Window{From: b.t0, To: b.t1, Work: float64(b.cfg.Loops), Unit: "op"}, true
}

// Start creates perf's task: the process that is worker 1 (pinned to B
// with --cpus-pair), or with -T the main thread.
func (b *Perf) Start(k *sched.Kernel) error {
	if err := b.cfg.Pair.check(perfProg, k); err != nil {
		return err
	}
	b.pipe1, b.pipe2 = newPipe(), newPipe()
	b.main = &perfMain{b: b}
	spec := sched.TaskSpec{Comm: "sched-pipe", CPU: b.cfg.CPU, Prog: b.main}
	if !b.cfg.Threads {
		spec.Allowed = b.cfg.Pair.on(k, b.cfg.Pair.B)
	}
	t, err := k.Fork(spec)
	if err != nil {
		return err
	}
	b.main.t = t
	return nil
}

// Done reports whether perf has taken its second timestamp.
func (b *Perf) Done() bool { return b.done }

// Progress is the share of worker 0's loops done.
func (b *Perf) Progress() float64 {
	if b.cfg.Loops <= 0 {
		if b.done {
			return 1
		}
		return 0
	}
	return float64(b.opsDone) / float64(b.cfg.Loops)
}

// Elapsed is the simulated time between the two timestamps.
func (b *Perf) Elapsed() engine.Time { return b.t1 - b.t0 }

// Report writes perf's output (bench_sched_pipe's printf calls, and
// builtin-bench.c's "# Running" line in the default format).
func (b *Perf) Report(w io.Writer) error {
	sec, usec := b.us/1000000, b.us%1000000
	if b.cfg.Simple {
		_, err := fmt.Fprintf(w, "%d.%03d\n", sec, usec/1000)
		return err
	}
	kind := "processes"
	if b.cfg.Threads {
		kind = "threads"
	}
	loops := float64(b.cfg.Loops)
	fmt.Fprintf(w, "# Running 'sched/pipe' benchmark:\n")
	fmt.Fprintf(w, "# Executed %d pipe operations between two %s\n\n", b.cfg.Loops, kind)
	fmt.Fprintf(w, " %14s: %d.%03d [sec]\n\n", "Total time", sec, usec/1000)
	fmt.Fprintf(w, " %s usecs/op\n", cFloat(float64(b.us)/loops, 14, 6))
	_, err := fmt.Fprintf(w, " %14d ops/sec\n", cInt(loops/(float64(b.us)/1e6)))
	return err
}

// Metrics are usecs_per_op and ops_per_sec from the simulated time at
// full precision (perf prints them from whole microseconds), time_s and
// the loops; null for a run of no loops.
func (b *Perf) Metrics() workload.Metrics {
	per, ops, s := math.NaN(), math.NaN(), math.NaN()
	if b.done {
		s = float64(b.Elapsed()) / 1e9
		if b.cfg.Loops > 0 {
			per = float64(b.Elapsed()) / 1e3 / float64(b.cfg.Loops)
			ops = float64(b.cfg.Loops) / s
		}
	}
	return workload.Metrics{
		{Name: "usecs_per_op", Value: per, Better: workload.LowerIsBetter},
		{Name: "ops_per_sec", Value: ops, Better: workload.HigherIsBetter},
		{Name: "time_s", Value: s, Better: workload.LowerIsBetter},
		{Name: "loops", Value: float64(b.cfg.Loops), Better: workload.HigherIsBetter},
	}
}

// ---- the tasks ------------------------------------------------------------

type mainState uint8

const (
	mStart mainState = iota
	mCreate
	mWork // process mode: the parent is worker 1
	mWait
	mStop
	mDone
)

// perfMain is bench_sched_pipe: gettimeofday, fork (or two
// pthread_create), worker 1's loop in process mode, waitpid (or two
// pthread_join), gettimeofday.
type perfMain struct {
	b      *Perf
	t      *sched.Task
	state  mainState
	paid   bool
	n      int // workers created, then reaped
	worker perfWorker
}

func (m *perfMain) Next(k *sched.Kernel, t *sched.Task) sched.Op {
	b := m.b
	c := &b.cfg.Costs
	for {
		switch m.state {
		case mStart:
			// gettimeofday(&start)
			b.t0 = k.Now()
			b.us = -gettimeofday(k)
			if b.mark != nil {
				b.mark()
			}
			m.state = mCreate
			return sched.Run(sys(k, c.Clock))
		case mCreate:
			want := 1
			if b.cfg.Threads {
				want = 2
			}
			if m.n == want {
				m.n = 0
				m.state = mWait
				if !b.cfg.Threads {
					m.worker = perfWorker{b: b, nr: 1, t: t, inMain: true}
					b.workers[1] = &m.worker
					m.state = mWork
				}
				continue
			}
			if !m.paid {
				m.paid = true
				if b.cfg.Threads {
					return sched.Run(sys(k, c.ThreadCreate))
				}
				return sched.Run(sys(k, c.Fork))
			}
			m.paid = false
			m.create(k, t)
		case mWork:
			if op, ok := m.worker.loop(k, t); ok {
				return op
			}
			m.state = mWait
		case mWait:
			want := 1
			if b.cfg.Threads {
				want = 2
			}
			if m.n == want {
				m.state = mStop
				continue
			}
			w := b.workers[m.n] // process mode: worker 0, the child
			if !w.exited {
				w.reaper = t
				return sched.Block()
			}
			if !m.paid {
				m.paid = true
				return sched.Run(sys(k, c.Reap)) // waitpid / pthread_join
			}
			m.paid = false
			m.n++
		case mStop:
			// gettimeofday(&stop)
			b.t1 = k.Now()
			b.us += gettimeofday(k)
			b.done = true
			if b.mark != nil {
				b.mark()
			}
			m.state = mDone
			k.Eng.Stop()
			return sched.Exit()
		default:
			return sched.Exit()
		}
	}
}

// create forks worker 0 (process mode) or creates thread m.n.
func (m *perfMain) create(k *sched.Kernel, t *sched.Task) {
	b := m.b
	nr := 0
	if b.cfg.Threads {
		nr = m.n
	}
	w := &perfWorker{b: b, nr: nr}
	cpu := b.cfg.Pair.A
	if nr == 1 {
		cpu = b.cfg.Pair.B
	}
	spec := sched.TaskSpec{Comm: "sched-pipe", CPU: k.ThisCPU(), Prog: w, Allowed: b.cfg.Pair.on(k, cpu)}
	if b.cfg.Threads {
		spec.MM = t.MM // threads share the address space and the descriptor table
	}
	wt, err := k.Fork(spec)
	if err != nil {
		panic("pingpong: " + err.Error())
	}
	w.t = wt
	b.workers[nr] = w
	m.n++
}

type workerState uint8

const (
	wStart workerState = iota
	wLoop
	wExit
)

// perfWorker is worker_thread: loops × (worker 0: read pipe 1, write
// pipe 2; worker 1: write pipe 1, read pipe 2), one int each.
type perfWorker struct {
	b      *Perf
	t      *sched.Task
	nr     int
	inMain bool // worker 1 of process mode: the parent itself
	state  workerState
	i      int
	second bool // the loop's second call is next
	call   call
	paid   bool
	exited bool
	reaper *sched.Task
}

const sizeofInt = 4

func (w *perfWorker) Next(k *sched.Kernel, t *sched.Task) sched.Op {
	b := w.b
	c := &b.cfg.Costs
	for {
		switch w.state {
		case wStart:
			// The new thread's or process's own start.
			w.state = wLoop
			start := c.ProcessStart
			if b.cfg.Threads {
				start = c.ThreadStart
			}
			if start > 0 {
				return sched.Run(start)
			}
		case wLoop:
			if op, ok := w.loop(k, t); ok {
				return op
			}
			w.state = wExit
		case wExit:
			if !w.paid {
				w.paid = true
				if b.cfg.Threads {
					return sched.Run(sys(k, c.ExitThread))
				}
				return sched.Run(sys(k, c.ExitProcess))
			}
			w.exited = true
			if w.reaper != nil {
				k.WakeUp(w.reaper, 0) // do_notify_parent, or the CLONE_CHILD_CLEARTID futex
				w.reaper = nil
			}
			return sched.Exit()
		}
	}
}

// loop returns the worker's next operation in its loop, or ok=false when
// it has done all the loops.
func (w *perfWorker) loop(k *sched.Kernel, t *sched.Task) (sched.Op, bool) {
	b := w.b
	c := &b.cfg.Costs
	var rd, wr *kobj.Pipe
	var rf, wf *kobj.File
	if w.nr == 0 {
		rd, wr = b.pipe1, b.pipe2
		rf, wf = &b.files[0][0], &b.files[1][1]
	} else {
		rd, wr = b.pipe2, b.pipe1
		rf, wf = &b.files[1][0], &b.files[0][1]
	}
	if !b.cfg.Threads {
		rf, wf = nil, nil // each process has its own table after fork
	}
	readFirst := w.nr == 0
	for w.i < b.cfg.Loops {
		if readFirst != w.second {
			if op, done := w.call.read(k, t, rd, sizeofInt, c, rf); !done {
				return op, true
			}
		} else if op, done := w.call.write(k, t, wr, sizeofInt, c, wf); !done {
			return op, true
		}
		if !w.second {
			w.second = true
			continue
		}
		w.second = false
		w.i++
		if w.nr == 0 {
			b.opsDone++
		}
	}
	return sched.Op{}, false
}
