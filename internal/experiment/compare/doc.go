// Package compare compares the variants of an experiment from its records:
// the statistics, the tables posted to LKML and the Go benchmark format,
// as golang.org/x/perf keeps benchmath and benchstat's tables apart from
// benchfmt's records. Package experiment plans and runs; this package only
// reads its Plan and Records.
//
// # Statistics
//
// Analyze groups records by machine, kernel, workload and metric into
// Tables: one row per load, one column per variant with tip first. Each
// cell holds the statistic the benchmark is reported with (Metric: the
// arithmetic mean for times and latencies, the harmonic mean for rates,
// as mmtests does), its 95% confidence interval, the change from tip in
// percent (positive is better, AMD's and mmtests' convention) and whether
// the change is significant, decided by golang.org/x/perf/benchmath:
// Welch's t-test by default (on reciprocals for harmonic means), or the
// Mann-Whitney U test on medians.
//
// # Output
//
// FormatTable writes a table as AMD's scheduler tests are posted; tables
// marshal to JSON with NaN as null; WriteBenchFormat writes the records
// in the Go benchmark format so that benchstat compares the variants;
// SchedstatComparisons sums each variant's schedstat for the layout of
// `perf sched stats diff`.
package compare
