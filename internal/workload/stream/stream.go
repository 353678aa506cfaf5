// Package stream models John McCalpin's STREAM 5.10 built with OpenMP
// (workloads-and-formats.md section 4): a master thread and a team of
// OMP_NUM_THREADS−1 threads created at the first parallel region; every
// "#pragma omp parallel for" splits the array statically (thread i gets the
// i-th ceil(N/T) block), each thread streams its block, and the region ends
// at an implicit barrier, so a kernel's time is its slowest thread's. The
// master times each kernel with clock_gettime around the region, NTIMES
// times, and prints STREAM's table of best rates (iteration 0 skipped).
//
// A thread streams at PerThreadBytesPerNs when nothing limits it: a
// block's work is its bytes at that rate, and the thread asks the cost
// model for that bandwidth (sched.RunBW), which shares each core's, LLC's
// and NUMA node's memory bandwidth between the threads running there and
// slows work whose memory is on another node. As libgomp does by default,
// a thread that waits (for the next region, or at the region's end
// barrier) first spins for SpinLimit, polling every SpinPoll of CPU time,
// and only then sleeps on a futex; the last thread to arrive wakes the
// sleepers with a plain futex wake.
//
// STREAM takes no command-line arguments (its sizes are compile-time
// defines and the thread count comes from the environment), so the
// schedlab tool takes them as NAME=VALUE words: STREAM_ARRAY_SIZE, NTIMES,
// OFFSET and OMP_NUM_THREADS.
package stream

import (
	"fmt"
	"io"
	"math"

	"github.com/schedlab/schedlab/internal/costmodel"
	"github.com/schedlab/schedlab/internal/engine"
	"github.com/schedlab/schedlab/internal/sched"
	"github.com/schedlab/schedlab/internal/workload"
	"github.com/schedlab/schedlab/internal/workload/kobj"
)

// PerThreadBytesPerNs is the bandwidth a thread asks for, in bytes per ns
// (GB/s): 64, a cache line per ns, more than any modelled core's memory
// path delivers, so that the cost model's limits decide the rate: one
// core's (mem_bw_core_gbps, how many misses a core keeps in flight over
// the memory latency), one LLC's and one node's. Without the cost model
// (--no-costs) threads stream at this rate.
const PerThreadBytesPerNs = 64

// SpinLimit is how long an OpenMP thread spins before it sleeps:
// libgomp's default GOMP_SPINCOUNT of 300,000 polls at about 10 ns each (an
// estimate: a pause instruction and a load). SpinPoll is the granularity
// at which schedlab lets a spinning thread notice the release.
const (
	SpinLimit = 3 * engine.Millisecond
	SpinPoll  = 2 * engine.Microsecond
)

// spinner is a thread's spin-then-sleep wait.
type spinner struct{ spun engine.Time }

// wait returns the next operation of a thread waiting for released: spin
// a poll while the budget lasts, else sleep (sleep is called first, to
// queue the thread on the futex; it reports false if the wait is over).
func (s *spinner) wait(released bool, sleep func() bool) (sched.Op, bool) {
	if released {
		s.spun = 0
		return sched.Op{}, false
	}
	if s.spun < SpinLimit {
		s.spun += SpinPoll
		return sched.Run(SpinPoll), true
	}
	if !sleep() {
		s.spun = 0
		return sched.Op{}, false
	}
	return sched.Block(), true
}

// Config is a STREAM build and environment.
type Config struct {
	ArraySize int64 // STREAM_ARRAY_SIZE (default 10000000)
	NTimes    int   // NTIMES (default 10, at least 2)
	Offset    int   // OFFSET (default 0; printed only)
	Threads   int   // OMP_NUM_THREADS; 0 = every CPU, libgomp's default
	Stores    Stores
	Costs     costmodel.Syscalls
}

// DefaultConfig is stream.c's defaults.
func DefaultConfig() Config {
	return Config{ArraySize: 10000000, NTimes: 10, Costs: costmodel.DefaultSyscalls()}
}

const hline = "-------------------------------------------------------------\n"

