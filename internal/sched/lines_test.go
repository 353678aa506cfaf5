package sched

import (
	"testing"

	"github.com/schedlab/schedlab/internal/cpumask"
	"github.com/schedlab/schedlab/internal/engine"
	"github.com/schedlab/schedlab/internal/kernels"
)

// linesRig is a zen3-2s-nps1 kernel with the cost model (no jitter), the
// balancer's lines (Settings.NohzRdLines, off by default) and
// one task running on CPU 1, forked there and pinned to it, whose kernel
// time (Charge) the tests read. CPUs 0-7 share an LLC; 8 and 9 are in
// the next one. Every balancer line is then reset as if nobody had
// stored to it since boot, and CPU 1's periodic balance is put off, so
// that what a step pays comes from the lines alone.
func linesRig(t *testing.T, kernel string) (*Kernel, *Task) {
	t.Helper()
	k := newTestKernel(t, "zen3-2s-nps1", kernel)
	withCosts(t, k)
	k.S.NohzRdLines = true
	p, err := k.Fork(TaskSpec{Comm: "busy", CPU: 1, Allowed: cpumask.Of(k.NrCPUs(), 1), Prog: loop(engine.Second, 0)})
	if err != nil {
		t.Fatal(err)
	}
	k.Eng.RunUntil(200 * engine.Microsecond)
	if k.Rqs[1].Curr != p {
		t.Fatalf("cpu1 runs %v, want the busy task", k.Rqs[1].Curr)
	}
	n := k.NrCPUs()
	k.bal.nohz.line, k.bal.nohz.maskLine, k.bal.rdLine = newSharedLine(n), newSharedLine(n), newSharedLine(n)
	k.Rqs[1].NextBalance = k.Jiffies() + 1000
	return k, p
}

// lineCosts are the two distances the tests need, checked to differ.
func lineCosts(t *testing.T, k *Kernel) (sameLLC, otherLLC engine.Time) {
	t.Helper()
	sameLLC, otherLLC = k.Costs.LineTransfer(2, 1), k.Costs.LineTransfer(8, 1)
	if sameLLC <= 0 || otherLLC <= sameLLC || k.Costs.LineTransfer(9, 2) != otherLLC {
		t.Fatalf("line transfers: same LLC %v, other LLC %v; the steps need 0 < same < other", sameLLC, otherLLC)
	}
	return sameLLC, otherLLC
}

// TestNohzLine: the busy tick's loads of the nohz structure's line
// (Settings.NohzRdLines) pay the line's transfer from the CPU that stored
// to it last, once per store; nohz_balance_exit_idle's stores to the mask's
// line and the nohz line pay their transfers too; all of it is charged to
// the task the tick interrupted, and nothing with the setting off.
//
// Reference: fair.c:nohz_balancer_kick, nohz_balance_enter_idle and
// nohz_balance_exit_idle (v6.19): enter_idle stores has_blocked every
// time (and nr_cpus, needs_update and the mask bit when the CPU was not
// registered); exit_idle clears the mask bit and decrements nr_cpus;
// nohz_balancer_kick reads nr_cpus, has_blocked, next_blocked,
// next_balance and needs_update.
func TestNohzLine(t *testing.T) {
	k, p := linesRig(t, kernels.V619)
	sameLLC, otherLLC := lineCosts(t, k)
	nohz := &k.bal.nohz
	// No kick: blocked-load updates and balancing are not due.
	nohz.nextBalance, nohz.nextBlocked, nohz.needsUpdate = k.Jiffies()+1000, k.Jiffies()+1000, false
	rq1 := k.Rqs[1]
	if rq1.NohzIdle {
		k.schedTick(rq1) // CPU 1 leaves the NOHZ set it booted in
	}
	rq1.Costs = CostCounters{}
	enter := func(cpu cpumask.CPU, register bool) {
		rq := k.Rqs[cpu]
		if register && rq.NohzIdle {
			// Out of the set, as after a busy tick.
			k.thisCPU = cpu
			k.nohzBalanceExitIdle(rq)
		}
		k.thisCPU = cpu
		k.nohzBalanceEnterIdle(rq)
		nohz.needsUpdate = false
	}
	tick := func() engine.Time {
		before, charged := rq1.Costs.LineNs, p.overhead
		k.schedTick(rq1)
		if d := p.overhead - charged; d != engine.Time(rq1.Costs.LineNs-before) {
			t.Errorf("the task was charged %v, the lines cost %v", d, rq1.Costs.LineNs-before)
		}
		return engine.Time(rq1.Costs.LineNs - before)
	}
	steps := []struct {
		what string
		do   func()
		want engine.Time
	}{
		{"tick, CPU 1 stored last (leaving the NOHZ set)", nil, 0},
		{"tick after CPU 8 (another LLC) entered NOHZ again", func() { enter(8, false) }, otherLLC},
		{"second tick", nil, 0},
		{"tick after CPU 2 (this LLC) entered NOHZ again", func() { enter(2, false) }, sameLLC},
		// CPU 1 registers (as if its tick had stopped while idle), then
		// CPU 9 does: CPU 1's next busy tick leaves the set, storing to
		// both lines that CPU 9 wrote last.
		{"tick leaving NOHZ after CPU 9 registered", func() {
			enter(1, true)
			enter(9, true)
		}, 2 * otherLLC},
		{"tick after that", nil, 0},
		{"setting off: tick after CPU 8 entered NOHZ", func() {
			k.S.NohzRdLines = false
			enter(8, false)
		}, 0},
	}
	for _, s := range steps {
		if s.do != nil {
			s.do()
		}
		if got := tick(); got != s.want {
			t.Errorf("%s: %v, want %v", s.what, got, s.want)
		}
	}
	for _, cpu := range []int{2, 8, 9} {
		if c := k.Rqs[cpu].Costs; c.LineTransfers != 0 {
			t.Errorf("cpu%d paid %d transfers entering NOHZ idle, want none", cpu, c.LineTransfers)
		}
	}
}

