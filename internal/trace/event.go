// Package trace writes what the kernel's scheduler tracepoints would have
// recorded during a schedlab run, in the formats people already read: the
// ftrace text of /sys/kernel/tracing/trace, a trace.dat file for
// `trace-cmd report` and KernelShark, and Chrome/Perfetto JSON. It also reads
// the ftrace text back, reads trace.dat files as trace-cmd records them on a
// real kernel (versions 6 and 7, zstd-compressed or not), and summarises an
// event list the way `perf sched latency` and `perf sched timehist` do.
//
// # The model
//
// An Event is one firing of one of seven tracepoints of
// include/trace/events/sched.h (v6.19): sched_switch, sched_waking,
// sched_wakeup, sched_wakeup_new, sched_migrate_task, sched_process_fork and
// sched_process_exit. It carries the fields the kernel records, named as the
// kernel names them, plus the common fields every ftrace record has: the
// timestamp (ns), the CPU it fired on, the pid and comm of the task current on
// that CPU (common_pid, and the comm ftrace's saved cmdlines would print), the
// latency flags (common_flags) and the preempt count
// (common_preempt_count).
//
// Events are plain values with no pointers: the simulator may emit tens of
// millions of them, so writing one must not allocate. Comms are fixed
// 16-byte arrays (TASK_COMM_LEN), as in the kernel's records.
//
// # Writers
//
// Every writer implements Writer: the simulator calls Write once per event, in
// time order, then Close. Output depends only on the events and the options,
// so identical runs give byte-identical files. A Filter (event names and a
// time window) in the options applies to all writers alike.
//
// The ftrace text and trace.dat writers need numbers only known at the end
// (the entry count in the text header; per-CPU data sizes and the cmdline
// table in trace.dat), so they spool to temporary files and assemble the
// output in Close.
//
// # What is not modelled
//
// Only the seven events above. No tgid (record-tgid), so perf's
// comm[tid/pid] form never appears. Timestamps are the simulator's virtual
// nanoseconds since boot, as with the kernel's default "local" trace clock.
package trace

import (
	"fmt"
	"strconv"
)

// EventType names one tracepoint.
type EventType uint8

// The tracepoints schedlab emits (include/trace/events/sched.h).
const (
	SchedSwitch EventType = iota + 1
	SchedWaking
	SchedWakeup
	SchedWakeupNew
	SchedMigrateTask
	SchedProcessFork
	SchedProcessExit

	numEventTypes = int(SchedProcessExit) + 1
)

var eventNames = [numEventTypes]string{
	SchedSwitch:      "sched_switch",
	SchedWaking:      "sched_waking",
	SchedWakeup:      "sched_wakeup",
	SchedWakeupNew:   "sched_wakeup_new",
	SchedMigrateTask: "sched_migrate_task",
	SchedProcessFork: "sched_process_fork",
	SchedProcessExit: "sched_process_exit",
}

// String is the tracepoint's name ("sched_switch").
func (t EventType) String() string {
	if int(t) < numEventTypes && t != 0 {
		return eventNames[t]
	}
	return "event(" + strconv.Itoa(int(t)) + ")"
}

// Valid reports whether t is one of the tracepoints above.
func (t EventType) Valid() bool { return t >= SchedSwitch && int(t) < numEventTypes }

// EventTypes lists every tracepoint in ID order.
func EventTypes() []EventType {
	return []EventType{SchedSwitch, SchedWaking, SchedWakeup, SchedWakeupNew,
		SchedMigrateTask, SchedProcessFork, SchedProcessExit}
}

// EventTypeByName returns the tracepoint called name ("sched_switch"), with
// or without the "sched:" system prefix.
func EventTypeByName(name string) (EventType, bool) {
	if len(name) > 6 && name[:6] == "sched:" {
		name = name[6:]
	}
	for i := 1; i < numEventTypes; i++ {
		if eventNames[i] == name {
			return EventType(i), true
		}
	}
	return 0, false
}

// TaskCommLen is the kernel's TASK_COMM_LEN: a comm holds 15 bytes and a NUL.
const TaskCommLen = 16

// Comm is a task's command name as the kernel stores it: at most 15 bytes,
// NUL-padded.
type Comm [TaskCommLen]byte

// MakeComm truncates s to 15 bytes, as the kernel does with set_task_comm.
func MakeComm(s string) Comm {
	var c Comm
	if len(s) > TaskCommLen-1 {
		s = s[:TaskCommLen-1]
	}
	copy(c[:], s)
	return c
}

// Len is the length up to the first NUL.
func (c *Comm) Len() int {
	for i, b := range c {
		if b == 0 {
			return i
		}
	}
	return TaskCommLen
}

// String returns the comm up to the first NUL.
func (c Comm) String() string { return string(c[:c.Len()]) }

