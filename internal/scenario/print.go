package scenario

import (
	"fmt"
	"strings"

	"github.com/schedlab/schedlab/internal/cpumask"
	"github.com/schedlab/schedlab/internal/sched"
)

// vr prints a vruntime-like u64 as the signed value the kernel's debug
// output shows (queues start at -2^20).
func vr(v uint64) int64 { return int64(v) }

func (r *Runner) cmdRq(c *Command, b *strings.Builder) error {
	cpus, err := r.cpus(c)
	if err != nil {
		return err
	}
	_, explicit := c.arg("cpu")
	for _, cpu := range cpus {
		rq := r.k.Rqs[cpu]
		if !explicit && rq.NrRunning == 0 && rq.Curr.IsIdleTask() {
			continue
		}
		r.k.UpdateClock(cpu)
		fmt.Fprintf(b, "cpu%d curr=%s nr_running=%d nr_switches=%d need_resched=%d\n",
			cpu, taskName(rq.Curr), rq.NrRunning, rq.NrSwitches, b2i(rq.NeedResched()))
		r.printCfsRq(b, rq.CFS, 1)
	}
	return nil
}

func b2i(v bool) int {
	if v {
		return 1
	}
	return 0
}

func (r *Runner) printCfsRq(b *strings.Builder, q *sched.CfsRq, depth int) {
	ind := strings.Repeat("  ", depth)
	fmt.Fprintf(b, "%scfs_rq[%s] nr_queued=%d h_nr_queued=%d h_nr_runnable=%d load=%d",
		ind, q.TG().Name, q.NrQueued, q.HNrQueued, q.HNrRunnable, q.Load.Weight>>10)
	if r.k.S.EEVDF {
		fmt.Fprintf(b, " avg_vruntime=%d\n", vr(r.k.AvgVruntime(q)))
	} else {
		fmt.Fprintf(b, " min_vruntime=%d\n", vr(q.ZeroVruntime))
	}
	for _, se := range q.Entities() {
		mark := " "
		if se == q.Curr {
			mark = "*"
		}
		name := "group"
		if se.IsTask() {
			name = taskName(se.Task())
		} else {
			name = "group " + se.MyQ.TG().Name
		}
		fmt.Fprintf(b, "%s %s %s weight=%d vruntime=%d", ind, mark, name, sched.SEWeight(se), vr(se.Vruntime))
		if r.k.S.EEVDF {
			el := "no"
			if sched.Eligible(q, se) {
				el = "yes"
			}
			fmt.Fprintf(b, " deadline=%d slice=%d eligible=%s", vr(se.Deadline), se.Slice, el)
			if se.SchedDelayed {
				b.WriteString(" delayed")
			}
		}
		b.WriteByte('\n')
		if !se.IsTask() {
			r.printCfsRq(b, se.MyQ, depth+2)
		}
	}
}

func fmtAvg(a *sched.SchedAvg) string {
	return fmt.Sprintf("load_avg=%d runnable_avg=%d util_avg=%d util_est=%d load_sum=%d runnable_sum=%d util_sum=%d period_contrib=%d",
		a.LoadAvg, a.RunnableAvg, a.UtilAvg, a.UtilEst&^(1<<31), a.LoadSum, a.RunnableSum, a.UtilSum, a.PeriodContrib)
}

