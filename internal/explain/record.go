package explain

import (
	"github.com/schedlab/schedlab/internal/cpumask"
	"github.com/schedlab/schedlab/internal/engine"
	"github.com/schedlab/schedlab/internal/sched"
	"github.com/schedlab/schedlab/internal/workload"
)

// Rec is one decision as explain compares and prints it: a copy of a
// sched.Decision with its time and the names it needs.
type Rec struct {
	// T is the time since the measured run started (after a warm-up,
	// whose length differs between kernels).
	T      engine.Time
	PID    sched.PID
	Comm   string
	Kind   sched.DecisionKind
	Reason sched.Reason
	Affine sched.Affine
	Slow   bool
	CPU    cpumask.CPU
	Prev   cpumask.CPU
	Chosen cpumask.CPU
	// Domain names the domain balanced, or the one wake_affine ran at
	// ("" if none).
	Domain string
}

// Same reports whether r and o are the same decision, their times aside:
// the same kind, task, deciding CPU, prev, chosen CPU and reason
// (wake_affine's outcome and the domain included).
func (r *Rec) Same(o *Rec) bool {
	return r.Kind == o.Kind && r.PID == o.PID && r.Comm == o.Comm && r.CPU == o.CPU && r.Prev == o.Prev &&
		r.Chosen == o.Chosen && r.Reason == o.Reason && r.Affine == o.Affine && r.Slow == o.Slow && r.Domain == o.Domain
}

// Wait is a part of a task's wait: runnable, or woken and not yet
// enqueued, and not running.
type Wait uint8

const (
	// WaitWakeup is a woken task's time before it is enqueued: a wakeup
	// queued on the target's wake list, handled when the IPI arrives.
	WaitWakeup Wait = iota
	// WaitIPI is the reschedule IPI to the CPU it was enqueued on.
	WaitIPI
	// WaitIdleExit is its CPU leaving an idle state (before or after the
	// enqueue).
	WaitIdleExit
	// WaitBalance is balancing work on its CPU, or that CPU's rq lock
	// held by another CPU's pass.
	WaitBalance
	// WaitQueue is the rest: behind the other tasks of its runqueue.
	WaitQueue
	NrWaits
)

var waitNames = []string{
	"wakeup latency before enqueue (queued wakeup's IPI)", "reschedule IPI", "idle-state exit of its CPU",
	"behind balancing on its CPU", "run-queue wait behind other tasks",
}

func (w Wait) String() string { return waitNames[w] }

// TaskTime is one task's time in a window: Run + the Wait parts + Sleep
// is Elapsed, its time in the window (from its fork or the window's start
// to its exit or the window's end).
type TaskTime struct {
	PID     sched.PID
	Comm    string
	Elapsed engine.Time
	Run     engine.Time
	// Costs are what the kernel reported its run time made of
	// (sched.Hooks.Charge), in ns of work at full speed (CostBalance in
	// ns of time); the rest of Run is slower execution.
	Costs [sched.NrCosts]engine.Time
	Wait  [NrWaits]engine.Time
	Sleep engine.Time
}

// WaitSum is the task's whole wait.
func (t *TaskTime) WaitSum() engine.Time {
	var s engine.Time
	for _, w := range t.Wait {
		s += w
	}
	return s
}

func (t *TaskTime) sub(o *TaskTime) {
	t.Run -= o.Run
	t.Sleep -= o.Sleep
	for i := range t.Costs {
		t.Costs[i] -= o.Costs[i]
	}
	for i := range t.Wait {
		t.Wait[i] -= o.Wait[i]
	}
}

// task states, as the recorder follows them.
const (
	stNew = iota
	stRunning
	stWaiting // on a runqueue
	stWaking  // woken, not yet enqueued (a queued wakeup)
	stSleeping
	stDead
)

// taskAcct is the recorder's account of one task: its time so far and
// the interval it is in.
type taskAcct struct {
	TaskTime
	state   uint8
	since   engine.Time
	cpu     cpumask.CPU // the CPU it waits on
	created engine.Time
	exited  engine.Time
	dead    bool
}

// delayIv is a stretch [from, to) a CPU could not run a waiting task.
type delayIv struct {
	why      sched.Delay
	from, to engine.Time
}

