package replay

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/schedlab/schedlab/internal/testutil"
	"github.com/schedlab/schedlab/internal/trace"
)

// RealTrace is the path of the trace recorded on a real 4-CPU kernel,
// read where it lies (../shared/traces from the project's root), never
// copied into the project.
func realTrace(t testing.TB) string {
	t.Helper()
	for _, p := range []string{
		filepath.Join("..", "..", "..", "shared", "traces", "real-4cpu-sched.dat"),
		filepath.Join("..", "..", "..", "..", "shared", "traces", "real-4cpu-sched.dat"),
	} {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatal("CI must have ../shared/traces/real-4cpu-sched.dat")
	}
	t.Skip("no ../shared/traces/real-4cpu-sched.dat")
	return ""
}

// The reconstruction of the real trace, checked against counts taken from
// its events independently: every non-idle pid is a task, every
// sched_waking is classified once (a task's wakeup, an interrupt's, or one
// of a task not asleep), and the bursts add up to the time the CPUs ran
// tasks (from the trace's start for whoever was running then, to its end
// for whoever still is).
func TestReconstructReal(t *testing.T) {
	in, err := Read(realTrace(t))
	if err != nil {
		t.Fatal(err)
	}
	evs := in.Events
	if err != nil {
		t.Fatal(err)
	}
	tr, err := Reconstruct(evs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s", tr.Stats.Summary())
	pids := map[int32]bool{}
	wakings := 0
	var onCPU uint64
	last := map[int32]uint64{}
	running := map[int32]int32{}
	for _, ev := range evs {
		for _, p := range []int32{ev.Cur.Pid, ev.Task.Pid, ev.Next.Pid} {
			if p != 0 {
				pids[p] = true
			}
		}
		switch ev.Type {
		case trace.SchedWaking:
			wakings++
		case trace.SchedSwitch:
			from, ok := last[ev.CPU]
			if !ok {
				from = tr.Start
			}
			if ev.Task.Pid != 0 {
				onCPU += ev.TS - from
			}
			last[ev.CPU] = ev.TS
			running[ev.CPU] = ev.Next.Pid
		}
	}
	for cpu, p := range running {
		if p != 0 {
			onCPU += tr.End - last[cpu]
		}
	}
	if tr.Stats.Tasks != len(pids) || len(tr.Tasks) != len(pids) {
		t.Errorf("%d tasks reconstructed, the trace has %d pids", tr.Stats.Tasks, len(pids))
	}
	s := tr.Stats
	if got := s.Sleeps[ByTask] + s.Sleeps[ByTimer] + s.StrayWakeups; got != wakings {
		t.Errorf("%d wakeups classified, the trace has %d sched_waking", got, wakings)
	}
	if s.RunNs != onCPU {
		t.Errorf("bursts add up to %d ns, the CPUs ran tasks %d ns", s.RunNs, onCPU)
	}
	if s.Sleeps[ByTask] == 0 || s.Sleeps[ByTimer] == 0 || s.Forked != 0 {
		t.Errorf("implausible: %s (the trace has no fork events)", s.Summary())
	}
	// Every program ends in exactly one exit, and every wake step names a
	// task and a sleep of it ended by this waker.
	byPid := map[int32]*Task{}
	for _, tk := range tr.Tasks {
		byPid[tk.Pid] = tk
	}
	for _, tk := range tr.Tasks {
		if n := len(tk.Steps); n == 0 || tk.Steps[n-1].Kind != Exit {
			t.Fatalf("%s:%d does not end in an exit", tk.Comm, tk.Pid)
		}
		for _, st := range tk.Steps {
			if st.Kind != Wake {
				continue
			}
			found := false
			for _, ws := range byPid[st.Pid].Steps {
				if ws.Kind == Sleep && ws.Seq == st.Seq && ws.Cause == ByTask && ws.Pid == tk.Pid {
					found = true
				}
			}
			if !found {
				t.Fatalf("%d wakes %d out of sleep %d, which it does not wait for", tk.Pid, st.Pid, st.Seq)
			}
		}
	}
	// Per-CPU kernel threads that stayed on their CPU are pinned.
	for _, tk := range tr.Tasks {
		if strings.HasPrefix(tk.Comm, "ksoftirqd/") && tk.PinnedCPU < 0 {
			t.Errorf("%s not pinned", tk.Comm)
		}
	}
}

// The same trace as ftrace text and as trace-cmd report prints it reads
// back to the same sched_switch records.
func TestTextForms(t *testing.T) {
	path := realTrace(t)
	in, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	evs := in.Events
	if err != nil {
		t.Fatal(err)
	}
	var text []byte
	for i := range evs {
		text = trace.AppendLine(text, &evs[i])
	}
	back, err := Parse("real.txt", text)
	if err != nil {
		t.Fatal(err)
	}
	if len(back) != len(evs) {
		t.Fatalf("ftrace text: %d events back of %d", len(back), len(evs))
	}
	for i := range evs {
		a, b := evs[i], back[i]
		a.TS, b.TS = (a.TS+500)/1000, b.TS/1000 // ftrace text prints rounded µs
		if a.Cur.Comm.String() == "<...>" {     // a comm not in the cmdlines
			a.Cur.Comm, b.Cur.Comm = trace.Comm{}, trace.Comm{}
		}
		if a != b {
			t.Fatalf("ftrace text event %d:\n got %+v\nwant %+v", i, b, a)
		}
	}
	bin := testutil.NeedTool(t, "trace-cmd")
	out, err := exec.Command(bin, "report", "-i", path).Output()
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Parse("report.txt", out)
	if err != nil {
		t.Fatal(err)
	}
	sw := func(evs []trace.Event, round uint64) []trace.Event {
		var out []trace.Event
		for _, ev := range evs {
			if ev.Type == trace.SchedSwitch {
				out = append(out, trace.Event{TS: (ev.TS + round) / 1000, CPU: ev.CPU, Task: ev.Task, Next: ev.Next, PrevState: min(ev.PrevState&0xff, 1)})
			}
		}
		return out
	}
	// trace-cmd prints rounded µs, and its sched_switch plugin letters of
	// an older kernel ("W" for I): only blocked or runnable is compared.
	a, b := sw(evs, 500), sw(rep, 0)
	if len(a) != len(b) {
		t.Fatalf("trace-cmd report: %d sched_switch, trace.dat %d", len(b), len(a))
	}
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("trace-cmd report sched_switch %d:\n got %+v\nwant %+v", i, b[i], a[i])
		}
	}
}

