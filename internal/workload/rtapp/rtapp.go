// Package rtapp runs rt-app JSON workload files (ARM's scheduler-tools
// rt-app; workloads-and-formats.md section 7): tasks made of phases made of
// events, each task with its instances, loop count, nice value, CPU
// affinity and cgroup. The events schedlab models are run (fixed work, in
// usec at capacity 1024, so it takes longer on a smaller or slower CPU, as
// rt-app's calibrated loops do), runtime (busy for wall time), sleep, timer
// (periodic, relative or absolute, one per name or per thread for "unique"
// names), lock/unlock (pthread mutexes), barrier, fork and yield; any other
// key is an error naming it.
//
// What is printed is what rt-app writes: its notices (on stderr in the real
// tool) and, per thread, its log file (rt-app-<task>-<id>.log), one line per
// phase loop with rt-app's columns, the file name shown in a "==> name <=="
// header as head(1) does. Timestamps are µs of simulated time since the
// start.
package rtapp

import (
	"fmt"
	"io"

	"github.com/schedlab/schedlab/internal/cpumask"
	"github.com/schedlab/schedlab/internal/engine"
	"github.com/schedlab/schedlab/internal/sched"
	"github.com/schedlab/schedlab/internal/workload"
	"github.com/schedlab/schedlab/internal/workload/kobj"
)

// defaultPLoad is the ns per calibration loop printed when the file asks
// rt-app to calibrate on a CPU ("calibration": "CPU0"): schedlab's run
// event is defined in time at capacity 1024, so the figure only labels
// the perf column.
const defaultPLoad = 100

// runtimeSlice bounds how late a runtime event notices that its wall time
// has passed when it was preempted (see schbench's spinSlice).
const runtimeSlice = 100 * engine.Microsecond

// Bench is one rt-app run.
type Bench struct {
	spec    *Spec
	k       *sched.Kernel
	pload   int64
	notices []byte
	threads []*thread
	nextID  int
	alive   int
	done    bool
	tasks   map[string]*Task
	mutexes map[string]*kobj.Mutex
	barrier map[string]*kobj.Barrier
	timers  map[string]*timer
	groups  map[string]*sched.TaskGroup
	stopper *engine.Timer
	wuMax   engine.Time
	wuSum   engine.Time
	wuN     int64
}

type timer struct {
	next    engine.Time
	started bool
}

// New returns a run of spec.
func New(spec *Spec) *Bench {
	b := &Bench{spec: spec, pload: spec.Calibration, tasks: map[string]*Task{},
		mutexes: map[string]*kobj.Mutex{}, barrier: map[string]*kobj.Barrier{}, timers: map[string]*timer{},
		groups: map[string]*sched.TaskGroup{}}
	if b.pload == 0 {
		b.pload = defaultPLoad
	}
	for _, t := range spec.Tasks {
		b.tasks[t.Name] = t
	}
	for name, n := range spec.Barriers {
		b.barrier[name] = &kobj.Barrier{N: n}
	}
	return b
}

func (b *Bench) notice(format string, a ...any) {
	b.notices = fmt.Appendf(b.notices, "[rt-app] <notice> "+format+"\n", a...)
}

// Start creates every instance of every task, in file order, from CPU 0.
func (b *Bench) Start(k *sched.Kernel) error {
	b.k = k
	b.notice("pLoad = %dns", b.pload)
	for _, t := range b.spec.Tasks {
		for i := 0; i < t.Instances; i++ {
			if err := b.spawn(k, t, 0); err != nil {
				return err
			}
		}
	}
	if b.spec.Duration > 0 {
		b.stopper = engine.NewTimer("rt-app-duration", func() { b.finish() })
		k.Eng.Schedule(b.stopper, engine.Time(b.spec.Duration)*engine.Second)
	}
	if b.alive == 0 {
		b.finish()
	}
	return nil
}

func (b *Bench) spawn(k *sched.Kernel, t *Task, cpu cpumask.CPU) error {
	th := &thread{b: b, task: t, id: b.nextID, timers: map[string]*timer{}}
	b.nextID++
	spec := sched.TaskSpec{Comm: fmt.Sprintf("%s-%d", t.Name, th.id), Nice: t.Nice, Policy: t.Policy, CPU: cpu, Prog: th}
	if len(t.CPUs) > 0 {
		m := cpumask.New(k.NrCPUs())
		for _, c := range t.CPUs {
			if c >= k.NrCPUs() {
				return fmt.Errorf("tasks.%s.cpus: CPU %d does not exist on this %d-CPU machine", t.Name, c, k.NrCPUs())
			}
			m.Set(cpumask.CPU(c))
		}
		spec.Allowed = m
	}
	if t.Taskgroup != "" {
		g, err := b.group(k, t.Taskgroup)
		if err != nil {
			return fmt.Errorf("tasks.%s.taskgroup: %v", t.Name, err)
		}
		spec.Group = g
	}
	task, err := k.Fork(spec)
	if err != nil {
		return fmt.Errorf("tasks.%s: %v", t.Name, err)
	}
	th.t = task
	b.threads = append(b.threads, th)
	b.alive++
	return nil
}

