package sched

import (
	"github.com/schedlab/schedlab/internal/kernels"
	"testing"

	"github.com/schedlab/schedlab/internal/cpumask"
	"github.com/schedlab/schedlab/internal/engine"
	"github.com/schedlab/schedlab/internal/topology"
)

// newTestKernel builds a kernel on a preset machine.
func newTestKernel(t testing.TB, machine, kernel string) *Kernel {
	t.Helper()
	spec, err := topology.Load(machine)
	if err != nil {
		t.Fatal(err)
	}
	return newTestKernelSpec(t, spec, kernel)
}

// newTestKernelSpec builds a kernel on a machine spec, as freshly booted:
// without Settings.BalancePhase every domain's last_balance is boot's
// jiffy (sd_init), the instant the unit tests derive balance times from,
// and without Settings.WarmLLCShared sd_llc_shared is as allocated.
func newTestKernelSpec(t testing.TB, spec *topology.MachineSpec, kernel string) *Kernel {
	t.Helper()
	topo, err := topology.Build(spec, topology.Options{Kernel: kernel})
	if err != nil {
		t.Fatal(err)
	}
	s := MustBaseline(kernel)
	s.BalancePhase = false
	s.WarmLLCShared = false
	k, err := New(engine.New(1), topo, s)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// loop returns a program that alternates run and sleep forever.
func loop(run, sleep engine.Time) Program {
	n := 0
	return ProgramFunc(func(k *Kernel, t *Task) Op {
		n++
		if n%2 == 1 || sleep == 0 {
			return Run(run)
		}
		return Sleep(sleep)
	})
}

func TestTwoTasksShareOneCPU(t *testing.T) {
	for _, kern := range kernels.Names() {
		t.Run(kern, func(t *testing.T) {
			k := newTestKernel(t, "hikey", kern)
			one := cpumask.Of(k.NrCPUs(), 0)
			a, err := k.Fork(TaskSpec{Comm: "a", Allowed: one, Prog: loop(engine.Second, 0)})
			if err != nil {
				t.Fatal(err)
			}
			b, _ := k.Fork(TaskSpec{Comm: "b", Allowed: one, Prog: loop(engine.Second, 0)})
			k.Eng.RunUntil(2 * engine.Second)
			k.CheckInvariants()
			ra, rb := a.SE.SumExecRuntime, b.SE.SumExecRuntime
			if ra+rb < uint64(1990*engine.Millisecond) {
				t.Fatalf("cpu not busy: %d + %d", ra, rb)
			}
			diff := int64(ra) - int64(rb)
			if diff < 0 {
				diff = -diff
			}
			if diff > int64(20*engine.Millisecond) {
				t.Fatalf("unfair: a=%d b=%d", ra, rb)
			}
			if k.Rqs[0].NrSwitches < 100 {
				t.Fatalf("too few switches: %d", k.Rqs[0].NrSwitches)
			}
		})
	}
}
