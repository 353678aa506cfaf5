package sched

import (
	"github.com/schedlab/schedlab/internal/kernels"
	"testing"

	"github.com/schedlab/schedlab/internal/cpumask"
	"github.com/schedlab/schedlab/internal/engine"
	"github.com/schedlab/schedlab/internal/topology"
)

// forkSixteen boots k, forks a parent on CPU 0 and lets it fork 16
// CPU-bound threads in a row (one event, so no child has run yet when the
// next is placed). It returns the children's CPUs in fork order.
func forkSixteen(t *testing.T, k *Kernel) []int {
	t.Helper()
	var kids []int // where each child was placed, read right after its fork
	parent, err := k.Fork(TaskSpec{Comm: "parent", CPU: 0, Prog: ProgramFunc(func(k *Kernel, p *Task) Op {
		if len(kids) > 0 {
			return Block()
		}
		for i := 0; i < 16; i++ {
			c, err := k.Fork(TaskSpec{Comm: "thread", CPU: p.CPU(), Prog: loop(engine.Second, 0)})
			if err != nil {
				t.Fatal(err)
			}
			kids = append(kids, int(c.CPU()))
		}
		return Block()
	})})
	if err != nil {
		t.Fatal(err)
	}
	if parent.CPU() != 0 {
		t.Fatalf("parent forked onto cpu%d, want 0", parent.CPU())
	}
	k.Eng.RunUntil(engine.Microsecond)
	if len(kids) != 16 {
		t.Fatalf("%d children", len(kids))
	}
	return kids
}

