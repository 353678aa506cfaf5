package costmodel

import (
	"math"

	"github.com/schedlab/schedlab/internal/cpumask"
	"github.com/schedlab/schedlab/internal/engine"
	"github.com/schedlab/schedlab/internal/topology"
)

// The cost formulas in floating point, as docs/costs.md writes them: the
// oracle the integer Table (what a run charges) is checked against
// (compile_test.go, bandwidth_test.go). Nothing outside the tests uses
// them.

func ns(v float64) engine.Time { return engine.Time(math.Round(v)) }

// IPILatency is the time from sending a reschedule IPI on from to the
// handler running on to, when to is not in an idle state (add
// IdleExitLatency for one that is).
func (p *Params) IPILatency(spec *topology.MachineSpec, from, to cpumask.CPU) engine.Time {
	switch d := DistanceOf(spec, from, to); d {
	case SameCPU:
		return 0
	case SameCluster:
		return p.IPISameCluster
	case SameCore:
		// SMT siblings share their cluster, where it is smaller than the LLC.
		if c := spec.CPUs[from].Cluster; SubLLCClusters(spec)[c] {
			return p.IPISameCluster
		}
		return p.IPISameLLC
	case SameLLC:
		return p.IPISameLLC
	default:
		return ns(lerp(float64(p.IPIOtherLLC), float64(p.IPIOtherNode), nodeFrac(spec, from, to)))
	}
}

// LLCLineRead is the time for reader to load a cache line that the CPUs
// of target's LLC keep writing: LineSameLLC from within that LLC,
// LineOtherLLC to LineOtherNode (interpolated by SLIT distance) beyond.
func (p *Params) LLCLineRead(spec *topology.MachineSpec, reader, target cpumask.CPU) engine.Time {
	switch d := DistanceOf(spec, reader, target); d {
	case SameCPU, SameCore, SameCluster, SameLLC:
		return p.LineSameLLC
	default:
		return ns(lerp(float64(p.LineOtherLLC), float64(p.LineOtherNode), nodeFrac(spec, reader, target)))
	}
}

// CacheRefill is the time a task spends refetching its working set when it
// resumes on CPU to after last running on CPU from, its footprint being
// footprint bytes and away the time other work ran on from's caches while
// it was off the CPU (the wall time away is an upper bound). The formula
// (docs/costs.md, "Cache refill"):
//
//	P = min(footprint, private cache), L = min(footprint, LLC)
//	warmP = P·exp(−away·cache_fill / private cache)   what survived in the old core's private cache
//	warmL = L·exp(−away·cache_fill / LLC)             what survived in the old LLC
//	cold  = L − warmL                                  must come from memory wherever the task runs
//	same CPU or SMT sibling:  (min(P, warmL) − warmP)/refill_llc + cold/refill_memory
//	same LLC:                 min(P, warmL)/refill_llc           + cold/refill_memory
//	other LLC or node:        warmL/refill_far                   + cold·remote/refill_memory
//
// The private working set (P) must reach the new core's private cache and
// the rest of the footprint (up to the LLC's size) the new LLC; a line
// costs according to where it still is. After a long absence every cache is
// cold and the distance no longer matters. refill_far interpolates (in time per byte) from refill_other_llc to
// refill_other_node by SLIT distance, and remote is the remote-memory
// factor for the new CPU's node against the old one's (the task's memory
// stays where it was first touched). GB/s equals bytes per ns. warmP ⊆
// warmL is assumed (an inclusive LLC; Zen3's victim L3 is not modelled).
func (p *Params) CacheRefill(spec *topology.MachineSpec, from, to cpumask.CPU, footprint int64, away engine.Time, memNode int) engine.Time {
	if footprint <= 0 {
		return 0
	}
	if away < 0 {
		away = 0
	}
	priv := float64(p.PrivateCacheKiB) * 1024
	llc := float64(p.LLCKiB) * 1024
	P := math.Min(float64(footprint), priv)
	L := math.Min(float64(footprint), llc)
	a := float64(away)
	warmP := P * math.Exp(-a*p.CacheFillBW/priv)
	warmL := L * math.Exp(-a*p.CacheFillBW/llc)
	cold := L - warmL
	var t float64
	switch d := DistanceOf(spec, from, to); d {
	case SameCPU, SameCore:
		t = math.Max(0, math.Min(P, warmL)-warmP)/p.RefillLLCBW + cold/p.RefillMemoryBW
	case SameCluster, SameLLC:
		t = math.Min(P, warmL)/p.RefillLLCBW + cold/p.RefillMemoryBW
	default:
		f := nodeFrac(spec, from, to)
		perByte := lerp(1/p.RefillOtherLLCBW, 1/p.RefillOtherNodeBW, f)
		if memNode < 0 {
			memNode = spec.CPUs[from].Node
		}
		remote := p.RemoteMemFactorFor(spec, to, memNode)
		t = warmL*perByte + cold*remote/p.RefillMemoryBW
	}
	return ns(t)
}

// RemoteMemFactor is the factor by which memory-bound work on cpu slows
// down when its memory is on node memNode: 1 locally, RemoteMemFactor for
// the farthest node, interpolated in SLIT distance between.
func (p *Params) RemoteMemFactorFor(spec *topology.MachineSpec, cpu cpumask.CPU, memNode int) float64 {
	return lerp(1, p.RemoteMemFactor, nodeFracNodes(spec, spec.CPUs[cpu].Node, memNode))
}

