// Package topology is schedlab's machine model: what a machine is (CPUs,
// SMT cores, clusters, last-level caches, packages, NUMA nodes and their
// distances, CPU capacities, frequency domains, idle states) and the sched
// domains and groups Linux builds for it.
//
// It works in two steps, spec then instance. A MachineSpec is plain,
// validated data: one record per CPU as /sys would describe it, the node
// distance (SLIT) matrix and the idle states. Specs come from the built-in
// presets (Preset), from YAML machine files (ParseYAML, in a compact
// regular form or a per-CPU list; see docs/machines.md), or from a sysfs
// tree (ReadSysfs, "host"); Load resolves any of these names.
//
// Build turns a spec into a Topology the way kernel/sched/topology.c does
// at boot, for a chosen kernel baseline (v6.19 by default, v6.0 or v5.12;
// the differences are facts of kernels.Baseline):
//
//   - the topology table: SMT, CLS, MC, PKG (DIE in v6.0 and v5.12; no CLS
//     level in v5.12, whose arm64 MC is not widened to the cluster either)
//     as the x86 or the generic/arm64 table defines their masks, then NODE
//     and one NUMA level per further distinct distance (sched_init_numa);
//   - each CPU's chain of domains bottom-up, stopping at the first level that
//     spans the machine, with sd_init's parameters and flags (asymmetric
//     capacity classification per level, or v5.12's one
//     asym_cpu_capacity_level; SD_NUMA levels past RECLAIM_DISTANCE losing
//     exec/fork balancing and wake affinity, sched_domain_shared for LLC
//     levels);
//   - the groups of every domain (build_sched_groups, and
//     build_overlap_sched_groups with balance masks on NUMA levels);
//   - imb_numa_nr (v6.0, v6.19; v5.12 has none), computed on the chain
//     before degeneration, as the kernel does;
//   - cpu_attach_domain's removal of degenerate domains;
//   - update_top_cache_domain's per-CPU shortcuts (sd_llc, sd_llc_size,
//     sd_llc_id, sd_share_id, sd_numa, sd_asym_packing,
//     sd_asym_cpucapacity).
//
// The Topology is read-only once built. The scheduler model keeps its
// mutable state (balance_interval, last_balance, nr_balance_failed,
// max_newidle_lb_cost, sgc->capacity, nr_busy_cpus, has_idle_cores, ...) in
// its own arrays indexed by Domain.ID, Group.ID and Domain.SharedID.
//
// Not modelled: isolated CPUs and cpuset partitions (one root domain spans
// every CPU), CPU hotplug, relax_domain_level, x86 ITMT (so no
// SD_ASYM_PACKING), SMT with asymmetric capacities, and the energy model.
// The remote copies of NUMA groups are simplified as build.go explains.
package topology
