package tbench

import (
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/schedlab/schedlab/internal/cpumask"
	"github.com/schedlab/schedlab/internal/kernels"

	"github.com/schedlab/schedlab/internal/engine"
	"github.com/schedlab/schedlab/internal/sched"
	"github.com/schedlab/schedlab/internal/topology"
)

// The operation cycle keeps client.txt's proportions.
func TestSequence(t *testing.T) {
	n := map[int]int{}
	for _, i := range sequence {
		n[i]++
	}
	if len(sequence) != 4586 || n[12] != 1242 || n[0] != 792 || n[4] != 0 {
		t.Fatalf("cycle of %d: ReadX %d NTCreateX %d Deltree %d", len(sequence), n[12], n[0], n[4])
	}
	// Smoothly interleaved: no operation repeats more than a few times in a row.
	run := 1
	for i := 1; i < len(sequence); i++ {
		if sequence[i] == sequence[i-1] {
			run++
			if run > 3 {
				t.Fatalf("%s repeated %d times at %d", opTable[sequence[i]].Name, run, i)
			}
		} else {
			run = 1
		}
	}
}

func TestParse(t *testing.T) {
	c, err := Parse([]string{"-t", "60", "16", "127.0.0.1"})
	if err != nil || c.Clients != 16 || c.TimeLimit != 60 || c.Warmup != 12 || c.Server != "127.0.0.1" {
		t.Fatalf("%+v %v", c, err)
	}
	for _, a := range []string{"", "-t 0 1", "x", "-F 4", "-c other.txt 4", "1 2 3"} {
		if _, err := Parse(strings.Fields(a)); err == nil || !strings.HasPrefix(err.Error(), "tbench: ") {
			t.Errorf("%q: %v", a, err)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add("-t 60 16 localhost")
	f.Add("--timelimit=5 -T x 1")
	f.Fuzz(func(t *testing.T, s string) {
		c, err := Parse(strings.Fields(s))
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("multi-line error %q", err)
			}
			return
		}
		if c.Clients <= 0 || c.TimeLimit <= 0 || c.Warmup < 0 {
			t.Fatalf("accepted %+v", c)
		}
	})
}