// TestRdFlagsLine: the root domain's line (Settings.NohzRdLines), read by
// set_rd_overloaded and by the newly idle gate. add_nr_running's
// set_rd_overloaded is charged to the task running on the enqueueing CPU;
// the gate's load to the newly idle pass (balance time, which the pass's
// CPU spends at its capacity and frequency). A root-level
// update_sd_lb_stats that finds the flag unchanged stores nothing in
// v6.19, so the next gate is free; v6.0 stores regardless
// (Settings.RdFlagsV60), and every wakeup's enqueue loads the line for
// rd->overutilized.
//
// Reference: sched.h:add_nr_running and set_rd_overloaded, fair.c:
// sched_balance_newidle and update_sd_lb_stats (v6.19); fair.c:
// update_sd_lb_stats, newidle_balance and update_overutilized_status,
// sched.h:add_nr_running (v6.0, which also reads before it stores).
func TestRdFlagsLine(t *testing.T) {
	for _, kern := range []string{kernels.V619, kernels.V60} {
		t.Run(kern, func(t *testing.T) {
			k, p := linesRig(t, kern)
			sameLLC, otherLLC := lineCosts(t, k)
			v60 := kern == kernels.V60
			if k.S.RdFlagsV60 != v60 {
				t.Fatalf("RdFlagsV60 %v on %s", k.S.RdFlagsV60, kern)
			}
			rq1, rq2 := k.Rqs[1], k.Rqs[2]
			// CPU 2 is idle and expects to stay idle too briefly for a
			// newly idle balance (or for nohz_newidle_balance): the gate
			// is the whole pass.
			rq2.AvgIdle = 0
			k.dom.SD[2][0].MaxNewidleLbCost = uint64(engine.Millisecond)
			gate := func() engine.Time {
				before := rq2.Costs.LineNs
				total := k.BalanceStats.NewidleBalance.Total
				k.thisCPU = 2
				k.schedBalanceNewidle(rq2)
				d := engine.Time(rq2.Costs.LineNs - before)
				if spent := k.BalanceStats.NewidleBalance.Total - total; spent != lbWorkTime(rq2, d) {
					t.Errorf("newidle pass took %v, its line transfers %v", spent, d)
				}
				return d
			}
			rootLbStats := func(cpu cpumask.CPU) {
				sd := k.dom.SD[cpu][len(k.dom.SD[cpu])-1]
				env := &lbEnv{sd: sd, dstCPU: cpu, dstRq: k.Rqs[cpu], idle: CPUIdle, cpus: sd.T.Span.Clone()}
				var sds sdLbStats
				initSdLbStats(&sds)
				k.thisCPU = cpu
				mark := k.lbBegin(cpu)
				k.updateSdLbStats(env, &sds)
				k.lbEnd(mark)
			}
			k.bal.rdOverloaded = true
			// A root-level balance on CPU 8 (idle, in another LLC) clears
			// the flag, as set_rd_overloaded does: it stores a change.
			k.thisCPU = 8
			k.setRdOverloaded(false)
			if k.Rqs[8].Costs.LineTransfers != 0 {
				t.Errorf("cpu8 is idle: it paid %d transfers", k.Rqs[8].Costs.LineTransfers)
			}

			// A second task forked on CPU 1: add_nr_running goes 1 -> 2
			// and sets the flag, loading the line from CPU 8 first.
			charged := p.overhead
			k.thisCPU = 1
			if _, err := k.Fork(TaskSpec{Comm: "second", CPU: 1, Allowed: cpumask.Of(k.NrCPUs(), 1), Prog: loop(engine.Second, 0)}); err != nil {
				t.Fatal(err)
			}
			if got := engine.Time(rq1.Costs.LineNs); got != otherLLC || p.overhead-charged != otherLLC || !k.bal.rdOverloaded {
				t.Errorf("enqueue on cpu1: lines %v, task charged %v, overloaded %v; want %v, %v, true",
					got, p.overhead-charged, k.bal.rdOverloaded, otherLLC, otherLLC)
			}
			if got := gate(); got != sameLLC {
				t.Errorf("newidle gate after cpu1's store: %v, want %v", got, sameLLC)
			}
			if got := gate(); got != 0 {
				t.Errorf("second newidle gate: %v, want 0", got)
			}
			// CPU 9's root-level pass finds CPU 1 overloaded still.
			rootLbStats(9)
			if !k.bal.rdOverloaded {
				t.Fatal("root-level pass cleared the flag with two tasks on cpu1")
			}
			want := engine.Time(0)
			if v60 {
				want = otherLLC
			}
			if got := gate(); got != want {
				t.Errorf("newidle gate after cpu9's root-level pass: %v, want %v", got, want)
			}
			// A wakeup's enqueue on CPU 1 after CPU 9's pass.
			rootLbStats(9)
			before := rq1.Costs.LineNs
			k.thisCPU = 1
			k.updateOverutilizedStatus(rq1)
			if got := engine.Time(rq1.Costs.LineNs - before); got != want {
				t.Errorf("update_overutilized_status on cpu1: %v, want %v", got, want)
			}

			k.S.NohzRdLines = false
			k.thisCPU = 8
			k.setRdOverloaded(false)
			if got := gate(); got != 0 {
				t.Errorf("setting off: newidle gate after cpu8's store: %v, want 0", got)
			}
		})
	}
}
