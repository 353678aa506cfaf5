package frames_test

import (
	"testing"

	"github.com/schedlab/schedlab/internal/cpumask"
	"github.com/schedlab/schedlab/internal/engine"
	"github.com/schedlab/schedlab/internal/sched"
	"github.com/schedlab/schedlab/internal/sim"
	"github.com/schedlab/schedlab/internal/workload/frames"
)

// sample is the PELT signals of one move, on the moved task's CPU.
type sample struct {
	task             string
	cpu              int
	taskLoad, taskUt uint64
	rootUtil         uint64 // the root cfs_rq's util_avg after the move
	rootUtilBefore   uint64
	rootLoad         uint64
	rootLoadBefore   uint64
	toQUtil, toSE    uint64 // destination group: its cfs_rq's and its entity's util_avg
	toSELoad         uint64
	fromSE           uint64 // the source group's entity util_avg
	freq             uint64 // the CPU's frequency (1024 = max)
}

// build builds cfg, with the variant no-tg-propagate unless propagate.
func build(t *testing.T, propagate bool, cfg sim.Config) (*sim.Built, *frames.Bench) {
	t.Helper()
	if !propagate {
		cfg.Variants = []string{"no-tg-propagate"}
	}
	b, err := sim.Build(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return b, b.Instance.(*frames.Bench)
}

// moves runs frames on hikey with propagation on or off and records every
// move into top-app (the app coming to the front) and out of it.
func moves(t *testing.T, propagate bool, args ...string) (in, out []sample, res *sim.Result) {
	t.Helper()
	b, fb := build(t, propagate, sim.Config{Machine: "hikey", Seed: 1, Tool: "frames", Args: args})
	var before struct{ util, load uint64 }
	var from *sched.TaskGroup
	fb.OnMove = func(k *sched.Kernel, p *sched.Task, to *sched.TaskGroup, done bool) {
		c := p.CPU()
		root := k.Rqs[c].CFS
		if !done {
			before.util, before.load, from = root.Avg.UtilAvg, root.Avg.LoadAvg, p.TG
			return
		}
		s := sample{task: p.Comm, cpu: int(c), taskLoad: p.SE.Avg.LoadAvg, taskUt: p.SE.Avg.UtilAvg,
			rootUtil: root.Avg.UtilAvg, rootLoad: root.Avg.LoadAvg, rootUtilBefore: before.util, rootLoadBefore: before.load,
			toQUtil: to.CfsRq[c].Avg.UtilAvg, toSE: to.SE[c].Avg.UtilAvg, toSELoad: to.SE[c].Avg.LoadAvg,
			fromSE: from.SE[c].Avg.UtilAvg, freq: k.Rqs[c].FreqScale}
		if p.TG != to {
			t.Fatalf("%s: in %s after the move to %s", p.Comm, p.TG.Name, to.Name)
		}
		if to == fb.TopApp {
			in = append(in, s)
		} else {
			out = append(out, s)
		}
	}
	res, err := b.Run(sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return in, out, res
}

// TestMoveFollowsPELT: at every app switch the front app's two threads
// move from background to top-app and the old front app's from top-app to
// background (core.c:sched_move_task → task_change_group_fair: detach
// from the old group's cfs_rq, attach to the new one's on the same CPU).
// The task's own load_avg/util_avg go with it; with propagation
// (add_tg_cfs_propagate, propagate_entity_load_avg, update_tg_cfs_util,
// v4.10+) the destination group's entity takes its cfs_rq's util at once,
// without it the entity keeps what it had and converges through PELT.
// Reference: fair.c:attach_entity_load_avg, update_tg_cfs_util (v6.19).
func TestMoveFollowsPELT(t *testing.T) {
	for _, propagate := range []bool{true, false} {
		in, out, res := moves(t, propagate, "-d", "10")
		if len(in) != 8 || len(out) != 8 {
			t.Fatalf("propagate=%v: %d moves in, %d out, want 8 and 8 (4 switches)", propagate, len(in), len(out))
		}
		for _, set := range [][]sample{in, out} {
			for _, s := range set {
				t.Logf("propagate=%v %-11s cpu%d task load %4d util %4d | to-group cfs_rq util %4d entity util %4d load %4d | from-group entity util %4d | root util %4d→%4d load %4d→%4d | freq %4d",
					propagate, s.task, s.cpu, s.taskLoad, s.taskUt, s.toQUtil, s.toSE, s.toSELoad, s.fromSE, s.rootUtilBefore, s.rootUtil, s.rootLoadBefore, s.rootLoad, s.freq)
				if s.toQUtil < s.taskUt {
					t.Errorf("propagate=%v %s: the destination cfs_rq's util %d lacks the task's %d", propagate, s.task, s.toQUtil, s.taskUt)
				}
			}
		}
		// The old front app's RenderThread is busy every frame: its
		// util is large, so its move shows the propagation.
		var gap uint64
		for _, s := range out {
			d := absDiff(s.toSE, s.toQUtil)
			gap = max(gap, d)
		}
		// The old front app's load leaves the root at once with
		// propagation: the task's weight now counts through
		// background's 52 shares (update_tg_cfs_load); without it
		// the root keeps the top-app entity's load. Util, which
		// schedutil reads, is not weighted: the same-CPU move leaves
		// the root's util where it was either way.
		for _, s := range out {
			if s.rootLoadBefore < 50 {
				continue
			}
			if propagate && s.rootLoad > s.rootLoadBefore/2 || !propagate && s.rootLoad < s.rootLoadBefore*3/4 {
				t.Errorf("propagate=%v %s: root load %d → %d", propagate, s.task, s.rootLoadBefore, s.rootLoad)
			}
		}
		m := func(name string) float64 { v, _ := res.Metric(name); return v }
		t.Logf("propagate=%v: frames %v p50 %.3f p90 %.3f p99 %.3f ms, janky %.2f%%", propagate,
			m("frames"), m("frame_ms.p50"), m("frame_ms.p90"), m("frame_ms.p99"), m("janky_pct"))
		if propagate && gap > 2 {
			t.Errorf("with propagation a group entity's util differs from its cfs_rq's by %d right after a move", gap)
		}
		if !propagate && gap < 50 {
			t.Errorf("without propagation the group entities followed the moves (largest gap %d)", gap)
		}
	}
}

func absDiff(a, b uint64) uint64 {
	if a > b {
		return a - b
	}
	return b - a
}

// migrationSignals runs frames on hikey with the v4.10-era signal set
// (NO_UTIL_EST: util_est came in v4.17, so schedutil reads util_avg alone)
// and, each time a top-app thread starts running on a CPU it has just
// migrated to, compares that CPU's root cfs_rq util_avg with the task's
// own, and records the frequency the CPU runs at.
func migrationSignals(t *testing.T, propagate bool, seed uint64) (missing, freq, runFreq float64, n int, res *sim.Result) {
	t.Helper()
	b, fb := build(t, propagate, sim.Config{Machine: "hikey", Seed: seed, Tool: "frames", Args: []string{"-d", "10"}, Features: []string{"NO_UTIL_EST"}})
	k := b.Kernel
	moved := map[*sched.Task]bool{}
	k.Hooks.Migrate = func(p *sched.Task, orig, dest cpumask.CPU) {
		if p.TG == fb.TopApp {
			moved[p] = true
		}
	}
	var sumMissing, sumFreq float64
	// The frequency top-app threads run at, weighted by their run time
	// (the frequency when each stint began and ended, averaged).
	type stint struct {
		at   engine.Time
		freq uint64
	}
	running := map[cpumask.CPU]stint{}
	var ran, ranFreq float64
	k.Hooks.Switch = func(cpu cpumask.CPU, prev *sched.Task, _ sched.TaskState, next *sched.Task) {
		now, f := k.Now(), k.Rqs[cpu].FreqScale
		if st, ok := running[cpu]; ok && prev != nil {
			d := float64(now - st.at)
			ran += d
			ranFreq += d * float64(st.freq+f) / 2
			delete(running, cpu)
		}
		if next != nil && next.TG == fb.TopApp {
			running[cpu] = stint{now, f}
		}
		if next == nil || !moved[next] {
			return
		}
		delete(moved, next)
		tu := next.SE.Avg.UtilAvg
		if tu < 20 {
			return // too small a signal to tell
		}
		root := k.Rqs[cpu].CFS.Avg.UtilAvg
		m := 0.0
		if root < tu {
			m = float64(tu-root) / float64(tu)
		}
		sumMissing += m
		sumFreq += float64(k.Rqs[cpu].FreqScale)
		n++
	}
	res, err := b.Run(sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		// No move to measure in this seed: it adds nothing to the means.
		return 0, 0, ranFreq / ran, 0, res
	}
	return sumMissing / float64(n), sumFreq / float64(n), ranFreq / ran, n, res
}

// TestMigrationPropagatesUtilToSchedutil is why no-tg-propagate changes
// frame times: the UI thread and RenderThread wake on whichever of hikey's
// CPUs select_idle_sibling finds, so they migrate often. With propagation
// (fair.c:attach_entity_load_avg → add_tg_cfs_propagate, then
// propagate_entity_load_avg/update_tg_cfs_util up to the root, v4.10+) the
// destination's root cfs_rq carries the task's util_avg when it starts
// running there; without it the top-app group entity on that CPU has only
// what it had left and ramps up through PELT (32 ms half-life), so
// schedutil, which reads the root's util (no util_est in this kernel
// configuration), asks for a lower frequency and the frame's work runs
// longer. Reference: fair.c (v6.19), cpufreq_schedutil.c:sugov_get_util.
func TestMigrationPropagatesUtilToSchedutil(t *testing.T) {
	// Six seeds: migrations of a busy top-app thread are few (0 to 18
	// in 10 s), so one seed is too few to average over; the means are
	// over the seeds that moved one.
	var missOn, missOff, freqOn, freqOff float64
	var withOn, withOff int
	const seeds = 6
	for seed := uint64(1); seed <= seeds; seed++ {
		mOn, fOn, runOn, nOn, resOn := migrationSignals(t, true, seed)
		mOff, fOff, runOff, nOff, resOff := migrationSignals(t, false, seed)
		p90 := func(r *sim.Result) float64 { v, _ := r.Metric("frame_ms.p90"); return v }
		t.Logf("seed %d propagate: %d migrations, root lacks %.1f%% of the task's util, freq %.0f/1024; top-app runs at %.0f/1024, p90 %.2f ms", seed, nOn, 100*mOn, fOn, runOn, p90(resOn))
		t.Logf("seed %d no propagate: %d migrations, root lacks %.1f%% of the task's util, freq %.0f/1024; top-app runs at %.0f/1024, p90 %.2f ms", seed, nOff, 100*mOff, fOff, runOff, p90(resOff))
		// A seed without a measured move adds nothing to a mean.
		if nOn > 0 {
			missOn, freqOn, withOn = missOn+mOn, freqOn+fOn, withOn+1
		}
		if nOff > 0 {
			missOff, freqOff, withOff = missOff+mOff, freqOff+fOff, withOff+1
		}
	}
	if withOn < seeds/2 || withOff < seeds/2 {
		t.Fatalf("moves measured in %d and %d of %d seeds (with and without propagation): too few to compare", withOn, withOff, seeds)
	}
	missOn, freqOn = missOn/float64(withOn), freqOn/float64(withOn)
	missOff, freqOff = missOff/float64(withOff), freqOff/float64(withOff)
	t.Logf("mean of %d and %d seeds with moves: root lacks %.1f%% with propagation, %.1f%% without; frequency after a migration %.0f and %.0f /1024", withOn, withOff, 100*missOn, 100*missOff, freqOn, freqOff)
	// With propagation the root holds the task's signal (a few percent
	// lost to the other tasks' decay at most); without, a large part of
	// it is missing, and schedutil asks for less.
	if missOn > 0.05 || missOff < 0.25 {
		t.Errorf("root util missing after a migration: %.1f%% with propagation, %.1f%% without", 100*missOn, 100*missOff)
	}
	if freqOff >= freqOn {
		t.Errorf("frequency after a migration: %.0f without propagation, %.0f with", freqOff, freqOn)
	}
}