// delayRing keeps a CPU's last delays.
const delayRing = 16

type cpuDelays struct {
	iv   [delayRing]delayIv
	next int
}

// snapshot is every task's account at a marked instant, and the
// workload's CPUs' idle times.
type snapshot struct {
	t     engine.Time
	tasks []TaskTime
	idle  [nrIdle]engine.Time
}

// Recorder is the observer of one run: it follows the kernel's hooks and
// keeps the decisions' counts, each workload task's time by part, and
// snapshots of those at the instants the workload marks; with a Stream it
// also hands every decision over, in batches, to be compared. Attach it
// with sim.Options{Observers: {r.Attach}, Watch: r.Watch}.
type Recorder struct {
	// Stream, when set, receives every decision in order, in batches
	// it may keep; Close is called after the last.
	Stream func([]Rec)
	Close  func()

	k       *sched.Kernel
	first   sched.PID
	tasks   []taskAcct
	cpus    []cpuAcct
	nrCPUs  int
	waiting int // workload tasks waiting for a CPU
	delays  []cpuDelays
	tally   *tally
	batch   []Rec
	win     workload.Windowed
	start   engine.Time
	snaps   []snapshot
	data    *RunData
}

// streamBatch is the number of decisions handed over at once.
const streamBatch = 1024

// Attach is a sim.Observer: it installs the recorder's hooks on k,
// keeping those already installed (they run first). The tasks that exist
// now (kernel threads, background cgroups) are not the workload's and
// are not followed; their decisions are counted.
func (r *Recorder) Attach(k *sched.Kernel) (func() error, error) {
	r.k = k
	r.first = sched.PID(len(k.Tasks) + 1)
	if n := len(k.Tasks); n > 0 {
		r.first = k.Tasks[n-1].PID + 1
	}
	r.delays = make([]cpuDelays, k.NrCPUs())
	r.cpus = make([]cpuAcct, k.NrCPUs())
	mine := k.DefaultAllowed
	for i := range r.cpus {
		c := &r.cpus[i]
		c.mine = mine.Size() == 0 || mine.Test(cpumask.CPU(i))
		c.idle, c.since, c.others = k.Rqs[i].Curr.IsIdleTask(), k.Now(), &r.waiting
		if c.mine {
			r.nrCPUs++
		}
	}
	r.tally = newTally(k.NrCPUs())
	r.start = k.Now()
	h := &k.Hooks
	prevSwitch, prevWaking, prevWakeup, prevNew := h.Switch, h.Waking, h.Wakeup, h.WakeupNew
	prevMigrate, prevFork, prevExit := h.Migrate, h.Fork, h.Exit
	prevDecision, prevCharge, prevDelay := h.Decision, h.Charge, h.Delay
	h.Fork = func(parent, child *sched.Task) {
		if prevFork != nil {
			prevFork(parent, child)
		}
		r.fork(child)
	}
	h.WakeupNew = func(p *sched.Task, cpu cpumask.CPU) {
		if prevNew != nil {
			prevNew(p, cpu)
		}
		if a := r.acct(p); a != nil {
			r.enter(a, stWaiting, cpu)
		}
	}
	h.Waking = func(p *sched.Task) {
		if prevWaking != nil {
			prevWaking(p)
		}
		if a := r.acct(p); a != nil && a.state == stSleeping {
			r.enter(a, stWaking, cpumask.None)
		}
	}
	h.Wakeup = func(p *sched.Task, cpu cpumask.CPU) {
		if prevWakeup != nil {
			prevWakeup(p, cpu)
		}
		if a := r.acct(p); a != nil && (a.state == stWaking || a.state == stSleeping) {
			if a.state == stWaking && a.cpu != cpu {
				// Not the CPU its wakeup chose (the decision
				// named it): its wait was for this one.
				r.enter(a, stWaking, cpu)
			}
			r.enter(a, stWaiting, cpu)
		}
	}
	h.Migrate = func(p *sched.Task, from, to cpumask.CPU) {
		if prevMigrate != nil {
			prevMigrate(p, from, to)
		}
		if a := r.acct(p); a != nil && a.state == stWaiting {
			// A queued task moved by the balancer: its wait goes on
			// on the new CPU.
			r.enter(a, stWaiting, to)
		}
	}
	h.Switch = func(cpu cpumask.CPU, prev *sched.Task, st sched.TaskState, next *sched.Task) {
		if prevSwitch != nil {
			prevSwitch(cpu, prev, st, next)
		}
		c := &r.cpus[cpu]
		c.close(r.k.Now())
		c.idle = next.IsIdleTask()
		if a := r.acct(prev); a != nil {
			switch st {
			case sched.TaskRunning:
				r.enter(a, stWaiting, cpu)
			case sched.TaskDead:
				r.enter(a, stDead, cpumask.None)
			default:
				r.enter(a, stSleeping, cpumask.None)
			}
		}
		if a := r.acct(next); a != nil {
			r.enter(a, stRunning, cpu)
		}
	}
	h.Exit = func(p *sched.Task) {
		if prevExit != nil {
			prevExit(p)
		}
	}
	h.Decision = func(d *sched.Decision) {
		if prevDecision != nil {
			prevDecision(d)
		}
		if a := r.acct(d.Task); a != nil && a.state == stWaking && d.Kind == sched.DecisionWakeup {
			// The woken task waits for the chosen CPU from now.
			r.enter(a, stWaking, d.Chosen)
		}
		r.decision(d)
	}
	h.Charge = func(p *sched.Task, c sched.Cost, d engine.Time) {
		if prevCharge != nil {
			prevCharge(p, c, d)
		}
		if a := r.acct(p); a != nil {
			a.Costs[c] += d
		}
	}
	h.Delay = func(cpu cpumask.CPU, why sched.Delay, from, to engine.Time) {
		if prevDelay != nil {
			prevDelay(cpu, why, from, to)
		}
		cd := &r.delays[cpu]
		cd.iv[cd.next] = delayIv{why, from, to}
		cd.next = (cd.next + 1) % delayRing
	}
	return r.finish, nil
}

