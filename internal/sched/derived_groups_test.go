package sched

import (
	"github.com/schedlab/schedlab/internal/kernels"
	"testing"

	"github.com/schedlab/schedlab/internal/cpumask"
	"github.com/schedlab/schedlab/internal/engine"
	"github.com/schedlab/schedlab/internal/topology"
)

// TestGroupSharesAcrossCPUs: cgroup /a (cpu.weight 100: tg->shares 1024)
// has two nice-0 hogs on CPU 0 and one on CPU 1 of a HiKey. A group
// entity's weight is calc_group_shares of its queue:
//
//	load      = max(queue weight, queue load_avg)
//	tg_weight = tg->load_avg − this queue's contribution + load
//	shares    = tg->shares · load / tg_weight, clamped to [2, tg->shares]
//
// The queues' weights are 2048 and 1024 and their load_avg stays just
// below (always-runnable tasks keep their weight as load), so load is
// 2048 and 1024; tg->load_avg is the sum of the published contributions,
// each within 1/64 of its queue's load_avg (update_tg_load_avg publishes a
// change larger than that): c0 ∈ [2048 − 32, 2048], c1 ∈ [1024 − 16,
// 1024]. Hence
//
//	CPU 0: 1024·2048/(c1 + 2048) ∈ [682, 686]   (682.7 for c1 = 1024)
//	CPU 1: 1024·1024/(c0 + 1024) ∈ [341, 345]   (341.3 for c0 = 2048)
//
// together ≈ tg->shares: the group gets its weight once, split by where
// its load is. A queue that ignored the other CPUs' load would give each
// entity the full 1024.
// Reference: fair.c:calc_group_shares, update_cfs_group,
// update_tg_load_avg (v6.19).
func TestGroupSharesAcrossCPUs(t *testing.T) {
	k := newTestKernel(t, "hikey", kernels.V619)
	tg, err := k.CreateGroup(nil, "a", 100)
	if err != nil {
		t.Fatal(err)
	}
	for _, cpu := range []cpumask.CPU{0, 0, 1} {
		if _, err := k.Fork(TaskSpec{Comm: "hog", CPU: cpu, Allowed: cpumask.Of(8, cpu), Group: tg, Prog: loop(engine.Second, 0)}); err != nil {
			t.Fatal(err)
		}
	}
	k.Eng.RunUntil(200 * engine.Millisecond)
	c0, c1 := tg.CfsRq[0].TgLoadAvgContrib, tg.CfsRq[1].TgLoadAvgContrib
	if c0 < 2048-32 || c0 > 2048 || c1 < 1024-16 || c1 > 1024 || tg.LoadAvg != int64(c0+c1) {
		t.Fatalf("contributions %d and %d, tg load_avg %d", c0, c1, tg.LoadAvg)
	}
	for _, tc := range []struct {
		cpu      int
		lo, hi   uint64
		queueW   uint64
		otherSum uint64
	}{
		{0, 682, 686, 2048, c1},
		{1, 341, 345, 1024, c0},
	} {
		c := tg.CfsRq[tc.cpu]
		if w := scaleLoadDown(c.Load.Weight); w != tc.queueW {
			t.Fatalf("cpu%d: /a queue weight %d, want %d", tc.cpu, w, tc.queueW)
		}
		load := max(tc.queueW, c.Avg.LoadAvg)
		want := 1024 * load / (tc.otherSum + load) // the formula with this state
		got := scaleLoadDown(calcGroupShares(c, false))
		if got != want {
			t.Errorf("cpu%d: calc_group_shares = %d, the formula gives 1024·%d/(%d + %d) = %d", tc.cpu, got, load, tc.otherSum, load, want)
		}
		if w := seWeight(tg.SE[tc.cpu]); w < tc.lo || w > tc.hi {
			t.Errorf("cpu%d: group entity weight %d, want %d..%d", tc.cpu, w, tc.lo, tc.hi)
		}
	}
	t.Logf("contributions %d + %d; entity weights %d and %d", c0, c1, seWeight(tg.SE[0]), seWeight(tg.SE[1]))
	if w := seWeight(tg.SE[0]) + seWeight(tg.SE[1]); w < 1020 || w > 1030 {
		t.Errorf("group entity weights add up to %d, want ≈ tg->shares = 1024", w)
	}
}

// TestGroupSharesV1: a cgroup v1 cpu.shares write sets tg->shares to
// scale_load(shares), clamped to [2, 2^18], and cpu.weight reads back
// DIV_ROUND_CLOSEST(shares·100, 1024): Android's bg_non_interactive 52
// reads as weight 5, 1024 as 100.
// Reference: core.c:cpu_shares_write_u64, cpu_weight_read_u64,
// fair.c:__sched_group_set_shares (v6.19).
func TestGroupSharesV1(t *testing.T) {
	k := newTestKernel(t, "hikey", kernels.V619)
	tg, err := k.CreateGroup(nil, "background", 100)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		write, shares uint64
		weight        int
	}{{52, 52, 5}, {1024, 1024, 100}, {1, 2, 1}, {1 << 20, 1 << 18, 25600}} {
		if err := k.SetGroupShares(tg, c.write); err != nil {
			t.Fatal(err)
		}
		if tg.Shares != scaleLoad(c.shares) || tg.Weight != c.weight {
			t.Errorf("cpu.shares %d: tg->shares %d weight %d, want %d %d", c.write, tg.Shares, tg.Weight, scaleLoad(c.shares), c.weight)
		}
	}
	if err := k.SetGroupShares(k.RootTG, 52); err == nil {
		t.Error("the root cgroup took cpu.shares")
	}
}

