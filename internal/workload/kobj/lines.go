package kobj

import (
	"github.com/schedlab/schedlab/internal/cpumask"
	"github.com/schedlab/schedlab/internal/engine"
	"github.com/schedlab/schedlab/internal/sched"
)

// The cache lines one call writes or reads in a kernel object shared by
// the CPUs of its two ends (v6.x; counted from the structures each call
// touches, not measured):
//
//   - pipe_write and pipe_read: pipe_inode_info's first two lines (the
//     mutex, rd_wait, wr_wait, then head and tail), the pipe_buffer at the
//     head or tail, and the inode's line with i_mtime (file_update_time on
//     write; the reader's file_accessed reads it). A read also copies the
//     message's data lines, which the writer's CPU wrote.
//   - unix_stream_sendmsg: the peer socket's lock (unix_state_lock), its
//     sk_receive_queue head and its wait queue (sk_data_ready).
//   - unix_stream_read_generic: its socket's lock and receive queue, which
//     the sender wrote, the two lines of the sk_buff the sender filled, and
//     the sender's sk_wmem_alloc (sock_wfree); and the data.
//
// A loopback TCP call (tcp_sendmsg, tcp_recvmsg, v6.x) moves more, as the
// sender's CPU runs the receiver's protocol in its softirq and the
// receiver's ACK runs the sender's:
//
//   - a send: its own socket's lines that the peer's ACK processing
//     wrote (snd_una and the send window, sk_wmem_queued with
//     sk_forward_alloc), and in the loopback receive the peer's lock
//     (bh_lock_sock), rcv_nxt with the receive queue, copied_seq, and its
//     wait-queue head (sk_data_ready);
//   - a receive: its socket's lock and owner, the receive queue and
//     rcv_nxt, the sk_buff's two lines, which the sender's softirq wrote,
//     and in the ACK that tcp_cleanup_rbuf sends the sender's lock, its
//     snd_una line and its write queue.
//
// A TCP copy's data lines are not charged by distance: copying kilobytes
// streams them with many misses in flight, which tcp_ns_per_byte covers.
const (
	PipeLines = 4
	// PipeWriteLinesBeforeWake are the PipeLines a write touches before
	// its wakeup (the mutex, head and tail, the pipe_buffer); the inode's
	// i_mtime line follows it (Settings.LinesBeforeWake).
	PipeWriteLinesBeforeWake = 3
	UnixSendLines            = 3
	UnixRecvLines            = 5
	TCPSendLines             = 6
	TCPRecvLines             = 7
	lineSize                 = 64
)

// PipeHopLines is how many cache lines a hop of a pipe ping-pong between
// two CPUs of different cores waits for in this model (a write of bytes
// to one pipe by one end, then its read by the other, each end alone on
// its CPU): the write's PipeWriteLinesBeforeWake, which the other end's
// last read of that pipe left on its CPU and which the writer pays before
// its wakeup, and the read's PipeLines plus the data's lines. The write's
// inode line follows its wakeup, while the reader wakes, and is not on the
// hop's path. schedlab calibrate subtracts them from the measured hop so
// that the IPI latency it derives does not count them twice (package
// calibrate, Derive).
func PipeHopLines(bytes int) int {
	return PipeWriteLinesBeforeWake + PipeLines + (bytes+lineSize-1)/lineSize
}

// lines records which CPU last wrote a kernel object's shared lines (meta)
// and its data, so that the next call from another CPU pays for moving
// them (Settings.KobjLines). Each is the CPU plus one, so that the zero
// value means nobody (cpumask.None) and needs no setting up.
type lines struct {
	meta, data int32
}

// lineCPU is the CPU a lines field records (cpumask.None for 0).
func lineCPU(v int32) cpumask.CPU { return cpumask.CPU(v) - 1 }

// cost is what a call from cpu pays for the object's lines: n shared lines
// last written by the meta CPU, and the data lines of bytes last written by
// the data CPU (the last writer's: an object holding several writers' data
// counts it all as the last one's). A line this CPU wrote last costs
// nothing (costmodel.Table.LineTransfer), so it is not looked up; when
// one CPU wrote both, the two counts share one lookup.
func (l *lines) cost(k *sched.Kernel, cpu cpumask.CPU, n, bytes int) engine.Time {
	if !k.S.KobjLines {
		return 0
	}
	me := int32(cpu) + 1
	if bytes > 0 && l.data == l.meta {
		if l.meta == me {
			return 0
		}
		return engine.Time(n+(bytes+lineSize-1)/lineSize) * k.Costs.LineTransfer(lineCPU(l.meta), cpu)
	}
	var d engine.Time
	if l.meta != me {
		d = engine.Time(n) * k.Costs.LineTransfer(lineCPU(l.meta), cpu)
	}
	if bytes > 0 && l.data != me {
		d += engine.Time((bytes+lineSize-1)/lineSize) * k.Costs.LineTransfer(lineCPU(l.data), cpu)
	}
	return d
}

// wrote records a call on cpu: it now holds the shared lines, and the data
// too if it wrote some.
func (l *lines) wrote(cpu cpumask.CPU, data bool) {
	l.meta = int32(cpu) + 1
	if data {
		l.data = l.meta
	}
}
