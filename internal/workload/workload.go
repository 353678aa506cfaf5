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
	"github.com/schedlab/schedlab/internal/engine"
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

// Warner is an Instance whose input was read with a warning rather than
// refused (a replayed text trace cut short): the run's record carries the
// warnings, and the CLI prints each once on stderr.
type Warner interface {
	Warnings() []string
}

// ErrHelp is returned by a tool's parser when the arguments ask for its
// usage text (-h): the caller prints the usage and exits 0.
var ErrHelp = errors.New("help requested")

// Window is the stretch of simulated time a benchmark's primary metric
// measures and the work done in it: what `schedlab explain` attributes
// the metric's change over (internal/explain).
type Window struct {
	From, To engine.Time
	// Work is the number of units of work done in [From, To): messages,
	// operations.
	Work float64
	// Unit names one unit ("message", "op").
	Unit string
}

// Windowed is an Instance that says what its primary metric measures.
type Windowed interface {
	// WatchWindow installs mark, which the instance calls at every
	// instant its measured window may start or end, before it knows
	// which (hackbench's t0 and t1, each of tbench's batch boundaries
	// and reports), so that an observer can take a snapshot there.
	// Called before Start.
	WatchWindow(mark func())
	// MeasuredWindow is the window of the primary metric once the run is
	// done, its ends among the marked instants; ok is false when the run
	// measured nothing.
	MeasuredWindow() (w Window, ok bool)
}
