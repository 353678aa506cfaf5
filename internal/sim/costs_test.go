package sim

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/schedlab/schedlab/internal/costmodel"
	"github.com/schedlab/schedlab/internal/engine"
)

// The cost model's formulas are the ones the simulation charges: a
// parameter changed in a costs file reaches the run through the one path
// (costmodel.Resolve → costmodel.Compile → the kernel's and the workload's
// table) and moves a simulated result, rq_cpu_time, by the amount the
// formula gives.
//
// The machine has a little CPU (capacity 512: work takes twice as long
// there, costmodel.ScaleWork) and hackbench runs confined to it, so every
// task's CPU time is on that CPU. Costs that depend on the schedule (the
// balancer's, the wakeup path's, cache-line reads) are set to 0 in both
// runs and the spread is off, so the CPU time is the program's own work —
// which does not depend on the schedule: every system call is paid once,
// however often it blocks — plus what the changed parameter adds.

const littleCPUMachine = `name: big-little
arch: x86
cpus:
  - {cpu: 0, core: 0, cluster: 0, llc: 0, package: 0, node: 0, capacity: 1024, freq_domain: 0}
  - {cpu: 1, core: 1, cluster: 1, llc: 0, package: 0, node: 0, capacity: 512, freq_domain: 1}
costs:
  base: zen3-2s-nps1
`

// scheduleCosts are the parameters whose charges depend on the schedule.
var scheduleCosts = []string{
	"context_switch_ns", "context_switch_mm_ns", "remote_enqueue_ns", "sis_scan_cpu_ns",
	"lb_base_ns", "lb_group_ns", "lb_cpu_ns", "lb_find_busiest_cpu_ns", "lb_task_ns", "lb_migrate_ns",
	"nohz_cpu_ns", "stopper_switch_ns", "uba_base_ns", "uba_cfs_rq_ns", "cpufreq_update_ns", "cpufreq_update_cpu_ns",
	"line_same_llc_ns", "line_other_llc_ns", "line_other_node_ns", "task_state_bytes",
}

