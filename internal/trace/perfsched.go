package trace

import (
	"bufio"
	"fmt"
	"io"
	"sort"
	"strings"
)

// This file summarises an event list as `perf sched latency` and
// `perf sched timehist` print a perf.data recorded by `perf sched record`
// (tools/perf/builtin-sched.c, mainline as of v6.19).
//
// Differences from perf, all because schedlab has no perf.data:
//   - Runtime comes from sched_switch intervals (switch-in to switch-out)
//     instead of sched_stat_runtime events, which schedlab does not emit.
//   - A thread's comm is the last comm the events gave its pid, not the
//     comm perf learnt from COMM/FORK records.
//   - There are no tgids, so timehist prints comm[tid], never
//     comm[tid/pid].
//   - timehist prints no callchain or symbol column and no summary.

// perfTimestamp is timestamp__scnprintf_usec: seconds and truncated
// microseconds.
func perfTimestamp(ns uint64) string {
	return fmt.Sprintf("%d.%06d", ns/1000000000, ns%1000000000/1000)
}

// hasWaking reports whether the list holds sched_waking: perf then ignores
// sched_wakeup ("prefer sched_waking if it is captured").
func hasWaking(evs []Event) bool {
	for i := range evs {
		if evs[i].Type == SchedWaking {
			return true
		}
	}
	return false
}

// isWakeupEvent says whether perf sched treats ev as the wakeup of ev.Task.
func isWakeupEvent(ev *Event, waking bool) bool {
	switch ev.Type {
	case SchedWaking, SchedWakeupNew:
		return true
	case SchedWakeup:
		return !waking
	}
	return false
}

// LatencyOptions configures Latency.
type LatencyOptions struct {
	// Sort is perf's -s list; empty means perf's default
	// "avg, max, switch, runtime". Keys: runtime, switch, avg, max, pid.
	Sort []string
	// NoMerge keeps one line per pid (perf's -p/--pids) instead of merging
	// threads with the same comm.
	NoMerge bool
	// SetUp names tasks that the events start by setting up rather than
	// waking: `schedlab replay` forks the tasks alive when its trace
	// began at time 0, and their sched_wakeup_new and first switch-in
	// stand for no wait the recording shows. For these pids a
	// sched_wakeup_new before their first switch-in is ignored, and that
	// switch-in is not counted (perf counts the first switch-in of a task
	// it has not seen, with no delay); their atoms start there. Not a
	// perf option.
	SetUp map[int32]bool
	// Uncounted keeps a row for each task that ran but was never switched
	// in after a wait, which perf leaves out: the replay's side of
	// `schedlab replay`, where a task the recording counted may wait for
	// nothing. Not a perf option.
	Uncounted bool
	// OnWait, if set, sees each wait the table counts: the task, the CPU
	// it was switched in on, and when the wait began (wakeup or
	// preemption) and ended (the switch-in). Not a perf option.
	OnWait func(pid, cpu int32, from, to uint64)
}

const (
	threadSleeping = iota
	threadWaitCPU
	threadSchedIn
	threadIgnore
)

type latAtoms struct {
	pid         int32
	comm        string
	started     bool // has an atom
	state       int
	schedOut    uint64
	wakeUp      uint64
	runtime     uint64
	totalLat    uint64
	nbAtoms     uint64
	maxLat      uint64
	maxLatStart uint64
	maxLatEnd   uint64
	numMerged   int
}

func (a *latAtoms) schedOutEvent(state byte, ts uint64) {
	a.started = true
	a.schedOut = ts
	a.state = threadSleeping
	if state == 'R' {
		a.state = threadWaitCPU
		a.wakeUp = ts
	}
}

func (a *latAtoms) schedInEvent(ts uint64) {
	if !a.started || a.state != threadWaitCPU {
		return
	}
	if ts < a.wakeUp {
		a.state = threadIgnore
		return
	}
	a.state = threadSchedIn
	delta := ts - a.wakeUp
	a.totalLat += delta
	if delta > a.maxLat {
		a.maxLat = delta
		a.maxLatStart = a.wakeUp
		a.maxLatEnd = ts
	}
	a.nbAtoms++
}

