package replay

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"

	"github.com/schedlab/schedlab/internal/cpumask"
	"github.com/schedlab/schedlab/internal/engine"
	"github.com/schedlab/schedlab/internal/sched"
	"github.com/schedlab/schedlab/internal/trace"
)

// Why a replayed task's run time and waits differ from the recording's.
//
// A replayed task's time on a CPU is work at the CPU's speed: the work of
// its recorded bursts (each burst's recorded time, scaled to capacity 1024
// and the highest frequency when --recorded-on or power:cpu_frequency
// records say how fast the recording's CPU ran) and the work the replay
// kernel charges it (context switches, cache refills, the wakeup path,
// balancing and interrupts on its CPU; balancing, charged as the time it
// takes, counts as that time's work at the CPU's speed). The speed is the CPU's capacity
// times its current frequency, lowered further by a busy SMT sibling.
// whyRecorder follows every stretch a task runs, split where cpufreq
// changes the frequency, and splits its time exactly:
//
//	time = work + (time − time×f/1024)                   frequency
//	            + (time×f/1024 − time×f/1024×cap/1024)   capacity
//	            + (time×f×cap/1024² − work)              SMT sharing
//
// so that, with the recording's side,
//
//	replayed − recorded runtime = edges + recording's scaling
//	    + frequency + capacity + SMT + kernel costs + remainder
//
// where edges are the recorded runs perf's runtime leaves out (before a
// CPU's first switch or after its last) and the remainder is what is left
// (the replay's own edges, rounding), which the tests keep near zero.
//
// A wait (wakeup or preemption to switch-in, as perf sched latency counts
// it) is split by what the CPU it ended on was doing: running another task
// (run-queue wait), leaving an idle state, waiting for an IPI, balancing,
// or idle otherwise. The recording only shows whether its CPU ran another
// task, so its idle-CPU time (its own idle exits and IPIs) stays in the
// remainder, with a minus sign.

// taskWhy is what one task's time on a CPU was made of in the replay.
type taskWhy struct {
	onCPU    float64 // ns on a CPU
	freq     float64 // ns lost to a frequency below the highest
	capacity float64 // ns lost to a capacity below 1024
	nominal  float64 // the work the time does at capacity × frequency
	costs    [sched.NrCosts]float64
}

// cpuWhy is one CPU as whyRecorder follows it.
type cpuWhy struct {
	cur    *sched.Task // nil when idle
	since  engine.Time
	scale  uint64 // FreqScale
	cap    uint64 // CPUCapacityOrig
	delays []delayIv
}

type delayIv struct {
	why      sched.Delay
	from, to uint64
}

// whyRecorder watches the replay's kernel for Why.
type whyRecorder struct {
	k     *sched.Kernel
	cpus  []cpuWhy
	tasks map[*sched.Task]*taskWhy
	// freqTime and freqWork weight the frequency the replay's tasks ran
	// at by their time on a CPU.
	freqTime, freqWork float64
}

func (w *whyRecorder) task(p *sched.Task) *taskWhy {
	a := w.tasks[p]
	if a == nil {
		a = &taskWhy{}
		w.tasks[p] = a
	}
	return a
}

// close ends the stretch the CPU's task ran since c.since, at now.
func (w *whyRecorder) close(c *cpuWhy) {
	now := w.k.Now()
	if c.cur != nil && now > c.since {
		dt := float64(now - c.since)
		f := float64(c.scale) / sched.SchedCapacityScale
		cp := float64(c.cap) / sched.SchedCapacityScale
		a := w.task(c.cur)
		a.onCPU += dt
		a.freq += dt * (1 - f)
		a.capacity += dt * f * (1 - cp)
		a.nominal += dt * f * cp
		w.freqTime += dt
		w.freqWork += dt * f
	}
	c.since = now
}

