package sched

import (
	"reflect"
	"testing"
	"unsafe"

	"github.com/schedlab/schedlab/internal/cpumask"
	"github.com/schedlab/schedlab/internal/engine"
	"github.com/schedlab/schedlab/internal/kernels"
)

// TestShareSgStatsReuse: a second pass over an unchanged domain takes
// every group's statistics from the first (Settings.ShareSgStats), a
// task forked on one CPU makes exactly the groups that hold it recompute,
// and every pass's statistics are those of a pass that shares nothing.
//
// Reference: fair.c:update_sg_lb_stats and update_sd_lb_stats (v6.19),
// which recompute every group on every pass; sharing must not be seen.
//
// zen3-2s-nps1, CPU 0's domain whose groups are the 16-CPU LLCs of its
// socket (8 groups); the task goes to CPU 20, in the second LLC.
func TestShareSgStatsReuse(t *testing.T) {
	k := newTestKernel(t, "zen3-2s-nps1", kernels.V619)
	if k.S.ShareSgStats != 8 {
		t.Fatalf("v6.19 shares groups of %d CPUs, want 8", k.S.ShareSgStats)
	}
	var sd *SchedDomain
	for _, d := range k.dom.SD[0] {
		if d.T.Groups[0].Weight == 16 {
			sd = d
		}
	}
	if sd == nil || len(sd.T.Groups) != 8 {
		t.Fatal("no domain of CPU 0 with 8 groups of 16 CPUs")
	}
	pass := func(share int) sdLbStats {
		k.S.ShareSgStats = share
		env := &lbEnv{sd: sd, dstCPU: 0, dstRq: k.Rqs[0], idle: CPUIdle, cpus: sd.T.Span.Clone()}
		var sds sdLbStats
		initSdLbStats(&sds)
		k.thisCPU = 0
		mark := k.lbBegin(0)
		k.updateSdLbStats(env, &sds)
		k.lbEnd(mark)
		return sds
	}
	check := func(what string, wantReuses uint64) sdLbStats {
		t.Helper()
		before := k.SgSharedReuses()
		shared := pass(8)
		if got := k.SgSharedReuses() - before; got != wantReuses {
			t.Errorf("%s: %d groups reused, want %d", what, got, wantReuses)
		}
		fresh := pass(0)
		if !reflect.DeepEqual(shared, fresh) {
			t.Errorf("%s: shared statistics\n%+v\nwant those of a pass that shares nothing\n%+v", what, shared, fresh)
		}
		return shared
	}
	check("first pass", 0)
	check("unchanged", 8)
	if _, err := k.Fork(TaskSpec{Comm: "t", CPU: 20, Allowed: cpumask.Of(k.NrCPUs(), 20), Prog: loop(engine.Second, 0)}); err != nil {
		t.Fatal(err)
	}
	sds := check("after a fork on CPU 20", 7)
	if sds.busiest == nil || !sds.busiest.Span.Test(20) || sds.busiestStat.SumNrRunning != 1 {
		t.Errorf("busiest group %v with %d tasks, want CPU 20's LLC with 1", sds.busiest, sds.busiestStat.SumNrRunning)
	}
	check("unchanged again", 8)
}

// TestSgSharedLine: a group's kept statistics and the generation they
// were made at fill one cache line, which is all a reuse reads of them,
// and so does the copy of what the loop reads of a CPU.
func TestSgSharedLine(t *testing.T) {
	if got := unsafe.Sizeof(sgShared{}); got != 64 {
		t.Errorf("sgShared is %d bytes, want 64", got)
	}
	if got := unsafe.Sizeof(sgCPU{}); got != 64 {
		t.Errorf("sgCPU is %d bytes, want 64", got)
	}
}

// TestSgShareSlots: every CPU of a group bumps, at each change, a slot
// the group reads (its own or its LLC's, when the group holds the whole
// LLC), and no CPU outside the group does, on every machine shape.
func TestSgShareSlots(t *testing.T) {
	for _, m := range []string{"zen3-2s-nps1", "zen3-2s-nps4", "kunpeng920-96", "hikey960", "../topology/testdata/machines/odd.yaml"} {
		k := newTestKernel(t, m, kernels.V619)
		n := k.NrCPUs()
		for _, g := range k.Topo.Groups {
			slots := map[int32]bool{}
			for _, s := range k.bal.sgSlots[g.ID] {
				slots[s] = true
			}
			for cpu := range n {
				in := slots[int32(cpu)] || slots[k.bal.sgLLCSlot[cpu]]
				if in != g.Span.Test(cpumask.CPU(cpu)) {
					t.Errorf("%s: group %d (%v): CPU %d bumps a slot it reads: %v", m, g.ID, g.Span, cpu, in)
				}
			}
		}
	}
}
