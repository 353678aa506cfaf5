package replay

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/schedlab/schedlab/internal/fileerr"
	"github.com/schedlab/schedlab/internal/trace"
)

// Input is a trace file's sched events and, where it says, its number of
// CPUs (0 when it does not).
type Input struct {
	Events []trace.Event
	NrCPUs int
	// Freqs are the trace's power:cpu_frequency changes, in time order.
	Freqs []trace.Frequency
	// Warnings are what was read around rather than refused: a text
	// trace's last line without its newline (trace.CutWarning).
	Warnings []string
}

// Read reads the sched events of a trace file: a trace.dat (by its magic),
// else text, line by line, in any of three forms: ftrace text (as
// /sys/kernel/tracing/trace and `schedlab --trace` write it), `trace-cmd
// report` (with or without -l's latency flags, with the sched_switch
// plugin's "comm:pid [prio] S ==> comm:pid [prio]" form or the raw fields)
// and `perf sched script`. Events come back in time order. A mistake is
// one error naming the file and its byte offset (trace.dat) or line. A
// text trace whose last line has no newline was cut short (a full disk, a
// killed recorder): its complete lines are read and the cut line is left
// out, even when what is left of it parses (it may end inside a number),
// with one warning naming the line.
func Read(path string) (*Input, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseInput(path, data)
}

// Parse is Read on data already read, for the events only.
func Parse(name string, data []byte) ([]trace.Event, error) {
	in, err := ParseInput(name, data)
	if err != nil {
		return nil, err
	}
	return in.Events, nil
}

// ParseInput is Read on data already read; name is the file's name in
// errors.
func ParseInput(name string, data []byte) (*Input, error) {
	if bytes.HasPrefix(data, []byte("\x17\x08\x44tracing")) {
		tr, err := trace.ReadDat(data)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", name, err)
		}
		if len(tr.Events) == 0 {
			return nil, fmt.Errorf("%s: no sched events (record with trace-cmd record -e sched)", name)
		}
		return &Input{Events: tr.Events, NrCPUs: tr.NrCPUs, Freqs: tr.Frequencies}, nil
	}
	var warnings []string
	cut := 0
	if n := len(data); n > 0 && data[n-1] != '\n' {
		i := bytes.LastIndexByte(data, '\n')
		cut = bytes.Count(data[:i+1], []byte{'\n'}) + 1
		warnings = append(warnings, trace.CutWarning(name, cut))
		data = data[:i+1]
	}
	ncpu := 0
	var freqs []trace.Frequency
	var evs []trace.Event
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	line := 0
	for sc.Scan() {
		line++
		if m := cpusRE.FindSubmatch(sc.Bytes()); m != nil && ncpu == 0 {
			ncpu, _ = strconv.Atoi(string(m[1]))
		}
		if fr, ok := parseFrequency(sc.Bytes()); ok {
			freqs = append(freqs, fr)
			continue
		}
		ev, ok, err := parseTextLine(sc.Bytes())
		if err != nil {
			return nil, fileerr.Errorf(name, line, "%v", err)
		}
		if ok {
			evs = append(evs, ev)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fileerr.Errorf(name, line+1, "%v", err)
	}
	if len(evs) == 0 {
		if cut > 0 {
			return nil, fileerr.Errorf(name, cut, "no sched events before this line, which is cut short (no newline after it)")
		}
		return nil, fileerr.Errorf(name, 1, "no sched events: want a trace.dat, ftrace text, trace-cmd report or perf sched script output")
	}
	sort.SliceStable(evs, func(i, j int) bool { return evs[i].TS < evs[j].TS })
	sort.SliceStable(freqs, func(i, j int) bool { return freqs[i].TS < freqs[j].TS })
	return &Input{Events: evs, NrCPUs: ncpu, Freqs: freqs, Warnings: warnings}, nil
}

var freqRE = regexp.MustCompile(`\s(\d+)\.(\d+):\s+(?:power:)?cpu_frequency:\s+state=(\d+) cpu_id=(\d+)`)