// group creates (once) the cgroup path and its parents, weight 100.
func (b *Bench) group(k *sched.Kernel, path string) (*sched.TaskGroup, error) {
	if path == "/" {
		return k.RootTG, nil
	}
	if g, ok := b.groups[path]; ok {
		return g, nil
	}
	parent := k.RootTG
	cur := ""
	for _, part := range splitPath(path) {
		cur += "/" + part
		if g, ok := b.groups[cur]; ok {
			parent = g
			continue
		}
		g := k.Group(cur)
		if g == nil {
			var err error
			if g, err = k.CreateGroup(parent, part, 100); err != nil {
				return nil, err
			}
		}
		b.groups[cur] = g
		parent = g
	}
	return parent, nil
}

func splitPath(p string) []string {
	var out []string
	cur := ""
	for i := 0; i < len(p); i++ {
		if p[i] == '/' {
			if cur != "" {
				out = append(out, cur)
			}
			cur = ""
			continue
		}
		cur += string(p[i])
	}
	if cur != "" {
		out = append(out, cur)
	}
	return out
}

func (b *Bench) finish() {
	if b.done {
		return
	}
	for _, th := range b.threads {
		if !th.exited {
			th.exited = true
			b.notice("[%d] Exiting.", th.id)
		}
	}
	b.done = true
	b.k.Eng.Stop()
}

// Done reports whether every thread has exited or the duration is over.
func (b *Bench) Done() bool { return b.done }

// Progress is the fraction of the duration simulated (0 without one).
func (b *Bench) Progress() float64 {
	if b.spec.Duration <= 0 || b.k == nil {
		return 0
	}
	return float64(b.k.Now()) / float64(engine.Time(b.spec.Duration)*engine.Second)
}

// Report writes the notices and every thread's log.
func (b *Bench) Report(w io.Writer) error {
	if _, err := w.Write(b.notices); err != nil {
		return err
	}
	for _, th := range b.threads {
		fmt.Fprintf(w, "\n==> rt-app-%s-%d.log <==\n", th.task.Name, th.id)
		fmt.Fprintf(w, "# Policy : %s priority : %d\n", th.task.PolicyStr, th.task.Nice)
		fmt.Fprintf(w, "#idx     perf      run   period           start             end          rel_st      slack c_duration   c_period     wu_lat\n")
		w.Write(th.log)
	}
	return nil
}

// Metrics are the thread count, the phase loops logged and the timer
// wakeup latencies.
func (b *Bench) Metrics() workload.Metrics {
	loops := 0
	for _, th := range b.threads {
		loops += th.lines
	}
	mean := 0.0
	if b.wuN > 0 {
		mean = float64(b.wuSum) / float64(b.wuN) / 1e3
	}
	return []workload.Metric{
		// The threads the file creates: a count, like the work done.
		{Name: "threads", Value: float64(len(b.threads)), Better: workload.HigherIsBetter},
		// Phase loops done: more in the same duration is better.
		{Name: "phase_loops", Value: float64(loops), Better: workload.HigherIsBetter},
		{Name: "wu_lat_us.mean", Value: mean, Better: workload.LowerIsBetter},
		{Name: "wu_lat_us.max", Value: float64(b.wuMax) / 1e3, Better: workload.LowerIsBetter},
	}
}

// ---- threads ------------------------------------------------------------------

type thread struct {
	b      *Bench
	task   *Task
	t      *sched.Task
	id     int
	timers map[string]*timer
	exited bool
	lines  int

	started   bool
	delayed   bool
	taskLoop  int64
	phase     int
	phaseLoop int64
	ev        int
	evStarted bool
	evStart   engine.Time
	gen       uint64
	waiting   bool

	// per phase-loop record
	loopStart engine.Time
	perf      int64
	run       engine.Time
	slack     engine.Time
	cDuration int64
	cPeriod   int64
	wuLat     engine.Time
	log       []byte
}

func (th *thread) Next(k *sched.Kernel, t *sched.Task) sched.Op {
	b := th.b
	task := th.task
	if !th.started {
		th.started = true
		b.notice("[%d] Using %s policy with priority %d", th.id, task.PolicyStr, task.Nice)
		b.notice("[%d] starting thread ...\n", th.id)
		if task.Delay > 0 {
			return sched.Sleep(engine.Time(task.Delay) * engine.Microsecond)
		}
	}
	for {
		if b.done {
			return sched.Block()
		}
		ph := &task.Phases[th.phase]
		if th.ev == 0 && !th.evStarted {
			th.loopStart = k.Now()
			th.perf, th.run, th.slack, th.cDuration, th.cPeriod, th.wuLat = 0, 0, 0, 0, 0, 0
		}
		if th.ev == len(ph.Events) {
			th.logLine(k)
			th.ev = 0
			th.phaseLoop++
			if th.phaseLoop < ph.Loop {
				continue
			}
			th.phaseLoop = 0
			th.phase++
			if th.phase < len(task.Phases) {
				continue
			}
			th.phase = 0
			th.taskLoop++
			if task.Loop > 0 && th.taskLoop >= task.Loop {
				return th.exit()
			}
			continue
		}
		ev := &ph.Events[th.ev]
		if op, ok := th.event(k, t, ev); ok {
			return op
		}
		th.ev++
		th.evStarted = false
	}
}

