package topology

import (
	"fmt"
	"sort"
	"strings"

	"github.com/schedlab/schedlab/internal/cpumask"
)

// Arch selects which kernel topology table and mask functions Build follows.
type Arch string

const (
	// ArchX86 follows arch/x86/kernel/smpboot.c: SMT, CLS, MC, PKG, where
	// the PKG level is dropped when a package holds more than one NUMA node
	// (x86_has_numa_in_package / AMD NPS2-4, Intel SNC).
	ArchX86 Arch = "x86"
	// ArchARM64 follows the generic default_topology with the masks of
	// drivers/base/arch_topology.c: PKG is always present, and MC is
	// widened to the cluster when no cache is shared beyond the cluster.
	ArchARM64 Arch = "arm64"
)

// MachineSpec describes a machine as plain values: what Linux would report in
// /sys for it. It is the "spec" half of spec-then-instance: Load and the
// presets produce one, Validate checks it, Build turns it into a Topology.
// A spec is never modified by Build.
type MachineSpec struct {
	Name        string
	Description string
	// Source says where the spec came from ("preset", a file name,
	// "host:/sys").
	Source string
	Arch   Arch
	// CPUs are indexed by CPU number: CPUs[i].CPU == i.
	CPUs []CPUSpec
	// Distance is the node distance (SLIT) matrix, Distance[a][b] as
	// /sys/devices/system/node/nodeA/distance lists it. Nodes are 0..len-1.
	Distance [][]int
	// IdleStates are the cpuidle states of every CPU whose own IdleStates
	// is nil, shallowest first.
	IdleStates []IdleState
	// ReclaimDistance is node_reclaim_distance: NUMA levels farther than
	// this lose SD_BALANCE_EXEC, SD_BALANCE_FORK and SD_WAKE_AFFINE. 0
	// means the kernel's default RECLAIM_DISTANCE, 30; x86 sets 32 on AMD
	// Zen (arch/x86/kernel/cpu/amd.c, since v5.4), so that the two sockets
	// of an EPYC (SLIT 32) still balance forks and affine wakeups.
	ReclaimDistance int
	// CpufreqGovernor is the cpufreq governor the machine runs when the
	// run does not choose one (model_cpufreq_governor): "performance" or
	// "schedutil"; "" means by architecture (performance on x86,
	// schedutil on arm64). Servers benchmarked for the scheduler run
	// performance whatever their architecture.
	CpufreqGovernor string
	// IdleDisable names idle states that are disabled on every CPU, as
	// `cpupower idle-set -d N` (cpuidle's stateN/disable) or a firmware
	// setup menu leaves them: the governor never selects them.
	IdleDisable []string
	// LatencyLimitNs, when set, is a standing PM QoS CPU latency request
	// (what a process holding /dev/cpu_dma_latency open asks for): the
	// governor selects no state whose advertised exit latency exceeds it.
	// nil: no request.
	LatencyLimitNs *int64
	// Costs is the machine file's costs: section (nil if none), kept as
	// read: package costmodel checks and applies it on top of its
	// defaults.
	Costs *CostsSection
}

// CPUSpec is one logical CPU. The ids are machine-wide: two CPUs share a
// core (are SMT siblings) iff their Core is equal, and likewise for Cluster,
// LLC, Package and FreqDomain. The numbers themselves carry no meaning beyond
// equality.
type CPUSpec struct {
	CPU     cpumask.CPU
	Core    int // SMT core (topology/thread_siblings_list)
	Cluster int // cluster: CPUs sharing an L2 or an L3 tag (topology/cluster_cpus_list)
	LLC     int // last-level cache (cache/indexN/shared_cpu_list of the highest level)
	Package int // physical package / socket
	Node    int // NUMA node
	// Capacity is arch_scale_cpu_capacity: 1024 for the biggest CPUs.
	Capacity   int
	FreqDomain int // cpufreq policy (cpufreq/related_cpus)
	MaxFreqKHz int // cpufreq/cpuinfo_max_freq; 0 if unknown
	// IdleStates overrides MachineSpec.IdleStates for this CPU when non-nil.
	IdleStates []IdleState
}

