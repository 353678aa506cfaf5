package kobj

import (
	"fmt"

	"github.com/schedlab/schedlab/internal/engine"
	"github.com/schedlab/schedlab/internal/sched"
)

// Socket buffer constants (x86-64, v6.x).
const (
	// WmemDefault is net.core.wmem_default, the sk_sndbuf of a new socket:
	// 212992 bytes (SK_WMEM_MAX, 256 sk_buffs of 832 bytes).
	WmemDefault = 212992
	// skbOverhead is SKB_DATA_ALIGN(sizeof(struct sk_buff)) (232 bytes
	// rounded to 64) on x86-64.
	skbOverhead = 256
	// shinfoSize is SKB_DATA_ALIGN(sizeof(struct skb_shared_info)).
	shinfoSize = 320
	// skbMaxHead is SKB_MAX_HEAD(0): the largest linear skb head in a page.
	skbMaxHead = PageSize - shinfoSize
)

// Truesize estimates skb->truesize for an AF_UNIX stream skb carrying n
// bytes: the head is kmalloc'ed for SKB_DATA_ALIGN(n) plus the shared info,
// rounded up to the kmalloc size class, plus the sk_buff itself; data past
// SKB_MAX_HEAD(0) goes to page fragments. For 100 bytes this is 768, the
// "~0.5–1 KB per small skb" of workloads-and-formats.md 1.3. [Estimate
// from skbuff.h's SKB_TRUESIZE and kmalloc_size_roundup; not measured.]
func Truesize(n int) int {
	head := n
	data := 0
	if head > skbMaxHead {
		data = (n - skbMaxHead + PageSize - 1) / PageSize * PageSize
		head = skbMaxHead
	}
	return kmallocSize((head+63)&^63+shinfoSize) + skbOverhead + data
}

// kmallocSize rounds up to the kmalloc size classes (8, 16, 32, 64, 96,
// 128, 192, 256, 512, ... powers of two).
func kmallocSize(n int) int {
	switch {
	case n <= 64:
		return 64
	case n <= 96:
		return 96
	case n <= 128:
		return 128
	case n <= 192:
		return 192
	}
	s := 256
	for s < n {
		s <<= 1
	}
	return s
}

type skb struct {
	len, off, truesize int
}

// UnixStream is one direction of an AF_UNIX SOCK_STREAM socketpair: the
// sending socket's write-memory accounting (sk_wmem_alloc against
// sk_sndbuf) and the peer's receive queue. Every task writing the sending
// end shares the accounting, as hackbench's senders share one descriptor
// per receiver.
type UnixStream struct {
	SndBuf int // sk_sndbuf of the sending socket
	wmem   int // sk_wmem_alloc: truesize of this socket's skbs not yet consumed
	queue  []skb
	qhead  int
	rcv    WaitQueue // the receiving socket's wait queue (sk_sleep(other))
	snd    WaitQueue // the sending socket's wait queue (sk_sleep(sk))
	// Lines makes each call pay for the sockets' cache lines that
	// another CPU wrote last (see lines.go; Settings.KobjLines).
	Lines bool
	lines lines
	// sendLines and recvLines are the lines a send and a receive move
	// (UnixSendLines and UnixRecvLines, or TCP's); dataLines also
	// charges a receive the data's lines (AF_UNIX).
	sendLines, recvLines int
	dataLines            bool
	// softirq makes the wakeups of both ends come from softirq context
	// (sched.Kernel.SoftirqEnter): a loopback TCP segment is received,
	// and its reader woken, in the NET_RX softirq that the sender's
	// transmit raises and runs on the sender's CPU; the ACK that frees
	// send space, in the one the reader's runs. AF_UNIX wakes from the
	// calling task.
	softirq bool

	BytesWritten, BytesRead uint64
}

// NewUnixStream returns an empty socket direction with the default send
// buffer.
func NewUnixStream() *UnixStream {
	return &UnixStream{SndBuf: WmemDefault, sendLines: UnixSendLines, recvLines: UnixRecvLines, dataLines: true}
}

// NewTCPLoopback returns one direction of a loopback TCP connection,
// modelled as a UnixStream (the same queueing, send buffer and WF_SYNC
// wakeups) whose calls move TCP's lines (TCPSendLines, TCPRecvLines;
// lines.go) and not the data's, and whose wakeups come from the network
// softirq (net_rx_action on the sending CPU: tcp_v4_rcv, then
// sock_def_readable's wake_up_interruptible_sync_poll). Simplified: the
// write-space wakeup keeps AF_UNIX's WF_SYNC, where TCP's
// sk_stream_write_space wakes without it (tbench's 4 MiB send buffers
// never fill).
func NewTCPLoopback() *UnixStream {
	return &UnixStream{SndBuf: WmemDefault, sendLines: TCPSendLines, recvLines: TCPRecvLines, softirq: true}
}

// wake wakes up to nr exclusive waiters of q (all for 0), from softirq
// context when the socket's wakeups come from there.
func (s *UnixStream) wake(k *sched.Kernel, q *WaitQueue, nr int) {
	if s.softirq {
		k.SoftirqEnter()
		q.Wake(k, nr, sched.WFSync)
		k.SoftirqExit()
		return
	}
	q.Wake(k, nr, sched.WFSync)
}

// Len is the number of unread bytes queued.
func (s *UnixStream) Len() int {
	n := 0
	for _, b := range s.queue[s.qhead:] {
		n += b.len - b.off
	}
	return n
}

