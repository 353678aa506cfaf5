package topology

import (
	"errors"
	"github.com/schedlab/schedlab/internal/fileerr"
	"github.com/schedlab/schedlab/internal/kernels"
	"gopkg.in/yaml.v3"
	"slices"
	"testing"
)

// keyCase is one key of a machine file set in a file, with what it must do
// to the spec or to the domains built from it. Each check's expectation
// differs from what the file gives without the key, so a key that is read
// and then dropped fails its case.
type keyCase struct {
	key   string // as keyPaths names it
	yaml  string
	check func(t *testing.T, s *MachineSpec)
}

// keyPaths lists every key a machine file may carry: the top-level keys of
// both forms and the keys inside a cpus entry and an idle state from
// yaml.go's lists, and the keys of the nested mappings (distance shorthand,
// per-range entries, costs) that yaml.go spells inline.
func keyPaths() []string {
	var out []string
	for _, lists := range [][]string{commonKeys, regularKeys, explicitKeys} {
		out = append(out, lists...)
	}
	for _, k := range cpuKeys {
		out = append(out, "cpus."+k)
	}
	for _, k := range idleKeys {
		out = append(out, "idle_states."+k)
	}
	return append(out,
		"distance.same_socket", "distance.other_socket",
		"capacity.cpus", "capacity.value", "max_freq_khz.cpus", "max_freq_khz.value",
		"idle_states.cpus", "idle_states.states",
		"costs.base", "costs.NAME", "costs.NAME.value", "costs.NAME.source")
}

func numaFlags(t *testing.T, s *MachineSpec) Flags {
	t.Helper()
	topo := mustBuild(t, s, kernels.V619)
	chain := topo.Domains[0]
	top := chain[len(chain)-1]
	if top.Flags&SDNuma == 0 {
		t.Fatalf("the top domain of cpu 0 is %s, not a NUMA level", top.Name)
	}
	return top.Flags
}