// LatencyRow is one line of the `perf sched latency` table: a task, or the
// tasks of one comm merged.
type LatencyRow struct {
	Comm string
	// Pid is the task's pid (of the highest pid among merged tasks).
	Pid int32
	// Merged is the number of tasks merged into the row (1: none).
	Merged int
	// Runtime is the time on a CPU, ns.
	Runtime uint64
	// Count is the number of switch-ins after a wait ("Count",
	// formerly "Switches").
	Count uint64
	// TotalDelay and MaxDelay are the sums and the maximum of the waits
	// between wakeup (or preemption) and switch-in, ns; MaxStart and
	// MaxEnd are when the longest wait began and ended.
	TotalDelay, MaxDelay, MaxStart, MaxEnd uint64
}

// AvgDelay is the mean wait, ns, as perf computes it (integer division).
func (r *LatencyRow) AvgDelay() uint64 {
	if r.Count == 0 {
		return 0
	}
	return r.TotalDelay / r.Count
}

// LatencySummary is the table `perf sched latency` prints, with the counts
// of its INFO lines.
type LatencySummary struct {
	// Rows are in perf's sort order; tasks never switched in after a
	// wait and idle are left out, as perf leaves them out (unless
	// LatencyOptions.Uncounted).
	Rows                              []LatencyRow
	Timestamps, Unordered, SwitchBugs uint64
}

// Latency writes the `perf sched latency` table for evs (in time order):
// per task, the run time, the number of times it was switched in after
// waiting, the average and maximum wait between wakeup (or preemption) and
// switch-in, and when the maximum wait began and ended. Tasks with the same
// comm are merged unless opts.NoMerge; idle (pid 0) is left out. Mirrors
// builtin-sched.c:perf_sched__lat.
func Latency(w io.Writer, evs []Event, opts LatencyOptions) error {
	s, err := Summarize(evs, opts)
	if err != nil {
		return err
	}
	return s.Write(w)
}