func (r *Runner) cmdPelt(c *Command, b *strings.Builder) error {
	if c.has("task") {
		t, err := r.task(c)
		if err != nil {
			return err
		}
		fmt.Fprintf(b, "se %s cpu%d %s\n", taskName(t), t.CPU(), fmtAvg(&t.SE.Avg))
		return nil
	}
	cpus, err := r.cpus(c)
	if err != nil {
		return err
	}
	groups := r.k.TGs
	if path, ok := c.arg("cgroup"); ok {
		g := r.k.Group(path)
		if g == nil {
			return c.errf("cgroup %s does not exist", path)
		}
		groups = []*sched.TaskGroup{g}
	}
	for _, cpu := range cpus {
		for _, g := range groups {
			q := g.CfsRq[cpu]
			fmt.Fprintf(b, "cfs_rq[%s] cpu%d %s", g.Name, cpu, fmtAvg(&q.Avg))
			if q.Removed.Nr > 0 {
				fmt.Fprintf(b, " removed=(%d,%d,%d,%d)", q.Removed.Nr, q.Removed.LoadAvg, q.Removed.UtilAvg, q.Removed.RunnableAvg)
			}
			if !g.IsRoot() {
				fmt.Fprintf(b, " tg_load_avg_contrib=%d", q.TgLoadAvgContrib)
			}
			b.WriteByte('\n')
			if !g.IsRoot() {
				se := g.SE[cpu]
				fmt.Fprintf(b, "  se[%s] cpu%d weight=%d %s\n", g.Name, cpu, sched.SEWeight(se), fmtAvg(&se.Avg))
			}
		}
		for _, g := range groups {
			if !g.IsRoot() {
				fmt.Fprintf(b, "tg[%s] load_avg=%d\n", g.Name, g.LoadAvg)
			}
		}
		_ = cpumask.None
	}
	return nil
}

func (r *Runner) cmdTaskStats(c *Command, b *strings.Builder) error {
	t, err := r.task(c)
	if err != nil {
		return err
	}
	s := &t.SE.Stats
	fmt.Fprintf(b, "%s state=%s cpu=%d sum_exec_runtime=%d nvcsw=%d nivcsw=%d nr_migrations=%d\n",
		taskName(t), t.State, t.CPU(), t.SE.SumExecRuntime, t.Nvcsw, t.Nivcsw, t.SE.NrMigrations)
	fmt.Fprintf(b, "  sched_info: pcount=%d run_delay=%d\n", t.SchedInfo.Pcount, t.SchedInfo.RunDelay)
	fmt.Fprintf(b, "  wait_sum=%d wait_count=%d wait_max=%d nr_wakeups=%d local=%d remote=%d migrate=%d sync=%d\n",
		s.WaitSum, s.WaitCount, s.WaitMax, s.NrWakeups, s.NrWakeupsLocal, s.NrWakeupsRemote, s.NrWakeupsMigrate, s.NrWakeupsSync)
	return nil
}

func (r *Runner) cmdSchedstat(c *Command, b *strings.Builder) error {
	cpus, err := r.cpus(c)
	if err != nil {
		return err
	}
	for _, cpu := range cpus {
		s := &r.k.Rqs[cpu].Schedstat
		fmt.Fprintf(b, "cpu%d yld_count=%d sched_count=%d sched_goidle=%d ttwu_count=%d ttwu_local=%d run_time=%d run_delay=%d pcount=%d\n",
			cpu, s.YldCount, s.SchedCount, s.SchedGoidle, s.TTWUCount, s.TTWULocal, s.RqCPUTime, s.RunDelay, s.Pcount)
		for i, sd := range r.k.Domains(int(cpu)) {
			st := &sd.Stats
			if st.TTWUWakeRemote+st.TTWUMoveAffine+st.TTWUMoveBalance == 0 {
				continue
			}
			fmt.Fprintf(b, "  domain%d %s ttwu_wake_remote=%d ttwu_move_affine=%d ttwu_move_balance=%d\n",
				i, sd.T.Name, st.TTWUWakeRemote, st.TTWUMoveAffine, st.TTWUMoveBalance)
		}
	}
	return nil
}

func (r *Runner) cmdTasks(c *Command, b *strings.Builder) error {
	for _, name := range r.names {
		t := r.tasks[name]
		fmt.Fprintf(b, "%s state=%s cpu=%d cgroup=%s on_rq=%d running=%d sum_exec_runtime=%d\n",
			taskName(t), t.State, t.CPU(), t.TG.Name, t.OnRq, b2i(t.OnCPU), t.SE.SumExecRuntime)
	}
	return nil
}
