package kobj

import (
	"math"

	"github.com/schedlab/schedlab/internal/costmodel"
	"github.com/schedlab/schedlab/internal/engine"
)

// Costs is the CPU time, in ns at capacity 1024, that each system call is
// charged until the cost model (issue 5) computes them from the machine.
// Every value says where it comes from; "placeholder" means a round number
// of the right order that nothing has checked.
//
// The pipe and socket figures were measured for this purpose on the
// development machine (an "AMD EPYC" virtual machine, Debian 12, kernel
// 6.1) with Debian's rt-tests 2.4 hackbench pinned to one CPU, where the
// writer and the reader alternate in batches (a pipe holds 640 messages of
// 100 bytes), so that context switches are amortised over hundreds of
// messages:
//
//	taskset -c 0 hackbench -p -T -g 1 -f 1 -l 400000           Time: 0.489  (1.22 µs/message)
//	taskset -c 0 hackbench -p -T -g 1 -f 1 -l 400000 -s 1000   Time: 0.736  (1.84 µs/message)
//	taskset -c 0 hackbench    -T -g 1 -f 1 -l 400000           Time: 1.527  (3.82 µs/message)
//	taskset -c 0 hackbench    -T -g 1 -f 1 -l 400000 -s 1000   Time: 1.614  (4.03 µs/message)
//
// A message is one write plus one read. The per-byte term is the slope
// between the two sizes, split evenly between the two copies; how the fixed
// part divides between write and read is a placeholder (even for pipes;
// 60/40 for sockets, whose send allocates the skb).
type Costs struct {
	// Fixed parts; the copy adds PipeCopyPer1000B or SockCopyPer1000B.
	PipeWrite engine.Time // write(2) to a pipe
	PipeRead  engine.Time // read(2) from a pipe
	SockSend  engine.Time // write(2)/send(2) on an AF_UNIX stream socket
	SockRecv  engine.Time // read(2)/recv(2) on an AF_UNIX stream socket
	// TCPSend/TCPRecv are the fixed parts of a loopback TCP send and
	// recv (tbench, hackbench -i). Placeholders sized so that a tbench
	// operation (client send + server recv + server send + client recv
	// + copies) costs about 23 µs of CPU; Debian's tbench 4.00 with 2
	// clients on the 2-CPU development VM ran 403 MB/s, about 27 µs per
	// operation round trip including wakeups.
	TCPSend, TCPRecv engine.Time
	Poll             engine.Time // poll(2) of one descriptor: placeholder 0.5 µs
	Fork             engine.Time // fork(2) in the parent: placeholder 50 µs
	ThreadCreate     engine.Time // pthread_create(3): placeholder 10 µs
	ExitProcess      engine.Time // exit of a process (mm teardown): placeholder 20 µs
	ExitThread       engine.Time // exit of a thread: placeholder 3 µs
	Reap             engine.Time // waitpid(2)/pthread_join(3) returning: placeholder 1 µs
	Futex            engine.Time // futex(2) wait or wake: placeholder 0.5 µs
	Clock            engine.Time // clock_gettime/gettimeofday (vDSO): placeholder 25 ns
	// PipeCopyPer1000B and SockCopyPer1000B override the copy costs per
	// 1000 bytes when non-zero (the cost model's pipe_ns_per_byte and
	// unix_ns_per_byte).
	PipeCopyPer1000B, SockCopyPer1000B engine.Time
}

// DefaultCosts are the constants described on Costs.
var DefaultCosts = Costs{
	PipeWrite: 575, PipeRead: 575,
	SockSend: 2290, SockRecv: 1530,
	TCPSend: 6000, TCPRecv: 4000,
	Poll:         500,
	Fork:         50 * engine.Microsecond,
	ThreadCreate: 10 * engine.Microsecond,
	ExitProcess:  20 * engine.Microsecond,
	ExitThread:   3 * engine.Microsecond,
	Reap:         1 * engine.Microsecond,
	Futex:        500,
	Clock:        25,
}

// Per-byte copy costs in ns per 1000 bytes (the measured slopes above are
// 0.69 ns/byte for a pipe message and 0.23 ns/byte for a socket message,
// half to each side).
const (
	PipeCopyPer1000B = 345
	SockCopyPer1000B = 115
)

// PipeWriteCost is the CPU time of a pipe write of n bytes.
func (c *Costs) PipeWriteCost(n int) engine.Time {
	return c.PipeWrite + engine.Time(n)*c.pipeCopy()/1000
}

// PipeReadCost is the CPU time of a pipe read of n bytes.
func (c *Costs) PipeReadCost(n int) engine.Time {
	return c.PipeRead + engine.Time(n)*c.pipeCopy()/1000
}

// SockSendCost is the CPU time of an AF_UNIX stream send of n bytes.
func (c *Costs) SockSendCost(n int) engine.Time {
	return c.SockSend + engine.Time(n)*c.sockCopy()/1000
}

// SockRecvCost is the CPU time of an AF_UNIX stream recv of n bytes.
func (c *Costs) SockRecvCost(n int) engine.Time {
	return c.SockRecv + engine.Time(n)*c.sockCopy()/1000
}

// TimerSlack is the default timer slack of a SCHED_OTHER task
// (current->timer_slack_ns = 50000): an hrtimer sleep (nanosleep, usleep,
// clock_nanosleep) may expire up to this much after its expiry so that
// timers can be batched. schedlab fires sleep timers at the end of the
// slack range, as on an otherwise idle CPU.
const TimerSlack = 50 * engine.Microsecond

// pipeCopy and sockCopy are the copy costs per 1000 bytes: the cost
// model's when set, else the measured constants.
func (c *Costs) pipeCopy() engine.Time {
	if c.PipeCopyPer1000B > 0 {
		return c.PipeCopyPer1000B
	}
	return PipeCopyPer1000B
}

func (c *Costs) sockCopy() engine.Time {
	if c.SockCopyPer1000B > 0 {
		return c.SockCopyPer1000B
	}
	return SockCopyPer1000B
}

// CostsFromModel takes the system-call costs of the machine's cost model
// (pipe and AF_UNIX calls and copies); the costs it does not model (TCP,
// fork, exit, futex, poll) keep their defaults.
func CostsFromModel(p *costmodel.Params) Costs {
	c := DefaultCosts
	c.PipeWrite, c.PipeRead = p.PipeWrite, p.PipeRead
	c.SockSend, c.SockRecv = p.UnixSend, p.UnixRecv
	c.PipeCopyPer1000B = engine.Time(math.Round(p.PipeByte * 1000))
	c.SockCopyPer1000B = engine.Time(math.Round(p.UnixByte * 1000))
	return c
}