// TestForkSixteenThreads places 16 threads forked in a row by one parent on
// an idle zen3-2s-nps1 built with the kernel's default RECLAIM_DISTANCE (30)
// instead of the node_reclaim_distance of 32 x86 sets on AMD Zen (the
// preset's, see TestForkSixteenThreadsZen).
//
// Reference: fair.c:select_task_rq_fair, sched_balance_find_dst_cpu,
// sched_balance_find_dst_group, update_sg_wakeup_stats, update_pick_idlest,
// sched_balance_find_dst_group_cpu, v6.19 (the same in the v6.0 tip).
//
// The machine: LLC k of socket 0 is CPUs 8k..8k+7 and their SMT siblings
// +128 (LLC0 = 0-7,128-135); socket 0 is LLC0-LLC7. The node distance is
// 32 > RECLAIM_DISTANCE (30), so the NUMA domain lacks SD_BALANCE_FORK: for
// a fork from CPU 0, the walk of select_task_rq_fair keeps the highest
// contiguous domain with the flag, PKG (socket 0), and the slow path starts
// there. Everything stays on socket 0.
//
// Every idle CPU has been idle since boot (t = 0 here): all sit in the
// same idle state (the deepest, C2, as the governor's average idle period
// starts at 1 s) and have idle_stamp 0, so find_dst_group_cpu's ties keep
// the first idle CPU of the group, in CPU order. A child is enqueued
// at once (nr_running 1), so the CPU it went to is busy for the next fork
// even before it runs. A new child's util_avg is half its CPU's spare
// capacity, 512, so every LLC holding n children has group_util 512 n.
//
// The parent itself: all groups equal at every level, the local group wins
// ties (local.idle_cpus >= idlest.idle_cpus) -> CPU 0.
//
// Children 1-7 (PKG level, groups LLC0..LLC7, local LLC0):
//   - LLC0 has the parent: 15 idle CPUs; an LLC without a child has 16.
//     update_pick_idlest takes the first non-local group with the most
//     idle CPUs (then the lowest group_util): child 1 sees LLC1..LLC7 all
//     at 16 -> LLC1; child 2 sees LLC1 at 15 -> LLC2; ... child 7 -> LLC7.
//   - local has_spare with 15 < 16 idle -> go to the idlest group;
//     find_dst_group_cpu -> its first idle CPU, 8k.
//   - new_cpu 8k != 0: continue at the highest domain of 8k below PKG with
//     SD_BALANCE_FORK, MC: its cores all idle, the local core {8k,8k+128}
//     ties -> stay; SMT {8k},{8k+128} ties -> stay. Child k -> CPU 8k.
//
// Child 8: every LLC has 15 idle CPUs. The idlest non-local one is LLC1
// (ties on idle CPUs and on util, 512, keep the first); local 15 >= 15 ->
// stay (NULL). MC of CPU 0: local core {0,128} has 1 idle CPU, core
// {1,129} has 2 -> go; its first idle CPU 1; SMT of 1 ties -> CPU 1.
// Children 9-15: LLC0 has 14 idle CPUs, LLC1-7 15 each -> LLC1 first (ties
// keep the first), then LLC2 ... LLC7 as each fills. In LLC k the first
// idle CPU is 8k+1 (8k is busy); at MC of 8k+1 the local core {8k+1,..}
// has 2 idle CPUs, no core has more -> stay. Child 8+k -> CPU 8k+1.
// Child 16: all LLCs at 14 idle -> LLC1 is the idlest, local 14 >= 14 ->
// stay; MC of 0: cores {0,128} and {1,129} have 1 idle CPU, {2,130} has 2
// -> CPU 2.
//
// So: LLC1..LLC7 get two threads each, LLC0 gets two plus the parent.
func TestForkSixteenThreads(t *testing.T) {
	want := []int{8, 16, 24, 32, 40, 48, 56, 1, 9, 17, 25, 33, 41, 49, 57, 2}
	for _, kern := range kernels.Names() {
		t.Run(kern, func(t *testing.T) {
			spec, err := topology.Load("zen3-2s-nps1")
			if err != nil {
				t.Fatal(err)
			}
			spec = spec.Clone()
			spec.ReclaimDistance = 0 // RECLAIM_DISTANCE
			k := newTestKernelSpec(t, spec, kern)
			numa := k.Domains(0)[3]
			if numa.T.Flags&topology.SDNuma == 0 || numa.T.Flags&topology.SDBalanceFork != 0 {
				t.Fatalf("CPU 0's top domain %s has flags %s; this derivation assumes NUMA without SD_BALANCE_FORK", numa.T.Name, numa.T.Flags)
			}
			got := forkSixteen(t, k)
			for i := range want {
				if got[i] != want[i] {
					t.Fatalf("children on %v, want %v (child %d differs)", got, want, i+1)
				}
			}
			// Socket and LLC summary.
			perLLC := map[cpumask.CPU]int{}
			for _, c := range got {
				if k.Topo.CPUNode[c] != 0 {
					t.Errorf("child on cpu%d, node %d", c, k.Topo.CPUNode[c])
				}
				perLLC[k.Topo.SdLLCID[c]]++
			}
			for llc := 0; llc < 64; llc += 8 {
				if perLLC[cpumask.CPU(llc)] != 2 {
					t.Errorf("LLC of cpu%d holds %d children, want 2", llc, perLLC[cpumask.CPU(llc)])
				}
			}
		})
	}
}

