package sim

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/schedlab/schedlab/internal/observe"
	"github.com/schedlab/schedlab/internal/sched"
	"github.com/schedlab/schedlab/internal/testutil"
	"github.com/schedlab/schedlab/internal/trace"
)

// tracedHackbench runs a simulated hackbench on zen3-2s-nps1 with the
// tracer writing to w (nil: untraced) and returns the run's event count.
func tracedHackbench(t testing.TB, args []string, mk func(k *sched.Kernel) trace.Writer) *Result {
	cfg := Config{Machine: "zen3-2s-nps1", Seed: 1, Tool: "hackbench", Args: args}
	var opt Options
	if mk != nil {
		opt.Observers = []Observer{func(k *sched.Kernel) (func() error, error) {
			tr := observe.AttachTracer(k, mk(k))
			return tr.Close, nil
		}}
	}
	res, err := Run(cfg, opt)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestHackbenchTraceDatMatchesText traces a simulated hackbench into a
// trace.dat and an ftrace text file at once and checks that trace-cmd
// report prints the same events: the same count and, CPU by CPU, the same
// timestamp, task and event for every one.
func TestHackbenchTraceDatMatchesText(t *testing.T) {
	dir := t.TempDir()
	datPath := filepath.Join(dir, "trace.dat")
	var text bytes.Buffer
	res := tracedHackbench(t, []string{"-p", "-T", "-l", "20", "-g", "2"}, func(k *sched.Kernel) trace.Writer {
		tw, err := trace.NewTextWriter(&text, trace.TextOptions{NrCPUs: k.NrCPUs(), TempDir: dir})
		if err != nil {
			t.Fatal(err)
		}
		f, err := os.Create(datPath)
		if err != nil {
			t.Fatal(err)
		}
		dw, err := trace.NewDatWriter(f, trace.DatOptions{NrCPUs: k.NrCPUs(), TempDir: dir})
		if err != nil {
			t.Fatal(err)
		}
		return observe.Multi{tw, dw, closer{f}}
	})
	evs, err := trace.ReadText(bytes.NewReader(text.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	checkHackbenchTrace(t, evs, res, 2, 20)
	cmd := exec.Command(testutil.NeedTool(t, "trace-cmd"), "report", "-i", datPath)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("trace-cmd report: %v\n%s", err, stderr.String())
	}
	if strings.TrimSpace(stderr.String()) != "" {
		t.Errorf("trace-cmd report warns: %s", stderr.String())
	}
	// trace-cmd merges the per-CPU buffers by timestamp; events of
	// different CPUs at the same nanosecond may come out in either order,
	// so compare CPU by CPU, where the order is the buffer's.
	perCPU := map[int][]string{}
	var lines []string
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		l := sc.Text()
		if !strings.Contains(l, ": sched_") {
			continue
		}
		m := cpuRE.FindStringSubmatch(l)
		if m == nil {
			t.Fatalf("trace-cmd line without a CPU: %q", l)
		}
		cpu, _ := strconv.Atoi(m[1])
		perCPU[cpu] = append(perCPU[cpu], l)
		lines = append(lines, l)
	}
	if len(lines) != len(evs) {
		t.Fatalf("trace-cmd report shows %d events, the text trace %d", len(lines), len(evs))
	}
	// trace-cmd prints "comm-pid [cpu] seconds: event: fields"; compare
	// pid, CPU, microsecond timestamp and event name of every event with
	// the text trace's.
	next := map[int]int{}
	for i, e := range evs {
		cpu := int(e.CPU)
		j := next[cpu]
		next[cpu]++
		if j >= len(perCPU[cpu]) {
			t.Fatalf("event %d: cpu%d has only %d events in trace-cmd's report", i, cpu, len(perCPU[cpu]))
		}
		l := perCPU[cpu][j]
		ts := e.TS / 1000
		want := []string{
			fmt.Sprintf("-%d ", e.Cur.Pid),
			fmt.Sprintf("%d.%06d:", ts/1000000, ts%1000000),
			": " + e.Type.String() + ":",
		}
		for _, w := range want {
			if !strings.Contains(l, w) {
				t.Errorf("event %d (cpu%d #%d): trace-cmd line %q lacks %q", i, cpu, j, l, w)
				break
			}
		}
	}
	// Every task here is nice 0: the sched plugin prints p->prio, 120, as
	// "comm:pid [120]" (twice on a switch), the print fmts as prio=120.
	for i, l := range lines {
		want := 1
		switch {
		case strings.Contains(l, ": sched_switch:"):
			want = 2
		case strings.Contains(l, ": sched_process_fork:"):
			want = 0 // no prio field
		}
		_, payload, _ := strings.Cut(l, ": sched_")
		if got := strings.Count(payload, " [120]") + strings.Count(payload, " prio=120 "); got != want {
			t.Fatalf("event %d: trace-cmd line %q shows prio 120 %d times, want %d", i, l, got, want)
		}
	}
}

// cpuRE finds the CPU of a trace-cmd report line.
var cpuRE = regexp.MustCompile(`\[(\d{3})\]`)

// checkHackbenchTrace checks what the trace of an rt-tests hackbench run
// in thread mode must contain, from its arguments and the run's counters:
// the main thread (pid 1, forked by the launcher) creates groups × 2 × fds
// threads (fds senders and fds receivers per group); every one of them is
// forked once (sched_process_fork with the main thread as parent, then
// sched_wakeup_new) and exits once, after it last ran; every sched_wakeup
// follows an unanswered sched_waking of the same task, and all are answered
// once the run is over; the wakings are the wakeups ttwu_stat counted
// (ttwu_count) and the switches to a task are sched_info_arrive's pcount.
// Reference: rt-tests hackbench.c (create_worker, group); core.c:
// try_to_wake_up, ttwu_stat, wake_up_new_task, __schedule; stats.h:
// sched_info_arrive (v6.19).
func checkHackbenchTrace(t *testing.T, evs []trace.Event, res *Result, groups, fds int) {
	t.Helper()
	tasks := 1 + groups*2*fds
	forks, news, exits := map[int32]int{}, map[int32]int{}, map[int32]int{}
	waking := map[int32]int{}
	counts := map[trace.EventType]uint64{}
	var toTask uint64
	exited := map[int32]bool{}
	for i, e := range evs {
		counts[e.Type]++
		if exited[e.Cur.Pid] && e.Cur.Pid != 0 {
			t.Fatalf("event %d: pid %d runs after its exit", i, e.Cur.Pid)
		}
		switch e.Type {
		case trace.SchedProcessFork:
			forks[e.Next.Pid]++
			if e.Next.Pid != 1 && e.Task.Pid != 1 {
				t.Errorf("event %d: pid %d forked by pid %d, want the main thread", i, e.Next.Pid, e.Task.Pid)
			}
		case trace.SchedWakeupNew:
			news[e.Task.Pid]++
		case trace.SchedProcessExit:
			exits[e.Task.Pid]++
		case trace.SchedWaking:
			if waking[e.Task.Pid] != 0 {
				t.Fatalf("event %d: second sched_waking of pid %d before its sched_wakeup", i, e.Task.Pid)
			}
			waking[e.Task.Pid]++
		case trace.SchedWakeup:
			if waking[e.Task.Pid] == 0 {
				t.Fatalf("event %d: sched_wakeup of pid %d without a sched_waking", i, e.Task.Pid)
			}
			waking[e.Task.Pid]--
		case trace.SchedSwitch:
			if e.Next.Pid != 0 {
				toTask++
				if news[e.Next.Pid] == 0 {
					t.Fatalf("event %d: pid %d switched in before its sched_wakeup_new", i, e.Next.Pid)
				}
			}
			if e.PrevState&trace.ExitDead != 0 {
				exited[e.Task.Pid] = true
			}
		}
	}
	if len(forks) != tasks || len(news) != tasks || len(exits) != tasks {
		t.Errorf("%d tasks forked, %d woken new, %d exited; want %d each", len(forks), len(news), len(exits), tasks)
	}
	for pid := range forks {
		if forks[pid] != 1 || news[pid] != 1 || exits[pid] != 1 {
			t.Errorf("pid %d: %d forks, %d wakeup_new, %d exits", pid, forks[pid], news[pid], exits[pid])
		}
	}
	if counts[trace.SchedWaking] != counts[trace.SchedWakeup] {
		t.Errorf("%d wakings, %d wakeups: every wakeup is over when the run is", counts[trace.SchedWaking], counts[trace.SchedWakeup])
	}
	if c := res.Schedstat.CPU; counts[trace.SchedWaking] != c.TtwuCount || toTask != c.Pcount {
		t.Errorf("%d wakings and %d switches to a task in the trace; schedstat ttwu_count %d, pcount %d",
			counts[trace.SchedWaking], toTask, c.TtwuCount, c.Pcount)
	}
	// Each sender writes loops messages to each of the fds receivers of
	// its group, so a receiver blocks and is woken at least once in all.
	if counts[trace.SchedWaking] < uint64(groups*fds) {
		t.Errorf("%d wakings for %d receivers", counts[trace.SchedWaking], groups*fds)
	}
}

type closer struct{ f *os.File }

func (c closer) Write(trace.Event) error { return nil }
func (c closer) Close() error            { return c.f.Close() }

// BenchmarkHackbenchTracing measures a 256-CPU hackbench with and without
// a trace.dat being written: the tracing overhead users feel (the issue's
// target is under 2× the untraced wall time).
func BenchmarkHackbenchTracing(b *testing.B) {
	args := []string{"-p", "-T", "-l", "500", "-g", "4"}
	b.Run("untraced", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			res := tracedHackbench(b, args, nil)
			b.ReportMetric(float64(res.Sim.Events), "events/op")
		}
	})
	b.Run("trace.dat", func(b *testing.B) {
		dir := b.TempDir()
		for i := 0; i < b.N; i++ {
			tracedHackbench(b, args, func(k *sched.Kernel) trace.Writer {
				dw, err := trace.NewDatWriter(io.Discard, trace.DatOptions{NrCPUs: k.NrCPUs(), TempDir: dir})
				if err != nil {
					b.Fatal(err)
				}
				return dw
			})
		}
	})
	b.Run("ftrace-text", func(b *testing.B) {
		dir := b.TempDir()
		for i := 0; i < b.N; i++ {
			tracedHackbench(b, args, func(k *sched.Kernel) trace.Writer {
				tw, err := trace.NewTextWriter(io.Discard, trace.TextOptions{NrCPUs: k.NrCPUs(), TempDir: dir})
				if err != nil {
					b.Fatal(err)
				}
				return tw
			})
		}
	})
}
