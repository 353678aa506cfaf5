// Package hackbench models hackbench, in the two forms kernel developers
// run: rt-tests' hackbench binary and perf's `perf bench sched messaging`
// (workloads-and-formats.md section 1). Both build the same task graph:
//
//   - groups independent groups of fds receivers and fds senders; receiver r
//     of a group owns the read end of one channel (a pipe with -p, else an
//     AF_UNIX stream socketpair), and every sender of the group holds the
//     write end of every receiver's channel;
//   - each sender writes datasize bytes to each receiver, loops times
//     (loops × fds writes); each receiver reads fds × loops messages of
//     datasize bytes (looping over short reads), then exits;
//   - start barrier: each child writes one byte to the "ready" channel and
//     polls the "wake" channel; the parent reads one byte per child, takes
//     t0, writes one byte to "wake" (releasing every poller at once), reaps
//     the children in creation order (waitpid / pthread_join) and takes t1.
//
// The reported time is t1 − t0, printed as the tools print it, truncated to
// milliseconds. Every child is created by the parent from the parent's CPU
// (fork / pthread_create → wake_up_new_task), receivers of a group before
// its senders, as both tools do.
package hackbench

import (
	"fmt"
	"io"

	"github.com/schedlab/schedlab/internal/costmodel"
	"github.com/schedlab/schedlab/internal/cpumask"
	"github.com/schedlab/schedlab/internal/engine"
	"github.com/schedlab/schedlab/internal/sched"
	"github.com/schedlab/schedlab/internal/workload"
	"github.com/schedlab/schedlab/internal/workload/kobj"
)

// Flavour selects which tool's options and output are used.
type Flavour int

const (
	RTTests   Flavour = iota // rt-tests hackbench
	PerfBench                // perf bench sched messaging
)

// Config is a parsed hackbench command line.
type Config struct {
	Flavour  Flavour
	Groups   int  // -g
	Fds      int  // -f: senders = receivers per group
	Loops    int  // -l
	DataSize int  // -s, bytes per message
	Pipe     bool // -p: pipes instead of AF_UNIX stream sockets
	Inet     bool // -i: loopback TCP sockets instead of AF_UNIX ones
	Threads  bool // -T (perf: -t): threads instead of processes
	// Simple is perf bench --format=simple: print only the time.
	Simple bool
	Costs  costmodel.Syscalls
	// CPU is where the parent runs (the shell's CPU): 0.
	CPU cpumask.CPU
}

// DefaultConfig is rt-tests' defaults: 10 groups, 20 fds, 100 loops, 100
// bytes, sockets, processes.
func DefaultConfig() Config {
	return Config{Groups: 10, Fds: 20, Loops: 100, DataSize: 100, Costs: costmodel.DefaultSyscalls()}
}

// channel is a pipe or a socket direction as hackbench uses it: one
// concrete type whose methods switch on the kind, not an interface, since
// every message makes several calls on it.
type channel struct {
	kind chanKind
	pipe *kobj.Pipe       // chanPipe
	sock *kobj.UnixStream // chanUnix, chanTCP
	// files are the channel's two struct files: the read end and the
	// write end (pipe(2)'s fds[0] and fds[1]; socketpair(2)'s two
	// sockets, of which hackbench reads from one and writes to the
	// other).
	rd, wr kobj.File
}

type chanKind uint8

const (
	chanPipe chanKind = iota
	chanUnix          // an AF_UNIX stream socketpair
	// chanTCP is a loopback TCP connection (-i): a stream socket whose
	// calls cost what TCP's do.
	chanTCP
)

func (ch *channel) write(k *sched.Kernel, t *sched.Task, io *kobj.IO) bool {
	if ch.kind == chanPipe {
		return ch.pipe.Write(k, t, io)
	}
	return ch.sock.Send(k, t, io)
}

func (ch *channel) read(k *sched.Kernel, t *sched.Task, io *kobj.IO) bool {
	if ch.kind == chanPipe {
		return ch.pipe.Read(k, t, io)
	}
	return ch.sock.Recv(k, t, io, false)
}

func (ch *channel) poll(t *sched.Task) bool {
	if ch.kind == chanPipe {
		return ch.pipe.Poll(t)
	}
	return ch.sock.Poll(t)
}