// attachWhy chains whyRecorder's hooks onto k's.
func attachWhy(k *sched.Kernel) *whyRecorder {
	w := &whyRecorder{k: k, cpus: make([]cpuWhy, k.NrCPUs()), tasks: map[*sched.Task]*taskWhy{}}
	for i, rq := range k.Rqs {
		w.cpus[i] = cpuWhy{since: k.Now(), scale: rq.FreqScale, cap: rq.CPUCapacityOrig}
		if !rq.Curr.IsIdleTask() {
			w.cpus[i].cur = rq.Curr
		}
	}
	h := &k.Hooks
	prevSwitch, prevFreq, prevCharge, prevDelay := h.Switch, h.Frequency, h.Charge, h.Delay
	h.Switch = func(cpu cpumask.CPU, prev *sched.Task, st sched.TaskState, next *sched.Task) {
		if prevSwitch != nil {
			prevSwitch(cpu, prev, st, next)
		}
		c := &w.cpus[cpu]
		w.close(c)
		c.cur = next
		if next.IsIdleTask() {
			c.cur = nil
		}
	}
	h.Frequency = func(cpu cpumask.CPU, scale uint64) {
		if prevFreq != nil {
			prevFreq(cpu, scale)
		}
		c := &w.cpus[cpu]
		w.close(c)
		c.scale = scale
	}
	h.Charge = func(p *sched.Task, cost sched.Cost, d engine.Time) {
		if prevCharge != nil {
			prevCharge(p, cost, d)
		}
		x := float64(d)
		if cost == sched.CostBalance {
			// Balancing is charged as the time it takes on the
			// task's CPU (lbExtendSegment), the others as work at
			// full speed: its work is that time at the CPU's
			// capacity and frequency, and the rest of it is theirs.
			rq := k.Rqs[p.CPU()]
			x *= float64(rq.FreqScale) * float64(rq.CPUCapacityOrig) / (sched.SchedCapacityScale * sched.SchedCapacityScale)
		}
		w.task(p).costs[cost] += x
	}
	h.Delay = func(cpu cpumask.CPU, why sched.Delay, from, to engine.Time) {
		if prevDelay != nil {
			prevDelay(cpu, why, from, to)
		}
		// In the trace's time, as the replay's events have it.
		c := &w.cpus[cpu]
		c.delays = append(c.delays, delayIv{why, uint64(from) + sched.ClockBase, uint64(to) + sched.ClockBase})
	}
	return w
}

// finish closes every CPU's current stretch.
func (w *whyRecorder) finish() {
	for i := range w.cpus {
		w.close(&w.cpus[i])
	}
}

// RuntimeWhy is a task's (or the total's) runtime difference, replayed
// less recorded, in ns, and its parts; the parts and Remainder add up to
// Diff.
type RuntimeWhy struct {
	Name               string
	Recorded, Replayed float64
	Diff               float64
	// Edges are recorded runs that perf's runtime leaves out (before a
	// CPU's first switch, after its last) and the replay replays.
	Edges float64
	// Recording is the recording's capacity and frequency: the scaling of
	// the bursts to work at 1024 and the highest frequency.
	Recording float64
	// Frequency, Capacity and SMT are the time the replay's CPUs took
	// beyond the work at full speed.
	Frequency, Capacity, SMT float64
	// Costs are the work the replay kernel charged, by category;
	// CostProgram's entry is zero.
	Costs [sched.NrCosts]float64
	// Remainder is the rest.
	Remainder float64
}

// KernelCosts is the sum of Costs.
func (r *RuntimeWhy) KernelCosts() float64 {
	var s float64
	for _, c := range r.Costs {
		s += c
	}
	return s
}

func (r *RuntimeWhy) add(o *RuntimeWhy) {
	r.Recorded += o.Recorded
	r.Replayed += o.Replayed
	r.Diff += o.Diff
	r.Edges += o.Edges
	r.Recording += o.Recording
	r.Frequency += o.Frequency
	r.Capacity += o.Capacity
	r.SMT += o.SMT
	for i := range r.Costs {
		r.Costs[i] += o.Costs[i]
	}
	r.Remainder += o.Remainder
}

// DelayWhy is a task's (or the total's) difference in the sum of its
// waits, replayed less recorded, in ns, and its parts.
type DelayWhy struct {
	Name               string
	Recorded, Replayed float64
	Diff               float64
	// RunQueue is the difference in the time the waits' CPUs ran
	// another task.
	RunQueue float64
	// IdleExit, IPI and Balance are the replay's waits on a CPU leaving
	// an idle state, waiting for an IPI, or balancing.
	IdleExit, IPI, Balance float64
	// Remainder is the rest: the replay's other time on an idle CPU less
	// the recording's time on an idle CPU (its own exits and IPIs).
	Remainder float64
}