var labels = [4]string{"Copy:      ", "Scale:     ", "Add:       ", "Triad:     "}

// words per element each kernel moves, as STREAM counts them: Copy and
// Scale read one array and write one, Add and Triad read two and write one.
var kernelWords = [4]int64{2, 2, 3, 3}

// Stores is how the binary's kernels store (SCHEDLAB_STORES).
type Stores int8

const (
	// StoresAuto is GCC at -O2 and up: loop distribution turns Copy's
	// loop into a memcpy call, and glibc's memcpy uses non-temporal
	// stores above its non-temporal threshold (a fraction of the shared
	// cache; far below STREAM's arrays); the other kernels' stores go
	// through the cache.
	StoresAuto Stores = iota
	// StoresNT: every store is non-temporal.
	StoresNT
	// StoresAllocate: every store goes through the cache.
	StoresAllocate
)

var storesByName = map[string]Stores{"auto": StoresAuto, "nt": StoresNT, "allocate": StoresAllocate}

// trafficWords is the memory traffic per element of kernel j: a store
// through the cache first reads the line it writes (write-allocate), one
// more word per stored word, which STREAM does not count ("STREAM counts
// only the bytes that the user program requested to be loaded or stored",
// McCalpin, STREAM FAQ); a non-temporal store writes without reading. So
// with StoresAuto Copy moves 2 words, Scale 3, Add and Triad 4: the
// reported rates of Scale, Add and Triad are 2/3, 3/4 and 3/4 of Copy's
// at one memory rate.
func (c *Config) trafficWords(j int) int64 {
	nt := c.Stores == StoresNT || c.Stores == StoresAuto && j == 0
	if nt {
		return kernelWords[j]
	}
	return kernelWords[j] + 1
}

// Bench is one STREAM run.
type Bench struct {
	cfg     Config
	k       *sched.Kernel
	out     []byte
	threads int
	done    bool
	times   [4][]float64
	// team
	team    []*teamThread
	dock    kobj.WaitQueue // threads waiting for the next region
	region  int            // generation of the current region
	work    []int64        // bytes per thread in the current region
	end     kobj.Barrier
	regions int // regions run so far (for progress)
}

// New returns a run for cfg.
// SetCosts sets the system-call costs (workload.CostAware).
func (b *Bench) SetCosts(c costmodel.Syscalls) { b.cfg.Costs = c }

func New(cfg Config) *Bench { return &Bench{cfg: cfg} }

func (b *Bench) printf(format string, a ...any) { b.out = fmt.Appendf(b.out, format, a...) }

// Start creates the master thread.
func (b *Bench) Start(k *sched.Kernel) error {
	b.k = k
	b.threads = b.cfg.Threads
	if b.threads == 0 {
		b.threads = k.NrCPUs()
	}
	for i := range b.times {
		b.times[i] = make([]float64, b.cfg.NTimes)
	}
	b.end.N = b.threads
	_, err := k.Fork(sched.TaskSpec{Comm: "stream", CPU: 0, Prog: &master{b: b}})
	return err
}

// Done reports whether the master has finished.
func (b *Bench) Done() bool { return b.done }

// Progress is the fraction of parallel regions run.
func (b *Bench) Progress() float64 { return float64(b.regions) / float64(5+4*b.cfg.NTimes) }

// Report writes STREAM's output.
func (b *Bench) Report(w io.Writer) error {
	_, err := w.Write(b.out)
	return err
}

func (b *Bench) bytes(j int) float64 { return float64(kernelWords[j] * 8 * b.cfg.ArraySize) }

// stats returns avg, min and max time of kernel j over iterations
// 1..NTIMES-1; NaN before the iterations have run (Metrics of a run not
// yet started names its metrics without values).
func (b *Bench) stats(j int) (avg, min, max float64) {
	if j >= len(b.times) || len(b.times[j]) < b.cfg.NTimes {
		nan := math.NaN()
		return nan, nan, nan
	}
	min = math.MaxFloat32 // FLT_MAX
	for k := 1; k < b.cfg.NTimes; k++ {
		t := b.times[j][k]
		avg += t
		min = math.Min(min, t)
		max = math.Max(max, t)
	}
	return avg / float64(b.cfg.NTimes-1), min, max
}

