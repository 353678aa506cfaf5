package sched

import (
	"github.com/schedlab/schedlab/internal/kernels"
	"math"
	"testing"

	"github.com/schedlab/schedlab/internal/costmodel"
	"github.com/schedlab/schedlab/internal/cpumask"
	"github.com/schedlab/schedlab/internal/engine"
	"github.com/schedlab/schedlab/internal/topology"
)

// Load-balancing scenarios. Each test builds a machine, places tasks where
// the scenario needs them (forked pinned to one CPU, then given their real
// affinity, so that fork placement does not interfere) and checks what the
// balancer does against the kernel's rules, derived in the comments.

// lbKernel builds a kernel on a preset with explicit settings.
func lbKernel(t testing.TB, machine string, s Settings, costs bool) *Kernel {
	t.Helper()
	k := newRigSettings(t, machine, s).k
	if costs {
		k.Costs.Balance = zen3BalanceCosts(t)
	}
	return k
}

// zen3BalanceCosts are the cost model's balancing costs for a Zen3 core
// (the zen3-2s-nps1 defaults), whatever the machine: the balancing tests
// derive their timings from these figures.
func zen3BalanceCosts(t testing.TB) costmodel.BalanceCosts {
	t.Helper()
	p, ok := costmodel.Defaults("zen3-2s-nps1")
	if !ok {
		t.Fatal("no zen3-2s-nps1 cost defaults")
	}
	spec, _ := topology.Preset("zen3-2s-nps1")
	return costmodel.Compile(p, spec).Balance
}

// lbFork forks a task on cpu (pinned there for the fork) and then lets it
// run on allowed.
func lbFork(t testing.TB, k *Kernel, comm string, cpu int, allowed cpumask.Mask, prog Program) *Task {
	t.Helper()
	p, err := k.Fork(TaskSpec{Comm: comm, CPU: cpumask.CPU(cpu), Allowed: cpumask.Of(k.NrCPUs(), cpumask.CPU(cpu)), Prog: prog})
	if err != nil {
		t.Fatal(err)
	}
	p.CPUsAllowed = allowed.Clone()
	p.NrCPUsAllowed = allowed.Weight()
	return p
}

// lbRunOnce runs d, then blocks for good.
func lbRunOnce(d engine.Time) Program {
	ran := false
	return ProgramFunc(func(k *Kernel, t *Task) Op {
		if !ran {
			ran = true
			return Run(d)
		}
		return Block()
	})
}

type lbMigration struct {
	at       engine.Time
	pid      PID
	from, to cpumask.CPU
}

// recordMigrations logs every set_task_cpu that changes CPU.
func recordMigrations(k *Kernel) *[]lbMigration {
	var log []lbMigration
	k.Hooks.Migrate = func(p *Task, from, to cpumask.CPU) {
		log = append(log, lbMigration{k.Now(), p.PID, from, to})
	}
	return &log
}

// TestGetSdBalanceInterval checks the periodic-balance intervals of the
// zen3-2s-nps1 domains.
//
// Reference: fair.c:get_sd_balance_interval and update_max_interval, v6.19.
// sd_init gives balance_interval = span weight in ms: SMT 2, MC 16, PKG
// 128, NUMA 256. At HZ=250 msecs_to_jiffies rounds up to 4 ms jiffies:
// idle 1, 4, 32, 64 jiffies. A busy CPU multiplies by busy_factor 16 and
// subtracts a jiffy: 32 ms → 8−1 = 7, 256 ms → 63, 2048 ms → 511, 4096 ms
// → 1023, all below max_load_balance_interval = HZ × 256 CPUs / 10 = 6400.
func TestGetSdBalanceInterval(t *testing.T) {
	k := lbKernel(t, "zen3-2s-nps1", MustBaseline(kernels.V619), false)
	if k.bal.maxLoadBalanceInterval != 6400 {
		t.Fatalf("max_load_balance_interval %d, want 6400", k.bal.maxLoadBalanceInterval)
	}
	want := []struct {
		name       string
		idle, busy uint64
	}{{"SMT", 1, 7}, {"MC", 4, 63}, {"PKG", 32, 511}, {"NUMA", 64, 1023}}
	sds := k.Domains(0)
	if len(sds) != len(want) {
		t.Fatalf("%d domains", len(sds))
	}
	for i, w := range want {
		sd := sds[i]
		if sd.T.Name != w.name {
			t.Fatalf("domain %d is %s, want %s", i, sd.T.Name, w.name)
		}
		if got := k.getSdBalanceInterval(sd, false); got != w.idle {
			t.Errorf("%s idle interval %d, want %d", w.name, got, w.idle)
		}
		if got := k.getSdBalanceInterval(sd, true); got != w.busy {
			t.Errorf("%s busy interval %d, want %d", w.name, got, w.busy)
		}
	}
}