// parseFrequency reads a power:cpu_frequency line of any text form.
func parseFrequency(b []byte) (trace.Frequency, bool) {
	if !bytes.Contains(b, []byte("cpu_frequency:")) {
		return trace.Frequency{}, false
	}
	m := freqRE.FindSubmatch(b)
	if m == nil {
		return trace.Frequency{}, false
	}
	ts, err := seconds(string(m[1]), string(m[2]))
	khz, err2 := strconv.ParseUint(string(m[3]), 10, 32)
	cpu, err3 := strconv.ParseUint(string(m[4]), 10, 16)
	if err != nil || err2 != nil || err3 != nil {
		return trace.Frequency{}, false
	}
	return trace.Frequency{TS: ts, CPU: int32(cpu), KHz: uint32(khz)}, true
}

// cpusRE finds the CPU count of ftrace's header ("#P:8") and of trace-cmd
// report's first line ("cpus=4").
var cpusRE = regexp.MustCompile(`^(?:#.*#P:|cpus=)(\d{1,4})\s*$`)

// lineRE is the common prefix of the three text forms: the task (comm
// with '-' or ' ' before the pid), an optional (tgid), the [CPU], optional
// latency flags, the timestamp in seconds and the event name.
var lineRE = regexp.MustCompile(`^\s*(.*?)[- ](\d+)\s+(?:\(\s*[\d-]+\)\s+)?\[(\d+)\]\s+(?:([a-zA-Z0-9.]{4,6})\s+)?(\d+)\.(\d+):\s+([\w:]+):\s*(.*)$`)

// parseTextLine returns the event on one line; ok is false for lines that
// hold none (headers, comments, stack traces, other events).
func parseTextLine(b []byte) (trace.Event, bool, error) {
	s := strings.TrimRight(string(b), "\r")
	t := strings.TrimSpace(s)
	if t == "" || t[0] == '#' || strings.HasPrefix(t, "=>") || strings.HasPrefix(t, "cpus=") ||
		strings.HasPrefix(t, "version =") || strings.HasPrefix(t, "CPU ") || strings.HasPrefix(t, "CPU:") {
		return trace.Event{}, false, nil
	}
	if ev, err := trace.ParseLine(b); err == nil {
		return ev, true, nil
	}
	m := lineRE.FindStringSubmatch(s)
	if m == nil {
		return trace.Event{}, false, fmt.Errorf("not an event line of ftrace, trace-cmd report or perf sched script: %.60q", t)
	}
	name := strings.TrimPrefix(m[7], "sched:")
	typ, ok := trace.EventTypeByName(name)
	if !ok {
		return trace.Event{}, false, nil // another event: irq, timer, ...
	}
	var ev trace.Event
	ev.Type = typ
	pid, err := strconv.ParseInt(m[2], 10, 32)
	if err != nil {
		return ev, false, fmt.Errorf("pid %q: %v", m[2], err)
	}
	cpu, err := strconv.ParseInt(m[3], 10, 32)
	if err != nil {
		return ev, false, fmt.Errorf("cpu %q: %v", m[3], err)
	}
	ev.Cur = trace.Task{Comm: trace.MakeComm(strings.TrimSpace(m[1])), Pid: int32(pid)}
	ev.CPU = int32(cpu)
	if ev.TS, err = seconds(m[5], m[6]); err != nil {
		return ev, false, err
	}
	if f := m[4]; len(f) >= 3 {
		switch f[2] {
		case 'h', 'H':
			ev.Flags |= trace.FlagHardirq
		case 's':
			ev.Flags |= trace.FlagSoftirq
		case 'Z', 'z':
			ev.Flags |= trace.FlagNMI
		}
	}
	if err := parseFields(&ev, m[8]); err != nil {
		return ev, false, fmt.Errorf("%s: %v", name, err)
	}
	return ev, true, nil
}