// kernelOn is a kernel with settings s on a machine preset, seed 1,
// without a cost model.
func kernelOn(t *testing.T, machine string, s sched.Settings) *sched.Kernel {
	t.Helper()
	spec, err := topology.Load(machine)
	if err != nil {
		t.Fatal(err)
	}
	topo, err := topology.Build(spec, topology.Options{})
	if err != nil {
		t.Fatal(err)
	}
	k, err := sched.New(engine.New(1), topo, s)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// reportKernel is an idle kernel on which the dbench parent's reporter
// runs alone: the clients' progress is set by the test.
func reportKernel(t *testing.T, cfg Config, clients int) *Bench {
	t.Helper()
	k := kernelOn(t, "hikey", sched.MustBaseline(kernels.V619))
	cfg.Clients = clients
	b := New(cfg)
	b.k = k
	b.reporter = engine.NewTimer("tbench-report", b.report)
	for i := 0; i < clients; i++ {
		b.clients = append(b.clients, &client{b: b, id: i})
	}
	k.Eng.Schedule(b.reporter, engine.Second)
	return b
}

// at runs f at simulated time ts.
func at(b *Bench, ts engine.Time, f func()) { b.k.Eng.Schedule(engine.NewTimer("test", f), ts) }

// The reporter follows dbench 4.00's sig_alarm: a client that has moved no
// payload keeps the run in warmup past the warmup time (its lines count
// the active clients); the first report with every client active ends the
// warmup silently and restarts the clock; the execute phase then runs
// timelimit seconds, the last line's MB/sec being the result. The
// second's latency is the longest operation that ended in it or is still
// in flight (a client that has not started one counts from its setup),
// and it is not reset by the report that ends the warmup.
func TestReportRules(t *testing.T) {
	b := reportKernel(t, Config{TimeLimit: 4, Warmup: 1}, 2)
	c0, c1 := b.clients[0], b.clients[1]
	// op: at ts, mb MB of payload and n lines have been done, and the
	// given clients start their next operation.
	op := func(ts engine.Time, mb, n int, who ...*client) {
		at(b, ts, func() {
			b.bytes += uint64(mb) * 1000000
			b.lines += uint64(n)
			for _, c := range who {
				c.opStart = ts
			}
		})
	}
	ms := engine.Millisecond
	c0.moved, b.active = true, 1 // client 0 moves payload at once
	op(999*ms, 100, 10, c0)
	op(1999*ms, 200, 10, c0)
	at(b, 2500*ms, func() { c1.moved, b.active = true, 2 }) // client 1 only now
	at(b, 2700*ms, func() { b.secMax = 7 * ms })            // an operation of 7 ms ends
	op(2999*ms, 0, 0, c0, c1)
	// 3 s: the warmup ends.
	at(b, 3500*ms, func() { b.secMax = max(b.secMax, 3*ms) }) // and one of 3 ms
	op(3999*ms, 50, 10, c0, c1)
	op(4999*ms, 50, 10, c0, c1)
	op(5999*ms, 50, 10, c0) // client 1's operation is 1.001 s old at 6 s
	b.k.Eng.RunUntil(20 * engine.Second)
	if !b.done {
		t.Fatalf("no cleanup:\n%s", b.out)
	}
	want := []string{
		"   1         5   100.00 MB/sec  warmup   1 sec  latency 1000.000 ms",
		"   1        10   150.00 MB/sec  warmup   2 sec  latency 2000.000 ms",
		"   2        15    50.00 MB/sec  execute   1 sec  latency 7.000 ms",
		"   2        20    50.00 MB/sec  execute   2 sec  latency 1.000 ms",
		"   2        25    50.00 MB/sec  execute   3 sec  latency 1001.000 ms",
		"   2  cleanup   4 sec",
		"   0  cleanup   4 sec",
	}
	got := strings.Split(string(b.out), "\n")
	if len(got) < len(want) || strings.Join(got[:len(want)], "\n") != strings.Join(want, "\n") {
		t.Fatalf("report:\n%s\nwant:\n%s", b.out, strings.Join(want, "\n"))
	}
	if !strings.HasSuffix(string(b.out), "\nThroughput 50 MB/sec  2 clients  2 procs  max_latency=1001.000 ms\n") || b.lastTput != 50 {
		t.Errorf("summary:\n%s", b.out)
	}
}

// The stopping rule's Window is what dbench's figure averages, counted in
// batches from the warmup's end: -t T measures the execute phase's first
// T-1 seconds, so T-1 s of 50 ms batches. A run without a warmup (-t 4
// and shorter) stands for the steady state alone.
func TestSteadyWindow(t *testing.T) {
	for _, tc := range []struct {
		args   []string
		target float64 // batches
	}{
		{[]string{"-t", "60", "256"}, 59.0 / 0.05},
		{[]string{"-t", "5", "4"}, 4.0 / 0.05},
		{[]string{"-t", "4", "4"}, 0},
		{[]string{"-t", "2", "4"}, 0},
	} {
		cfg, err := Parse(tc.args)
		if err != nil {
			t.Fatal(err)
		}
		if got := New(cfg).steady.Window; math.Abs(got-tc.target) > 1e-9 {
			t.Errorf("%v: window %v, want %v", tc.args, got, tc.target)
		}
	}
}

// setupKernel runs tbench's setup on machine until the parent releases
// the clients, with Settings.TbenchConnect on or off.
func setupKernel(t *testing.T, machine string, clients int, connect bool) *Bench {
	t.Helper()
	s := sched.MustBaseline(kernels.V619)
	s.TbenchConnect = connect
	k := kernelOn(t, machine, s)
	cfg := DefaultConfig()
	cfg.Clients, cfg.TimeLimit, cfg.Warmup = clients, 2, 0
	b := New(cfg)
	if err := b.Start(k); err != nil {
		t.Fatal(err)
	}
	for b.t0 == 0 && k.Eng.Step() {
	}
	if b.t0 == 0 {
		t.Fatalf("%d clients never released:\n%s", clients, b.out)
	}
	return b
}

// tbench's setup as dbench 4.00 and tbench_srv run it
// (Settings.TbenchConnect): each client connects when it first runs, and
// the connect's sync wakeup brings the listener into the client's LLC
// (wake_affine_idle: WF_SYNC and the waker alone on this_cpu choose
// this_cpu, and select_idle_sibling stays in its LLC), where it forks that
// client's server. So every server whose connect woke the listener is
// forked from a CPU sharing the connecting client's LLC; and the parent
// releases the clients at a poll of its barrier, 100 ms apart, printing
// each poll's count. Off, the listener forks the servers without waiting
// for connections.
func TestConnectOrder(t *testing.T) {
	for _, machine := range []string{"zen3-2s-nps1", "kunpeng920-128", "hikey"} {
		b := setupKernel(t, machine, 16, true)
		woke := 0
		for i, c := range b.conns {
			if c.forkCPU == cpumask.None || c.connectCPU == cpumask.None {
				continue
			}
			if c.wokeListener {
				woke++
				if !b.k.Topo.CPUsShareCache(c.connectCPU, c.forkCPU) {
					t.Errorf("%s: client %d connected on CPU %d and woke the listener, which forked its server on CPU %d, another LLC", machine, i, c.connectCPU, c.forkCPU)
				}
			}
		}
		if woke == 0 {
			t.Errorf("%s: no connect woke the listener", machine)
		}
		// One line per poll, the last finding all 16 waiting.
		lines := regexp.MustCompile(`(\d+) of 16 processes prepared for launch +(\d+) sec`).FindAllStringSubmatch(string(b.out), -1)
		if len(lines) == 0 || lines[len(lines)-1][1] != "16" {
			t.Fatalf("%s: poll lines %v\n%s", machine, lines, b.out)
		}
		prev := -1
		for _, l := range lines[:len(lines)-1] {
			n, _ := strconv.Atoi(l[1])
			if n < prev || n >= 16 {
				t.Errorf("%s: poll counts %v", machine, lines)
			}
			prev = n
		}
		polls := len(lines) - 1
		if got := b.t0 - b.parent.pollFrom; got != engine.Time(polls)*pollInterval {
			t.Errorf("%s: released %v after the first poll with %d polls before, want %v", machine, got, polls, engine.Time(polls)*pollInterval)
		}

		for i, c := range b.conns {
			if c.forkedAt <= b.clients[i].opStart {
				t.Errorf("%s: server %d forked at %v, before or as its client (%v)", machine, i, c.forkedAt, b.clients[i].opStart)
			}
		}

		// Off: the listener forks the servers one after another from
		// the start, without waiting for a connection, beside the
		// parent forking the clients.
		off := setupKernel(t, machine, 16, false)
		early := 0
		for i, c := range off.conns {
			if c.forkCPU != cpumask.None || c.connectCPU != cpumask.None {
				t.Errorf("%s, off: connection %d has a connect or accept", machine, i)
			}
			if c.forkedAt <= off.clients[i].opStart {
				early++
			}
		}
		if early == 0 {
			t.Errorf("%s, off: every server forked after its client", machine)
		}
		if strings.Count(string(off.out), "prepared for launch") != 2 {
			t.Errorf("%s, off:\n%s", machine, off.out)
		}
	}
}
