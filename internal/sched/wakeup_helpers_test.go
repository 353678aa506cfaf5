package sched

import (
	"testing"

	"github.com/schedlab/schedlab/internal/cpumask"
	"github.com/schedlab/schedlab/internal/engine"
	"github.com/schedlab/schedlab/internal/topology"
)

// rig builds machine states for the wakeup tests: tasks pinned where the
// test wants them, then time advanced so they run, sleep or sit idle.
type rig struct {
	t testing.TB
	k *Kernel
}

func newRig(t testing.TB, machine, kernel string) *rig {
	return &rig{t: t, k: newTestKernel(t, machine, kernel)}
}

// newRigSettings builds a rig with explicit settings, as booted: sd_init's
// last_balance (no BalancePhase) and a zeroed sd_llc_shared (no
// WarmLLCShared), the state the tests derive from.
func newRigSettings(t testing.TB, machine string, s Settings) *rig {
	t.Helper()
	s.BalancePhase = false
	s.WarmLLCShared = false
	return newRigAsIs(t, machine, s)
}

// newRigAsIs builds a rig with exactly the settings s.
func newRigAsIs(t testing.TB, machine string, s Settings) *rig {
	t.Helper()
	spec, err := topology.Load(machine)
	if err != nil {
		t.Fatal(err)
	}
	topo, err := topology.Build(spec, TopologyOptions(s))
	if err != nil {
		t.Fatal(err)
	}
	k, err := New(engine.New(1), topo, s)
	if err != nil {
		t.Fatal(err)
	}
	return &rig{t: t, k: k}
}

func (r *rig) cpu(c int) cpumask.CPU { return cpumask.CPU(c) }

// spawn forks a task pinned to cpu (forked from cpu, so it starts there).
func (r *rig) spawn(comm string, cpu int, nice int, policy Policy, prog Program) *Task {
	r.t.Helper()
	p, err := r.k.Fork(TaskSpec{Comm: comm, CPU: cpumask.CPU(cpu), Nice: nice, Policy: policy,
		Allowed: cpumask.Of(r.k.NrCPUs(), cpumask.CPU(cpu)), Prog: prog})
	if err != nil {
		r.t.Fatal(err)
	}
	if p.CPU() != cpumask.CPU(cpu) {
		r.t.Fatalf("%s forked onto cpu%d, want cpu%d", comm, p.CPU(), cpu)
	}
	return p
}

// hog runs forever on cpu.
func (r *rig) hog(cpu int) *Task { return r.spawn("hog", cpu, 0, SchedNormal, loop(engine.Second, 0)) }

// sleeper runs run on cpu, then blocks until the test wakes it; its
// affinity is widened to every CPU so that placement may move it.
func (r *rig) sleeper(cpu int, run engine.Time) *Task {
	return r.spawn("sleeper", cpu, 0, SchedNormal, runThenBlock(run))
}

// runThenBlock runs d once, then blocks whenever it is woken.
func runThenBlock(d engine.Time) Program {
	ran := false
	return ProgramFunc(func(k *Kernel, t *Task) Op {
		if !ran {
			ran = true
			return Run(d)
		}
		return Block()
	})
}

// unpin lets p run anywhere (sched_setaffinity to all CPUs).
func (r *rig) unpin(p *Task) {
	p.CPUsAllowed = cpumask.Full(r.k.NrCPUs())
	p.NrCPUsAllowed = r.k.NrCPUs()
}

// run advances time by d.
func (r *rig) run(d engine.Time) { r.k.Eng.RunUntil(r.k.Now() + d) }

// on makes cpu the CPU executing the next direct call (smp_processor_id).
func (r *rig) on(cpu int) *Kernel {
	r.k.thisCPU = cpumask.CPU(cpu)
	return r.k
}

// llc returns the runtime LLC domain of cpu.
func (r *rig) llc(cpu int) *SchedDomain { return r.k.sdLLC(cpumask.CPU(cpu)) }

// setIdleScan sets the LLC of cpu to the nr_idle_scan that periodic
// balancing computes for an average utilisation of util (out of 1024) per
// CPU, through update_idle_cpu_scan.
func (r *rig) setIdleScan(cpu int, util uint64) int {
	sd := r.llc(cpu)
	r.k.updateIdleCPUScan(cpumask.CPU(cpu), sd, CPUNotIdle, util*uint64(sd.T.SpanWeight))
	return r.k.SdLLCShared(cpu).NrIdleScan
}
