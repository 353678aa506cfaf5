package kobj

import (
	"fmt"

	"github.com/schedlab/schedlab/internal/engine"
	"github.com/schedlab/schedlab/internal/sched"
)

// Pipe geometry (include/linux/pipe_fs_i.h, fs/pipe.c).
const (
	PageSize = 4096
	// PipeBuf is PIPE_BUF: writes of at most this many bytes are atomic.
	PipeBuf = 4096
	// PipeDefBuffers is PIPE_DEF_BUFFERS: a pipe holds 16 pages (64 KiB).
	PipeDefBuffers = 16
)

// IO is one read or write system call in progress. A program keeps it across
// the times the call blocks and is retried.
type IO struct {
	N    int // bytes asked for
	Done int // bytes transferred so far
	// slept records that the call has waited once (pipe_write's
	// wake_next_writer, pipe_read's wake_next_reader).
	slept bool
	// locked records that this attempt holds its object's mutex
	// (Pipe.Lock); the attempt's Write or Read lets go of it.
	locked bool
	// linesPaid records that this attempt paid its lines before its
	// wakeup (Pipe.WriteLines, UnixStream.SendLines); the attempt's
	// Write or Send charges only what follows the wakeup.
	linesPaid bool
}

// Reset starts a new call for n bytes.
func (io *IO) Reset(n int) { *io = IO{N: n} }

// pipeBuffer mirrors struct pipe_buffer (fs/pipe.c, v6.19): one page holding
// len bytes from offset.
type pipeBuffer struct {
	offset, len int
}

// Pipe mirrors struct pipe_inode_info (v6.19): a ring of up to PipeDefBuffers
// pages. Small writes are merged into the last page while it has room
// (PIPE_BUF_FLAG_CAN_MERGE), so 100-byte messages fill 40 to a page and 640
// to a pipe.
//
// The fields every call reads and writes come first, in the order of
// their use, so that a call touches three of the struct's cache lines
// (mutex, lines and ring indices; the size and the statistics; the page
// at the head or the tail) rather than five.
type Pipe struct {
	// Locks makes the calls serialise on pipe->mutex (Lock;
	// Settings.KobjLocks).
	Locks bool
	// Lines makes each call pay for the pipe's cache lines that another
	// CPU wrote last (see lines.go; Settings.KobjLines).
	Lines      bool
	lines      lines
	Mutex      KMutex
	head, tail uint
	maxUsage   uint

	// Statistics.
	BytesWritten, BytesRead uint64

	rdWait WaitQueue // readers in pipe_read, and pollers
	wrWait WaitQueue
	bufs   [PipeDefBuffers]pipeBuffer
}

// NewPipe returns an empty pipe of the default size.
func NewPipe() *Pipe { return &Pipe{maxUsage: PipeDefBuffers} }

func (p *Pipe) empty() bool { return p.head == p.tail }
func (p *Pipe) full() bool  { return p.head-p.tail >= p.maxUsage }

// Len is the number of bytes buffered.
func (p *Pipe) Len() int {
	n := 0
	for i := p.tail; i != p.head; i++ {
		n += p.bufs[i%PipeDefBuffers].len
	}
	return n
}

// Readable mirrors pipe_readable (v6.19; no writer-count tracking: writers
// never close here).
func (p *Pipe) Readable() bool { return !p.empty() }

// Lock takes pipe->mutex for the attempt of io that is about to commit
// after holding it for hold (costmodel.Syscalls.PipeLockHold), and returns
// how long the caller must first spin for it (KMutex). The program runs
// that long and calls Write or Read; a second Lock for the same attempt
// returns 0. Nothing happens unless the pipe takes part (Locks) and the
// run models locks (Settings.KobjLocks).
func (p *Pipe) Lock(k *sched.Kernel, io *IO, hold engine.Time) engine.Time {
	if !p.Locks || !k.S.KobjLocks || io.locked {
		return 0
	}
	io.locked = true
	wait := p.Mutex.Enter(k.Eng.Now(), hold)
	k.Account(sched.CostLockWait, wait)
	return wait
}