// TestForkSixteenThreadsZen places the same 16 threads with the NUMA domain
// the real machine (and the preset) has: x86's init_amd_zen_common sets
// node_reclaim_distance = 32, so distance 32 is not beyond it and the NUMA
// domain keeps SD_BALANCE_FORK, SD_BALANCE_EXEC and SD_WAKE_AFFINE.
//
// Reference: as TestForkSixteenThreads, plus adjust_numa_imbalance and
// the has_spare/SD_NUMA branch of sched_balance_find_dst_group, v6.19.
//
// The walk now starts at NUMA (two groups: socket 0, local, and socket 1).
// Both groups have spare capacity. imb_numa_nr: the NUMA domain's is 8
// (PKG is the first domain above the LLC: 128/16 = 8 LLCs; NUMA spans
// 256/256 of that); p may run on all 256 CPUs (!= NR_CPUS 8192), so it is
// min(CPUs of the local group p may use = 128, 8) = 8. With s0 and s1 the
// tasks on sockets 0 and 1 (the parent counts on socket 0), imbalance =
// |idle0 − idle1| = |s0 − s1| and dst_running = s0 + 1:
// adjust_numa_imbalance returns 0 (stay) if s0 + 1 <= 8 and imbalance <= 2;
// otherwise the group with more idle CPUs wins (socket 1 when s1 < s0; a
// tie stays).
//
//	child  s0 s1  imbalance  dst_running  decision
//	 1      1  0      1          2        stay  -> PKG: LLC1 -> 8
//	 2      2  0      2          3        stay  -> LLC2 -> 16
//	 3      3  0      3          4        go    -> 64
//	 4      3  1      2          4        stay  -> LLC3 -> 24
//	 5      4  1      3          5        go    -> 72
//	 6      4  2      2          5        stay  -> LLC4 -> 32
//	 7      5  2      3          6        go    -> 80
//	 8      5  3      2          6        stay  -> LLC5 -> 40
//	 9      6  3      3          7        go    -> 88
//	10      6  4      2          7        stay  -> LLC6 -> 48
//	11      7  4      3          8        go    -> 96
//	12      7  5      2          8        stay  -> LLC7 -> 56
//	13      8  5      3          9        go    -> 104
//	14      8  6      2          9        go (9 > 8: no allowance; 120 < 122 idle) -> 112
//	15      8  7      1          9        go (120 < 121 idle) -> 120
//	16      8  8      0          9        stay (imbalance 0 -> NULL) -> PKG: all LLCs at
//	                                      15 idle, stay; MC of 0: core {1,129} -> 1
//
// "go": find_dst_group_cpu(socket 1) -> its first idle CPU, 64 for child 3
// and 65 afterwards (64 is busy); the walk continues at PKG of that CPU,
// where the first LLC of socket 1 with 16 idle CPUs wins over the local
// LLC8 (15 idle): LLC9 (72) for child 5, LLC10 (80) for child 7, and so on.
func TestForkSixteenThreadsZen(t *testing.T) {
	want := []int{8, 16, 64, 24, 72, 32, 80, 40, 88, 48, 96, 56, 104, 112, 120, 1}
	// v5.12's allow_numa_imbalance keeps all of them on socket 0:
	// workload/stream's TestStreamForkPlacement derives it.
	for _, kern := range []string{kernels.V60, kernels.V619} {
		t.Run(kern, func(t *testing.T) {
			k := newTestKernel(t, "zen3-2s-nps1", kern)
			if f := k.Domains(0)[3].T.Flags; f&topology.SDNuma == 0 || f&topology.SDBalanceFork == 0 {
				t.Fatalf("CPU 0's top domain has flags %s; the preset should keep SD_BALANCE_FORK at SLIT 32", f)
			}
			if nr := k.Domains(0)[3].T.ImbNumaNr; nr != 8 {
				t.Fatalf("NUMA imb_numa_nr %d, want 8", nr)
			}
			got := forkSixteen(t, k)
			for i := range want {
				if got[i] != want[i] {
					t.Fatalf("children on %v, want %v (child %d differs)", got, want, i+1)
				}
			}
		})
	}
}

// TestExecBalance checks exec placement (WF_EXEC): the running task's own
// contribution is left out of its CPU's statistics.
//
// Reference: fair.c:update_sg_wakeup_stats with task_running_on_cpu,
// idle_cpu_without, cpu_load_without, v6.19. A task alone on CPU 0 leaves
// it idle "without p" (curr == p, nothing else queued): LLC0 ties with LLC1
// at 16 idle CPUs and every level keeps the local group -> 0. With a hog
// beside it CPU 0 stays busy: LLC0 has 15 idle CPUs -> LLC1 -> 8.
func TestExecBalance(t *testing.T) {
	for _, tc := range []struct {
		name string
		hogs int
		want cpumask.CPU
	}{{"alone", 0, 0}, {"with a hog", 1, 8}} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, "zen3-2s-nps1", kernels.V619)
			for i := 0; i < tc.hogs; i++ {
				r.hog(0)
			}
			var got cpumask.CPU = none
			r.spawn("exec", 0, 0, SchedNormal, ProgramFunc(func(k *Kernel, p *Task) Op {
				if got == none {
					r.unpin(p)
					got = k.selectTaskRqFair(p, p.CPU(), WFExec)
				}
				return Block()
			}))
			r.run(20 * engine.Millisecond)
			if got != tc.want {
				t.Fatalf("exec placement %v, want %v", got, tc.want)
			}
		})
	}
}

