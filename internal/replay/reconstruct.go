// Package replay turns a scheduler trace recorded on a real kernel (or by
// schedlab) into task programs and runs them on a modelled machine, kernel
// and variant: `schedlab run replay FILE`, `schedlab compare ... replay
// FILE` and `schedlab replay FILE` (docs/replay.md).
//
// # Reconstruction
//
// Read reads a trace.dat (versions 6 and 7), ftrace text, `trace-cmd
// report` text or `perf sched script` text into trace events, and
// Reconstruct turns them into one program per task: its CPU bursts (the
// time it ran between two points where it blocked, woke another task,
// forked or exited; preemption does not end a burst), its sleeps and what
// ended each one, its forks and its exit. A sleep ends by
//
//   - a waker task: sched_waking (or sched_wakeup when the trace has no
//     sched_waking) fired in task context on a CPU where that task was
//     current. The replayed wakee blocks on a wait queue until the replayed
//     waker reaches the same point of its own program and wakes it.
//   - a timer: the wakeup fired from an interrupt (hardirq or softirq
//     context) or on an idle CPU. The trace cannot tell a timer from a
//     device interrupt; both become a timed sleep of the recorded length.
//   - unknown: the task ran again with no wakeup in the trace (an event
//     lost, or a trace without wakeup events). Also a timed sleep.
//
// Tasks alive when the trace starts are created at time 0 of the replay;
// one first seen running starts running, one first seen being woken starts
// asleep, one first seen switched in starts with an unknown sleep until
// then. Tasks forked during the trace are forked by their replayed parent.
//
// # What a trace does not hold
//
// No affinity (a task whose comm names a CPU, "ksoftirqd/2" or
// "kworker/1:0", and that ran only there is pinned to it), no cgroups, no
// sync-wakeup hint (every replayed wakeup is a plain futex-like one), no
// real-time policy (an RT task replays as a nice-0 fair task). A burst is
// the wall time the task ran, scaled by the recording CPU's capacity when
// the recording machine is named (work = time × capacity / 1024) and by its
// frequency where the trace has power:cpu_frequency records.
package replay

import (
	"fmt"
	"math/bits"
	"sort"
	"strconv"
	"strings"

	"github.com/schedlab/schedlab/internal/trace"
)

// Kind is the kind of one step of a task's program.
type Kind uint8

// The steps of a reconstructed program.
const (
	// Run computes for D ns of work at capacity 1024.
	Run Kind = iota + 1
	// Wake wakes task Pid out of its sleep number Seq.
	Wake
	// Fork creates task Pid.
	Fork
	// Sleep is the task's sleep number Seq, D ns long when recorded;
	// Cause says what ended it (and Pid is the waker).
	Sleep
	// Exit ends the task.
	Exit
)

// Cause is what ended a sleep.
type Cause uint8

// The causes of a sleep's end.
const (
	ByTask Cause = iota + 1
	ByTimer
	ByUnknown
)

func (c Cause) String() string {
	switch c {
	case ByTask:
		return "task"
	case ByTimer:
		return "timer"
	case ByUnknown:
		return "unknown"
	}
	return "cause(" + strconv.Itoa(int(c)) + ")"
}

// Step is one step of a task's program.
type Step struct {
	Kind  Kind
	Cause Cause
	Pid   int32
	Seq   int32
	D     uint64
	// Unwoken marks a sleep (cause ByUnknown) that the recording shows
	// no wakeup for: the task was switched out blocked and switched in
	// again with no wakeup between. perf sched latency counts no wait
	// there, so the replay's summary leaves out the timer wakeup that
	// ends the replayed sleep.
	Unwoken bool
}

// Task is one recorded task and its program.
type Task struct {
	Pid  int32
	Comm string
	// Prio is the kernel prio last recorded (120: nice 0).
	Prio int32
	// Parent is the forking task's pid; 0 for a task alive at the start.
	Parent int32
	// PinnedCPU is the CPU a per-CPU kernel thread is pinned to, or -1.
	PinnedCPU int32
	// FirstCPU is the CPU the task was first seen on.
	FirstCPU int32
	// Begins says a task alive at the start (Parent 0) begins in the
	// recording as a new task: forked by the idle task or by a pid that
	// had exited (with its sched_wakeup_new), or switched in at the
	// trace's first timestamp. perf sched latency counts that first
	// switch-in as a wait, as the replay's summary then counts the
	// replay's creation of the task; for the other tasks alive at the
	// start (first seen running, woken, or switched in later) the
	// creation is the replay's setup and counts nothing
	// (trace.LatencyOptions.SetUp).
	Begins bool
	// RanNs is the recorded time the task ran, from the trace's start for
	// a task running then to its end for one running then: its bursts
	// before the recording machine's capacity and frequency scaled them.
	RanNs uint64
	Steps []Step

	// reconstruction state
	state    int
	runStart uint64
	burst    uint64
	sleepAt  uint64
	sleeps   int32
	cpu      int32 // where it runs, while running
	cpus     map[int32]bool
	exited   bool
}