// WriteLines is what the attempt of io that is about to commit a write
// pays, before it commits, for the pipe's lines that pipe_write (v6.x)
// touches before its wakeup (PipeWriteLinesBeforeWake: the mutex, head
// and tail, the pipe_buffer), when another CPU wrote them last. The
// program runs that long and then calls Write, which charges the inode
// line after the wakeup. A second call for the same attempt returns 0.
// Nothing is paid unless the pipe's lines take part (Lines) and the run
// models them and their order (Settings.KobjLines, LinesBeforeWake).
//
// Simplification: the lines' owner is read here and recorded by Write;
// a call by another CPU between the two (possible only without
// model_kobj_locks, as the mutex is held from Lock) is not seen.
func (p *Pipe) WriteLines(k *sched.Kernel, io *IO) engine.Time {
	if !p.Lines || !k.S.KobjLines || !k.S.LinesBeforeWake || io.linesPaid || io.N-io.Done <= 0 {
		return 0
	}
	io.linesPaid = true
	d := p.lines.cost(k, k.ThisCPU(), PipeWriteLinesBeforeWake, 0)
	k.Account(sched.CostKobjLines, d)
	return d
}

// Write mirrors fs/pipe.c:pipe_write (v6.x) for task t: it copies as much of
// io as fits and reports whether the call is complete. When it is not, t is
// on the pipe's writer queue and the program must block and call Write again
// once woken. Writes of at most PIPE_BUF bytes are all or nothing.
func (p *Pipe) Write(k *sched.Kernel, t *sched.Task, io *IO) bool {
	io.locked = false
	if io.N <= 0 {
		return true
	}
	if io.linesPaid {
		io.linesPaid = false
		p.touchAfter(k, PipeLines-PipeWriteLinesBeforeWake)
	} else {
		p.touch(k, 0, true)
	}
	wasEmpty := p.empty()
	left := io.N - io.Done
	// Merge the sub-page remainder into the last page if it fits.
	chars := left & (PageSize - 1)
	if chars != 0 && !wasEmpty {
		b := &p.bufs[(p.head-1)%PipeDefBuffers]
		if b.offset+b.len+chars <= PageSize {
			b.len += chars
			p.wrote(io, chars)
			left -= chars
			if left == 0 {
				p.writeDone(k, io, wasEmpty)
				return true
			}
		}
	}
	for {
		if !p.full() {
			n := left
			if n > PageSize {
				n = PageSize
			}
			// An atomic write that cannot be merged takes a fresh
			// page; a bigger one fills pages one at a time.
			p.bufs[p.head%PipeDefBuffers] = pipeBuffer{0, n}
			p.head++
			p.wrote(io, n)
			left -= n
			if left == 0 {
				break
			}
			continue
		}
		// Full: wake readers if we made the pipe non-empty, then wait
		// for room (wait_event_interruptible_exclusive(wr_wait)).
		if wasEmpty {
			p.rdWait.Wake(k, 1, sched.WFSync)
		}
		p.wrWait.Add(t, true)
		io.slept = true
		return false
	}
	p.writeDone(k, io, wasEmpty)
	return true
}

// touch charges the calling task for the pipe's lines (and the data it
// read) that another CPU wrote last, and records that this CPU now holds
// them.
func (p *Pipe) touch(k *sched.Kernel, read int, write bool) {
	if p.Lines {
		k.Charge(sched.CostKobjLines, p.lines.cost(k, k.ThisCPU(), PipeLines, read))
	}
	p.lines.wrote(k.ThisCPU(), write)
}

// touchAfter charges a write that paid its first lines before its
// wakeup (WriteLines) for the n lines it touches after it, and records
// that this CPU now holds the pipe's lines.
func (p *Pipe) touchAfter(k *sched.Kernel, n int) {
	if p.Lines {
		k.Charge(sched.CostKobjLines, p.lines.cost(k, k.ThisCPU(), n, 0))
	}
	p.lines.wrote(k.ThisCPU(), true)
}

func (p *Pipe) wrote(io *IO, n int) {
	io.Done += n
	p.BytesWritten += uint64(n)
}