// TestPeriodicBalanceEvensTwoLLCs: eight CPU-bound tasks start on CPUs 0–7
// of LLC 0 of zen3-2s-nps1 (one per core) and may run on LLC 0 and LLC 1
// (CPUs 0–15 and their SMT siblings 128–143). Periodic balancing evens
// them to four per LLC.
//
// Reference: fair.c:sched_balance_rq, sched_balance_find_src_group,
// sibling_imbalance, calculate_imbalance, need_active_balance,
// active_load_balance_cpu_stop and nohz_balancer_kick, v6.19 (v6.0: the
// v6.0 forms, which give the same numbers here).
//
// Derivation. The busy CPUs of LLC 0 tick; nr_busy_cpus of their LLC is
// above 1, so each tick kicks an idle load balancer, which runs the idle
// CPUs' domains when due. Only the PKG level (8 LLC groups) sees the
// imbalance, and of LLC 1 only its first idle CPU on an idle core balances
// it (should_we_balance): CPU 8. LLC 0 runs 8 tasks on 16 CPUs, LLC 1
// none: both groups have spare capacity, LLC 0's group prefers siblings,
// sibling_imbalance = 8 − 0 > 1 forces a balance, and calculate_imbalance
// asks for (8 − 0) >> 1 = 4 tasks (v6.0: the same difference). The
// busiest CPU of LLC 0 runs a single task, so nothing can be detached: the
// pass fails and nr_balance_failed grows. The idle interval of PKG is
// min_interval = 128 ms = 32 jiffies (failures reset it to min_interval).
// On the 4th failure nr_balance_failed = 4 > cache_nice_tries + 2 = 3 and
// migrate_task asks for an active balance: the stopper on the busiest CPU
// pushes its running task to CPU 8. So the first move lands at
// 4 × 32 jiffies = 512 ms, plus the kick's and the stopper's IPIs. The next
// balancer of LLC 1 (CPU 9) had been turned away by should_we_balance, so
// its PKG interval doubled to max_interval (256 ms) and its passes fall at
// 32 + 64j jiffies: its first pass after the move is 160 (640 ms), then
// three more 32 jiffies apart, so the second move lands at 256 jiffies
// (1024 ms), and so on: move m at 128·m jiffies, 4 moves, 16 PKG intervals,
// 2048 ms. After that LLC 0 and LLC 1 each run 4 tasks, the sibling
// imbalance is 0 and nothing moves again.
func TestPeriodicBalanceEvensTwoLLCs(t *testing.T) {
	for _, kern := range kernels.Names() {
		t.Run(kern, func(t *testing.T) {
			k := lbKernel(t, "zen3-2s-nps1", MustBaseline(kern), false)
			n := k.NrCPUs()
			allowed := cpumask.New(n)
			for c := 0; c < 16; c++ {
				allowed.Set(cpumask.CPU(c))
				allowed.Set(cpumask.CPU(c + 128))
			}
			var tasks []*Task
			for i := 0; i < 8; i++ {
				tasks = append(tasks, lbFork(t, k, "hog", i, allowed, loop(engine.Second, 0)))
			}
			moves := recordMigrations(k)

			pkg := k.Domains(8)[2]
			if (pkg.T.Name != "PKG" && pkg.T.Name != "DIE") || pkg.T.CacheNiceTries != 1 || pkg.T.MinInterval != 128 {
				t.Fatalf("CPU 8's PKG domain: %s tries %d min_interval %d", pkg.T.Name, pkg.T.CacheNiceTries, pkg.T.MinInterval)
			}
			failures := uint64(pkg.T.CacheNiceTries + 3)
			intervalJ := k.msecsToJiffies(uint64(pkg.T.MinInterval))
			jiffy := engine.Time(k.TickNsec())
			k.Eng.RunUntil(3 * engine.Second)

			if len(*moves) != 4 {
				t.Fatalf("%d migrations, want 4: %+v", len(*moves), *moves)
			}
			for m, mv := range *moves {
				wantJ := engine.Time(uint64(m+1) * failures * intervalJ)
				if at := mv.at / jiffy; at != wantJ {
					t.Errorf("move %d at %v (jiffy %d), want jiffy %d", m+1, mv.at, at, wantJ)
				}
				if mv.at-wantJ*jiffy > 100*engine.Microsecond {
					t.Errorf("move %d at %v: more than the IPI latencies after the tick", m+1, mv.at)
				}
				if k.llcID(mv.from) != 0 || k.llcID(mv.to) != 8 {
					t.Errorf("move %d from cpu%d to cpu%d, want LLC 0 → LLC 1", m+1, mv.from, mv.to)
				}
			}
			perLLC := map[cpumask.CPU]int{}
			for _, p := range tasks {
				perLLC[k.llcID(p.CPU())]++
			}
			if perLLC[0] != 4 || perLLC[8] != 4 {
				t.Errorf("tasks per LLC %v, want 4 and 4", perLLC)
			}
			// CPU 8's PKG passes: 4 failures with an imbalance of 4 tasks
			// each, then the stopper's push.
			if pkg.Stats.LbFailed[CPUIdle] != 4 || pkg.Stats.LbImbalanceTask[CPUIdle] != 16 ||
				pkg.Stats.AlbCount != 1 || pkg.Stats.AlbPushed != 1 || pkg.Stats.LbGained[CPUIdle] != 1 {
				t.Errorf("CPU 8 PKG schedstats %+v", pkg.Stats)
			}
			if k.BalanceStats.ActiveBalance.Calls != 4 || k.BalanceStats.Migrations != 4 {
				t.Errorf("balance stats %+v", k.BalanceStats)
			}
		})
	}
}

