// Package tbench models dbench's network benchmark, tbench (dbench 4.00 as
// Debian ships it; workloads-and-formats.md section 3): N client processes,
// each with its own tbench_srv server process over a loopback TCP
// connection, in strict ping-pong. A client executes the loadfile's
// operations one after another; each operation is one RPC: the client sends
// a request, the server reads it and sends a reply, and the client blocks
// until the whole reply has arrived (MSG_WAITALL). Throughput counts the
// WriteX payloads sent and the ReadX payloads returned.
//
// By default each side receives in one call, copying its whole message,
// paid before it looks for the data. With Settings.TbenchRecv (off in
// every baseline) each side receives as dbench 4.00 does, in two calls:
// the 4-byte header, then the body (tbench_srv.c server reads the
// request's body into its buffer; sockio.c do_packets takes the reply's
// body with MSG_WAITALL|MSG_TRUNC, which TCP consumes without copying),
// both calls' work paid once the data has arrived.
//
// The loadfile is reduced to its message exchange: the default
// /usr/share/dbench/client.txt (458344 lines) was summarised per operation
// (count, mean request and reply size on the wire, mean payload), see
// opTable; a client cycles through a fixed interleaving of those operations
// in proportion to their counts (a smooth weighted round robin over the
// counts divided by 100: 4586 operations per cycle), each with its mean
// sizes. Deltree and Mkdir (3 lines in the file) are left out.
//
// Phases and reports follow dbench 4.00 (dbench.c:sig_alarm and main, in
// the 4.00 tree): all clients are created and "prepared", then released
// together, and the parent reports once a second (SIGALRM), t seconds
// after its clock's start (the release, then the end of warmup):
//
//   - While some client has moved no payload yet, or t is under the warmup
//     (timelimit/5 seconds), the line is a "warmup" line whose first field
//     is the clients that have moved payload.
//   - The first report at t >= warmup (warmup > 0) with every client
//     active ends the warmup: it prints nothing, restarts the clock and
//     zeroes the payload bytes, the operation table and the worst latency.
//   - The first report at t >= timelimit after that starts the cleanup:
//     the clients stop after their current operation.
//   - Otherwise it prints an "execute" line: MB/sec since the clock's
//     start, and the latency of the second, the longest operation that
//     ended in it or is still in flight.
//
// The final "Throughput" is the last execute line's figure: the execute
// phase runs timelimit seconds, of which the first timelimit-1 are
// measured. So -t 1 reports 0 MB/sec (no execute line), -t 2 one second,
// and -t 5 is the shortest run with a warmup (1 s). The real SIGALRM comes
// a little after each whole second, so dbench's "t > limit" is t >= limit
// here, where the reports come exactly on the second.
package tbench

import (
	"fmt"
	"io"
	"strconv"

	"github.com/schedlab/schedlab/internal/costmodel"
	"github.com/schedlab/schedlab/internal/cpumask"
	"github.com/schedlab/schedlab/internal/engine"
	"github.com/schedlab/schedlab/internal/sched"
	"github.com/schedlab/schedlab/internal/workload"
	"github.com/schedlab/schedlab/internal/workload/kobj"
)

// opKind is one loadfile operation, in dbench 4.00's report order.
type opKind struct {
	Name       string // dbench 4.00's short name
	count      int    // lines in client.txt
	send, recv int    // mean bytes on the wire, request and reply
	data       int    // mean payload counted as throughput
}

