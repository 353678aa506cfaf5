package schedstat

import (
	"bufio"
	"fmt"
	"io"
	"math"
)

// Delta is what happened between two snapshots: every counter is the
// difference, Elapsed the jiffies between them.
type Delta struct {
	Elapsed uint64
	CPUs    []CPUStats
}

// Diff subtracts before from after. Both must list the same CPUs with the
// same domains (level, name and span); a counter that went down is an
// error, since schedstat counters only grow while the machine runs.
func Diff(before, after *Snapshot) (Delta, error) {
	if after.Timestamp < before.Timestamp {
		return Delta{}, fmt.Errorf("schedstat diff: timestamp %d before %d", after.Timestamp, before.Timestamp)
	}
	if len(before.CPUs) != len(after.CPUs) {
		return Delta{}, fmt.Errorf("schedstat diff: %d CPUs before, %d after", len(before.CPUs), len(after.CPUs))
	}
	d := Delta{Elapsed: after.Timestamp - before.Timestamp, CPUs: make([]CPUStats, len(after.CPUs))}
	var err error
	sub := func(what string, a, b uint64) uint64 {
		if b < a && err == nil {
			err = fmt.Errorf("schedstat diff: %s went down from %d to %d", what, a, b)
		}
		return b - a
	}
	for i := range after.CPUs {
		b, a := &before.CPUs[i], &after.CPUs[i]
		if b.CPU != a.CPU || len(b.Domains) != len(a.Domains) {
			return Delta{}, fmt.Errorf("schedstat diff: cpu%d does not match cpu%d (or their domains differ)", b.CPU, a.CPU)
		}
		c := a.CPU.String()
		r := &d.CPUs[i]
		*r = CPUStats{CPU: a.CPU,
			YldCount:    sub(c+" yld_count", b.YldCount, a.YldCount),
			ArrayExp:    sub(c+" array_exp", b.ArrayExp, a.ArrayExp),
			SchedCount:  sub(c+" sched_count", b.SchedCount, a.SchedCount),
			SchedGoidle: sub(c+" sched_goidle", b.SchedGoidle, a.SchedGoidle),
			TtwuCount:   sub(c+" ttwu_count", b.TtwuCount, a.TtwuCount),
			TtwuLocal:   sub(c+" ttwu_local", b.TtwuLocal, a.TtwuLocal),
			RqCPUTime:   sub(c+" rq_cpu_time", b.RqCPUTime, a.RqCPUTime),
			RunDelay:    sub(c+" run_delay", b.RunDelay, a.RunDelay),
			Pcount:      sub(c+" pcount", b.Pcount, a.Pcount),
			Domains:     make([]DomainStats, len(a.Domains)),
		}
		for j := range a.Domains {
			bd, ad := &b.Domains[j], &a.Domains[j]
			if bd.Level != ad.Level || bd.Name != ad.Name || !bd.Span.Equal(ad.Span) || bd.Span.Size() != ad.Span.Size() {
				return Delta{}, fmt.Errorf("schedstat diff: %s domain%d changed between the snapshots", c, j)
			}
			dn := fmt.Sprintf("%s domain%d ", c, j)
			rd := &r.Domains[j]
			*rd = DomainStats{Level: ad.Level, Name: ad.Name, Span: ad.Span.Clone()}
			for t := IdleType(0); t < NumIdleTypes; t++ {
				x, y := &bd.LB[t], &ad.LB[t]
				p := dn + t.String() + "_"
				rd.LB[t] = LBStats{
					LbCount:           sub(p+"lb_count", x.LbCount, y.LbCount),
					LbBalanced:        sub(p+"lb_balanced", x.LbBalanced, y.LbBalanced),
					LbFailed:          sub(p+"lb_failed", x.LbFailed, y.LbFailed),
					LbImbalance:       sub(p+"lb_imbalance", x.LbImbalance, y.LbImbalance),
					LbImbalanceLoad:   sub(p+"lb_imbalance_load", x.LbImbalanceLoad, y.LbImbalanceLoad),
					LbImbalanceUtil:   sub(p+"lb_imbalance_util", x.LbImbalanceUtil, y.LbImbalanceUtil),
					LbImbalanceTask:   sub(p+"lb_imbalance_task", x.LbImbalanceTask, y.LbImbalanceTask),
					LbImbalanceMisfit: sub(p+"lb_imbalance_misfit", x.LbImbalanceMisfit, y.LbImbalanceMisfit),
					LbGained:          sub(p+"lb_gained", x.LbGained, y.LbGained),
					LbHotGained:       sub(p+"lb_hot_gained", x.LbHotGained, y.LbHotGained),
					LbNobusyq:         sub(p+"lb_nobusyq", x.LbNobusyq, y.LbNobusyq),
					LbNobusyg:         sub(p+"lb_nobusyg", x.LbNobusyg, y.LbNobusyg),
				}
			}
			rd.AlbCount = sub(dn+"alb_count", bd.AlbCount, ad.AlbCount)
			rd.AlbFailed = sub(dn+"alb_failed", bd.AlbFailed, ad.AlbFailed)
			rd.AlbPushed = sub(dn+"alb_pushed", bd.AlbPushed, ad.AlbPushed)
			rd.SbeCount = sub(dn+"sbe_count", bd.SbeCount, ad.SbeCount)
			rd.SbeBalanced = sub(dn+"sbe_balanced", bd.SbeBalanced, ad.SbeBalanced)
			rd.SbePushed = sub(dn+"sbe_pushed", bd.SbePushed, ad.SbePushed)
			rd.SbfCount = sub(dn+"sbf_count", bd.SbfCount, ad.SbfCount)
			rd.SbfBalanced = sub(dn+"sbf_balanced", bd.SbfBalanced, ad.SbfBalanced)
			rd.SbfPushed = sub(dn+"sbf_pushed", bd.SbfPushed, ad.SbfPushed)
			rd.TtwuWakeRemote = sub(dn+"ttwu_wake_remote", bd.TtwuWakeRemote, ad.TtwuWakeRemote)
			rd.TtwuMoveAffine = sub(dn+"ttwu_move_affine", bd.TtwuMoveAffine, ad.TtwuMoveAffine)
			rd.TtwuMoveBalance = sub(dn+"ttwu_move_balance", bd.TtwuMoveBalance, ad.TtwuMoveBalance)
		}
	}
	if err != nil {
		return Delta{}, err
	}
	return d, nil
}

