package replay

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/schedlab/schedlab/internal/cpumask"
	"github.com/schedlab/schedlab/internal/engine"
	"github.com/schedlab/schedlab/internal/observe"
	"github.com/schedlab/schedlab/internal/sched"
	"github.com/schedlab/schedlab/internal/topology"
	"github.com/schedlab/schedlab/internal/trace"
	"github.com/schedlab/schedlab/internal/workload"
	"github.com/schedlab/schedlab/internal/workload/kobj"
)

// Usage is the replay tool's usage text.
const Usage = `usage: replay [--recorded-on MACHINE] [--pids] [--order free|recorded] TRACE

Replays the tasks of TRACE (a trace.dat, ftrace text, trace-cmd report or
perf sched script output) on the run's machine and kernel, and prints the
perf sched latency summary of the recording and of the replay side by side.

  --recorded-on MACHINE  the machine the trace was recorded on (a preset or
                         machine file): bursts are scaled by its CPUs'
                         capacities; without it every CPU counts as 1024
  --pids                 one row per task instead of one per comm
  --order free           (default) a waker that gets to a wakeup before its
                         wakee has gone to sleep leaves the wakeup for it,
                         and the wakee does not sleep there: each task keeps
                         its own pace, some recorded wakeups do not happen
  --order recorded       such a waker waits until the wakee sleeps, so every
                         recorded wakeup happens, by the same waker, at the
                         cost of the replay's timing (see docs/replay.md)
`

// Spec is a parsed replay command line.
type Spec struct {
	File       string
	RecordedOn string
	Pids       bool
	// Ordered keeps the recorded order of every task-to-task wakeup
	// (--order recorded): a waker holds until its wakee has gone to
	// sleep.
	Ordered bool
}

// ParseArgs reads the tool's arguments.
func ParseArgs(args []string) (*Spec, error) {
	s := &Spec{}
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-h" || a == "--help":
			return nil, workload.ErrHelp
		case a == "--pids" || a == "-p":
			s.Pids = true
		case a == "--order" || strings.HasPrefix(a, "--order="):
			v, ok := strings.CutPrefix(a, "--order=")
			if !ok {
				if i+1 >= len(args) {
					return nil, fmt.Errorf("replay: --order needs free or recorded")
				}
				i++
				v = args[i]
			}
			switch v {
			case "free":
				s.Ordered = false
			case "recorded":
				s.Ordered = true
			default:
				return nil, fmt.Errorf("replay: --order %s: want free or recorded", v)
			}
		case a == "--recorded-on":
			if i+1 >= len(args) {
				return nil, fmt.Errorf("replay: --recorded-on needs a machine")
			}
			i++
			s.RecordedOn = args[i]
		case len(a) > 14 && a[:14] == "--recorded-on=":
			s.RecordedOn = a[14:]
		case len(a) > 1 && a[0] == '-':
			return nil, fmt.Errorf("replay: unknown option %s", a)
		case s.File != "":
			return nil, fmt.Errorf("replay: one trace file, not %s and %s", s.File, a)
		default:
			s.File = a
		}
	}
	if s.File == "" {
		return nil, errors.New("replay: no trace file given (usage: replay [--recorded-on MACHINE] [--pids] TRACE)")
	}
	return s, nil
}

// Load reads and reconstructs the spec's trace.
func Load(s *Spec) (*Trace, error) {
	in, err := Read(s.File)
	if err != nil {
		return nil, err
	}
	var capacity func(int32) int
	if s.RecordedOn != "" {
		ms, err := topology.Load(s.RecordedOn)
		if err != nil {
			return nil, fmt.Errorf("--recorded-on: %v", err)
		}
		topo, err := topology.Build(ms, topology.Options{})
		if err != nil {
			return nil, fmt.Errorf("--recorded-on: %v", err)
		}
		caps := topo.CPUCapacity
		ncpu := in.NrCPUs
		for i := range in.Events {
			ncpu = max(ncpu, int(in.Events[i].CPU)+1)
		}
		if ncpu > len(caps) {
			return nil, fmt.Errorf("--recorded-on %s: the machine has %d CPUs, the trace %d", s.RecordedOn, len(caps), ncpu)
		}
		capacity = func(cpu int32) int {
			if int(cpu) < len(caps) && cpu >= 0 {
				return caps[cpu]
			}
			return 1024
		}
	}
	tr, err := Reconstruct(in.Events, Options{NrCPUs: in.NrCPUs, Capacity: capacity, Freqs: in.Freqs})
	if err != nil {
		return nil, fmt.Errorf("%s: %v", s.File, err)
	}
	tr.Warnings = in.Warnings
	return tr, nil
}