func (ch *channel) writeCost(c *costmodel.Syscalls, n int) engine.Time {
	switch ch.kind {
	case chanPipe:
		return c.PipeWriteCost(n)
	case chanUnix:
		return c.UnixSendCost(n)
	}
	return c.TCPSendCost(n)
}

func (ch *channel) readCost(c *costmodel.Syscalls, n int) engine.Time {
	switch ch.kind {
	case chanPipe:
		return c.PipeReadCost(n)
	case chanUnix:
		return c.UnixRecvCost(n)
	}
	return c.TCPRecvCost(n)
}

// sys is a system call's cost d, which it accounts as one
// (sched.Kernel.Account, for schedlab explain).
func sys(k *sched.Kernel, d engine.Time) engine.Time {
	k.Account(sched.CostSyscall, d)
	return d
}

// lock is the spin before the call of n bytes may commit: the object's
// lock is held by another call (kobj.Pipe.Lock). A stream socket's sender
// takes the peer's unix_state_lock and the receive queue's spinlock only
// briefly, and its reader u->iolock, which hackbench's one reader per
// socket never contends; not modelled.
func (ch *channel) lock(k *sched.Kernel, io *kobj.IO, c *costmodel.Syscalls, write bool, n int) engine.Time {
	if ch.kind != chanPipe {
		return 0
	}
	return ch.pipe.Lock(k, io, c.PipeLockHold(write, n))
}

// linesBeforeWake is what a write pays for the lines it moves before
// its wakeup (kobj.Pipe.WriteLines, kobj.UnixStream.SendLines), after
// its lock and before it commits.
func (ch *channel) linesBeforeWake(k *sched.Kernel, io *kobj.IO) engine.Time {
	if ch.kind == chanPipe {
		return ch.pipe.WriteLines(k, io)
	}
	return ch.sock.SendLines(k, io)
}

// end is the struct file of the read or the write end.
func (ch *channel) end(write bool) *kobj.File {
	if write {
		return &ch.wr
	}
	return &ch.rd
}

// Bench is one hackbench run.
type Bench struct {
	cfg         Config
	newChan     func() *channel
	tcpLines    bool // Settings.TCPLines, for -i's sockets
	ready, wake *channel
	pipes       []*kobj.Pipe // every pipe, for their mutexes' statistics
	parent      *parent
	children    []*child
	t0, t1      engine.Time
	started     bool
	done        bool
	// Progress.
	received, total uint64
	// fgets counts the references fdget took on shared tables, fgetTime
	// what they cost (tests).
	fgets    uint64
	fgetTime engine.Time
	// mark is called at t0 and t1 (workload.Windowed).
	mark func()
}

// New returns a hackbench run for cfg.
func New(cfg Config) *Bench {
	b := &Bench{cfg: cfg}
	switch {
	case cfg.Pipe:
		b.newChan = func() *channel {
			p := kobj.NewPipe()
			p.Lines, p.Locks = true, true
			b.pipes = append(b.pipes, p)
			return &channel{kind: chanPipe, pipe: p}
		}
	case cfg.Inet:
		// Loopback TCP's lines by distance (Settings.TCPLines, read at
		// Start).
		b.newChan = func() *channel {
			s := kobj.NewTCPLoopback()
			s.Lines = b.tcpLines
			return &channel{kind: chanTCP, sock: s}
		}
	default:
		b.newChan = func() *channel {
			s := kobj.NewUnixStream()
			s.Lines = true
			return &channel{kind: chanUnix, sock: s}
		}
	}
	b.total = uint64(cfg.Groups) * uint64(cfg.Fds) * uint64(cfg.Fds) * uint64(cfg.Loops)
	return b
}

// fget is what a system call on ch's read or write end costs beyond the
// call itself: with -T every task is a thread of one process, whose
// descriptor table is shared, so fdget takes a reference on the file
// (kobj.File); with -P each child has its own table (fork copies it) and
// borrows the file for free.
func (b *Bench) fget(k *sched.Kernel, ch *channel, write bool) engine.Time {
	if !b.cfg.Threads {
		return 0
	}
	d := ch.end(write).Get(k, b.cfg.Costs.FgetShared)
	if k.S.SharedFdTable {
		b.fgets++
		b.fgetTime += d
	}
	return d
}

// SetCosts sets the system-call costs (workload.CostAware).
func (b *Bench) SetCosts(c costmodel.Syscalls) { b.cfg.Costs = c }

