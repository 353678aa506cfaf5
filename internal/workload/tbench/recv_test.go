package tbench

import (
	"testing"

	"github.com/schedlab/schedlab/internal/engine"
	"github.com/schedlab/schedlab/internal/kernels"
	"github.com/schedlab/schedlab/internal/sched"
)

// charge is one system call's work as a task program accounted it.
type charge struct {
	at engine.Time
	d  engine.Time
}

// chargesOf runs one client on machine with Settings.TbenchRecv set to
// recv for the first ops operations after the release and returns the
// client's and the server's system-call charges, in order.
func chargesOf(t *testing.T, machine string, recv bool, ops int) (b *Bench, client, server []charge) {
	t.Helper()
	s := sched.MustBaseline(kernels.V619)
	s.TbenchRecv = recv
	k := kernelOn(t, machine, s)
	cfg := DefaultConfig()
	cfg.Clients, cfg.TimeLimit, cfg.Warmup = 1, 2, 0
	b = New(cfg)
	if err := b.Start(k); err != nil {
		t.Fatal(err)
	}
	for b.t0 == 0 && k.Eng.Step() {
	}
	if b.t0 == 0 {
		t.Fatalf("never released:\n%s", b.out)
	}
	byTask := map[*sched.Task][]charge{}
	k.Hooks.Charge = func(p *sched.Task, c sched.Cost, d engine.Time) {
		if c == sched.CostSyscall {
			byTask[p] = append(byTask[p], charge{k.Now(), d})
		}
	}
	for b.lines < uint64(ops) && k.Eng.Step() {
	}
	// After the release only the client and its server make calls (the
	// parent reports from a timer, the listener waits in accept); a
	// second task of either name would make the pick below depend on
	// the map's order.
	for p, cs := range byTask {
		switch p.Comm {
		case "tbench":
			if client != nil {
				t.Fatalf("two tbench tasks made calls after the release")
			}
			client = cs
		case "tbench_srv":
			if server != nil {
				t.Fatalf("two tbench_srv tasks made calls after the release")
			}
			server = cs
		}
	}
	return b, client, server
}

// With Settings.TbenchRecv each side receives as dbench 4.00 does: the
// client's send of operation j, then once the reply has arrived its
// header read (4 bytes copied) and the body's MSG_TRUNC read (no copy);
// the server's header read and body read (the request copied) once the
// request has arrived, then its send. So the client's receive work of
// operation j starts no sooner than the server's send work of j has run,
// and every charge is the call's cost as dbench makes it. Off, the client
// pays one receive copying the reply's body right after its send, while
// the server still works: before the server's send.
func TestRecvAfterData(t *testing.T) {
	const ops = 200
	for _, machine := range []string{"zen3-2s-nps1", "kunpeng920-128"} {
		b, client, server := chargesOf(t, machine, true, ops)
		c := &b.cfg.Costs
		// From the release: the client's send of operation 0, its
		// receive, the next send…; the server's receive of 0, its send…
		if len(client) < 2*(ops-1) || len(server) < 2*(ops-1) {
			t.Fatalf("%s: %d client and %d server charges for %d operations", machine, len(client), len(server), ops)
		}
		for j := 0; j < ops-1; j++ {
			op := opTable[sequence[j%len(sequence)]]
			cs, cr := client[2*j], client[2*j+1]
			sr, ss := server[2*j], server[2*j+1]
			if cs.d != c.TCPSendCost(op.send) {
				t.Fatalf("%s: op %d (%s): client send %v, want %v", machine, j, op.Name, cs.d, c.TCPSendCost(op.send))
			}
			if want := c.TCPRecvCost(4) + c.TCPRecv; cr.d != want {
				t.Errorf("%s: op %d (%s): client receive %v, want header and MSG_TRUNC body %v", machine, j, op.Name, cr.d, want)
			}
			if want := c.TCPRecv + c.TCPRecvCost(op.send); sr.d != want {
				t.Errorf("%s: op %d (%s): server receive %v, want two calls copying %d bytes, %v", machine, j, op.Name, sr.d, op.send, want)
			}
			if ss.d != c.TCPSendCost(op.recv) {
				t.Errorf("%s: op %d (%s): server send %v, want %v", machine, j, op.Name, ss.d, c.TCPSendCost(op.recv))
			}
			if sr.at < cs.at+cs.d {
				t.Errorf("%s: op %d (%s): server received at %v, before the client's send ended (%v)", machine, j, op.Name, sr.at, cs.at+cs.d)
			}
			if cr.at < ss.at+ss.d {
				t.Errorf("%s: op %d (%s): client received at %v, before the server's send ended (%v)", machine, j, op.Name, cr.at, ss.at+ss.d)
			}
		}

		// Off: the client's receive, copying the reply, comes before
		// the server's send has run.
		_, client, server = chargesOf(t, machine, false, ops)
		early := 0
		for j := 0; j < ops-1; j++ {
			op := opTable[sequence[j%len(sequence)]]
			cr, ss := client[2*j+1], server[2*j+1]
			if cr.d != c.TCPRecvCost(op.recv) {
				t.Fatalf("%s, off: op %d (%s): client receive %v, want %v", machine, j, op.Name, cr.d, c.TCPRecvCost(op.recv))
			}
			if cr.at < ss.at+ss.d {
				early++
			}
		}
		if early == 0 {
			t.Errorf("%s, off: no client receive before the server's send ended", machine)
		}
	}
}