// Watch is a sim.Options.Watch: a workload that says what its metric
// measures (workload.Windowed) marks the instants the window may start
// or end.
func (r *Recorder) Watch(inst workload.Instance) {
	if w, ok := inst.(workload.Windowed); ok {
		r.win = w
		w.WatchWindow(r.mark)
	}
}

func (r *Recorder) fork(p *sched.Task) {
	if p.PID < r.first {
		return
	}
	i := int(p.PID - r.first)
	for len(r.tasks) <= i {
		r.tasks = append(r.tasks, taskAcct{})
	}
	now := r.k.Now()
	r.tasks[i] = taskAcct{TaskTime: TaskTime{PID: p.PID, Comm: p.Comm}, state: stNew, since: now, created: now, cpu: cpumask.None}
}

// acct is the account of a workload task, or nil.
func (r *Recorder) acct(p *sched.Task) *taskAcct {
	if p == nil || p.PID < r.first {
		return nil
	}
	i := int(p.PID - r.first)
	if i >= len(r.tasks) || r.tasks[i].PID != p.PID {
		return nil
	}
	return &r.tasks[i]
}

// enter closes a's interval at now and starts one in state st (on cpu).
func (r *Recorder) enter(a *taskAcct, st uint8, cpu cpumask.CPU) {
	now := r.k.Now()
	r.close(a, now)
	if (a.state == stWaiting || a.state == stWaking) && a.cpu >= 0 {
		r.waiters(a.cpu, -1)
	}
	a.state, a.since, a.cpu = st, now, cpu
	if (st == stWaiting || st == stWaking) && cpu >= 0 {
		r.waiters(cpu, +1)
	}
	if st == stDead {
		a.dead, a.exited = true, now
	}
}

// cpuAcct is one of the workload's CPUs as the recorder follows it: idle
// or not, and how many workload tasks wait for it.
type cpuAcct struct {
	mine    bool // the workload may run on it
	idle    bool
	waiters int
	since   engine.Time
	// Idle is its idle time: [IdleWaited] while a workload task was
	// waiting for it (woken to it or queued on it: an IPI, an idle exit
	// or balancing on the way), [IdleElsewhere] while none was but some
	// waited for another CPU, [IdleEmpty] while no workload task waited
	// at all.
	Idle [nrIdle]engine.Time
	// others is the number of workload tasks waiting, for any CPU.
	others *int
}