// Bench is one replay run.
type Bench struct {
	spec    *Spec
	tr      *Trace
	k       *sched.Kernel
	threads map[int32]*thread
	order   []*thread
	alive   int
	done    bool
	// events are the replay's sched events as the kernel emitted them;
	// ReplayEvents maps their pids to the recorded ones.
	events   []trace.Event
	mapped   int // events[:mapped] carry the recorded pids
	byPID    map[sched.PID]int32
	end      engine.Time
	wakes    int
	early    int
	holds    int
	timeouts int
	executed Graph
	why      *whyRecorder
}

// New returns a run of tr.
func New(spec *Spec, tr *Trace) *Bench {
	b := &Bench{spec: spec, tr: tr, threads: map[int32]*thread{}, byPID: map[sched.PID]int32{}, executed: Graph{}}
	for _, t := range tr.Tasks {
		th := &thread{b: b, rec: t, waiting: -1}
		b.threads[t.Pid] = th
		b.order = append(b.order, th)
	}
	return b
}

// thread is one replayed task.
type thread struct {
	b   *Bench
	rec *Task
	t   *sched.Task
	pc  int
	// tokens holds the sleeps already ended by a waker that came early.
	tokens  map[int32]bool
	waiting int32 // the sleep blocked on, or -1
	// holders are, by sleep, the wakers holding (--order recorded) until
	// this thread has gone to sleep there.
	holders map[int32]*thread
	// holding is set while this thread holds at its current wake step.
	holding bool
	// unseen is set while the thread sleeps where the recording shows
	// no wakeup: a sleep the recording shows none for (Step.Unwoken), or
	// a hold (--order recorded). The summary leaves out the wakeup that
	// ends the sleep.
	unseen  bool
	q       kobj.WaitQueue
	started bool
}

// Start creates the tasks alive when the trace began, in order of first
// appearance, on the CPU they were first seen on (modulo this machine's).
func (b *Bench) Start(k *sched.Kernel) error {
	b.k = k
	rec := &recorder{b: b}
	observe.AttachTracer(k, rec)
	b.why = attachWhy(k)
	for _, th := range b.order {
		if th.rec.Parent != 0 {
			continue
		}
		if err := b.spawn(th, cpumask.CPU(max(int(th.rec.FirstCPU), 0)%k.NrCPUs())); err != nil {
			return err
		}
	}
	if b.alive == 0 {
		b.finish()
	}
	return nil
}

func (b *Bench) spawn(th *thread, cpu cpumask.CPU) error {
	k := b.k
	th.waiting = -1
	spec := sched.TaskSpec{Comm: th.rec.Comm, Nice: th.rec.Nice(), CPU: cpu, Prog: th}
	// A per-CPU thread stays on its CPU if this machine has it and the
	// run allows it (--cpus); otherwise it runs where the run's tasks may.
	if c := th.rec.PinnedCPU; c >= 0 && int(c) < k.NrCPUs() &&
		(k.DefaultAllowed.Size() == 0 || k.DefaultAllowed.Test(cpumask.CPU(c))) {
		m := cpumask.New(k.NrCPUs())
		m.Set(cpumask.CPU(c))
		spec.Allowed = m
	}
	t, err := k.Fork(spec)
	if err != nil {
		return fmt.Errorf("replay: task %s:%d: %v", th.rec.Comm, th.rec.Pid, err)
	}
	th.t = t
	th.started = true
	b.byPID[t.PID] = th.rec.Pid
	b.alive++
	return nil
}

// holdTimeout bounds a hold (--order recorded): a waker whose wakee has
// not slept where the recording says within it leaves the wakeup as in
// the free order. Holds are released by the wakee's sleep long before it
// in every trace tested; it keeps a trace whose order cannot be kept (a
// wakee that exits first, equal timestamps) from stalling the replay.
const holdTimeout = engine.Second