// TestFindDstGroupCPUIdleStates checks the idle-state choice of
// sched_balance_find_dst_group_cpu on a HiKey (idle states WFI: exit 1 µs,
// residency 1 µs; cpu-sleep: 250 µs, 1000 µs; cluster-sleep: 700 µs,
// 2700 µs).
//
// Reference: fair.c:sched_balance_find_dst_group_cpu, v6.19: a
// SCHED_IDLE-only CPU at once; among idle CPUs the smallest exit latency
// wins whatever the idle stamps; equal latencies go to the latest
// idle_stamp; with no idle CPU, the lowest cpu_load. The idle state is the
// one the idle governor chose when the CPU went idle: the deepest whose
// target residency fits the CPU's average idle period (which starts at
// 1 s, so a CPU's first idle period is chosen as cluster-sleep) — but a
// cluster state needs the whole cluster idle, and CPU 7 of this cluster
// is busy in every case, so those CPUs sit in cpu-sleep.
//
// Group: cluster 1, CPUs 4-7, looked at 6 ms after boot. CPU 5 ran 1 ms and
// went idle (cpu-sleep, idle_stamp 1 ms); CPU 6 ran 5.5 ms (cpu-sleep,
// idle_stamp 5.5 ms). CPU 4 either ran 2 ms (cpu-sleep, 2 ms) or
// flapped 20 µs busy / 10 µs idle until 5 ms: its average idle period fell
// to ~10 µs, so the governor put it in WFI.
func TestFindDstGroupCPUIdleStates(t *testing.T) {
	tests := []struct {
		name   string
		flap4  bool   // CPU 4 flaps (WFI) instead of running 2 ms
		cpu7   string // "busy" or "schedidle"
		want   cpumask.CPU
		states [3]string // of CPUs 4, 5, 6
	}{
		// All in cpu-sleep: the latest idle_stamp, CPU 6.
		{"tie broken by idle_stamp", false, "busy", 6, [3]string{"cpu-sleep", "cpu-sleep", "cpu-sleep"}},
		// CPU 4 in WFI wins although CPU 6 went idle later.
		{"shallowest state", true, "busy", 4, [3]string{"WFI", "cpu-sleep", "cpu-sleep"}},
		// CPU 7 runs only SCHED_IDLE work: returned as soon as the scan
		// (in CPU order) reaches it, whatever the idle CPUs before it.
		{"SCHED_IDLE CPU", true, "schedidle", 7, [3]string{"WFI", "cpu-sleep", "cpu-sleep"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, "hikey", kernels.V619)
			if tc.flap4 {
				n := 0
				r.spawn("flap", 4, 0, SchedNormal, ProgramFunc(func(k *Kernel, p *Task) Op {
					n++
					switch {
					case k.Now() >= 5*engine.Millisecond:
						return Block()
					case n%2 == 1:
						return Run(20 * engine.Microsecond)
					}
					return Sleep(10 * engine.Microsecond)
				}))
			} else {
				r.spawn("a", 4, 0, SchedNormal, runThenBlock(2*engine.Millisecond))
			}
			r.spawn("b", 5, 0, SchedNormal, runThenBlock(engine.Millisecond))
			r.spawn("c", 6, 0, SchedNormal, runThenBlock(5500*engine.Microsecond))
			switch tc.cpu7 {
			case "busy":
				r.hog(7)
			case "schedidle":
				r.spawn("idle", 7, 0, SchedIdle, loop(engine.Second, 0))
			}
			r.run(6 * engine.Millisecond)
			k := r.k
			g := k.Domains(0)[1].T.Groups[1] // PKG of CPU 0: cluster 0 (local), cluster 1
			if g.Span.First() != 4 || g.Weight != 4 {
				t.Fatalf("group %s", g.Span)
			}
			for i, c := range []cpumask.CPU{4, 5, 6} {
				st := k.idleGetState(k.Rqs[c])
				if !k.availableIdleCPU(c) || st == nil || st.Name != tc.states[i] {
					t.Fatalf("cpu%d: idle %v, state %v; want %s", c, k.availableIdleCPU(c), st, tc.states[i])
				}
			}
			if k.Rqs[6].IdleStamp <= k.Rqs[5].IdleStamp {
				t.Fatalf("idle stamps 5: %d, 6: %d", k.Rqs[5].IdleStamp, k.Rqs[6].IdleStamp)
			}
			p := &Task{CPUsAllowed: cpumask.Full(8)}
			if got := k.schedBalanceFindDstGroupCPU(g, p, 0); got != tc.want {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
		})
	}
	// No idle CPU: the least loaded one (CPU 5 runs a nice-19 task).
	r := newRig(t, "hikey", kernels.V619)
	r.hog(4)
	r.spawn("light", 5, 19, SchedNormal, loop(engine.Second, 0))
	r.hog(6)
	r.hog(7)
	r.run(20 * engine.Millisecond)
	g := r.k.Domains(0)[1].T.Groups[1]
	if got := r.k.schedBalanceFindDstGroupCPU(g, &Task{CPUsAllowed: cpumask.Full(8)}, 0); got != 5 {
		t.Fatalf("all busy: got %v, want the least loaded cpu5", got)
	}
}