// Wmem is sk_wmem_alloc: the truesize charged to the sending socket.
func (s *UnixStream) Wmem() int { return s.wmem }

// Readable reports whether data is queued.
func (s *UnixStream) Readable() bool { return s.qhead < len(s.queue) }

// SendLines is what the attempt of io that is about to commit a send
// pays first for the lines it moves (UnixSendLines or TCPSendLines) when
// another CPU wrote them last: unix_stream_sendmsg and a loopback
// tcp_sendmsg (v6.x) write them all before sk_data_ready wakes the
// reader. The program runs that long and then calls Send, which charges
// nothing more for them. A second call for the same attempt returns 0.
// Nothing is paid unless the socket's lines take part (Lines) and the
// run models their order (Settings.LinesBeforeWake). Simplification as
// Pipe.WriteLines': the owner read here is recorded by Send.
func (s *UnixStream) SendLines(k *sched.Kernel, io *IO) engine.Time {
	if !s.Lines || !k.S.LinesBeforeWake || io.linesPaid || io.N-io.Done <= 0 {
		return 0
	}
	io.linesPaid = true
	d := s.lines.cost(k, k.ThisCPU(), s.sendLines, 0)
	k.Account(sched.CostKobjLines, d)
	return d
}

// Send mirrors net/unix/af_unix.c:unix_stream_sendmsg (v6.x): the message
// is cut into skbs of at most sk_sndbuf/2-64 bytes ("keep two messages in
// the pipe"); each allocation waits in sock_alloc_send_pskb while
// sk_wmem_alloc >= sk_sndbuf; each queued skb calls the peer's
// sk_data_ready (sock_def_readable), which wakes the reader with WF_SYNC.
// It reports whether the call is complete; if not, t waits on the sending
// socket and must block and call Send again when woken.
func (s *UnixStream) Send(k *sched.Kernel, t *sched.Task, io *IO) bool {
	if io.linesPaid {
		io.linesPaid = false
	} else if s.Lines {
		k.Charge(sched.CostKobjLines, s.lines.cost(k, k.ThisCPU(), s.sendLines, 0))
	}
	s.lines.wrote(k.ThisCPU(), true)
	for io.Done < io.N {
		if s.wmem >= s.SndBuf {
			// sock_wait_for_wmem: prepare_to_wait (non-exclusive).
			s.snd.Add(t, false)
			return false
		}
		size := io.N - io.Done
		if m := s.SndBuf/2 - 64; size > m {
			size = m
		}
		if m := skbMaxHead + 17*PageSize; size > m { // SKB_MAX_HEAD(0) + UNIX_SKB_FRAGS_SZ
			size = m
		}
		ts := Truesize(size)
		s.wmem += ts
		if s.qhead > 0 && s.qhead == len(s.queue) {
			s.queue, s.qhead = s.queue[:0], 0
		}
		s.queue = append(s.queue, skb{len: size, truesize: ts})
		io.Done += size
		s.BytesWritten += uint64(size)
		// sock_def_readable: wake_up_interruptible_sync_poll.
		s.wake(k, &s.rcv, 1)
	}
	return true
}

// Recv mirrors unix_stream_read_generic (net/unix/af_unix.c, v6.19) for a
// recv of io.N-io.Done bytes: without waitAll it returns once it has copied
// anything (SO_RCVLOWAT 1), with waitAll (MSG_WAITALL) only when everything
// asked for has arrived. Consumed skbs are freed, returning their truesize to
// the sender (sock_wfree), whose unix_write_space wakes blocked senders with
// WF_SYNC once sk_wmem_alloc is at most a quarter of sk_sndbuf. It reports
// whether the call returned; if not, t waits on the receiving socket.
func (s *UnixStream) Recv(k *sched.Kernel, t *sched.Task, io *IO, waitAll bool) bool {
	start := io.Done
	for io.Done < io.N && s.qhead < len(s.queue) {
		b := &s.queue[s.qhead]
		n := b.len - b.off
		if n > io.N-io.Done {
			n = io.N - io.Done
		}
		b.off += n
		io.Done += n
		if b.off == b.len {
			s.qhead++
			s.wmem -= b.truesize
			// unix_write_space
			if s.wmem<<2 <= s.SndBuf {
				s.wake(k, &s.snd, 0)
			}
		}
	}
	s.BytesRead += uint64(io.Done - start)
	if s.Lines {
		data := 0
		if s.dataLines {
			data = io.Done - start
		}
		k.Charge(sched.CostKobjLines, s.lines.cost(k, k.ThisCPU(), s.recvLines, data))
	}
	s.lines.wrote(k.ThisCPU(), false)
	if io.Done == io.N || (!waitAll && io.Done > 0) {
		return true
	}
	// unix_stream_data_wait: prepare_to_wait (non-exclusive).
	s.rcv.Add(t, false)
	return false
}

// Poll mirrors poll(POLLIN) on the receiving socket (unix_poll, v6.19).
func (s *UnixStream) Poll(t *sched.Task) bool {
	if s.Readable() {
		return true
	}
	s.rcv.Add(t, false)
	return false
}

// String summarises the socket's state.
func (s *UnixStream) String() string {
	return fmt.Sprintf("unix{%d bytes queued, wmem %d/%d, %d readers and %d writers waiting}", s.Len(), s.wmem, s.SndBuf, s.rcv.Len(), s.snd.Len())
}
