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
		unsafe.Offsetof(rq.CFS), unsafe.Offsetof(rq.Curr), unsafe.Offsetof(rq.Idle), unsafe.Offsetof(rq.TTWUPending),
		unsafe.Offsetof(rq.needResched), unsafe.Offsetof(rq.CPUCapacity))
	sameLine("Rq segment line", unsafe.Offsetof(rq.segTimer), unsafe.Offsetof(rq.segStart), unsafe.Offsetof(rq.speed),
		unsafe.Offsetof(rq.runBW), unsafe.Offsetof(rq.OverheadNs), unsafe.Offsetof(rq.coreBusy), unsafe.Offsetof(rq.k), unsafe.Offsetof(rq.FreqScale))
	avg := unsafe.Offsetof(c.Avg)
	sameLine("CfsRq balance line", avg+unsafe.Offsetof(c.Avg.LoadAvg), avg+unsafe.Offsetof(c.Avg.RunnableAvg),
		avg+unsafe.Offsetof(c.Avg.UtilAvg), avg+unsafe.Offsetof(c.Avg.UtilEst), unsafe.Offsetof(c.HNrRunnable))
}

// TestSlotLines checks that the runqueues, the root cfs_rqs and the tasks
// are allocated with a stride of an odd number of cache lines, so that
// the same field of consecutive CPUs or tasks falls in every set of a
// 64-set L1 (kernel.go: rqSlot, taskSlot).
func TestSlotLines(t *testing.T) {
	for what, size := range map[string]uintptr{
		"rqSlot":   unsafe.Sizeof(rqSlot{}),
		"CfsRq":    unsafe.Sizeof(CfsRq{}),
		"taskSlot": unsafe.Sizeof(taskSlot{}),
	} {
		if size%64 != 0 || size/64%2 != 1 {
			t.Errorf("%s is %d bytes, not an odd number of 64-byte lines (pad it)", what, size)
		}
	}
	if unsafe.Sizeof(taskSlot{})-unsafe.Sizeof(Task{}) >= 128 {
		t.Errorf("taskSlot pads a %d-byte Task by more than it needs: shrink its padding", unsafe.Sizeof(Task{}))
	}
}
