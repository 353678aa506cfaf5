package sched

import (
	"testing"
	"unsafe"
)

// TestCfsRqBalanceLine pins the field order that keeps what the balancer
// reads of each CPU it visits (update_sg_lb_stats) and what every event
// reads of its CPU in few cache lines (docs/performance.md): the rq's
// queue fields in its first line, the segment's fields with FreqScale in
// its second, and a cfs_rq's averages with HNrRunnable in one line.
// Layout only: moving fields changes no result, but it does change speed.
func TestCfsRqBalanceLine(t *testing.T) {
	const line = 64
	var rq Rq
	var c CfsRq
	sameLine := func(what string, offs ...uintptr) {
		t.Helper()
		for _, o := range offs {
			if o/line != offs[0]/line {
				t.Errorf("%s: offsets %v are not in one %d-byte line", what, offs, line)
				return
			}
		}
	}
	sameLine("Rq queue line", unsafe.Offsetof(rq.CPU), unsafe.Offsetof(rq.NrRunning), unsafe.Offsetof(rq.CPUCapacityOrig),
		unsafe.Offsetof(rq.CFS), unsafe.Offsetof(rq.Curr), unsafe.Offsetof(rq.Idle), unsafe.Offsetof(rq.TTWUPending))
	sameLine("Rq segment line", unsafe.Offsetof(rq.segTimer), unsafe.Offsetof(rq.segStart), unsafe.Offsetof(rq.speed),
		unsafe.Offsetof(rq.runBW), unsafe.Offsetof(rq.coreBusy), unsafe.Offsetof(rq.FreqScale))
	avg := unsafe.Offsetof(c.Avg)
	sameLine("CfsRq balance line", avg+unsafe.Offsetof(c.Avg.LoadAvg), avg+unsafe.Offsetof(c.Avg.RunnableAvg),
		avg+unsafe.Offsetof(c.Avg.UtilAvg), avg+unsafe.Offsetof(c.Avg.UtilEst), unsafe.Offsetof(c.HNrRunnable))
}
