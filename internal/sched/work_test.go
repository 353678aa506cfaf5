package sched

import (
	"math/rand/v2"

	"github.com/schedlab/schedlab/internal/kernels"
	"testing"

	"github.com/schedlab/schedlab/internal/costmodel"
	"github.com/schedlab/schedlab/internal/cpumask"
	"github.com/schedlab/schedlab/internal/engine"
	"github.com/schedlab/schedlab/internal/topology"
)

// runOnce forks a task pinned to cpu that runs op once and exits, and
// returns it; its Exited time tells how long the work took.
func runOnce(t *testing.T, k *Kernel, name string, cpu cpumask.CPU, op Op, footprint int64) *Task {
	t.Helper()
	n := 0
	p, err := k.Fork(TaskSpec{Comm: name, CPU: cpu, Allowed: cpumask.Of(k.NrCPUs(), cpu), Footprint: footprint,
		Prog: ProgramFunc(func(k *Kernel, t *Task) Op {
			n++
			if n == 1 {
				return op
			}
			return Exit()
		})})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestSMTSiblingsShareThroughput: the same two 10 ms tasks finish later as
// SMT siblings (CPUs 0 and 128 of zen3-2s-nps1) than on separate cores, by
// the configured per-thread share: 10 ms × 1024/640 = 16 ms.
func TestSMTSiblingsShareThroughput(t *testing.T) {
	for _, tc := range []struct {
		name   string
		cpus   [2]cpumask.CPU
		wantNs engine.Time
	}{
		{"separate cores", [2]cpumask.CPU{0, 1}, 10 * engine.Millisecond},
		{"SMT siblings", [2]cpumask.CPU{0, 128}, 16 * engine.Millisecond},
	} {
		k := newTestKernel(t, "zen3-2s-nps1", kernels.V619)
		k.Costs.SMTShare = 640
		a := runOnce(t, k, "a", tc.cpus[0], Run(10*engine.Millisecond), 0)
		b := runOnce(t, k, "b", tc.cpus[1], Run(10*engine.Millisecond), 0)
		k.Eng.RunUntil(100 * engine.Millisecond)
		for _, p := range []*Task{a, b} {
			if p.State != TaskDead || p.Exited != tc.wantNs {
				t.Errorf("%s: %s exited at %v (state %v), want %v", tc.name, p.Comm, p.Exited, p.State, tc.wantNs)
			}
		}
	}
}

// TestSMTSpeedRecoversWhenSiblingIdles: a 10 ms task whose sibling runs for
// the first 4 ms of wall time does 4×640/1024 = 2.5 ms of work meanwhile,
// then the remaining 7.5 ms at full speed: it ends at 11.5 ms.
func TestSMTSpeedRecoversWhenSiblingIdles(t *testing.T) {
	k := newTestKernel(t, "zen3-2s-nps1", kernels.V619)
	k.Costs.SMTShare = 640
	a := runOnce(t, k, "a", 0, Run(10*engine.Millisecond), 0)
	// b's 2.5 ms of work at 640/1024 take exactly 4 ms.
	b := runOnce(t, k, "b", 128, Run(2500*engine.Microsecond), 0)
	k.Eng.RunUntil(100 * engine.Millisecond)
	if b.Exited != 4*engine.Millisecond || a.Exited != 11500*engine.Microsecond {
		t.Fatalf("b exited at %v (want 4ms), a at %v (want 11.5ms)", b.Exited, a.Exited)
	}
}

// TestMigrationRefillByDistance: a task with a 16 MiB footprint, away for
// 4 ms with no other work evicting it (fill rate 0: everything it had
// cached is still warm), then woken on another CPU. The refill model
// (costmodel.Table.CacheRefill): on a CPU sharing the LLC it only refills
// its private cache, min(16 MiB, 512 KiB) from the LLC at 5000 fs/B; on
// another LLC its whole warm set, 16 MiB, comes from the old LLC at
// 50000 fs/B. So the next 1 ms of work ends 2.6 µs late after a same-LLC
// move and 839 µs late after a cross-LLC move.
func TestMigrationRefillByDistance(t *testing.T) {
	const fp = 16 << 20
	measure := func(dst cpumask.CPU) engine.Time {
		k := newTestKernel(t, "zen3-2s-nps1", kernels.V619)
		k.Costs.PrivateBytes = 512 << 10
		k.Costs.LLCBytes = 32 << 20
		k.Costs.RefillLLCFs = 5000
		k.Costs.RefillMemFs = 100000
		k.Costs.RefillFarFs = [][]int64{{50000, 80000}, {80000, 50000}}
		var start, end engine.Time
		n := 0
		p, _ := k.Fork(TaskSpec{Comm: "m", CPU: 0, Allowed: cpumask.Of(256, 0, 1, 8), Footprint: fp,
			Prog: ProgramFunc(func(k *Kernel, t *Task) Op {
				n++
				switch n {
				case 1:
					return Run(engine.Millisecond)
				case 2:
					return Block()
				case 3:
					return Run(engine.Millisecond)
				default:
					end = k.Now()
					return Exit()
				}
			})})
		k.Eng.RunUntil(5 * engine.Millisecond)
		if err := k.MigrateTask(p, dst); err != nil {
			t.Fatal(err)
		}
		k.SetThisCPU(dst)
		start = k.Now() // woken from dst itself: no IPI; refill, then the work
		k.WakeUp(p, 0)
		k.Eng.RunUntil(100 * engine.Millisecond)
		return end - start
	}
	sameLLC := measure(1)  // CPU 1 shares CCX 0 with CPU 0
	crossLLC := measure(8) // CPU 8 is in CCX 1
	wantSame := engine.Millisecond + engine.Time(int64(512<<10)*5000/1000000)
	wantCross := engine.Millisecond + engine.Time(int64(fp)*50000/1000000)
	if sameLLC != wantSame || crossLLC != wantCross {
		t.Fatalf("1 ms of work after a same-LLC move took %v (want %v), after a cross-LLC move %v (want %v)", sameLLC, wantSame, crossLLC, wantCross)
	}
}

// TestCacheDecayIsPELTs: the cost model's cache decay (costmodel.Decay32)
// keeps its own copy of the y^n = 0.5^(n/32) series so that it does not
// depend on the kernel model; it must be PELT's decay_load exactly.
// Reference: pelt.c:decay_load, sched-pelt.h:runnable_avg_yN_inv (v6.19).
func TestCacheDecayIsPELTs(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for i := range 20000 {
		v := r.Uint64N(1 << 50)
		n := uint64(i % (LoadAvgPeriod * 66))
		if got, want := costmodel.Decay32(v, n), decayLoad(v, n); got != want {
			t.Fatalf("Decay32(%d, %d) = %d, decay_load gives %d", v, n, got, want)
		}
	}
}

// TestBandwidthSharedOnLLC: four STREAM-like tasks on one CCX each ask
// for 30 GB/s (30000 B/µs) of a 40 GB/s LLC: together 120, so each gets a
// third of its demand and 10 ms of work take 30 ms. One task alone is not
// limited.
func TestBandwidthSharedOnLLC(t *testing.T) {
	for _, tc := range []struct {
		n    int
		node int64 // node bandwidth, B/µs (0: unlimited)
		want engine.Time
	}{
		{1, 0, 10 * engine.Millisecond},
		{4, 0, 30 * engine.Millisecond},
		// The node's 60 GB/s also falls short of the 120 asked, but the
		// LLC's 40 is the tightest limit: the shares do not compound.
		{4, 60000, 30 * engine.Millisecond},
		// A node limit tighter than the LLC's decides: 24/120 = 1/5.
		{4, 24000, 50 * engine.Millisecond},
	} {
		k := newTestKernel(t, "zen3-2s-nps1", kernels.V619)
		k.Costs.LLCBandwidth = 40000
		k.Costs.NodeBandwidth = tc.node
		var ps []*Task
		for i := 0; i < tc.n; i++ {
			ps = append(ps, runOnce(t, k, "stream", cpumask.CPU(i), RunBW(10*engine.Millisecond, 30000), 0))
		}
		k.Eng.RunUntil(time100ms)
		for _, p := range ps {
			// Speeds are kept to 2^-20 of full speed: a third is
			// truncated, which costs a few ns over 30 ms.
			if d := p.Exited - tc.want; d < 0 || d > engine.Microsecond {
				t.Errorf("%d tasks: %s/%d exited at %v, want %v", tc.n, p.Comm, p.PID, p.Exited, tc.want)
			}
		}
	}
}

const time100ms = 100 * engine.Millisecond

// TestBandwidthLeftByFullLLCGoesToOthers: four tasks on CCX 0 ask 120
// GB/s of its 40 and get a third each (30 ms for 10 ms of work); a fifth
// on CCX 1 asks 30 of the node's 60, of which CCX 0 can take only 40: it
// gets the remaining 20, two thirds of its demand, and finishes at 15 ms
// (held to the node's 60/150 of its demand, as the limits used to be
// applied, it took 25 ms). Reference: costmodel.MemSharer (docs/costs.md,
// "Memory bandwidth").
func TestBandwidthLeftByFullLLCGoesToOthers(t *testing.T) {
	k := newTestKernel(t, "zen3-2s-nps1", kernels.V619)
	k.Costs.LLCBandwidth = 40000
	k.Costs.NodeBandwidth = 60000
	var ccx0 []*Task
	for i := range 4 {
		ccx0 = append(ccx0, runOnce(t, k, "stream", cpumask.CPU(i), RunBW(10*engine.Millisecond, 30000), 0))
	}
	other := runOnce(t, k, "other", 8, RunBW(10*engine.Millisecond, 30000), 0)
	k.Eng.RunUntil(time100ms)
	for _, p := range ccx0 {
		if d := p.Exited - 30*engine.Millisecond; d < 0 || d > engine.Microsecond {
			t.Errorf("%s/%d on CCX 0 exited at %v, want 30ms", p.Comm, p.PID, p.Exited)
		}
	}
	if d := other.Exited - 15*engine.Millisecond; d < 0 || d > engine.Microsecond {
		t.Errorf("the task on CCX 1 exited at %v, want 15ms", other.Exited)
	}
}

// TestChargeDelaysNextOperation: kernel time charged by a program (a
// syscall) is spent before its operation takes effect.
func TestChargeDelaysNextOperation(t *testing.T) {
	k := newTestKernel(t, "hikey", kernels.V619)
	n := 0
	p, _ := k.Fork(TaskSpec{Comm: "c", Allowed: cpumask.Of(8, 0), Prog: ProgramFunc(func(k *Kernel, t *Task) Op {
		n++
		if n == 1 {
			k.Charge(CostSyscall, 3*engine.Microsecond)
			return Sleep(engine.Millisecond)
		}
		return Exit()
	})})
	k.Eng.RunUntil(10 * engine.Millisecond)
	// 3 µs of syscall, then 1 ms asleep.
	if p.Exited != engine.Millisecond+3*engine.Microsecond {
		t.Fatalf("exited at %v", p.Exited)
	}
	if p.SE.SumExecRuntime != 3000 {
		t.Fatalf("sum_exec_runtime %d, want the 3 µs charged", p.SE.SumExecRuntime)
	}
}

// TestChargeJoinsNextRun: kernel time charged by a program, then a run that
// draws no bandwidth, is one segment: the program is asked again when both
// are done, one event sooner than as two segments, and the charge still
// counts as overhead; before a run that draws bandwidth it stays a segment
// of its own.
func TestChargeJoinsNextRun(t *testing.T) {
	run := func(next Op) (at engine.Time, events uint64, overhead uint64) {
		k := newTestKernel(t, "hikey", kernels.V619)
		n := 0
		var asked engine.Time
		k.Fork(TaskSpec{Comm: "c", Allowed: cpumask.Of(8, 0), Prog: ProgramFunc(func(k *Kernel, t *Task) Op {
			n++
			switch n {
			case 1:
				k.Charge(CostSyscall, 3*engine.Microsecond)
				return next
			case 2:
				asked = k.Now()
			}
			return Exit()
		})})
		k.Eng.RunUntil(10 * engine.Millisecond)
		var ov uint64
		for _, rq := range k.Rqs {
			ov += rq.OverheadNs
		}
		return asked, k.Eng.Events(), ov
	}
	plainAt, plainEv, plainOv := run(Run(5 * engine.Microsecond))
	bwAt, bwEv, bwOv := run(RunBW(5*engine.Microsecond, 1000))
	if plainAt != bwAt || plainAt == 0 {
		t.Errorf("asked again at %v after a plain run, %v after a bandwidth run: want the same instant", plainAt, bwAt)
	}
	if plainEv+1 != bwEv {
		t.Errorf("%d events with a plain run, %d with a bandwidth run: want one fewer for the plain run", plainEv, bwEv)
	}
	if plainOv != 3000 || bwOv != 3000 {
		t.Errorf("overhead %d and %d ns, want the 3 µs charged in both", plainOv, bwOv)
	}
}

// TestClusterIdleStateNeedsIdleCluster: on a HiKey the governor puts a CPU
// idle for long in cluster-sleep (exit 700 µs), but the cluster only goes
// down when all four of its CPUs are idle; while a sibling CPU of the
// cluster runs, a woken CPU leaves cpu-sleep (250 µs).
// Reference: the PSCI cluster (domain) idle states of the HiKey device
// tree; cpuidle's coupled/OSI cluster states.
func TestClusterIdleStateNeedsIdleCluster(t *testing.T) {
	for _, tc := range []struct {
		name    string
		busyCPU cpumask.CPU // -1: none
		want    engine.Time
	}{
		{"cluster idle", cpumask.None, 700 * engine.Microsecond},
		{"sibling busy", 2, 250 * engine.Microsecond},
		{"other cluster busy", 5, 700 * engine.Microsecond},
	} {
		k := newTestKernel(t, "hikey", kernels.V619)
		k.costsOn, k.S.CostJitterPct = true, 0
		if tc.busyCPU != cpumask.None {
			runOnce(t, k, "busy", tc.busyCPU, Run(engine.Second), 0)
			k.Eng.RunUntil(engine.Millisecond)
		}
		rq := k.Rqs[0]
		if got := k.idleExitLatency(rq); got != tc.want {
			t.Errorf("%s: cpu0 leaves idle in %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestKunpengWFIWake: a Kunpeng 920 CPU in WFI wakes in the state's
// WakeNs (100 ns: WFI only gates the clock), not in the 1 us exit latency
// cpuidle advertises for every WFI; without WakeNs (a machine file with no
// wake_ns, the switch) it pays the advertised 1 us.
// Reference: topology.kunpengWFI; ARM_CPUIDLE_WFI_STATE's exit_latency = 1.
func TestKunpengWFIWake(t *testing.T) {
	for _, tc := range []struct {
		name   string
		noWake bool // drop the preset's WakeNs
		want   engine.Time
	}{
		{"the preset", false, 100},
		{"no wake time: the advertised exit latency", true, engine.Microsecond},
	} {
		spec, err := topology.Load("kunpeng920-128")
		if err != nil {
			t.Fatal(err)
		}
		if st := spec.IdleStatesOf(0); len(st) != 1 || st[0].Name != "WFI" || st[0].ExitLatencyNs != 1000 {
			t.Fatalf("kunpeng920-128's idle states %+v: want WFI alone, advertised at 1 us", st)
		}
		if tc.noWake {
			spec.IdleStates[0].WakeNs = 0
		}
		k := newTestKernelSpec(t, spec, kernels.V619)
		k.costsOn, k.S.CostJitterPct = true, 0
		k.Eng.RunUntil(engine.Millisecond)
		if got := k.idleExitLatency(k.Rqs[0]); got != tc.want {
			t.Errorf("%s: cpu0 leaves WFI in %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestClusterStateGateDelay: a cluster state with a gate delay (a machine
// file's `cluster: true, gate_delay_us`; the kunpeng presets had one,
// WFI-cluster-gated, until 2026-12-07) holds only once every CPU of the
// cluster has been idle for the state's GateDelayNs, counted from the last
// of them to go idle; a CPU woken sooner leaves the per-CPU state below
// it. Idle for exactly the delay is gated. A busy CPU of another cluster
// does not keep the cluster out of it, and a busy CPU of the cluster does.
// Reference: topology.IdleState.GateDelayNs; docs/costs.md, "Kunpeng 920
// across a cluster".
func TestClusterStateGateDelay(t *testing.T) {
	spec, err := topology.Load("kunpeng920-128")
	if err != nil {
		t.Fatal(err)
	}
	spec.IdleStates = append(spec.IdleStates, topology.IdleState{Name: "WFI-cluster-gated", ExitLatencyNs: 1000,
		TargetResidencyNs: 1000, WakeNs: 2000, GateDelayNs: 2000, Cluster: true})
	states := spec.IdleStatesOf(0)
	if len(states) != 2 || !states[1].Cluster || states[1].GateDelayNs == 0 {
		t.Fatalf("idle states %+v: want WFI and a gated cluster state", states)
	}
	delay := engine.Time(states[1].GateDelayNs)
	perCPU, gated := engine.Time(states[0].Wake()), engine.Time(states[1].Wake())
	if perCPU == gated {
		t.Fatalf("both states wake in %v: the test cannot tell them apart", gated)
	}
	for _, tc := range []struct {
		name  string
		quiet engine.Time // time since the cluster's last CPU went idle
		other cpumask.CPU // a CPU left busy (cpumask.None: none)
		want  engine.Time
	}{
		{"quiet for a nanosecond less than the delay", delay - 1, cpumask.None, perCPU},
		{"quiet for exactly the delay", delay, cpumask.None, gated},
		{"quiet for long", 100 * delay, cpumask.None, gated},
		{"quiet for long, another cluster busy", 100 * delay, 4, gated},
		{"a CPU of the cluster busy", 100 * delay, 2, perCPU},
	} {
		k := newTestKernelSpec(t, spec, kernels.V619)
		k.costsOn, k.S.CostJitterPct = true, 0
		runOnce(t, k, "last", 1, Run(100*engine.Microsecond), 0)
		if tc.other != cpumask.None {
			runOnce(t, k, "busy", tc.other, Run(engine.Second), 0)
		}
		// Step until cpu1 has gone idle, well within the delay.
		last := k.Rqs[1]
		for step := engine.Time(100); !last.currIsIdle() || k.Now() < 50*engine.Microsecond; {
			if k.Now() > engine.Millisecond {
				t.Fatalf("%s: cpu1 still busy at 1 ms", tc.name)
			}
			k.Eng.RunUntil(k.Now() + step)
		}
		k.Eng.RunUntil(last.idleSince + tc.quiet)
		if k.Now() != last.idleSince+tc.quiet {
			t.Fatalf("%s: at %v, want cpu1's idle entry %v + %v", tc.name, k.Now(), last.idleSince, tc.quiet)
		}
		if got := k.idleExitLatency(k.Rqs[0]); got != tc.want {
			t.Errorf("%s: cpu0 leaves idle in %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestWakeupDuringChargedWorkNotLost: a program that charges kernel work
// and then blocks is marked sleeping before that work runs, as a task sets
// its state before checking its wait condition; a wakeup arriving while
// the work runs makes it runnable, and the block does not happen (without
// this the wakeup was lost and the task slept forever).
// Reference: core.c:try_to_wake_up on a task still on its CPU
// (ttwu_runnable), set_current_state/schedule.
func TestWakeupDuringChargedWorkNotLost(t *testing.T) {
	k := newTestKernel(t, "hikey", kernels.V619)
	var a *Task
	stepA := 0
	a, _ = k.Fork(TaskSpec{Comm: "a", CPU: 0, Allowed: cpumask.Of(8, 0), Prog: ProgramFunc(func(k *Kernel, p *Task) Op {
		stepA++
		if stepA == 1 {
			k.Charge(CostSyscall, 100*engine.Microsecond) // e.g. a long syscall before waiting
			return Block()
		}
		return Exit()
	})})
	stepB := 0
	k.Fork(TaskSpec{Comm: "b", CPU: 1, Allowed: cpumask.Of(8, 1), Prog: ProgramFunc(func(k *Kernel, p *Task) Op {
		stepB++
		switch stepB {
		case 1:
			return Sleep(50 * engine.Microsecond) // a is still in its charged work then
		case 2:
			if !k.WakeUp(a, 0) {
				t.Error("the wakeup found a not sleeping")
			}
		}
		return Exit()
	})})
	k.Eng.RunUntil(10 * engine.Millisecond)
	if a.State != TaskDead {
		t.Fatalf("a is %v after being woken during its charged work", a.State)
	}
}