// SMTSpeed is a thread's speed relative to running alone on its core:
// SMTFactor while its sibling runs a task, 1 otherwise.
func (p *Params) SMTSpeed(siblingBusy bool) float64 {
	if siblingBusy {
		return p.SMTFactor
	}
	return 1
}

// PipeWriteCost is the CPU work of writing n bytes to a pipe.
func (p *Params) PipeWriteCost(n int) engine.Time {
	return p.PipeWrite + ns(float64(n)*p.PipeByte)
}

// PipeReadCost is the CPU work of reading n bytes from a pipe.
func (p *Params) PipeReadCost(n int) engine.Time {
	return p.PipeRead + ns(float64(n)*p.PipeByte)
}

// UnixSendCost is the CPU work of sending n bytes on an AF_UNIX stream.
func (p *Params) UnixSendCost(n int) engine.Time {
	return p.UnixSend + ns(float64(n)*p.UnixByte)
}

// UnixRecvCost is the CPU work of receiving n bytes from an AF_UNIX stream.
func (p *Params) UnixRecvCost(n int) engine.Time {
	return p.UnixRecv + ns(float64(n)*p.UnixByte)
}

// TCPSendCost is the CPU work of sending n bytes on loopback TCP.
func (p *Params) TCPSendCost(n int) engine.Time {
	return p.TCPSend + ns(float64(n)*p.TCPByte)
}

// TCPRecvCost is the CPU work of receiving n bytes from loopback TCP.
func (p *Params) TCPRecvCost(n int) engine.Time {
	return p.TCPRecv + ns(float64(n)*p.TCPByte)
}

// SISScan is the work of a select_idle_cpu scan that examined n CPUs.
func (p *Params) SISScan(n int) engine.Time { return engine.Time(n) * p.SISScanCPU }

// BlockedAverages is the work of one update_blocked_averages call that
// walked n leaf cfs_rqs.
func (p *Params) BlockedAverages(n int) engine.Time {
	return p.BlockedAvgBase + engine.Time(n)*p.BlockedAvgCfsRq
}

// CpufreqUpdateCost is the work of one cpufreq_update_util call whose
// frequency domain has n CPUs.
func (p *Params) CpufreqUpdateCost(n int) engine.Time {
	return p.CpufreqUpdate + engine.Time(n)*p.CpufreqUpdateCPU
}

// LoadBalanceStats is the work of update_sd_lb_stats over groups groups
// holding cpus CPUs in all.
func (p *Params) LoadBalanceStats(groups, cpus int) engine.Time {
	return engine.Time(groups)*p.LBGroup + engine.Time(cpus)*p.LBCPU
}

// --- Memory bandwidth sharing ----------------------------------------------

// MemDemand is one running task's use of memory bandwidth.
type MemDemand struct {
	CPU cpumask.CPU
	// Demand is the bandwidth the task would draw alone, in GB/s.
	Demand float64
	// MemNode is the node its memory is on (first touch); negative for
	// the CPU's node.
	MemNode int
}

// MemShares is the float form of MemSharer.Shares: each task's granted
// fraction of its demand by progressive filling of the common fraction,
// under MemBWCore per task, MemBWLLC per LLC and MemBWNode per memory
// node.
func (p *Params) MemShares(spec *topology.MachineSpec, tasks []MemDemand) []float64 {
	n := len(tasks)
	frac := make([]float64, n)
	active := make([]bool, n)
	type limit struct {
		cap     float64
		members []int
	}
	var limits []*limit
	byLLC, byNode := map[int]*limit{}, map[int]*limit{}
	for i, t := range tasks {
		frac[i] = 1
		if t.Demand <= 0 {
			continue
		}
		active[i] = true
		llc := spec.CPUs[t.CPU].LLC
		if byLLC[llc] == nil {
			byLLC[llc] = &limit{cap: p.MemBWLLC}
			limits = append(limits, byLLC[llc])
		}
		byLLC[llc].members = append(byLLC[llc].members, i)
		node := t.MemNode
		if node < 0 {
			node = spec.CPUs[t.CPU].Node
		}
		if byNode[node] == nil {
			byNode[node] = &limit{cap: p.MemBWNode}
			limits = append(limits, byNode[node])
		}
		byNode[node].members = append(byNode[node].members, i)
	}
	own := func(i int) float64 { return math.Min(1, p.MemBWCore/tasks[i].Demand) }
	levelOf := func(l *limit) (float64, bool) {
		used, sum := 0.0, 0.0
		for _, i := range l.members {
			if active[i] {
				sum += tasks[i].Demand
			} else {
				used += frac[i] * tasks[i].Demand
			}
		}
		return math.Max(0, l.cap-used) / sum, sum > 0
	}
	const eps = 1e-12
	for {
		level, any := 1.0, false
		for i := range tasks {
			if active[i] {
				any = true
				level = math.Min(level, own(i))
			}
		}
		if !any {
			return frac
		}
		var full []*limit
		for _, l := range limits {
			if f, ok := levelOf(l); ok {
				level = math.Min(level, f)
			}
		}
		for _, l := range limits {
			if f, ok := levelOf(l); ok && f <= level*(1+eps) {
				full = append(full, l)
			}
		}
		freeze := make([]bool, n)
		for _, l := range full {
			for _, i := range l.members {
				freeze[i] = true
			}
		}
		for i := range tasks {
			if active[i] && (freeze[i] || own(i) <= level*(1+eps)) {
				active[i] = false
				frac[i] = level
			}
		}
	}
}