// Metrics are copy_mb_s, scale_mb_s, add_mb_s and triad_mb_s (best rates).
func (b *Bench) Metrics() workload.Metrics {
	var out []workload.Metric
	for j, n := range []string{"copy_mb_s", "scale_mb_s", "add_mb_s", "triad_mb_s"} {
		_, min, _ := b.stats(j)
		out = append(out, workload.Metric{Name: n, Value: 1e-6 * b.bytes(j) / min, Better: workload.HigherIsBetter})
	}
	return out
}

// startRegion releases the team into a parallel-for moving words×8 bytes
// per element, statically split.
func (b *Bench) startRegion(k *sched.Kernel, words int64) {
	n := b.cfg.ArraySize
	t := int64(b.threads)
	chunk := (n + t - 1) / t
	b.work = b.work[:0]
	for i := int64(0); i < t; i++ {
		lo, hi := i*chunk, (i+1)*chunk
		if hi > n {
			hi = n
		}
		if lo > hi {
			lo = hi
		}
		b.work = append(b.work, (hi-lo)*words*8)
	}
	b.region++
	b.regions++
	b.dock.WakeAll(k, 0)
}

func (b *Bench) workTime(i int) engine.Time {
	return engine.Time((b.work[i] + PerThreadBytesPerNs - 1) / PerThreadBytesPerNs)
}

// ---- master -------------------------------------------------------------------

type master struct {
	b       *Bench
	step    int // position in the program
	created int
	paid    bool
	inReg   bool
	gen     uint64
	waiting bool
	t       engine.Time
	iter    int
	kern    int
	spin    spinner
}

// region runs one parallel region as the master (thread 0): it returns the
// next operation, or ok=false when the region is over.
func (m *master) region(k *sched.Kernel, t *sched.Task, words int64) (sched.Op, bool) {
	b := m.b
	if !m.inReg {
		m.inReg = true
		m.paid = false
		m.waiting = false
		b.startRegion(k, words)
		if w := b.workTime(0); w > 0 {
			m.paid = true
			return sched.RunBW(w, PerThreadBytesPerNs*1000), true
		}
	}
	if !m.waiting {
		m.gen, _ = b.end.ArriveSpin(k)
		m.waiting = true
	}
	if op, waiting := m.spin.wait(b.end.Released(m.gen), func() bool { return !b.end.Passed(t, m.gen) }); waiting {
		return op, true
	}
	m.inReg = false
	return sched.Op{}, false
}