// Next runs the task's program from where it stopped.
func (th *thread) Next(k *sched.Kernel, t *sched.Task) sched.Op {
	b := th.b
	th.unseen = false
	for th.pc < len(th.rec.Steps) {
		s := &th.rec.Steps[th.pc]
		switch s.Kind {
		case Run:
			th.pc++
			return sched.Run(engine.Time(s.D))
		case Wake:
			w := b.threads[s.Pid]
			if b.spec.Ordered && w.waiting != s.Seq && !th.holding {
				// Hold until the wakee sleeps there: a timed sleep
				// its wakee's sleep cuts short (ExpireSleep), so the
				// release is a timer's wakeup, not a task's, and the
				// replay's wakeup graph stays the recording's.
				th.holding = true
				b.holds++
				if w.holders == nil {
					w.holders = map[int32]*thread{}
				}
				w.holders[s.Seq] = th
				th.unseen = true
				return sched.Sleep(holdTimeout)
			}
			if th.holding {
				th.holding = false
				if w.waiting != s.Seq {
					b.timeouts++
					delete(w.holders, s.Seq)
				}
			}
			if w.waiting != s.Seq {
				b.early++ // the wakee will find it when it gets there
			}
			b.executed[[2]int32{th.rec.Pid, s.Pid}]++
			th.pc++
			if w.tokens == nil {
				w.tokens = map[int32]bool{}
			}
			w.tokens[s.Seq] = true
			if w.waiting == s.Seq {
				w.waiting = -1
				w.q.Wake(k, 1, 0)
				b.wakes++
			}
		case Fork:
			th.pc++
			c := b.threads[s.Pid]
			if !c.started {
				if err := b.spawn(c, k.ThisCPU()); err != nil {
					panic(err.Error())
				}
			}
		case Sleep:
			if s.Cause != ByTask {
				th.pc++
				if s.D > 0 {
					th.unseen = s.Unwoken
					return sched.Sleep(engine.Time(s.D))
				}
				continue
			}
			if th.tokens[s.Seq] {
				delete(th.tokens, s.Seq)
				th.pc++
				continue
			}
			th.waiting = s.Seq
			th.q.Add(t, true)
			if h := th.holders[s.Seq]; h != nil {
				delete(th.holders, s.Seq)
				k.ExpireSleep(h.t)
			}
			return sched.Block()
		case Exit:
			th.pc = len(th.rec.Steps)
		}
	}
	b.alive--
	if b.alive == 0 {
		b.end = k.Now()
		b.finish()
	}
	return sched.Exit()
}

func (b *Bench) finish() {
	if b.done {
		return
	}
	b.done = true
	b.k.Eng.Stop()
}

// Done reports whether every replayed task has exited.
func (b *Bench) Done() bool { return b.done }

// Progress is the share of replayed tasks that have exited.
func (b *Bench) Progress() float64 {
	if len(b.order) == 0 {
		return 1
	}
	exited := 0
	for _, th := range b.order {
		if th.started && th.pc >= len(th.rec.Steps) {
			exited++
		}
	}
	return float64(exited) / float64(len(b.order))
}

// recorder keeps the replay's own events for its summary. It leaves out
// the wakeups that end a sleep the recording does not show ending in a
// wakeup: a sleep it shows none for (Step.Unwoken), which perf sched
// latency could not count there, and a hold (--order recorded), which is
// the replay's and not the recording's.
type recorder struct{ b *Bench }

func (r *recorder) Write(ev trace.Event) error {
	if ev.Type == trace.SchedWaking || ev.Type == trace.SchedWakeup {
		if p, ok := r.b.byPID[sched.PID(ev.Task.Pid)]; ok && r.b.threads[p].unseen {
			return nil
		}
	}
	r.b.events = append(r.b.events, ev)
	return nil
}

func (r *recorder) Close() error { return nil }

// pidMaxLimit is the kernel's PID_MAX_LIMIT on 64-bit machines.
const pidMaxLimit = 1 << 22