// opTable summarises /usr/share/dbench/client.txt (Debian dbench 4.0-2.1):
// per operation, the number of lines and the mean wire sizes from sockio.c's
// message layout (workloads-and-formats.md 3.1, with the paths of the file).
var opTable = []opKind{
	{"NTCreateX", 79230, 153, 87, 0},
	{"Close", 58200, 47, 39, 0},
	{"Rename", 3355, 210, 39, 0},
	{"Unlink", 16000, 123, 39, 0},
	{"Deltree", 0, 0, 0, 0},
	{"Mkdir", 0, 59, 39, 0},
	{"Qpathinfo", 71814, 135, 71, 0},
	{"Qfileinfo", 12585, 59, 71, 0},
	{"Qfsinfo", 13168, 59, 71, 0},
	{"Sfileinfo", 6454, 71, 47, 0},
	{"Find", 27765, 114, 517, 0},
	{"WriteX", 39502, 25779, 55, 25720},
	{"ReadX", 124199, 59, 11912, 11853},
	{"LockX", 258, 51, 39, 0},
	{"UnlockX", 258, 51, 39, 0},
	{"Flush", 5553, 41, 39, 0},
}

// sequence is the operation cycle every client runs.
var sequence = buildSequence()

func buildSequence() []int {
	w := make([]int, len(opTable))
	total := 0
	for i, o := range opTable {
		w[i] = (o.count + 50) / 100
		total += w[i]
	}
	cur := make([]int, len(w))
	seq := make([]int, 0, total)
	for n := 0; n < total; n++ {
		best := -1
		for i := range w {
			if w[i] == 0 {
				continue
			}
			cur[i] += w[i]
			if best < 0 || cur[i] > cur[best] {
				best = i
			}
		}
		cur[best] -= total
		seq = append(seq, best)
	}
	return seq
}

// Loadfile is the loadfile path the output names (Debian's default).
const Loadfile = "/usr/share/dbench/client.txt"

// Config is a parsed tbench command line.
type Config struct {
	Clients   int
	Server    string
	TimeLimit int // -t, seconds of the execute phase
	Warmup    int // seconds; timelimit/5 as dbench 4.00 computes it
	Costs     costmodel.Syscalls
	// TCPSndBuf is the loopback send buffer (tcp_wmem autotuning reaches
	// its 4 MiB maximum on an idle loopback connection).
	TCPSndBuf int
}

// DefaultConfig is tbench 1 localhost with dbench 4.00's 600 s limit.
func DefaultConfig() Config {
	return Config{Clients: 1, Server: "localhost", TimeLimit: 600, Warmup: 120, Costs: costmodel.DefaultSyscalls(),
		TCPSndBuf: 4 << 20}
}

type opStat struct {
	count  uint64
	sumLat engine.Time
	maxLat engine.Time
}

// Bench is one tbench run.
type Bench struct {
	cfg      Config
	k        *sched.Kernel
	out      []byte
	prepared int
	main     *sched.Task
	parent   *forker // main's program
	release  kobj.WaitQueue
	conns    []*conn

	// Settings.TbenchConnect: the listener's accept queue (the clients'
	// connection numbers, in connect order) and its wait.
	connect   bool
	recv      bool // Settings.TbenchRecv
	acceptQ   []int
	accepting kobj.WaitQueue
	t0        engine.Time // release
	tStart    engine.Time // dbench's tv_start: the release, then the end of warmup
	warmup    int         // seconds; 0 once the warmup has ended
	done      bool
	reporter  *engine.Timer
	clients   []*client

	lines    uint64 // operations executed since release (all clients)
	bytes    uint64 // payload bytes since tStart
	active   int    // clients that have moved payload since release
	secMax   engine.Time
	maxLat   engine.Time // the worst latency of a report since the warmup
	ops      []opStat
	lastTput float64

	// Sequential estimation (workload.SteadyState), unless fullLength.
	fullLength bool
	steady     workload.SteadyState
	batcher    *engine.Timer
	allBytes   uint64 // payload bytes since release, never reset
	batchMark  uint64 // allBytes at the current batch's start
	counting   bool   // the current batch is counted
	early      bool   // stopped at steady state
	relCI      float64

	// The measured window (workload.Windowed): mark is called at each
	// instant it may start or end; counted holds the start of the first
	// counted batch and the end of each counted batch, execFrom and
	// execTo the execute phase's start and its last report, each with
	// the payload moved by then.
	mark             func()
	counted          []movedAt
	execFrom, execTo movedAt
}