func (d *DelayWhy) add(o *DelayWhy) {
	d.Recorded += o.Recorded
	d.Replayed += o.Replayed
	d.Diff += o.Diff
	d.RunQueue += o.RunQueue
	d.IdleExit += o.IdleExit
	d.IPI += o.IPI
	d.Balance += o.Balance
	d.Remainder += o.Remainder
}

// Why is the breakdown of each replayed task's runtime and waits against
// the recording's, by recorded pid, and the totals.
type Why struct {
	Runtime      []RuntimeWhy // by task, in the reconstruction's order
	Delay        []DelayWhy
	RuntimeTotal RuntimeWhy
	DelayTotal   DelayWhy
	// MeanFreq is the replay's frequency over its tasks' time on a CPU,
	// as a share of the highest (1 when cpufreq never lowered it).
	MeanFreq float64
}

// Why explains the replay's runtimes and waits (after the run).
func (b *Bench) Why() (*Why, error) {
	rep := b.ReplayEvents()
	recRun := map[int32]uint64{}
	repRun := map[int32]uint64{}
	recWait := map[int32]*[5]float64{} // busy, exit, IPI, balance, idle other
	repWait := map[int32]*[5]float64{}
	b.why.finish()
	lists := func(per [][]delayIv) []ivList {
		out := make([]ivList, len(per))
		for i, ivs := range per {
			out[i] = newIvList(ivs)
		}
		return out
	}
	var repDelays [][]delayIv
	for _, c := range b.why.cpus {
		repDelays = append(repDelays, c.delays)
	}
	recBusy, repBusy := lists(busyIntervals(b.tr.Events, b.tr.Start)), lists(busyIntervals(rep, 0))
	none, delays := ivList{}, lists(repDelays)
	waits := func(m map[int32]*[5]float64, busy, delays []ivList) func(pid, cpu int32, from, to uint64) {
		return func(pid, cpu int32, from, to uint64) {
			a := m[pid]
			if a == nil {
				a = new([5]float64)
				m[pid] = a
			}
			b, d := &none, &none
			if int(cpu) < len(busy) {
				b = &busy[cpu]
			}
			if int(cpu) < len(delays) {
				d = &delays[cpu]
			}
			splitWait(a, b, d, from, to)
		}
	}
	o, err := trace.Summarize(b.tr.Events, trace.LatencyOptions{NoMerge: true, Uncounted: true, OnWait: waits(recWait, recBusy, nil)})
	if err != nil {
		return nil, err
	}
	for _, r := range o.Rows {
		recRun[r.Pid] = r.Runtime
	}
	r, err := trace.Summarize(rep, trace.LatencyOptions{NoMerge: true, Uncounted: true, SetUp: b.SetUp(), OnWait: waits(repWait, repBusy, delays)})
	if err != nil {
		return nil, err
	}
	for _, x := range r.Rows {
		repRun[x.Pid] = x.Runtime
	}
	byRec := map[int32]*taskWhy{}
	for p, a := range b.why.tasks {
		if pid, ok := b.byPID[p.PID]; ok {
			byRec[pid] = a
		}
	}
	w := &Why{RuntimeTotal: RuntimeWhy{Name: "TOTAL:"}, DelayTotal: DelayWhy{Name: "TOTAL:"}}
	if b.why.freqTime > 0 {
		w.MeanFreq = b.why.freqWork / b.why.freqTime
	}
	for _, t := range b.tr.Tasks {
		name := fmt.Sprintf("%s:%d", t.Comm, t.Pid)
		var work uint64
		for _, s := range t.Steps {
			if s.Kind == Run {
				work += s.D
			}
		}
		rw := RuntimeWhy{Name: name, Recorded: float64(recRun[t.Pid]), Replayed: float64(repRun[t.Pid])}
		rw.Diff = rw.Replayed - rw.Recorded
		rw.Edges = float64(t.RanNs) - rw.Recorded
		rw.Recording = float64(work) - float64(t.RanNs)
		if a := byRec[t.Pid]; a != nil {
			rw.Frequency, rw.Capacity = a.freq, a.capacity
			done := 0.0
			for c, x := range a.costs {
				done += x
				if sched.Cost(c) != sched.CostProgram {
					rw.Costs[c] = x
				}
			}
			rw.SMT = a.nominal - done
		}
		rw.Remainder = rw.Diff - rw.Edges - rw.Recording - rw.Frequency - rw.Capacity - rw.SMT - rw.KernelCosts()
		w.Runtime = append(w.Runtime, rw)
		w.RuntimeTotal.add(&rw)

		dw := DelayWhy{Name: name}
		rec, rp := recWait[t.Pid], repWait[t.Pid]
		if rec == nil {
			rec = new([5]float64)
		}
		if rp == nil {
			rp = new([5]float64)
		}
		for i := range rec {
			dw.Recorded += rec[i]
			dw.Replayed += rp[i]
		}
		dw.Diff = dw.Replayed - dw.Recorded
		dw.RunQueue = rp[0] - rec[0]
		dw.IdleExit, dw.IPI, dw.Balance = rp[1], rp[2], rp[3]
		dw.Remainder = dw.Diff - dw.RunQueue - dw.IdleExit - dw.IPI - dw.Balance
		w.Delay = append(w.Delay, dw)
		w.DelayTotal.add(&dw)
	}
	return w, nil
}