// summary is a Delta averaged over CPUs, as perf sched stats' <ALL CPUS
// SUMMARY>: every counter summed over the CPUs and divided by their number
// (integer division, as perf does). Domains are averaged per level over the
// CPUs that have that level.
type summary struct {
	elapsed uint64
	cpu     CPUStats
	domains []DomainStats
}

func summarize(d *Delta) summary {
	s := summary{elapsed: d.Elapsed}
	n := uint64(len(d.CPUs))
	var counts []uint64
	for i := range d.CPUs {
		c := &d.CPUs[i]
		s.cpu.YldCount += c.YldCount
		s.cpu.ArrayExp += c.ArrayExp
		s.cpu.SchedCount += c.SchedCount
		s.cpu.SchedGoidle += c.SchedGoidle
		s.cpu.TtwuCount += c.TtwuCount
		s.cpu.TtwuLocal += c.TtwuLocal
		s.cpu.RqCPUTime += c.RqCPUTime
		s.cpu.RunDelay += c.RunDelay
		s.cpu.Pcount += c.Pcount
		for j := range c.Domains {
			dom := &c.Domains[j]
			for len(s.domains) <= j {
				s.domains = append(s.domains, DomainStats{Level: len(s.domains)})
				counts = append(counts, 0)
			}
			counts[j]++
			sd := &s.domains[j]
			if sd.Name == "" {
				sd.Name = dom.Name
			}
			forEachDomainCounter(sd, dom, func(dst *uint64, src uint64) { *dst += src })
		}
	}
	if n > 0 {
		for _, p := range []*uint64{&s.cpu.YldCount, &s.cpu.ArrayExp, &s.cpu.SchedCount,
			&s.cpu.SchedGoidle, &s.cpu.TtwuCount, &s.cpu.TtwuLocal, &s.cpu.RqCPUTime,
			&s.cpu.RunDelay, &s.cpu.Pcount} {
			*p /= n
		}
	}
	for j := range s.domains {
		k := counts[j]
		forEachDomainCounter(&s.domains[j], &s.domains[j], func(dst *uint64, _ uint64) { *dst /= k })
	}
	return s
}

