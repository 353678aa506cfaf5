package sched

import (
	"fmt"
	"github.com/schedlab/schedlab/internal/kernels"
	"hash/fnv"
	"reflect"
	"testing"

	"github.com/schedlab/schedlab/internal/cpumask"
	"github.com/schedlab/schedlab/internal/engine"
	"github.com/schedlab/schedlab/internal/topology"
)

// TestVariantsTable pins the variant names and the settings each changes.
//
// Reference: shared/reference/patches.md §1 and §2.
func TestVariantsTable(t *testing.T) {
	// The RFC and the follow-ups measured in its thread use the RFC's
	// lifetime metric; the RFC v2 posting brought its own dur_avg.
	want := []struct {
		name   string
		affine ShortAffineMode
		scan   ShortScanMode
		metric ShortTaskMetric
	}{
		{"short-task-rfc", ShortAffineSyncOr, ShortScanWakee, ShortLifetime},
		{"short-task-v1", ShortAffineEnd, ShortScanWakee, ShortLifetime},
		{"short-task-v2", ShortAffineEnd, ShortScanOff, ShortLifetime},
		{"short-task-v3", ShortAffineEndSingle, ShortScanWakee, ShortLifetime},
		{"short-task-v4", ShortAffineEndSingle, ShortScanOff, ShortLifetime},
		{"short-task-rfc2", ShortAffineEndSingle, ShortScanSingle, ShortDurAvgRFC2},
	}
	// The wakeup-path variants come first, in this order (other
	// patches' variants may follow).
	vs := Variants()
	if len(vs) < len(want)+1 || vs[len(want)].Name != "idle-cores-nosmt" {
		t.Fatalf("variants %v", VariantNames())
	}
	for i, w := range want {
		v := vs[i]
		if v.Name != w.name || v.Baseline != kernels.V60 || v.Description == "" || len(v.Touches) == 0 {
			t.Errorf("variant %d: %+v", i, v)
		}
		s := MustBaseline(kernels.V60)
		base := s
		if err := ApplyVariant(&s, w.name); err != nil {
			t.Fatal(err)
		}
		if s.ShortTaskAffine != w.affine || s.ShortTaskScan != w.scan || s.ShortTaskMetric != w.metric {
			t.Errorf("%s: affine %s scan %s metric %s", w.name, s.ShortTaskAffine, s.ShortTaskScan, s.ShortTaskMetric)
		}
		// Nothing else differs from the baseline.
		s.ShortTaskAffine, s.ShortTaskScan, s.ShortTaskMetric = base.ShortTaskAffine, base.ShortTaskScan, base.ShortTaskMetric
		if !reflect.DeepEqual(s, base) {
			t.Errorf("%s changes more than the short-task settings", w.name)
		}
		b := MustBaseline(kernels.V60)
		if err := ApplyVariantBase(&b, w.name); err != nil || !reflect.DeepEqual(b, base) {
			t.Errorf("%s: its base is not the plain baseline", w.name)
		}
	}
	// idle-cores-nosmt applies to v5.12, whose select_idle_cpu has the
	// test_idle_cores call the patch optimised: its base is the baseline.
	if info, _ := LookupVariant("idle-cores-nosmt"); info.Baseline != kernels.V512 || info.Base != "" {
		t.Errorf("idle-cores-nosmt: %+v", info)
	}
	s := MustBaseline(kernels.V512)
	if err := ApplyVariant(&s, "idle-cores-nosmt"); err != nil || !s.TestIdleCoresSMTCheck || !s.SISIdleCoresV512 {
		t.Errorf("idle-cores-nosmt: %v %v %v", err, s.TestIdleCoresSMTCheck, s.SISIdleCoresV512)
	}
	b := MustBaseline(kernels.V512)
	if err := ApplyVariantBase(&b, "idle-cores-nosmt"); err != nil || !reflect.DeepEqual(b, MustBaseline(kernels.V512)) {
		t.Errorf("idle-cores-nosmt base is not v5.12: %v", err)
	}
	if err := ApplyVariant(&s, "no-such-patch"); err == nil {
		t.Error("unknown variant accepted")
	}
}

