//go:build linux

package calibrate

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"github.com/schedlab/schedlab/internal/costmodel"
	"github.com/schedlab/schedlab/internal/cpumask"
	"github.com/schedlab/schedlab/internal/topology"
)

// Measure runs the microbenchmarks on this host, whose topology is spec
// (from topology.ReadHost). It pins threads with sched_setaffinity; each
// benchmark thread is locked to its OS thread and exits with it, so no
// pinned thread returns to the Go runtime's pool.
func Measure(spec *topology.MachineSpec, opt Options) (*Measurements, error) {
	m := &Measurements{Pipe: map[int]IOCost{}, Unix: map[int]IOCost{}, TCP: map[int]IOCost{}}
	m.Host, _ = os.Hostname()
	m.Date = time.Now().UTC().Format("2006-01-02")
	var u syscall.Utsname
	if syscall.Uname(&u) == nil {
		m.Kernel = utsString(u.Release[:])
	}
	m.CPUModel = cpuModel()
	m.LoadAvg = loadAvg()
	if m.LoadAvg > 0.25*float64(len(spec.CPUs)) {
		opt.logf("warning: load average %.2f on %d CPUs: other work will distort the figures", m.LoadAvg, len(spec.CPUs))
	}
	m.PrivateCacheKiB, m.LLCKiB = cacheSizes()

	var err error
	if m.Syscall, err = medianOf(func(n int) (float64, error) {
		return onCPU(0, func() (float64, error) { return benchSyscall(n), nil })
	}, opt.n(2_000_000)); err != nil {
		return nil, err
	}
	opt.logf("syscall (getppid)            %8.0f ns", m.Syscall)
	for _, size := range []int{smallMsg, largeMsg} {
		var c IOCost
		var err error
		if size == smallMsg {
			if c, m.PipeShared, err = pipePrivateShared(size, opt.n(200_000)); err != nil {
				return nil, err
			}
		} else if c, err = onCPU2(0, func() (IOCost, error) { return benchIO(ioPipe, size, opt.n(200_000), false) }); err != nil {
			return nil, fmt.Errorf("pipe loop: %w", err)
		}
		m.Pipe[size] = c
		opt.logf("pipe write/read %4d B       %8.0f / %.0f ns", size, c.Write, c.Read)
		if size == smallMsg {
			opt.logf("pipe write/read %4d B shared fd table %8.0f / %.0f ns", size, m.PipeShared.Write, m.PipeShared.Read)
		}
		c, err = onCPU2(0, func() (IOCost, error) { return benchIO(ioUnix, size, opt.n(100_000), false) })
		if err != nil {
			return nil, fmt.Errorf("socket loop: %w", err)
		}
		m.Unix[size] = c
		opt.logf("unix send/recv  %4d B       %8.0f / %.0f ns", size, c.Write, c.Read)
		c, err = onCPU2(0, func() (IOCost, error) { return benchIO(ioTCP, size, opt.n(100_000), false) })
		if err != nil {
			return nil, fmt.Errorf("loopback TCP loop: %w", err)
		}
		m.TCP[size] = c
		opt.logf("tcp send/recv   %4d B       %8.0f / %.0f ns", size, c.Write, c.Read)
	}
	// The extra cost of a switch between address spaces: rings of
	// threads and of processes, on CPU 0.
	for _, procs := range []bool{false, true} {
		hop, err := medianOf(func(n int) (float64, error) { return ring(0, RingSize, max(1, n/RingSize), procs) }, opt.n(100_000))
		if err != nil {
			return nil, fmt.Errorf("context-switch ring: %w", err)
		}
		what := "threads"
		if procs {
			m.RingProcs, what = hop, "processes"
		} else {
			m.RingThreads = hop
		}
		opt.logf("token ring of %d %-9s cpu 0   one hop   %8.0f ns", RingSize, what, hop)
	}
	for _, pr := range cpuPairs(spec) {
		rtt, err := medianOf(func(n int) (float64, error) { return pingPong(pr.a, pr.b, n) }, opt.n(100_000))
		if err != nil {
			return nil, fmt.Errorf("ping-pong %d-%d: %w", pr.a, pr.b, err)
		}
		m.PingPong = append(m.PingPong, PingPong{Dist: pr.d, A: pr.a, B: pr.b, RoundTrip: rtt})
		opt.logf("pipe ping-pong cpu %d-%d %-10s round trip %8.0f ns", pr.a, pr.b, pr.d, rtt)
		if pr.d == costmodel.SameCPU {
			continue
		}
		// A spin on one line is only ever slowed by what else the
		// host runs (on a VM, a vCPU preempted mid-spin costs a whole
		// time slice): the fastest of five runs is the line's latency.
		ow, err := fastestOf(func(n int) (float64, error) { return lineBounce(pr.a, pr.b, n) }, opt.n(500_000))
		if err != nil {
			return nil, err
		}
		m.Lines = append(m.Lines, LineBounce{Dist: pr.d, A: pr.a, B: pr.b, OneWay: ow})
		opt.logf("cache-line bounce cpu %d-%d %-10s one way %8.1f ns", pr.a, pr.b, pr.d, ow)
		if pr.d == costmodel.SameCore {
			dur := time.Duration(opt.n(1000)) * time.Millisecond / 2
			alone, pair := smtBench(pr.a, pr.b, dur)
			m.SMT = SMTResult{A: pr.a, B: pr.b, Alone: alone, Pair: pair, Measured: true, PairFraction: pair / alone}
			opt.logf("SMT: one thread beside a busy sibling runs at %.2f of alone", pair/alone)
		}
	}
	dur := time.Duration(opt.n(3000)) * time.Millisecond / 10
	llcCPUs, nodeCPUs := bandwidthCPUs(spec)
	for _, k := range threadCounts(len(llcCPUs)) {
		gb, err := memCopy(llcCPUs[:k], m.LLCKiB, dur)
		if err != nil {
			return nil, err
		}
		m.MemBW = append(m.MemBW, MemPoint{Scope: "llc", Threads: k, GBps: gb})
		opt.logf("memory copy, %3d threads on one LLC   %7.1f GB/s", k, gb)
	}
	if len(nodeCPUs) > len(llcCPUs) {
		for _, k := range threadCounts(len(nodeCPUs)) {
			if k <= len(llcCPUs) {
				continue
			}
			gb, err := memCopy(nodeCPUs[:k], m.LLCKiB, dur)
			if err != nil {
				return nil, err
			}
			m.MemBW = append(m.MemBW, MemPoint{Scope: "node", Threads: k, GBps: gb})
			opt.logf("memory copy, %3d threads on one node  %7.1f GB/s", k, gb)
		}
	}
	return m, nil
}

