package trace

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/schedlab/schedlab/internal/golden"
)

func task(comm string, pid, prio int32) Task { return Task{Comm: MakeComm(comm), Pid: pid, Prio: prio} }

func idleTask(cpu int32) Task { return task(fmt.Sprintf("swapper/%d", cpu), 0, 120) }

// smallEvents covers every event type, the flag letters, state encodings,
// timestamp rounding and column overflow.
func smallEvents() []Event {
	sh := task("sh", 160, 120)
	kw := task("kworker/2:1", 75, 120)
	long := task("a-very-long-command-name", 4242, 139) // kept as "a-very-long-com"
	rt := task("migration/2", 23, 0)
	big := task("bigpid", 12345678, 100)

	var evs []Event
	evs = append(evs, Switch(7_157_935_000, 2, idleTask(2), TaskRunning, sh))
	evs = append(evs, Waking(7_158_001_400, 2, sh, kw, 2))
	ev := Wakeup(7_158_001_500, 3, idleTask(3), kw, 3) // rounds up to .158002
	ev.Flags = FlagIrqsOff | FlagNeedResched | FlagPreemptResched | FlagHardirq
	ev.PreemptCount = 0x14
	evs = append(evs, ev)
	evs = append(evs, MigrateTask(7_158_100_000, 2, sh, kw, 3, 2))
	ev = Switch(7_158_200_000, 2, sh, Preempted, kw)
	ev.Flags = FlagIrqsOff | FlagBHOff | FlagNeedReschedLazy
	evs = append(evs, ev)
	evs = append(evs, ProcessFork(7_158_300_999, 3, long, task("a-very-long-command-name", 4243, 139)))
	evs = append(evs, WakeupNew(7_158_301_000, 3, long, task("a-very-long-command-name", 4243, 139), 3))
	ev = Switch(7_158_400_000, 2, kw, TaskUninterruptible, rt)
	ev.Flags = FlagNMI | FlagHardirq | FlagSoftirq
	ev.PreemptCount = 0xf1
	evs = append(evs, ev)
	ev = Switch(7_158_500_000, 2, rt, TaskInterruptible|TaskUninterruptible, sh)
	ev.Flags = FlagSoftirq | FlagNeedResched | FlagNeedReschedLazy | FlagPreemptResched
	ev.PreemptCount = 0
	evs = append(evs, ev)
	evs = append(evs, ProcessExit(7_158_600_000, 2, sh, true))
	evs = append(evs, Switch(7_158_700_000, 2, sh, ExitDead, idleTask(2)))
	evs = append(evs, ProcessExit(7_158_800_000, 3, long, false))
	evs = append(evs, Switch(7_158_900_000, 3, long, TaskReportIdle, big))
	ev = Waking(123_456_789_012_345, 3, big, task("", 7, 120), -1)
	ev.Cur.Comm = Comm{} // a task ftrace has no cmdline for
	evs = append(evs, ev)
	return evs
}