// Task is the (comm, pid, prio) triple the sched tracepoints record about a
// task. Prio is the kernel's p->prio: 100..139 for fair tasks (120 = nice
// 0), 0..98 for real-time ones, -1 for deadline.
type Task struct {
	Comm Comm
	Pid  int32
	Prio int32
}

// TaskState is a sched_switch prev_state value as the tracepoint stores it
// (__trace_sched_switch_state, v6.19): 0 for a runnable task, one reportable
// state bit for a blocked one, and TaskReportMax for a preempted one.
type TaskState int64

// The state bits sched_switch prints, with the letters of its __print_flags.
const (
	TaskRunning         TaskState = 0x00  // R
	TaskInterruptible   TaskState = 0x01  // S
	TaskUninterruptible TaskState = 0x02  // D
	TaskStopped         TaskState = 0x04  // T (__TASK_STOPPED)
	TaskTraced          TaskState = 0x08  // t (__TASK_TRACED)
	ExitDead            TaskState = 0x10  // X
	ExitZombie          TaskState = 0x20  // Z
	TaskParked          TaskState = 0x40  // P
	TaskReportIdle      TaskState = 0x80  // I (TASK_IDLE, reported as TASK_REPORT_IDLE)
	TaskReportMax       TaskState = 0x100 // "+": the task was preempted while runnable
	taskStatePrintMask  TaskState = 0xff  // TASK_REPORT_MAX - 1
	taskStateLetters              = "SDTtXZPI"
)

// Preempted is the prev_state of a task switched out while runnable ("R+").
const Preempted = TaskReportMax

// AppendText appends the state as sched_switch's TP_printk prints it: the
// letters of the set bits joined by "|" (or "R"), then "+" if preempted.
func (s TaskState) AppendText(b []byte) []byte {
	low := s & taskStatePrintMask
	if low == 0 {
		b = append(b, 'R')
	} else {
		first := true
		for i := 0; i < 8; i++ {
			if low&(1<<i) != 0 {
				if !first {
					b = append(b, '|')
				}
				first = false
				b = append(b, taskStateLetters[i])
			}
		}
	}
	if s&TaskReportMax != 0 {
		b = append(b, '+')
	}
	return b
}

// String prints the state as the kernel does ("S", "D", "R+", "S|D").
func (s TaskState) String() string { return string(s.AppendText(nil)) }

// Char is the single letter perf sched uses for the state (evsel__taskstate):
// 'R' when no state bit is set, else the letter of the lowest set bit.
func (s TaskState) Char() byte {
	low := s & taskStatePrintMask
	for i := 0; i < 8; i++ {
		if low&(1<<i) != 0 {
			return taskStateLetters[i]
		}
	}
	return 'R'
}

// ParseTaskState reads the text AppendText writes.
func ParseTaskState(s string) (TaskState, error) {
	var st TaskState
	if n := len(s); n > 0 && s[n-1] == '+' {
		st |= TaskReportMax
		s = s[:n-1]
	}
	if s == "R" {
		return st, nil
	}
	if s == "" {
		return 0, fmt.Errorf("empty task state")
	}
	for len(s) > 0 {
		c := s[0]
		i := 0
		for i < len(taskStateLetters) && taskStateLetters[i] != c {
			i++
		}
		if i == len(taskStateLetters) {
			return 0, fmt.Errorf("bad task state letter %q", c)
		}
		if st&(1<<i) != 0 {
			return 0, fmt.Errorf("task state letter %q repeated", c)
		}
		st |= 1 << i
		s = s[1:]
		if len(s) > 0 {
			if s[0] != '|' || len(s) == 1 {
				return 0, fmt.Errorf("bad task state separator")
			}
			s = s[1:]
		}
	}
	return st, nil
}

// Trace flags as stored in common_flags (include/linux/trace_events.h,
// v6.13 and later, where NEED_RESCHED_LAZY took the old IRQS_NOSUPPORT bit).
const (
	FlagIrqsOff         uint8 = 0x01
	FlagNeedReschedLazy uint8 = 0x02
	FlagNeedResched     uint8 = 0x04
	FlagHardirq         uint8 = 0x08
	FlagSoftirq         uint8 = 0x10
	FlagPreemptResched  uint8 = 0x20
	FlagNMI             uint8 = 0x40
	FlagBHOff           uint8 = 0x80
	preemptDepthMask    uint8 = 0x0f
	migrateDisableShift       = 4
)

