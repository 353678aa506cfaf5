package sched

import (
	"math/rand/v2"

	"github.com/schedlab/schedlab/internal/topology"
)

// CPU idle types of load balancing (enum cpu_idle_type, v6.19 values:
// __CPU_NOT_IDLE is 0 since v6.10; before, CPU_IDLE was 0).
const (
	CPUNotIdle      = 0 // __CPU_NOT_IDLE
	CPUIdle         = 1 // CPU_IDLE
	CPUNewlyIdle    = 2 // CPU_NEWLY_IDLE
	CPUMaxIdleTypes = 3
)

// SdSchedstat mirrors the schedstat counters of struct sched_domain (v6.19;
// v6.0 and v5.12 lack the lb_imbalance split, which their version-15
// schedstat does not print).
type SdSchedstat struct {
	LbCount           [CPUMaxIdleTypes]uint64
	LbFailed          [CPUMaxIdleTypes]uint64
	LbBalanced        [CPUMaxIdleTypes]uint64
	LbImbalanceLoad   [CPUMaxIdleTypes]uint64
	LbImbalanceUtil   [CPUMaxIdleTypes]uint64
	LbImbalanceTask   [CPUMaxIdleTypes]uint64
	LbImbalanceMisfit [CPUMaxIdleTypes]uint64
	LbGained          [CPUMaxIdleTypes]uint64
	LbHotGained       [CPUMaxIdleTypes]uint64
	LbNoBusyq         [CPUMaxIdleTypes]uint64
	LbNoBusyg         [CPUMaxIdleTypes]uint64
	AlbCount          uint64
	AlbFailed         uint64
	AlbPushed         uint64
	SbeCount          uint64
	SbeBalanced       uint64
	SbePushed         uint64
	SbfCount          uint64
	SbfBalanced       uint64
	SbfPushed         uint64
	TTWUWakeRemote    uint64
	TTWUMoveAffine    uint64
	TTWUMoveBalance   uint64
}

// SchedDomain is the mutable half of struct sched_domain for one CPU's
// domain; T is the read-only topology built by the machine model.
type SchedDomain struct {
	T                  *topology.Domain
	Parent, Child      *SchedDomain
	BalanceInterval    uint64 // ms
	LastBalance        uint64 // jiffies
	NrBalanceFailed    int
	MaxNewidleLbCost   uint64
	LastDecayMaxLbCost uint64
	// v6.19 newidle sampling (NI_RANDOM).
	NewidleCall, NewidleSuccess, NewidleRatio uint64
	Stats                                     SdSchedstat

	// --- wakeup path ---
	// AvgScanCost mirrors sd->avg_scan_cost (SIS_PROP, v5.x–v6.9): a 1/8
	// EWMA of select_idle_cpu's scan time, kept on the waker's LLC domain.
	AvgScanCost uint64
}

// SchedDomainShared mirrors struct sched_domain_shared (one per LLC; v6.19,
// v6.0 and v5.12 alike in the fields used).
type SchedDomainShared struct {
	NrBusyCPUs   int
	HasIdleCores bool
	NrIdleScan   int
	// Overloaded is the SIS_UTIL v1 RFC's "bool overloaded"
	// (Settings.SISUtilV1, updateLLCOverloaded); no baseline has it.
	Overloaded bool

	// line is the structure's cache line (all its fields share one;
	// Settings.LLCSharedLines).
	line sharedLine
}

// SchedGroupCapacity mirrors struct sched_group_capacity (v6.19; the same
// in v6.0 and v5.12).
type SchedGroupCapacity struct {
	Capacity, MinCapacity, MaxCapacity uint64
	NextUpdate                         uint64
	Imbalance                          int
}

// domainState is the kernel's runtime copy of the sched domain hierarchy.
type domainState struct {
	// SD[cpu] is the CPU's domains bottom-up (rq->sd, ->parent, ...).
	SD     [][]*SchedDomain
	byID   []*SchedDomain
	Shared []*SchedDomainShared
	SGC    []*SchedGroupCapacity
}