// perf sched script's lines: "comm pid [cpu] time: sched:event: fields".
func TestPerfScript(t *testing.T) {
	in := `       perf  1234 [000] 12345.678901:       sched:sched_waking: comm=worker pid=77 prio=120 target_cpu=001
       perf  1234 [000] 12345.678950:       sched:sched_switch: prev_comm=perf prev_pid=1234 prev_prio=120 prev_state=S ==> next_comm=swapper/0 next_pid=0 next_prio=120
    swapper     0 [001] 12345.679000:       sched:sched_switch: prev_comm=swapper/1 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=worker next_pid=77 next_prio=115
     worker    77 [001] 12345.679300:       sched:sched_process_exit: comm=worker pid=77 prio=115
`
	evs, err := Parse("perf.txt", []byte(in))
	if err != nil {
		t.Fatal(err)
	}
	tr, err := Reconstruct(evs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Tasks) != 2 || tr.Stats.Sleeps[ByTask] != 1 {
		t.Fatalf("%s", tr.Stats.Summary())
	}
	w, p := tr.Tasks[0], tr.Tasks[1] // in order of first appearance
	if w.Comm != "worker" || w.Nice() != -5 || len(w.Steps) != 3 || w.Steps[1].D != 300000 {
		t.Errorf("worker: %+v", w)
	}
	if p.Comm != "perf" || p.Steps[0] != (Step{Kind: Wake, Pid: 77, Seq: 0}) || w.Steps[0] != (Step{Kind: Sleep, Cause: ByTask, Pid: 1234, Seq: 0}) {
		t.Errorf("perf's steps %+v, worker's %+v", p.Steps, w.Steps)
	}
}

