package observe

import (
	"bytes"
	"encoding/json"
	"fmt"
	"github.com/schedlab/schedlab/internal/kernels"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/schedlab/schedlab/internal/cpumask"
	"github.com/schedlab/schedlab/internal/engine"
	"github.com/schedlab/schedlab/internal/sched"
	"github.com/schedlab/schedlab/internal/schedstat"
	"github.com/schedlab/schedlab/internal/testutil"
	"github.com/schedlab/schedlab/internal/topology"
	"github.com/schedlab/schedlab/internal/trace"
)

// newKernel is a v6.19 kernel on a machine preset, seed 1.
func newKernel(t testing.TB, machine string) *sched.Kernel {
	spec, err := topology.Load(machine)
	if err != nil {
		t.Fatal(err)
	}
	topo, err := topology.Build(spec, topology.Options{})
	if err != nil {
		t.Fatal(err)
	}
	k, err := sched.New(engine.New(1), topo, sched.MustBaseline(kernels.V619))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// pingPong builds a kernel with pairs of tasks that wake each other: each
// runs 50 µs, wakes its partner with WF_SYNC and blocks, as a pipe
// ping-pong does, plus a hog so that preemptions happen.
func pingPong(t testing.TB, machine string, pairs int, attach func(*sched.Kernel)) *sched.Kernel {
	k := newKernel(t, machine)
	if attach != nil {
		attach(k)
	}
	n := k.NrCPUs()
	for i := 0; i < pairs; i++ {
		var a, b *sched.Task
		mk := func(self **sched.Task, other **sched.Task, first bool) sched.Program {
			step := 0
			return sched.ProgramFunc(func(k *sched.Kernel, t *sched.Task) sched.Op {
				step++
				if step == 1 && !first {
					return sched.Block()
				}
				if step%2 == 1 || (first && step == 1) {
					return sched.Run(50 * engine.Microsecond)
				}
				k.WakeUp(*other, sched.WFSync)
				return sched.Block()
			})
		}
		cpu := cpumask.CPU(i % n)
		b, _ = k.Fork(sched.TaskSpec{Comm: "pong", CPU: cpu, Prog: mk(&b, &a, false)})
		a, _ = k.Fork(sched.TaskSpec{Comm: "ping", CPU: cpu, Prog: mk(&a, &b, true)})
	}
	hog := 0
	k.Fork(sched.TaskSpec{Comm: "hog", CPU: 0, Prog: sched.ProgramFunc(func(k *sched.Kernel, t *sched.Task) sched.Op {
		hog++
		if hog > 3 {
			return sched.Exit()
		}
		return sched.Run(20 * engine.Millisecond)
	})})
	return k
}

func TestTraceFromSimulation(t *testing.T) {
	dir := t.TempDir()
	var k *sched.Kernel
	var tr *Tracer
	var text bytes.Buffer
	datPath := filepath.Join(dir, "trace.dat")
	dat, err := os.Create(datPath)
	if err != nil {
		t.Fatal(err)
	}
	k = pingPong(t, "hikey", 4, func(k *sched.Kernel) {
		tw, err := trace.NewTextWriter(&text, trace.TextOptions{NrCPUs: k.NrCPUs(), TempDir: dir})
		if err != nil {
			t.Fatal(err)
		}
		dw, err := trace.NewDatWriter(dat, trace.DatOptions{NrCPUs: k.NrCPUs(), TempDir: dir})
		if err != nil {
			t.Fatal(err)
		}
		tr = AttachTracer(k, Multi{tw, dw})
	})
	k.Eng.RunUntil(200 * engine.Millisecond)
	if err := tr.Close(); err != nil {
		t.Fatal(err)
	}
	dat.Close()
	evs, err := trace.ReadText(bytes.NewReader(text.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if uint64(len(evs)) != tr.Events() {
		t.Fatalf("text trace has %d events, tracer wrote %d", len(evs), tr.Events())
	}
	counts := map[trace.EventType]int{}
	for _, e := range evs {
		counts[e.Type]++
	}
	// What the run must contain: 4 pairs and the hog are forked (a
	// sched_process_fork and a sched_wakeup_new each); the hog exits after
	// its three 20 ms runs; the pairs wake each other all the time.
	if counts[trace.SchedProcessFork] != 9 || counts[trace.SchedWakeupNew] != 9 || counts[trace.SchedProcessExit] != 1 {
		t.Errorf("%d forks, %d wakeup_new, %d exits; want 9, 9 and 1", counts[trace.SchedProcessFork], counts[trace.SchedWakeupNew], counts[trace.SchedProcessExit])
	}
	if counts[trace.SchedWaking] < 1000 || counts[trace.SchedSwitch] < counts[trace.SchedWakeup] {
		t.Errorf("%d wakings and %d switches in 200 ms of 50 µs ping-pongs", counts[trace.SchedWaking], counts[trace.SchedSwitch])
	}
	// Every wakeup is preceded by a waking of the same task that no other
	// wakeup answered (try_to_wake_up emits sched_waking, then
	// sched_wakeup once the task is queued, possibly on another CPU after
	// an IPI); at the end only wakeups still in flight are unanswered.
	waking := map[int32]int{}
	for i, e := range evs {
		switch e.Type {
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
		}
	}
	inFlight := 0
	for _, n := range waking {
		inFlight += n
	}
	if inFlight > 8 || counts[trace.SchedWaking]-counts[trace.SchedWakeup] != inFlight {
		t.Errorf("%d wakings, %d wakeups, %d unanswered at the end", counts[trace.SchedWaking], counts[trace.SchedWakeup], inFlight)
	}
	// Each switch's prev is the task the previous switch on that CPU
	// switched in (the per-CPU switch chain is consistent).
	last := map[int32]int32{}
	for _, e := range evs {
		if e.Type != trace.SchedSwitch {
			continue
		}
		if p, ok := last[e.CPU]; ok && p != e.Task.Pid {
			t.Fatalf("cpu%d: switch from pid %d but pid %d was switched in", e.CPU, e.Task.Pid, p)
		}
		last[e.CPU] = e.Next.Pid
	}
	out, err := exec.Command(testutil.NeedTool(t, "trace-cmd"), "report", "-i", datPath).CombinedOutput()
	if err != nil {
		t.Fatalf("trace-cmd report: %v\n%s", err, out)
	}
	n := 0
	for _, line := range strings.Split(string(out), "\n") {
		if strings.Contains(line, ": sched_") {
			n++
		}
	}
	if n != len(evs) {
		t.Fatalf("trace-cmd report shows %d events, the text trace %d", n, len(evs))
	}
}

// TestSnapshotFromKernel checks the snapshot against the kernel's counters
// field by field, and against what the counters count, observed through
// the tracepoint hooks: ttwu_count is the number of sched_waking events on
// the waker's CPU (ttwu_stat runs where try_to_wake_up does, and every
// successful wakeup emits one waking), pcount the switches to a task
// (sched_info_arrive), sched_goidle at least the switches to the idle task
// (pick_next_task_idle counts every pick of idle), sched_count at least
// all switches; and the diff of two snapshots is their difference.
// Reference: core.c:try_to_wake_up, ttwu_stat, __schedule; stats.h:
// sched_info_arrive (v6.19); Documentation/scheduler/sched-stats.rst.
func TestSnapshotFromKernel(t *testing.T) {
	type counts struct{ waking, arrive, goidle uint64 }
	var n []counts
	k := pingPong(t, "hikey", 4, func(k *sched.Kernel) {
		n = make([]counts, k.NrCPUs())
		k.Hooks.Waking = func(p *sched.Task) { n[k.ThisCPU()].waking++ }
		k.Hooks.Switch = func(cpu cpumask.CPU, prev *sched.Task, _ sched.TaskState, next *sched.Task) {
			if next.IsIdleTask() {
				n[cpu].goidle++
			} else {
				n[cpu].arrive++
			}
		}
	})
	k.Eng.RunUntil(10 * engine.Millisecond)
	before := Snapshot(k)
	nBefore := append([]counts(nil), n...)
	k.Eng.RunUntil(50 * engine.Millisecond)
	after := Snapshot(k)
	if after.Timestamp != k.Jiffies() || len(after.CPUs) != k.NrCPUs() {
		t.Fatalf("snapshot at jiffies %d with %d CPUs; kernel at %d with %d", after.Timestamp, len(after.CPUs), k.Jiffies(), k.NrCPUs())
	}
	var ttwu uint64
	for i, c := range after.CPUs {
		st := &k.Rqs[i].Schedstat
		if c.CPU != cpumask.CPU(i) || c.YldCount != st.YldCount || c.SchedCount != st.SchedCount || c.SchedGoidle != st.SchedGoidle ||
			c.TtwuCount != st.TTWUCount || c.TtwuLocal != st.TTWULocal || c.RqCPUTime != st.RqCPUTime || c.RunDelay != st.RunDelay || c.Pcount != st.Pcount {
			t.Errorf("cpu%d: snapshot %+v, kernel %+v", i, c, *st)
		}
		if c.TtwuCount != n[i].waking || c.Pcount != n[i].arrive || c.SchedGoidle < n[i].goidle {
			t.Errorf("cpu%d: ttwu_count %d pcount %d sched_goidle %d; observed %d wakings, %d switches to a task, %d to idle",
				i, c.TtwuCount, c.Pcount, c.SchedGoidle, n[i].waking, n[i].arrive, n[i].goidle)
		}
		// Every switch is a __schedule call; not every call switches.
		if c.SchedCount < n[i].arrive+n[i].goidle {
			t.Errorf("cpu%d: sched_count %d, below the %d switches", i, c.SchedCount, n[i].arrive+n[i].goidle)
		}
		sds := k.Domains(i)
		if len(c.Domains) != len(sds) {
			t.Fatalf("cpu%d: %d domains in snapshot, %d in kernel", i, len(c.Domains), len(sds))
		}
		for j, d := range c.Domains {
			ks := &sds[j].Stats
			if d.Name != sds[j].T.Name || !d.Span.Equal(sds[j].T.Span) || d.TtwuWakeRemote != ks.TTWUWakeRemote ||
				d.TtwuMoveAffine != ks.TTWUMoveAffine || d.TtwuMoveBalance != ks.TTWUMoveBalance || d.AlbCount != ks.AlbCount ||
				d.SbeCount != ks.SbeCount || d.SbfCount != ks.SbfCount {
				t.Errorf("cpu%d domain %d: snapshot %+v, kernel %+v", i, j, d, *ks)
			}
			for it := 0; it < sched.CPUMaxIdleTypes; it++ {
				if d.LB[it].LbCount != ks.LbCount[it] || d.LB[it].LbBalanced != ks.LbBalanced[it] || d.LB[it].LbFailed != ks.LbFailed[it] ||
					d.LB[it].LbGained != ks.LbGained[it] || d.LB[it].LbNobusyg != ks.LbNoBusyg[it] || d.LB[it].LbNobusyq != ks.LbNoBusyq[it] {
					t.Errorf("cpu%d domain %d idle type %d: snapshot %+v, kernel lb_count %d", i, j, it, d.LB[it], ks.LbCount[it])
				}
			}
		}
		ttwu += c.TtwuCount
	}
	if ttwu < 100 {
		t.Fatalf("only %d wakeups counted", ttwu)
	}
	d, err := schedstat.Diff(before, after)
	if err != nil {
		t.Fatal(err)
	}
	if d.Elapsed != after.Timestamp-before.Timestamp || d.Elapsed == 0 {
		t.Errorf("diff over %d jiffies, snapshots %d apart", d.Elapsed, after.Timestamp-before.Timestamp)
	}
	for i, c := range d.CPUs {
		if c.TtwuCount != n[i].waking-nBefore[i].waking || c.Pcount != n[i].arrive-nBefore[i].arrive ||
			c.SchedGoidle != after.CPUs[i].SchedGoidle-before.CPUs[i].SchedGoidle || c.RunDelay != after.CPUs[i].RunDelay-before.CPUs[i].RunDelay {
			t.Errorf("cpu%d: diff %+v; observed between the snapshots %d wakings, %d switches to a task, %d to idle",
				i, c, n[i].waking-nBefore[i].waking, n[i].arrive-nBefore[i].arrive, n[i].goidle-nBefore[i].goidle)
		}
	}
	var b bytes.Buffer
	if err := schedstat.Format(&b, after, SchedstatVersion(kernels.V619)); err != nil {
		t.Fatal(err)
	}
	back, err := schedstat.Parse(&b)
	if err != nil {
		t.Fatal(err)
	}
	if len(back.CPUs) != k.NrCPUs() {
		t.Fatalf("parsed %d CPUs", len(back.CPUs))
	}
	for i := range back.CPUs {
		a, p := after.CPUs[i], back.CPUs[i]
		if p.TtwuCount != a.TtwuCount || p.Pcount != a.Pcount || p.RunDelay != a.RunDelay || p.SchedCount != a.SchedCount ||
			len(p.Domains) != len(a.Domains) {
			t.Errorf("cpu%d: the schedstat text does not round-trip: %+v, parsed %+v", i, a, p)
		}
	}
}

// TestTracePrio checks the prio of every event that records one: the
// kernel's p->prio, 120 + nice for a fair task (sched_switch prev_prio and
// next_prio, sched_waking/wakeup/wakeup_new and sched_migrate_task prio,
// sched_process_exit prio), in the ftrace text, the Chrome JSON and, where
// trace-cmd is installed, the trace.dat as trace-cmd reports it.
// Reference: include/trace/events/sched.h (v6.19) records p->prio;
// core.c:__normal_prio gives static_prio = MAX_RT_PRIO + 20 + nice.
func TestTracePrio(t *testing.T) {
	dir := t.TempDir()
	k := newKernel(t, "hikey")
	var text, chrome bytes.Buffer
	datPath := filepath.Join(dir, "trace.dat")
	dat, err := os.Create(datPath)
	if err != nil {
		t.Fatal(err)
	}
	tw, _ := trace.NewTextWriter(&text, trace.TextOptions{NrCPUs: k.NrCPUs(), TempDir: dir})
	dw, _ := trace.NewDatWriter(dat, trace.DatOptions{NrCPUs: k.NrCPUs(), TempDir: dir})
	cw := trace.NewChromeWriter(&chrome, trace.ChromeOptions{NrCPUs: k.NrCPUs()})
	tr := AttachTracer(k, Multi{tw, dw, cw})
	want := map[int32]int32{0: 120} // the idle task is nice 0 too
	// More tasks than CPUs, all forked on CPU 0, so that they wake,
	// preempt each other and migrate.
	nices := []int{0, -5, 19, 0, -5, 19, 0, -5, 19, -20, 0, -5}
	for i, nice := range nices {
		n := 0
		p, err := k.Fork(sched.TaskSpec{Comm: fmt.Sprintf("nice%d", nice), Nice: nice, CPU: 0,
			Prog: sched.ProgramFunc(func(k *sched.Kernel, t *sched.Task) sched.Op {
				n++
				switch {
				case n > 40:
					return sched.Exit()
				case n%2 == 1:
					return sched.Run(engine.Time(300+50*i) * engine.Microsecond)
				}
				return sched.Sleep(200 * engine.Microsecond)
			})})
		if err != nil {
			t.Fatal(err)
		}
		want[int32(p.PID)] = int32(120 + nice)
	}
	k.Eng.RunUntil(200 * engine.Millisecond)
	if err := tr.Close(); err != nil {
		t.Fatal(err)
	}
	dat.Close()

	evs, err := trace.ReadText(bytes.NewReader(text.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[trace.EventType]int{}
	check := func(where string, ev trace.EventType, pid, prio int32) {
		w, ok := want[pid]
		if !ok {
			t.Fatalf("%s: %v of unknown pid %d", where, ev, pid)
		}
		if prio != w {
			t.Errorf("%s: %v of pid %d has prio %d, want %d", where, ev, pid, prio, w)
		}
		seen[ev]++
	}
	for _, e := range evs {
		switch e.Type {
		case trace.SchedSwitch:
			check("text prev", e.Type, e.Task.Pid, e.Task.Prio)
			check("text next", e.Type, e.Next.Pid, e.Next.Prio)
		case trace.SchedWaking, trace.SchedWakeup, trace.SchedWakeupNew, trace.SchedMigrateTask, trace.SchedProcessExit:
			check("text", e.Type, e.Task.Pid, e.Task.Prio)
		}
	}
	for _, et := range []trace.EventType{trace.SchedSwitch, trace.SchedWaking, trace.SchedWakeup, trace.SchedWakeupNew, trace.SchedMigrateTask, trace.SchedProcessExit} {
		if seen[et] == 0 {
			t.Errorf("no %v event to check", et)
		}
	}
	for _, s := range []string{" prio=120 ", " prio=115 ", " prio=139 ", " prio=100 ", " prev_prio=115 ", " next_prio=139"} {
		if !strings.Contains(text.String(), s) {
			t.Errorf("the text trace has no %q", s)
		}
	}

	var doc struct {
		TraceEvents []struct {
			Name string
			Ph   string
			Args struct {
				Pid  *int32
				Prio *int32
			}
		}
	}
	if err := json.Unmarshal(chrome.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	nchrome := 0
	for _, e := range doc.TraceEvents {
		if e.Args.Pid != nil && e.Args.Prio != nil {
			check("chrome "+e.Ph, trace.SchedSwitch, *e.Args.Pid, *e.Args.Prio)
			nchrome++
		}
	}
	if nchrome == 0 {
		t.Error("no Chrome event with a prio")
	}

	testutil.NeedTool(t, "trace-cmd")
	// Without plugins, trace-cmd prints each event through its print fmt.
	out, err := exec.Command("trace-cmd", "report", "-N", "-i", datPath).CombinedOutput()
	if err != nil {
		t.Fatalf("trace-cmd report: %v\n%s", err, out)
	}
	fieldRE := regexp.MustCompile(`(?:^| )(?:prev_|next_)?pid=(\d+) (?:prev_|next_)?prio=(\d+)`)
	n := 0
	for _, line := range strings.Split(string(out), "\n") {
		_, payload, ok := strings.Cut(line, ": sched_")
		if !ok {
			continue
		}
		for _, m := range fieldRE.FindAllStringSubmatch(payload, -1) {
			pid, _ := strconv.Atoi(m[1])
			prio, _ := strconv.Atoi(m[2])
			check("trace-cmd", trace.SchedSwitch, int32(pid), int32(prio))
			n++
		}
	}
	if n < len(evs) {
		t.Errorf("trace-cmd report shows %d prio fields for %d events", n, len(evs))
	}
}

// TestExitGroupDead: sched_process_exit's group_dead is true only for the
// last live thread of a thread group (do_exit: group_dead =
// atomic_dec_and_test(&tsk->signal->live), v6.19), here the tasks that
// share an address space; a process of its own is always its group's last.
func TestExitGroupDead(t *testing.T) {
	k := newKernel(t, "hikey")
	var text bytes.Buffer
	tw, _ := trace.NewTextWriter(&text, trace.TextOptions{NrCPUs: k.NrCPUs(), TempDir: t.TempDir()})
	tr := AttachTracer(k, tw)
	// Three threads of one process (MM 7) that exit at 1, 2 and 3 ms, and
	// a process of its own that exits at 4 ms.
	spawn := func(comm string, mm int64, run engine.Time) {
		done := false
		_, err := k.Fork(sched.TaskSpec{Comm: comm, CPU: 0, MM: mm, Prog: sched.ProgramFunc(func(k *sched.Kernel, t *sched.Task) sched.Op {
			if done {
				return sched.Exit()
			}
			done = true
			return sched.Sleep(run)
		})})
		if err != nil {
			t.Fatal(err)
		}
	}
	spawn("thr1", 7, engine.Millisecond)
	spawn("thr2", 7, 2*engine.Millisecond)
	spawn("thr3", 7, 3*engine.Millisecond)
	spawn("proc", 0, 4*engine.Millisecond)
	k.Eng.RunUntil(10 * engine.Millisecond)
	if err := tr.Close(); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range strings.Split(text.String(), "\n") {
		if _, rest, ok := strings.Cut(l, "sched_process_exit: "); ok {
			comm, _, _ := strings.Cut(rest, " ")
			_, gd, _ := strings.Cut(rest, "group_dead=")
			got = append(got, comm+" "+gd)
		}
	}
	want := []string{"comm=thr1 false", "comm=thr2 false", "comm=thr3 true", "comm=proc true"}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("exits %v, want %v", got, want)
	}
}
