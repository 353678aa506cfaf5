package fidelity_test

import (
	"testing"

	corpus "github.com/schedlab/schedlab/fidelity"
	"github.com/schedlab/schedlab/internal/cpumask"
	"github.com/schedlab/schedlab/internal/fidelity"
	"github.com/schedlab/schedlab/internal/topology"
)

// The corpus's machine files for a preset's machine in another
// configuration (zen3 in NPS2, zen3 with C2 off) repeat the preset's idle
// states; each state they keep must be the preset's exactly (advertised
// exit latency, residency, wake time, cluster), or the file silently runs
// another machine: zen3-2s-nps2.yaml kept C2's advertised 400 µs as its
// wake-up after the presets learned the 18 µs one.
func TestMachineFilesKeepPresetIdleStates(t *testing.T) {
	c, err := fidelity.Load(corpus.Cases(), corpus.Dir)
	if err != nil {
		t.Fatal(err)
	}
	presets := map[string]string{ // machine-file name prefix -> the preset it varies
		"zen3-2s-": "zen3-2s-nps1",
	}
	checked := 0
	for name, mf := range c.Machines {
		for prefix, preset := range presets {
			if len(name) < len(prefix) || name[:len(prefix)] != prefix {
				continue
			}
			ps, err := topology.Load(preset)
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]topology.IdleState{}
			for _, st := range ps.IdleStatesOf(0) {
				want[st.Name] = st
			}
		cpus:
			for cpu := range mf.Spec.CPUs {
				for _, st := range mf.Spec.IdleStatesOf(cpumask.CPU(cpu)) {
					if w, ok := want[st.Name]; !ok || w != st {
						t.Errorf("%s cpu %d (and maybe others): idle state %+v, the %s preset's %+v", name, cpu, st, preset, w)
						break cpus
					}
				}
			}
			checked++
		}
	}
	if checked == 0 {
		t.Fatal("no machine file checked")
	}
}