func writeAll(t testing.TB, w Writer, evs []Event) {
	t.Helper()
	for _, ev := range evs {
		if err := w.Write(ev); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

func textOf(t testing.TB, evs []Event, opts TextOptions) []byte {
	t.Helper()
	var buf bytes.Buffer
	opts.TempDir = t.TempDir()
	w, err := NewTextWriter(&buf, opts)
	if err != nil {
		t.Fatal(err)
	}
	writeAll(t, w, evs)
	return buf.Bytes()
}

// TestTextGolden pins the ftrace text byte for byte.
//
// Reference: kernel/trace/trace_output.c:trace_print_context and
// trace_print_lat_fmt, kernel/trace/trace.c:print_func_help_header_irq,
// include/trace/events/sched.h TP_printk (all v6.19). The golden file was
// checked by hand against those: comm right-aligned in 16 columns, "-", pid
// left-aligned in 7 ("bigpid-12345678" overflows it by one), " [%03d] ",
// five flag characters, the timestamp as " %5lu.%06lu" of
// (ns+500)/1000 microseconds (7.158001500 s prints 7.158002, and 123456 s
// widens the seconds field), ": name: " and the payload. Flag lines: d..2.
// for a plain switch; dNh41 for irqs off, need-resched+preempt-resched,
// hardirq, preempt depth 4, migrate-disable 1; Dl.2. for irqs+BH off and
// lazy resched; .Bs.. has need-resched, lazy and preempt-resched all set
// plus softirq, and ..Z1f is NMI in hardirq (softirq ignored) with depth 1
// and migrate-disable 15; fork and exit fire with nothing set (.....). States: R+ (preempted), D,
// S|D (two bits), X, I. Pid 0 prints <idle>, a pid with no comm <...>.
func TestTextGolden(t *testing.T) {
	got := textOf(t, smallEvents(), TextOptions{NrCPUs: 4})
	golden.Check(t, filepath.Join("testdata", "ftrace-small.txt"), got)
}

func TestTextRoundTrip(t *testing.T) {
	evs := synthEvents(5000, 7, 4)
	text := textOf(t, evs, TextOptions{NrCPUs: 4})
	back, err := ReadText(bytes.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	if len(back) != len(evs) {
		t.Fatalf("read %d events, wrote %d", len(back), len(evs))
	}
	for i := range evs {
		want := evs[i]
		want.TS = ns2usecs(want.TS) * 1000 // the text keeps microseconds
		if back[i] != want {
			t.Fatalf("event %d:\n got %+v\nwant %+v", i, back[i], want)
		}
	}
	// And the text of the parsed events is the same text.
	if again := textOf(t, back, TextOptions{NrCPUs: 4}); !bytes.Equal(again, text) {
		t.Fatal("text of parsed events differs")
	}
}

func TestParseLineErrors(t *testing.T) {
	for _, line := range []string{
		"",
		"          <idle>-0       [002] d..2.     7.157935: sched_nope: x=1",
		"          <idle>-0       [002] d..2.     7.157935 sched_switch: x",
		"          <idle>-0       [002] dX.2.     7.157935: sched_waking: comm=a pid=1 prio=120 target_cpu=001",
		"              sh-160     [002] d..2.     7.157935: sched_waking: comm=a pid=x prio=120 target_cpu=001",
		"              sh-160     [002] d..2.     7.157935: sched_waking: comm=0123456789abcdef pid=1 prio=120 target_cpu=001",
		"              sh-160     [002] d..2.     7.157935: sched_switch: prev_comm=a prev_pid=1 prev_prio=1 prev_state=Q ==> next_comm=b next_pid=2 next_prio=3",
		"              sh-160     [002] d..2.     7.15793: sched_waking: comm=a pid=1 prio=120 target_cpu=001",
	} {
		if ev, err := ParseLine([]byte(line)); err == nil {
			t.Errorf("ParseLine(%q) = %+v, want an error", line, ev)
		}
	}
	// Errors from the reader name the line.
	_, err := ReadText(strings.NewReader("# tracer: nop\n#\nnot a trace line at all, no\n"))
	if err == nil || !strings.HasPrefix(err.Error(), "line 3: ") {
		t.Fatalf("error %v should name line 3", err)
	}
}

func TestTaskState(t *testing.T) {
	for _, c := range []struct {
		s    TaskState
		text string
		char byte
	}{
		{TaskRunning, "R", 'R'},
		{Preempted, "R+", 'R'},
		{TaskInterruptible, "S", 'S'},
		{TaskUninterruptible, "D", 'D'},
		{TaskInterruptible | TaskUninterruptible, "S|D", 'S'},
		{TaskReportIdle, "I", 'I'},
		{TaskParked | TaskReportMax, "P+", 'P'},
		{ExitZombie, "Z", 'Z'},
		{TaskStopped | TaskTraced, "T|t", 'T'},
	} {
		if got := c.s.String(); got != c.text {
			t.Errorf("%#x prints %q, want %q", int64(c.s), got, c.text)
		}
		if got := c.s.Char(); got != c.char {
			t.Errorf("%#x char %q, want %q", int64(c.s), got, c.char)
		}
		back, err := ParseTaskState(c.text)
		if err != nil || back != c.s {
			t.Errorf("ParseTaskState(%q) = %#x, %v", c.text, int64(back), err)
		}
	}
}

func TestFilter(t *testing.T) {
	evs := synthEvents(3000, 3, 4)
	f, err := ParseFilter("sched_switch, sched:sched_wakeup", evs[100].TS, evs[2000].TS)
	if err != nil {
		t.Fatal(err)
	}
	var want []Event
	for _, ev := range evs[100:2000] {
		if ev.Type == SchedSwitch || ev.Type == SchedWakeup {
			want = append(want, ev)
		}
	}
	text := textOf(t, evs, TextOptions{NrCPUs: 4, Filter: f})
	got, err := ReadText(bytes.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("filter kept %d events, want %d", len(got), len(want))
	}
	if !bytes.Contains(text, []byte(fmt.Sprintf("entries-written: %d/%d ", len(want), len(want)))) {
		t.Error("header does not count the filtered entries")
	}
	// The same filter applies to trace.dat and JSON.
	dat := datOf(t, evs, DatOptions{NrCPUs: 4, Filter: f})
	if n := len(decodeDat(t, dat)); n != len(want) {
		t.Errorf("trace.dat kept %d events, want %d", n, len(want))
	}
	if _, err := ParseFilter("sched_bogus", 0, 0); err == nil {
		t.Error("unknown event accepted")
	}
	if _, err := ParseFilter("", 5, 5); err == nil {
		t.Error("empty window accepted")
	}
}

func chromeOf(t testing.TB, evs []Event, opts ChromeOptions) []byte {
	var buf bytes.Buffer
	writeAll(t, NewChromeWriter(&buf, opts), evs)
	return buf.Bytes()
}

func TestChromeGolden(t *testing.T) {
	golden.Check(t, filepath.Join("testdata", "chrome-small.json"), chromeOf(t, smallEvents(), ChromeOptions{NrCPUs: 4}))
}

func TestChromeJSON(t *testing.T) {
	evs := synthEvents(4000, 11, 4)
	out := chromeOf(t, evs, ChromeOptions{NrCPUs: 4})
	var doc struct {
		TraceEvents []struct {
			Name string            `json:"name"`
			Ph   string            `json:"ph"`
			TS   float64           `json:"ts"`
			Dur  float64           `json:"dur"`
			Pid  int               `json:"pid"`
			Tid  int               `json:"tid"`
			Args map[string]any    `json:"args"`
			X    map[string]string `json:"-"`
		} `json:"traceEvents"`
		DisplayTimeUnit string `json:"displayTimeUnit"`
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatalf("invalid JSON: %v", err)
	}
	if doc.DisplayTimeUnit != "ns" {
		t.Errorf("displayTimeUnit %q", doc.DisplayTimeUnit)
	}
	// Every switch to a non-idle task opens a slice, and each is closed by
	// the next switch on that CPU or at Close.
	var switchesIn, wakeups int
	for _, ev := range evs {
		switch ev.Type {
		case SchedSwitch:
			if ev.Next.Pid != 0 {
				switchesIn++
			}
		case SchedWaking, SchedWakeup, SchedWakeupNew:
			wakeups++
		}
	}
	var slices, instants, threads int
	busy := map[int][]float64{}
	for _, e := range doc.TraceEvents {
		switch e.Ph {
		case "X":
			slices++
			busy[e.Tid] = append(busy[e.Tid], e.TS, e.TS+e.Dur)
		case "i":
			instants++
		case "M":
			if e.Name == "thread_name" {
				threads++
			}
		}
	}
	if slices != switchesIn || instants != wakeups || threads != 4 {
		t.Errorf("slices %d (want %d), instants %d (want %d), CPU tracks %d", slices, switchesIn, instants, wakeups, threads)
	}
	// Slices on one CPU never overlap.
	for cpu, iv := range busy {
		for i := 2; i < len(iv); i += 2 {
			if iv[i] < iv[i-1]-1e-6 {
				t.Fatalf("CPU %d: slice at %.3f starts before the previous ends at %.3f", cpu, iv[i], iv[i-1])
			}
		}
	}
}

// TestDeterministic writes the same stream twice with each writer and
// compares hashes of the whole output.
func TestDeterministic(t *testing.T) {
	evs := synthEvents(3000, 5, 4)
	outs := func() [3][32]byte {
		return [3][32]byte{
			sha256.Sum256(textOf(t, evs, TextOptions{NrCPUs: 4})),
			sha256.Sum256(datOf(t, evs, DatOptions{NrCPUs: 4})),
			sha256.Sum256(chromeOf(t, evs, ChromeOptions{NrCPUs: 4})),
		}
	}
	if a, b := outs(), outs(); a != b {
		t.Fatal("two identical runs gave different output")
	}
}
