// Package workload holds what every simulated benchmark shares: the
// Instance interface a run drives and the Metric values --json records.
// The benchmarks live in subpackages (hackbench, schbench, tbench, stream,
// rtapp), built on the kernel objects of package kobj; package sim lists
// them as tools and runs one on a machine (docs/workloads.md).
//
// A benchmark is a set of task programs (sched.Program): state machines
// that return the task's next operation (compute, sleep, block, exit) and,
// between operations, act on kernel objects (write a pipe, wake a futex,
// fork). It measures what the real tool measures, from simulated time, and
// prints what the real tool prints, so that the scripts that parse the
// real tool's output parse schedlab's.
package workload

import (
	"errors"
	"io"

	"github.com/schedlab/schedlab/internal/costmodel"
	"github.com/schedlab/schedlab/internal/sched"
)

// Instance is one run of a benchmark, built from the tool's arguments.
type Instance interface {
	// Start creates the benchmark's first task(s) on k at time 0.
	Start(k *sched.Kernel) error
	// Done reports whether the benchmark has finished; the benchmark
	// stops the engine (k.Eng.Stop) when it becomes true.
	Done() bool
	// Progress is the fraction of the run completed, 0..1.
	Progress() float64
	// Report writes the tool's output.
	Report(w io.Writer) error
	// Metrics are the run's figures for --json, in a fixed order.
	Metrics() Metrics
}

// CostAware is an Instance whose system calls are charged with the cost
// model's parameters; the run sets them before Start.
type CostAware interface {
	SetCosts(c costmodel.Syscalls)
}

// ErrHelp is returned by a tool's parser when the arguments ask for its
// usage text (-h): the caller prints the usage and exits 0.
var ErrHelp = errors.New("help requested")