func (th *thread) exit() sched.Op {
	b := th.b
	th.exited = true
	b.notice("[%d] Exiting.", th.id)
	b.alive--
	if b.alive == 0 && b.spec.Duration < 0 {
		b.done = true
		b.k.Eng.Stop()
	}
	return sched.Exit()
}

// event returns the next operation of ev, or ok=false when ev is complete.
func (th *thread) event(k *sched.Kernel, t *sched.Task, ev *Event) (sched.Op, bool) {
	b := th.b
	first := !th.evStarted
	th.evStarted = true
	if first {
		th.evStart = k.Now()
	}
	switch ev.Kind {
	case EvRun:
		if first {
			th.perf += ev.Usec * 1000 / b.pload
			th.cDuration += ev.Usec
			if ev.Usec > 0 {
				return sched.Run(engine.Time(ev.Usec) * engine.Microsecond), true
			}
		}
		th.run += k.Now() - th.evStart
	case EvRuntime:
		if first {
			th.cDuration += ev.Usec
		}
		end := th.evStart + engine.Time(ev.Usec)*engine.Microsecond
		if k.Now() < end {
			d := end - k.Now()
			if d > runtimeSlice {
				d = runtimeSlice
			}
			th.perf += int64(d) / b.pload
			return sched.Run(d), true
		}
		th.run += k.Now() - th.evStart
	case EvSleep:
		if first && ev.Usec > 0 {
			return sched.Sleep(engine.Time(ev.Usec)*engine.Microsecond + kobj.TimerSlack), true
		}
	case EvTimer:
		tm := th.timerFor(ev)
		period := engine.Time(ev.Usec) * engine.Microsecond
		if first {
			if !tm.started {
				tm.started = true
				tm.next = k.Now()
			}
			tm.next += period
			th.cPeriod = ev.Usec
			th.slack = tm.next - k.Now()
			if tm.next > k.Now() {
				return sched.Sleep(tm.next - k.Now() + kobj.TimerSlack), true
			}
			// Missed: relative mode re-bases on now.
			if !ev.Abs {
				tm.next = k.Now()
			}
			return sched.Op{}, false
		}
		lat := k.Now() - tm.next
		th.wuLat = lat
		b.wuSum += lat
		b.wuN++
		if lat > b.wuMax {
			b.wuMax = lat
		}
	case EvLock:
		m := b.mutex(ev.Ref)
		if !m.Lock(t) {
			return sched.Block(), true
		}
	case EvUnlock:
		m := b.mutex(ev.Ref)
		if m.Owner == t {
			m.Unlock(k)
		}
	case EvBarrier:
		bar := b.barrier[ev.Ref]
		if first {
			var last bool
			th.gen, last = bar.Arrive(k, t)
			if !last {
				return sched.Block(), true
			}
			return sched.Op{}, false
		}
		if !bar.Passed(t, th.gen) {
			return sched.Block(), true
		}
	case EvFork:
		if err := b.spawn(k, b.tasks[ev.Ref], k.ThisCPU()); err != nil {
			panic("rtapp: " + err.Error())
		}
	case EvYield:
		if first {
			return sched.Yield(), true
		}
	}
	return sched.Op{}, false
}

func (b *Bench) mutex(name string) *kobj.Mutex {
	m, ok := b.mutexes[name]
	if !ok {
		m = &kobj.Mutex{}
		b.mutexes[name] = m
	}
	return m
}

func (th *thread) timerFor(ev *Event) *timer {
	if ev.Unique {
		tm, ok := th.timers[ev.Ref]
		if !ok {
			tm = &timer{}
			th.timers[ev.Ref] = tm
		}
		return tm
	}
	tm, ok := th.b.timers[ev.Ref]
	if !ok {
		tm = &timer{}
		th.b.timers[ev.Ref] = tm
	}
	return tm
}

// logLine writes one line of the thread's log, rt-app's columns.
func (th *thread) logLine(k *sched.Kernel) {
	us := func(t engine.Time) int64 { return int64(t / engine.Microsecond) }
	end := k.Now()
	th.log = fmt.Appendf(th.log, "%4d %8d %8d %8d %15d %15d %15d %10d %10d %10d %10d\n",
		th.phase, th.perf, us(th.run), us(end-th.loopStart), us(th.loopStart), us(end), us(th.loopStart),
		us(th.slack), th.cDuration, th.cPeriod, us(th.wuLat))
	th.lines++
}