// Summarize computes the table Latency prints.
func Summarize(evs []Event, opts LatencyOptions) (*LatencySummary, error) {
	keys := opts.Sort
	if len(keys) == 0 {
		keys = []string{"avg", "max", "switch", "runtime"}
	}
	cmps := make([]func(a, b *latAtoms) int, 0, len(keys))
	for _, k := range keys {
		c, ok := latencySortKeys[strings.TrimSpace(k)]
		if !ok {
			return nil, fmt.Errorf("perf sched latency: unknown sort key %q", k)
		}
		cmps = append(cmps, c)
	}
	waking := hasWaking(evs)
	atoms := map[int32]*latAtoms{}
	get := func(pid int32) (*latAtoms, bool) {
		a, ok := atoms[pid]
		if !ok {
			a = &latAtoms{pid: pid}
			atoms[pid] = a
		}
		return a, !ok
	}
	comms := map[int32]string{}
	note := func(t *Task) {
		if t.Comm.Len() > 0 {
			comms[t.Pid] = t.Comm.String()
		}
	}
	currPid := map[int32]int32{}
	runStart := map[int32]uint64{}
	var nrTimestamps, nrUnordered, nrSwitchBugs uint64
	for i := range evs {
		ev := &evs[i]
		note(&ev.Cur)
		switch ev.Type {
		case SchedSwitch:
			note(&ev.Task)
			note(&ev.Next)
			if cur, ok := currPid[ev.CPU]; ok && cur != ev.Task.Pid {
				nrSwitchBugs++
			}
			currPid[ev.CPU] = ev.Next.Pid
			out, _ := get(ev.Task.Pid)
			if st, ok := runStart[ev.CPU]; ok && ev.TS >= st {
				out.runtime += ev.TS - st
			}
			runStart[ev.CPU] = ev.TS
			out.schedOutEvent(ev.PrevState.Char(), ev.TS)
			in, created := get(ev.Next.Pid)
			if (created || !in.started) && opts.SetUp[ev.Next.Pid] {
				in.started, in.state = true, threadSchedIn
				continue
			}
			if created {
				in.schedOutEvent('R', ev.TS)
			}
			n := in.nbAtoms
			in.schedInEvent(ev.TS)
			if in.nbAtoms != n && opts.OnWait != nil {
				opts.OnWait(ev.Next.Pid, ev.CPU, in.wakeUp, ev.TS)
			}
		case SchedWaking, SchedWakeup, SchedWakeupNew:
			note(&ev.Task)
			if !isWakeupEvent(ev, waking) {
				continue
			}
			if opts.SetUp[ev.Task.Pid] {
				if a := atoms[ev.Task.Pid]; a == nil || !a.started {
					continue // the setup's wakeup_new
				}
			}
			a, created := get(ev.Task.Pid)
			if created {
				a.schedOutEvent('S', ev.TS)
			}
			if a.state != threadSleeping {
				continue
			}
			nrTimestamps++
			if a.schedOut > ev.TS {
				nrUnordered++
				continue
			}
			a.state = threadWaitCPU
			a.wakeUp = ev.TS
		case SchedProcessFork:
			note(&ev.Task)
			note(&ev.Next)
		default:
			note(&ev.Task)
		}
	}
	// perf walks its pid tree from the highest tid down; merging and the
	// sorted insertion keep that order among equal keys.
	list := make([]*latAtoms, 0, len(atoms))
	for pid, a := range atoms {
		a.comm = comms[pid]
		if pid == 0 {
			a.comm = "swapper" // perf's name for the idle task
		}
		if a.comm == "" {
			a.comm = fmt.Sprintf(":%d", pid)
		}
		list = append(list, a)
	}
	sort.Slice(list, func(i, j int) bool { return list[i].pid > list[j].pid })
	if !opts.NoMerge {
		byComm := map[string]*latAtoms{}
		var merged []*latAtoms
		for _, a := range list {
			m, ok := byComm[a.comm]
			if !ok {
				a.numMerged = 1
				byComm[a.comm] = a
				merged = append(merged, a)
				continue
			}
			m.numMerged++
			m.runtime += a.runtime
			m.nbAtoms += a.nbAtoms
			m.totalLat += a.totalLat
			if m.maxLat < a.maxLat {
				m.maxLat, m.maxLatStart, m.maxLatEnd = a.maxLat, a.maxLatStart, a.maxLatEnd
			}
		}
		// The merged tree is walked in descending comm order.
		sort.Slice(merged, func(i, j int) bool { return merged[i].comm > merged[j].comm })
		list = merged
	}
	sort.SliceStable(list, func(i, j int) bool {
		for _, c := range cmps {
			if r := c(list[i], list[j]); r != 0 {
				return r > 0
			}
		}
		return false
	})

	s := &LatencySummary{Timestamps: nrTimestamps, Unordered: nrUnordered, SwitchBugs: nrSwitchBugs}
	for _, a := range list {
		if a.nbAtoms == 0 && (!opts.Uncounted || a.runtime == 0) || a.comm == "swapper" {
			continue
		}
		s.Rows = append(s.Rows, LatencyRow{Comm: a.comm, Pid: a.pid, Merged: max(a.numMerged, 1), Runtime: a.runtime,
			Count: a.nbAtoms, TotalDelay: a.totalLat, MaxDelay: a.maxLat, MaxStart: a.maxLatStart, MaxEnd: a.maxLatEnd})
	}
	return s, nil
}

