package observe

import (
	"bytes"
	"encoding/json"
	"fmt"
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
	k, err := sched.New(engine.New(1), topo, sched.MustBaseline(sched.KernelV619))
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
	if uint64(len(evs)) != tr.Events() || len(evs) < 1000 {
		t.Fatalf("text trace has %d events, tracer wrote %d", len(evs), tr.Events())
	}
	counts := map[trace.EventType]int{}
	for _, e := range evs {
		counts[e.Type]++
	}
	for _, et := range []trace.EventType{trace.SchedSwitch, trace.SchedWaking, trace.SchedWakeup, trace.SchedWakeupNew, trace.SchedProcessFork, trace.SchedProcessExit} {
		if counts[et] == 0 {
			t.Errorf("no %v events", et)
		}
	}
	// Every wakeup is preceded by a waking of the same task, and each
	// switch's next task is the previous switch's prev on that CPU's
	// following switch (the per-CPU switch chain is consistent).
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
	if _, err := exec.LookPath("trace-cmd"); err != nil {
		t.Skip("trace-cmd not installed")
	}
	out, err := exec.Command("trace-cmd", "report", "-i", datPath).CombinedOutput()
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

func TestSnapshotFromKernel(t *testing.T) {
	k := pingPong(t, "hikey", 4, nil)
	before := Snapshot(k)
	k.Eng.RunUntil(50 * engine.Millisecond)
	after := Snapshot(k)
	d, err := schedstat.Diff(before, after)
	if err != nil {
		t.Fatal(err)
	}
	var ttwu, nsched uint64
	for i := range after.CPUs {
		ttwu += after.CPUs[i].TtwuCount
		nsched += after.CPUs[i].SchedCount
		if got, want := len(after.CPUs[i].Domains), len(k.Domains(i)); got != want {
			t.Fatalf("cpu%d: %d domains in snapshot, %d in kernel", i, got, want)
		}
	}
	if ttwu == 0 || nsched == 0 {
		t.Fatalf("no activity counted: ttwu %d schedule %d", ttwu, nsched)
	}
	var b bytes.Buffer
	if err := schedstat.Format(&b, after, SchedstatVersion(sched.KernelV619)); err != nil {
		t.Fatal(err)
	}
	back, err := schedstat.Parse(&b)
	if err != nil {
		t.Fatal(err)
	}
	if back.CPUs[0].TtwuCount != after.CPUs[0].TtwuCount || len(back.CPUs) != k.NrCPUs() {
		t.Fatal("schedstat text does not round-trip")
	}
	_ = d
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

	if _, err := exec.LookPath("trace-cmd"); err != nil {
		t.Skip("trace-cmd not installed")
	}
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
