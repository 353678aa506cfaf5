package kobj

import (
	"testing"

	"github.com/schedlab/schedlab/internal/costmodel"
	"github.com/schedlab/schedlab/internal/cpumask"
	"github.com/schedlab/schedlab/internal/engine"
	"github.com/schedlab/schedlab/internal/sched"
)

// zen3Kernel is a v6.19 kernel on zen3-2s-nps1 with its cost model.
func zen3Kernel(t *testing.T) *sched.Kernel {
	t.Helper()
	k := kernelOn(t, "zen3-2s-nps1")
	p, err := costmodel.For(k.Topo.Spec)
	if err != nil {
		t.Fatal(err)
	}
	k.ApplyCosts(costmodel.Compile(p, k.Topo.Spec))
	return k
}

// TestPipeLines follows a pipe's lines between CPUs, with the zen3 preset's
// line costs (line_same_llc_ns 17, line_other_llc_ns 80, line_other_node_ns
// 190; CPUs 0-7 are the first CCX's cores, 128 is CPU 0's SMT sibling, 16
// a core of another CCX of socket 0, 64 a core of socket 1):
//
//   - the first write from CPU 0 pays nothing (nobody wrote the lines);
//   - a read of 100 bytes from CPU 16 then pays PipeLines + 2 data lines
//     from another LLC: 6 × 80 = 480 ns;
//   - the next write from CPU 0 pays for the 4 lines CPU 16 took: 320 ns;
//     another write right after it, nothing;
//   - a read from 128, CPU 0's sibling, nothing (they share L1 and L2);
//   - a read from 1 (same CCX): 6 × 17 = 102 ns once more data is there;
//   - a write from 64 (the other socket): 4 × 190 = 760 ns;
//   - with model_kobj_lines off, or a pipe whose Lines is unset, nothing.
func TestPipeLines(t *testing.T) {
	k := zen3Kernel(t)
	k.S.KobjLines = true
	p := NewPipe()
	p.Lines = true
	var io IO
	write := func(cpu int) {
		k.SetThisCPU(cpumask.CPU(cpu))
		io.Reset(100)
		if !p.Write(k, nil, &io) {
			t.Fatal("write blocked")
		}
	}
	read := func(cpu int) {
		k.SetThisCPU(cpumask.CPU(cpu))
		io.Reset(100)
		if !p.Read(k, nil, &io) {
			t.Fatal("read blocked")
		}
	}
	cost := func(cpu, bytes int) engine.Time { return p.lines.cost(k, cpumask.CPU(cpu), PipeLines, bytes) }
	steps := []struct {
		what  string
		cpu   int
		bytes int
		want  engine.Time
		do    func(int)
	}{
		{"first write from 0", 0, 0, 0, write},
		{"read from 16", 16, 100, 480, read},
		{"write from 0 after 16", 0, 0, 320, write},
		{"write from 0 again", 0, 0, 0, write},
		{"read from 128 (SMT sibling)", 128, 100, 0, read},
		{"read from 1 (same CCX)", 1, 100, 6 * 17, read},
		{"write from 64 (other socket)", 64, 0, 4 * 190, write},
	}
	for _, s := range steps {
		if got := cost(s.cpu, s.bytes); got != s.want {
			t.Errorf("%s: %d ns, want %d", s.what, got, s.want)
		}
		s.do(s.cpu)
	}
	k.S.KobjLines = false
	if got := cost(0, 100); got != 0 {
		t.Errorf("model_kobj_lines off: %d ns, want 0", got)
	}
}

// TestPipeHopLines: in a ping-pong between CPU 0 and CPU 1 (same CCX, 17 ns
// a line) over two pipes, once both pipes have been round once, each hop
// (a write of 100 bytes to one pipe from one end, its read from the other)
// waits for the lines PipeHopLines counts, the figure schedlab calibrate
// takes out of the measured hop: the 3 the write pays before its wakeup
// (WriteLines: mutex, head and tail, pipe_buffer), the read's 4 and 2
// data lines. The write's inode line, charged after the wakeup, is the
// fourth of its PipeLines; with model_lines_before_wake off WriteLines
// pays nothing and the write's 4 all follow the wakeup.
func TestPipeHopLines(t *testing.T) {
	for _, before := range []bool{true, false} {
		k := zen3Kernel(t)
		k.S.KobjLines = true
		k.S.LinesBeforeWake = before
		pipes := [2]*Pipe{NewPipe(), NewPipe()}
		for _, p := range pipes {
			p.Lines = true
		}
		var io IO
		hop := func(p *Pipe, from, to int) (path, after engine.Time) {
			k.SetThisCPU(cpumask.CPU(from))
			io.Reset(100)
			path += p.WriteLines(k, &io)
			if again := p.WriteLines(k, &io); again != 0 {
				t.Errorf("a second WriteLines for one attempt paid %d ns", again)
			}
			rest := PipeLines
			if before {
				rest -= PipeWriteLinesBeforeWake
			}
			after = p.lines.cost(k, cpumask.CPU(from), rest, 0)
			if !p.Write(k, nil, &io) {
				t.Fatal("write blocked")
			}
			k.SetThisCPU(cpumask.CPU(to))
			path += p.lines.cost(k, cpumask.CPU(to), PipeLines, 100)
			io.Reset(100)
			if !p.Read(k, nil, &io) {
				t.Fatal("read blocked")
			}
			return path, after
		}
		for round := range 3 {
			there, thereAfter := hop(pipes[0], 0, 1)
			back, backAfter := hop(pipes[1], 1, 0)
			if round == 0 {
				continue // the first round finds lines nobody or one end wrote
			}
			want, wantAfter := engine.Time(3+4+2)*17, engine.Time(1)*17
			if !before {
				want, wantAfter = engine.Time(4+2)*17, engine.Time(4)*17
			}
			if before {
				if got := engine.Time(PipeHopLines(100)) * 17; got != want {
					t.Fatalf("PipeHopLines(100) × 17 = %d ns, want %d", got, want)
				}
			}
			if there != want || back != want || thereAfter != wantAfter || backAfter != wantAfter {
				t.Errorf("before=%v round %d: hops waited %d and %d ns, want %d each; after the wakeup %d and %d, want %d",
					before, round, there, back, want, thereAfter, backAfter, wantAfter)
			}
		}
	}
}