// buildDomainState mirrors what build_sched_domains initialises at boot
// (sd_init's balance_interval and last_balance, sched_domain_shared's
// nr_busy_cpus = sd_weight, group capacities of 1024 per CPU; v6.19, the
// same in v6.0 and v5.12). With Settings.BalancePhase each last_balance is
// drawn from the interval before boot's jiffy, as on a kernel that has been
// up a while (a simplification: sd_init sets it to jiffies).
func (k *Kernel) buildDomainState() {
	t := k.Topo
	ds := &k.dom
	ds.byID = make([]*SchedDomain, len(t.AllDomains))
	ds.SD = make([][]*SchedDomain, t.NrCPUs)
	jiff := k.Jiffies()
	var phase *rand.Rand // Settings.BalancePhase: a warm kernel's last_balance
	if k.S.BalancePhase {
		phase = k.Eng.Rand("balance_phase")
	}
	for cpu, chain := range t.Domains {
		var prev *SchedDomain
		for _, d := range chain {
			last := jiff
			if phase != nil {
				last = jiff - phase.Uint64N(k.msecsToJiffies(uint64(d.BalanceInterval))+1)
			}
			sd := &SchedDomain{T: d, BalanceInterval: uint64(d.BalanceInterval), LastBalance: last,
				NewidleCall: uint64(d.NewidleCall), NewidleSuccess: uint64(d.NewidleSuccess), NewidleRatio: uint64(d.NewidleRatio)}
			ds.byID[d.ID] = sd
			ds.SD[cpu] = append(ds.SD[cpu], sd)
			if prev != nil {
				prev.Parent = sd
				sd.Child = prev
			}
			prev = sd
		}
	}
	ds.Shared = make([]*SchedDomainShared, t.NrShared)
	for i := range ds.Shared {
		ds.Shared[i] = &SchedDomainShared{line: newSharedLine(t.NrCPUs)}
	}
	for i, sh := range t.Shared {
		ds.Shared[i].NrBusyCPUs = sh.NrBusyCPUs
	}
	if k.S.WarmLLCShared {
		// update_idle_cpu_scan with sum_util = 0 stores llc_weight
		// (Settings.WarmLLCShared); the SIS_UTIL v2 RFC's
		// update_nr_idle_scan stores llc_size as well. With SMT, the
		// last CPU of an idle core to go idle set has_idle_cores
		// (__update_idle_core), and no scan has cleared it since.
		for cpu := range t.NrCPUs {
			if i := t.SdLLCShared[cpu]; i >= 0 {
				ds.Shared[i].NrIdleScan = t.SdLLCSize[cpu]
				ds.Shared[i].HasIdleCores = t.SMTPresent
			}
		}
	}
	ds.SGC = make([]*SchedGroupCapacity, len(t.Groups))
	for i, g := range t.Groups {
		ds.SGC[i] = &SchedGroupCapacity{Capacity: uint64(g.Capacity), MinCapacity: uint64(g.MinCapacity), MaxCapacity: uint64(g.MaxCapacity)}
	}
}

// Domains returns cpu's runtime domains, bottom-up.
func (k *Kernel) Domains(cpu int) []*SchedDomain { return k.dom.SD[cpu] }

// DomainByID returns the runtime domain of a topology domain.
func (k *Kernel) DomainByID(id int) *SchedDomain { return k.dom.byID[id] }

// SdLLCShared mirrors per_cpu(sd_llc_shared, cpu) (every baseline); nil if
// the CPU has no LLC domain.
func (k *Kernel) SdLLCShared(cpu int) *SchedDomainShared {
	i := k.Topo.SdLLCShared[cpu]
	if i < 0 {
		return nil
	}
	return k.dom.Shared[i]
}

// SGC returns the capacity state of a topology group.
func (k *Kernel) SGC(g *topology.Group) *SchedGroupCapacity { return k.dom.SGC[g.ID] }
