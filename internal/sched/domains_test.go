package sched

import (
	"testing"

	"github.com/schedlab/schedlab/internal/engine"
	"github.com/schedlab/schedlab/internal/topology"
)

// phaseKernel builds a zen3-2s-nps1 v6.19 kernel with seed seed and
// Settings.BalancePhase as given.
func phaseKernel(t *testing.T, seed uint64, on bool) *Kernel {
	t.Helper()
	spec, err := topology.Load("zen3-2s-nps1")
	if err != nil {
		t.Fatal(err)
	}
	s := MustBaseline("v6.19")
	s.BalancePhase = on
	topo, err := topology.Build(spec, TopologyOptions(s))
	if err != nil {
		t.Fatal(err)
	}
	k, err := New(engine.New(seed), topo, s)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// Settings.BalancePhase: off, every domain's last_balance is boot's jiffy
// (sd_init); on, each lies in the balance interval before it, the CPUs of
// one level are spread over that interval, and the same seed draws the
// same phases.
func TestBalancePhase(t *testing.T) {
	off := phaseKernel(t, 1, false)
	jiff := off.Jiffies()
	for cpu := range off.NrCPUs() {
		for _, sd := range off.Domains(cpu) {
			if sd.LastBalance != jiff {
				t.Fatalf("off: CPU %d %s last_balance %d, want boot's jiffy %d", cpu, sd.T.Name, sd.LastBalance, jiff)
			}
		}
	}
	on, again, other := phaseKernel(t, 1, true), phaseKernel(t, 1, true), phaseKernel(t, 2, true)
	differs := false
	for cpu := range on.NrCPUs() {
		for lvl, sd := range on.Domains(cpu) {
			interval := on.msecsToJiffies(sd.BalanceInterval)
			if back := jiff - sd.LastBalance; back > interval {
				t.Errorf("on: CPU %d %s last_balance %d jiffies before boot, more than its interval %d", cpu, sd.T.Name, back, interval)
			}
			if again.Domains(cpu)[lvl].LastBalance != sd.LastBalance {
				t.Fatalf("CPU %d %s: two kernels with seed 1 drew %d and %d", cpu, sd.T.Name, sd.LastBalance, again.Domains(cpu)[lvl].LastBalance)
			}
			if other.Domains(cpu)[lvl].LastBalance != sd.LastBalance {
				differs = true
			}
		}
	}
	if !differs {
		t.Error("seeds 1 and 2 drew the same phases on every domain")
	}
	// The package level (128 CPUs, a 128 ms interval at HZ=250: 32
	// jiffies) of the 256 CPUs: the phases cover most of its 33 values.
	seen := map[uint64]bool{}
	for cpu := range on.NrCPUs() {
		for _, sd := range on.Domains(cpu) {
			if sd.T.Name == "PKG" {
				seen[jiff-sd.LastBalance] = true
			}
		}
	}
	if interval := on.msecsToJiffies(128); len(seen) < int(interval)/2 {
		t.Errorf("PKG phases take %d distinct values of %d", len(seen), interval+1)
	}
}