// medianOf runs a benchmark of n iterations as five runs of n/5 and
// returns the median, so that a run disturbed by other load (or a vCPU the
// hypervisor preempted) does not decide the figure.
func medianOf(bench func(n int) (float64, error), n int) (float64, error) {
	var v []float64
	for range 5 {
		x, err := bench(max(1, n/5))
		if err != nil {
			return 0, err
		}
		v = append(v, x)
	}
	sort.Float64s(v)
	return v[2], nil
}

// fastestOf runs a benchmark of n iterations as five runs of n/5 and
// returns the smallest.
func fastestOf(bench func(n int) (float64, error), n int) (float64, error) {
	best := math.Inf(1)
	for range 5 {
		x, err := bench(max(1, n/5))
		if err != nil {
			return 0, err
		}
		best = min(best, x)
	}
	return best, nil
}

// pipePrivateShared measures the pipe loop with a private and with a shared
// descriptor table in five interleaved rounds of calls/5 each (private,
// then shared, on CPU 0) and returns the median write and read of each.
// fget_shared_ns is their difference, a few per cent of either: measured
// one after the other, a change in the host's load between the two runs
// would be most of it; interleaved, both medians see the same load.
func pipePrivateShared(size, calls int) (private, shared IOCost, err error) {
	var pw, pr, sw, sr []float64
	for range 5 {
		for _, sh := range []bool{false, true} {
			c, err := onCPU2(0, func() (IOCost, error) { return benchIO(ioPipe, size, max(1, calls/5), sh) })
			if err != nil {
				return IOCost{}, IOCost{}, fmt.Errorf("pipe loop (shared descriptor table %v): %w", sh, err)
			}
			if sh {
				sw, sr = append(sw, c.Write), append(sr, c.Read)
			} else {
				pw, pr = append(pw, c.Write), append(pr, c.Read)
			}
		}
	}
	return IOCost{Write: median5(pw), Read: median5(pr)}, IOCost{Write: median5(sw), Read: median5(sr)}, nil
}

