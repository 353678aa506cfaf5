// Package costmodel is the machine cost model: the parameters that turn
// scheduling decisions into time, their defaults per machine preset with
// the source of every number, the costs files that change them, and the
// one implementation of every cost formula, compiled to the integer tables
// the kernel model and the workloads charge.
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
// its reasoning, a placeholder, calibration, or the file and line that set
// it.
//
// # Resolution
//
// For(spec) starts from the defaults of the machine's preset (Defaults;
// "generic" for host and YAML machines, or the preset a costs section
// names with base:), then applies the machine file's costs: section, which
// topology keeps raw (topology.CostsSection) and this package parses and
// checks (MachineCosts, ParseCosts: names, ranges and errors at file:line);
// Resolve applies a standalone --costs file (LoadCostsFile) last. The
// machine spec's cpuidle states always win over IdleExit.
//
// # Formulas
//
// Compile turns Params and the machine spec into a Table, once per run:
// integers only, interpolated by SLIT distance per pair of nodes, so that
// no floating-point result depends on the processor. Its methods are the
// formulas the hot paths call: IPILatency, LLCLineRead, CacheRefill (the
// footprint's decay by other work's cache turnover, Decay32), SMTSpeed,
// RemoteMemSpeed, IdleExitLatency, memory-bandwidth sharing (MemSharer:
// max-min fair in the fraction of demand, under the core, LLC and node
// limits), the balancer's costs (BalanceCosts) and the system calls'
// (Syscalls). The kernel model (internal/sched) decides when each is
// charged; the workloads charge their system calls from the run's table;
// SelectIdleState is the idle governor both the kernel model and
// calibration use. The same formulas in floating point, as docs/costs.md
// writes them, exist only in the tests, as the oracle the tables are
// checked against.
//
// # What this package does not do
//
// It keeps no state of a run and charges nothing itself. Measuring the
// parameters on the host and comparing with the real kernel are package
// calibrate's.
package costmodel