// ReplayEvents are the replay's sched events, with the recorded pids in
// place of the simulated ones. The pids are mapped here rather than as
// the events come: a fork's own events (sched_process_fork,
// sched_wakeup_new) come before Fork returns the child's pid.
func (b *Bench) ReplayEvents() []trace.Event {
	m := func(t *trace.Task) {
		if t.Pid == 0 {
			return
		}
		if p, ok := b.byPID[sched.PID(t.Pid)]; ok {
			t.Pid = p
		} else {
			// A task of the run that no recorded task plays
			// (--background-cgroups): above any pid a kernel gives
			// (PID_MAX_LIMIT), so that it matches no recorded row.
			t.Pid += pidMaxLimit
		}
	}
	for ; b.mapped < len(b.events); b.mapped++ {
		ev := &b.events[b.mapped]
		m(&ev.Cur)
		m(&ev.Task)
		m(&ev.Next)
	}
	return b.events
}

// Executed is the graph of the wake steps the replay carried out: who
// woke whom, how often, by recorded pid. A wake step whose wakee had not
// yet reached its sleep counts too, though the kernel saw no wakeup.
func (b *Bench) Executed() Graph { return b.executed }

// Warnings are the trace reader's: a text trace's last line cut short
// and left out (workload.Warner).
func (b *Bench) Warnings() []string { return b.tr.Warnings }

// Trace is the reconstruction being replayed.
func (b *Bench) Trace() *Trace { return b.tr }

// SetUp are the recorded pids whose creation at time 0 is the replay's
// setup, not a wait the recording shows: the tasks alive at the start
// that do not begin as new tasks there (Task.Begins).
func (b *Bench) SetUp() map[int32]bool {
	m := map[int32]bool{}
	for _, t := range b.tr.Tasks {
		if t.Parent == 0 && !t.Begins {
			m[t.Pid] = true
		}
	}
	return m
}

// summaries are perf sched latency's tables of the recording and of the
// replay. The replay's leaves out what stands for nothing in the
// recording, so that a task's count is comparable: the setup of the tasks
// alive at the start (SetUp), the wakeups of sleeps the recording shows
// none for and the releases of holds (the recorder); and it keeps a row
// for a task that ran without a counted wait, which perf leaves out.
func (b *Bench) summaries() (orig, rep *trace.LatencySummary, err error) {
	opts := trace.LatencyOptions{NoMerge: b.spec.Pids}
	if orig, err = trace.Summarize(b.tr.Events, opts); err != nil {
		return nil, nil, err
	}
	opts.SetUp, opts.Uncounted = b.SetUp(), true
	if rep, err = trace.Summarize(b.ReplayEvents(), opts); err != nil {
		return nil, nil, err
	}
	return orig, rep, nil
}

// Report prints the reconstruction's counts and the side-by-side summary.
func (b *Bench) Report(w io.Writer) error {
	orig, rep, err := b.summaries()
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "replay of %s: %s\n", b.spec.File, b.tr.Stats.Summary())
	fmt.Fprintf(w, "recorded: %.3f ms on %d CPUs; replayed: %.3f ms on %d CPUs, %d wakeups of a sleeping task, %d before the wakee slept (it then ran on)",
		float64(b.tr.End-b.tr.Start)/1e6, b.tr.NrCPUs, float64(b.end)/1e6, b.k.NrCPUs(), b.wakes, b.early)
	if b.spec.Ordered {
		fmt.Fprintf(w, "; recorded order: %d wakers held until their wakee slept, %d holds timed out", b.holds, b.timeouts)
	}
	fmt.Fprintln(w)
	if err := WriteSideBySide(w, orig, rep); err != nil {
		return err
	}
	why, err := b.Why()
	if err != nil {
		return err
	}
	return why.Write(w)
}

// Metrics are the replay's totals: CPU time, the time until the last task
// exited, and the wakeup latencies, as perf sched latency counts them.
func (b *Bench) Metrics() workload.Metrics {
	_, rep, err := b.summaries()
	if err != nil {
		return nil
	}
	t := totals(rep)
	return workload.Metrics{
		{Name: "runtime_ms", Value: float64(t.runtime) / 1e6, Better: workload.LowerIsBetter},
		{Name: "makespan_ms", Value: float64(b.end) / 1e6, Better: workload.LowerIsBetter},
		{Name: "switches", Value: float64(t.count), Better: workload.LowerIsBetter},
		{Name: "avg_delay_us", Value: t.avg() / 1e3, Better: workload.LowerIsBetter},
		{Name: "max_delay_us", Value: float64(t.max) / 1e3, Better: workload.LowerIsBetter},
	}
}