// median5 is the median of five values.
func median5(v []float64) float64 {
	sort.Float64s(v)
	return v[len(v)/2]
}

// loadAvg is the 1-minute load average (/proc/loadavg), or 0.
func loadAvg() float64 {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(data))
	if len(f) == 0 {
		return 0
	}
	v, _ := strconv.ParseFloat(f[0], 64)
	return v
}

func utsString(b []int8) string {
	var s []byte
	for _, c := range b {
		if c == 0 {
			break
		}
		s = append(s, byte(c))
	}
	return string(s)
}

func cpuModel() string {
	data, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(data), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// cacheSizes reads cpu0's caches: the largest one shared by cpu0's core
// only (private) and the highest level (LLC).
func cacheSizes() (private, llc int64) {
	dirs, _ := filepath.Glob("/sys/devices/system/cpu/cpu0/cache/index*")
	siblings, _ := os.ReadFile("/sys/devices/system/cpu/cpu0/topology/thread_siblings_list")
	core := strings.TrimSpace(string(siblings))
	bestLevel := 0
	for _, d := range dirs {
		read := func(f string) string { b, _ := os.ReadFile(filepath.Join(d, f)); return strings.TrimSpace(string(b)) }
		if read("type") == "Instruction" {
			continue
		}
		level, _ := strconv.Atoi(read("level"))
		size := parseSizeKiB(read("size"))
		if size == 0 {
			continue
		}
		if level > bestLevel {
			bestLevel, llc = level, size
		}
		if shared := read("shared_cpu_list"); shared == core || shared == "0" {
			private = max(private, size)
		}
	}
	return private, llc
}

func parseSizeKiB(s string) int64 {
	mult := int64(1)
	switch {
	case strings.HasSuffix(s, "K"):
		s = strings.TrimSuffix(s, "K")
	case strings.HasSuffix(s, "M"):
		s, mult = strings.TrimSuffix(s, "M"), 1024
	case strings.HasSuffix(s, "G"):
		s, mult = strings.TrimSuffix(s, "G"), 1024*1024
	default:
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return 0
		}
		return v / 1024
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0
	}
	return v * mult
}

// pin locks the calling goroutine to its OS thread and binds the thread to
// cpu. The caller's goroutine must exit without unlocking, so that the
// runtime destroys the pinned thread.
func pin(cpu int) error {
	runtime.LockOSThread()
	var mask [topology.MaxCPUs / 64]uint64
	mask[cpu/64] |= 1 << (cpu % 64)
	_, _, e := syscall.RawSyscall(syscall.SYS_SCHED_SETAFFINITY, 0, unsafe.Sizeof(mask), uintptr(unsafe.Pointer(&mask)))
	if e != 0 {
		return fmt.Errorf("sched_setaffinity(cpu %d): %w", cpu, e)
	}
	return nil
}

// onCPU runs f on a fresh thread pinned to cpu.
func onCPU(cpu int, f func() (float64, error)) (float64, error) {
	return onCPU2(cpu, f)
}

func onCPU2[T any](cpu int, f func() (T, error)) (T, error) {
	type res struct {
		v   T
		err error
	}
	ch := make(chan res, 1)
	go func() {
		if err := pin(cpu); err != nil {
			var zero T
			ch <- res{zero, err}
			return
		}
		v, err := f()
		ch <- res{v, err}
	}()
	r := <-ch
	return r.v, r.err
}

func benchSyscall(n int) float64 {
	for range 1000 {
		syscall.RawSyscall(syscall.SYS_GETPPID, 0, 0, 0)
	}
	start := time.Now()
	for range n {
		syscall.RawSyscall(syscall.SYS_GETPPID, 0, 0, 0)
	}
	return float64(time.Since(start).Nanoseconds()) / float64(n)
}

// ioKind is the file benchIO loops on.
type ioKind int

