// Package experiment runs what scheduler developers run before they post a
// patch: tip against each variant, on one or more machines, over a range of
// loads, several runs each, and the comparison table of the results.
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
//
// # Statistics
//
// Analyze groups records by machine, kernel, workload and metric into
// Tables: one row per load, one column per variant with tip first. Each
// cell holds the statistic the benchmark is reported with (Metrics: the
// arithmetic mean for times and latencies, the harmonic mean for rates,
// as mmtests does), its 95% confidence interval, the change from tip in
// percent (positive is better, AMD's and mmtests' convention) and whether
// the change is significant, decided by golang.org/x/perf/benchmath:
// Welch's t-test by default (on reciprocals for harmonic means), or the
// Mann-Whitney U test on medians.
package experiment