func keyCases() []keyCase {
	const four = "cores_per_llc: 4\n"
	const sc = "sockets: 2\ncores_per_llc: 2\ndistance: [[10, 32], [32, 10]]\n"
	return []keyCase{
		{"name", "name: box7\n" + four, func(t *testing.T, s *MachineSpec) {
			if s.Name != "box7" { // without it: "keys", the file's base name
				t.Errorf("name %q", s.Name)
			}
		}},
		{"description", "description: a box\n" + four, func(t *testing.T, s *MachineSpec) {
			if s.Description != "a box" {
				t.Errorf("description %q", s.Description)
			}
		}},
		{"arch", "arch: arm64\ncores_per_llc: 2\nthreads_per_core: 2\n", func(t *testing.T, s *MachineSpec) {
			// On arm64 the threads of a core are numbered next to each
			// other by default (device-tree order), on x86 n and n+ncores.
			if s.Arch != ArchARM64 || s.CPUs[1].Core != s.CPUs[0].Core {
				t.Errorf("arch %s, cpus %+v", s.Arch, s.CPUs)
			}
		}},
		{"distance", "sockets: 2\ncores_per_llc: 2\ndistance: [[10, 21], [21, 10]]\n", func(t *testing.T, s *MachineSpec) {
			if s.Distance[0][1] != 21 || s.Distance[1][0] != 21 {
				t.Errorf("distance %v", s.Distance)
			}
		}},
		{"distance.same_socket", "nodes_per_socket: 2\ncores_per_llc: 2\ndistance: {same_socket: 12}\n", func(t *testing.T, s *MachineSpec) {
			if len(s.Distance) != 2 || s.Distance[0][1] != 12 {
				t.Errorf("distance %v", s.Distance)
			}
		}},
		{"distance.other_socket", "sockets: 2\ncores_per_llc: 2\ndistance: {other_socket: 25}\n", func(t *testing.T, s *MachineSpec) {
			if len(s.Distance) != 2 || s.Distance[1][0] != 25 {
				t.Errorf("distance %v", s.Distance)
			}
		}},
		{"reclaim_distance", sc + "reclaim_distance: 32\n", func(t *testing.T, s *MachineSpec) {
			// Reference: topology.c:sd_init, v6.19: a NUMA level within
			// node_reclaim_distance keeps EXEC, FORK and WAKE_AFFINE;
			// with the default 30 the level at 32 loses them.
			want := SDBalanceExec | SDBalanceFork | SDWakeAffine
			if f := numaFlags(t, s); s.ReclaimDistance != 32 || f&want != want {
				t.Errorf("reclaim_distance %d, NUMA flags %s", s.ReclaimDistance, f)
			}
			d := s.Clone()
			d.ReclaimDistance = 0
			if f := numaFlags(t, d); f&want != 0 {
				t.Errorf("the case proves nothing: without reclaim_distance the NUMA flags are %s", f)
			}
		}},
		{"idle_states", four + "idle_states:\n  - {name: C1, exit_latency_us: 2, target_residency_us: 4}\n", func(t *testing.T, s *MachineSpec) {
			if len(s.IdleStates) != 1 || s.IdleStates[0].Name != "C1" || s.CPUs[3].IdleStates != nil {
				t.Errorf("idle states %+v, cpu 3 %+v", s.IdleStates, s.CPUs[3].IdleStates)
			}
		}},
		{"idle_states.name", four + "idle_states: [{name: deep, exit_latency_us: 2, target_residency_us: 4}]\n", func(t *testing.T, s *MachineSpec) {
			if s.IdleStates[0].Name != "deep" {
				t.Errorf("%+v", s.IdleStates)
			}
		}},
		{"idle_states.exit_latency_us", four + "idle_states: [{name: C1, exit_latency_us: 7, target_residency_us: 4}]\n", func(t *testing.T, s *MachineSpec) {
			if s.IdleStates[0].ExitLatencyNs != 7000 {
				t.Errorf("%+v", s.IdleStates)
			}
		}},
		{"idle_states.target_residency_us", four + "idle_states: [{name: C1, exit_latency_us: 2, target_residency_us: 9}]\n", func(t *testing.T, s *MachineSpec) {
			if s.IdleStates[0].TargetResidencyNs != 9000 {
				t.Errorf("%+v", s.IdleStates)
			}
		}},
		{"idle_states.wake_us", four + "idle_states: [{name: C2, exit_latency_us: 400, target_residency_us: 800, wake_us: 18}]\n", func(t *testing.T, s *MachineSpec) {
			if st := s.IdleStates[0]; st.WakeNs != 18000 || st.Wake() != 18000 || st.ExitLatencyNs != 400000 {
				t.Errorf("%+v", s.IdleStates)
			}
			if d := (IdleState{ExitLatencyNs: 400000}); d.Wake() != 400000 {
				t.Errorf("without wake_us a wakeup takes %d ns, want the advertised 400000", d.Wake())
			}
		}},
		{"idle_states.wake_ns", four + "idle_states: [{name: WFI, exit_latency_us: 1, target_residency_us: 1, wake_ns: 100}]\n", func(t *testing.T, s *MachineSpec) {
			// A wake shorter than a microsecond (the kunpeng presets' WFI);
			// its effect on a wakeup is pingpong's TestWFIWakePerRoundTrip.
			if st := s.IdleStates[0]; st.WakeNs != 100 || st.Wake() != 100 || st.ExitLatencyNs != 1000 {
				t.Errorf("%+v", s.IdleStates)
			}
		}},
		{"idle_disable", four + "idle_states: [{name: C1, exit_latency_us: 2, target_residency_us: 4}, {name: C2, exit_latency_us: 9, target_residency_us: 20}]\nidle_disable: [C2]\n", func(t *testing.T, s *MachineSpec) {
			// Its effect on the governor is sched's TestIdleDisable.
			if len(s.IdleDisable) != 1 || s.IdleDisable[0] != "C2" {
				t.Errorf("idle_disable %v", s.IdleDisable)
			}
		}},
		{"cpufreq_governor", "arch: arm64\ncores_per_llc: 4\ncpufreq_governor: performance\n", func(t *testing.T, s *MachineSpec) {
			// Its effect on the kernel is sched's TestMachineGovernor.
			if s.CpufreqGovernor != "performance" {
				t.Errorf("cpufreq_governor %q", s.CpufreqGovernor)
			}
		}},
		{"latency_limit_us", four + "latency_limit_us: 5\n", func(t *testing.T, s *MachineSpec) {
			// Its effect on the governor is sched's TestIdleLatencyLimit.
			if s.LatencyLimitNs == nil || *s.LatencyLimitNs != 5000 {
				t.Errorf("latency_limit %v", s.LatencyLimitNs)
			}
		}},
		{"idle_states.cluster", four + "idle_states: [{name: CL, exit_latency_us: 2, target_residency_us: 4, cluster: true}]\n", func(t *testing.T, s *MachineSpec) {
			if !s.IdleStates[0].Cluster {
				t.Errorf("%+v", s.IdleStates)
			}
		}},
		{"idle_states.gate_delay_us", four + "idle_states: [{name: CL, exit_latency_us: 2, target_residency_us: 4, cluster: true, gate_delay_us: 3}]\n", func(t *testing.T, s *MachineSpec) {
			// Its effect on the kernel is sched's TestClusterStateGateDelay.
			if st := s.IdleStates[0]; st.GateDelayNs != 3000 || !st.Cluster {
				t.Errorf("%+v", s.IdleStates)
			}
		}},
		{"idle_states.cpus", four + "idle_states:\n  - {cpus: 1-2, states: [{name: C1, exit_latency_us: 2, target_residency_us: 4}]}\n", func(t *testing.T, s *MachineSpec) {
			if s.IdleStates != nil || s.CPUs[0].IdleStates != nil || s.CPUs[3].IdleStates != nil || len(s.CPUs[1].IdleStates) != 1 || len(s.CPUs[2].IdleStates) != 1 {
				t.Errorf("machine %+v, cpus %+v", s.IdleStates, s.CPUs)
			}
		}},
		{"idle_states.states", four + "idle_states:\n  - cpus: 0-3\n    states: [{name: A, exit_latency_us: 1, target_residency_us: 1}, {name: B, exit_latency_us: 5, target_residency_us: 9}]\n", func(t *testing.T, s *MachineSpec) {
			if st := s.IdleStatesOf(3); len(st) != 2 || st[1].Name != "B" {
				t.Errorf("cpu 3: %+v", st)
			}
		}},
		{"costs", four + "costs: {context_switch_ns: 1234}\n", func(t *testing.T, s *MachineSpec) {
			if v, line := costsEntry(s.Costs, "context_switch_ns"); costsLen(s.Costs) != 1 || v == nil || v.Value != "1234" || line != 2 {
				t.Errorf("costs %+v", s.Costs)
			}
		}},
		{"costs.base", four + "costs: {base: hikey}\n", func(t *testing.T, s *MachineSpec) {
			if v, line := costsEntry(s.Costs, "base"); v == nil || v.Value != "hikey" || line != 2 {
				t.Errorf("costs %+v", s.Costs)
			}
		}},
		{"costs.NAME", four + "costs:\n  syscall_ns: 77\n", func(t *testing.T, s *MachineSpec) {
			if v, _ := costsEntry(s.Costs, "syscall_ns"); costsLen(s.Costs) != 1 || v == nil || v.Value != "77" {
				t.Errorf("costs %+v", s.Costs)
			}
		}},
		{"costs.NAME.value", four + "costs:\n  smt_factor: {value: 0.625}\n", func(t *testing.T, s *MachineSpec) {
			if v, _ := costsEntry(s.Costs, "smt_factor"); costsLen(s.Costs) != 1 || v == nil || len(v.Content) != 2 || v.Content[1].Value != "0.625" {
				t.Errorf("costs %+v", s.Costs)
			}
		}},
		{"costs.NAME.source", four + "costs:\n  smt_factor: {value: 0.6, source: measured}\n", func(t *testing.T, s *MachineSpec) {
			if v, _ := costsEntry(s.Costs, "smt_factor"); costsLen(s.Costs) != 1 || v == nil || len(v.Content) != 4 || v.Content[3].Value != "measured" {
				t.Errorf("costs %+v", s.Costs)
			}
		}},
		{"sockets", "sockets: 2\ncores_per_llc: 2\ndistance: {other_socket: 20}\n", func(t *testing.T, s *MachineSpec) {
			if len(s.CPUs) != 4 || s.CPUs[3].Package != 1 || s.CPUs[3].Node != 1 || s.CPUs[1].Package != 0 {
				t.Errorf("cpus %+v", s.CPUs)
			}
		}},
		{"nodes_per_socket", "nodes_per_socket: 2\ncores_per_llc: 2\ndistance: [[10, 12], [12, 10]]\n", func(t *testing.T, s *MachineSpec) {
			if len(s.CPUs) != 4 || s.CPUs[3].Node != 1 || s.CPUs[3].Package != 0 || s.CPUs[3].LLC != 1 {
				t.Errorf("cpus %+v", s.CPUs)
			}
		}},
		{"llcs_per_node", "llcs_per_node: 2\ncores_per_llc: 2\n", func(t *testing.T, s *MachineSpec) {
			if len(s.CPUs) != 4 || s.CPUs[2].LLC != 1 || s.CPUs[1].LLC != 0 || s.CPUs[3].Node != 0 {
				t.Errorf("cpus %+v", s.CPUs)
			}
		}},
		{"clusters_per_llc", "clusters_per_llc: 2\ncores_per_cluster: 2\n", func(t *testing.T, s *MachineSpec) {
			if len(s.CPUs) != 4 || s.CPUs[1].Cluster != s.CPUs[0].Cluster || s.CPUs[2].Cluster == s.CPUs[1].Cluster || s.CPUs[3].LLC != 0 {
				t.Errorf("cpus %+v", s.CPUs)
			}
		}},
		{"cores_per_cluster", "clusters_per_llc: 1\ncores_per_cluster: 3\n", func(t *testing.T, s *MachineSpec) {
			if len(s.CPUs) != 3 || s.CPUs[2].Cluster != s.CPUs[0].Cluster {
				t.Errorf("cpus %+v", s.CPUs)
			}
		}},
		{"cores_per_llc", "cores_per_llc: 6\n", func(t *testing.T, s *MachineSpec) {
			if len(s.CPUs) != 6 || s.CPUs[5].Cluster != 5 {
				t.Errorf("cpus %+v", s.CPUs)
			}
		}},
		{"threads_per_core", "cores_per_llc: 2\nthreads_per_core: 2\n", func(t *testing.T, s *MachineSpec) {
			// x86 numbering: the siblings of CPU n are n+ncores.
			if len(s.CPUs) != 4 || s.CPUs[2].Core != s.CPUs[0].Core || s.CPUs[1].Core == s.CPUs[0].Core {
				t.Errorf("cpus %+v", s.CPUs)
			}
		}},
		{"numbering", "cores_per_llc: 2\nthreads_per_core: 2\nnumbering: sequential\n", func(t *testing.T, s *MachineSpec) {
			if s.CPUs[1].Core != s.CPUs[0].Core || s.CPUs[2].Core == s.CPUs[0].Core {
				t.Errorf("cpus %+v", s.CPUs)
			}
		}},
		{"capacity", four + "capacity:\n  - {cpus: 0-1, value: 512}\n", func(t *testing.T, s *MachineSpec) {
			topo := mustBuild(t, s, kernels.V619)
			if s.CPUs[1].Capacity != 512 || s.CPUs[2].Capacity != 1024 || !topo.AsymCPUCapacity {
				t.Errorf("cpus %+v, asym %v", s.CPUs, topo.AsymCPUCapacity)
			}
		}},
		{"capacity.cpus", four + "capacity: [{cpus: 3, value: 100}]\n", func(t *testing.T, s *MachineSpec) {
			if s.CPUs[3].Capacity != 100 || s.CPUs[2].Capacity != 1024 {
				t.Errorf("cpus %+v", s.CPUs)
			}
		}},
		{"capacity.value", four + "capacity: [{cpus: 0-2, value: 300}]\n", func(t *testing.T, s *MachineSpec) {
			if s.CPUs[0].Capacity != 300 || s.CPUs[3].Capacity != 1024 {
				t.Errorf("cpus %+v", s.CPUs)
			}
		}},
		{"max_freq_khz", four + "max_freq_khz: 2000000\n", func(t *testing.T, s *MachineSpec) {
			if s.CPUs[0].MaxFreqKHz != 2000000 || s.CPUs[3].MaxFreqKHz != 2000000 {
				t.Errorf("cpus %+v", s.CPUs)
			}
		}},
		{"max_freq_khz.cpus", four + "max_freq_khz: [{cpus: 2-3, value: 1500000}]\n", func(t *testing.T, s *MachineSpec) {
			if s.CPUs[1].MaxFreqKHz != 0 || s.CPUs[2].MaxFreqKHz != 1500000 {
				t.Errorf("cpus %+v", s.CPUs)
			}
		}},
		{"max_freq_khz.value", four + "max_freq_khz: [{cpus: 0-3, value: 1700000}]\n", func(t *testing.T, s *MachineSpec) {
			if s.CPUs[3].MaxFreqKHz != 1700000 {
				t.Errorf("cpus %+v", s.CPUs)
			}
		}},
		{"freq_domains", "llcs_per_node: 2\ncores_per_llc: 2\nfreq_domains: llc\n", func(t *testing.T, s *MachineSpec) {
			if s.CPUs[1].FreqDomain != s.CPUs[0].FreqDomain || s.CPUs[2].FreqDomain == s.CPUs[0].FreqDomain {
				t.Errorf("cpus %+v", s.CPUs)
			}
			d := s.Clone()
			if SetFreqDomains(d, ScopeLLC); !slices.Equal(freqIDs(d), freqIDs(s)) {
				t.Errorf("freq domains %v, want the LLCs' %v", freqIDs(s), freqIDs(d))
			}
		}},
		{"cpus", "cpus:\n  - {cpu: 0}\n  - {cpu: 1}\n  - {cpu: 2}\n", func(t *testing.T, s *MachineSpec) {
			if len(s.CPUs) != 3 || s.CPUs[2].Core != 2 {
				t.Errorf("cpus %+v", s.CPUs)
			}
		}},
		{"cpus.cpu", "cpus:\n  - {cpu: 1, llc: 5}\n  - {cpu: 0, llc: 3}\n", func(t *testing.T, s *MachineSpec) {
			if s.CPUs[0].LLC != 3 || s.CPUs[1].LLC != 5 || s.CPUs[1].CPU != 1 {
				t.Errorf("cpus %+v", s.CPUs)
			}
		}},
		{"cpus.core", "cpus:\n  - {cpu: 0, core: 0}\n  - {cpu: 1, core: 0}\n", func(t *testing.T, s *MachineSpec) {
			// Without core each CPU is its own core: no SMT level.
			if got := chainSummary(mustBuild(t, s, kernels.V619), 0); got != "SMT:0-1" {
				t.Errorf("chain %s", got)
			}
		}},
		{"cpus.cluster", "cpus:\n  - {cpu: 0, cluster: 7}\n  - {cpu: 1, cluster: 7}\n  - {cpu: 2}\n", func(t *testing.T, s *MachineSpec) {
			// Reference: a cluster narrower than the LLC is a CLS level.
			if got := chainSummary(mustBuild(t, s, kernels.V619), 0); got != "CLS:0-1 MC:0-2" {
				t.Errorf("chain %s", got)
			}
		}},
		{"cpus.llc", "cpus:\n  - {cpu: 0, llc: 0}\n  - {cpu: 1, llc: 1}\n", func(t *testing.T, s *MachineSpec) {
			topo := mustBuild(t, s, kernels.V619)
			if s.CPUs[1].LLC != 1 || topo.SdLLCID[1] != 1 || topo.SdLLCSize[0] != 1 {
				t.Errorf("llc %d, sd_llc_id %d, size %d", s.CPUs[1].LLC, topo.SdLLCID[1], topo.SdLLCSize[0])
			}
		}},
		{"cpus.package", "cpus:\n  - {cpu: 0, llc: 0}\n  - {cpu: 1, llc: 1, package: 1}\n", func(t *testing.T, s *MachineSpec) {
			if s.CPUs[1].Package != 1 || s.CPUs[0].Package != 0 {
				t.Errorf("cpus %+v", s.CPUs)
			}
		}},
		{"cpus.node", "cpus:\n  - {cpu: 0}\n  - {cpu: 1, llc: 1, node: 1}\ndistance: [[10, 20], [20, 10]]\n", func(t *testing.T, s *MachineSpec) {
			if got := chainSummary(mustBuild(t, s, kernels.V619), 0); s.CPUs[1].Node != 1 || got != "NUMA:0-1" {
				t.Errorf("node %d, chain %s", s.CPUs[1].Node, got)
			}
		}},
		{"cpus.capacity", "cpus:\n  - {cpu: 0, capacity: 400}\n  - {cpu: 1}\n", func(t *testing.T, s *MachineSpec) {
			if s.CPUs[0].Capacity != 400 || s.CPUs[1].Capacity != 1024 {
				t.Errorf("cpus %+v", s.CPUs)
			}
		}},
		{"cpus.freq_domain", "cpus:\n  - {cpu: 0, freq_domain: 1}\n  - {cpu: 1, freq_domain: 1}\n", func(t *testing.T, s *MachineSpec) {
			if s.CPUs[0].FreqDomain != 1 || s.CPUs[1].FreqDomain != 1 {
				t.Errorf("cpus %+v", s.CPUs)
			}
		}},
		{"cpus.max_freq_khz", "cpus:\n  - {cpu: 0, max_freq_khz: 1000}\n  - {cpu: 1}\n", func(t *testing.T, s *MachineSpec) {
			if s.CPUs[0].MaxFreqKHz != 1000 || s.CPUs[1].MaxFreqKHz != 0 {
				t.Errorf("cpus %+v", s.CPUs)
			}
		}},
		{"cpus.idle_states", "cpus:\n  - {cpu: 0, idle_states: []}\n  - {cpu: 1}\nidle_states: [{name: C1, exit_latency_us: 2, target_residency_us: 4}]\n", func(t *testing.T, s *MachineSpec) {
			// An empty list of its own overrides the machine's states.
			if len(s.IdleStatesOf(0)) != 0 || len(s.IdleStatesOf(1)) != 1 {
				t.Errorf("cpu 0 %+v, cpu 1 %+v", s.IdleStatesOf(0), s.IdleStatesOf(1))
			}
		}},
	}
}