// busyWakeups runs nTasks tasks that compute 50 µs and sleep 50 µs on a
// machine of s, for d: more tasks than CPUs, so timer wakeups often
// find prev_cpu busy and select_idle_sibling reaches select_idle_cpu. It
// returns a hash of every wakeup (time, pid, CPU) and the sd_llc_shared
// reads test_idle_cores made.
func busyWakeups(t *testing.T, machine string, nTasks int, d engine.Time, s Settings) (uint64, uint64) {
	t.Helper()
	r := newRigSettings(t, machine, s)
	k := r.k
	h := fnv.New64a()
	k.Hooks.Wakeup = func(p *Task, cpu cpumask.CPU) {
		fmt.Fprintf(h, "%d %d %d\n", k.Now(), p.PID, cpu)
	}
	n := k.NrCPUs()
	for i := 0; i < nTasks; i++ {
		if _, err := k.Fork(TaskSpec{Comm: "w", CPU: cpumask.CPU(i % n), Prog: loop(50*engine.Microsecond, 50*engine.Microsecond)}); err != nil {
			t.Fatal(err)
		}
	}
	k.Eng.RunUntil(d)
	var reads uint64
	for _, rq := range k.Rqs {
		reads += rq.Wakeup.TestIdleCoresReads
	}
	return h.Sum64(), reads
}

// TestIdleCoresNoSMT checks that idle-cores-nosmt changes no decision and
// removes the sd_llc_shared reads of test_idle_cores on a machine without
// SMT, and changes nothing at all on an SMT machine.
//
// Reference: "sched/fair: Optimize test_idle_cores() for !SMT" (v5.13,
// patches.md §2) against v5.12's select_idle_cpu, which called
// test_idle_cores(target, false) on every scan. Without SMT nothing sets
// has_idle_cores (update_idle_core needs sched_smt_present), so the read
// always answers false: skipping it cannot change a placement.
func TestIdleCoresNoSMT(t *testing.T) {
	for _, tc := range []struct {
		machine   string
		tasks     int
		d         engine.Time
		wantFewer bool
	}{
		{"hikey", 12, 20 * engine.Millisecond, true},        // no SMT: 8 CPUs, two 4-CPU LLCs
		{"zen3-2s-nps1", 40, 3 * engine.Millisecond, false}, // SMT2
	} {
		t.Run(tc.machine, func(t *testing.T) {
			base := MustBaseline(kernels.V512)
			if err := ApplyVariantBase(&base, "idle-cores-nosmt"); err != nil {
				t.Fatal(err)
			}
			patched := MustBaseline(kernels.V512)
			if err := ApplyVariant(&patched, "idle-cores-nosmt"); err != nil {
				t.Fatal(err)
			}
			hb, rb := busyWakeups(t, tc.machine, tc.tasks, tc.d, base)
			hp, rp := busyWakeups(t, tc.machine, tc.tasks, tc.d, patched)
			if hb != hp {
				t.Errorf("placements differ: %x vs %x", hb, hp)
			}
			if tc.wantFewer {
				if rb == 0 || rp != 0 {
					t.Errorf("reads: base %d, patched %d; want some, then none", rb, rp)
				}
			} else if rb != rp || rb == 0 {
				t.Errorf("SMT machine: reads base %d, patched %d; want equal and non-zero", rb, rp)
			}
			t.Logf("%s: test_idle_cores reads base %d, patched %d", tc.machine, rb, rp)
		})
	}
	// v6.0 no longer calls test_idle_cores without SMT.
	_, r := busyWakeups(t, "hikey", 12, 20*engine.Millisecond, MustBaseline(kernels.V60))
	if r != 0 {
		t.Errorf("v6.0 on hikey: %d reads, want 0", r)
	}
}