// TestNewidleBalancePullsColdKeepsHot: CPU 0 runs two CPU-bound tasks that
// may also use CPU 1; CPU 1 runs a task pinned to it that blocks at time
// T. CPU 1 goes newly idle and pulls the task waiting on CPU 0 — unless it
// is cache hot.
//
// Reference: fair.c:sched_balance_newidle, sched_balance_rq,
// can_migrate_task and task_hot, v6.19 (v6.0: newidle_balance, same
// rules).
//
// Derivation. The root domain is overloaded (CPU 0 went to two tasks),
// avg_idle starts at 2 × migration_cost, above max_newidle_lb_cost (0), so
// the gate passes. At CPU 1's MC level (CPUs 0–3, one per group) the
// busiest group is CPU 0 with two tasks and the local one is empty:
// migrate_task with imbalance (2 − 0) >> 1 = 1 (busiest is a single CPU).
// detach_tasks takes the tail of CPU 0's cfs_tasks, the waiting task W.
// task_hot: W last ran rq_clock_task − exec_start ago. With EEVDF (v6.19)
// the 2.8 ms slices end at ticks, so W ran until 4 ms and at T = 6 ms it
// ran 2 ms ago; with CFS (v6.0, v5.12) the two tasks get 12 ms each
// (sched_latency 24 ms / 2), so at T = 14 ms W ran until 12 ms, 2 ms ago.
// With migration_cost 0.5 ms W is cold and moves at T (lb_gained of the
// newly idle type). With migration_cost 3 ms it is hot; newly idle
// balance never counts failures, so nr_balance_failed stays 0 ≤
// cache_nice_tries and W stays (nr_failed_migrations_hot, lb_failed).
// NI_RANDOM is turned off so that the MC pass is not skipped by chance.
func TestNewidleBalancePullsColdKeepsHot(t *testing.T) {
	for _, kern := range kernels.Names() {
		T := 6 * engine.Millisecond
		if kern != kernels.V619 {
			T = 14 * engine.Millisecond // CFS
		}
		for _, tc := range []struct {
			name          string
			migrationCost uint64
			hot           bool
		}{{"cold", 500000, false}, {"hot", 3000000, true}} {
			t.Run(kern+"/"+tc.name, func(t *testing.T) {
				s := MustBaseline(kern)
				s.MigrationCost = tc.migrationCost
				s.NIRandom = false
				k := lbKernel(t, "hikey", s, false)
				n := k.NrCPUs()
				both := cpumask.Of(n, 0, 1)
				a := lbFork(t, k, "a", 0, both, loop(engine.Second, 0))
				b := lbFork(t, k, "b", 0, both, loop(engine.Second, 0))
				lbFork(t, k, "c", 1, cpumask.Of(n, 1), lbRunOnce(T))
				moves := recordMigrations(k)

				k.Eng.RunUntil(T - 1)
				if len(*moves) != 0 {
					t.Fatalf("migrations before T: %+v", *moves)
				}
				w := a
				if a.OnCPU {
					w = b
				}
				if w.OnCPU || w.CPU() != 0 {
					t.Fatalf("no task waiting on CPU 0 before T")
				}
				delta := uint64(T) + ClockBase - w.SE.ExecStart
				if delta < 1500000 || delta > 2500000 {
					t.Fatalf("W last ran %d ns before T, the derivation assumes 2 ms", delta)
				}
				k.Eng.RunUntil(T)
				mc := k.Domains(1)[0]
				if tc.hot {
					if len(*moves) != 0 || w.CPU() != 0 {
						t.Errorf("hot task moved: %+v", *moves)
					}
					if w.SE.Stats.NrFailedMigrationsHot == 0 || mc.Stats.LbFailed[CPUNewlyIdle] == 0 || mc.Stats.LbGained[CPUNewlyIdle] != 0 {
						t.Errorf("hot: failed_hot %d, MC %+v", w.SE.Stats.NrFailedMigrationsHot, mc.Stats)
					}
					if !k.Rqs[1].Curr.IsIdleTask() {
						t.Errorf("CPU 1 runs %s", k.Rqs[1].Curr.Comm)
					}
					return
				}
				if len(*moves) != 1 || (*moves)[0].pid != w.PID || (*moves)[0].at != T || (*moves)[0].to != 1 {
					t.Fatalf("migrations %+v, want W (pid %d) to CPU 1 at %v", *moves, w.PID, T)
				}
				if mc.Stats.LbGained[CPUNewlyIdle] != 1 || mc.Stats.LbImbalanceTask[CPUNewlyIdle] != 1 {
					t.Errorf("MC schedstats %+v", mc.Stats)
				}
				k.Eng.RunUntil(T + engine.Millisecond)
				if k.Rqs[1].Curr != w {
					t.Errorf("CPU 1 runs %s, want the pulled task", k.Rqs[1].Curr.Comm)
				}
				if k.Rqs[1].IdleStamp != 0 {
					t.Errorf("idle_stamp not cleared after a pull")
				}
			})
		}
	}
}

