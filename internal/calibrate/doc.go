// Package calibrate measures the cost model's parameters on the host and
// checks the simulation against the real kernel.
//
// Measure (Linux only) runs microbenchmarks with threads pinned by
// sched_setaffinity: getppid, single-thread pipe, AF_UNIX and loopback TCP
// write/read loops at two message sizes, pipe ping-pongs on one CPU and
// between CPUs at every distance the host has, cache-line bounces, an
// integer loop beside its busy SMT sibling, and memory copies with 1..n
// threads per LLC and node. Derive turns the Measurements into parameter
// settings, each with how it was measured, and WriteMachine writes them as
// the costs: section of a machine file (what `schedlab calibrate` prints).
// Which parameter each measurement gives is in docs/costs.md,
// "Calibration".
//
// Validate runs rt-tests' hackbench on the host, in rounds over the cases,
// and the simulated hackbench with the same arguments through the run
// pipeline (sim.Run) for a few seeds, and WriteValidationTable prints both
// times, their ranges and ratio, and how many cases are within a tolerance
// (`schedlab validate hackbench`). ValidationMachine picks the simulated
// machine: a calibrated machine file, the host with a costs file, or the
// host after a calibration run.
//
// This package reads the wall clock and runs real programs; the CLI uses
// it, a simulation never does. The parameters, their defaults and their
// formulas are package costmodel's.
package calibrate
