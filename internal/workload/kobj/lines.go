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
const (
	PipeLines     = 4
	UnixSendLines = 3
	UnixRecvLines = 5
	lineSize      = 64
)

// lines records which CPU last wrote a kernel object's shared lines (meta)
// and its data, so that the next call from another CPU pays for moving
// them (Settings.KobjLines).
type lines struct {
	meta, data cpumask.CPU
	init       bool
}

func (l *lines) reset() {
	if !l.init {
		l.meta, l.data, l.init = cpumask.None, cpumask.None, true
	}
}

// cost is what a call from cpu pays for the object's lines: n shared lines
// last written by the meta CPU, and the data lines of bytes last written by
// the data CPU (the last writer's: an object holding several writers' data
// counts it all as the last one's).
func (l *lines) cost(k *sched.Kernel, cpu cpumask.CPU, n, bytes int) engine.Time {
	l.reset()
	if !k.S.KobjLines {
		return 0
	}
	d := engine.Time(n) * k.Costs.LineTransfer(l.meta, cpu)
	if bytes > 0 {
		d += engine.Time((bytes+lineSize-1)/lineSize) * k.Costs.LineTransfer(l.data, cpu)
	}
	return d
}

// wrote records a call on cpu: it now holds the shared lines, and the data
// too if it wrote some.
func (l *lines) wrote(cpu cpumask.CPU, data bool) {
	l.reset()
	l.meta = cpu
	if data {
		l.data = cpu
	}
}
