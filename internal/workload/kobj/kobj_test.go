package kobj

import (
	"github.com/schedlab/schedlab/internal/kernels"
	"testing"

	"github.com/schedlab/schedlab/internal/cpumask"
	"github.com/schedlab/schedlab/internal/engine"
	"github.com/schedlab/schedlab/internal/sched"
	"github.com/schedlab/schedlab/internal/topology"
)

func newKernel(t *testing.T) *sched.Kernel {
	t.Helper()
	return kernelOn(t, "hikey")
}

// kernelOn is a v6.19 kernel on a machine preset, without a cost model.
func kernelOn(t *testing.T, machine string) *sched.Kernel {
	t.Helper()
	spec, err := topology.Load(machine)
	if err != nil {
		t.Fatal(err)
	}
	topo, err := topology.Build(spec, topology.Options{})
	if err != nil {
		t.Fatal(err)
	}
	k, err := sched.New(engine.New(1), topo, sched.MustBaseline(kernels.V619))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func fork(t *testing.T, k *sched.Kernel, name string, cpu int, f func(k *sched.Kernel, t *sched.Task) sched.Op) *sched.Task {
	t.Helper()
	task, err := k.Fork(sched.TaskSpec{Comm: name, CPU: cpuID(cpu), Prog: sched.ProgramFunc(f)})
	if err != nil {
		t.Fatal(err)
	}
	return task
}

// writer returns a program that writes msgs messages of size bytes with
// write, blocking when it must, counting completed messages in *done.
func writer(msgs, size int, write func(k *sched.Kernel, t *sched.Task, io *IO) bool, done *int) func(k *sched.Kernel, t *sched.Task) sched.Op {
	var io IO
	started := false
	return func(k *sched.Kernel, t *sched.Task) sched.Op {
		for *done < msgs {
			if !started {
				io.Reset(size)
				started = true
				return sched.Run(1000)
			}
			if !write(k, t, &io) {
				return sched.Block()
			}
			started = false
			*done++
		}
		return sched.Exit()
	}
}

// reader returns a program that reads msgs messages of size bytes with
// read, each after 3 µs of work, blocking when it must, counting completed
// messages in *got.
func reader(msgs, size int, read func(k *sched.Kernel, t *sched.Task, io *IO) bool, got *int) func(k *sched.Kernel, t *sched.Task) sched.Op {
	var io IO
	started := false
	return func(k *sched.Kernel, t *sched.Task) sched.Op {
		for *got < msgs {
			if !started {
				io.Reset(size)
				started = true
				return sched.Run(3000)
			}
			if !read(k, t, &io) {
				return sched.Block()
			}
			started = false
			*got++
		}
		return sched.Exit()
	}
}

// Reference: fs/pipe.c:pipe_write merges writes into the last page
// (PIPE_BUF_FLAG_CAN_MERGE): 40 messages of 100 bytes fit a page, 640 the
// 16-page pipe; the 641st write blocks.
func TestPipeCapacityAndMerge(t *testing.T) {
	k := newKernel(t)
	p := NewPipe()
	done := 0
	w := fork(t, k, "w", 0, writer(1000, 100, p.Write, &done))
	k.Eng.RunUntil(10 * engine.Millisecond)
	if done != 640 || p.Len() != 64000 || w.State != sched.TaskInterruptible {
		t.Fatalf("wrote %d, pipe %v, writer state %v; want 640 messages, blocked", done, p, w.State)
	}
}

// Reference: pipe_write wakes a reader blocked on an empty pipe with
// wake_up_interruptible_sync_poll (WF_SYNC); pipe_read on a full pipe wakes
// one writer (exclusive wait), and a writer that slept wakes the next one
// when room remains (wake_next_writer).
func TestPipeWakeups(t *testing.T) {
	k := newKernel(t)
	p := NewPipe()
	// The reader starts first and blocks on the empty pipe.
	got := 0
	r := fork(t, k, "r", 1, reader(2000, 100, p.Read, &got))
	k.Eng.RunUntil(engine.Millisecond)
	if r.State != sched.TaskInterruptible {
		t.Fatalf("reader state %v, want blocked on the empty pipe", r.State)
	}
	var done [3]int
	for i := range done {
		fork(t, k, "w", 2+i, writer(500, 100, p.Write, &done[i]))
	}
	k.Eng.RunUntil(100 * engine.Millisecond)
	if got != 1500 || done != [3]int{500, 500, 500} {
		t.Fatalf("read %d, wrote %v", got, done)
	}
	if r.SE.Stats.NrWakeupsSync == 0 || r.SE.Stats.NrWakeupsSync != r.SE.Stats.NrWakeups {
		t.Fatalf("reader wakeups %d, sync %d: pipe wakeups must be WF_SYNC", r.SE.Stats.NrWakeups, r.SE.Stats.NrWakeupsSync)
	}
	if p.BytesWritten != 150000 || p.BytesRead != 150000 || p.Len() != 0 {
		t.Fatalf("bytes written %d read %d left %d", p.BytesWritten, p.BytesRead, p.Len())
	}
}

// Large writes are not atomic: a 100000-byte write fills the pipe, sleeps,
// and completes as the reader drains it; reads return short when the pipe
// runs empty.
func TestPipeLargeWrite(t *testing.T) {
	k := newKernel(t)
	p := NewPipe()
	done := 0
	fork(t, k, "w", 0, writer(1, 100000, p.Write, &done))
	total := 0
	reads := 0
	var io IO
	paid := false
	fork(t, k, "r", 1, func(k *sched.Kernel, t *sched.Task) sched.Op {
		for total < 100000 {
			if !paid {
				paid = true
				io.Reset(30000)
				return sched.Run(1000)
			}
			if !p.Read(k, t, &io) {
				return sched.Block()
			}
			paid = false
			total += io.Done
			reads++
		}
		return sched.Exit()
	})
	k.Eng.RunUntil(10 * engine.Millisecond)
	if done != 1 || total != 100000 {
		t.Fatalf("write done %d, read %d bytes in %d reads", done, total, reads)
	}
}

// Reference: af_unix.c:unix_stream_sendmsg / sock_alloc_send_pskb: a
// sender may allocate while sk_wmem_alloc < sk_sndbuf, so 278 skbs of
// truesize 768 fit the default 212992; unix_write_space wakes the sender
// only when sk_wmem_alloc <= sk_sndbuf/4.
func TestUnixStreamBuffer(t *testing.T) {
	if ts := Truesize(100); ts != 768 {
		t.Fatalf("Truesize(100) = %d, want 768", ts)
	}
	k := newKernel(t)
	s := NewUnixStream()
	done := 0
	w := fork(t, k, "w", 0, writer(1000, 100, s.Send, &done))
	k.Eng.RunUntil(10 * engine.Millisecond)
	if done != 278 || w.State != sched.TaskInterruptible || s.Wmem() != 278*768 {
		t.Fatalf("sent %d (wmem %d), writer %v", done, s.Wmem(), w.State)
	}
	// Drain one message at a time from the test: the sender stays
	// asleep until wmem <= 53248, i.e. 69 skbs left.
	var io IO
	for i := 0; i < 278-70; i++ {
		io.Reset(100)
		if !s.Recv(k, w, &io, false) || io.Done != 100 {
			t.Fatal("recv failed")
		}
	}
	if w.State != sched.TaskInterruptible {
		t.Fatal("sender woken before wmem fell to sndbuf/4")
	}
	io.Reset(100)
	s.Recv(k, w, &io, false)
	if w.SE.Stats.NrWakeups != 1 || w.SE.Stats.NrWakeupsSync != 1 {
		t.Fatalf("sender %v, sync wakeups %d: unix_write_space must wake it with WF_SYNC", w.State, w.SE.Stats.NrWakeupsSync)
	}
}

// MSG_WAITALL waits for the whole request; without it a recv returns what
// is queued.
func TestUnixStreamWaitAll(t *testing.T) {
	k := newKernel(t)
	s := NewUnixStream()
	var sio IO
	sio.Reset(60)
	r := fork(t, k, "r", 1, func(k *sched.Kernel, t *sched.Task) sched.Op { return sched.Block() })
	k.Eng.RunUntil(engine.Millisecond)
	s.Send(k, r, &sio)
	var io IO
	io.Reset(100)
	if s.Recv(k, r, &io, true) || io.Done != 60 {
		t.Fatalf("MSG_WAITALL recv returned with %d of 100 bytes", io.Done)
	}
	sio.Reset(40)
	s.Send(k, r, &sio)
	if !s.Recv(k, r, &io, true) || io.Done != 100 {
		t.Fatalf("recv: %d bytes", io.Done)
	}
	io.Reset(100)
	sio.Reset(10)
	s.Send(k, r, &sio)
	if !s.Recv(k, r, &io, false) || io.Done != 10 {
		t.Fatalf("short recv: %d bytes", io.Done)
	}
}

// A barrier releases everyone when the last task arrives; futex wakes are
// not WF_SYNC.
func TestBarrierAndFutex(t *testing.T) {
	k := newKernel(t)
	b := &Barrier{N: 3}
	passed := 0
	var tasks []*sched.Task
	for i := 0; i < 3; i++ {
		d := engine.Time(i+1) * engine.Millisecond
		state := 0
		var gen uint64
		tasks = append(tasks, fork(t, k, "b", i, func(k *sched.Kernel, t *sched.Task) sched.Op {
			switch state {
			case 0:
				state = 1
				return sched.Run(d)
			case 1:
				var last bool
				gen, last = b.Arrive(k, t)
				state = 2
				if !last {
					return sched.Block()
				}
				fallthrough
			case 2:
				if !b.Passed(t, gen) {
					return sched.Block()
				}
				passed++
				state = 3
			}
			return sched.Exit()
		}))
	}
	k.Eng.RunUntil(2500 * engine.Microsecond)
	if passed != 0 {
		t.Fatalf("%d passed before the last arrival", passed)
	}
	k.Eng.RunUntil(10 * engine.Millisecond)
	if passed != 3 {
		t.Fatalf("%d passed", passed)
	}
	if tasks[0].SE.Stats.NrWakeupsSync != 0 {
		t.Fatal("barrier wake must not be WF_SYNC")
	}

	var f Futex
	w := fork(t, k, "fw", 0, func(k *sched.Kernel, t *sched.Task) sched.Op {
		if f.Val == 0 && f.Wait(t, 0) {
			return sched.Block()
		}
		return sched.Exit()
	})
	k.Eng.RunUntil(11 * engine.Millisecond)
	if w.State != sched.TaskInterruptible || f.Waiters() != 1 {
		t.Fatal("futex waiter not asleep")
	}
	if f.Wait(w, 1) {
		t.Fatal("FUTEX_WAIT with a changed value must fail (EAGAIN)")
	}
	f.Val = 1
	if n := f.Wake(k, 1); n != 1 || w.SE.Stats.NrWakeups != 1 {
		t.Fatalf("woke %d", n)
	}
}

// Non-exclusive waiters (pollers) are all woken; exclusive ones one at a
// time.
func TestWaitQueueExclusive(t *testing.T) {
	k := newKernel(t)
	var q WaitQueue
	var ts []*sched.Task
	for i := 0; i < 4; i++ {
		ts = append(ts, fork(t, k, "t", i, func(k *sched.Kernel, t *sched.Task) sched.Op { return sched.Block() }))
	}
	k.Eng.RunUntil(engine.Millisecond)
	q.Add(ts[0], true)
	q.Add(ts[1], true)
	q.Add(ts[2], false)
	q.Add(ts[3], false)
	if n := q.Wake(k, 1, 0); n != 3 {
		t.Fatalf("woke %d, want the two pollers and one exclusive waiter", n)
	}
	if ts[0].SE.Stats.NrWakeups != 1 || ts[1].SE.Stats.NrWakeups != 0 || q.Len() != 1 {
		t.Fatal("wrong exclusive waiter woken")
	}
}

func cpuID(i int) cpumask.CPU { return cpumask.CPU(i) }

// TestWaitQueueModel checks the linked WaitQueue against the slice it
// replaced (issue 15): random adds (exclusive or not, repeated), removals
// and wakeups of 100 tasks, some still runnable from an earlier wakeup,
// leave the same waiters in the same order and wake the same tasks, with
// and without the index of a long queue. Before TASK_WAKING was modelled a
// task whose wakeup was still queued on a wake list was woken again here
// (and enqueued twice when the IPI came).
func TestWaitQueueModel(t *testing.T) {
	k := newKernel(t)
	var ts []*sched.Task
	for i := 0; i < 100; i++ {
		ts = append(ts, fork(t, k, "t", i%8, func(k *sched.Kernel, t *sched.Task) sched.Op { return sched.Block() }))
	}
	now := engine.Millisecond
	k.Eng.RunUntil(now)
	type ent struct {
		t    *sched.Task
		excl bool
	}
	var model []ent
	var q WaitQueue
	longest := 0
	rnd := uint64(1)
	next := func(n int) int {
		rnd ^= rnd << 13
		rnd ^= rnd >> 7
		rnd ^= rnd << 17
		return int(rnd % uint64(n))
	}
	for step := 0; step < 5000; step++ {
		switch op := next(11); {
		case op < 9:
			p, excl := ts[next(len(ts))], next(2) == 0
			q.Add(p, excl)
			found := false
			for _, e := range model {
				found = found || e.t == p
			}
			if !found && excl {
				model = append(model, ent{p, true})
			} else if !found {
				model = append([]ent{{p, false}}, model...)
			}
		case op < 10:
			p := ts[next(len(ts))]
			q.Remove(p)
			for i, e := range model {
				if e.t == p {
					model = append(model[:i], model[i+1:]...)
					break
				}
			}
		default:
			nrWake := next(4)
			nr := nrWake
			want := 0
			var rest []ent
			stopped := false
			for _, e := range model {
				// Only a sleeping task is woken: not one running, nor
				// one whose wakeup waits on a wake list (TASK_WAKING).
				if stopped || (e.t.State != sched.TaskInterruptible && e.t.State != sched.TaskUninterruptible) {
					rest = append(rest, e)
					continue
				}
				want++
				if e.excl {
					if nr--; nr == 0 {
						stopped = true
					}
				}
			}
			if got := q.Wake(k, nrWake, 0); got != want {
				t.Fatalf("step %d: woke %d, want %d", step, got, want)
			}
			model = rest
			if next(2) == 0 {
				now += engine.Millisecond
				k.Eng.RunUntil(now)
			}
		}
		longest = max(longest, q.Len())
		var got []ent
		for e := q.head; e != nil; e = e.next {
			got = append(got, ent{e.t, e.excl})
		}
		if len(got) != len(model) || q.Len() != len(model) {
			t.Fatalf("step %d: %d waiters (Len %d), want %d", step, len(got), q.Len(), len(model))
		}
		for i := range got {
			if got[i] != model[i] {
				t.Fatalf("step %d: waiter %d is %v, want %v", step, i, got[i], model[i])
			}
		}
	}
	if longest <= indexFrom {
		t.Fatalf("the queue grew to %d waiters only; the index (from %d) was not tested", longest, indexFrom)
	}
}

// A long queue that drains and fills again (a thundering herd: every
// waiter woken, most queue again) reuses its index table and its
// entries: after the first round a round allocates nothing.
func TestWaitQueueHerdReusesIndex(t *testing.T) {
	k := newKernel(t)
	var ts []*sched.Task
	for i := 0; i < 4*indexFrom; i++ {
		ts = append(ts, fork(t, k, "t", i%8, func(k *sched.Kernel, t *sched.Task) sched.Op { return sched.Block() }))
	}
	k.Eng.RunUntil(engine.Millisecond)
	var q WaitQueue
	round := func() {
		for _, p := range ts {
			q.Add(p, false)
		}
		if q.index == nil || q.Len() != len(ts) {
			t.Fatalf("%d waiters, index %v", q.Len(), q.index != nil)
		}
		for _, p := range ts {
			q.Remove(p)
		}
	}
	round()
	if a := testing.AllocsPerRun(10, round); a != 0 {
		t.Errorf("a round of %d waiters allocates %v times", len(ts), a)
	}
}

// Reference: fs/pipe.c:pipe_read (v6.19): a reader blocked on an empty
// pipe that gets SIGKILL is woken (signal_wake_up, no WF_SYNC) and leaves
// rd_wait (wait_event_interruptible_exclusive's -ERESTARTSYS, then
// finish_wait), so the next write wakes nobody. lmbench's cleanup kills
// its writer process this way. A task that is not waiting is not woken.
func TestPipeInterrupt(t *testing.T) {
	k := newKernel(t)
	p := NewPipe()
	killed, exited := false, false
	var rio IO
	r := fork(t, k, "r", 1, func(k *sched.Kernel, t *sched.Task) sched.Op {
		if killed {
			exited = true
			return sched.Exit()
		}
		rio.Reset(1)
		if !p.Read(k, t, &rio) {
			return sched.Block()
		}
		t.Comm = "read"
		return sched.Block()
	})
	k.Eng.RunUntil(engine.Millisecond)
	if r.State != sched.TaskInterruptible || p.rdWait.Len() != 1 {
		t.Fatalf("reader %v with %d readers queued, want it blocked in the read", r.State, p.rdWait.Len())
	}
	other := fork(t, k, "other", 2, func(k *sched.Kernel, t *sched.Task) sched.Op { return sched.Block() })
	k.Eng.RunUntil(2 * engine.Millisecond)
	if p.Interrupt(k, other) || other.SE.Stats.NrWakeups != 0 {
		t.Fatal("Interrupt woke a task that was not waiting on the pipe")
	}
	killed = true
	if !p.Interrupt(k, r) {
		t.Fatal("Interrupt did not find the blocked reader")
	}
	if p.rdWait.Len() != 0 {
		t.Fatalf("%d readers still queued after the signal", p.rdWait.Len())
	}
	k.Eng.RunUntil(3 * engine.Millisecond)
	if !exited || r.State != sched.TaskDead {
		t.Fatalf("reader exited %v, state %v", exited, r.State)
	}
	if r.SE.Stats.NrWakeups != 1 || r.SE.Stats.NrWakeupsSync != 0 {
		t.Fatalf("reader woken %d times (%d sync), want one plain wakeup", r.SE.Stats.NrWakeups, r.SE.Stats.NrWakeupsSync)
	}
	// A write now finds nobody to wake.
	var wio IO
	wio.Reset(1)
	if !p.Write(k, other, &wio) || r.Comm == "read" {
		t.Fatal("the write after the kill reached the dead reader")
	}
}

// TestPipeWakeWriter: when a read wakes a writer waiting for room.
//
// Reference: fs/pipe.c:pipe_read. Since aaec5a95d596 ("pipe_read: don't
// wake up the writer if the pipe is still full", v6.14) a read sets
// wake_writer only when it empties a pipe_buffer while pipe_full() holds,
// so that the writer wakes when a slot frees; before it (v6.0, v5.12,
// Settings.PipeWakeWriterV60) every read that began on a full pipe woke
// the writer, whose wait_event condition (pipe_writable) is still false
// until a whole buffer is read, so it sleeps again.
//
// A writer fills the 16-page pipe with 640 messages of 100 bytes (40 to a
// page) and blocks on the 641st. A reader then reads n messages, one a
// read. v6.19: after 39 reads the first page still holds a message, the
// writer has had no wakeup; the 40th read empties it and wakes the writer
// once, which writes the 641st message. v6.0: each of the first 40 reads
// wakes it, 39 of them for nothing.
func TestPipeWakeWriter(t *testing.T) {
	for _, tc := range []struct {
		v60     bool
		reads   int
		wakeups uint64
		wrote   int
	}{
		{false, 39, 0, 640},
		{false, 40, 1, 641},
		{true, 1, 1, 640},
		{true, 39, 39, 640},
		{true, 40, 40, 641},
	} {
		k := newKernel(t)
		k.S.PipeWakeWriterV60 = tc.v60
		p := NewPipe()
		wrote := 0
		w := fork(t, k, "w", 0, writer(641, 100, p.Write, &wrote))
		k.Eng.RunUntil(10 * engine.Millisecond)
		if wrote != 640 || w.State != sched.TaskInterruptible {
			t.Fatalf("v60 %v: wrote %d, writer %v; want 640, blocked", tc.v60, wrote, w.State)
		}
		got := 0
		fork(t, k, "r", 1, reader(tc.reads, 100, p.Read, &got))
		k.Eng.RunUntil(20 * engine.Millisecond)
		if got != tc.reads || w.SE.Stats.NrWakeups != tc.wakeups || wrote != tc.wrote {
			t.Errorf("v60 %v, %d reads: read %d, writer woken %d times and wrote %d; want %d wakeups, %d written",
				tc.v60, tc.reads, got, w.SE.Stats.NrWakeups, wrote, tc.wakeups, tc.wrote)
		}
	}
}

// TestTCPLoopbackWakesFromSoftirq: a loopback TCP socket wakes its blocked
// sender (and its reader) from softirq context (in_task() false), as
// tcp_v4_rcv's sock_def_readable and the ACK's write-space wakeup run in
// the NET_RX softirq; an AF_UNIX socket wakes from the calling task. The
// softirq ends with the call.
//
// Reference: net/ipv4/tcp_ipv4.c:tcp_v4_rcv, reached from net_rx_action
// for loopback_xmit's netif_rx; net/unix/af_unix.c:unix_stream_sendmsg
// calls other->sk_data_ready directly.
func TestTCPLoopbackWakesFromSoftirq(t *testing.T) {
	for _, tcp := range []bool{false, true} {
		k := newKernel(t)
		s := NewUnixStream()
		if tcp {
			s = NewTCPLoopback()
		}
		s.SndBuf = 4 * 768 // four 100-byte skbs
		var inTask []bool
		// sched_waking fires in try_to_wake_up, in the waker's context
		// (sched_wakeup may fire later, on the wakee's CPU).
		k.Hooks.Waking = func(*sched.Task) { inTask = append(inTask, k.InTask()) }
		sent, got := 0, 0
		// The reader starts first and sleeps until the first send; it
		// works 3 µs after each message, so that the sender
		// (1 µs a message) fills the buffer and sleeps too.
		var rio IO
		started := false
		fork(t, k, "r", 1, func(k *sched.Kernel, task *sched.Task) sched.Op {
			if got == 8 {
				return sched.Exit()
			}
			if !started {
				rio.Reset(100)
				started = true
			}
			if !s.Recv(k, task, &rio, false) {
				return sched.Block()
			}
			started = false
			got++
			return sched.Run(3000)
		})
		k.Eng.RunUntil(engine.Millisecond)
		fork(t, k, "w", 0, writer(8, 100, s.Send, &sent))
		k.Eng.RunUntil(10 * engine.Millisecond)
		if sent != 8 || got != 8 {
			t.Fatalf("tcp %v: sent %d, read %d", tcp, sent, got)
		}
		readerWoken, senderWoken := false, false
		for i, in := range inTask {
			if in == tcp {
				t.Errorf("tcp %v: wakeup %d has in_task() %v", tcp, i, in)
			}
		}
		for _, task := range k.Tasks {
			switch task.Comm {
			case "r":
				readerWoken = task.SE.Stats.NrWakeupsSync > 0
			case "w":
				senderWoken = task.SE.Stats.NrWakeupsSync > 0
			}
		}
		if !readerWoken || !senderWoken || !k.InTask() {
			t.Errorf("tcp %v: reader woken %v, sender woken %v, in_task() after the run %v", tcp, readerWoken, senderWoken, k.InTask())
		}
	}
}