// A malformed trace is one error naming the file and where.
func TestMalformed(t *testing.T) {
	for _, tc := range []struct{ data, want string }{
		{"# tracer: nop\n\nnot a trace line\n", "bad.txt:3: not an event line"},
		{"  a-1 [000] 1.000000: sched_switch: prev_comm=a prev_pid=x prev_prio=120 prev_state=S ==> next_comm=b next_pid=2 next_prio=120\n", "bad.txt:1: sched_switch: prev_pid=x is not a number"},
		{"# only comments\n", "bad.txt:1: no sched events"},
		{"\x17\x08\x44tracing7\x00\x00\x08", "bad.txt: byte 14: truncated"},
	} {
		_, err := Parse("bad.txt", []byte(tc.data))
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: %v, want one line with %q", tc.data, err, tc.want)
		}
	}
}

// FuzzParse: any input is events or one error, never a panic, and what
// parses reconstructs. A text with something after its last newline reads
// as the text up to that newline does, with one warning naming the line
// after it.
func FuzzParse(f *testing.F) {
	f.Add([]byte("  a-1 [000] d..2. 1.000000: sched_switch: prev_comm=a prev_pid=1 prev_prio=120 prev_state=S ==> next_comm=b next_pid=2 next_prio=120\n"))
	f.Add([]byte("  trace-cmd-5 [003] 11370.816264: sched_switch:         trace-cmd:86674 [120] S ==> swapper/2:0 [120]\n"))
	f.Add([]byte("       perf  1234 [000] 12345.678901:       sched:sched_waking: comm=worker pid=77 prio=120 target_cpu=001\n"))
	f.Add([]byte("\x17\x08\x44tracing6\x00\x00\x08\x00\x10\x00\x00"))
	f.Fuzz(func(t *testing.T, data []byte) {
		evs, err := Parse("f", data)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error of several lines: %q", err)
			}
			return
		}
		// Parse returns no empty event list, the one input
		// Reconstruct refuses.
		if _, err := Reconstruct(evs, Options{}); err != nil {
			t.Fatal(err)
		}
		i := bytes.LastIndexByte(data, '\n')
		if bytes.HasPrefix(data, []byte("\x17\x08\x44tracing")) || i+1 == len(data) {
			return
		}
		in, err := ParseInput("f", data)
		whole, werr := Parse("f", data[:i+1])
		if err != nil || werr != nil || fmt.Sprint(in.Events) != fmt.Sprint(whole) {
			t.Fatalf("%q reads as %v, up to its last newline as %v", data, err, werr)
		}
		want := fmt.Sprintf("f:%d: ", bytes.Count(data, []byte("\n"))+1)
		if len(in.Warnings) != 1 || !strings.HasPrefix(in.Warnings[0], want) {
			t.Fatalf("%q: warnings %q, want one at %q", data, in.Warnings, want)
		}
	})
}

// --recorded-on scales a burst by the capacity of the CPU it ran on: 1 ms
// on a CPU of capacity 512 is 0.5 ms of work at 1024; a wakeup from an
// interrupt is a timer sleep of the recorded length.
func TestCapacityScaling(t *testing.T) {
	a := trace.Task{Comm: trace.MakeComm("a"), Pid: 10, Prio: 120}
	idle := func(cpu int32) trace.Task { return trace.Task{Comm: trace.MakeComm("swapper"), Pid: 0, Prio: 120} }
	const ms = 1_000_000
	evs := []trace.Event{
		trace.Switch(0, 1, idle(1), trace.TaskRunning, a),
		trace.Switch(1*ms, 1, a, trace.TaskInterruptible, idle(1)),
		trace.Waking(3*ms, 1, idle(1), a, 1),
		trace.Switch(3*ms, 1, idle(1), trace.TaskRunning, a),
		trace.Switch(5*ms, 1, a, trace.TaskInterruptible, idle(1)),
	}
	evs[2].Flags |= trace.FlagHardirq
	tr, err := Reconstruct(evs, Options{Capacity: func(cpu int32) int { return 512 * int(cpu) }})
	if err != nil {
		t.Fatal(err)
	}
	got := tr.Tasks[0].Steps
	want := []Step{{Kind: Run, D: ms / 2}, {Kind: Sleep, Cause: ByTimer, D: 2 * ms}, {Kind: Run, D: ms}, {Kind: Exit}}
	if len(got) != len(want) {
		t.Fatalf("steps %+v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("step %d: %+v, want %+v", i, got[i], want[i])
		}
	}
}