// Kinds of idle time of a CPU.
const (
	IdleWaited = iota
	IdleElsewhere
	IdleEmpty
	nrIdle
)

// closeCPU adds c's interval up to now to its account.
func (c *cpuAcct) close(now engine.Time) {
	if c.idle {
		switch {
		case c.waiters > 0:
			c.Idle[IdleWaited] += now - c.since
		case *c.others > 0:
			c.Idle[IdleElsewhere] += now - c.since
		default:
			c.Idle[IdleEmpty] += now - c.since
		}
	}
	c.since = now
}

// waiters changes the number of workload tasks waiting for cpu.
func (r *Recorder) waiters(cpu cpumask.CPU, d int) {
	now := r.k.Now()
	if (r.waiting == 0) != (r.waiting+d == 0) {
		// Every idle CPU's kind of idleness changes.
		for i := range r.cpus {
			if r.cpus[i].idle {
				r.cpus[i].close(now)
			}
		}
	}
	c := &r.cpus[cpu]
	c.close(now)
	c.waiters += d
	r.waiting += d
}

// cpuTimes are the workload's CPUs' idle times so far.
func (r *Recorder) cpuTimes() (idle [nrIdle]engine.Time) {
	now := r.k.Now()
	for i := range r.cpus {
		c := r.cpus[i] // a copy
		if !c.mine {
			continue
		}
		c.close(now)
		for j := range idle {
			idle[j] += c.Idle[j]
		}
	}
	return idle
}

// close adds a's interval up to now to its account.
func (r *Recorder) close(a *taskAcct, now engine.Time) {
	d := now - a.since
	if d <= 0 {
		return
	}
	switch a.state {
	case stRunning:
		a.Run += d
	case stSleeping:
		a.Sleep += d
	case stWaiting, stWaking:
		r.splitWait(&a.TaskTime, a.cpu, a.since, now, a.state == stWaking)
	}
	a.since = now
}

// splitWait adds the wait [from, to) on cpu to t's parts: an IPI that
// set out at its start (the wakeup's or the reschedule's), the CPU's idle
// exits and balancing over it, each clipped so that the parts never
// exceed the wait, and the rest as queueing (or, before the enqueue, as
// the queued wakeup's latency).
func (r *Recorder) splitWait(t *TaskTime, cpu cpumask.CPU, from, to engine.Time, waking bool) {
	left := to - from
	rest := WaitQueue
	if waking {
		rest = WaitWakeup
	}
	if cpu >= 0 && int(cpu) < len(r.delays) {
		cd := &r.delays[cpu]
		for _, why := range [...]sched.Delay{sched.DelayIPI, sched.DelayIdleExit, sched.DelayBalance} {
			for i := range cd.iv {
				iv := &cd.iv[i]
				if iv.why != why || iv.to <= from || iv.from >= to {
					continue
				}
				if why == sched.DelayIPI && iv.from != from {
					continue // another task's wakeup or preemption
				}
				d := min(iv.to, to) - max(iv.from, from)
				d = min(d, left)
				if d <= 0 {
					continue
				}
				left -= d
				switch why {
				case sched.DelayIPI:
					if waking {
						t.Wait[WaitWakeup] += d
					} else {
						t.Wait[WaitIPI] += d
					}
				case sched.DelayIdleExit:
					t.Wait[WaitIdleExit] += d
				case sched.DelayBalance:
					t.Wait[WaitBalance] += d
				}
			}
		}
	}
	t.Wait[rest] += left
}

// snapshotNow is every followed task's account as of now, with its open
// interval closed there.
func (r *Recorder) snapshotNow() []TaskTime {
	now := r.k.Now()
	out := make([]TaskTime, len(r.tasks))
	for i := range r.tasks {
		a := r.tasks[i] // a copy: closing it leaves the account alone
		r.close(&a, now)
		out[i] = a.TaskTime
	}
	return out
}