// Start creates the parent task; it creates the children.
func (b *Bench) Start(k *sched.Kernel) error {
	b.tcpLines = k.S.TCPLines
	b.ready, b.wake = b.newChan(), b.newChan()
	b.parent = &parent{b: b}
	t, err := k.Fork(sched.TaskSpec{Comm: b.comm(), CPU: b.cfg.CPU, Prog: b.parent})
	if err != nil {
		return err
	}
	b.parent.t = t
	return nil
}

func (b *Bench) comm() string {
	if b.cfg.Flavour == PerfBench {
		return "sched-messaging"
	}
	return "hackbench"
}

// Done reports whether the parent has taken t1.
func (b *Bench) Done() bool { return b.done }

// Progress is the fraction of messages received.
func (b *Bench) Progress() float64 {
	if b.total == 0 {
		return 1
	}
	return float64(b.received) / float64(b.total)
}

// WatchWindow installs the function called at t0 and t1
// (workload.Windowed).
func (b *Bench) WatchWindow(mark func()) { b.mark = mark }

// MeasuredWindow is [t0, t1] and the messages passed in it: every
// message is sent and received between the two (workload.Windowed).
func (b *Bench) MeasuredWindow() (workload.Window, bool) {
	if !b.done || b.t1 <= b.t0 {
		return workload.Window{}, false
	}
	return workload.Window{From: b.t0, To: b.t1, Work: float64(b.total), Unit: "message"}, true
}

// Elapsed is t1 − t0.
func (b *Bench) Elapsed() engine.Time { return b.t1 - b.t0 }

// NrChildren is groups × 2 × fds.
func (b *Bench) NrChildren() int { return b.cfg.Groups * 2 * b.cfg.Fds }

// Header writes the lines the tool prints before it runs.
func (b *Bench) Header(w io.Writer) {
	c := b.cfg
	switch c.Flavour {
	case RTTests:
		mode := "process"
		if c.Threads {
			mode = "threaded"
		}
		fmt.Fprintf(w, "Running in %s mode with %d groups using %d file descriptors each (== %d tasks)\n",
			mode, c.Groups, 2*c.Fds, c.Groups*2*c.Fds)
		fmt.Fprintf(w, "Each sender will pass %d messages of %d bytes\n", c.Loops, c.DataSize)
	case PerfBench:
		if c.Simple {
			return
		}
		kind := "processes"
		if c.Threads {
			kind = "threads"
		}
		fmt.Fprintf(w, "# Running 'sched/messaging' benchmark:\n")
		fmt.Fprintf(w, "# %d sender and receiver %s per group\n", c.Fds, kind)
		fmt.Fprintf(w, "# %d groups == %d %s run\n\n", c.Groups, c.Groups*2*c.Fds, kind)
	}
}

// Report writes the tool's whole output: the header and the time.
func (b *Bench) Report(w io.Writer) error {
	b.Header(w)
	d := b.Elapsed()
	sec, ms := int64(d/engine.Second), int64(d%engine.Second/engine.Millisecond)
	switch {
	case b.cfg.Flavour == RTTests:
		fmt.Fprintf(w, "Time: %d.%03d\n", sec, ms)
	case b.cfg.Simple:
		fmt.Fprintf(w, "%d.%03d\n", sec, ms)
	default:
		fmt.Fprintf(w, " %14s: %d.%03d [sec]\n", "Total time", sec, ms)
	}
	return nil
}

// TimeSeconds is the measured time in seconds (not truncated).
func (b *Bench) TimeSeconds() float64 { return float64(b.Elapsed()) / 1e9 }

// Metrics are time_s (seconds, full precision), messages and bytes; with
// pipe mutexes modelled (model_kobj_locks) also pipe_mutex_waits, the calls
// that found their pipe's mutex held, and pipe_mutex_wait_s, their spin.
func (b *Bench) Metrics() workload.Metrics {
	m := []workload.Metric{
		{Name: "time_s", Value: b.TimeSeconds(), Better: workload.LowerIsBetter},
		// Fixed by the arguments: the work the time is for.
		{Name: "messages", Value: float64(b.total), Better: workload.HigherIsBetter},
		{Name: "bytes", Value: float64(b.total) * float64(b.cfg.DataSize), Better: workload.HigherIsBetter},
	}
	var taken, waits uint64
	var waited engine.Time
	for _, p := range b.pipes {
		taken += p.Mutex.Taken
		waits += p.Mutex.Contended
		waited += p.Mutex.Waited
	}
	if taken > 0 {
		m = append(m,
			workload.Metric{Name: "pipe_mutex_waits", Value: float64(waits), Better: workload.LowerIsBetter},
			workload.Metric{Name: "pipe_mutex_wait_s", Value: float64(waited) / 1e9, Better: workload.LowerIsBetter})
	}
	return m
}