func (m *master) Next(k *sched.Kernel, t *sched.Task) sched.Op {
	b := m.b
	c := b.cfg
	for {
		switch m.step {
		case 0: // preamble
			b.printf(hline)
			b.printf("STREAM version $Revision: 5.10 $\n")
			b.printf(hline)
			b.printf("This system uses %d bytes per array element.\n", 8)
			b.printf(hline)
			b.printf("Array size = %d (elements), Offset = %d (elements)\n", c.ArraySize, c.Offset)
			b.printf("Memory per array = %.1f MiB (= %.1f GiB).\n", 8*(float64(c.ArraySize)/1024.0/1024.0), 8*(float64(c.ArraySize)/1024.0/1024.0/1024.0))
			b.printf("Total memory required = %.1f MiB (= %.1f GiB).\n", 24*(float64(c.ArraySize)/1024.0/1024.0), 24*(float64(c.ArraySize)/1024.0/1024.0/1024.0))
			b.printf("Each kernel will be executed %d times.\n", c.NTimes)
			b.printf(" The *best* time for each kernel (excluding the first iteration)\n")
			b.printf(" will be used to compute the reported bandwidth.\n")
			b.printf(hline)
			m.step++
		case 1: // the first parallel region creates the team
			if m.created < b.threads-1 {
				if !m.paid {
					m.paid = true
					return sched.Run(c.Costs.ThreadCreate)
				}
				m.paid = false
				tt := &teamThread{b: b, id: m.created + 1}
				task, err := k.Fork(sched.TaskSpec{Comm: "stream", CPU: k.ThisCPU(), Prog: tt})
				if err != nil {
					panic("stream: " + err.Error())
				}
				tt.t = task
				b.team = append(b.team, tt)
				m.created++
				continue
			}
			if op, ok := m.region(k, t, 0); ok {
				return op
			}
			b.printf("Number of Threads requested = %d\n", b.threads)
			m.step++
		case 2: // count the threads
			if op, ok := m.region(k, t, 0); ok {
				return op
			}
			b.printf("Number of Threads counted = %d\n", b.threads)
			m.step++
		case 3: // initialise a, b, c (three arrays written)
			if op, ok := m.region(k, t, 3); ok {
				return op
			}
			b.printf(hline)
			b.printf("Your clock granularity/precision appears to be 1 microseconds.\n")
			m.t = k.Now()
			m.step++
		case 4: // a[j] = 2.0E0 * a[j], timed
			if op, ok := m.region(k, t, 2); ok {
				return op
			}
			us := 1.0e6 * float64(k.Now()-m.t) / 1e9
			b.printf("Each test below will take on the order of %d microseconds.\n", int(us))
			b.printf("   (= %d clock ticks)\n", int(us/1))
			b.printf("Increase the size of the arrays if this shows that\n")
			b.printf("you are not getting at least 20 clock ticks per test.\n")
			b.printf(hline)
			b.printf("WARNING -- The above is only a rough guideline.\n")
			b.printf("For best results, please be sure you know the\n")
			b.printf("precision of your system timer.\n")
			b.printf(hline)
			m.step++
			m.t = k.Now()
		case 5: // the timed kernels
			if m.iter == c.NTimes {
				m.step++
				continue
			}
			if !m.inReg {
				m.t = k.Now()
			}
			if op, ok := m.region(k, t, c.trafficWords(m.kern)); ok {
				return op
			}
			b.times[m.kern][m.iter] = float64(k.Now()-m.t) / 1e9
			m.kern++
			if m.kern == 4 {
				m.kern = 0
				m.iter++
			}
		case 6:
			b.printf("Function    Best Rate MB/s  Avg time     Min time     Max time\n")
			for j := 0; j < 4; j++ {
				avg, min, max := b.stats(j)
				b.printf("%s%12.1f  %11.6f  %11.6f  %11.6f\n", labels[j], 1.0e-06*b.bytes(j)/min, avg, min, max)
			}
			b.printf(hline)
			b.printf("Solution Validates: avg error less than %e on all three arrays\n", 1.e-13)
			b.printf(hline)
			b.done = true
			k.Eng.Stop()
			return sched.Exit()
		}
	}
}

// ---- team threads ----------------------------------------------------------------

type teamThread struct {
	b       *Bench
	t       *sched.Task
	id      int
	seen    int // last region run
	inReg   bool
	waiting bool
	gen     uint64
	spin    spinner
}

func (tt *teamThread) Next(k *sched.Kernel, t *sched.Task) sched.Op {
	b := tt.b
	for {
		if !tt.inReg {
			// Wait for the next region: spin, then sleep on the dock.
			if op, waiting := tt.spin.wait(b.region != tt.seen, func() bool {
				b.dock.Add(t, false)
				return true
			}); waiting {
				return op
			}
			tt.seen = b.region
			tt.inReg = true
			tt.waiting = false
			if w := b.workTime(tt.id); w > 0 {
				return sched.RunBW(w, PerThreadBytesPerNs*1000)
			}
		}
		if !tt.waiting {
			tt.gen, _ = b.end.ArriveSpin(k)
			tt.waiting = true
		}
		if op, waiting := tt.spin.wait(b.end.Released(tt.gen), func() bool { return !b.end.Passed(t, tt.gen) }); waiting {
			return op
		}
		tt.inReg = false
	}
}