// Write prints the table as perf sched latency does.
func (s *LatencySummary) Write(w io.Writer) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "\n -------------------------------------------------------------------------------------------------------------------------------------------\n")
	fmt.Fprintf(bw, "  Task                  |   Runtime ms  |  Count   | Avg delay ms    | Max delay ms    | Max delay start           | Max delay end          |\n")
	fmt.Fprintf(bw, " -------------------------------------------------------------------------------------------------------------------------------------------\n")
	var allRuntime, allCount uint64
	for i := range s.Rows {
		a := &s.Rows[i]
		allRuntime += a.Runtime
		allCount += a.Count
		name := a.Name()
		bw.WriteString(name)
		for i := len(name); i < 24; i++ {
			bw.WriteByte(' ')
		}
		fmt.Fprintf(bw, "|%11.3f ms |%9d | avg:%8.3f ms | max:%8.3f ms | max start: %12s s | max end: %12s s\n",
			float64(a.Runtime)/1e6, a.Count, float64(a.AvgDelay())/1e6, float64(a.MaxDelay)/1e6,
			perfTimestamp(a.MaxStart), perfTimestamp(a.MaxEnd))
	}
	fmt.Fprintf(bw, " -----------------------------------------------------------------------------------------------------------------\n")
	fmt.Fprintf(bw, "  TOTAL:                |%11.3f ms |%9d |\n", float64(allRuntime)/1e6, allCount)
	fmt.Fprintf(bw, " ---------------------------------------------------\n")
	if s.Unordered > 0 && s.Timestamps > 0 {
		fmt.Fprintf(bw, "  INFO: %.3f%% unordered timestamps (%d out of %d)\n",
			float64(s.Unordered)/float64(s.Timestamps)*100, s.Unordered, s.Timestamps)
	}
	if s.SwitchBugs > 0 && s.Timestamps > 0 {
		fmt.Fprintf(bw, "  INFO: %.3f%% context switch bugs (%d out of %d)\n",
			float64(s.SwitchBugs)/float64(s.Timestamps)*100, s.SwitchBugs, s.Timestamps)
	}
	fmt.Fprintf(bw, "\n")
	return bw.Flush()
}

// Name is the row's task column: "  comm:pid " or "  comm:(merged) ".
func (r *LatencyRow) Name() string {
	if r.Merged > 1 {
		return fmt.Sprintf("  %s:(%d) ", r.Comm, r.Merged)
	}
	return fmt.Sprintf("  %s:%d ", r.Comm, r.Pid)
}