// forEachDomainCounter calls f for every counter of dst with the matching
// counter of src.
func forEachDomainCounter(dst, src *DomainStats, f func(dst *uint64, src uint64)) {
	for t := range dst.LB {
		a, b := &dst.LB[t], &src.LB[t]
		f(&a.LbCount, b.LbCount)
		f(&a.LbBalanced, b.LbBalanced)
		f(&a.LbFailed, b.LbFailed)
		f(&a.LbImbalance, b.LbImbalance)
		f(&a.LbImbalanceLoad, b.LbImbalanceLoad)
		f(&a.LbImbalanceUtil, b.LbImbalanceUtil)
		f(&a.LbImbalanceTask, b.LbImbalanceTask)
		f(&a.LbImbalanceMisfit, b.LbImbalanceMisfit)
		f(&a.LbGained, b.LbGained)
		f(&a.LbHotGained, b.LbHotGained)
		f(&a.LbNobusyq, b.LbNobusyq)
		f(&a.LbNobusyg, b.LbNobusyg)
	}
	f(&dst.AlbCount, src.AlbCount)
	f(&dst.AlbFailed, src.AlbFailed)
	f(&dst.AlbPushed, src.AlbPushed)
	f(&dst.SbeCount, src.SbeCount)
	f(&dst.SbeBalanced, src.SbeBalanced)
	f(&dst.SbePushed, src.SbePushed)
	f(&dst.SbfCount, src.SbfCount)
	f(&dst.SbfBalanced, src.SbfBalanced)
	f(&dst.SbfPushed, src.SbfPushed)
	f(&dst.TtwuWakeRemote, src.TtwuWakeRemote)
	f(&dst.TtwuMoveAffine, src.TtwuMoveAffine)
	f(&dst.TtwuMoveBalance, src.TtwuMoveBalance)
}

const separator = "----------------------------------------------------------------------------------------------------"

// comparison prints rows of one value per run.
type comparison struct {
	w    *bufio.Writer
	runs int
}

func pct(x, of uint64) float64 {
	if of == 0 {
		return 0
	}
	return float64(x) / float64(of) * 100
}

// change is perf's PCT_CHANGE: (v - base) / base × 100, 0 when base is 0.
func change(base, v float64) float64 {
	if base == 0 {
		return 0
	}
	return (v - base) / math.Abs(base) * 100
}

// row prints "DESC : v1, v2 | chg2 | ..." and, when of is given, each
// value's percentage of of[i] in "( ... )", or when jiffies is given the
// average jiffies between events in "$ ... $".
func (c *comparison) row(desc string, v []uint64, of []uint64, jiffies []uint64) {
	fmt.Fprintf(c.w, "%-65s:", desc)
	for i, x := range v {
		if i > 0 {
			c.w.WriteByte(',')
		}
		fmt.Fprintf(c.w, " %11d", x)
	}
	c.changes(toFloat(v))
	if of != nil {
		c.w.WriteString("  (")
		for i, x := range v {
			if i > 0 {
				c.w.WriteByte(',')
			}
			fmt.Fprintf(c.w, " %8.2f%%", pct(x, of[i]))
		}
		c.w.WriteString(" )")
	}
	if jiffies != nil {
		c.w.WriteString("  $")
		for i, x := range v {
			if i > 0 {
				c.w.WriteByte(',')
			}
			avg := 0.0
			if x != 0 {
				avg = float64(jiffies[i]) / float64(x)
			}
			fmt.Fprintf(c.w, " %11.2f", avg)
		}
		c.w.WriteString(" $")
	}
	c.w.WriteByte('\n')
}