func freqIDs(s *MachineSpec) []int {
	out := make([]int, len(s.CPUs))
	for i, c := range s.CPUs {
		out[i] = c.FreqDomain
	}
	return out
}

// Every key a machine file may carry takes effect (issue 11: a regular-form
// file dropped reclaim_distance). keyPaths is checked against the cases, so
// a key added to yaml.go's lists without a case here fails.
func TestYAMLEveryKeyTakesEffect(t *testing.T) {
	cases := keyCases()
	covered := map[string]bool{}
	for _, tc := range cases {
		covered[tc.key] = true
		t.Run(tc.key, func(t *testing.T) {
			s, err := ParseYAML("keys.yaml", []byte(tc.yaml))
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, s)
		})
	}
	for _, k := range keyPaths() {
		if !covered[k] {
			t.Errorf("machine-file key %s has no case in keyCases", k)
		}
	}
	for k := range covered {
		if !slices.Contains(keyPaths(), k) {
			t.Errorf("case %s is not a key of keyPaths", k)
		}
	}
}

// A key that is unknown, or known but in the wrong place, is an error that
// names the file and line.
func TestYAMLMisplacedKeys(t *testing.T) {
	const four = "cores_per_llc: 4\n"
	for _, tc := range []struct{ name, yaml, want string }{
		{"unknown", four + "smt: 2\n", `m.yaml:2: unknown key "smt"`},
		{"cpus entry key at top", four + "core: 1\n", `m.yaml:2: unknown key "core"`},
		{"idle key at top", four + "exit_latency_us: 1\n", `m.yaml:2: unknown key "exit_latency_us"`},
		{"costs key at top", four + "base: hikey\n", `m.yaml:2: unknown key "base"`},
		{"cost parameter at top", four + "context_switch_ns: 900\n", `m.yaml:2: unknown key "context_switch_ns"`},
		{"regular key in a cpus entry", "cpus:\n  - {cpu: 0, sockets: 1}\n", `m.yaml:2: unknown key "sockets" in a cpus entry`},
		{"regular key with cpus", "cpus:\n  - {cpu: 0}\nthreads_per_core: 1\n", `m.yaml:3: "threads_per_core" cannot be combined with a cpus list (use one form or the other)`},
		{"cpus in an idle state", four + "idle_states:\n  - {name: A, exit_latency_us: 1, target_residency_us: 1}\n  - {cpus: 0, states: []}\n", `m.yaml:4: unknown key "cpus" in an idle state`},
		{"states in an idle state", four + "idle_states:\n  - {name: A, exit_latency_us: 1, target_residency_us: 1, states: []}\n", `m.yaml:3: unknown key "states" in an idle state`},
		{"idle key in a range entry", four + "idle_states:\n  - {cpus: 0-3, states: [], name: A}\n", `m.yaml:3: unknown key "name" in a idle_states entry`},
		{"states in a capacity entry", four + "capacity:\n  - {cpus: 0-3, states: []}\n", `m.yaml:3: unknown key "states" in a capacity entry`},
		{"shorthand in the cpus form", "cpus:\n  - {cpu: 0}\ndistance: {same_socket: 12}\n", "m.yaml:3: distance must be a matrix (a list of rows) in the cpus form"},
		{"unknown shorthand", "sockets: 2\ncores_per_llc: 1\ndistance: {other_socket: 20, remote: 30}\n", `m.yaml:3: unknown key "remote" in distance`},
		{"same_socket with one node per socket", "sockets: 2\ncores_per_llc: 1\ndistance: {same_socket: 12, other_socket: 20}\n", "m.yaml:3: same_socket has no effect: each socket holds one node (set nodes_per_socket, or drop it)"},
		{"other_socket with one socket", "nodes_per_socket: 2\ncores_per_llc: 1\ndistance: {same_socket: 12, other_socket: 20}\n", "m.yaml:3: other_socket has no effect: the machine has one socket (set sockets, or drop it)"},
		{"idle states given twice", "cpus:\n  - {cpu: 0, idle_states: []}\n  - {cpu: 1}\nidle_states:\n  - {cpus: 0-1, states: [{name: A, exit_latency_us: 1, target_residency_us: 1}]}\n",
			"m.yaml:5: cpu 0 has idle_states in its cpus entry (line 2) and here: give them in one place"},
		{"duplicate in a cpus entry", "cpus:\n  - {cpu: 0, core: 0, core: 1}\n", `m.yaml:2: duplicate key "core" (first at line 2)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseYAML("m.yaml", []byte(tc.yaml))
			var fe *fileerr.Error
			if !errors.As(err, &fe) || err.Error() != tc.want {
				t.Errorf("got  %v\nwant %s", err, tc.want)
			}
		})
	}
}

// costsEntry is the value of key in a costs section as read (topology keeps
// the section raw; package costmodel interprets it) and the line of its key.
func costsEntry(c *CostsSection, key string) (*yaml.Node, int) {
	if c == nil || c.Node == nil {
		return nil, 0
	}
	for i := 0; i+1 < len(c.Node.Content); i += 2 {
		if k := c.Node.Content[i]; k.Value == key {
			return c.Node.Content[i+1], k.Line
		}
	}
	return nil, 0
}

// costsLen is the number of settings of a costs section as read.
func costsLen(c *CostsSection) int {
	if c == nil || c.Node == nil {
		return 0
	}
	return len(c.Node.Content) / 2
}