// Lines of the text forms: spacing other than schedlab's, a (tgid),
// latency flags with an interrupt context, trace-cmd's sched_switch plugin
// form, perf's sched: prefix.
func TestTextLineForms(t *testing.T) {
	for _, tc := range []struct {
		line      string
		typ       trace.EventType
		cur, task int32
		cpu       int32
		ts        uint64
		irq       bool
	}{
		{"  a-1 [009] d..2. 1.000000: sched_switch: prev_comm=a prev_pid=1 prev_prio=120 prev_state=S ==> next_comm=b next_pid=2 next_prio=120", trace.SchedSwitch, 1, 1, 9, 1e9, false},
		{"   my task-77  ( 70) [002] d.h2. 12.000500: sched_waking: comm=x pid=5 prio=120 target_cpu=002", trace.SchedWaking, 77, 5, 2, 12000500000, true},
		{"       trace-cmd-86674 [002] 11370.816264: sched_switch:         trace-cmd:86674 [120] S ==> swapper/2:0 [120]", trace.SchedSwitch, 86674, 86674, 2, 11370816264000, false},
		{"     worker    77 [001] 12345.679300123:       sched:sched_process_exit: comm=worker pid=77 prio=115", trace.SchedProcessExit, 77, 77, 1, 12345679300123, false},
		{"     bash  9 [000] 1.5: sched:sched_process_fork: comm=bash pid=9 child_comm=bash child_pid=10", trace.SchedProcessFork, 9, 9, 0, 1500000000, false},
	} {
		evs, err := Parse("x", []byte(tc.line+"\n"))
		if err != nil {
			t.Errorf("%q: %v", tc.line, err)
			continue
		}
		ev := evs[0]
		if ev.Type != tc.typ || ev.Cur.Pid != tc.cur || ev.Task.Pid != tc.task || ev.CPU != tc.cpu || ev.TS != tc.ts || (ev.Flags&trace.FlagHardirq != 0) != tc.irq {
			t.Errorf("%q:\n got %+v", tc.line, ev)
		}
	}
}

// power:cpu_frequency scales a burst by the frequency it ran at over the
// highest the trace shows for the CPU: 1 ms at 2 GHz then 1 ms at 1 GHz is
// 1.5 ms of work at full speed.
func TestFrequencyScaling(t *testing.T) {
	in := `cpus=2
          <idle>-0     [000]     0.999000: cpu_frequency:        state=2000000 cpu_id=0
          <idle>-0     [000]     1.000000: sched_switch:         swapper/0:0 [120] R ==> a:10 [120]
               a-10    [000]     1.001000: cpu_frequency:        state=1000000 cpu_id=0
               a-10    [000]     1.002000: sched_switch:         a:10 [120] S ==> swapper/0:0 [120]
`
	got, err := ParseInput("f.txt", []byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if got.NrCPUs != 2 || len(got.Freqs) != 2 || got.Freqs[1] != (trace.Frequency{TS: 1001000000, CPU: 0, KHz: 1000000}) {
		t.Fatalf("input %+v", got)
	}
	tr, err := Reconstruct(got.Events, Options{NrCPUs: got.NrCPUs, Freqs: got.Freqs})
	if err != nil {
		t.Fatal(err)
	}
	if s := tr.Tasks[0].Steps[0]; s != (Step{Kind: Run, D: 1500000}) {
		t.Errorf("burst %+v, want 1.5 ms of work", s)
	}
}
