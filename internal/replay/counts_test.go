package replay_test

import (
	"fmt"
	"path/filepath"
	"sort"
	"testing"

	"github.com/schedlab/schedlab/internal/replay"
	"github.com/schedlab/schedlab/internal/trace"
)

// counts are perf sched latency's counts by pid, and the switch-ins after a
// preemption among them (a switch-out in state R, then a switch-in): those
// are the replay kernel's own decisions, the rest are waits after a wakeup.
func counts(t *testing.T, evs []trace.Event, setUp map[int32]bool) (count, preempted map[int32]int) {
	t.Helper()
	s, err := trace.Summarize(evs, trace.LatencyOptions{NoMerge: true, SetUp: setUp})
	if err != nil {
		t.Fatal(err)
	}
	count, preempted = map[int32]int{}, map[int32]int{}
	for _, r := range s.Rows {
		count[r.Pid] = int(r.Count)
	}
	out := map[int32]bool{}
	for _, ev := range evs {
		if ev.Type != trace.SchedSwitch {
			continue
		}
		if out[ev.Next.Pid] {
			preempted[ev.Next.Pid]++
		}
		out[ev.Next.Pid] = false
		out[ev.Task.Pid] = ev.Task.Pid != 0 && ev.PrevState&0xff == 0
	}
	return count, preempted
}

// The replay's count of each task is the recording's, on a trace built so
// that the answer is known (testdata/starts.txt): tasks alive at the start
// in each way a trace first shows one, a sleep the trace shows no wakeup
// for, one task per CPU. The replay creates every task alive at the start
// with a fork at time 0; where the recording shows no such beginning (a
// task first seen running, woken, or switched in later) that fork and its
// first switch-in count no wait, and the timer wakeup that ends a replayed
// sleep the recording shows no wakeup for counts none either. Reference:
// builtin-sched.c:latency_switch_event and latency_wakeup_event (v6.19),
// which count a switch-in after a wakeup or a preemption, and the first
// switch-in of a task not seen before.
func TestReplayCountsKnown(t *testing.T) {
	path := filepath.Join("testdata", "starts.txt")
	want := map[int32]int{10: 1, 20: 1, 30: 2, 40: 1, 50: 1, 60: 2} // from the file's comment, by the rule
	for _, order := range []string{"free", "recorded"} {
		b, _ := bench(t, "hikey", "--pids", "--order", order, path)
		rec, _ := counts(t, b.Trace().Events, nil)
		if fmt.Sprint(rec) != fmt.Sprint(want) {
			t.Fatalf("the recording's counts %v, want %v: the file or trace.Summarize is off", rec, want)
		}
		if got := fmt.Sprint(b.SetUp()); got != "map[10:true 20:true 30:true]" {
			t.Errorf("set-up tasks %s, want a, b and c (d begins at the first timestamp, e and f are forked)", got)
		}
		rep, pre := counts(t, b.ReplayEvents(), b.SetUp())
		for pid, n := range pre {
			if n > 0 {
				t.Fatalf("--order %s: pid %d preempted %d times: the scenario needs a CPU per task", order, pid, n)
			}
		}
		if fmt.Sprint(rep) != fmt.Sprint(want) {
			t.Errorf("--order %s: replayed counts %v, want the recording's %v", order, rep, want)
		}
	}
}

// On real traces, in the recorded order (every recorded wakeup happens on
// a sleeping wakee, by the same waker), each task's count less its
// switch-ins after a preemption (the replay kernel's own) is the
// recording's, task by task: the real 4-CPU trace (120 tasks, tasks alive
// at its start in every state, 55 sleeps with no wakeup), and schedlab's
// own hackbench with a sleep its trace shows no wakeup for.
func TestReplayCountsReal(t *testing.T) {
	for _, path := range []string{realTracePath(t), filepath.Join("testdata", "hackbench-pipe.txt")} {
		b, res := bench(t, "hikey", "--pids", "--order", "recorded", path)
		rec, recPre := counts(t, b.Trace().Events, nil)
		rep, repPre := counts(t, b.ReplayEvents(), b.SetUp())
		var off []string
		for pid, n := range rec {
			if got := rep[pid] - repPre[pid]; got != n-recPre[pid] {
				off = append(off, fmt.Sprintf("%d: %d-%d replayed, %d-%d recorded", pid, rep[pid], repPre[pid], n, recPre[pid]))
			}
		}
		sort.Strings(off)
		if len(off) > 0 || len(rec) == 0 {
			t.Errorf("%s: %d of %d tasks' waits after a wakeup differ: %v", path, len(off), len(rec), off)
		}
		if tr := b.Trace(); tr.Stats.Sleeps[replay.ByUnknown] == 0 {
			t.Errorf("%s: no sleep ended with no wakeup: %s", path, tr.Stats.Summary())
		}
		t.Logf("%s: %d tasks; %v", path, len(rec), res.Metrics)
	}
}
