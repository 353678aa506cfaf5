package observe

import (
	"bytes"
	"github.com/schedlab/schedlab/internal/kernels"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/schedlab/schedlab/internal/cpumask"
	"github.com/schedlab/schedlab/internal/engine"
	"github.com/schedlab/schedlab/internal/sched"
	"github.com/schedlab/schedlab/internal/schedstat"
	"github.com/schedlab/schedlab/internal/topology"
	"github.com/schedlab/schedlab/internal/trace"
)

// pingPong builds a kernel with pairs of tasks that wake each other: each
// runs 50 µs, wakes its partner with WF_SYNC and blocks, as a pipe
// ping-pong does, plus a hog so that preemptions happen.
func pingPong(t testing.TB, machine string, pairs int, attach func(*sched.Kernel)) *sched.Kernel {
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
	if err := schedstat.Format(&b, after, SchedstatVersion(kernels.V619)); err != nil {
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
