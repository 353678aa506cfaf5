// Package observe connects the kernel model to the observers: it turns the
// kernel's tracepoint hooks into trace events for a trace.Writer, and reads
// the kernel's schedstat counters into /proc/schedstat snapshots.
package observe

import (
	"github.com/schedlab/schedlab/internal/cpumask"
	"github.com/schedlab/schedlab/internal/kernels"
	"github.com/schedlab/schedlab/internal/sched"
	"github.com/schedlab/schedlab/internal/schedstat"
	"github.com/schedlab/schedlab/internal/trace"
)

// Tracer feeds a kernel's tracepoints to a trace writer.
type Tracer struct {
	k     *sched.Kernel
	w     trace.Writer
	comms map[sched.PID]trace.Comm
	// live counts the live tasks of each address space (thread group).
	live map[int64]int
	idle []trace.Task
	err  error
	n    uint64
}

// Events is the number of events written.
func (t *Tracer) Events() uint64 { return t.n }

// Err is the first error the writer returned.
func (t *Tracer) Err() error { return t.err }

// AttachTracer installs tracepoint hooks on k that write to w, keeping any
// hooks already installed (they run first).
func AttachTracer(k *sched.Kernel, w trace.Writer) *Tracer {
	t := &Tracer{k: k, w: w, comms: map[sched.PID]trace.Comm{}, live: map[int64]int{}}
	for _, p := range k.Tasks {
		if p.State != sched.TaskDead {
			t.live[p.MM]++
		}
	}
	for cpu := 0; cpu < k.NrCPUs(); cpu++ {
		rq := k.Rqs[cpu]
		t.idle = append(t.idle, trace.Task{Comm: trace.MakeComm(rq.Idle.Comm), Pid: 0, Prio: sched.DefaultPrio})
	}
	h := &k.Hooks
	prevSwitch, prevWaking, prevWakeup, prevNew := h.Switch, h.Waking, h.Wakeup, h.WakeupNew
	prevMigrate, prevFork, prevExit := h.Migrate, h.Fork, h.Exit
	h.Switch = func(cpu cpumask.CPU, prev *sched.Task, st sched.TaskState, next *sched.Task) {
		if prevSwitch != nil {
			prevSwitch(cpu, prev, st, next)
		}
		t.write(trace.Switch(t.ts(), int32(cpu), t.task(prev, cpu), prevState(prev, st), t.task(next, cpu)))
	}
	h.Waking = func(p *sched.Task) {
		if prevWaking != nil {
			prevWaking(p)
		}
		cpu := k.ThisCPU()
		t.write(inIRQ(k, trace.Waking(t.ts(), int32(cpu), t.task(k.Current(), cpu), t.task(p, cpu), int32(p.CPU()))))
	}
	h.Wakeup = func(p *sched.Task, target cpumask.CPU) {
		if prevWakeup != nil {
			prevWakeup(p, target)
		}
		cpu := k.ThisCPU()
		t.write(inIRQ(k, trace.Wakeup(t.ts(), int32(cpu), t.task(k.Current(), cpu), t.task(p, cpu), int32(target))))
	}
	h.WakeupNew = func(p *sched.Task, target cpumask.CPU) {
		if prevNew != nil {
			prevNew(p, target)
		}
		cpu := k.ThisCPU()
		t.write(trace.WakeupNew(t.ts(), int32(cpu), t.task(k.Current(), cpu), t.task(p, cpu), int32(target)))
	}
	h.Migrate = func(p *sched.Task, from, to cpumask.CPU) {
		if prevMigrate != nil {
			prevMigrate(p, from, to)
		}
		cpu := k.ThisCPU()
		t.write(trace.MigrateTask(t.ts(), int32(cpu), t.task(k.Current(), cpu), t.task(p, cpu), int32(from), int32(to)))
	}
	h.Fork = func(parent, child *sched.Task) {
		if prevFork != nil {
			prevFork(parent, child)
		}
		t.live[child.MM]++
		cpu := k.ThisCPU()
		t.write(trace.ProcessFork(t.ts(), int32(cpu), t.task(parent, cpu), t.task(child, cpu)))
	}
	h.Exit = func(p *sched.Task) {
		if prevExit != nil {
			prevExit(p)
		}
		// group_dead: the last live thread of the thread group exits
		// (do_exit's atomic_dec_and_test(&tsk->signal->live)); the
		// threads of a process are the tasks that share its MM.
		t.live[p.MM]--
		dead := t.live[p.MM] <= 0
		if dead {
			delete(t.live, p.MM)
		}
		cpu := k.ThisCPU()
		t.write(trace.ProcessExit(t.ts(), int32(cpu), t.task(p, cpu), dead))
	}
	return t
}