// ---- the parent -----------------------------------------------------------

type parentState int

const (
	pFork parentState = iota
	pReadReady
	pWake
	pReap
	pDone
)

type parent struct {
	b     *Bench
	t     *sched.Task
	state parentState
	paid  bool // the current system call's CPU time has been charged
	// fork progress
	group, idx int
	groupOut   []*channel
	// barrier
	readyRead int
	io        kobj.IO
	// reaping
	reap int
}

func (p *parent) Next(k *sched.Kernel, t *sched.Task) sched.Op {
	b := p.b
	c := &b.cfg.Costs
	for {
		switch p.state {
		case pFork:
			if p.group == b.cfg.Groups {
				p.state = pReadReady
				continue
			}
			if !p.paid {
				p.paid = true
				if b.cfg.Threads {
					return sched.Run(sys(k, c.ThreadCreate))
				}
				return sched.Run(sys(k, c.Fork))
			}
			p.paid = false
			if err := p.forkChild(k); err != nil {
				panic("hackbench: " + err.Error())
			}
		case pReadReady:
			if p.readyRead == b.NrChildren() {
				p.state = pWake
				continue
			}
			if !p.paid {
				p.paid = true
				p.io.Reset(1)
				return sched.Run(sys(k, b.ready.readCost(c, 1)) + b.fget(k, b.ready, false))
			}
			if !b.ready.read(k, t, &p.io) {
				return sched.Block()
			}
			p.paid = false
			p.readyRead += p.io.Done
		case pWake:
			if !p.paid {
				// gettimeofday(&start), then write(wakefd).
				b.t0 = k.Now()
				b.started = true
				if b.mark != nil {
					b.mark()
				}
				p.paid = true
				p.io.Reset(1)
				return sched.Run(sys(k, c.Clock+b.wake.writeCost(c, 1)) + b.fget(k, b.wake, true))
			}
			if !b.wake.write(k, t, &p.io) {
				return sched.Block()
			}
			p.paid = false
			p.state = pReap
		case pReap:
			if p.reap == len(b.children) {
				// gettimeofday(&stop)
				b.t1 = k.Now()
				b.done = true
				if b.mark != nil {
					b.mark()
				}
				p.state = pDone
				k.Eng.Stop()
				return sched.Exit()
			}
			ch := b.children[p.reap]
			if !ch.exited {
				ch.reaper = t
				return sched.Block()
			}
			if !p.paid {
				p.paid = true
				return sched.Run(sys(k, c.Reap))
			}
			p.paid = false
			p.reap++
		default:
			return sched.Exit()
		}
	}
}

// forkChild creates the next child: a group's fds receivers (each with a
// new channel), then its fds senders.
func (p *parent) forkChild(k *sched.Kernel) error {
	b := p.b
	fds := b.cfg.Fds
	ch := &child{b: b, sender: p.idx >= fds}
	if !ch.sender {
		in := b.newChan()
		p.groupOut = append(p.groupOut, in)
		ch.in = in
	} else {
		ch.out = p.groupOut
	}
	spec := sched.TaskSpec{Comm: b.comm(), CPU: k.ThisCPU(), Prog: ch}
	if b.cfg.Threads {
		spec.MM = p.t.MM // threads share the parent's address space
	}
	t, err := k.Fork(spec)
	if err != nil {
		return err
	}
	ch.t = t
	b.children = append(b.children, ch)
	p.idx++
	if p.idx == 2*fds {
		p.idx = 0
		p.group++
		p.groupOut = nil
	}
	return nil
}

// ---- the children ---------------------------------------------------------

type childState uint8

const (
	cStart childState = iota
	cReady
	cPoll
	cWork
	cExit
)

// child is one sender or receiver. What every call reads comes first and
// fills the first cache line of the struct (a child is 120 bytes, in the
// allocator's 128-byte size class, so it starts on a line): all that a
// receiver's call touches. A sender's channels and counters are in the
// second line, with the task and the reaper, touched at fork and exit
// (TestChildLayout).
type child struct {
	state  childState
	paid   bool
	sender bool
	exited bool
	io     kobj.IO
	left   int // bytes left of the current message
	b      *Bench
	in     *channel // receiver's channel
	n      int      // receiver: messages read
	// sender: loop i over loops, j over its channels, one per receiver.
	i, j   int
	out    []*channel
	t      *sched.Task
	reaper *sched.Task
}

