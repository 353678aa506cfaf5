package costmodel

import (
	"github.com/schedlab/schedlab/internal/cpumask"
	"github.com/schedlab/schedlab/internal/engine"
	"github.com/schedlab/schedlab/internal/topology"
)

// Distance classifies two CPUs by the closest thing they share.
type Distance int

const (
	SameCPU     Distance = iota
	SameCore             // SMT siblings: they share the private caches
	SameCluster          // the same cluster inside a larger LLC (SubLLCCluster)
	SameLLC              // the same last-level cache
	OtherLLC             // another LLC of the same NUMA node
	OtherNode            // another NUMA node
)

var distanceNames = [...]string{"same-cpu", "same-core", "same-cluster", "same-llc", "other-llc", "other-node"}

func (d Distance) String() string {
	if d < 0 || int(d) >= len(distanceNames) {
		return "distance?"
	}
	return distanceNames[d]
}

// DistanceOf classifies CPUs a and b of spec.
func DistanceOf(spec *topology.MachineSpec, a, b cpumask.CPU) Distance {
	ca, cb := &spec.CPUs[a], &spec.CPUs[b]
	switch {
	case a == b:
		return SameCPU
	case ca.Core == cb.Core:
		return SameCore
	case ca.LLC == cb.LLC && ca.Cluster == cb.Cluster && SubLLCClusters(spec)[ca.Cluster]:
		return SameCluster
	case ca.LLC == cb.LLC:
		return SameLLC
	case ca.Node == cb.Node:
		return OtherLLC
	}
	return OtherNode
}

// SubLLCClusters marks the clusters of spec (by id) that hold more than
// one core and fewer CPUs than the LLC they are in: Kunpeng 920's
// clusters of four cores sharing an L3 tag inside a die's L3,
// Jacobsville's and the E-core modules' shared L2s. Two cores of such a
// cluster exchange lines faster than two cores of the LLC
// (line_same_cluster_ns). A cluster that is its LLC (Zen's CCX, a
// big.LITTLE cluster with its own L2), spans several, or is one core (a
// machine without clusters, whose cluster_cpus are the core's threads) is
// not one: its CPUs are SameLLC or SameCore.
func SubLLCClusters(spec *topology.MachineSpec) map[int]bool {
	clusterCPUs := map[int]int{}
	llcCPUs := map[int]int{}
	llcOf := map[int]int{}
	coreOf := map[int]int{}
	several := map[int]bool{} // more than one core
	spans := map[int]bool{}
	for _, c := range spec.CPUs {
		clusterCPUs[c.Cluster]++
		llcCPUs[c.LLC]++
		if l, ok := llcOf[c.Cluster]; ok && l != c.LLC {
			spans[c.Cluster] = true
		}
		llcOf[c.Cluster] = c.LLC
		if k, ok := coreOf[c.Cluster]; ok && k != c.Core {
			several[c.Cluster] = true
		}
		coreOf[c.Cluster] = c.Core
	}
	out := map[int]bool{}
	for cl, n := range clusterCPUs {
		if several[cl] && !spans[cl] && n < llcCPUs[llcOf[cl]] {
			out[cl] = true
		}
	}
	return out
}

// nodeFrac places the node distance of CPUs a and b between a local access
// (0, SLIT 10) and the machine's farthest pair of nodes (1). The
// _other_node parameters are given for the farthest pair; nearer pairs
// interpolate linearly in SLIT distance from the _other_llc value.
func nodeFrac(spec *topology.MachineSpec, a, b cpumask.CPU) float64 {
	na, nb := spec.CPUs[a].Node, spec.CPUs[b].Node
	return nodeFracNodes(spec, na, nb)
}

// NodeFrac places the distance between nodes na and nb between the local
// distance (0) and the machine's largest distance (1): the fraction by
// which "other node" parameters are interpolated from "other LLC" ones.
func NodeFrac(spec *topology.MachineSpec, na, nb int) float64 { return nodeFracNodes(spec, na, nb) }

func nodeFracNodes(spec *topology.MachineSpec, na, nb int) float64 {
	if na == nb {
		return 0
	}
	dmax := 10
	for _, row := range spec.Distance {
		for _, d := range row {
			dmax = max(dmax, d)
		}
	}
	if dmax <= 10 {
		return 1
	}
	return float64(spec.Distance[na][nb]-10) / float64(dmax-10)
}

// IdleLimits constrain the idle governor besides its prediction: the
// states switched off (cpuidle's stateN/disable, `cpupower idle-set -d`),
// by index, and a PM QoS CPU latency request (cpu_latency_qos, e.g.
// /dev/cpu_dma_latency held open) when Limited.
type IdleLimits struct {
	Disabled     []bool
	Limited      bool
	LatencyLimit engine.Time
}

func (l IdleLimits) disabled(i int) bool { return i < len(l.Disabled) && l.Disabled[i] }

// SelectIdleState is the idle governor, after menu_select
// (drivers/cpuidle/governors/menu.c, v6.19; the same order in v6.0 and
// v5.12): walking the states shallowest first it skips disabled ones,
// takes the first enabled state whatever its latency, and stops at the
// first state whose target residency exceeds the predicted idle time or
// whose advertised exit latency exceeds the latency request. With no
// state enabled it takes state 0. It returns -1 for an empty list. The
// kernel model predicts with the CPU's running average of idle periods
// (sched's idleGovernorSelect); calibration with the measured wakeup
// time. Simplified: menu's own prediction (next timer event, correction
// factors, the repeating-interval detector), its POLL rule (a polling
// state 0 is replaced by the next state when a timer is far) and the
// latency_req = predicted / performance-multiplier cap of older kernels
// are not modelled.
func SelectIdleState(states []topology.IdleState, predicted engine.Time, lim IdleLimits) int {
	if len(states) == 0 {
		return -1
	}
	idx := -1
	for i, st := range states {
		if lim.disabled(i) {
			continue
		}
		if idx == -1 {
			idx = i
		}
		if engine.Time(st.TargetResidencyNs) > predicted {
			break
		}
		if lim.Limited && engine.Time(st.ExitLatencyNs) > lim.LatencyLimit {
			break
		}
		idx = i
	}
	if idx == -1 {
		idx = 0
	}
	return idx
}