// mark is the workload's: its window may start or end now.
func (r *Recorder) mark() {
	now := r.k.Now()
	s := snapshot{t: now, tasks: r.snapshotNow()}
	s.idle = r.cpuTimes()
	if n := len(r.snaps); n > 0 && r.snaps[n-1].t == now {
		r.snaps[n-1] = s
		return
	}
	r.snaps = append(r.snaps, s)
}

func (r *Recorder) decision(d *sched.Decision) {
	rec := Rec{T: r.k.Now() - r.start, PID: d.Task.PID, Comm: d.Task.Comm, Kind: d.Kind, Reason: d.Reason, Affine: d.Affine,
		Slow: d.Slow, CPU: d.CPU, Prev: d.Prev, Chosen: d.Chosen}
	if d.Domain != nil {
		rec.Domain = d.Domain.T.Name
	}
	r.tally.add(r.k, d)
	if r.Stream != nil {
		if r.batch == nil {
			r.batch = make([]Rec, 0, streamBatch)
		}
		r.batch = append(r.batch, rec)
		if len(r.batch) == streamBatch {
			r.Stream(r.batch)
			r.batch = nil
		}
	}
}

// finish ends the run's recording: the last decisions go to the stream
// and the window's times are worked out.
func (r *Recorder) finish() error {
	if r.Stream != nil {
		if len(r.batch) > 0 {
			r.Stream(r.batch)
			r.batch = nil
		}
		if r.Close != nil {
			r.Close()
			r.Close = nil
		}
	}
	end := r.k.Now()
	w, ok := workload.Window{}, false
	if r.win != nil {
		w, ok = r.win.MeasuredWindow()
	}
	var from, to *snapshot
	if ok {
		from, to = r.snapAt(w.From), r.snapAt(w.To)
		if from == nil || to == nil {
			ok = false
		}
	}
	if !ok {
		// The whole run, as one unit of work.
		w = workload.Window{From: r.start, To: end, Work: 1, Unit: "run"}
		from, to = &snapshot{t: r.start}, &snapshot{t: end, tasks: r.snapshotNow()}
		to.idle = r.cpuTimes()
	}
	data := &RunData{Counts: r.tally.fold(), Window: Window{From: w.From, To: w.To, Work: w.Work, Unit: w.Unit, Measured: ok}, CPUs: r.nrCPUs}
	for j := range data.Idle {
		data.Idle[j] = to.idle[j] - from.idle[j]
	}
	for i := range to.tasks {
		t := to.tasks[i]
		if i < len(from.tasks) {
			t.sub(&from.tasks[i])
		}
		a := &r.tasks[i]
		lo, hi := max(w.From, a.created), w.To
		if a.dead {
			hi = min(hi, a.exited)
		}
		if hi > lo {
			t.Elapsed = hi - lo
		}
		if t.Elapsed == 0 && t.Run == 0 && t.Sleep == 0 && t.WaitSum() == 0 {
			continue
		}
		data.Tasks = append(data.Tasks, t)
	}
	r.data = data
	return nil
}

// snapAt is the snapshot taken at t, or nil.
func (r *Recorder) snapAt(t engine.Time) *snapshot {
	for i := range r.snaps {
		if r.snaps[i].t == t {
			return &r.snaps[i]
		}
	}
	return nil
}

// Data is what the recorder kept of its run, once the run is done.
func (r *Recorder) Data() *RunData { return r.data }

// Window is the stretch of a run that explain attributes over.
type Window struct {
	From, To engine.Time
	Work     float64
	Unit     string
	// Measured is set when the window is the workload's own
	// (workload.Windowed); otherwise it is the whole run, one unit.
	Measured bool
}

// T is the window's length.
func (w Window) T() engine.Time { return w.To - w.From }

// RunData is one run as explain uses it.
type RunData struct {
	Counts *Counts
	Window Window
	// Tasks are the workload's tasks' times in the window, by PID.
	Tasks []TaskTime
	// CPUs is the number of CPUs the workload may run on (--cpus), and
	// Idle their idle time in the window: with a workload task waiting
	// for the idle CPU (woken to it or queued on it), with tasks waiting
	// only for other CPUs, with none waiting (IdleWaited ...).
	CPUs int
	Idle [nrIdle]engine.Time
}