// IdleState is one cpuidle state (cpuidle/stateN). ExitLatencyNs and
// TargetResidencyNs are what the kernel is told (ACPI _CST, the device
// tree's idle-states): the governor, find_idlest_group_cpu and PM QoS
// decide with them. WakeNs is what the hardware takes to resume from the
// state when woken, which published measurements often find far shorter
// than advertised (the firmware's figure is a worst case or a policy
// value); a wakeup of a CPU in the state pays WakeNs.
type IdleState struct {
	Name              string
	ExitLatencyNs     int64 // stateN/latency, in ns: the advertised exit latency
	TargetResidencyNs int64 // stateN/residency, in ns
	// Cluster marks a state of the whole cluster (a cluster or rail
	// power-down, a PSCI domain idle state): a CPU is in it only while
	// every CPU of its cluster is idle, otherwise in its deepest
	// per-CPU state.
	Cluster bool
	// GateDelayNs is, for a Cluster state, how long every CPU of the
	// cluster must have been idle before the cluster is in the state: the
	// hysteresis of a power-down the hardware starts on its own once the
	// cluster is quiet. 0: from the moment the last CPU goes idle.
	GateDelayNs int64
	// WakeNs is the measured wake-up time from the state, in ns; 0 means
	// none is known and a wakeup pays the advertised ExitLatencyNs.
	WakeNs int64
}

// Wake is the time a wakeup from the state takes on the hardware: WakeNs,
// or the advertised exit latency when no measurement is known.
func (st IdleState) Wake() int64 {
	if st.WakeNs > 0 {
		return st.WakeNs
	}
	return st.ExitLatencyNs
}

// MaxCPUs bounds the machines schedlab models (the kernel's NR_CPUS is 8192
// on distribution kernels).
const MaxCPUs = 8192

// MaxNodes bounds the NUMA nodes (MAX_NUMNODES with NODES_SHIFT=10).
const MaxNodes = 1024

// The largest maximum frequency and idle-state time a spec may hold: what a
// machine file can state (1 THz, 1000 s).
const (
	maxFreqKHz int   = 1e9
	maxIdleNs  int64 = 1e12
)

// SpecError is a validation failure of a MachineSpec. Field names the YAML
// key it concerns ("distance", "cpus", "capacity", ...); CPU is the CPU it
// concerns, or -1. The YAML loader uses both to point at a file line.
type SpecError struct {
	Field string
	CPU   int
	Msg   string
}

func (e *SpecError) Error() string { return e.Msg }

func specErr(field string, cpu int, format string, args ...any) *SpecError {
	return &SpecError{Field: field, CPU: cpu, Msg: fmt.Sprintf(format, args...)}
}

// NrNodes is the number of NUMA nodes.
func (s *MachineSpec) NrNodes() int { return len(s.Distance) }

// IdleStatesOf returns the idle states of cpu.
func (s *MachineSpec) IdleStatesOf(cpu cpumask.CPU) []IdleState {
	if st := s.CPUs[cpu].IdleStates; st != nil {
		return st
	}
	return s.IdleStates
}

// Validate checks that the spec describes a machine Linux could build sched
// domains for. The first problem found is returned as a *SpecError.
func (s *MachineSpec) Validate() error {
	n := len(s.CPUs)
	if n == 0 {
		return specErr("cpus", -1, "the machine has no CPUs")
	}
	if n > MaxCPUs {
		return specErr("cpus", -1, "the machine has %d CPUs; at most %d are supported", n, MaxCPUs)
	}
	switch s.Arch {
	case ArchX86, ArchARM64:
	default:
		return specErr("arch", -1, "arch must be %q or %q, not %q", ArchX86, ArchARM64, s.Arch)
	}
	for i, c := range s.CPUs {
		if int(c.CPU) != i {
			return specErr("cpus", i, "CPU numbers must be 0..%d in order: entry %d is cpu %d", n-1, i, c.CPU)
		}
	}
	nodes := len(s.Distance)
	if nodes == 0 {
		return specErr("distance", -1, "the distance matrix is empty")
	}
	if nodes > MaxNodes {
		return specErr("distance", -1, "the machine has %d nodes; at most %d are supported", nodes, MaxNodes)
	}
	maxCap := 0
	for i, c := range s.CPUs {
		if c.Core < 0 || c.Cluster < 0 || c.LLC < 0 || c.Package < 0 || c.FreqDomain < 0 {
			return specErr("cpus", i, "cpu %d: core, cluster, llc, package and freq_domain ids must not be negative", i)
		}
		if c.Node < 0 || c.Node >= nodes {
			return specErr("cpus", i, "cpu %d is on node %d but the machine has %d node(s) (distance matrix is %dx%d)", i, c.Node, nodes, nodes, nodes)
		}
		if c.Capacity < 1 || c.Capacity > 1024 {
			return specErr("capacity", i, "cpu %d: capacity must be 1..1024, not %d", i, c.Capacity)
		}
		if c.MaxFreqKHz < 0 || c.MaxFreqKHz > maxFreqKHz {
			return specErr("max_freq_khz", i, "cpu %d: max_freq_khz must be 0..%d, not %d", i, maxFreqKHz, c.MaxFreqKHz)
		}
		maxCap = max(maxCap, c.Capacity)
		if err := validateIdle(c.IdleStates, i); err != nil {
			return err
		}
	}
	if maxCap != 1024 {
		return specErr("capacity", -1, "the biggest CPU must have capacity 1024 (arch_scale_cpu_capacity is normalised), the largest here is %d", maxCap)
	}
	if err := validateIdle(s.IdleStates, -1); err != nil {
		return err
	}
	if err := s.validateIdleControls(); err != nil {
		return err
	}
	switch s.CpufreqGovernor {
	case "", "performance", "schedutil":
	default:
		return specErr("cpufreq_governor", -1, "cpufreq_governor must be performance or schedutil, not %q", s.CpufreqGovernor)
	}
	if d := s.ReclaimDistance; d != 0 && (d < 10 || d > 255) {
		return specErr("reclaim_distance", -1, "reclaim_distance must be 10..255, not %d", d)
	}
	if err := validateDistance(s.Distance); err != nil {
		return err
	}
	// Every node must hold a CPU: the kernel builds NUMA levels from the
	// nodes in N_CPU only, and a CPU-less node here is a typo.
	seen := make([]bool, nodes)
	for _, c := range s.CPUs {
		seen[c.Node] = true
	}
	for nd, ok := range seen {
		if !ok {
			return specErr("distance", -1, "node %d has no CPUs", nd)
		}
	}
	return s.validateHierarchy()
}