// TestIdleCoresNoSMTCostsTime: with the cost model charging a read of
// another CPU's cache line (here 1 µs, every other cost zero), the
// test_idle_cores reads of the v5.12 layout cost the wakers simulated
// time on a HiKey, and idle-cores-nosmt, which removes them, costs none:
// the variant shows in time, not only in counters (patches.md §2).
func TestIdleCoresNoSMTCostsTime(t *testing.T) {
	run := func(s Settings) (reads, overhead uint64) {
		s.NohzRdLines = false // the sd_llc_shared line's cost alone
		s.RemoteEnqueueLines = false
		s.SISScanLines = false
		r := newRigSettings(t, "hikey", s)
		k := r.k
		k.costsOn = true
		k.S.CostJitterPct = 0
		k.Costs.LineSameLLC = engine.Microsecond
		k.Costs.LineOther = [][]engine.Time{{engine.Microsecond}}
		for i := 0; i < 12; i++ {
			if _, err := k.Fork(TaskSpec{Comm: "w", CPU: cpumask.CPU(i % 8), Prog: loop(50*engine.Microsecond, 50*engine.Microsecond)}); err != nil {
				t.Fatal(err)
			}
		}
		k.Eng.RunUntil(20 * engine.Millisecond)
		for _, rq := range k.Rqs {
			reads += rq.Wakeup.TestIdleCoresReads
			overhead += rq.OverheadNs
		}
		return reads, overhead
	}
	base := MustBaseline(kernels.V512)
	if err := ApplyVariantBase(&base, "idle-cores-nosmt"); err != nil {
		t.Fatal(err)
	}
	patched := MustBaseline(kernels.V512)
	if err := ApplyVariant(&patched, "idle-cores-nosmt"); err != nil {
		t.Fatal(err)
	}
	rb, ob := run(base)
	rp, op := run(patched)
	t.Logf("base: %d reads, %d ns charged; patched: %d reads, %d ns", rb, ob, rp, op)
	if rb == 0 || ob == 0 || ob > rb*uint64(engine.Microsecond) {
		t.Errorf("base: %d reads charged %d ns, want some, at most 1 µs each", rb, ob)
	}
	if rp != 0 || op != 0 {
		t.Errorf("patched: %d reads charged %d ns, want none", rp, op)
	}
}

// TestSISNode: the variant sis-node (select_idle_node of "sched/fair:
// Multi-LLC select_idle_sibling()", tip c7dfd6b9122d) on zen3-2s-nps1,
// v6.0. Every CPU of target's LLC (CPUs 0-7 and their siblings 128-135)
// is busy, so select_idle_cpu finds nothing there (its SIS_UTIL budget is
// set to the whole LLC, so the failure is the scan's, not the budget's).
// The LLC's parent is the socket (PKG, not NUMA); its groups are walked
// from the local one, so the next is LLC1 (8-15, 136-143), whose first
// CPU, 8, is the target of its scan: for_each_cpu_wrap starts at 8+1, and
// CPU 9 is idle. Without the variant, select_idle_sibling returns target.
// With a NUMA parent (Kunpeng 920: a die is an LLC and a node) the node
// scan does nothing, even though the next die has idle CPUs.
// Reference: the patch's select_idle_node and its call in
// select_idle_sibling; fair.c:select_idle_cpu (v6.0).
func TestSISNode(t *testing.T) {
	for _, on := range []bool{false, true} {
		s := MustBaseline(kernels.V60)
		if on {
			if err := ApplyVariant(&s, "sis-node"); err != nil {
				t.Fatal(err)
			}
		}
		r := newRigSettings(t, "zen3-2s-nps1", s)
		for c := 0; c < 8; c++ {
			r.hog(c)
			r.hog(c + 128)
		}
		p := r.sleeper(64, 100*engine.Microsecond)
		r.run(5 * engine.Millisecond)
		r.unpin(p)
		p.RecentUsedCPU = r.cpu(2)
		r.setIdleScan(1, 0)
		r.setIdleScan(8, 0)
		got := r.on(1).selectIdleSibling(p, r.cpu(2), r.cpu(1))
		want := r.cpu(1)
		if on {
			want = 9
		}
		if got != want {
			t.Errorf("sis-node %v: select_idle_sibling(prev=2, target=1) = %v, want cpu%d", on, got, want)
		}
	}

	s := MustBaseline(kernels.V60)
	if err := ApplyVariant(&s, "sis-node"); err != nil {
		t.Fatal(err)
	}
	r := newRigSettings(t, "kunpeng920-96", s)
	r.setIdleScan(24, 0)
	p := r.sleeper(30, 100*engine.Microsecond)
	r.run(5 * engine.Millisecond)
	if got := r.on(1).selectIdleNode(p, r.llc(1), r.cpu(1)); got != cpumask.None {
		t.Errorf("kunpeng920-96: select_idle_node crossed into another node: %v", got)
	}
}