const (
	ioPipe ioKind = iota // pipe2(2)
	ioUnix               // an AF_UNIX stream socketpair
	ioTCP                // a connected loopback TCP pair, TCP_NODELAY as tbench sets it
)

// benchIO writes a batch of messages into a pipe (or an AF_UNIX stream
// socketpair, or a loopback TCP connection) and reads them back, on one
// thread, with nonblocking ends so that a full buffer is an error rather
// than a hang. It returns the mean time of one write and one read. Unless
// shared, the thread first takes a private copy of the descriptor table
// (unshare(CLONE_FILES)), so that fdget borrows the file as in a
// single-threaded process instead of taking a reference as in a Go
// process's threads (fs/file.c __fget_light). The caller runs it on a
// locked thread that exits with it (onCPU2).
//
// On loopback TCP the write runs the receiving side's protocol work too
// (the segment is delivered in the sender's softirq), which is what
// tcp_send_ns holds; the read finds the data queued.
func benchIO(kind ioKind, size, calls int, shared bool) (IOCost, error) {
	if !shared {
		if err := syscall.Unshare(syscall.CLONE_FILES); err != nil {
			return IOCost{}, fmt.Errorf("unshare(CLONE_FILES): %w", err)
		}
	}
	var fds [2]int // fds[1] is written, fds[0] read
	var err error
	batch := 400 // 100-byte messages: a pipe holds 640
	switch kind {
	case ioPipe:
		err = syscall.Pipe2(fds[:], syscall.O_NONBLOCK|syscall.O_CLOEXEC)
		if size >= 1000 {
			batch = 50
		}
	case ioUnix:
		fds, err = syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_NONBLOCK|syscall.SOCK_CLOEXEC, 0)
		batch = 50
	case ioTCP:
		fds, err = tcpPair()
		// 10 KB at most in flight: under the initial 16 KB send
		// buffer whatever the skbs' overhead.
		batch = 10
	}
	if err != nil {
		return IOCost{}, err
	}
	defer syscall.Close(fds[0])
	defer syscall.Close(fds[1])
	buf := make([]byte, size)
	var tw, tr time.Duration
	done := 0
	for round := 0; done < calls; round++ {
		t0 := time.Now()
		for range batch {
			if n, err := syscall.Write(fds[1], buf); err != nil || n != size {
				return IOCost{}, fmt.Errorf("write of %d bytes: %d, %v", size, n, err)
			}
		}
		t1 := time.Now()
		for range batch {
			if n, err := syscall.Read(fds[0], buf); err != nil || n != size {
				return IOCost{}, fmt.Errorf("read of %d bytes: %d, %v", size, n, err)
			}
		}
		t2 := time.Now()
		if round > 0 { // the first round warms up
			tw += t1.Sub(t0)
			tr += t2.Sub(t1)
			done += batch
		}
	}
	return IOCost{Write: float64(tw.Nanoseconds()) / float64(done), Read: float64(tr.Nanoseconds()) / float64(done)}, nil
}

// tcpPair connects two nonblocking TCP sockets over 127.0.0.1 (an
// ephemeral port), with TCP_NODELAY on the writing end; it returns the
// accepted end as [0] and the connecting one as [1].
func tcpPair() (fds [2]int, err error) {
	const flags = syscall.SOCK_STREAM | syscall.SOCK_CLOEXEC
	l, err := syscall.Socket(syscall.AF_INET, flags, 0)
	if err != nil {
		return fds, fmt.Errorf("tcp socket: %w", err)
	}
	defer syscall.Close(l)
	lo := [4]byte{127, 0, 0, 1}
	if err := syscall.Bind(l, &syscall.SockaddrInet4{Addr: lo}); err != nil {
		return fds, fmt.Errorf("tcp bind 127.0.0.1: %w", err)
	}
	if err := syscall.Listen(l, 1); err != nil {
		return fds, fmt.Errorf("tcp listen: %w", err)
	}
	sa, err := syscall.Getsockname(l)
	if err != nil {
		return fds, fmt.Errorf("tcp getsockname: %w", err)
	}
	in, ok := sa.(*syscall.SockaddrInet4)
	if !ok {
		return fds, errors.New("tcp getsockname: not an IPv4 address")
	}
	c, err := syscall.Socket(syscall.AF_INET, flags, 0)
	if err != nil {
		return fds, fmt.Errorf("tcp socket: %w", err)
	}
	// On loopback the handshake completes inside connect(2).
	if err := syscall.Connect(c, &syscall.SockaddrInet4{Addr: lo, Port: in.Port}); err != nil {
		syscall.Close(c)
		return fds, fmt.Errorf("tcp connect 127.0.0.1:%d: %w", in.Port, err)
	}
	a, _, err := syscall.Accept4(l, syscall.SOCK_CLOEXEC|syscall.SOCK_NONBLOCK)
	if err != nil {
		syscall.Close(c)
		return fds, fmt.Errorf("tcp accept: %w", err)
	}
	if err := syscall.SetsockoptInt(c, syscall.IPPROTO_TCP, syscall.TCP_NODELAY, 1); err == nil {
		err = syscall.SetNonblock(c, true)
	}
	if err != nil {
		syscall.Close(a)
		syscall.Close(c)
		return fds, fmt.Errorf("tcp socket options: %w", err)
	}
	return [2]int{a, c}, nil
}

