// Package costmodel is the machine cost model: the parameters that turn
// scheduling decisions into time, their defaults per machine preset with
// the source of every number, the formulas that combine them, and the
// tooling that measures them on the host (calibration) and checks the
// simulation against the real kernel (validation).
//
// # Parameters
//
// Params holds one machine's parameters as named fields (unit and meaning
// in each field's doc comment and tags). There are four kinds: work (kernel
// or user CPU time in ns at capacity 1024 and maximum frequency, which
// ScaleWork stretches for smaller and slower CPUs), latencies (IPIs,
// idle-state exits, cache-line transfers), sizes and bandwidths (caches,
// refill rates, memory bandwidth per core, LLC and node), and factors (SMT
// sharing, remote memory). Every value carries a source string: a
// datasheet, a published microbenchmark with its citation, an estimate with
// its reasoning, calibration, or the file and line that set it.
//
// # Resolution
//
// For(spec) starts from the defaults of the machine's preset (Defaults;
// "generic" for host and YAML machines, or the preset a costs section
// names with base:), then applies the machine file's costs: section
// (topology.MachineSpec.Costs); Resolve applies a standalone --costs file
// last. The machine spec's cpuidle states always win over IdleExit.
//
// # Formulas
//
// DistanceOf classifies two CPUs (same CPU, SMT sibling, same LLC, other
// LLC, other node); parameters given for the farthest node interpolate by
// SLIT distance. IPILatency, SharedLineRead, CacheRefill (footprint and
// time away, decayed by other work's cache turnover), MemShares (max-min
// fair sharing of memory bandwidth per core, LLC and node), SMTSpeed,
// RemoteMemFactorFor, the idle governor (SelectIdleState, PredictIdle) and
// the scheduler path costs (SISScan, BlockedAverages, CpufreqUpdateCost,
// LoadBalanceStats) are what the kernel model calls; docs/costs.md writes
// them out.
//
// # What this package does not do
//
// It keeps no state of a run and charges nothing itself: the kernel model
// (internal/sched) decides when a cost is incurred, and the workloads
// charge their system calls. Calibrate (Linux only) and the validation's
// real hackbench runs read the wall clock and are used by the CLI only,
// never by a simulation.
package costmodel