// costRun runs hackbench on the little CPU with the costs file body
// (on top of the machine's zeroed schedule costs) and returns its record
// and the run's cost table.
func costRun(t *testing.T, dir, name, costs string, args ...string) (*Result, *costmodel.Table, *Built) {
	t.Helper()
	var m strings.Builder
	m.WriteString(littleCPUMachine)
	for _, k := range scheduleCosts {
		fmt.Fprintf(&m, "  %s: 0\n", k)
	}
	machine := filepath.Join(dir, "machine.yaml")
	if err := os.WriteFile(machine, []byte(m.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, name+".yaml")
	if err := os.WriteFile(file, []byte(costs), 0o644); err != nil {
		t.Fatal(err)
	}
	// No jitter, and no pipe->mutex spin (whose hold grows with the
	// call's cost): the one cost moved is all that moves.
	b, err := Build(Config{Machine: machine, CostsFile: file, CPUs: "1", Seed: 1,
		Sysctls: []string{"model_cost_jitter_pct=0", "model_kobj_locks=0"}, Tool: "hackbench", Args: args})
	if err != nil {
		t.Fatal(err)
	}
	tab := b.Kernel.Costs
	res, err := b.Run(Options{})
	if err != nil {
		t.Fatal(err)
	}
	return res, &tab, b
}

func TestPipeWriteCostReachesTheRun(t *testing.T) {
	dir := t.TempDir()
	const groups, fds, loops = 1, 5, 40
	args := []string{"-p", "-T", "-g", fmt.Sprint(groups), "-f", fmt.Sprint(fds), "-l", fmt.Sprint(loops)}
	a, tabA, _ := costRun(t, dir, "a", "", args...)
	b, tabB, bb := costRun(t, dir, "b", "pipe_write_ns: 1575\n", args...)
	if got := tabB.Syscalls.PipeWrite - tabA.Syscalls.PipeWrite; got != 1000 {
		t.Fatalf("the costs file moved pipe_write_ns by %v, want 1000 ns", got)
	}
	// hackbench's pipe writes: every sender writes each receiver loops
	// 100-byte messages; every child writes one byte to the ready pipe;
	// the parent writes one to the wake pipe.
	writes := groups*fds*fds*loops + groups*2*fds + 1
	rq := bb.Kernel.Rqs[1]
	per := costmodel.ScaleWork(tabB.Syscalls.PipeWriteCost(100)-tabA.Syscalls.PipeWriteCost(100), rq.CPUCapacityOrig, rq.FreqScale)
	if per != 2000 {
		t.Fatalf("1000 ns more of work on a capacity-512 CPU at full frequency is %v, want 2 µs", per)
	}
	want := int64(writes) * int64(per)
	got := int64(b.Schedstat.CPU.RqCPUTime) - int64(a.Schedstat.CPU.RqCPUTime)
	// Work is accounted in whole ns: a preempted segment may leave up to
	// 1 ns behind, once per switch.
	slack := int64(a.Schedstat.CPU.SchedCount + b.Schedstat.CPU.SchedCount)
	t.Logf("%d pipe writes: rq_cpu_time %d → %d ns, +%d (formula %d, slack %d)", writes, a.Schedstat.CPU.RqCPUTime, b.Schedstat.CPU.RqCPUTime, got, want, slack)
	if math.Abs(float64(got-want)) > float64(slack) {
		t.Errorf("pipe_write_ns +1000 moved rq_cpu_time by %d ns, the formula says %d × %v = %d", got, writes, per, want)
	}
}

// A context switch costs context_switch_ns of work to the task switched
// in, on every switch the run counts (the schedule may differ between the
// runs; the program's own work does not).
func TestContextSwitchCostReachesTheRun(t *testing.T) {
	dir := t.TempDir()
	args := []string{"-p", "-T", "-g", "1", "-f", "4", "-l", "30"}
	a, _, _ := costRun(t, dir, "a", "", args...)
	b, tabB, bb := costRun(t, dir, "b", "context_switch_ns: 700\n", args...)
	if tabB.ContextSwitch != 700 {
		t.Fatalf("context_switch_ns %v, want 700", tabB.ContextSwitch)
	}
	rq := bb.Kernel.Rqs[1]
	switches := int64(rq.Costs.ContextSwitches)
	if switches == 0 {
		t.Fatal("no context switches counted")
	}
	want := switches * int64(costmodel.ScaleWork(tabB.ContextSwitch, rq.CPUCapacityOrig, rq.FreqScale))
	got := int64(b.Schedstat.CPU.RqCPUTime) - int64(a.Schedstat.CPU.RqCPUTime)
	slack := int64(a.Schedstat.CPU.SchedCount + b.Schedstat.CPU.SchedCount)
	t.Logf("%d switches: rq_cpu_time +%d ns (formula %d, slack %d)", switches, got, want, slack)
	if math.Abs(float64(got-want)) > float64(slack) {
		t.Errorf("context_switch_ns 700 moved rq_cpu_time by %d ns, the formula says %d × %v = %d", got, switches, 2*tabB.ContextSwitch, want)
	}
	if d := b.Sim.SimulatedNs - a.Sim.SimulatedNs; d <= 0 {
		t.Errorf("the run with dearer switches ended %v earlier", engine.Time(-d))
	}
}

// The pipe's cache-line transfers (model_kobj_lines, package kobj): with
// both ends of every pipe on one CPU nothing moves, so the run is
// byte-identical with the model on and off; with the tasks on two CPUs of
// different CCXs (zen3-2s-nps1 CPUs 0 and 16) every call whose other end
// ran on the other CPU pays line_other_llc_ns per line, so the run charges
// more kernel time and takes longer. (kobj's TestPipeLines derives the
// charge of each call.)
func TestKobjLinesEffect(t *testing.T) {
	run := func(cpus, lines string) *Result {
		t.Helper()
		b, err := Build(Config{Machine: "zen3-2s-nps1", CPUs: cpus, Seed: 1,
			Sysctls: []string{"model_kobj_lines=" + lines}, Tool: "hackbench", Args: []string{"-p", "-T", "-g", "1", "-f", "4", "-l", "200"}})
		if err != nil {
			t.Fatal(err)
		}
		res, err := b.Run(Options{})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	on, off := run("0", "1"), run("0", "0")
	if on.Output != off.Output || on.Schedstat.CPU.RqCPUTime != off.Schedstat.CPU.RqCPUTime {
		t.Errorf("one CPU: the line model changed the run:\n%s\nvs\n%s", on.Output, off.Output)
	}
	on, off = run("0,16", "1"), run("0,16", "0")
	tOn, _ := on.Metrics.Lookup("time_s")
	tOff, _ := off.Metrics.Lookup("time_s")
	if !(tOn.Value > tOff.Value) || !(on.Schedstat.CPU.RqCPUTime > off.Schedstat.CPU.RqCPUTime) {
		t.Errorf("two CCXs: time %v s and CPU time %d ns with lines, %v s and %d ns without; want both larger with", tOn.Value, on.Schedstat.CPU.RqCPUTime, tOff.Value, off.Schedstat.CPU.RqCPUTime)
	}
	t.Logf("two CCXs: %.4f s with lines, %.4f s without", tOn.Value, tOff.Value)
}