// seconds turns "11370" and "816169" (µs) or a 9-digit fraction into ns.
func seconds(sec, frac string) (uint64, error) {
	s, err := strconv.ParseUint(sec, 10, 64)
	if err != nil || len(frac) > 9 || s > 1<<33 {
		return 0, fmt.Errorf("timestamp %s.%s out of range", sec, frac)
	}
	f, _ := strconv.ParseUint(frac, 10, 64)
	for i := len(frac); i < 9; i++ {
		f *= 10
	}
	return s*1e9 + f, nil
}

// pluginSwitch is libtraceevent's sched_switch plugin form.
var pluginSwitch = regexp.MustCompile(`^(.*):(-?\d+) \[(-?\d+)\] (\S+) ==> (.*):(-?\d+) \[(-?\d+)\]`)

func parseFields(ev *trace.Event, p string) error {
	if ev.Type == trace.SchedSwitch && !strings.Contains(p, "prev_pid=") {
		m := pluginSwitch.FindStringSubmatch(strings.TrimSpace(p))
		if m == nil {
			return fmt.Errorf("payload %.60q is neither key=value fields nor the plugin's form", p)
		}
		kv := map[string]string{"prev_comm": m[1], "prev_pid": m[2], "prev_prio": m[3], "prev_state": m[4],
			"next_comm": m[5], "next_pid": m[6], "next_prio": m[7]}
		return fill(ev, kv)
	}
	kv := map[string]string{}
	last := ""
	for _, tok := range strings.Fields(strings.Replace(p, "==>", " ", 1)) {
		k, v, ok := strings.Cut(tok, "=")
		if !ok {
			if last == "" {
				return fmt.Errorf("payload %.60q: %q is not key=value", p, tok)
			}
			kv[last] += " " + tok // a comm with a space
			continue
		}
		kv[k], last = v, k
	}
	return fill(ev, kv)
}

func fill(ev *trace.Event, kv map[string]string) error {
	var err error
	num := func(k string, def int32) int32 {
		v, ok := kv[k]
		if !ok {
			if def == -999 && err == nil {
				err = fmt.Errorf("no %s field", k)
			}
			return def
		}
		n, e := strconv.ParseInt(v, 10, 32)
		if e != nil && err == nil {
			err = fmt.Errorf("%s=%s is not a number", k, v)
		}
		return int32(n)
	}
	comm := func(k string) trace.Comm { return trace.MakeComm(kv[k]) }
	switch ev.Type {
	case trace.SchedSwitch:
		ev.Task = trace.Task{Comm: comm("prev_comm"), Pid: num("prev_pid", -999), Prio: num("prev_prio", 120)}
		ev.Next = trace.Task{Comm: comm("next_comm"), Pid: num("next_pid", -999), Prio: num("next_prio", 120)}
		st, e := trace.ParseTaskState(kv["prev_state"])
		if e != nil {
			// Letters of other kernels (N, K, W): a blocked state.
			st = trace.TaskInterruptible
			if strings.HasPrefix(kv["prev_state"], "R") {
				st = trace.TaskRunning
			}
		}
		ev.PrevState = st
	case trace.SchedWaking, trace.SchedWakeup, trace.SchedWakeupNew:
		ev.Task = trace.Task{Comm: comm("comm"), Pid: num("pid", -999), Prio: num("prio", 120)}
		ev.TargetCPU = num("target_cpu", -1)
	case trace.SchedMigrateTask:
		ev.Task = trace.Task{Comm: comm("comm"), Pid: num("pid", -999), Prio: num("prio", 120)}
		ev.TargetCPU, ev.DestCPU = num("orig_cpu", -1), num("dest_cpu", -1)
	case trace.SchedProcessFork:
		ev.Task = trace.Task{Comm: comm("comm"), Pid: num("pid", -999)}
		ev.Next = trace.Task{Comm: comm("child_comm"), Pid: num("child_pid", -999)}
	case trace.SchedProcessExit:
		ev.Task = trace.Task{Comm: comm("comm"), Pid: num("pid", -999), Prio: num("prio", 120)}
		ev.GroupDead = kv["group_dead"] == "true" || kv["group_dead"] == "1"
	}
	return err
}