// movedAt is the payload bytes moved since the release (Bench.allBytes)
// at a time.
type movedAt struct {
	t     engine.Time
	bytes uint64
}

// WatchWindow installs the function called at every batch boundary and
// report (workload.Windowed).
func (b *Bench) WatchWindow(mark func()) { b.mark = mark }

func (b *Bench) markNow() movedAt {
	if b.mark != nil {
		b.mark()
	}
	return movedAt{b.k.Now(), b.allBytes}
}

// MeasuredWindow is the stretch the throughput is the rate of, and the
// payload moved in it, in MB as the throughput counts it
// (workload.Windowed): stopped at steady state, the batches after the cut
// (with a workload.SteadyState.Window the estimate also weighs the
// batches before it, each by 1/window, which the window leaves out); run
// full length, the execute phase up to its last report.
func (b *Bench) MeasuredWindow() (workload.Window, bool) {
	var from, to movedAt
	switch {
	case b.early && len(b.counted) >= 2:
		to = b.counted[len(b.counted)-1]
		from = b.counted[len(b.counted)-1-b.steady.Kept()]
	case !b.early && b.execTo.t > b.execFrom.t:
		from, to = b.execFrom, b.execTo
	default:
		return workload.Window{}, false
	}
	return workload.Window{From: from.t, To: to.t, Work: 1e-6 * float64(to.bytes-from.bytes), Unit: "MB"}, true
}

// Sequential estimation's batches: the first counted batch starts at least
// steadyTransient after the release, once every client has moved payload
// and the warmup (timelimit/5 seconds) is over.
const (
	steadyBatch     = 50 * engine.Millisecond
	steadyTransient = 100 * engine.Millisecond
)

// SetFullLength makes the run simulate the whole -t time limit
// (workload.FullLengther); by default it stops at steady state.
func (b *Bench) SetFullLength(full bool) { b.fullLength = full }

// New returns a run for cfg.
// SetCosts sets the system-call costs (workload.CostAware).
func (b *Bench) SetCosts(c costmodel.Syscalls) { b.cfg.Costs = c }

func New(cfg Config) *Bench {
	b := &Bench{cfg: cfg, ops: make([]opStat, len(opTable)), warmup: cfg.Warmup, steady: workload.DefaultSteadyState()}
	if cfg.Warmup > 0 && cfg.TimeLimit > 1 {
		// The figure dbench prints is the mean over the execute phase's
		// first timelimit-1 seconds, and the first counted batch starts
		// at the warmup's end: the window is that many batches. A trend
		// that would move its mean stops nothing early, and a climb
		// inside it counts in the estimate.
		b.steady.Window = float64(engine.Time(cfg.TimeLimit-1)*engine.Second) / float64(steadyBatch)
	}
	return b
}

func (b *Bench) printf(format string, a ...any) { b.out = fmt.Appendf(b.out, format, a...) }

