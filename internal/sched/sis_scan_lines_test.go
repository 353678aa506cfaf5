package sched

import (
	"testing"

	"github.com/schedlab/schedlab/internal/cpumask"
	"github.com/schedlab/schedlab/internal/engine"
	"github.com/schedlab/schedlab/internal/kernels"
)

// TestSISScanLinesByDistance: what select_idle_cpu's scan costs the waker
// and what SIS_PROP folds into avg_scan_cost, with and without
// Settings.SISScanLines.
//
// Reference: fair.c:select_idle_cpu (v6.0, SIS_PROP on): the scan from
// target + 1 calls __select_idle_cpu → available_idle_cpu on each CPU
// until one is idle (a "break"), and then measures its own time with
// cpu_clock() into avg_scan_cost (update_avg: avg += (sample − avg) / 8)
// and spends it from wake_avg_idle.
//
// Kunpeng 920-128: CPUs 0-3 are a cluster, 4-7 the next one, 0-31 the
// die (LLC). CPUs 0-6 run hogs, 7 is idle; the waker is on CPU 0 and
// target is 0. With ample budget the scan examines 1, 2, 3 (the waker's
// cluster), 4, 5, 6 and 7 (another cluster), and returns 7: 7 CPUs, 3
// lines at line_same_cluster and 4 at line_same_llc. With the lines on,
// the waker is charged 7 × sis_scan_loop_ns plus the lines and SIS_PROP
// takes the same time; off, 7 × sis_scan_cpu_ns is charged and SIS_PROP
// takes 7 × model_sis_scan_cost_ns, with no line counted.
func TestSISScanLinesByDistance(t *testing.T) {
	const (
		cl, llc   = 45, 170
		loop, cpu = 18, 50
		avg0      = 99
		wakeAvg   = 1_000_000
	)
	busy := []int{0, 1, 2, 3, 4, 5, 6}
	for _, on := range []bool{true, false} {
		s := MustBaseline(kernels.V60)
		s.SISProp, s.SISUtil = true, false
		s.SISScanLines = on
		s.CostJitterPct = 0
		r, p := sisProbe(t, "kunpeng920-128", s, busy)
		k := r.on(0)
		k.costsOn = true
		k.Costs.LineSameCluster, k.Costs.LineSameLLC = cl, llc
		k.Costs.SISScanLoop, k.Costs.SISScanCPU = loop, cpu
		k.S.SISScanCost = 25
		k.setIdleCores(0, false)
		rq := k.Rqs[0]
		rq.WakeAvgIdle, rq.WakeStamp = wakeAvg, k.Jiffies()
		sd := k.sdLLC(0)
		sd.AvgScanCost = avg0

		var charged engine.Time
		k.Hooks.Charge = func(_ *Task, c Cost, d engine.Time) {
			if c == CostWakeupScan {
				charged += d
			}
		}
		before := rq.Wakeup
		got := k.selectIdleCPU(p, sd, false, 0)
		k.chargeWakeupPath(rq, before, 0, 0)

		scanned := rq.Wakeup.SISScanned - before.SISScanned
		lines := rq.Wakeup.SISScanLineNs - before.SISScanLineNs
		wantLines, wantCharge, sample := engine.Time(3*cl+4*llc), engine.Time(7*loop+3*cl+4*llc), uint64(7*loop+3*cl+4*llc)
		if !on {
			wantLines, wantCharge, sample = 0, 7*cpu, 7*25
		}
		wantAvg := uint64(avg0 + (int64(sample)-avg0)/8)
		if got != 7 || scanned != 7 {
			t.Fatalf("lines %v: select_idle_cpu = %v after %d CPUs, want 7 after 7", on, got, scanned)
		}
		if lines != wantLines {
			t.Errorf("lines %v: scan's lines %d ns, want %d", on, lines, wantLines)
		}
		if charged != wantCharge {
			t.Errorf("lines %v: waker charged %d ns for the scan, want %d", on, charged, wantCharge)
		}
		if sd.AvgScanCost != wantAvg || rq.WakeAvgIdle != wakeAvg-sample {
			t.Errorf("lines %v: avg_scan_cost %d, wake_avg_idle %d; want %d, %d", on, sd.AvgScanCost, rq.WakeAvgIdle, wantAvg, wakeAvg-sample)
		}
	}
}

// TestSISScanLinesDry: the comparison kernels' dry runs of select_idle_cpu
// (selectIdleCPUDry) count no line, as they count no CPU scanned.
func TestSISScanLinesDry(t *testing.T) {
	s := MustBaseline(kernels.V60)
	s.SISProp, s.SISUtil = true, false
	r, p := sisProbe(t, "kunpeng920-128", s, []int{0, 1, 2, 3, 4})
	k := r.on(0)
	k.costsOn = true
	k.Costs.LineSameCluster, k.Costs.LineSameLLC = 45, 170
	k.Rqs[0].WakeAvgIdle, k.Rqs[0].WakeStamp = 1_000_000, k.Jiffies()
	before := k.Rqs[0].Wakeup
	if got := k.selectIdleCPUDry(p, k.sdLLC(0), false, 0); got != cpumask.CPU(5) {
		t.Fatalf("dry select_idle_cpu = %v, want 5", got)
	}
	if after := k.Rqs[0].Wakeup; after != before {
		t.Errorf("a dry scan changed the wakeup counters: %+v -> %+v", before, after)
	}
}