func cmpU64(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

var latencySortKeys = map[string]func(a, b *latAtoms) int{
	"pid": func(a, b *latAtoms) int {
		switch {
		case a.pid < b.pid:
			return -1
		case a.pid > b.pid:
			return 1
		}
		return 0
	},
	"avg": func(a, b *latAtoms) int {
		if a.nbAtoms == 0 {
			return -1
		}
		if b.nbAtoms == 0 {
			return 1
		}
		return cmpU64(a.totalLat/a.nbAtoms, b.totalLat/b.nbAtoms)
	},
	"max":     func(a, b *latAtoms) int { return cmpU64(a.maxLat, b.maxLat) },
	"switch":  func(a, b *latAtoms) int { return cmpU64(a.nbAtoms, b.nbAtoms) },
	"runtime": func(a, b *latAtoms) int { return cmpU64(a.runtime, b.runtime) },
}

// threadRuntime is builtin-sched.c's struct thread_runtime, reduced to what
// the timehist table needs.
type threadRuntime struct {
	lastTime   uint64
	readyToRun uint64
	lastState  byte
	dtRun      uint64
	dtDelay    uint64
	dtWait     uint64
}

// update is timehist_update_runtime_stats: t is this switch-out, tprev the
// previous sched_switch on the same CPU (the switch-in), 0 if none.
func (r *threadRuntime) update(t, tprev uint64) {
	r.dtDelay, r.dtWait, r.dtRun = 0, 0, 0
	if tprev == 0 {
		return
	}
	r.dtRun = t - tprev
	if r.readyToRun != 0 && r.readyToRun <= tprev {
		r.dtDelay = tprev - r.readyToRun
	}
	if r.lastTime != 0 && r.lastTime <= tprev {
		r.dtWait = tprev - r.lastTime
	}
}

// appendSchedTime is print_sched_time: "%*lu.%03lu " of msec.usec.
func appendSchedTime(b []byte, ns uint64, width int) []byte {
	ms := ns / 1000000
	us := (ns - ms*1000000) / 1000
	b = appendUintRight(b, ms, width)
	b = append(b, '.')
	b = append(b, byte('0'+us/100), byte('0'+us/10%10), byte('0'+us%10))
	return append(b, ' ')
}

// Timehist writes the `perf sched timehist` table for evs (in time order):
// one row per sched_switch, for the task switched out (<idle> for the idle
// task), with its wait time (off-CPU time before it last got the CPU), its
// scheduling delay (wakeup or preemption to switch-in) and its run time.
// Mirrors builtin-sched.c:perf_sched__timehist without options.
func Timehist(w io.Writer, evs []Event) error {
	bw := bufio.NewWriter(w)
	commWidth := 30
	dots := strings.Repeat("-", 64)
	fmt.Fprintf(bw, "%15s %6s ", "time", "cpu")
	fmt.Fprintf(bw, " %-*s", commWidth, "task name")
	fmt.Fprintf(bw, "  %9s  %9s  %9s", "wait time", "sch delay", "run time")
	fmt.Fprintf(bw, "\n")
	fmt.Fprintf(bw, "%15s %-6s ", "", "")
	fmt.Fprintf(bw, " %-*s", commWidth, "[tid/pid]")
	fmt.Fprintf(bw, "  %9s  %9s  %9s", "(msec)", "(msec)", "(msec)")
	fmt.Fprintf(bw, "\n")
	fmt.Fprintf(bw, "%.15s %.6s ", dots, dots)
	fmt.Fprintf(bw, " %.*s", commWidth, dots)
	fmt.Fprintf(bw, "  %.9s  %.9s  %.9s", dots, dots, dots)
	fmt.Fprintf(bw, "\n")

	waking := hasWaking(evs)
	threads := map[int32]*threadRuntime{}
	idle := map[int32]*threadRuntime{}
	lastSwitch := map[int32]uint64{}
	get := func(m map[int32]*threadRuntime, k int32) *threadRuntime {
		r, ok := m[k]
		if !ok {
			r = &threadRuntime{}
			m[k] = r
		}
		return r
	}
	var line []byte
	for i := range evs {
		ev := &evs[i]
		switch {
		case isWakeupEvent(ev, waking):
			if ev.Task.Pid == 0 {
				continue
			}
			r := get(threads, ev.Task.Pid)
			if r.readyToRun == 0 {
				r.readyToRun = ev.TS
			}
		case ev.Type == SchedSwitch:
			var r *threadRuntime
			var name string
			if ev.Task.Pid == 0 {
				r = get(idle, ev.CPU)
				name = "<idle>"
			} else {
				r = get(threads, ev.Cur.Pid)
				name = fmt.Sprintf("%s[%d]", ev.Task.Comm.String(), ev.Cur.Pid)
			}
			if len(name) > commWidth {
				commWidth = len(name)
			}
			t := ev.TS
			tprev := lastSwitch[ev.CPU]
			r.update(t, tprev)
			line = line[:0]
			line = appendStrRight(line, []byte(perfTimestamp(t)), 15)
			line = append(line, " ["...)
			line = appendIntZero(line, int64(ev.CPU), 4)
			line = append(line, "]  "...)
			line = append(line, name...)
			line = appendSpaces(line, commWidth-len(name))
			line = append(line, ' ')
			line = appendSchedTime(line, r.dtWait, 6)
			line = appendSchedTime(line, r.dtDelay, 6)
			line = appendSchedTime(line, r.dtRun, 6)
			line = append(line, '\n')
			bw.Write(line)
			state := ev.PrevState.Char()
			r.lastTime = t
			r.lastState = state
			if state == 'R' {
				r.readyToRun = t
			} else {
				r.readyToRun = 0
			}
			lastSwitch[ev.CPU] = t
		}
	}
	return bw.Flush()
}
