// Package pingpong models the two pipe ping-pong benchmarks that measure
// how long a pipe round trip takes between two tasks, the figure vendors
// publish per pair of CPUs to show a machine's cache-line distances:
//
//   - `perf bench sched pipe` (tools/perf/bench/sched-pipe.c, perf 6.1;
//     tool perf-bench-pipe, and `perf bench sched pipe` through the perf
//     tool): two workers exchange one int over two pipes, -l times; worker
//     0 reads then writes, worker 1 writes then reads, so one int is in
//     flight. Worker 0 is a forked child and worker 1 the parent itself, or
//     with -T two threads the main thread creates and joins. The time runs
//     from before the fork (pthread_create) to after the waitpid
//     (pthread_join). Later perfs (those with -n/--nonblocking) have both
//     workers write first, two ints in flight; not modelled.
//   - lmbench 3's `lat_pipe` (src/lat_pipe.c with lib_timing.c's benchmp,
//     lmbench-3.0-a9; tool lat_pipe): the benchmark process writes one byte
//     to the writer process it forked and reads its reply, in intervals of
//     a number of round trips that benchmp grows until an interval takes
//     about a second, and prints the median interval's time per round
//     trip (lat.go has the harness and what it leaves out).
//
// Both are task programs over kobj.Pipe, the pipe model hackbench uses:
// pipe_write and pipe_read with their WF_SYNC wakeups, pipe->mutex, and the
// pipe's cache lines charged by the distance between the CPU that wrote
// them last and the one calling (kobj's model_kobj_lines, the cost
// model's line_* costs); the wakeups' IPIs and idle exits are the kernel
// model's. A round trip between two pinned CPUs therefore costs two
// writes, two reads, two cross-CPU wakeups and two line transfers of the
// pipes' lines and data, and the published latencies per pair of CPUs
// calibrate the line and IPI costs by distance.
//
// --cpus-pair A,B is schedlab's own option on both tools (the tools have
// none): it pins the two ping-pong tasks to CPUs A and B, as lmbench's
// LMBENCH_SCHED="CUSTOM_SPREAD A B" does (lib_sched.c of the lmbench the
// HiSilicon wayca-scheduler measurements ran: CPU list entry
// childno × 2 + benchproc, so the benchmark process on A and its writer on
// B), or for perf as `taskset -c B perf bench sched pipe` with the child
// moved to A.
package pingpong

import (
	"fmt"
	"math"
	"strings"

	"github.com/schedlab/schedlab/internal/costmodel"
	"github.com/schedlab/schedlab/internal/cpumask"
	"github.com/schedlab/schedlab/internal/engine"
	"github.com/schedlab/schedlab/internal/sched"
	"github.com/schedlab/schedlab/internal/workload/kobj"
)

// Pair is --cpus-pair: the CPUs the two ping-pong tasks are pinned to.
type Pair struct {
	A, B cpumask.CPU
	Set  bool
}

// maxCPU bounds a CPU number before the machine is known (NR_CPUS).
const maxCPU = 8191

// ParsePair reads "A,B" (or "A:B", which an experiment's ranged
// arguments leave alone) for the tool prog.
func ParsePair(prog, v string) (Pair, error) {
	sep := strings.IndexAny(v, ",:")
	bad := func(why string) (Pair, error) {
		return Pair{}, fmt.Errorf("%s: --cpus-pair %q: %s", prog, v, why)
	}
	if sep < 0 {
		return bad("give two CPUs, A,B (or A:B)")
	}
	var cpus [2]cpumask.CPU
	for i, s := range []string{v[:sep], v[sep+1:]} {
		if s == "" || len(s) > 4 || strings.Trim(s, "0123456789") != "" {
			return bad("give two CPUs, A,B (or A:B), each a number from 0")
		}
		n := 0
		for _, c := range s {
			n = n*10 + int(c-'0')
		}
		if n > maxCPU {
			return bad(fmt.Sprintf("CPU %d is beyond NR_CPUS (%d)", n, maxCPU+1))
		}
		cpus[i] = cpumask.CPU(n)
	}
	return Pair{A: cpus[0], B: cpus[1], Set: true}, nil
}

// String is "A,B".
func (p Pair) String() string { return fmt.Sprintf("%d,%d", p.A, p.B) }