// TestAffinityPinnedTasksNotMoved: CPU 0 runs two tasks pinned to it and
// one free task; the other CPUs are idle. The free task is pulled away;
// the pinned ones never move, and the idle balancer backs off.
//
// Reference: fair.c:can_migrate_task and sched_balance_rq's
// LBF_ALL_PINNED handling, v6.19.
//
// Derivation. can_migrate_task refuses a task whose cpus_ptr lacks
// dst_cpu (nr_failed_migrations_affine, LBF_SOME_PINNED) and, outside
// newly idle balance, looks for another CPU of the local group the task
// allows (LBF_DST_PINNED): there is none. When every task of the busiest
// queue was refused (LBF_ALL_PINNED) the busiest CPU is dropped and the
// pass ends "all pinned": lb_balanced, and the interval doubles up to
// MAX_PINNED_INTERVAL (512 ms) instead of max_interval (MC of hikey:
// 8 ms).
func TestAffinityPinnedTasksNotMoved(t *testing.T) {
	for _, kern := range kernels.Names() {
		t.Run(kern, func(t *testing.T) {
			k := lbKernel(t, "hikey", MustBaseline(kern), false)
			n := k.NrCPUs()
			p1 := lbFork(t, k, "pinned1", 0, cpumask.Of(n, 0), loop(engine.Second, 0))
			p2 := lbFork(t, k, "pinned2", 0, cpumask.Of(n, 0), loop(engine.Second, 0))
			free := lbFork(t, k, "free", 0, cpumask.Full(n), loop(engine.Second, 0))
			moves := recordMigrations(k)
			k.Eng.RunUntil(2 * engine.Second)
			for _, mv := range *moves {
				if mv.pid == p1.PID || mv.pid == p2.PID {
					t.Fatalf("pinned task moved: %+v", mv)
				}
			}
			if free.CPU() == 0 {
				t.Errorf("the free task was not pulled away")
			}
			if p1.SE.Stats.NrFailedMigrationsAffine == 0 || p2.SE.Stats.NrFailedMigrationsAffine == 0 {
				t.Errorf("nr_failed_migrations_affine %d, %d", p1.SE.Stats.NrFailedMigrationsAffine, p2.SE.Stats.NrFailedMigrationsAffine)
			}
			// The idle balancer of cluster 0 at MC level saw only pinned
			// tasks: its interval grew past max_interval toward 512 ms.
			backedOff := false
			for c := 1; c < 4; c++ {
				mc := k.Domains(c)[0]
				if mc.BalanceInterval > uint64(mc.T.MaxInterval) && mc.BalanceInterval <= maxPinnedInterval {
					backedOff = true
				}
				if mc.BalanceInterval > maxPinnedInterval {
					t.Errorf("cpu%d MC interval %d above MAX_PINNED_INTERVAL", c, mc.BalanceInterval)
				}
			}
			if !backedOff {
				t.Errorf("no MC balancer of CPUs 1-3 backed off past max_interval")
			}
		})
	}
}