const (
	stUnseen = iota
	stRunning
	stRunnable
	stSleeping
	stDead
)

// Nice is the task's nice value from its prio; RT and deadline prios
// (below 100) give 0.
func (t *Task) Nice() int {
	if t.Prio >= 100 && t.Prio <= 139 {
		return int(t.Prio) - 120
	}
	return 0
}

// Trace is a reconstructed trace.
type Trace struct {
	// Start and End are the first and last event's timestamps.
	Start, End uint64
	// NrCPUs is the number of CPUs the trace shows (highest CPU + 1).
	NrCPUs int
	// Tasks in order of first appearance.
	Tasks []*Task
	// Events are the trace's sched events, for the summary.
	Events []trace.Event
	Stats  Stats
	// Warnings are the reader's (Input.Warnings), set by Load.
	Warnings []string
}

// Stats count what Reconstruct found.
type Stats struct {
	Tasks, Forked, Bursts       int
	Sleeps                      [ByUnknown + 1]int
	StrayWakeups, RTTasks, Pins int
	// RunNs is the recorded CPU time of every burst.
	RunNs uint64
}

// Summary is one line describing the reconstruction.
func (s *Stats) Summary() string {
	out := fmt.Sprintf("%d tasks (%d forked), %d bursts (%.3f ms), %d sleeps ended by a task, %d by a timer or interrupt, %d unknown; %d wakeups of tasks not asleep ignored",
		s.Tasks, s.Forked, s.Bursts, float64(s.RunNs)/1e6, s.Sleeps[ByTask], s.Sleeps[ByTimer], s.Sleeps[ByUnknown], s.StrayWakeups)
	if s.Pins > 0 {
		out += fmt.Sprintf("; %d per-CPU threads pinned", s.Pins)
	}
	if s.RTTasks > 0 {
		out += fmt.Sprintf("; %d real-time tasks replayed as nice-0 fair tasks", s.RTTasks)
	}
	return out
}

// Options are what Reconstruct knows of the recording machine.
type Options struct {
	// NrCPUs is the recording machine's CPU count (0: as many as the
	// events show).
	NrCPUs int
	// Capacity, if set, is each recording CPU's capacity (1024 for the
	// biggest); a burst's work is its time × capacity / 1024.
	Capacity func(cpu int32) int
	// Freqs are the recording CPUs' frequency changes in time order
	// (power:cpu_frequency); a burst's work is further scaled by the
	// frequency it ran at over the highest the trace shows for its CPU.
	Freqs []trace.Frequency
}

