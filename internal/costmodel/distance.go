package costmodel

import (
	"github.com/schedlab/schedlab/internal/cpumask"
	"github.com/schedlab/schedlab/internal/engine"
	"github.com/schedlab/schedlab/internal/topology"
)

// Distance classifies two CPUs by the closest thing they share.
type Distance int

const (
	SameCPU   Distance = iota
	SameCore           // SMT siblings: they share the private caches
	SameLLC            // the same last-level cache (a cluster counts as the LLC's)
	OtherLLC           // another LLC of the same NUMA node
	OtherNode          // another NUMA node
)

var distanceNames = [...]string{"same-cpu", "same-core", "same-llc", "other-llc", "other-node"}

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
	case ca.LLC == cb.LLC:
		return SameLLC
	case ca.Node == cb.Node:
		return OtherLLC
	}
	return OtherNode
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

// SelectIdleState is the idle governor: a simplified menu governor
// (drivers/cpuidle/governors/menu.c) that picks the deepest state whose
// target residency is at most the predicted idle time and whose exit
// latency is at most latencyLimit (0: no limit, as without a PM QoS
// request). States are shallowest first; the first state is taken when
// none qualifies. It returns -1 for an empty list. The kernel model
// predicts with the CPU's running average of idle periods (sched's
// idleGovernorSelect); calibration with the measured wakeup time.
func SelectIdleState(states []topology.IdleState, predicted, latencyLimit engine.Time) int {
	if len(states) == 0 {
		return -1
	}
	best := 0
	for i, st := range states {
		if engine.Time(st.TargetResidencyNs) > predicted {
			continue
		}
		if latencyLimit > 0 && engine.Time(st.ExitLatencyNs) > latencyLimit {
			continue
		}
		best = i
	}
	return best
}