// TestSISScanInvalidate: the CPUs a wakeup scan examined pay for the
// copies of their runqueue lines it left (Settings.SISScanInvalidate), at
// their next switch, and only then.
//
// Reference: a store to a cache line that other CPUs hold a copy of waits
// until those copies are invalidated (the coherence protocol's upgrade);
// schedule() stores to its runqueue's line (rq->__lock, nr_running,
// curr), which available_idle_cpu read from the waking CPU.
//
// Kunpeng 920-128, as in TestSISScanLinesByDistance: the waker on CPU 0
// scans 1-7, so CPUs 1-3 (its cluster) owe line_same_cluster (45) and 4-7
// (another cluster) line_same_llc (170). A second reader keeps the
// farthest: CPU 5 reading CPU 1 (another cluster: 170) raises 1's debt to
// 170, CPU 5 reading CPU 6 (its own cluster: 45) leaves 6's at 170. CPU 4
// switching to a task charges that task 170 ns of wakeup-scan time and
// clears the debt; CPU 6 switching to idle clears it with no one charged.
// Off, nothing is owed or charged. A dry scan leaves no debt.
func TestSISScanInvalidate(t *testing.T) {
	const cl, llc = 45, 170
	busy := []int{0, 1, 2, 3, 4, 5, 6}
	for _, on := range []bool{true, false} {
		s := MustBaseline(kernels.V60)
		s.SISProp, s.SISUtil = true, false
		s.SISScanLines, s.SISScanInvalidate = true, on
		s.CostJitterPct = 0
		r, p := sisProbe(t, "kunpeng920-128", s, busy)
		k := r.on(0)
		k.costsOn = true
		k.Costs.LineSameCluster, k.Costs.LineSameLLC = cl, llc
		k.setIdleCores(0, false)
		for _, rq := range k.Rqs {
			rq.sisInvalNs, rq.Wakeup.SISInvalNs = 0, 0
		}
		k.Rqs[0].WakeAvgIdle, k.Rqs[0].WakeStamp = 1_000_000, k.Jiffies()

		if got := k.selectIdleCPUDry(p, k.sdLLC(0), false, 0); got != 7 {
			t.Fatalf("dry select_idle_cpu = %v, want 7", got)
		}
		for c, rq := range k.Rqs {
			if rq.sisInvalNs != 0 {
				t.Fatalf("on %v: a dry scan left CPU %d owing %d ns", on, c, rq.sisInvalNs)
			}
		}

		if got := k.selectIdleCPU(p, k.sdLLC(0), false, 0); got != 7 {
			t.Fatalf("select_idle_cpu = %v, want 7", got)
		}
		k = r.on(5)
		k.sisScanLine(1)
		k.sisScanLine(6)
		want := map[int]engine.Time{0: 0, 1: llc, 2: cl, 3: cl, 4: llc, 5: llc, 6: llc, 7: llc, 8: 0}
		for c, w := range want {
			if !on {
				w = 0
			}
			if got := k.Rqs[c].sisInvalNs; got != w {
				t.Errorf("on %v: CPU %d owes %d ns, want %d", on, c, got, w)
			}
		}

		charged := map[*Task]engine.Time{}
		k.Hooks.Charge = func(t *Task, c Cost, d engine.Time) {
			if c == CostWakeupScan {
				charged[t] += d
			}
		}
		rq4, rq6 := k.Rqs[4], k.Rqs[6]
		k.switchCosts(rq4, rq4.Curr, p)
		k.switchCosts(rq6, rq6.Curr, rq6.Idle)
		wantP := engine.Time(llc)
		if !on {
			wantP = 0
		}
		if charged[p] != wantP || rq4.Wakeup.SISInvalNs != wantP {
			t.Errorf("on %v: CPU 4's switch charged %d ns of scan time (counted %d), want %d", on, charged[p], rq4.Wakeup.SISInvalNs, wantP)
		}
		if len(charged) > 1 || rq6.Wakeup.SISInvalNs != 0 {
			t.Errorf("on %v: a switch to idle charged %v (counted %d), want nothing", on, charged, rq6.Wakeup.SISInvalNs)
		}
		if rq4.sisInvalNs != 0 || rq6.sisInvalNs != 0 {
			t.Errorf("on %v: debts after the switches %d, %d; want 0, 0", on, rq4.sisInvalNs, rq6.sisInvalNs)
		}
	}
}