func toFloat(v []uint64) []float64 {
	f := make([]float64, len(v))
	for i, x := range v {
		f[i] = float64(x)
	}
	return f
}

func (c *comparison) changes(v []float64) {
	if len(v) < 2 {
		return
	}
	c.w.WriteString("  |")
	for _, x := range v[1:] {
		fmt.Fprintf(c.w, " %8.2f%% |", change(v[0], x))
	}
}

// rowFloat prints a derived average ("*... : 1.40, 1.52").
func (c *comparison) rowFloat(desc string, v []float64) {
	fmt.Fprintf(c.w, "*%-64s:", desc)
	for i, x := range v {
		if i > 0 {
			c.w.WriteByte(',')
		}
		fmt.Fprintf(c.w, " %11.2f", x)
	}
	c.w.WriteByte('\n')
}

func (c *comparison) category(name string) {
	pre := (100 - len(name)) / 2
	post := 100 - len(name) - pre
	fmt.Fprintf(c.w, "%s%s%s\n", separator[:pre], name, separator[:post])
}

func (c *comparison) header(last string) {
	fmt.Fprintf(c.w, "%-66s", "DESC")
	for i := 0; i < c.runs; i++ {
		if i > 0 {
			c.w.WriteByte(' ')
		}
		fmt.Fprintf(c.w, " %11s", fmt.Sprintf("COUNT%d", i+1))
	}
	if c.runs > 1 {
		c.w.WriteString("  |")
		for i := 1; i < c.runs; i++ {
			fmt.Fprintf(c.w, " %9s |", fmt.Sprintf("PCT_CHG%d", i+1))
		}
	}
	if last != "" {
		fmt.Fprintf(c.w, "  %s", last)
	}
	c.w.WriteByte('\n')
	c.w.WriteString(separator + "\n")
}