// Start creates tbench_srv's listener and the tbench parent, which forks
// the clients. With Settings.TbenchConnect (on in every baseline) each
// client connects when it first runs and the listener forks its server on
// accepting (listener); off, the listener forks every server from the
// start, without waiting for a connection.
func (b *Bench) Start(k *sched.Kernel) error {
	b.k = k
	c := b.cfg
	b.printf("dbench version 4.00 - Copyright Andrew Tridgell 1999-2004\n\n")
	b.printf("Running for %d seconds with load '%s' and minimum warmup %d secs\n", c.TimeLimit, Loadfile, c.Warmup)
	b.connect = k.S.TbenchConnect
	b.recv = k.S.TbenchRecv
	if !b.connect {
		b.printf("0 of %d processes prepared for launch   0 sec\n", c.Clients)
	}
	b.reporter = engine.NewTimer("tbench-report", b.report)
	b.batcher = engine.NewTimer("tbench-batch", b.batch)
	conns := make([]*conn, c.Clients)
	for i := range conns {
		conns[i] = &conn{c2s: kobj.NewTCPLoopback(), s2c: kobj.NewTCPLoopback(), connectCPU: cpumask.None, forkCPU: cpumask.None}
		conns[i].c2s.SndBuf, conns[i].s2c.SndBuf = c.TCPSndBuf, c.TCPSndBuf
		conns[i].c2s.Lines, conns[i].s2c.Lines = k.S.TCPLines, k.S.TCPLines
	}
	b.conns = conns
	if b.connect {
		// tbench_srv runs before tbench starts: its listener is
		// blocked in accept(2) when the first client connects.
		if _, err := k.Fork(sched.TaskSpec{Comm: "tbench_srv", CPU: 0, Prog: &listener{b: b, cur: -1}}); err != nil {
			return err
		}
	} else {
		srv := &forker{b: b, n: c.Clients, mk: func(i int) sched.Program {
			conns[i].forkedAt = k.Now()
			return &server{b: b, c: conns[i]}
		}, comm: "tbench_srv"}
		if _, err := k.Fork(sched.TaskSpec{Comm: "tbench_srv", CPU: 0, Prog: srv}); err != nil {
			return err
		}
	}
	cl := &forker{b: b, n: c.Clients, mk: func(i int) sched.Program {
		// dbench stamps every client's lasttime when it sets them up.
		cl := &client{b: b, c: conns[i], id: i, opStart: k.Now()}
		if b.connect {
			cl.state = clConnect
		}
		b.clients = append(b.clients, cl)
		return cl
	}, comm: "tbench", isMain: true}
	b.parent = cl
	t, err := k.Fork(sched.TaskSpec{Comm: "tbench", CPU: 0, Prog: cl})
	b.main = t
	return err
}

// Done reports whether the execute phase is over.
func (b *Bench) Done() bool { return b.done }

// Progress is the fraction of warmup plus execute time simulated; a run
// that stops at steady state counts against the warmup plus steadyExpected
// instead when that is shorter (the rule usually holds 0.5–0.8 s after the
// release or the warmup's end), so
// that `sweep --estimate` does not extrapolate to the whole time limit.
func (b *Bench) Progress() float64 {
	if b.t0 == 0 && b.k.Now() == 0 {
		return 0
	}
	total := float64(b.cfg.Warmup+b.cfg.TimeLimit) * 1e9
	if !b.fullLength {
		total = min(total, float64(b.cfg.Warmup)*1e9+float64(steadyExpected))
	}
	return min(float64(b.k.Now()-b.t0)/total, 0.99)
}

// steadyExpected is when a run usually reaches steady state, from the
// release or the warmup's end: the transient, eight batches and a few more.
const steadyExpected = steadyTransient + 12*steadyBatch

// Report writes what tbench printed.
func (b *Bench) Report(w io.Writer) error {
	_, err := w.Write(b.out)
	return err
}

// Metrics are throughput_mb_s, the operations executed per client and the
// maximum latency; a run stopped at steady state adds the half-width of
// its throughput's 95% interval, in percent.
func (b *Bench) Metrics() workload.Metrics {
	m := []workload.Metric{
		{Name: "throughput_mb_s", Value: b.lastTput, Better: workload.HigherIsBetter},
		{Name: "operations", Value: float64(b.lines), Better: workload.HigherIsBetter},
		{Name: "max_latency_ms", Value: float64(b.maxLat) / 1e6, Better: workload.LowerIsBetter},
	}
	if b.early {
		m = append(m, workload.Metric{Name: "throughput_ci_pct", Value: 100 * b.relCI, Better: workload.LowerIsBetter})
	}
	return m
}