// Event is one tracepoint record. Which payload fields are used depends on
// Type; the constructors (Switch, Waking, ...) document the mapping onto the
// kernel's field names.
type Event struct {
	// TS is the record's timestamp in nanoseconds (the trace clock).
	TS uint64
	// CPU is the CPU whose ring buffer holds the record.
	CPU int32
	// Type is the tracepoint.
	Type EventType
	// Flags is common_flags (FlagIrqsOff, ...).
	Flags uint8
	// PreemptCount is common_preempt_count: the preempt depth in the low
	// nibble and the migrate-disable depth in the high nibble.
	PreemptCount uint8
	// GroupDead is sched_process_exit's group_dead.
	GroupDead bool
	// Cur is the task current on CPU when the event fired: Cur.Pid is
	// common_pid and Cur.Comm what ftrace's saved cmdlines print for it.
	// Cur.Prio is not recorded by the kernel and is ignored.
	Cur Task
	// Task is prev_comm/prev_pid/prev_prio of sched_switch; comm/pid/prio of
	// the wakeup events, sched_migrate_task and sched_process_exit; and
	// parent_comm/parent_pid of sched_process_fork (Prio unused).
	Task Task
	// Next is next_comm/next_pid/next_prio of sched_switch and
	// child_comm/child_pid of sched_process_fork (Prio unused).
	Next Task
	// PrevState is sched_switch's prev_state.
	PrevState TaskState
	// TargetCPU is target_cpu of the wakeup events and orig_cpu of
	// sched_migrate_task.
	TargetCPU int32
	// DestCPU is sched_migrate_task's dest_cpu.
	DestCPU int32
}

// Switch builds a sched_switch record on cpu: prev (current until now) goes
// out in prevState and next comes in. Common fields follow the kernel: the
// current task is prev, irqs are off and the preempt depth is 2 ("d..2.").
func Switch(ts uint64, cpu int32, prev Task, prevState TaskState, next Task) Event {
	return Event{TS: ts, CPU: cpu, Type: SchedSwitch, Flags: FlagIrqsOff,
		PreemptCount: 2, Cur: current(prev), Task: prev, Next: next,
		PrevState: prevState}
}

// wakeupLike builds the three wakeup events, which share a layout.
func wakeupLike(t EventType, ts uint64, cpu int32, cur, p Task, targetCPU int32) Event {
	return Event{TS: ts, CPU: cpu, Type: t, Flags: FlagIrqsOff,
		PreemptCount: 2, Cur: current(cur), Task: p, TargetCPU: targetCPU}
}

// current is t as common_pid and the cmdline table know it: no prio.
func current(t Task) Task { return Task{Comm: t.Comm, Pid: t.Pid} }

// Waking builds sched_waking, fired in try_to_wake_up on the waker's cpu while
// cur runs there; targetCPU is task_cpu(p), the CPU p last ran on.
func Waking(ts uint64, cpu int32, cur, p Task, targetCPU int32) Event {
	return wakeupLike(SchedWaking, ts, cpu, cur, p, targetCPU)
}

// Wakeup builds sched_wakeup, fired when p is made runnable; targetCPU is the
// CPU chosen for it.
func Wakeup(ts uint64, cpu int32, cur, p Task, targetCPU int32) Event {
	return wakeupLike(SchedWakeup, ts, cpu, cur, p, targetCPU)
}

// WakeupNew builds sched_wakeup_new for a freshly forked p.
func WakeupNew(ts uint64, cpu int32, cur, p Task, targetCPU int32) Event {
	return wakeupLike(SchedWakeupNew, ts, cpu, cur, p, targetCPU)
}

// MigrateTask builds sched_migrate_task: p moves from origCPU to destCPU.
func MigrateTask(ts uint64, cpu int32, cur, p Task, origCPU, destCPU int32) Event {
	return Event{TS: ts, CPU: cpu, Type: SchedMigrateTask, Flags: FlagIrqsOff,
		PreemptCount: 2, Cur: current(cur), Task: p, TargetCPU: origCPU, DestCPU: destCPU}
}

// ProcessFork builds sched_process_fork: parent (current on cpu) forked child.
func ProcessFork(ts uint64, cpu int32, parent, child Task) Event {
	return Event{TS: ts, CPU: cpu, Type: SchedProcessFork, Cur: current(parent),
		Task: Task{Comm: parent.Comm, Pid: parent.Pid},
		Next: Task{Comm: child.Comm, Pid: child.Pid}}
}

// ProcessExit builds sched_process_exit for p, current on cpu.
func ProcessExit(ts uint64, cpu int32, p Task, groupDead bool) Event {
	return Event{TS: ts, CPU: cpu, Type: SchedProcessExit, Cur: current(p), Task: p, GroupDead: groupDead}
}

// Writer consumes events in time order.
type Writer interface {
	// Write records one event. Events must come in non-decreasing TS order
	// per CPU; the ftrace text and JSON writers keep the order given.
	Write(ev Event) error
	// Close finishes the output. It does not close the underlying io.Writer.
	Close() error
}
