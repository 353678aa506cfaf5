package topology

import (
	"fmt"
	"sort"

	"github.com/schedlab/schedlab/internal/cpumask"
)

// PresetInfo is one line of the preset list.
type PresetInfo struct {
	Name        string
	NrCPUs      int
	Description string
}

type preset struct {
	desc string
	make func() *MachineSpec
}

// HostName is the pseudo-preset that reads the machine schedlab runs on.
const HostName = "host"

var presets = map[string]preset{
	"zen3-2s-nps1":   {"2-socket AMD EPYC Zen3 (Milan), 2x64 cores, SMT2, 8 CCX/socket, NPS1 (node per socket)", func() *MachineSpec { return zen3(1) }},
	"zen3-2s-nps4":   {"2-socket AMD EPYC Zen3 (Milan), 2x64 cores, SMT2, 8 CCX/socket, NPS4 (4 nodes per socket)", func() *MachineSpec { return zen3(4) }},
	"kunpeng920-96":  {"Huawei Kunpeng 920 (2 sockets x 2 dies of 24 cores, 6 clusters of 4 per die, no SMT)", func() *MachineSpec { return kunpeng920(6) }},
	"kunpeng920-128": {"Huawei Kunpeng 920 (2 sockets x 2 dies of 32 cores, 8 clusters of 4 per die, no SMT)", func() *MachineSpec { return kunpeng920(8) }},
	"hikey":          {"HiSilicon Hi6220 HiKey: 8x Cortex-A53 @1.2GHz, two clusters with separate L2, one frequency domain", hikey},
	"hikey960":       {"HiSilicon Hi3660 HiKey960: 4x Cortex-A53 (capacity 592) + 4x Cortex-A73 (1024), a frequency domain per cluster", hikey960},
	"chromebook-7c":  {"Qualcomm Snapdragon 7c (sc7180) Chromebook: 6x Kryo 468 Silver + 2x Kryo 468 Gold sharing an L3", chromebook7c},
}