// TestSISCluster: on a Kunpeng 920 die (an LLC of 32 CPUs in clusters of
// 4), target cpu3 is busy, cpu1 in its cluster and cpu4 in the next
// cluster are idle, and prev is cpu4. v6.0 takes the idle cache-affine
// prev at once (cpu4); with sis-cluster prev is outside target's cluster
// (cpus_share_resources false), so it is only kept as the fallback, and
// select_idle_cpu scans target's cluster first, from target+1 round its
// span (cpu0 busy, then cpu1): cpu1. Without prev (prev = target) v6.0's
// LLC scan from target+1 finds cpu4 first and sis-cluster still cpu1.
// Both with the SIS_UTIL budget not limiting (an idle LLC's).
//
// The variant's counters: with prev = cpu4 the idle cache-affine prev
// outside target's cluster is kept as the fallback, and the wakeup goes
// to cpu1 instead (select_idle_sibling:cluster taken and changed); the
// cluster-first scan answers cpu1 where v6.0's scan from target+1 answers
// cpu4 (select_idle_cpu:cluster taken and changed). With cpu1 busy too
// the cluster has nothing, the scan goes on from target+1 and finds cpu4
// as v6.0's does: taken, not changed, and the wakeup goes to prev after
// all.
// Reference: fair.c:select_idle_sibling, select_idle_cpu (v6.6+).
func TestSISCluster(t *testing.T) {
	for _, on := range []bool{false, true} {
		s := MustBaseline(kernels.V60)
		if on {
			if err := ApplyVariant(&s, "sis-cluster"); err != nil {
				t.Fatal(err)
			}
		}
		r := newRigSettings(t, "kunpeng920-128", s)
		if r.k.Topo.ClusterActive != on {
			t.Fatalf("sis-cluster %v: cluster_active %v", on, r.k.Topo.ClusterActive)
		}
		for c := 0; c < 32; c++ {
			if c != 1 && c != 4 {
				r.hog(c)
			}
		}
		p := r.sleeper(40, 100*engine.Microsecond)
		r.run(5 * engine.Millisecond)
		r.unpin(p)
		r.setIdleScan(3, 0)
		for _, tc := range []struct {
			prev          int
			off, want     cpumask.CPU
			deferred, scn BranchCounter
		}{{4, 4, 1, BranchCounter{1, 1}, BranchCounter{1, 1}}, {3, 4, 1, BranchCounter{}, BranchCounter{1, 1}}} {
			p.RecentUsedCPU = cpumask.None
			r.k.Branches = BranchCounters{}
			got := r.on(3).selectIdleSibling(p, r.cpu(tc.prev), r.cpu(3))
			r.k.countClusterDeferred(got)
			want := tc.off
			if on {
				want = tc.want
			} else {
				tc.deferred, tc.scn = BranchCounter{}, BranchCounter{}
			}
			if got != want {
				t.Errorf("sis-cluster %v: select_idle_sibling(prev=%d, target=3) = %v, want cpu%d", on, tc.prev, got, want)
			}
			if d, c := r.k.Branches[BranchClusterPrev], r.k.Branches[BranchClusterScan]; d != tc.deferred || c != tc.scn {
				t.Errorf("sis-cluster %v, prev=%d: counted deferral %+v, cluster scan %+v; want %+v, %+v", on, tc.prev, d, c, tc.deferred, tc.scn)
			}
		}
		if on {
			r.hog(1)
			r.run(engine.Millisecond)
			r.k.Branches = BranchCounters{}
			got := r.on(3).selectIdleSibling(p, r.cpu(4), r.cpu(3))
			r.k.countClusterDeferred(got)
			want := [2]BranchCounter{{1, 0}, {1, 0}}
			if c := [2]BranchCounter{r.k.Branches[BranchClusterPrev], r.k.Branches[BranchClusterScan]}; got != 4 || c != want {
				t.Errorf("sis-cluster, cpu1 busy: select_idle_sibling(prev=4, target=3) = %v, counted %+v; want cpu4, %+v", got, c, want)
			}
		}
	}
	// The flag needs the topology built for it.
	s := MustBaseline(kernels.V60)
	if err := ApplyVariant(&s, "sis-cluster"); err != nil {
		t.Fatal(err)
	}
	spec, _ := topology.Load("kunpeng920-128")
	topo, err := topology.Build(spec, topology.Options{Kernel: kernels.V60})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if recover() == nil {
			t.Error("sched.New accepted sis-cluster on a topology without SD_CLUSTER")
		}
	}()
	New(engine.New(1), topo, s)
}
