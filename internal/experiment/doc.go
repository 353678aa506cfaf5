// Package experiment runs what scheduler developers run before they post a
// patch: tip against each variant, on one or more machines, over a range of
// loads, several runs each, into a results directory of one record per
// run. Package compare (internal/experiment/compare) makes the comparison
// tables of those records.
//
// # Spec, plan, records
//
// An experiment is first a Spec: plain values parsed and validated from a
// YAML experiment file (ParseFile, the built-in files of Builtin) or built
// from `schedlab compare`'s flags. Resolve turns a Spec into a Plan, the
// matrix machines × kernels × workloads × loads × variants × runs with one
// Point per run, each with its key (the results file name) and its seed.
// Seeds come from the master seed and the run index only (DeriveSeed), so
// every variant at one run index sees the same seed: comparisons are
// paired, and a run's result does not depend on which other runs share the
// sweep.
//
// Execute runs one Point on a fresh kernel and returns a Record: the
// workload's output and metrics, schedstat sums, the simulation's size and,
// for traced points, the per-CPU occupancy over time. A run is
// single-threaded and deterministic, so Sweep runs points on as many
// goroutines as asked (one kernel each) and the records do not depend on
// the number of workers. Sweep writes each record atomically (temporary
// file, fsync, rename, fsync of the directory) into a results directory,
// so a sweep killed at any instant loses at most the runs in flight, and
// --resume runs exactly the missing ones.
package experiment