// batch ends one batch of sequential estimation: it counts the batch's
// throughput if the batch was counted, starts counting once every client
// has moved payload and the warmup is over, and ends the run when
// workload.SteadyState allows.
//
// Batches in the warmup are not counted because what the run estimates is
// the posted figure, the execute phase's throughput, and on a machine with
// clients ≈ CPUs/2 or more the model's throughput may still be climbing
// seconds after the release (the balancer spreading the forked pairs over
// the nodes): a rule that stopped in the warmup read whichever state the
// run was in at 0.5–2 s (tip on zen3-2s-nps4 at 256 clients read 49 and
// 54 GB/s on two seeds whose -t 60 execute phases run at 67;
// docs/performance.md, "The early stop waits for the warmup").
func (b *Bench) batch() {
	now := b.k.Now()
	if b.counting {
		b.counted = append(b.counted, b.markNow())
		b.steady.Add(1e-6 * float64(b.allBytes-b.batchMark) / (float64(steadyBatch) / 1e9))
		if b.steady.Steady() {
			b.stopSteady()
			return
		}
	}
	b.batchMark = b.allBytes
	b.counting = b.active == b.cfg.Clients && b.warmup == 0
	if b.counting && len(b.counted) == 0 {
		b.counted = append(b.counted, b.markNow())
	}
	b.k.Eng.Schedule(b.batcher, now+steadyBatch)
}

// stopSteady ends the run early: the clients are cleaned up as at the time
// limit, and the throughput is the kept batches' mean or, with a warmup,
// the execute window's (workload.SteadyState.Window), which the note says.
func (b *Bench) stopSteady() {
	mean, rel := b.steady.Estimate()
	b.early, b.lastTput, b.relCI = true, mean, rel
	now := b.k.Now()
	// The worst latency so far, as a report line would have taken it.
	b.secondLatency(now)
	b.k.Eng.Cancel(b.reporter)
	b.finish(float64(now-b.tStart) / 1e9)
	n := b.steady.Kept()
	from := now - engine.Time(n)*steadyBatch - b.t0
	window := ""
	if w := b.steady.Window; w > 0 {
		counted := float64(b.steady.Batches()) * float64(steadyBatch) / 1e9
		window = fmt.Sprintf(" (Throughput: the execute phase's %.2f s so far and %.2f s more at that rate)",
			counted, max(w*float64(steadyBatch)/1e9-counted, 0))
	}
	b.printf("schedlab: stopped at steady state after %.2f s of the -t %d run: %d batches of %d ms from %.2f s, throughput ±%.2f%% (95%%)%s; --full-length runs all of it\n",
		float64(now-b.t0)/1e9, b.cfg.TimeLimit, n, steadyBatch/engine.Millisecond, float64(from)/1e9, 100*rel, window)
}

// report is the once-a-second SIGALRM handler of the dbench parent
// (dbench.c:sig_alarm, 4.00).
func (b *Bench) report() {
	now := b.k.Now()
	c := b.cfg
	el := now - b.tStart
	inWarmup := b.active < c.Clients
	if !inWarmup && b.warmup > 0 && el >= engine.Time(b.warmup)*engine.Second {
		// Warmup over: restart the clock, zero the counters; no line.
		// (The second's latency is not reset: it runs on into the
		// first execute line, as in dbench.)
		b.tStart = now
		b.execFrom = b.markNow()
		b.warmup = 0
		b.bytes = 0
		b.maxLat = 0
		for i := range b.ops {
			b.ops[i] = opStat{}
		}
		b.k.Eng.Schedule(b.reporter, now+engine.Second)
		return
	}
	t := float64(el) / 1e9
	if el < engine.Time(b.warmup)*engine.Second {
		inWarmup = true
	} else if !inWarmup && el >= engine.Time(c.TimeLimit)*engine.Second {
		b.finish(t)
		return
	}
	lat := b.secondLatency(now)
	perClient := b.lines / uint64(c.Clients)
	tput := 1e-6 * float64(b.bytes) / t
	if inWarmup {
		b.printf("%4d  %8d  %7.2f MB/sec  warmup %3.0f sec  latency %.03f ms\n", b.active, perClient, tput, t, float64(lat)/1e6)
	} else {
		b.lastTput = tput
		b.execTo = b.markNow()
		b.printf("%4d  %8d  %7.2f MB/sec  execute %3.0f sec  latency %.03f ms\n", c.Clients, perClient, tput, t, float64(lat)/1e6)
	}
	b.secMax = 0
	b.k.Eng.Schedule(b.reporter, now+engine.Second)
}

