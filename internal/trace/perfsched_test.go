package trace

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/schedlab/schedlab/internal/golden"
)

// perfScenario is a hand-made two-CPU trace whose perf sched numbers are
// worked out in the comments of TestLatencyGolden and TestTimehistGolden.
// Tasks: A = worker:100, B = worker:101, C = sh:200. Times in ns.
func perfScenario() []Event {
	const s = 1_000_000_000
	A := task("worker", 100, 120)
	B := task("worker", 101, 120)
	C := task("sh", 200, 120)
	return []Event{
		Waking(s+0, 0, idleTask(0), A, 0),                          // 1.000000 A woken
		Wakeup(s+10_000, 0, idleTask(0), A, 0),                     // ignored: sched_waking is present
		Switch(s+500_000, 0, idleTask(0), 0, A),                    // 1.000500 A in (waited 0.5 ms)
		Waking(s+1_000_000, 0, A, B, 1),                            // 1.001000 B woken
		Switch(s+1_200_000, 1, idleTask(1), 0, B),                  // 1.001200 B in (0.2 ms)
		WakeupNew(s+2_000_000, 0, A, C, 0),                         // 1.002000 C new
		Switch(s+3_000_000, 0, A, TaskInterruptible, C),            // 1.003000 A sleeps after 2.5 ms; C in (1 ms)
		Waking(s+4_000_000, 1, B, A, 0),                            // 1.004000 A woken
		MigrateTask(s+4_100_000, 1, B, A, 0, 1),                    // 1.004100 A moves to CPU 1
		Switch(s+5_000_000, 1, B, Preempted, A),                    // 1.005000 B preempted after 3.8 ms; A in (1 ms)
		Switch(s+6_000_000, 1, A, TaskUninterruptible, B),          // 1.006000 A blocks after 1 ms; B in (1 ms)
		ProcessExit(s+6_900_000, 0, C, true),                       // 1.006900
		Switch(s+7_000_000, 0, C, ExitDead, idleTask(0)),           // 1.007000 C exits after 4 ms
		Switch(s+10_000_000, 1, B, TaskInterruptible, idleTask(1)), // 1.010000 B sleeps after 4 ms
	}
}

// TestLatencyGolden pins the perf sched latency table.
//
// Reference: tools/perf/builtin-sched.c latency_switch_event,
// latency_wakeup_event, add_sched_in_event, perf_sched__merge_lat,
// output_lat_thread (mainline, v6.19 era). Worked by hand:
//   - sh:200 was woken (wakeup_new) at 1.002000 and switched in at
//     1.003000: one delay of 1.000 ms; it ran 1.003-1.007 = 4.000 ms.
//   - worker:100 waited 1.000000→1.000500 (0.5 ms) and 1.004000→1.005000
//     (1 ms); worker:101 waited 1.001000→1.001200 (0.2 ms) and, preempted
//     (R+), 1.005000→1.006000 (1 ms). Merged by comm: worker:(2), 4
//     switches, avg (0.5+1+0.2+1)/4 = 0.675 ms, max 1 ms. Both maxima are 1
//     ms; perf keeps the first seen in its descending-pid walk, pid 101's
//     (1.005000→1.006000). Runtime 2.5+1 + 3.8+4 = 11.3 ms.
//   - Sorted by avg descending: sh (1.000) before worker (0.675).
//   - TOTAL 15.3 ms over 5 switches.
//
// Column layout from output_lat_thread: "  %s:%d " or "  %s:(%d) " padded
// to 24, then "|%11.3f ms |%9u | avg:%8.3f ms | max:%8.3f ms | max start:
// %12s s | max end: %12s s".
func TestLatencyGolden(t *testing.T) {
	var buf bytes.Buffer
	if err := Latency(&buf, perfScenario(), LatencyOptions{}); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("testdata", "perf-sched-latency.txt"), buf.Bytes())

	buf.Reset()
	if err := Latency(&buf, perfScenario(), LatencyOptions{NoMerge: true, Sort: []string{"pid"}}); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("testdata", "perf-sched-latency-pids.txt"), buf.Bytes())

	if err := Latency(&buf, nil, LatencyOptions{Sort: []string{"bogus"}}); err == nil {
		t.Error("unknown sort key accepted")
	}
}