// writeDone is pipe_write's exit path: wake a reader if the pipe was empty
// (wake_up_interruptible_sync_poll(&pipe->rd_wait)), and the next writer if
// this one had slept and there is still room.
func (p *Pipe) writeDone(k *sched.Kernel, io *IO, wasEmpty bool) {
	wakeNextWriter := io.slept && !p.full()
	if wasEmpty {
		p.rdWait.Wake(k, 1, sched.WFSync)
	}
	if wakeNextWriter {
		p.wrWait.Wake(k, 1, sched.WFSync)
	}
}

// Read mirrors fs/pipe.c:pipe_read (v6.19; v6.0's and v5.12's writer
// wakeup with Settings.PipeWakeWriterV60): it copies up to io.N-io.Done
// bytes and reports whether the call returned. A read returns as soon as it
// has copied something (a short read when the pipe runs empty); it blocks
// only when the pipe is empty, with t on the reader queue. It wakes one
// writer waiting for room (WF_SYNC) when it emptied a buffer while the
// pipe was full (v6.14+: wake_writer |= pipe_full() before the tail
// moves), or, before v6.14, whenever the pipe was full as the read began
// (was_full), even when the read freed no slot. Each retry after a sleep
// starts afresh, as the kernel's loop resets wake_writer (and recomputes
// was_full) after its wait.
func (p *Pipe) Read(k *sched.Kernel, t *sched.Task, io *IO) bool {
	io.locked = false
	if io.N-io.Done <= 0 {
		return true
	}
	wakeWriter := k.S.PipeWakeWriterV60 && p.full()
	got := 0
	want := io.N - io.Done
	for !p.empty() && got < want {
		b := &p.bufs[p.tail%PipeDefBuffers]
		n := b.len
		if n > want-got {
			n = want - got
		}
		b.offset += n
		b.len -= n
		got += n
		if b.len == 0 {
			if !k.S.PipeWakeWriterV60 && p.full() {
				wakeWriter = true
			}
			p.tail++
		}
	}
	p.touch(k, got, false)
	if got == 0 {
		if wakeWriter {
			p.wrWait.Wake(k, 1, sched.WFSync)
		}
		p.rdWait.Add(t, true)
		io.slept = true
		return false
	}
	io.Done += got
	p.BytesRead += uint64(got)
	wakeNextReader := io.slept && !p.empty()
	if wakeWriter {
		p.wrWait.Wake(k, 1, sched.WFSync)
	}
	if wakeNextReader {
		p.rdWait.Wake(k, 1, sched.WFSync)
	}
	return true
}

// Poll mirrors poll(POLLIN) on the read end (pipe_poll, v6.19): it reports
// whether data is available, and otherwise adds t to the reader queue as a
// non-exclusive waiter (poll_wait), so that the next write wakes every
// poller.
func (p *Pipe) Poll(t *sched.Task) bool {
	if p.Readable() {
		return true
	}
	p.rdWait.Add(t, false)
	return false
}

// Interrupt is a signal to t while it may wait in this pipe's read, write
// or poll: the path of a SIGKILL to a task blocked in pipe_read (v6.19).
// signal_wake_up wakes t (try_to_wake_up with TASK_INTERRUPTIBLE, no
// WF_SYNC), wait_event_interruptible_exclusive sees signal_pending and
// returns -ERESTARTSYS, and finish_wait takes t off the queue; here t
// leaves the queues at once, so that a later write wakes nobody in its
// place. It reports whether t was waiting here; the program must know it
// was interrupted (its own flag) and not retry the call. A task not
// waiting here is left alone: a killed task that is running, or runnable
// after another wakeup, dies at its return to user space, which its
// program models by checking its flag.
func (p *Pipe) Interrupt(k *sched.Kernel, t *sched.Task) bool {
	if p.rdWait.find(t) == nil && p.wrWait.find(t) == nil {
		return false
	}
	p.rdWait.Remove(t)
	p.wrWait.Remove(t)
	k.WakeUp(t, 0)
	return true
}

// String summarises the pipe's state.
func (p *Pipe) String() string {
	return fmt.Sprintf("pipe{%d bytes in %d pages, %d readers and %d writers waiting}", p.Len(), p.head-p.tail, p.rdWait.Len(), p.wrWait.Len())
}