// check reports a CPU of the pair that the machine lacks.
func (p Pair) check(prog string, k *sched.Kernel) error {
	n := k.NrCPUs()
	if p.Set && (int(p.A) >= n || int(p.B) >= n) {
		return fmt.Errorf("%s: --cpus-pair %s: the machine has CPUs 0-%d", prog, p, n-1)
	}
	return nil
}

// on is the affinity of a task pinned to cpu, or the zero mask (inherit)
// without --cpus-pair.
func (p Pair) on(k *sched.Kernel, cpu cpumask.CPU) cpumask.Mask {
	if !p.Set {
		return cpumask.Mask{}
	}
	return cpumask.Of(k.NrCPUs(), cpu)
}

// newPipe is a pipe as hackbench's: its cache lines and its mutex take
// part (model_kobj_lines, model_kobj_locks).
func newPipe() *kobj.Pipe {
	p := kobj.NewPipe()
	p.Lines, p.Locks = true, true
	return p
}

// sys is a system call's cost d, accounted as one (sched.Kernel.Account,
// for schedlab explain).
func sys(k *sched.Kernel, d engine.Time) engine.Time {
	k.Account(sched.CostSyscall, d)
	return d
}

// gettimeofday is the simulated wall clock in whole microseconds, as
// struct timeval holds it.
func gettimeofday(k *sched.Kernel) int64 { return int64(k.Now() / engine.Microsecond) }

// call is one read(2) or write(2) on a pipe in progress: its CPU time is
// charged first (paid), then it runs on the pipe once it holds the
// pipe's mutex, and is retried after every wakeup until it returns.
type call struct {
	io   kobj.IO
	paid bool
}

// write writes n bytes to p for t; done is true once the call returned,
// else op is t's next operation. f is the write end's struct file when
// t's descriptor table is shared (kobj.File), else nil.
func (c *call) write(k *sched.Kernel, t *sched.Task, p *kobj.Pipe, n int, costs *costmodel.Syscalls, f *kobj.File) (op sched.Op, done bool) {
	if !c.paid {
		c.paid = true
		c.io.Reset(n)
		return sched.Run(sys(k, costs.PipeWriteCost(n)) + fget(k, f, costs)), false
	}
	if d := p.Lock(k, &c.io, costs.PipeLockHold(true, n)); d > 0 {
		return sched.Run(d), false // mutex_optimistic_spin
	}
	if d := p.WriteLines(k, &c.io); d > 0 {
		return sched.Run(d), false
	}
	if !p.Write(k, t, &c.io) {
		return sched.Block(), false
	}
	c.paid = false
	return sched.Op{}, true
}

// read reads up to n bytes from p for t (c.io.Done says how many were
// read once done).
func (c *call) read(k *sched.Kernel, t *sched.Task, p *kobj.Pipe, n int, costs *costmodel.Syscalls, f *kobj.File) (op sched.Op, done bool) {
	if !c.paid {
		c.paid = true
		c.io.Reset(n)
		return sched.Run(sys(k, costs.PipeReadCost(n)) + fget(k, f, costs)), false
	}
	if d := p.Lock(k, &c.io, costs.PipeLockHold(false, n)); d > 0 {
		return sched.Run(d), false
	}
	if !p.Read(k, t, &c.io) {
		return sched.Block(), false
	}
	c.paid = false
	return sched.Op{}, true
}

// fget is fdget's reference on a file of a shared descriptor table.
func fget(k *sched.Kernel, f *kobj.File, costs *costmodel.Syscalls) engine.Time {
	if f == nil {
		return 0
	}
	return f.Get(k, costs.FgetShared)
}

// cFloat formats v as C's printf("%*.*f") does, including glibc's "inf",
// "-inf", "nan" and "-nan", which Go's fmt spells otherwise.
func cFloat(v float64, width, prec int) string {
	var s string
	switch {
	case math.IsInf(v, 1):
		s = "inf"
	case math.IsInf(v, -1):
		s = "-inf"
	case math.IsNaN(v):
		s = "-nan" // x86-64's 0.0/0.0 has the sign bit set
	default:
		s = fmt.Sprintf("%.*f", prec, v)
	}
	return fmt.Sprintf("%*s", width, s)
}

// cInt is C's (int) conversion of a double on x86-64: cvttsd2si gives
// INT_MIN for NaN and for anything out of range.
func cInt(v float64) int {
	if math.IsNaN(v) || v >= 1<<31 || v <= -(1<<31)-1 {
		return math.MinInt32
	}
	return int(v)
}