// validateIdleControls checks idle_disable and latency_limit_us: every
// disabled name is a state some CPU has.
func (s *MachineSpec) validateIdleControls() error {
	if l := s.LatencyLimitNs; l != nil && (*l < 0 || *l > maxIdleNs) {
		return specErr("latency_limit_us", -1, "latency_limit_us must be 0..%d, not %d", maxIdleNs/1000, *l/1000)
	}
	for _, name := range s.IdleDisable {
		if !s.HasIdleState(name) {
			return specErr("idle_disable", -1, "idle_disable: no CPU has an idle state %q (the states are %s)", name, strings.Join(s.IdleStateNames(), ", "))
		}
	}
	return nil
}

// HasIdleState reports whether some CPU has an idle state of that name.
func (s *MachineSpec) HasIdleState(name string) bool {
	for _, n := range s.IdleStateNames() {
		if n == name {
			return true
		}
	}
	return false
}

// IdleStateNames lists the names of the machine's idle states, each once,
// in the order the CPUs list them.
func (s *MachineSpec) IdleStateNames() []string {
	var out []string
	seen := map[string]bool{}
	for i := range s.CPUs {
		for _, st := range s.IdleStatesOf(cpumask.CPU(i)) {
			if !seen[st.Name] {
				seen[st.Name] = true
				out = append(out, st.Name)
			}
		}
	}
	return out
}

func validateIdle(states []IdleState, cpu int) error {
	for _, st := range states {
		if st.Name == "" {
			return specErr("idle_states", cpu, "an idle state has no name")
		}
		if st.ExitLatencyNs < 0 || st.TargetResidencyNs < 0 || st.WakeNs < 0 || st.ExitLatencyNs > maxIdleNs || st.TargetResidencyNs > maxIdleNs || st.WakeNs > maxIdleNs {
			return specErr("idle_states", cpu, "idle state %q: exit latency, target residency and wake time must be 0..%d us", st.Name, maxIdleNs/1000)
		}
	}
	return nil
}

// validateDistance checks the SLIT rules sched_init_numa relies on.
func validateDistance(d [][]int) error {
	n := len(d)
	for a, row := range d {
		if len(row) != n {
			return specErr("distance", -1, "distance matrix row %d has %d entries, want %d", a, len(row), n)
		}
	}
	for a := range n {
		if d[a][a] != 10 {
			return specErr("distance", -1, "distance[%d][%d] is %d; the diagonal must be 10 (LOCAL_DISTANCE)", a, a, d[a][a])
		}
		for b := range n {
			if a == b {
				continue
			}
			if d[a][b] <= 10 || d[a][b] > 254 {
				return specErr("distance", -1, "distance[%d][%d] is %d; distances between nodes must be 11..254", a, b, d[a][b])
			}
			if d[a][b] != d[b][a] {
				return specErr("distance", -1, "distance matrix is not symmetric: [%d][%d]=%d but [%d][%d]=%d", a, b, d[a][b], b, a, d[b][a])
			}
		}
	}
	return nil
}