// Presets lists the built-in machines, sorted by name (without "host").
func Presets() []PresetInfo {
	out := make([]PresetInfo, 0, len(presets))
	for name, p := range presets {
		out = append(out, PresetInfo{Name: name, NrCPUs: len(p.make().CPUs), Description: p.desc})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Preset returns a fresh copy of a built-in machine.
func Preset(name string) (*MachineSpec, bool) {
	p, ok := presets[name]
	if !ok {
		return nil, false
	}
	s := p.make()
	s.Name, s.Description, s.Source = name, p.desc, "preset"
	if err := s.Validate(); err != nil {
		panic(fmt.Sprintf("topology: preset %s is invalid: %v", name, err))
	}
	return s, true
}

func us(v int64) int64 { return v * 1000 }

// zen3 is a dual-socket EPYC 7763 (Milan).
//
// Sources: the evaluation machine description (shared/reference/patches.md,
// "The machines of these evaluations"): CPUs n and n+128 are SMT siblings,
// socket 0 holds 0-63 and 128-191, LLC id = (cpu mod 128) div 8 (a CCX of 8
// cores sharing 32 MB of L3), NPS4 node k = CPUs 16k..16k+15 and +128 with
// SLIT 10/12/32, NPS1 SLIT 10/32. The L2 is per core, so the cluster
// (cluster_cpus_list, the L2 on x86) is the core. Max frequency is the
// EPYC 7763 boost clock (3.5 GHz). acpi-cpufreq and amd-pstate give every
// CPU its own policy. Idle states are acpi_idle's on Milan as reported by
// cpupower idle-info (C1 = MWAIT, C2 = IO port); approximate. The 400 us
// that server firmware advertises for C2 (CC6) is a policy value: EPYC
// setups report 400 or 800 us ("may be configured in BIOS"), while Zen
// client firmware advertises 18 us for the same CC6 entry (cpupower
// idle-info and xen_acpi_processor logs of Ryzen machines: "C2: ACPI
// IOPORT 0x414 18 uS"), and Schöne et al., "Energy Efficiency Aspects of
// the AMD Zen 2 Architecture" (IEEE Cluster 2021, arXiv:2108.00808),
// measure CC6 wake-ups of Zen 2 cores in the tens of microseconds. The
// governor decides with the advertised 400 us; a wakeup from C2 takes
// 18 us [approximate: the client figure, not a Milan measurement].
func zen3(nps int) *MachineSpec {
	r := Regular{
		Arch:           ArchX86,
		Sockets:        2,
		NodesPerSocket: nps,
		LLCsPerNode:    8 / nps,
		CoresPerLLC:    8,
		ThreadsPerCore: 2,
		Numbering:      NumberingX86,
		Distance:       SocketDistances(2, nps, 12, 32),
		MaxFreqKHz:     3500000,
		FreqDomains:    ScopeCPU,
		IdleStates: []IdleState{
			{Name: "POLL"},
			{Name: "C1", ExitLatencyNs: us(1), TargetResidencyNs: us(2)},
			{Name: "C2", ExitLatencyNs: us(400), TargetResidencyNs: us(800), WakeNs: us(18)},
		},
	}
	s, err := r.Spec()
	if err != nil {
		panic("topology: zen3 preset: " + err.Error())
	}
	// AMD Zen: node_reclaim_distance = 32 (init_amd_zen_common).
	s.ReclaimDistance = 32
	return s
}

// kunpengWFI is the Kunpeng 920's only idle state as cpuidle lists it,
// WFI with an exit latency and target residency of 1 us, with which the
// governor and PM QoS decide. Those are placeholders: the kernel's own
// WFI state (ARM_CPUIDLE_WFI_STATE, arch/arm/include/asm/cpuidle.h) gives
// every WFI exit_latency = 1 and target_residency = 1, the least a state
// can advertise in whole microseconds. WFI only gates the core's clock
// and keeps its state, so a wakeup from it is the interrupt's delivery
// (the IPI's latency, charged apart) and a restart of the clock: WakeNs
// 100 ns [estimate: no public measurement found]. Until 2026-12-07 a
// wakeup paid the advertised 1 us, and the in-cluster lat_pipe round trip
// (two wakeups) ran 8.68 us against the published 5.68; it is 6.87 us now
// (docs/costs.md, "Kunpeng 920 across a cluster").
var kunpengWFI = IdleState{Name: "WFI", ExitLatencyNs: us(1), TargetResidencyNs: us(1), WakeNs: 100}

// kunpeng920 is a 2-socket Kunpeng 920 with clustersPerDie clusters of 4
// cores per die (6 on the 48-core 920-4826, 8 on the 64-core 920-6426).
//
// Sources: patches.md (2 sockets, 4 dies, each die a NUMA node and one LLC,
// clusters of 4 cores sharing an L3 tag; distances
// [10 12 20 22; 12 10 22 24; 20 22 10 12; 22 24 12 10]). CPUs are numbered
// sequentially per die as ACPI PPTT/MADT order gives them (node 0 = CPUs
// 0-23 on the 96-core part). Frequency: 2.6 GHz, one CPPC policy per CPU.
// Idle states: kunpengWFI. What a wakeup across clusters costs is
// in the costs (costmodel: ipi_same_llc_ns against ipi_same_cluster_ns).
// Until 2026-12-07 it was a cluster-gated WFI state here (a WFI that
// woke 1 us slower once all four cores of its cluster had been idle for
// 2 us), which charged the cost only where the cluster was quiet; a
// machine file can still list such a state (idle_states: cluster: true,
// gate_delay_us; docs/costs.md, "Kunpeng 920 across a cluster").
func kunpeng920(clustersPerDie int) *MachineSpec {
	r := Regular{
		Arch:            ArchARM64,
		Sockets:         2,
		NodesPerSocket:  2,
		LLCsPerNode:     1,
		ClustersPerLLC:  clustersPerDie,
		CoresPerCluster: 4,
		ThreadsPerCore:  1,
		Numbering:       NumberingSequential,
		Distance: [][]int{
			{10, 12, 20, 22},
			{12, 10, 22, 24},
			{20, 22, 10, 12},
			{22, 24, 12, 10},
		},
		MaxFreqKHz:  2600000,
		FreqDomains: ScopeCPU,
		IdleStates:  []IdleState{kunpengWFI},
	}
	s, err := r.Spec()
	if err != nil {
		panic("topology: kunpeng920 preset: " + err.Error())
	}
	// A server: run at full speed, as the x86 servers do, not with arm64's
	// schedutil default. The HiSilicon reports in the fidelity corpus do
	// not state their governor [assumed]; schedutil on a 1-client tbench
	// holds the pair's CPUs near 60% of 2.6 GHz.
	s.CpufreqGovernor = "performance"
	return s
}

// hikey is the 96Boards HiKey (Hi6220).
//
// Sources: arch/arm64/boot/dts/hisilicon/hi6220.dtsi: cpu-map with cluster0
// (cpu0-3) and cluster1 (cpu4-7), each cluster's own L2 (CLUSTER0_L2,
// CLUSTER1_L2) and no L3, so the L2 is the LLC; one opp-shared table for all
// CPUs (one frequency domain) topping at 1.2 GHz; no capacity-dmips-mhz (all
// 1024). Idle states: WFI (added by the PSCI cpuidle driver), CPU_SLEEP
// (entry-latency-us 700, exit-latency-us 250, min-residency-us 1000) and
// CLUSTER_SLEEP (entry 1000, exit 700, min-residency 2700,
// wakeup-latency-us 1500). The advertised exit latency is what
// dt_idle_states.c gives cpuidle: wakeup-latency-us when the DT has it,
// else entry + exit (950 us and 1500 us); a wakeup takes the DT's
// exit-latency-us (250 us and 700 us; itself a worst case).
func hikey() *MachineSpec {
	r := Regular{
		Arch:            ArchARM64,
		Sockets:         1,
		NodesPerSocket:  1,
		LLCsPerNode:     2,
		ClustersPerLLC:  1,
		CoresPerCluster: 4,
		ThreadsPerCore:  1,
		MaxFreqKHz:      1200000,
		FreqDomains:     ScopeMachine,
		IdleStates: []IdleState{
			{Name: "WFI", ExitLatencyNs: us(1), TargetResidencyNs: us(1)},
			{Name: "cpu-sleep", ExitLatencyNs: us(950), TargetResidencyNs: us(1000), WakeNs: us(250)},
			{Name: "cluster-sleep", ExitLatencyNs: us(1500), TargetResidencyNs: us(2700), WakeNs: us(700), Cluster: true},
		},
	}
	s, err := r.Spec()
	if err != nil {
		panic("topology: hikey preset: " + err.Error())
	}
	return s
}

// hikey960 is the 96Boards HiKey960 (Hi3660).
//
// Sources: arch/arm64/boot/dts/hisilicon/hi3660.dtsi: cluster0 = cpu0-3
// Cortex-A53 with A53_L2, cluster1 = cpu4-7 Cortex-A73 with A73_L2;
// capacity-dmips-mhz 592 and 1024; one opp-shared table per cluster (max
// 1844 MHz and 2362 MHz). The capacities are the DT's capacity-dmips-mhz as
// the evaluation describes them; the kernel would scale them by max
// frequency (topology_normalize_cpu_scale: 592*1844/2362 = 462 for the
// A53s). Idle states: WFI, CPU_SLEEP_0/1 and CLUSTER_SLEEP_0/1
// (exit-latency-us and min-residency-us). [unverified: the DT's
// entry-latency-us were not checked, so the advertised exit latency here is
// the exit-latency-us alone, and a wakeup pays the same.]
func hikey960() *MachineSpec {
	r := Regular{
		Arch:            ArchARM64,
		Sockets:         1,
		NodesPerSocket:  1,
		LLCsPerNode:     2,
		ClustersPerLLC:  1,
		CoresPerCluster: 4,
		ThreadsPerCore:  1,
		FreqDomains:     ScopeCluster,
	}
	s, err := r.Spec()
	if err != nil {
		panic("topology: hikey960 preset: " + err.Error())
	}
	little := []IdleState{
		{Name: "WFI", ExitLatencyNs: us(1), TargetResidencyNs: us(1)},
		{Name: "cpu-sleep-0", ExitLatencyNs: us(650), TargetResidencyNs: us(1500)},
		{Name: "cluster-sleep-0", ExitLatencyNs: us(1600), TargetResidencyNs: us(3500), Cluster: true},
	}
	big := []IdleState{
		{Name: "WFI", ExitLatencyNs: us(1), TargetResidencyNs: us(1)},
		{Name: "cpu-sleep-1", ExitLatencyNs: us(550), TargetResidencyNs: us(1500)},
		{Name: "cluster-sleep-1", ExitLatencyNs: us(2900), TargetResidencyNs: us(3500), Cluster: true},
	}
	for i := range s.CPUs {
		c := &s.CPUs[i]
		if i < 4 {
			c.Capacity, c.MaxFreqKHz, c.IdleStates = 592, 1844000, little
		} else {
			c.Capacity, c.MaxFreqKHz, c.IdleStates = 1024, 2362000, big
		}
	}
	return s
}

// chromebook7c is a Snapdragon 7c (sc7180) Chromebook.
//
// Sources: arch/arm64/boot/dts/qcom/sc7180.dtsi: cpu0-5 have
// capacity-dmips-mhz 415 and qcom,freq-domain <&cpufreq_hw 0>, cpu6-7 have
// 1024 and <&cpufreq_hw 1>; every CPU has a private L2 (l2_0 ... l2_700)
// whose next level is the shared l3_0, so the LLC spans all 8 CPUs; the
// cpu-map puts all 8 cores in one cluster0, so the cluster equals the LLC
// and there is no CLS level. Max frequencies: cpu0_opp_table tops at
// 1804.8 MHz; cpu6_opp_table lists up to 2553.6 MHz, of which the 7c's
// cpufreq-hw LUT exposes 2.4 GHz [the 2553.6 MHz OPP is the 7c Gen 2's].
// Capacities are the DT's capacity-dmips-mhz (the kernel's frequency
// normalisation would give 415*1804800/2400000 = 312 for the little CPUs).
// Idle states: WFI plus little-power-down (entry 549 us, exit 901 us,
// residency 1774 us) and little-rail-power-down (702, 915, 4001) for
// cpu0-5, big-power-down (523, 1244, 2207) and big-rail-power-down (526,
// 1854, 5555) for cpu6-7. cpuidle is told entry + exit (dt_idle_states.c
// without wakeup-latency-us: 1450, 1617, 1767 and 2380 us); a wakeup
// takes the exit-latency-us. Simplified: the rail power-down states are
// modelled as cluster states (taken only when every CPU is idle), while
// sc7180.dtsi lists them per CPU and has a separate CLUSTER_SLEEP_0
// domain state (entry 3263, exit 6562, residency 9926) that is not
// modelled.
func chromebook7c() *MachineSpec {
	s := &MachineSpec{
		Arch:     ArchARM64,
		Distance: [][]int{{10}},
	}
	little := []IdleState{
		{Name: "WFI", ExitLatencyNs: us(1), TargetResidencyNs: us(1)},
		{Name: "little-power-down", ExitLatencyNs: us(549 + 901), TargetResidencyNs: us(1774), WakeNs: us(901)},
		{Name: "little-rail-power-down", ExitLatencyNs: us(702 + 915), TargetResidencyNs: us(4001), WakeNs: us(915), Cluster: true},
	}
	big := []IdleState{
		{Name: "WFI", ExitLatencyNs: us(1), TargetResidencyNs: us(1)},
		{Name: "big-power-down", ExitLatencyNs: us(523 + 1244), TargetResidencyNs: us(2207), WakeNs: us(1244)},
		{Name: "big-rail-power-down", ExitLatencyNs: us(526 + 1854), TargetResidencyNs: us(5555), WakeNs: us(1854), Cluster: true},
	}
	for i := range 8 {
		c := CPUSpec{CPU: cpumask.CPU(i), Core: i, Cluster: 0, LLC: 0, Package: 0, Node: 0}
		if i < 6 {
			c.Capacity, c.FreqDomain, c.MaxFreqKHz, c.IdleStates = 415, 0, 1804800, little
		} else {
			c.Capacity, c.FreqDomain, c.MaxFreqKHz, c.IdleStates = 1024, 1, 2400000, big
		}
		s.CPUs = append(s.CPUs, c)
	}
	return s
}