// Reconstruct builds the task programs of evs (in time order).
func Reconstruct(evs []trace.Event, o Options) (*Trace, error) {
	tr := &Trace{Events: evs, NrCPUs: o.NrCPUs}
	if len(evs) == 0 {
		return nil, fmt.Errorf("the trace has no sched events")
	}
	tr.Start, tr.End = evs[0].TS, evs[len(evs)-1].TS
	byPid := map[int32]*Task{}
	waking := false
	for i := range evs {
		if evs[i].Type == trace.SchedWaking {
			waking = true
			break
		}
	}
	get := func(pid int32, comm trace.Comm, cpu int32) *Task {
		t, ok := byPid[pid]
		if !ok {
			t = &Task{Pid: pid, Comm: comm.String(), Prio: 120, PinnedCPU: -1, FirstCPU: cpu, cpu: cpu, cpus: map[int32]bool{}}
			byPid[pid] = t
			tr.Tasks = append(tr.Tasks, t)
		}
		if c := comm.String(); c != "" && c != "<...>" {
			t.Comm = c
		}
		return t
	}
	freq := newFreqTable(o.Freqs)
	// scale turns the time a task ran on cpu, from..to, into work at
	// capacity 1024 and full frequency.
	scale := func(cpu int32, from, to uint64) uint64 {
		if to <= from {
			return 0
		}
		d := freq.work(cpu, from, to)
		if o.Capacity != nil {
			d = d * uint64(o.Capacity(cpu)) / 1024
		}
		return d
	}
	// flush ends t's burst at ts (t running on cpu) before a step.
	flush := func(t *Task, ts uint64, cpu int32) {
		if t.state == stUnseen {
			// Running since before the trace began.
			t.state, t.runStart = stRunning, tr.Start
		}
		if t.state == stRunning && ts > t.runStart {
			t.burst += scale(cpu, t.runStart, ts)
			t.RanNs += ts - t.runStart
			t.runStart = ts
		}
		if t.burst > 0 {
			t.Steps = append(t.Steps, Step{Kind: Run, D: t.burst})
			tr.Stats.Bursts++
			tr.Stats.RunNs += t.burst
			t.burst = 0
		}
	}
	// endSleep closes t's sleep at ts.
	endSleep := func(t *Task, ts uint64, cause Cause, waker int32) int32 {
		if t.state == stUnseen {
			t.state, t.sleepAt = stSleeping, tr.Start
		}
		seq := t.sleeps
		t.sleeps++
		t.Steps = append(t.Steps, Step{Kind: Sleep, Cause: cause, Pid: waker, Seq: seq, D: ts - t.sleepAt})
		tr.Stats.Sleeps[cause]++
		t.state = stRunnable
		return seq
	}
	for i := range evs {
		ev := &evs[i]
		if int(ev.CPU)+1 > tr.NrCPUs {
			tr.NrCPUs = int(ev.CPU) + 1
		}
		switch ev.Type {
		case trace.SchedSwitch:
			if p := ev.Task.Pid; p != 0 {
				t := get(p, ev.Task.Comm, ev.CPU)
				t.Prio = ev.Task.Prio
				t.cpus[ev.CPU] = true
				if t.state == stUnseen {
					t.state, t.runStart = stRunning, tr.Start
				}
				if t.state == stRunning && ev.TS > t.runStart {
					t.burst += scale(ev.CPU, t.runStart, ev.TS)
					t.RanNs += ev.TS - t.runStart
					t.runStart = ev.TS
				}
				switch {
				case t.exited || ev.PrevState&(trace.ExitDead|trace.ExitZombie) != 0:
					flush(t, ev.TS, ev.CPU)
					t.state = stDead
				case ev.PrevState&0xff == 0:
					t.state = stRunnable // preempted, or woken before it slept
				default:
					flush(t, ev.TS, ev.CPU)
					t.state, t.sleepAt = stSleeping, ev.TS
				}
			}
			if n := ev.Next.Pid; n != 0 {
				t := get(n, ev.Next.Comm, ev.CPU)
				t.Prio = ev.Next.Prio
				t.cpus[ev.CPU] = true
				switch t.state {
				case stUnseen:
					// Runnable since before the trace: an unknown
					// wait from the start, if it began before now.
					if ev.TS > tr.Start {
						t.state, t.sleepAt = stSleeping, tr.Start
						endSleep(t, ev.TS, ByUnknown, 0)
					} else {
						t.Begins = true
					}
				case stSleeping:
					// Switched out blocked, switched in again
					// with no wakeup in the trace.
					endSleep(t, ev.TS, ByUnknown, 0)
					t.Steps[len(t.Steps)-1].Unwoken = true
				}
				t.state, t.runStart, t.cpu = stRunning, ev.TS, ev.CPU
			}
		case trace.SchedWaking, trace.SchedWakeup:
			if ev.Type == trace.SchedWakeup && waking || ev.Task.Pid == 0 {
				continue // perf's rule: sched_waking when the trace has it
			}
			t := get(ev.Task.Pid, ev.Task.Comm, ev.TargetCPU)
			t.Prio = ev.Task.Prio
			if t.state != stSleeping && t.state != stUnseen {
				tr.Stats.StrayWakeups++
				continue
			}
			w := ev.Cur.Pid
			irq := ev.Flags&(trace.FlagHardirq|trace.FlagSoftirq|trace.FlagNMI) != 0
			if w == 0 || w == t.Pid || irq {
				endSleep(t, ev.TS, ByTimer, 0)
				continue
			}
			if wk, ok := byPid[w]; ok && wk.exited {
				// A pid that exited (reused, or a broken trace):
				// its replayed program has ended, so it cannot wake.
				endSleep(t, ev.TS, ByUnknown, 0)
				continue
			}
			waker := get(w, ev.Cur.Comm, ev.CPU)
			if waker.state != stRunning && waker.state != stUnseen {
				// The trace says w is current here but it was not
				// seen switched in: treat it as running since now.
				waker.state, waker.runStart = stRunning, ev.TS
			}
			flush(waker, ev.TS, ev.CPU)
			seq := endSleep(t, ev.TS, ByTask, w)
			waker.Steps = append(waker.Steps, Step{Kind: Wake, Pid: t.Pid, Seq: seq})
		case trace.SchedProcessFork:
			if _, dup := byPid[ev.Next.Pid]; dup || ev.Next.Pid == 0 {
				continue // a pid seen before its fork: keep it a start task
			}
			if p, ok := byPid[ev.Task.Pid]; ev.Task.Pid == 0 || ok && p.exited {
				// Forked by the idle task (a kernel thread, or
				// schedlab's first task), or by a pid that has
				// exited: a task of the start.
				c := get(ev.Next.Pid, ev.Next.Comm, ev.CPU)
				c.state, c.Begins = stRunnable, true
				continue
			}
			parent := get(ev.Task.Pid, ev.Task.Comm, ev.CPU)
			flush(parent, ev.TS, ev.CPU)
			child := get(ev.Next.Pid, ev.Next.Comm, ev.CPU)
			child.Parent = parent.Pid
			child.state = stRunnable
			parent.Steps = append(parent.Steps, Step{Kind: Fork, Pid: child.Pid})
			tr.Stats.Forked++
		case trace.SchedProcessExit:
			if ev.Task.Pid == 0 {
				continue
			}
			t := get(ev.Task.Pid, ev.Task.Comm, ev.CPU)
			if t.exited {
				continue
			}
			flush(t, ev.TS, ev.CPU)
			t.Steps = append(t.Steps, Step{Kind: Exit})
			t.exited = true
		case trace.SchedMigrateTask:
			if t, ok := byPid[ev.Task.Pid]; ok {
				t.cpus[ev.DestCPU] = true
			}
		}
	}
	for _, t := range tr.Tasks {
		if t.state == stRunning {
			t.burst += scale(t.cpu, t.runStart, tr.End)
			t.RanNs += tr.End - t.runStart
			t.runStart = tr.End
		}
		if t.state != stDead || t.burst > 0 {
			flush(t, tr.End, t.cpu)
		}
		if !t.exited {
			t.Steps = append(t.Steps, Step{Kind: Exit})
			t.exited = true
		}
		if t.Prio < 100 {
			tr.Stats.RTTasks++
		}
		if cpu, ok := perCPUThread(t.Comm); ok && len(t.cpus) == 1 && t.cpus[cpu] {
			t.PinnedCPU = cpu
			tr.Stats.Pins++
		}
		t.cpus = nil
	}
	tr.Stats.Tasks = len(tr.Tasks)
	return tr, nil
}