// secondLatency is the latency of the second ending at now: the longest
// operation that ended in it, or the age of one still in flight; it
// raises the run's worst latency to it.
func (b *Bench) secondLatency(now engine.Time) engine.Time {
	lat := b.secMax
	for _, cl := range b.clients {
		if d := now - cl.opStart; d > lat {
			lat = d
		}
	}
	if lat > b.maxLat {
		b.maxLat = lat
	}
	return lat
}

// finish prints the cleanup lines and the summary.
func (b *Bench) finish(t float64) {
	c := b.cfg
	b.printf("%4d  cleanup %3.0f sec\n", c.Clients, t)
	b.printf("%4d  cleanup %3.0f sec\n", 0, t)
	b.printf("\n Operation      Count    AvgLat    MaxLat\n")
	b.printf(" ----------------------------------------\n")
	for i, o := range opTable {
		s := b.ops[i]
		if s.count == 0 {
			continue
		}
		avg := float64(s.sumLat) / float64(s.count) / 1e6
		b.printf(" %-10s%10d%10.3f%10.3f\n", o.Name, s.count, avg, float64(s.maxLat)/1e6)
	}
	b.printf("\nThroughput %s MB/sec  %d clients  %d procs  max_latency=%.03f ms\n",
		strconv.FormatFloat(b.lastTput, 'g', 6, 64), c.Clients, c.Clients, float64(b.maxLat)/1e6)
	b.done = true
	b.k.Eng.Stop()
}

// conn is one loopback TCP connection.
type conn struct {
	c2s, s2c *kobj.UnixStream
	// With Settings.TbenchConnect: the client's CPU at connect(2),
	// whether that connect woke the listener, and the listener's CPU
	// when it forked the server (what the tests check).
	connectCPU, forkCPU cpumask.CPU
	wokeListener        bool
	forkedAt            engine.Time // the server's fork, in either setup
}

// forker creates n tasks, one fork each; the tbench parent then waits for
// every client to be prepared and releases them: with
// Settings.TbenchConnect at its first 100 ms poll of the barrier that finds
// them all (create_procs), otherwise woken by the last one.
type forker struct {
	b      *Bench
	n      int
	mk     func(i int) sched.Program
	comm   string
	isMain bool
	i      int
	paid   bool
	// The parent's barrier poll (Settings.TbenchConnect).
	polling  bool
	pollFrom engine.Time
}

// pollInterval is create_procs' usleep between two looks at the barrier.
const pollInterval = 100 * engine.Millisecond

func (f *forker) Next(k *sched.Kernel, t *sched.Task) sched.Op {
	b := f.b
	for f.i < f.n {
		if !f.paid {
			f.paid = true
			return sched.Run(sys(k, b.cfg.Costs.Fork))
		}
		f.paid = false
		if _, err := k.Fork(sched.TaskSpec{Comm: f.comm, CPU: k.ThisCPU(), Prog: f.mk(f.i)}); err != nil {
			panic("tbench: " + err.Error())
		}
		f.i++
	}
	if !f.isMain {
		// The listener blocks in accept() for the rest of the run.
		return sched.Block()
	}
	if b.connect && b.t0 == 0 {
		// create_procs: after the forks, poll the barrier's waiters
		// (semctl GETZCNT) every 100 ms, printing each count, until all
		// are waiting; the clock starts after the last fork.
		if !f.polling {
			f.polling, f.pollFrom = true, k.Now()
		}
		b.printf("%d of %d processes prepared for launch %3.0f sec\n", b.prepared, f.n, float64(k.Now()-f.pollFrom)/1e9)
		if b.prepared < f.n {
			return sched.Sleep(pollInterval)
		}
	} else if b.prepared < f.n {
		return sched.Block()
	}
	if b.t0 == 0 {
		if !b.connect {
			b.printf("%d of %d processes prepared for launch   0 sec\n", f.n, f.n)
		}
		b.printf("releasing clients\n")
		b.t0 = k.Now()
		b.tStart = b.t0
		b.execFrom = b.markNow()
		b.release.WakeAll(k, 0)
		k.Eng.Schedule(b.reporter, b.t0+engine.Second)
		if !b.fullLength {
			k.Eng.Schedule(b.batcher, b.t0+steadyTransient)
		}
	}
	// The parent sleeps in its report loop (the reporter timer).
	return sched.Block()
}