// busyIntervals are, per CPU, the stretches it ran a task other than idle,
// from a time-ordered event list; a CPU whose first switch is from a task
// ran it since start.
func busyIntervals(evs []trace.Event, start uint64) [][]delayIv {
	var out [][]delayIv
	last := map[int32]uint64{}
	for _, ev := range evs {
		if ev.Type != trace.SchedSwitch || ev.CPU < 0 {
			continue
		}
		for int(ev.CPU) >= len(out) {
			out = append(out, nil)
		}
		from, ok := last[ev.CPU]
		if !ok {
			from = start
		}
		if ev.Task.Pid != 0 && ev.TS > from {
			out[ev.CPU] = append(out[ev.CPU], delayIv{from: from, to: ev.TS})
		}
		last[ev.CPU] = ev.TS
	}
	return out
}

// ivList is a CPU's intervals sorted by start, with the latest end so far
// at each, to find those overlapping a stretch.
type ivList struct {
	ivs   []delayIv
	maxTo []uint64
}

func newIvList(ivs []delayIv) ivList {
	ivs = append([]delayIv(nil), ivs...)
	sort.SliceStable(ivs, func(i, j int) bool { return ivs[i].from < ivs[j].from })
	l := ivList{ivs: ivs, maxTo: make([]uint64, len(ivs))}
	var m uint64
	for i, iv := range ivs {
		m = max(m, iv.to)
		l.maxTo[i] = m
	}
	return l
}

// overlapping calls f with each interval's part within from..to.
func (l *ivList) overlapping(from, to uint64, f func(iv delayIv, lo, hi uint64)) {
	i := sort.Search(len(l.ivs), func(i int) bool { return l.maxTo[i] > from })
	for ; i < len(l.ivs) && l.ivs[i].from < to; i++ {
		if lo, hi := max(l.ivs[i].from, from), min(l.ivs[i].to, to); hi > lo {
			f(l.ivs[i], lo, hi)
		}
	}
}

// splitWait adds the wait from..to on a CPU to a by what the CPU did:
// [0] ran another task (busy), [1] left an idle state, [2] waited for an
// IPI, [3] balanced, [4] anything else; each instant counts once, in that
// order of precedence.
func splitWait(a *[5]float64, busy, delays *ivList, from, to uint64) {
	if to <= from {
		return
	}
	type mark struct {
		at           uint64
		class, delta int
	}
	var marks []mark
	busy.overlapping(from, to, func(_ delayIv, lo, hi uint64) {
		marks = append(marks, mark{lo, 0, 1}, mark{hi, 0, -1})
	})
	delays.overlapping(from, to, func(d delayIv, lo, hi uint64) {
		c := 3
		switch d.why {
		case sched.DelayIdleExit:
			c = 1
		case sched.DelayIPI:
			c = 2
		}
		marks = append(marks, mark{lo, c, 1}, mark{hi, c, -1})
	})
	sort.Slice(marks, func(i, j int) bool { return marks[i].at < marks[j].at })
	var open [4]int
	at := from
	for _, m := range marks {
		if m.at > at {
			a[classOf(&open)] += float64(m.at - at)
			at = m.at
		}
		open[m.class] += m.delta
	}
	if to > at {
		a[classOf(&open)] += float64(to - at)
	}
}

