package sched

import (
	"math"

	"github.com/schedlab/schedlab/internal/costmodel"
	"github.com/schedlab/schedlab/internal/engine"
	"github.com/schedlab/schedlab/internal/topology"
)

// ApplyCosts installs a machine's cost-model parameters: the kernel
// model's own costs (work.go) and the load-balancing costs. Parameters are
// converted once to integers, so runs stay byte-identical on any machine
// (the conversions are single correctly-rounded IEEE operations).
func (k *Kernel) ApplyCosts(p *costmodel.Params) {
	k.Costs = CostsFrom(p, k.Topo.Spec)
	k.costsOn = true
	k.startCpufreq()
	k.LBCosts = BalanceCosts{
		BlockedAvgBase:         p.BlockedAvgBase,
		BlockedAvgPerCfsRq:     p.BlockedAvgCfsRq,
		CpufreqUpdateBase:      p.CpufreqUpdate,
		CpufreqUpdatePerCPU:    p.CpufreqUpdateCPU,
		BalanceRqBase:          p.BalanceRqBase,
		SgStatsPerGroup:        p.LBGroup,
		SgStatsPerCPU:          p.LBCPU,
		FindBusiestQueuePerCPU: p.LBFindBusiestCPU,
		TaskExamined:           p.LBTask,
		TaskMigrated:           p.LBMigrate,
		NohzPerCPU:             p.NohzCPU,
		StopperSwitch:          p.StopperSwitch,
	}
	k.S.SISScanCost = uint64(p.SISScanCPU)
}

// CostsFrom converts costmodel.Params for a machine into Costs. The
// pairwise quantities the cost model interpolates by SLIT distance are
// tabulated per node pair.
func CostsFrom(p *costmodel.Params, spec *topology.MachineSpec) Costs {
	nodes := spec.NrNodes()
	// A representative CPU of each node, to ask the cost model about
	// pairs of nodes.
	rep := make([]int, nodes)
	for i := range rep {
		rep[i] = -1
	}
	for _, c := range spec.CPUs {
		if rep[c.Node] < 0 {
			rep[c.Node] = int(c.CPU)
		}
	}
	// fs per byte from a rate in GB/s (bytes per ns).
	fs := func(gbps float64) int64 { return int64(math.Round(1e6 / gbps)) }
	bpus := func(gbps float64) int64 { return int64(math.Round(gbps * 1000)) }
	c := Costs{
		ContextSwitch:   p.ContextSwitch,
		ContextSwitchMM: p.ContextSwitchMM,
		RemoteEnqueue:   p.RemoteEnqueue,
		IPISameLLC:      p.IPISameLLC,
		IdleExit:        true,
		IdleExitDefault: p.IdleExit,
		SMTShare:        int64(math.Round(p.SMTFactor * 1024)),
		PrivateBytes:    p.PrivateCacheKiB * 1024,
		LLCBytes:        p.LLCKiB * 1024,
		FillBytesPerUs:  bpus(p.CacheFillBW),
		RefillLLCFs:     fs(p.RefillLLCBW),
		RefillMemFs:     fs(p.RefillMemoryBW),
		CoreBandwidth:   bpus(p.MemBWCore),
		LLCBandwidth:    bpus(p.MemBWLLC),
		NodeBandwidth:   bpus(p.MemBWNode),
		ScanPerCPU:      p.SISScanCPU,
		LineSameLLC:     p.LineSameLLC,
	}
	c.IPIOther = make([][]engine.Time, nodes)
	c.LineOther = make([][]engine.Time, nodes)
	c.RefillFarFs = make([][]int64, nodes)
	c.RemoteMem1024 = make([][]int64, nodes)
	for a := 0; a < nodes; a++ {
		c.IPIOther[a] = make([]engine.Time, nodes)
		c.LineOther[a] = make([]engine.Time, nodes)
		c.RefillFarFs[a] = make([]int64, nodes)
		c.RemoteMem1024[a] = make([]int64, nodes)
		for b := 0; b < nodes; b++ {
			ca, cb := rep[a], rep[b]
			if ca < 0 || cb < 0 {
				continue
			}
			// Distances between nodes; within a node, the "other LLC"
			// figures (the cost model's nodeFrac is 0 there).
			f := costmodel.NodeFrac(spec, a, b)
			c.IPIOther[a][b] = engine.Time(math.Round(lerp(float64(p.IPIOtherLLC), float64(p.IPIOtherNode), f)))
			c.LineOther[a][b] = engine.Time(math.Round(lerp(float64(p.LineOtherLLC), float64(p.LineOtherNode), f)))
			perByte := lerp(1/p.RefillOtherLLCBW, 1/p.RefillOtherNodeBW, f)
			c.RefillFarFs[a][b] = int64(math.Round(perByte * 1e6))
			c.RemoteMem1024[a][b] = int64(math.Round(lerp(1, p.RemoteMemFactor, f) * 1024))
		}
	}
	return c
}

// lerp interpolates; the conversion keeps the compiler from fusing the
// multiply-add (which some architectures would round differently).
func lerp(a, b, f float64) float64 { return a + float64((b-a)*f) }