// perCPUThread recognises the comm of a per-CPU kernel thread: NAME/N or
// kworker/N:M (kworker/uN:M is unbound).
func perCPUThread(comm string) (int32, bool) {
	_, rest, ok := strings.Cut(comm, "/")
	if !ok {
		return 0, false
	}
	if i := strings.IndexByte(rest, ':'); i >= 0 {
		rest = rest[:i]
	}
	n, err := strconv.ParseUint(rest, 10, 16)
	if err != nil {
		return 0, false
	}
	return int32(n), true
}

// Graph is the wakeup graph: how many times each task woke each other
// task, keyed "waker>wakee" by pid.
type Graph map[[2]int32]int

// WakeGraph is the graph of the sleeps ended by tasks.
func (tr *Trace) WakeGraph() Graph {
	g := Graph{}
	for _, t := range tr.Tasks {
		for _, s := range t.Steps {
			if s.Kind == Wake {
				g[[2]int32{t.Pid, s.Pid}]++
			}
		}
	}
	return g
}

// Edges lists the graph's edges in order, "waker->wakee xN".
func (g Graph) Edges() []string {
	var out []string
	for k, n := range g {
		out = append(out, fmt.Sprintf("%d->%d x%d", k[0], k[1], n))
	}
	sort.Strings(out)
	return out
}

// freqTable answers what work a CPU did in a time span at its recorded
// frequencies, relative to the highest frequency the trace shows for it.
// A CPU with no frequency record, and the time before a CPU's first
// record, count at full frequency.
type freqTable struct {
	byCPU map[int32][]trace.Frequency
	max   map[int32]uint32
}

func newFreqTable(fs []trace.Frequency) *freqTable {
	t := &freqTable{byCPU: map[int32][]trace.Frequency{}, max: map[int32]uint32{}}
	for _, f := range fs {
		t.byCPU[f.CPU] = append(t.byCPU[f.CPU], f)
		t.max[f.CPU] = max(t.max[f.CPU], f.KHz)
	}
	return t
}

func (t *freqTable) work(cpu int32, from, to uint64) uint64 {
	fs := t.byCPU[cpu]
	top := uint64(t.max[cpu])
	if len(fs) == 0 || top == 0 {
		return to - from
	}
	// The first change after from.
	i := sort.Search(len(fs), func(i int) bool { return fs[i].TS > from })
	khz := top
	if i > 0 {
		khz = uint64(fs[i-1].KHz)
	}
	var w uint64
	at := from
	for ; i < len(fs) && fs[i].TS < to; i++ {
		w += mulDiv(fs[i].TS-at, khz, top)
		at, khz = fs[i].TS, uint64(fs[i].KHz)
	}
	return w + mulDiv(to-at, khz, top)
}

// mulDiv is d × num / den without overflow, for num <= den.
func mulDiv(d, num, den uint64) uint64 {
	hi, lo := bits.Mul64(d, num)
	q, _ := bits.Div64(hi, lo, den)
	return q
}