// TestNohzIdleBalancerDecaysBlockedLoad: a task in a cgroup runs 50 ms on
// CPU 3 and sleeps; CPU 3 stops its tick. A busy CPU elsewhere keeps the
// NOHZ idle balancer refreshing CPU 3's blocked load, which decays as PELT
// says; with no busy CPU nothing refreshes it.
//
// Reference: fair.c:nohz_balance_enter_idle, nohz_balancer_kick,
// kick_ilb, _nohz_idle_balance, update_nohz_stats and
// sched_balance_update_blocked_averages, v6.19.
//
// Derivation. Entering idle sets rq->has_blocked_load and nohz.has_blocked.
// CPU 0's ticks kick a stats-only ILB when jiffies pass nohz.next_blocked,
// which each stats pass sets 32 ms (8 jiffies) ahead: one refresh of CPU 3
// every 9 jiffies (36 ms; time_after needs one jiffy more). Between
// refreshes the averages stand still; each refresh decays them by
// y^(periods elapsed), y^32 = 1/2 with 1024 µs periods. So at a sampling
// time t, with t0 when the task blocked, util lies between util0 ×
// 2^-(t−t0)/32.768ms (refreshed just now) and util0 × 2^-(t−t0−40ms)/32.768ms
// (refreshed 36 ms ago, plus up to a jiffy until the kicking tick), give
// or take PELT's 1024 µs period steps (2%). Once everything decays to 0 the CPU clears
// has_blocked_load and the ILB stops refreshing it.
func TestNohzIdleBalancerDecaysBlockedLoad(t *testing.T) {
	for _, busy := range []bool{true, false} {
		k := lbKernel(t, "hikey", MustBaseline(kernels.V619), false)
		n := k.NrCPUs()
		tg, err := k.CreateGroup(nil, "app", 100)
		if err != nil {
			t.Fatal(err)
		}
		p, err := k.Fork(TaskSpec{Comm: "app", CPU: 3, Group: tg, Allowed: cpumask.Of(n, 3), Prog: lbRunOnce(50 * engine.Millisecond)})
		if err != nil {
			t.Fatal(err)
		}
		if busy {
			lbFork(t, k, "hog", 0, cpumask.Of(n, 0), loop(engine.Second, 0))
		}
		k.Eng.RunUntil(60 * engine.Millisecond)
		rq3 := k.Rqs[3]
		if p.State != TaskInterruptible || !rq3.Curr.IsIdleTask() || !rq3.HasBlockedLoad || !k.NohzIdleCPUs().Test(3) {
			t.Fatalf("CPU 3 not NOHZ idle with blocked load after the task slept")
		}
		blockAt := engine.Time(50 * engine.Millisecond)
		util0 := float64(rq3.CFS.Avg.UtilAvg)
		load0 := tg.CfsRq[3].Avg.LoadAvg
		if util0 < 500 || load0 == 0 {
			t.Fatalf("util %v load %d after 50 ms of running", util0, load0)
		}
		halfLife := 32 * 1024 * engine.Microsecond
		for ts := 100 * engine.Millisecond; ts <= 700*engine.Millisecond; ts += 20 * engine.Millisecond {
			k.Eng.RunUntil(ts)
			u := float64(rq3.CFS.Avg.UtilAvg)
			if !busy {
				if u != util0 || tg.CfsRq[3].Avg.LoadAvg != load0 {
					t.Fatalf("no busy CPU, yet CPU 3's blocked load changed at %v: util %v", ts, u)
				}
				continue
			}
			lo := util0*math.Exp2(-float64(ts-blockAt)/float64(halfLife)) - 2
			hi := util0*math.Exp2(-float64(ts-blockAt-40*engine.Millisecond)/float64(halfLife))*1.02 + 2
			if u < lo || u > hi {
				t.Errorf("at %v util %v, want within [%.1f, %.1f]", ts, u, lo, hi)
			}
		}
		if !busy {
			if rq3.BlockedUpdatesBy[BlockedByNohzStats] != 0 {
				t.Errorf("blocked load refreshed with no busy CPU")
			}
			continue
		}
		// Refreshes by the ILB: one per 36 ms until the load is gone.
		if got := rq3.BlockedUpdatesBy[BlockedByNohzStats]; got < 8 || got > 14 {
			t.Errorf("%d ILB refreshes of CPU 3", got)
		}
		if rq3.HasBlockedLoad || rq3.CFS.Avg.UtilAvg != 0 || tg.CfsRq[3].Avg.LoadAvg != 0 {
			t.Errorf("CPU 3 blocked load not gone after 650 ms: util %d load %d", rq3.CFS.Avg.UtilAvg, tg.CfsRq[3].Avg.LoadAvg)
		}
		before := rq3.BlockedUpdatesBy[BlockedByNohzStats]
		k.Eng.RunUntil(900 * engine.Millisecond)
		if rq3.BlockedUpdatesBy[BlockedByNohzStats] != before {
			t.Errorf("CPU 3 still refreshed after its load decayed")
		}
	}
}