// client runs the loadfile's operations against its server.
type client struct {
	b       *Bench
	c       *conn
	id      int
	state   int
	paid    bool
	pos     int
	io      kobj.IO
	opStart engine.Time // dbench's lasttime: the start of the current operation
	moved   bool        // has moved payload (dbench: bytes != 0)
	got     bool        // Settings.TbenchRecv: the reply has arrived, its calls' work is to run
}

const (
	clPrepare = iota
	clSend
	clRecv
	clConnect // Settings.TbenchConnect: the new process's start and connect(2)
)

func (cl *client) Next(k *sched.Kernel, t *sched.Task) sched.Op {
	b := cl.b
	c := &b.cfg.Costs
	for {
		switch cl.state {
		case clConnect:
			// The child's own start, then nb_setup's connect(2) on
			// loopback: the handshake's SYN and ACK sent and the
			// SYN-ACK received in this call (a simplification: three
			// zero-payload segments at tcp_send_ns and tcp_recv_ns),
			// whose last step queues the connection on the listener
			// and wakes it (sock_def_readable: WF_SYNC), from the
			// NET_RX softirq that received the final ACK
			// (tcp_child_process).
			if !cl.paid {
				cl.paid = true
				return sched.Run(c.ProcessStart + sys(k, 2*c.TCPSend+c.TCPRecv))
			}
			cl.paid = false
			b.acceptQ = append(b.acceptQ, cl.id)
			cl.c.connectCPU = k.ThisCPU()
			k.SoftirqEnter()
			cl.c.wokeListener = b.accepting.Wake(k, 1, sched.WFSync) > 0
			k.SoftirqExit()
			cl.state = clPrepare
		case clPrepare:
			if b.t0 == 0 {
				b.prepared++
				b.release.Add(t, true)
				if b.prepared == b.cfg.Clients && !b.connect {
					k.WakeUp(b.main, 0)
				}
				cl.state = clSend
				return sched.Block()
			}
			cl.state = clSend
		case clSend:
			op := &opTable[sequence[cl.pos]]
			if !cl.paid {
				cl.paid = true
				cl.opStart = k.Now()
				cl.io.Reset(op.send)
				return sched.Run(sys(k, c.TCPSendCost(op.send)))
			}
			if d := cl.c.c2s.SendLines(k, &cl.io); d > 0 {
				return sched.Run(d)
			}
			if !cl.c.c2s.Send(k, t, &cl.io) {
				return sched.Block()
			}
			cl.paid = false
			cl.state = clRecv
		case clRecv:
			op := &opTable[sequence[cl.pos]]
			if !cl.paid {
				cl.paid = true
				cl.io.Reset(op.recv)
				if !b.recv {
					return sched.Run(sys(k, c.TCPRecvCost(op.recv)))
				}
			}
			if !cl.got {
				if !cl.c.s2c.Recv(k, t, &cl.io, true) {
					return sched.Block()
				}
				if b.recv {
					// The header's read (4 bytes), then the body's
					// with MSG_TRUNC: no copy.
					cl.got = true
					return sched.Run(sys(k, c.TCPRecvCost(4)+c.TCPRecv))
				}
			}
			cl.got = false
			cl.paid = false
			lat := k.Now() - cl.opStart
			i := sequence[cl.pos]
			s := &b.ops[i]
			s.count++
			s.sumLat += lat
			if lat > s.maxLat {
				s.maxLat = lat
			}
			if lat > b.secMax {
				b.secMax = lat
			}
			b.lines++
			b.bytes += uint64(op.data)
			b.allBytes += uint64(op.data)
			if op.data > 0 && !cl.moved {
				cl.moved = true
				b.active++
			}
			cl.pos = (cl.pos + 1) % len(sequence)
			cl.state = clSend
		}
	}
}