// TestTCPLoopbackLines: a loopback TCP connection between CPU 0 and CPU 16
// (another CCX of zen3's socket 0, line_other_llc_ns 80) moves 6 lines on a
// send and 7 on a receive (lines.go), not the data's: a hop of 12000 bytes
// (a send from one end, its receive at the other), once both directions
// have been round once, pays (6 + 7) × 80 = 1040 ns, where an AF_UNIX
// socketpair pays (3 + 5 + 188 data lines) × 80. With model_tcp_lines off
// (the workload leaves Lines unset) a TCP hop pays nothing.
func TestTCPLoopbackLines(t *testing.T) {
	k := zen3Kernel(t)
	k.S.KobjLines = true
	const bytes = 12000
	hopCost := func(dirs [2]*UnixStream) (engine.Time, engine.Time) {
		var io IO
		hop := func(s *UnixStream, from, to int) engine.Time {
			var paid engine.Time
			k.SetThisCPU(cpumask.CPU(from))
			if s.Lines {
				paid += s.lines.cost(k, cpumask.CPU(from), s.sendLines, 0)
			}
			io.Reset(bytes)
			if !s.Send(k, nil, &io) {
				t.Fatal("send blocked")
			}
			k.SetThisCPU(cpumask.CPU(to))
			if s.Lines {
				data := 0
				if s.dataLines {
					data = bytes
				}
				paid += s.lines.cost(k, cpumask.CPU(to), s.recvLines, data)
			}
			io.Reset(bytes)
			if !s.Recv(k, nil, &io, true) {
				t.Fatal("recv blocked")
			}
			return paid
		}
		var there, back engine.Time
		for range 2 {
			there, back = hop(dirs[0], 0, 16), hop(dirs[1], 16, 0)
		}
		return there, back
	}
	tcp := [2]*UnixStream{NewTCPLoopback(), NewTCPLoopback()}
	unix := [2]*UnixStream{NewUnixStream(), NewUnixStream()}
	for _, d := range [][2]*UnixStream{tcp, unix} {
		d[0].Lines, d[1].Lines = true, true
	}
	if there, back := hopCost(tcp); there != (6+7)*80 || back != (6+7)*80 {
		t.Errorf("TCP hops paid %d and %d ns, want %d each", there, back, (6+7)*80)
	}
	if there, back := hopCost(unix); there != (3+5+188)*80 || back != there {
		t.Errorf("AF_UNIX hops paid %d and %d ns, want %d each", there, back, (3+5+188)*80)
	}
	off := [2]*UnixStream{NewTCPLoopback(), NewTCPLoopback()}
	if there, back := hopCost(off); there != 0 || back != 0 {
		t.Errorf("TCP without Lines: %d and %d ns, want 0", there, back)
	}
}

// TestSendLinesBeforeWake: a send pays its lines before it commits
// (SendLines), once per attempt: on a TCP connection between CPU 0 and
// CPU 16 (line_other_llc_ns 80) whose lines the other end wrote last, 6 ×
// 80 ns; Send then records the sender as their owner, so that the next
// attempt from the same CPU pays nothing and the receiver pays its 7.
// With model_lines_before_wake off SendLines pays nothing (Send charges
// the 6 lines after its wakeup, as TestTCPLoopbackLines counts them).
func TestSendLinesBeforeWake(t *testing.T) {
	for _, before := range []bool{true, false} {
		k := zen3Kernel(t)
		k.S.KobjLines, k.S.LinesBeforeWake = true, before
		s := NewTCPLoopback()
		s.Lines = true
		var io IO
		s.lines.wrote(16, true) // the receiver's CPU wrote the lines last
		k.SetThisCPU(0)
		io.Reset(100)
		first, again := s.SendLines(k, &io), s.SendLines(k, &io)
		want := engine.Time(6 * 80)
		if !before {
			want = 0
		}
		if first != want || again != 0 {
			t.Errorf("before=%v: SendLines paid %d then %d ns, want %d then 0", before, first, again, want)
		}
		if !s.Send(k, nil, &io) {
			t.Fatal("send blocked")
		}
		io.Reset(100)
		if next := s.SendLines(k, &io); next != 0 {
			t.Errorf("before=%v: a second send from the lines' owner paid %d ns", before, next)
		}
		if got := s.lines.cost(k, 16, s.recvLines, 0); got != 7*80 {
			t.Errorf("before=%v: the receiver would pay %d ns, want %d", before, got, 7*80)
		}
	}
}