// FormatComparison writes the schedstat comparison of one or more runs,
// each a Delta named by names[i]: the layout of `perf sched stats
// report/diff` (DESC, counts, PCT_CHANGE of each run against the first,
// percentages in "( )" and average jiffies between events in "$ $"), with
// the descriptions perf prints under -v, generalised to any number of runs,
// plus sched-scoreboard's wakeup block (wakeups on the same CPU and on each
// domain level, affine wakeups per level, as percentages of
// try_to_wake_up calls). Every value is the per-CPU average; domain levels
// are named after the first CPU that has them (domain<N> when the snapshot
// had no names).
func FormatComparison(w io.Writer, diffs []Delta, names []string) error {
	if len(diffs) == 0 {
		return fmt.Errorf("schedstat comparison: no runs")
	}
	if len(names) != len(diffs) {
		return fmt.Errorf("schedstat comparison: %d runs but %d names", len(diffs), len(names))
	}
	sums := make([]summary, len(diffs))
	levels := 0
	for i := range diffs {
		sums[i] = summarize(&diffs[i])
		if n := len(sums[i].domains); n > levels {
			levels = n
		}
	}
	c := &comparison{w: bufio.NewWriter(w), runs: len(diffs)}
	bw := c.w
	vals := func(f func(s *summary) uint64) []uint64 {
		v := make([]uint64, len(sums))
		for i := range sums {
			v[i] = f(&sums[i])
		}
		return v
	}
	dom := func(s *summary, l int) *DomainStats {
		if l < len(s.domains) {
			return &s.domains[l]
		}
		return &DomainStats{}
	}
	levelName := func(l int) string {
		for i := range sums {
			if l < len(sums[i].domains) && sums[i].domains[l].Name != "" {
				return sums[i].domains[l].Name
			}
		}
		return fmt.Sprintf("domain%d", l)
	}

	bw.WriteString("Description\n" + separator + "\n")
	fmt.Fprintf(bw, "%-30s-> %s\n", "DESC", "Description of the field")
	fmt.Fprintf(bw, "%-30s-> %s\n", "COUNTn", "Value of the field in run n, averaged over CPUs")
	fmt.Fprintf(bw, "%-30s-> %s\n", "PCT_CHGn", "Percent change of run n from run 1")
	fmt.Fprintf(bw, "%-30s-> %s\n", "( )", "Percentage of the related count (goidle of sched_count, ttwu_local and wakeups of ttwu_count, run_delay of rq_cpu_time)")
	fmt.Fprintf(bw, "%-30s-> %s\n", "$ $", "Avg time in jiffies between two consecutive occurrence of event")
	bw.WriteString(separator + "\n")
	for i, n := range names {
		fmt.Fprintf(bw, "%-30s-> %s\n", fmt.Sprintf("RUN%d", i+1), n)
	}
	bw.WriteString(separator + "\n\n")
	elapsed := vals(func(s *summary) uint64 { return s.elapsed })
	fmt.Fprintf(bw, "%-65s:", "Time elapsed (in jiffies)")
	for i, x := range elapsed {
		if i > 0 {
			bw.WriteByte(',')
		}
		fmt.Fprintf(bw, " %11d", x)
	}
	bw.WriteString("\n" + separator + "\n")

	bw.WriteString("CPU: <ALL CPUS SUMMARY>\n" + separator + "\n")
	c.header("( % )")
	schedCount := vals(func(s *summary) uint64 { return s.cpu.SchedCount })
	ttwu := vals(func(s *summary) uint64 { return s.cpu.TtwuCount })
	runtime := vals(func(s *summary) uint64 { return s.cpu.RqCPUTime })
	c.row("sched_yield() count", vals(func(s *summary) uint64 { return s.cpu.YldCount }), nil, nil)
	c.row("schedule() called", schedCount, nil, nil)
	c.row("schedule() left the processor idle", vals(func(s *summary) uint64 { return s.cpu.SchedGoidle }), schedCount, nil)
	c.row("try_to_wake_up() was called", ttwu, nil, nil)
	c.row("try_to_wake_up() was called to wake up the local cpu", vals(func(s *summary) uint64 { return s.cpu.TtwuLocal }), ttwu, nil)
	c.row("total runtime by tasks on this processor (in ns)", runtime, nil, nil)
	c.row("total waittime by tasks on this processor (in ns)", vals(func(s *summary) uint64 { return s.cpu.RunDelay }), runtime, nil)
	c.row("total timeslices run on this cpu", vals(func(s *summary) uint64 { return s.cpu.Pcount }), nil, nil)
	c.category(" <Wakeup Info> ")
	c.row("Wakeups on same CPU", vals(func(s *summary) uint64 { return s.cpu.TtwuLocal }), ttwu, nil)
	for l := 0; l < levels; l++ {
		c.row("Wakeups on same "+levelName(l), vals(func(s *summary) uint64 { return dom(s, l).TtwuWakeRemote }), ttwu, nil)
	}
	for l := 0; l < levels; l++ {
		c.row("Affine wakeups on same "+levelName(l), vals(func(s *summary) uint64 { return dom(s, l).TtwuMoveAffine }), ttwu, nil)
	}
	bw.WriteString(separator + "\n")

	for l := 0; l < levels; l++ {
		fmt.Fprintf(bw, "CPU: <ALL CPUS SUMMARY> | DOMAIN: %s\n", levelName(l))
		bw.WriteString(separator + "\n")
		c.header("$ AVG_JIFFIES $")
		for _, t := range []IdleType{CPUNotIdle, CPUIdle, CPUNewlyIdle} {
			on := "cpu " + t.String()
			if t == CPUNewlyIdle {
				on = "cpu newly idle"
			}
			c.category(" <Category " + t.String() + "> ")
			lb := func(f func(l *LBStats) uint64) []uint64 {
				return vals(func(s *summary) uint64 { return f(&dom(s, l).LB[t]) })
			}
			count := lb(func(x *LBStats) uint64 { return x.LbCount })
			balanced := lb(func(x *LBStats) uint64 { return x.LbBalanced })
			failed := lb(func(x *LBStats) uint64 { return x.LbFailed })
			gained := lb(func(x *LBStats) uint64 { return x.LbGained })
			c.row("load_balance() count on "+on, count, nil, elapsed)
			c.row("load_balance() found balanced on "+on, balanced, nil, elapsed)
			c.row("load_balance() move task failed on "+on, failed, nil, elapsed)
			c.row("imbalance in load on "+on, lb(func(x *LBStats) uint64 { return x.LbImbalanceLoad }), nil, nil)
			c.row("imbalance in utilization on "+on, lb(func(x *LBStats) uint64 { return x.LbImbalanceUtil }), nil, nil)
			c.row("imbalance in number of tasks on "+on, lb(func(x *LBStats) uint64 { return x.LbImbalanceTask }), nil, nil)
			c.row("imbalance in misfit tasks on "+on, lb(func(x *LBStats) uint64 { return x.LbImbalanceMisfit }), nil, nil)
			if anyNonZero(lb(func(x *LBStats) uint64 { return x.LbImbalance })) {
				c.row("imbalance (undivided, schedstat v15/v16) on "+on, lb(func(x *LBStats) uint64 { return x.LbImbalance }), nil, nil)
			}
			c.row("pull_task() count on "+on, gained, nil, nil)
			c.row("pull_task() when target task was cache-hot on "+on, lb(func(x *LBStats) uint64 { return x.LbHotGained }), nil, nil)
			c.row("load_balance() failed to find busier queue on "+on, lb(func(x *LBStats) uint64 { return x.LbNobusyq }), nil, elapsed)
			c.row("load_balance() failed to find busier group on "+on, lb(func(x *LBStats) uint64 { return x.LbNobusyg }), nil, elapsed)
			// Derived as perf does: success = count - balanced - failed,
			// and tasks pulled per success.
			success := make([]float64, len(sums))
			avg := make([]float64, len(sums))
			for i := range sums {
				success[i] = float64(count[i]) - float64(balanced[i]) - float64(failed[i])
				if success[i] != 0 {
					avg[i] = float64(gained[i]) / success[i]
				}
			}
			fmt.Fprintf(bw, "*%-64s:", "load_balance() success count on "+on)
			for i, x := range success {
				if i > 0 {
					bw.WriteByte(',')
				}
				fmt.Fprintf(bw, " %11.0f", x)
			}
			c.changes(success)
			bw.WriteByte('\n')
			c.rowFloat("avg task pulled per successful lb attempt ("+on+")", avg)
		}
		c.category(" <Category active_load_balance()> ")
		c.row("active_load_balance() count", vals(func(s *summary) uint64 { return dom(s, l).AlbCount }), nil, nil)
		c.row("active_load_balance() move task failed", vals(func(s *summary) uint64 { return dom(s, l).AlbFailed }), nil, nil)
		c.row("active_load_balance() successfully moved a task", vals(func(s *summary) uint64 { return dom(s, l).AlbPushed }), nil, nil)
		c.category(" <Wakeup Info> ")
		c.row("try_to_wake_up() awoke a task that last ran on a diff cpu", vals(func(s *summary) uint64 { return dom(s, l).TtwuWakeRemote }), nil, nil)
		c.row("try_to_wake_up() moved task because cache-cold on own cpu", vals(func(s *summary) uint64 { return dom(s, l).TtwuMoveAffine }), nil, nil)
		c.row("try_to_wake_up() started passive balancing", vals(func(s *summary) uint64 { return dom(s, l).TtwuMoveBalance }), nil, nil)
		bw.WriteString(separator + "\n")
	}
	return bw.Flush()
}

func anyNonZero(v []uint64) bool {
	for _, x := range v {
		if x != 0 {
			return true
		}
	}
	return false
}