// listener is tbench_srv's parent (dbench 4.00 tbench_srv.c:listener,
// Settings.TbenchConnect): it blocks in accept(2) on the listening socket
// and forks one server per connection, which serves it until the end.
// Simplifications: accept(2) costs tcp_recv_ns, and the waitpid(WNOHANG)
// before each accept is not charged.
type listener struct {
	b    *Bench
	cur  int // the accepted connection not yet given a server, or -1
	paid bool
}

func (l *listener) Next(k *sched.Kernel, t *sched.Task) sched.Op {
	b := l.b
	c := &b.cfg.Costs
	for {
		if l.cur < 0 {
			if len(b.acceptQ) == 0 {
				// inet_csk_wait_for_connect: an exclusive waiter.
				b.accepting.Add(t, true)
				return sched.Block()
			}
			if !l.paid {
				l.paid = true
				return sched.Run(sys(k, c.TCPRecv))
			}
			l.paid = false
			l.cur = b.acceptQ[0]
			b.acceptQ = b.acceptQ[1:]
		}
		if !l.paid {
			l.paid = true
			return sched.Run(sys(k, c.Fork))
		}
		l.paid = false
		b.conns[l.cur].forkCPU, b.conns[l.cur].forkedAt = k.ThisCPU(), k.Now()
		if _, err := k.Fork(sched.TaskSpec{Comm: "tbench_srv", CPU: k.ThisCPU(), Prog: &server{b: b, c: b.conns[l.cur], start: true}}); err != nil {
			panic("tbench: " + err.Error())
		}
		l.cur = -1
	}
}

// server answers its client's requests in order.
type server struct {
	b     *Bench
	c     *conn
	state int
	paid  bool
	pos   int
	io    kobj.IO
	start bool // the new process's own start is still to run
	got   bool // Settings.TbenchRecv: the request has arrived, its calls' work is to run
}

func (s *server) Next(k *sched.Kernel, t *sched.Task) sched.Op {
	b := s.b
	c := &b.cfg.Costs
	if s.start {
		s.start = false
		if c.ProcessStart > 0 {
			return sched.Run(c.ProcessStart)
		}
	}
	for {
		op := &opTable[sequence[s.pos]]
		if s.state == 0 {
			if !s.paid {
				s.paid = true
				s.io.Reset(op.send)
				if !b.recv {
					return sched.Run(sys(k, c.TCPRecvCost(op.send)))
				}
			}
			if !s.got {
				if !s.c.c2s.Recv(k, t, &s.io, true) {
					return sched.Block()
				}
				if b.recv {
					// The header's read (4 bytes), then the body's:
					// the whole request copied, in two calls.
					s.got = true
					return sched.Run(sys(k, c.TCPRecv+c.TCPRecvCost(op.send)))
				}
			}
			s.got = false
			s.paid = false
			s.state = 1
		}
		if !s.paid {
			s.paid = true
			s.io.Reset(op.recv)
			return sched.Run(sys(k, c.TCPSendCost(op.recv)))
		}
		if d := s.c.s2c.SendLines(k, &s.io); d > 0 {
			return sched.Run(d)
		}
		if !s.c.s2c.Send(k, t, &s.io) {
			return sched.Block()
		}
		s.paid = false
		s.state = 0
		s.pos = (s.pos + 1) % len(sequence)
	}
}

// sys is a system call's cost d, which it accounts as one
// (sched.Kernel.Account, for schedlab explain).
func sys(k *sched.Kernel, d engine.Time) engine.Time {
	k.Account(sched.CostSyscall, d)
	return d
}