// TestAdjustNumaImbalance checks the NUMA allowance.
//
// Reference: fair.c:adjust_numa_imbalance and allow_numa_imbalance, v6.19:
// while dst_running <= imb_numa_nr, imbalances up to NUMA_IMBALANCE_MIN (2)
// become 0; otherwise the imbalance stands.
func TestAdjustNumaImbalance(t *testing.T) {
	for _, tc := range []struct{ imb, dst, nr, want int }{
		{1, 2, 8, 0}, {2, 8, 8, 0}, {3, 4, 8, 3}, {2, 9, 8, 2}, {0, 9, 8, 0}, {2, 1, 0, 2},
	} {
		if got := adjustNumaImbalance(tc.imb, tc.dst, tc.nr); got != tc.want {
			t.Errorf("adjust_numa_imbalance(%d, %d, %d) = %d, want %d", tc.imb, tc.dst, tc.nr, got, tc.want)
		}
	}
}

// TestGroupClassify checks group_classify's order and thresholds.
//
// Reference: fair.c:group_classify, group_is_overloaded,
// group_has_capacity, v6.19. For a 16-CPU group of capacity 16384 and
// imbalance_pct 117: overloaded needs more tasks than CPUs and util × 117 >
// capacity × 100 (util > 14003) or runnable × 100 > capacity × 117
// (runnable > 19169); fully busy: not fewer tasks than CPUs and (runnable
// pressure, or util × 117 >= capacity × 100).
func TestGroupClassify(t *testing.T) {
	k := newTestKernel(t, "zen3-2s-nps1", kernels.V619)
	g := k.Domains(0)[2].T.Groups[0]
	base := SgLbStats{GroupCapacity: 16384, GroupWeight: 16}
	for _, tc := range []struct {
		name                 string
		nr                   int
		util, runnable, misf uint64
		want                 GroupType
	}{
		{"fewer tasks than CPUs", 15, 16384, 16384, 0, GroupHasSpare},
		{"16 tasks, low util", 16, 8000, 8000, 0, GroupHasSpare},
		{"16 tasks, util at capacity/pct", 16, 14004, 14004, 0, GroupFullyBusy},
		{"17 tasks, util high", 17, 14004, 14004, 0, GroupOverloaded},
		{"17 tasks, runnable pressure", 17, 8000, 19170, 0, GroupOverloaded},
		{"17 tasks, neither", 17, 8000, 8000, 0, GroupHasSpare},
		{"misfit", 3, 1000, 1000, 1, GroupMisfitTask},
		{"misfit but overloaded", 17, 14004, 14004, 1, GroupOverloaded},
	} {
		s := base
		s.SumNrRunning, s.GroupUtil, s.GroupRunnable, s.GroupMisfitTaskLoad = tc.nr, tc.util, tc.runnable, tc.misf
		if got := k.groupClassify(117, g, &s); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
	k.SGC(g).Imbalance = 1
	s := base
	s.SumNrRunning = 3
	if got := k.groupClassify(117, g, &s); got != GroupImbalanced {
		t.Errorf("sgc->imbalance: %s, want imbalanced", got)
	}
}

// TestSchedExecMoves runs the exec operation end to end: with a hog on
// CPU 0, the task that execs there is moved by sched_exec to the CPU
// TestExecBalance derives (8), keeps running there (its program continues)
// and counts one migration; alone, it stays on CPU 0.
// Reference: core.c:sched_exec, migration_cpu_stop (v6.19).
func TestSchedExecMoves(t *testing.T) {
	for _, tc := range []struct {
		name string
		hogs int
		want cpumask.CPU
	}{{"alone", 0, 0}, {"with a hog", 1, 8}} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, "zen3-2s-nps1", kernels.V619)
			for i := 0; i < tc.hogs; i++ {
				r.hog(0)
			}
			step := 0
			var ranOn cpumask.CPU = none
			p := r.spawn("exec", 0, 0, SchedNormal, ProgramFunc(func(k *Kernel, p *Task) Op {
				step++
				switch step {
				case 1:
					r.unpin(p)
					return Exec()
				case 2:
					ranOn = k.ThisCPU()
					return Run(engine.Millisecond)
				}
				return Block()
			}))
			r.run(20 * engine.Millisecond)
			if ranOn != tc.want || p.CPU() != tc.want {
				t.Fatalf("after exec the task ran on %v (now on %v), want %v", ranOn, p.CPU(), tc.want)
			}
			wantMig := uint64(0)
			if tc.want != 0 {
				wantMig = 1
			}
			if p.SE.NrMigrations != wantMig {
				t.Fatalf("nr_migrations %d, want %d", p.SE.NrMigrations, wantMig)
			}
		})
	}
}