// TestPickBusiestMisfitTie: between two misfit groups, the one with the
// larger misfit load is the busiest, and on a tie the later one: the
// switch leaves the case only when the new load is smaller ("if
// (sgs->group_misfit_task_load < busiest->group_misfit_task_load) return
// false; break;"), and a misfit group is past the asymmetric-capacity
// test after it (that concerns groups up to fully_busy).
//
// Reference: fair.c:update_sd_pick_busiest (v5.12, v6.0, v6.19: the same
// lines since the v5.5 load balance rework).
func TestPickBusiestMisfitTie(t *testing.T) {
	for _, kern := range kernels.Names() {
		k := newTestKernel(t, "hikey960", kern)
		sd := k.Domains(0)[1]
		if len(sd.T.Groups) != 2 || sd.T.Flags&topology.SDAsymCPUCapacity == 0 {
			t.Fatalf("%s: domain %s has %d groups, flags %v", kern, sd.T.Name, len(sd.T.Groups), sd.T.Flags)
		}
		env := &lbEnv{sd: sd, dstCPU: 4, dstRq: k.Rqs[4], idle: CPUIdle, cpus: sd.T.Span.Clone()}
		for _, c := range []struct {
			name          string
			first, second uint64
			want          bool
		}{
			{"equal misfit load", 500, 500, true},
			{"second larger", 500, 501, true},
			{"second smaller", 500, 499, false},
		} {
			var sds sdLbStats
			initSdLbStats(&sds)
			sds.local = sd.T.Groups[1]
			sds.localStat.GroupType = GroupHasSpare
			g := sd.T.Groups[0]
			first := SgLbStats{SumNrRunning: 1, SumHNrRunning: 1, GroupWeight: 4, GroupType: GroupMisfitTask, GroupMisfitTaskLoad: c.first}
			second := first
			second.GroupMisfitTaskLoad = c.second
			sds.busiest, sds.busiestStat = g, first
			if got := k.updateSdPickBusiest(env, &sds, g, &second); got != c.want {
				t.Errorf("%s: %s: misfit load %d then %d: second taken %v, want %v", kern, c.name, c.first, c.second, got, c.want)
			}
		}
	}
}

// TestGroupSharesWeightOnly: calc_cfs_shares (v4.9–v4.14;
// Settings.GroupSharesWeight, the base of no-tg-propagate) takes a queue's
// load.weight where calc_group_shares (v4.15+) takes max(load.weight,
// load_avg). Group /a has a hog on CPU 0 and, on CPU 1, a task that ran
// and then blocked: CPU 1's queue has weight 0 and a load_avg still
// decaying. The newer form gives CPU 1's entity 1024·la/(c0 + la); the
// older gives MIN_SHARES (2), the queue holding no weight.
//
// Reference: fair.c:calc_cfs_shares and calc_tg_weight (v4.9),
// calc_group_shares (v6.19).
func TestGroupSharesWeightOnly(t *testing.T) {
	k := newTestKernel(t, "hikey", kernels.V619)
	tg, err := k.CreateGroup(nil, "a", 100)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := k.Fork(TaskSpec{Comm: "hog", CPU: 0, Allowed: cpumask.Of(8, 0), Group: tg, Prog: loop(engine.Second, 0)}); err != nil {
		t.Fatal(err)
	}
	if _, err := k.Fork(TaskSpec{Comm: "brief", CPU: 1, Allowed: cpumask.Of(8, 1), Group: tg, Prog: runThenBlockOnce(50 * engine.Millisecond)}); err != nil {
		t.Fatal(err)
	}
	k.Eng.RunUntil(60 * engine.Millisecond)
	c := tg.CfsRq[1]
	la := c.Avg.LoadAvg
	if c.Load.Weight != 0 || la == 0 {
		t.Fatalf("CPU 1's queue: weight %d, load_avg %d; want 0 and some", c.Load.Weight, la)
	}
	other := uint64(tg.LoadAvg) - c.TgLoadAvgContrib
	if got, want := scaleLoadDown(calcGroupShares(c, false)), 1024*la/(other+la); got != want {
		t.Errorf("calc_group_shares = %d, want 1024·%d/(%d + %d) = %d", got, la, other, la, want)
	}
	if got := scaleLoadDown(calcGroupShares(c, true)); got != 2 {
		t.Errorf("calc_cfs_shares = %d, want MIN_SHARES 2", got)
	}
}

// runThenBlockOnce runs d, then blocks for good.
func runThenBlockOnce(d engine.Time) Program {
	ran := false
	return ProgramFunc(func(k *Kernel, t *Task) Op {
		if !ran {
			ran = true
			return Run(d)
		}
		return Block()
	})
}