func classOf(open *[4]int) int {
	for c, n := range open {
		if n > 0 {
			return c
		}
	}
	return 4
}

// whyRows is how many tasks, the largest differences first, the breakdown
// lists besides the total.
const whyRows = 5

// Write prints the two breakdowns: the runtimes', then the delays',
// each the total and the tasks with the largest differences, when the
// replay's differ from the recording's.
func (w *Why) Write(out io.Writer) error {
	bw := bufio.NewWriter(out)
	ms := func(x float64) string { return fmt.Sprintf("%.3f", x/1e6) }
	top := func(n int, diff func(i int) float64) []int {
		var idx []int
		for i := 0; i < n; i++ {
			if math.Abs(diff(i)) >= 1000 { // 1 µs
				idx = append(idx, i)
			}
		}
		sort.SliceStable(idx, func(a, b int) bool { return math.Abs(diff(idx[a])) > math.Abs(diff(idx[b])) })
		return idx[:min(len(idx), whyRows)]
	}
	if math.Abs(w.RuntimeTotal.Diff) >= 1000 || len(top(len(w.Runtime), func(i int) float64 { return w.Runtime[i].Diff })) > 0 {
		fmt.Fprintf(bw, "\nWhy the runtimes differ (ms; replayed - recorded = the parts + remainder):\n")
		head := []string{"difference", "edges", "recording", "frequency", "capacity", "SMT", "kernel", "remainder"}
		fmt.Fprintf(bw, "  %-23s|", "Task")
		for _, h := range head {
			fmt.Fprintf(bw, " %10s |", h)
		}
		bw.WriteString("\n")
		row := func(r *RuntimeWhy) {
			fmt.Fprintf(bw, "  %-23s|", r.Name)
			for _, x := range []float64{r.Diff, r.Edges, r.Recording, r.Frequency, r.Capacity, r.SMT, r.KernelCosts(), r.Remainder} {
				fmt.Fprintf(bw, " %10s |", ms(x))
			}
			bw.WriteString("\n")
		}
		row(&w.RuntimeTotal)
		for _, i := range top(len(w.Runtime), func(i int) float64 { return w.Runtime[i].Diff }) {
			row(&w.Runtime[i])
		}
		var kc []string
		for c, x := range w.RuntimeTotal.Costs {
			if math.Abs(x) >= 500 {
				kc = append(kc, fmt.Sprintf("%s %s", sched.Cost(c), ms(x)))
			}
		}
		if len(kc) > 0 {
			fmt.Fprintf(bw, "  kernel, TOTAL: %s\n", strings.Join(kc, ", "))
		}
		if w.MeanFreq > 0 && w.MeanFreq < 0.9995 {
			fmt.Fprintf(bw, "  the replay's tasks ran at %.1f%% of their CPUs' highest frequency on average (cpufreq)\n", 100*w.MeanFreq)
		}
	}
	if math.Abs(w.DelayTotal.Diff) >= 1000 {
		fmt.Fprintf(bw, "\nWhy the delays differ (ms, summed over the waits counted; replayed - recorded = the parts + remainder):\n")
		head := []string{"difference", "run queue", "idle exits", "IPIs", "balancing", "remainder"}
		fmt.Fprintf(bw, "  %-23s|", "Task")
		for _, h := range head {
			fmt.Fprintf(bw, " %10s |", h)
		}
		bw.WriteString("\n")
		row := func(d *DelayWhy) {
			fmt.Fprintf(bw, "  %-23s|", d.Name)
			for _, x := range []float64{d.Diff, d.RunQueue, d.IdleExit, d.IPI, d.Balance, d.Remainder} {
				fmt.Fprintf(bw, " %10s |", ms(x))
			}
			bw.WriteString("\n")
		}
		row(&w.DelayTotal)
		for _, i := range top(len(w.Delay), func(i int) float64 { return w.Delay[i].Diff }) {
			row(&w.Delay[i])
		}
	}
	return bw.Flush()
}