type cpuPair struct {
	a, b int
	d    costmodel.Distance
}

// cpuPairs picks one pair of CPUs per distance the host has: the same
// CPU, SMT siblings, a cluster inside the LLC, the same LLC, another LLC
// of the node, another node.
func cpuPairs(spec *topology.MachineSpec) []cpuPair {
	out := []cpuPair{{0, 0, costmodel.SameCPU}}
	seen := map[costmodel.Distance]bool{costmodel.SameCPU: true}
	for b := 1; b < len(spec.CPUs); b++ {
		d := costmodel.DistanceOf(spec, 0, cpumask.CPU(b))
		if !seen[d] {
			seen[d] = true
			out = append(out, cpuPair{0, b, d})
		}
	}
	return out
}

func pipeFds() ([2]int, error) {
	var p [2]int
	err := syscall.Pipe2(p[:], syscall.O_CLOEXEC)
	return p, err
}

func fullRead(fd int, buf []byte) error {
	for off := 0; off < len(buf); {
		n, err := syscall.Read(fd, buf[off:])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return err
		}
		if n == 0 {
			return errors.New("unexpected end of pipe")
		}
		off += n
	}
	return nil
}

// pingPong measures the round trip of a 100-byte message between two
// threads pinned to cpus a and b over two pipes.
func pingPong(a, b, iters int) (float64, error) {
	p1, err := pipeFds()
	if err != nil {
		return 0, err
	}
	p2, err := pipeFds()
	if err != nil {
		return 0, err
	}
	defer func() {
		for _, fd := range []int{p1[0], p1[1], p2[0], p2[1]} {
			syscall.Close(fd)
		}
	}()
	const warm = 1000
	total := warm + iters
	errB := make(chan error, 1)
	go func() {
		if err := pin(b); err != nil {
			errB <- err
			return
		}
		buf := make([]byte, smallMsg)
		for range total {
			if err := fullRead(p1[0], buf); err != nil {
				errB <- err
				return
			}
			if _, err := syscall.Write(p2[1], buf); err != nil {
				errB <- err
				return
			}
		}
		errB <- nil
	}()
	rtt, err := onCPU(a, func() (float64, error) {
		buf := make([]byte, smallMsg)
		var start time.Time
		for i := range total {
			if i == warm {
				start = time.Now()
			}
			if _, err := syscall.Write(p1[1], buf); err != nil {
				return 0, err
			}
			if err := fullRead(p2[0], buf); err != nil {
				return 0, err
			}
		}
		return float64(time.Since(start).Nanoseconds()) / float64(iters), nil
	})
	if e := <-errB; e != nil && err == nil {
		err = e
	}
	return rtt, err
}