// TestForkBalanceCost charges the forking parent for the slow path's reads
// (Settings.ForkBalanceCost): lb_group_ns per group compared and lb_cpu_ns
// per CPU read, and nothing with the setting off.
//
// Reference: sched_balance_find_dst_cpu and the functions it calls, v6.19,
// for the first thread forked from CPU 0 of an idle zen3-2s-nps1 (the
// preset keeps SD_BALANCE_FORK on the NUMA level, TestForkSixteenThreadsZen):
//
//   - NUMA (256 CPUs, 2 groups): update_sg_wakeup_stats reads all 256;
//     both sockets have spare and the local one is within the allowed
//     NUMA imbalance, so no group is returned and the walk goes down.
//   - PKG (128 CPUs, 8 LLC groups): all 128 read; LLC1 (16 idle CPUs)
//     beats the local LLC0 (15), and sched_balance_find_dst_group_cpu reads
//     its 16 CPUs and returns CPU 8.
//   - From CPU 8, MC (16 CPUs, 8 SMT-core groups): 16 read; the local core
//     has as many idle CPUs as any other, so no group.
//   - SMT (2 CPUs, 2 groups): 2 read; again the local group stays.
//
// 2 + 8 + 8 + 2 = 20 groups and 256 + 128 + 16 + 16 + 2 = 418 CPUs:
// 20 × 100 + 418 × 60 = 27080 ns with the costs set below.
func TestForkBalanceCost(t *testing.T) {
	for _, on := range []bool{true, false} {
		k := newTestKernel(t, "zen3-2s-nps1", kernels.V619)
		withCosts(t, k)
		k.S.ForkBalanceCost = on
		k.Costs.Balance.SgStatsPerGroup = 100
		k.Costs.Balance.SgStatsPerCPU = 60
		var charged engine.Time
		child := cpumask.None
		_, err := k.Fork(TaskSpec{Comm: "parent", CPU: 0, Prog: ProgramFunc(func(k *Kernel, p *Task) Op {
			if child != cpumask.None {
				return Block()
			}
			before := p.overhead
			c, err := k.Fork(TaskSpec{Comm: "thread", CPU: p.CPU(), Prog: loop(engine.Second, 0)})
			if err != nil {
				t.Fatal(err)
			}
			child = c.CPU()
			charged = p.overhead - before
			return Block()
		})})
		if err != nil {
			t.Fatal(err)
		}
		k.Eng.RunUntil(engine.Millisecond)
		want := engine.Time(27080)
		if !on {
			want = 0
		}
		if child != 8 || charged != want {
			t.Errorf("ForkBalanceCost %v: child on cpu%d charged %v to the parent, want cpu8 and %v", on, child, charged, want)
		}
	}
}