// validateHierarchy checks that the ids nest as hardware does: the threads of
// a core share everything; a cluster lies in one package and node; an LLC
// lies in one package.
func (s *MachineSpec) validateHierarchy() error {
	check := func(what string, key func(c *CPUSpec) int, same func(a, b *CPUSpec) (string, bool)) error {
		rep := map[int]int{}
		for i := range s.CPUs {
			c := &s.CPUs[i]
			k := key(c)
			r, ok := rep[k]
			if !ok {
				rep[k] = i
				continue
			}
			if field, ok := same(&s.CPUs[r], c); !ok {
				return specErr(field, i, "cpu %d and cpu %d share %s %d but differ in %s", r, i, what, k, field)
			}
		}
		return nil
	}
	err := check("core", func(c *CPUSpec) int { return c.Core }, func(a, b *CPUSpec) (string, bool) {
		switch {
		case a.Cluster != b.Cluster:
			return "cluster", false
		case a.LLC != b.LLC:
			return "llc", false
		case a.Package != b.Package:
			return "package", false
		case a.Node != b.Node:
			return "node", false
		case a.Capacity != b.Capacity:
			return "capacity", false
		}
		return "", true
	})
	if err != nil {
		return err
	}
	err = check("cluster", func(c *CPUSpec) int { return c.Cluster }, func(a, b *CPUSpec) (string, bool) {
		switch {
		case a.Package != b.Package:
			return "package", false
		case a.Node != b.Node:
			return "node", false
		}
		return "", true
	})
	if err != nil {
		return err
	}
	err = check("llc", func(c *CPUSpec) int { return c.LLC }, func(a, b *CPUSpec) (string, bool) {
		if a.Package != b.Package {
			return "package", false
		}
		return "", true
	})
	if err != nil {
		return err
	}
	return s.validateClusterNesting()
}

// validateClusterNesting checks that clusters and LLCs nest one way or the
// other: a cluster lies inside one LLC, or it holds every CPU of each LLC it
// touches. Otherwise the CLS and MC masks would partially overlap, which the
// kernel refuses (topology_span_sane).
func (s *MachineSpec) validateClusterNesting() error {
	clusterLLC := map[int]int{} // cluster -> an LLC it touches
	llcCount := map[int]int{}   // llc -> CPUs
	clusterLLCCount := map[[2]int]int{}
	multi := map[int]bool{} // clusters spanning several LLCs
	for _, c := range s.CPUs {
		llcCount[c.LLC]++
		clusterLLCCount[[2]int{c.Cluster, c.LLC}]++
		if l, ok := clusterLLC[c.Cluster]; ok && l != c.LLC {
			multi[c.Cluster] = true
		} else if !ok {
			clusterLLC[c.Cluster] = c.LLC
		}
	}
	for i, c := range s.CPUs {
		if multi[c.Cluster] && clusterLLCCount[[2]int{c.Cluster, c.LLC}] != llcCount[c.LLC] {
			return specErr("cpus", i, "cluster %d spans several LLCs but holds only part of llc %d (cpu %d): clusters and LLCs must nest", c.Cluster, c.LLC, i)
		}
	}
	return nil
}

// Capacities returns the distinct CPU capacities, largest first (the
// kernel's asym_cap_list order).
func (s *MachineSpec) Capacities() []int {
	set := map[int]bool{}
	for _, c := range s.CPUs {
		set[c.Capacity] = true
	}
	out := make([]int, 0, len(set))
	for c := range set {
		out = append(out, c)
	}
	sort.Sort(sort.Reverse(sort.IntSlice(out)))
	return out
}

// Clone returns a deep copy.
func (s *MachineSpec) Clone() *MachineSpec {
	c := *s
	c.CPUs = make([]CPUSpec, len(s.CPUs))
	for i, cpu := range s.CPUs {
		cpu.IdleStates = cloneIdle(cpu.IdleStates)
		c.CPUs[i] = cpu
	}
	c.Distance = make([][]int, len(s.Distance))
	for i, row := range s.Distance {
		c.Distance[i] = append([]int(nil), row...)
	}
	c.IdleStates = cloneIdle(s.IdleStates)
	c.Costs = s.Costs.Clone()
	return &c
}

func cloneIdle(s []IdleState) []IdleState {
	if s == nil {
		return nil
	}
	return append([]IdleState{}, s...)
}