// lineBounce measures the one-way latency of handing a cache line back and
// forth between threads pinned to cpus a and b (an atomic counter that each
// side increments when it is its turn).
func lineBounce(a, b, iters int) (float64, error) {
	var line struct {
		_ [64]byte
		v atomic.Int64
		_ [64]byte
	}
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	var elapsed time.Duration
	side := func(cpu int, parity int64) {
		defer wg.Done()
		if err := pin(cpu); err != nil {
			errs <- err
			line.v.Store(-1 << 40) // release the other side
			return
		}
		start := time.Now()
		for i := int64(0); i < int64(iters); i++ {
			want := 2*i + parity
			for {
				v := line.v.Load()
				if v == want {
					break
				}
				if v < 0 {
					return
				}
			}
			line.v.Store(want + 1)
		}
		if parity == 0 {
			elapsed = time.Since(start)
		}
	}
	wg.Add(2)
	go side(a, 0)
	go side(b, 1)
	wg.Wait()
	select {
	case err := <-errs:
		return 0, err
	default:
	}
	return float64(elapsed.Nanoseconds()) / float64(2*iters), nil
}

// smtBench runs an integer loop on a alone, then on a and b at once, and
// returns one thread's operations per second in each case.
func smtBench(a, b int, dur time.Duration) (alone, pair float64) {
	run := func(cpus []int) float64 {
		var wg sync.WaitGroup
		rates := make([]float64, len(cpus))
		for i, c := range cpus {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if pin(c) != nil {
					return
				}
				x, n := uint64(88172645463325252), 0
				start := time.Now()
				for time.Since(start) < dur {
					for range 10000 {
						x ^= x << 13
						x ^= x >> 7
						x ^= x << 17
					}
					n += 10000
				}
				rates[i] = float64(n) / time.Since(start).Seconds()
				sink.Add(x)
			}()
		}
		wg.Wait()
		return rates[0]
	}
	return run([]int{a}), run([]int{a, b})
}

var sink atomic.Uint64

// bandwidthCPUs lists the CPUs of cpu0's LLC and of its node, one thread
// per core first (SMT siblings last).
func bandwidthCPUs(spec *topology.MachineSpec) (llc, node []int) {
	c0 := spec.CPUs[0]
	order := func(keep func(c topology.CPUSpec) bool) []int {
		var first, rest []int
		seenCore := map[int]bool{}
		for _, c := range spec.CPUs {
			if !keep(c) {
				continue
			}
			if seenCore[c.Core] {
				rest = append(rest, int(c.CPU))
			} else {
				seenCore[c.Core] = true
				first = append(first, int(c.CPU))
			}
		}
		return append(first, rest...)
	}
	return order(func(c topology.CPUSpec) bool { return c.LLC == c0.LLC }),
		order(func(c topology.CPUSpec) bool { return c.Node == c0.Node })
}

// threadCounts is 1, 2, 4, ... and n.
func threadCounts(n int) []int {
	var out []int
	for k := 1; k < n; k *= 2 {
		out = append(out, k)
	}
	return append(out, n)
}

// memCopy runs one copying thread on each of cpus for dur and returns the
// total bandwidth in GB/s, counting bytes read plus bytes written (STREAM's
// Copy). Each thread's arrays are allocated and first touched on its own
// CPU, so that they are local to its node; together they are at least four
// times the LLC (STREAM's rule of thumb).
func memCopy(cpus []int, llcKiB int64, dur time.Duration) (float64, error) {
	llcBytes := max(llcKiB, 8192) * 1024
	size := min(max(4*llcBytes/int64(len(cpus)), 16<<20), 256<<20)
	var wg sync.WaitGroup
	ready := make(chan struct{}, len(cpus))
	start := make(chan struct{})
	rates := make([]float64, len(cpus))
	errs := make(chan error, len(cpus))
	for i, c := range cpus {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := pin(c); err != nil {
				errs <- err
				ready <- struct{}{}
				return
			}
			src, dst := make([]byte, size), make([]byte, size)
			for j := 0; j < len(src); j += 4096 {
				src[j], dst[j] = 1, 1
			}
			copy(dst, src)
			ready <- struct{}{}
			<-start
			t0 := time.Now()
			var bytes float64
			for time.Since(t0) < dur {
				copy(dst, src)
				bytes += 2 * float64(size)
			}
			rates[i] = bytes / float64(time.Since(t0).Nanoseconds())
		}()
	}
	for range cpus {
		<-ready
	}
	close(start)
	wg.Wait()
	select {
	case err := <-errs:
		return 0, err
	default:
	}
	total := 0.0
	for _, r := range rates {
		total += r
	}
	runtime.GC() // give the arrays back before the next point
	return total, nil
}