// inIRQ marks a wakeup by a sleep timer as the kernel records it: fired
// from the hrtimer interrupt, so common_flags has the hardirq bit ("d.h2.")
// and the current task is only the one the interrupt found running.
func inIRQ(k *sched.Kernel, ev trace.Event) trace.Event {
	if k.InTimerIRQ() {
		ev.Flags |= trace.FlagHardirq
	}
	return ev
}

// Close closes the writer and returns the first error seen.
func (t *Tracer) Close() error {
	if err := t.w.Close(); err != nil && t.err == nil {
		t.err = err
	}
	return t.err
}

func (t *Tracer) ts() uint64 { return uint64(t.k.Now()) + sched.ClockBase }

func (t *Tracer) write(ev trace.Event) {
	if t.err != nil {
		return
	}
	if err := t.w.Write(ev); err != nil {
		t.err = err
		return
	}
	t.n++
}

// task converts a simulated task; the idle task is swapper/CPU with pid 0.
func (t *Tracer) task(p *sched.Task, cpu cpumask.CPU) trace.Task {
	if p == nil {
		return trace.Task{}
	}
	if p.IsIdleTask() {
		return t.idle[p.CPU()]
	}
	c, ok := t.comms[p.PID]
	if !ok {
		c = trace.MakeComm(p.Comm)
		t.comms[p.PID] = c
	}
	return trace.Task{Comm: c, Pid: int32(p.PID), Prio: taskPrio(p)}
}

// taskPrio is the prio the sched tracepoints record: p->prio, which for a
// fair task is its normal_prio, static_prio = MAX_RT_PRIO + 20 + nice (120
// at nice 0), whatever its policy (core.c:__normal_prio, v6.19).
func taskPrio(p *sched.Task) int32 { return int32(p.StaticPrio) }

// prevState maps the task state at a switch to sched_switch's prev_state:
// a task switched out while runnable was preempted (R+ in v6.19 output).
func prevState(p *sched.Task, st sched.TaskState) trace.TaskState {
	switch st {
	case sched.TaskRunning:
		if p.IsIdleTask() {
			return trace.TaskRunning
		}
		return trace.Preempted
	case sched.TaskInterruptible:
		return trace.TaskInterruptible
	case sched.TaskUninterruptible:
		return trace.TaskUninterruptible
	case sched.TaskDead:
		return trace.ExitDead
	}
	return trace.TaskRunning
}

// Snapshot reads the kernel's counters as /proc/schedstat would show them.
func Snapshot(k *sched.Kernel) *schedstat.Snapshot {
	s := &schedstat.Snapshot{Timestamp: k.Jiffies()}
	for cpu := 0; cpu < k.NrCPUs(); cpu++ {
		rq := k.Rqs[cpu]
		st := &rq.Schedstat
		c := schedstat.CPUStats{
			CPU: cpumask.CPU(cpu), YldCount: st.YldCount, SchedCount: st.SchedCount,
			SchedGoidle: st.SchedGoidle, TtwuCount: st.TTWUCount, TtwuLocal: st.TTWULocal,
			RqCPUTime: st.RqCPUTime, RunDelay: st.RunDelay, Pcount: st.Pcount,
		}
		for i, sd := range k.Domains(cpu) {
			ds := &sd.Stats
			d := schedstat.DomainStats{Level: i, Name: sd.T.Name, Span: sd.T.Span}
			for it := 0; it < sched.CPUMaxIdleTypes; it++ {
				d.LB[it] = schedstat.LBStats{
					LbCount: ds.LbCount[it], LbBalanced: ds.LbBalanced[it], LbFailed: ds.LbFailed[it],
					LbImbalanceLoad: ds.LbImbalanceLoad[it], LbImbalanceUtil: ds.LbImbalanceUtil[it],
					LbImbalanceTask: ds.LbImbalanceTask[it], LbImbalanceMisfit: ds.LbImbalanceMisfit[it],
					LbGained: ds.LbGained[it], LbHotGained: ds.LbHotGained[it],
					LbNobusyq: ds.LbNoBusyq[it], LbNobusyg: ds.LbNoBusyg[it],
				}
			}
			d.AlbCount, d.AlbFailed, d.AlbPushed = ds.AlbCount, ds.AlbFailed, ds.AlbPushed
			d.SbeCount, d.SbeBalanced, d.SbePushed = ds.SbeCount, ds.SbeBalanced, ds.SbePushed
			d.SbfCount, d.SbfBalanced, d.SbfPushed = ds.SbfCount, ds.SbfBalanced, ds.SbfPushed
			d.TtwuWakeRemote, d.TtwuMoveAffine, d.TtwuMoveBalance = ds.TTWUWakeRemote, ds.TTWUMoveAffine, ds.TTWUMoveBalance
			c.Domains = append(c.Domains, d)
		}
		s.CPUs = append(s.CPUs, c)
	}
	return s
}

// SchedstatVersion is the /proc/schedstat version of a kernel baseline.
func SchedstatVersion(kernel string) int { return kernels.Must(kernel).SchedstatVersion }