// TestTimehistGolden pins the perf sched timehist table.
//
// Reference: builtin-sched.c timehist_header, timehist_print_sample,
// timehist_update_runtime_stats, timehist_sched_change_event. One row per
// sched_switch, for the task switched out, at the switch time. Worked by
// hand (wait, delay, run in ms):
//   - 1.000500 [0000] <idle>  and 1.001200 [0001] <idle>: first switch on
//     the CPU, so no previous switch: 0, 0, 0.
//   - 1.003000 [0000] worker[100]: run 1.003-1.0005 = 2.5; delay since
//     its waking at 1.000000 to switch-in 1.000500 = 0.5; never out before,
//     wait 0.
//   - 1.005000 [0001] worker[101]: run 3.8, delay 0.2, wait 0.
//   - 1.006000 [0001] worker[100]: run 1.0; delay 1.004→1.005 = 1.0; wait
//     from its switch-out at 1.003 to switch-in at 1.005 = 2.0.
//   - 1.007000 [0000] sh[200]: run 4.0, delay 1.002→1.003 = 1.0, wait 0.
//   - 1.010000 [0001] worker[101]: run 4.0; preempted at 1.005, so delay
//     and wait are both 1.005→1.006 = 1.0.
//
// Row layout: "%15s [%04d] " + " %-30s " + three "%6lu.%03lu ".
func TestTimehistGolden(t *testing.T) {
	var buf bytes.Buffer
	if err := Timehist(&buf, perfScenario()); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("testdata", "perf-sched-timehist.txt"), buf.Bytes())
}

// TestPerfSchedOnSynth runs both summaries over a long synthetic stream:
// one timehist row per switch, and latency's count equals the number of
// switch-ins of non-idle tasks that had been seen waiting.
func TestPerfSchedOnSynth(t *testing.T) {
	evs := synthEvents(20000, 13, 4)
	var buf bytes.Buffer
	if err := Timehist(&buf, evs); err != nil {
		t.Fatal(err)
	}
	switches := 0
	for _, ev := range evs {
		if ev.Type == SchedSwitch {
			switches++
		}
	}
	if rows := strings.Count(buf.String(), "\n") - 3; rows != switches {
		t.Errorf("timehist printed %d rows for %d switches", rows, switches)
	}
	buf.Reset()
	if err := Latency(&buf, evs, LatencyOptions{}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), "INFO:") {
		t.Errorf("consistent stream reported problems:\n%s", buf.String())
	}
}

// LatencyOptions.SetUp: a set-up task's sched_wakeup_new and first
// switch-in count no wait (perf would count both: a wakeup, and a task
// first seen); its later wakeups count as any task's. Uncounted keeps the
// row of a task that ran without a counted wait, which perf leaves out.
func TestLatencySetUp(t *testing.T) {
	idle := Task{Comm: MakeComm("swapper/0"), Prio: 120}
	a := Task{Comm: MakeComm("a"), Pid: 7, Prio: 120}
	b := Task{Comm: MakeComm("b"), Pid: 8, Prio: 120}
	evs := []Event{
		WakeupNew(1000, 0, idle, a, 0),
		Switch(3000, 0, idle, TaskRunning, a),
		Switch(4000, 0, a, TaskInterruptible, b), // b first seen switched in
		Waking(5000, 0, b, a, 0),
		Switch(9000, 0, b, TaskInterruptible, a),
	}
	row := func(s *LatencySummary, pid int32) string {
		for _, r := range s.Rows {
			if r.Pid == pid {
				return fmt.Sprintf("count %d delay %d runtime %d", r.Count, r.TotalDelay, r.Runtime)
			}
		}
		return "none"
	}
	for _, c := range []struct {
		opts LatencyOptions
		a, b string
	}{
		{LatencyOptions{NoMerge: true}, "count 2 delay 6000 runtime 1000", "count 1 delay 0 runtime 5000"},
		{LatencyOptions{NoMerge: true, SetUp: map[int32]bool{7: true, 8: true}}, "count 1 delay 4000 runtime 1000", "none"},
		{LatencyOptions{NoMerge: true, SetUp: map[int32]bool{8: true}, Uncounted: true}, "count 2 delay 6000 runtime 1000", "count 0 delay 0 runtime 5000"},
	} {
		s, err := Summarize(evs, c.opts)
		if err != nil {
			t.Fatal(err)
		}
		if ga, gb := row(s, 7), row(s, 8); ga != c.a || gb != c.b {
			t.Errorf("%+v: a %s, b %s; want a %s, b %s", c.opts, ga, gb, c.a, c.b)
		}
	}
}
