package sched

import (
	"testing"

	"github.com/schedlab/schedlab/internal/engine"
	"github.com/schedlab/schedlab/internal/kernels"
	"github.com/schedlab/schedlab/internal/topology"
)

// BranchClusterLevel counts a balance pass of the CLS level only with the
// cluster-level variant's setting, and counts it changed when it moved a
// task; a pass at any other level is not counted.
func TestCountClusterLevel(t *testing.T) {
	cls := &SchedDomain{T: &topology.Domain{Name: "CLS"}}
	mc := &SchedDomain{T: &topology.Domain{Name: "MC"}}
	for _, tc := range []struct {
		on                  bool
		sd                  *SchedDomain
		moved               int
		wantTaken, wantChgd uint64
	}{
		{true, cls, 0, 1, 0},
		{true, cls, 1, 1, 1},
		{true, cls, 3, 1, 1},
		{true, mc, 2, 0, 0},
		{false, cls, 2, 0, 0},
	} {
		k := &Kernel{}
		k.S.ClusterLevel = tc.on
		k.countClusterLevel(tc.sd, tc.moved)
		if c := k.Branches[BranchClusterLevel]; c.Taken != tc.wantTaken || c.Changed != tc.wantChgd {
			t.Errorf("on=%v %s moved %d: %+v, want taken %d changed %d", tc.on, tc.sd.T.Name, tc.moved, c, tc.wantTaken, tc.wantChgd)
		}
	}
}

// On a Kunpeng 920 with v5.12 and the cluster-level variant, CPUs balance
// at the CLS level: the idle CPUs of a cluster whose one CPU runs three
// movable hogs pull from it at that level (taken, and changed when a task
// moves), which plain v5.12, without the level, never counts.
func TestClusterLevelBalances(t *testing.T) {
	for _, on := range []bool{false, true} {
		s := MustBaseline(kernels.V512)
		if on {
			if err := ApplyVariant(&s, "cluster-level"); err != nil {
				t.Fatal(err)
			}
		}
		r := newRigSettings(t, "kunpeng920-96", s)
		for range 3 {
			r.unpin(r.hog(4))
		}
		r.run(200 * engine.Millisecond)
		c := r.k.Branches[BranchClusterLevel]
		if on && (c.Taken == 0 || c.Changed == 0 || c.Changed > c.Taken) {
			t.Errorf("cluster-level: CLS passes %+v, want some that moved a task", c)
		}
		if !on && c.Taken != 0 {
			t.Errorf("v5.12: CLS passes %+v, want none", c)
		}
	}
}

// select_idle_cluster, from the RFC's rule: on Kunpeng 920's die 0
// (clusters 0-3, 4-7, 8-11, ...) with every CPU busy but 4 and 8, a
// wakeup with target 5 and prev 6 scans target's cluster from 5 (5, 6,
// 7, then 4) and takes cpu4; v5.12's select_idle_cpu scans the LLC from
// target+1 (6, 7, 8) and takes cpu8. The branch is taken and, as the
// two differ, changed; with cpu4 busy too the cluster has nothing and
// select_idle_cpu's cpu8 is the answer with or without the variant.
func TestSelectIdleCluster(t *testing.T) {
	for _, on := range []bool{false, true} {
		s := MustBaseline(kernels.V512)
		if on {
			if err := ApplyVariant(&s, "cluster-level"); err != nil {
				t.Fatal(err)
			}
		}
		r := newRigSettings(t, "kunpeng920-96", s)
		for c := 0; c < 24; c++ {
			if c != 4 && c != 8 {
				r.hog(c)
			}
		}
		p := r.sleeper(40, 100*engine.Microsecond)
		r.run(5 * engine.Millisecond)
		r.unpin(p)
		open := func() {
			// SIS_PROP's budget: a long average idle and a cheap scan,
			// so that select_idle_cpu may look at the whole LLC.
			r.k.Rqs[5].AvgIdle = uint64(engine.Second)
			r.llc(5).AvgScanCost = 0
		}
		open()
		r.k.Branches = BranchCounters{}
		got := r.on(5).selectIdleSibling(p, r.cpu(6), r.cpu(5))
		want, wantC := r.cpu(8), BranchCounter{}
		if on {
			want, wantC = r.cpu(4), BranchCounter{1, 1}
		}
		if got != want || r.k.Branches[BranchSelectIdleCluster] != wantC {
			t.Errorf("cluster-level %v: select_idle_sibling(prev=6, target=5) = %v, counted %+v; want cpu%d, %+v", on, got, r.k.Branches[BranchSelectIdleCluster], want, wantC)
		}
		r.hog(4)
		r.run(engine.Millisecond)
		open()
		r.k.Branches = BranchCounters{}
		if got := r.on(5).selectIdleSibling(p, r.cpu(6), r.cpu(5)); got != 8 || r.k.Branches[BranchSelectIdleCluster] != (BranchCounter{}) {
			t.Errorf("cluster-level %v, cpu4 busy: select_idle_sibling = %v, counted %+v; want cpu8, nothing", on, got, r.k.Branches[BranchSelectIdleCluster])
		}
	}
}