func (ch *child) Next(k *sched.Kernel, t *sched.Task) sched.Op {
	b := ch.b
	c := &b.cfg.Costs
	for {
		switch ch.state {
		case cStart:
			// The new thread's or process's own start, before its
			// first system call (thread_start_ns, process_start_ns).
			ch.state = cReady
			start := c.ThreadStart
			if !b.cfg.Threads {
				start = c.ProcessStart
			}
			if start > 0 {
				return sched.Run(start)
			}
		case cReady:
			if !ch.paid {
				ch.paid = true
				ch.io.Reset(1)
				return sched.Run(sys(k, b.ready.writeCost(c, 1)) + b.fget(k, b.ready, true))
			}
			if !b.ready.write(k, t, &ch.io) {
				return sched.Block()
			}
			ch.paid = false
			ch.state = cPoll
		case cPoll:
			if !ch.paid {
				ch.paid = true
				return sched.Run(sys(k, c.Poll) + b.fget(k, b.wake, false))
			}
			if !b.wake.poll(t) {
				return sched.Block()
			}
			ch.paid = false
			ch.state = cWork
			ch.left = b.cfg.DataSize
		case cWork:
			if ch.sender {
				if op, ok := ch.send(k, t); ok {
					return op
				}
			} else if op, ok := ch.receive(k, t); ok {
				return op
			}
			ch.state = cExit
		case cExit:
			if !ch.paid {
				ch.paid = true
				if b.cfg.Threads {
					return sched.Run(sys(k, c.ExitThread))
				}
				return sched.Run(sys(k, c.ExitProcess))
			}
			ch.exited = true
			if ch.reaper != nil {
				// do_notify_parent / the CLONE_CHILD_CLEARTID futex
				// wake: a plain wakeup.
				k.WakeUp(ch.reaper, 0)
				ch.reaper = nil
			}
			return sched.Exit()
		}
	}
}

// send returns the sender's next operation, or ok=false when it has sent
// everything.
func (ch *child) send(k *sched.Kernel, t *sched.Task) (sched.Op, bool) {
	b := ch.b
	for ch.i < b.cfg.Loops {
		out := ch.out[ch.j]
		if !ch.paid {
			ch.paid = true
			ch.io.Reset(ch.left)
			return sched.Run(sys(k, out.writeCost(&b.cfg.Costs, ch.left)) + b.fget(k, out, true)), true
		}
		if d := out.lock(k, &ch.io, &b.cfg.Costs, true, ch.left); d > 0 {
			return sched.Run(d), true // mutex_optimistic_spin
		}
		if d := out.linesBeforeWake(k, &ch.io); d > 0 {
			return sched.Run(d), true
		}
		if !out.write(k, t, &ch.io) {
			return sched.Block(), true
		}
		ch.paid = false
		ch.left -= ch.io.Done
		if ch.left > 0 {
			continue
		}
		ch.left = b.cfg.DataSize
		ch.j++
		if ch.j == len(ch.out) {
			ch.j = 0
			ch.i++
		}
	}
	return sched.Op{}, false
}

// receive returns the receiver's next operation, or ok=false when it has
// read all its messages.
func (ch *child) receive(k *sched.Kernel, t *sched.Task) (sched.Op, bool) {
	b := ch.b
	total := b.cfg.Fds * b.cfg.Loops
	for ch.n < total {
		if !ch.paid {
			ch.paid = true
			ch.io.Reset(ch.left)
			return sched.Run(sys(k, ch.in.readCost(&b.cfg.Costs, ch.left)) + b.fget(k, ch.in, false)), true
		}
		if d := ch.in.lock(k, &ch.io, &b.cfg.Costs, false, ch.left); d > 0 {
			return sched.Run(d), true // mutex_optimistic_spin
		}
		if !ch.in.read(k, t, &ch.io) {
			return sched.Block(), true
		}
		ch.paid = false
		ch.left -= ch.io.Done
		if ch.left > 0 {
			continue
		}
		ch.left = b.cfg.DataSize
		ch.n++
		b.received++
	}
	return sched.Op{}, false
}
