package sched

import (
	"math/big"
	"reflect"
	"testing"

	"github.com/schedlab/schedlab/internal/cpumask"
	"github.com/schedlab/schedlab/internal/engine"
	"github.com/schedlab/schedlab/internal/kernels"
	"github.com/schedlab/schedlab/internal/topology"
)

// Tests of the variants sis-node-limit, sis-util-v1 and sis-util-v2 (issue
// 38 §6) at the edges where their posted code decides: each expectation
// follows from the posting's lines, quoted in the test's comment.

// sisVariant is the v6.0 baseline with the named variant (or, for
// "base:NAME", the kernel it is compared with).
func sisVariant(t *testing.T, name string, base bool) Settings {
	t.Helper()
	s := MustBaseline(kernels.V60)
	apply := ApplyVariant
	if base {
		apply = ApplyVariantBase
	}
	if err := apply(&s, name); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestSISVariantsSettings: what each variant changes in v6.0's settings,
// and the kernel it is compared with. sis-node-limit is sis-node plus the
// limit, against plain v6.0 (AMD's tip, SIS_NODE and SIS_NODE_LIMIT
// columns); the SIS_UTIL RFCs were written on a v5.17-rc tip that scanned
// with SIS_PROP and had no SIS_UTIL, so both they and their comparison
// kernel have SIS_PROP on and SIS_UTIL off. The limit without SIS_NODE,
// and the v2 RFC beside SIS_UTIL (both write nr_idle_scan), are refused.
//
// Reference: the three postings (<20230601111326.GV4253@hirez.programming.kicks-ass.net>,
// <20220207034013.599214-1-yu.c.chen@intel.com>, <20220310005228.11737-1-yu.c.chen@intel.com>).
func TestSISVariantsSettings(t *testing.T) {
	v60 := MustBaseline(kernels.V60)
	tip := v60
	tip.SISProp, tip.SISUtil = true, false
	for _, tc := range []struct {
		name      string
		wantBase  Settings
		wantPatch func(*Settings)
	}{
		{"sis-node-limit", v60, func(s *Settings) { s.SISNode, s.SISNodeLimit = true, true }},
		{"sis-util-v1", tip, func(s *Settings) { s.SISUtilV1 = true }},
		{"sis-util-v2", tip, func(s *Settings) { s.SISUtilV2 = true }},
	} {
		info, ok := LookupVariant(tc.name)
		if !ok || info.Baseline != kernels.V60 || info.Description == "" || len(info.Touches) == 0 {
			t.Fatalf("%s: %+v", tc.name, info)
		}
		if (info.Base != "") != (tc.wantBase != v60) {
			t.Errorf("%s: Base %q", tc.name, info.Base)
		}
		if got := sisVariant(t, tc.name, true); !reflect.DeepEqual(got, tc.wantBase) {
			t.Errorf("%s: its comparison kernel is not the expected one", tc.name)
		}
		want := tc.wantBase
		tc.wantPatch(&want)
		if got := sisVariant(t, tc.name, false); !reflect.DeepEqual(got, want) {
			t.Errorf("%s changes more (or less) than its settings", tc.name)
		}
	}
	bad := v60
	bad.SISNodeLimit = true
	if bad.Validate() == nil {
		t.Error("SISNodeLimit without SISNode accepted")
	}
	bad = sisVariant(t, "sis-util-v2", false)
	if err := bad.SetFeature("SIS_UTIL"); err != nil {
		t.Fatal(err)
	}
	if bad.Validate() == nil {
		t.Error("the SIS_UTIL v2 RFC with SIS_UTIL on accepted")
	}
}

// TestSISNodeLimitEdges: select_idle_node with and without Peter
// Zijlstra's limit, at the limit's edge. The limit adds
//
//	int nr = 4;
//	...
//	if (!cpus_share_cache(cpu, target)) {          (the patch's branch for another LLC)
//		int i = select_idle_cpu(p, per_cpu(sd_llc, cpu), test_idle_cores(cpu), cpu);
//		if ((unsigned)i < nr_cpumask_bits)
//			return i;
//		if (!--nr)
//			return -1;
//	}
//
// so the first four other LLCs are scanned and the fifth is not: nr goes
// 4 → 3 → 2 → 1 after the first three failures, and the fourth failure
// makes it 0 and returns. On zen3-2s-nps1 target cpu1's LLC (CPUs 0-7,
// 128-135) has as parent the node's PKG domain (not NUMA), whose groups
// are its 8 LLCs from the local one: the k-th other LLC is CPUs 8k..8k+7
// and 8k+128..8k+135. Every CPU of the node but one runs a hog; the idle
// one is cpu 8k+7 of the k-th other LLC, for k = 1..7. Each LLC's
// nr_idle_scan is 16 (utilisation 0: its select_idle_cpu may examine
// every CPU, so an LLC fails for having no idle CPU, not for its budget),
// and no LLC claims an idle core. Without the limit the idle CPU is found
// for every k; with it for k <= 4 (success on the 4th), and for k >= 5
// select_idle_node returns -1 and select_idle_sibling target.
//
// On zen3-2s-nps4 the LLC's parent is the node (NODE, not NUMA) of two
// LLCs: one other LLC, so the limit cannot bind there (AMD: "Ideally in
// NPS2 and NPS4 modes SIS_NODE and SIS_NODE_LIMIT should behave
// similarly"), and both find the idle CPU of the other LLC.
//
// Reference: SIS_NODE's select_idle_node (tip sched/core c7dfd6b9122d) with
// the limit of <20230601111326.GV4253@hirez.programming.kicks-ass.net>.
func TestSISNodeLimitEdges(t *testing.T) {
	for _, v := range []string{"sis-node", "sis-node-limit"} {
		r := newRigSettings(t, "zen3-2s-nps4", sisVariant(t, v, false))
		sd := r.llc(1)
		if g := sd.Parent.T.Groups; len(g) != 2 || sd.Parent.T.Flags&topology.SDNuma != 0 || g[1].Span.First() != 8 {
			t.Fatalf("zen3-2s-nps4: parent of sd_llc(1) has %d groups, flags %#x", len(g), sd.Parent.T.Flags)
		}
		for c := 0; c < 16; c++ {
			for _, cpu := range []int{c, c + 128} {
				if cpu != 15 {
					r.hog(cpu)
				}
			}
		}
		p := r.sleeper(64, 100*engine.Microsecond)
		r.run(5 * engine.Millisecond)
		r.unpin(p)
		r.setIdleScan(0, 0)
		r.setIdleScan(8, 0)
		r.k.setIdleCores(0, false)
		r.k.setIdleCores(8, false)
		if got := r.on(1).selectIdleNode(p, sd, 1); got != 15 {
			t.Errorf("zen3-2s-nps4, %s: select_idle_node = %v, want cpu15", v, got)
		}
	}
	// k = 8: no idle CPU in the node (cpu71 is in the other one).
	for _, v := range []string{"sis-node", "sis-node-limit"} {
		for k := 1; k <= 8; k++ {
			r := newRigSettings(t, "zen3-2s-nps1", sisVariant(t, v, false))
			sd := r.llc(1)
			groups := sd.Parent.T.Groups
			if len(groups) != 8 || sd.Parent.T.SpanWeight != 128 {
				t.Fatalf("parent of sd_llc(1): %d groups, span weight %d", len(groups), sd.Parent.T.SpanWeight)
			}
			for g, sg := range groups {
				if first := sg.Span.First(); first != cpumask.CPU(8*g) {
					t.Fatalf("group %d of the parent starts at cpu%d, want cpu%d", g, first, 8*g)
				}
			}
			idle := 8*k + 7
			for c := 0; c < 64; c++ {
				for _, cpu := range []int{c, c + 128} {
					if cpu != idle {
						r.hog(cpu)
					}
				}
			}
			p := r.sleeper(64, 100*engine.Microsecond) // the other node
			r.run(5 * engine.Millisecond)
			r.unpin(p)
			for l := 0; l < 8; l++ {
				if n := r.setIdleScan(8*l, 0); n != 16 {
					t.Fatalf("nr_idle_scan of LLC %d = %d, want 16", l, n)
				}
				r.k.setIdleCores(cpumask.CPU(8*l), false)
			}
			if !r.k.idleOrSchedIdle(cpumask.CPU(idle)) {
				t.Fatalf("cpu%d is not idle", idle)
			}
			want := cpumask.CPU(idle)
			limited := v == "sis-node-limit" && k > 4
			if limited || k == 8 {
				want = cpumask.None
			}
			if got := r.on(1).selectIdleNode(p, sd, 1); got != want {
				t.Errorf("%s, idle cpu in the other LLC no. %d: select_idle_node = %v, want %v", v, k, got, want)
			}
			p.RecentUsedCPU = 2
			wantSIS := want
			if want == cpumask.None {
				wantSIS = 1
			}
			r.k.Branches = BranchCounters{}
			if got := r.on(1).selectIdleSibling(p, 1, 1); got != wantSIS {
				t.Errorf("%s, idle cpu in the other LLC no. %d: select_idle_sibling = %v, want %v", v, k, got, wantSIS)
			}
			// The counters: select_idle_node walked (the comparison
			// kernel, v6.0, stays in target's LLC) and changed the
			// answer when it found a CPU; the limit, with other LLCs
			// left after the 4th (always, in a node of 8), changed it
			// when one of those has the idle CPU (k = 5..7).
			wantNode := BranchCounter{1, uint64(btoi(want != cpumask.None))}
			wantLimit := BranchCounter{}
			if v == "sis-node-limit" && k > 4 {
				wantLimit = BranchCounter{1, uint64(btoi(k <= 7))}
			}
			if got, gotL := r.k.Branches[BranchSISNode], r.k.Branches[BranchSISNodeLimit]; got != wantNode || gotL != wantLimit {
				t.Errorf("%s, idle cpu in the other LLC no. %d: counted node %+v, limit %+v; want %+v, %+v", v, k, got, gotL, wantNode, wantLimit)
			}
		}
	}
}

// TestSISUtilV1OverloadedThreshold: the RFC's hunk at the end of
// update_sd_lb_stats,
//
//	if (env->idle != CPU_NEWLY_IDLE &&
//	    env->sd->span_weight == per_cpu(sd_llc_size, env->dst_cpu)) {
//		...
//		WRITE_ONCE(sd_share->overloaded, (sds->total_capacity * 100) <
//			   (sum_util * env->sd->imbalance_pct));
//	}
//
// On zen3-2s-nps1 the LLC domain of cpu0 (MC) has span_weight 16 =
// sd_llc_size and imbalance_pct 117. With total_capacity = 117 × 140 =
// 16380, total_capacity × 100 = 1638000 = 14000 × 117: sum_util 14000 is
// the equality, not overloaded (the comparison is strict), 14001 is
// (1638117 > 1638000), 13999 is not. With the LLC's full capacity, 16 ×
// 1024 = 16384 (1638400), the step is between 14003 (1638351) and 14004
// (1638468). Each write is a store of the comparison, so the flag also
// goes back to false. A newly idle balance of the LLC, and a balance of
// any domain whose span_weight is not 16 (SMT, the node's PKG, NUMA), leave
// the flag as it was; CPU_IDLE and CPU_NOT_IDLE balances write it. On
// v6.0 without the variant nothing writes it.
//
// Reference: <20220207034013.599214-1-yu.c.chen@intel.com>, fair.c hunk of
// update_sd_lb_stats.
func TestSISUtilV1OverloadedThreshold(t *testing.T) {
	r := newRigSettings(t, "zen3-2s-nps1", sisVariant(t, "sis-util-v1", false))
	k := r.k
	sd := r.llc(0)
	if sd.T.SpanWeight != 16 || k.Topo.SdLLCSize[0] != 16 || sd.T.ImbalancePct != 117 {
		t.Fatalf("sd_llc(0): span_weight %d, sd_llc_size %d, imbalance_pct %d", sd.T.SpanWeight, k.Topo.SdLLCSize[0], sd.T.ImbalancePct)
	}
	sds := k.SdLLCShared(0)
	if sds.Overloaded {
		t.Fatal("overloaded set at boot")
	}
	for _, tc := range []struct {
		total, sum uint64
		want       bool
	}{
		{16380, 13999, false}, {16380, 14000, false}, {16380, 14001, true},
		{16384, 14003, false}, {16384, 14004, true},
		{16384, 0, false}, {16384, 16384, true},
	} {
		for _, idle := range []int{CPUNotIdle, CPUIdle} {
			sds.Overloaded = !tc.want
			k.updateLLCOverloaded(0, sd, idle, tc.total, tc.sum)
			if sds.Overloaded != tc.want {
				t.Errorf("idle type %d, total_capacity %d (×100 = %d), sum_util %d (×117 = %d): overloaded %v, want %v",
					idle, tc.total, tc.total*100, tc.sum, tc.sum*117, sds.Overloaded, tc.want)
			}
		}
	}
	// Neither a newly idle balance nor another level writes it.
	for _, was := range []bool{false, true} {
		sum := uint64(16384) // overloaded by the formula
		if was {
			sum = 0 // not overloaded by the formula
		}
		sds.Overloaded = was
		k.updateLLCOverloaded(0, sd, CPUNewlyIdle, 16384, sum)
		for _, d := range k.Domains(0) {
			if d.T.SpanWeight != 16 {
				k.updateLLCOverloaded(0, d, CPUNotIdle, 16384, sum)
			}
		}
		if sds.Overloaded != was {
			t.Errorf("overloaded %v changed to %v by a newly idle or non-LLC balance", was, sds.Overloaded)
		}
	}
	if n := len(k.Domains(0)); n < 3 {
		t.Fatalf("cpu0 has %d domains; the test wants levels other than the LLC", n)
	}
	// v6.0 (the variant's comparison kernel) never writes it.
	b := newRigSettings(t, "zen3-2s-nps1", sisVariant(t, "sis-util-v1", true))
	b.k.updateLLCOverloaded(0, b.llc(0), CPUNotIdle, 16384, 16384)
	if b.k.SdLLCShared(0).Overloaded {
		t.Error("overloaded written without the variant")
	}
}

// TestSISUtilInUpdateSdLbStats: update_sd_lb_stats hands the RFCs' hunks
// its own sums. A periodic balance (CPU_NOT_IDLE) of cpu0's LLC domain on
// zen3-2s-nps1, its 16 CPUs busy for 300 ms, and one of cpu8's idle LLC:
// the flag (v1) and nr_idle_scan (v2) are what the postings' formulas give
// for sum_util = Σ cpu_util_cfs over the domain and the total_capacity the
// pass summed,
//
//	overloaded   = total_capacity × 100 < sum_util × 117
//	nr_idle_scan = max(4, 16 − 24 × sum_util / total_capacity)
//
// (with 16 CPUs "16 − 24 × …" cannot wrap below INT_MIN, so the C int
// arithmetic is this plain one), and a busy LLC is overloaded with the
// floor of 4, an idle one neither.
//
// Reference: update_sd_lb_stats with the hunks of
// <20220207034013.599214-1-yu.c.chen@intel.com> and
// <20220310005228.11737-1-yu.c.chen@intel.com>.
func TestSISUtilInUpdateSdLbStats(t *testing.T) {
	for _, v := range []string{"sis-util-v1", "sis-util-v2"} {
		r := newRigSettings(t, "zen3-2s-nps1", sisVariant(t, v, false))
		k := r.k
		for c := 0; c < 8; c++ {
			r.hog(c)
			r.hog(c + 128)
		}
		r.run(300 * engine.Millisecond)
		for _, tc := range []struct {
			dst  int
			busy bool
		}{{0, true}, {8, false}} {
			sd := r.llc(tc.dst)
			env := &lbEnv{sd: sd, dstCPU: cpumask.CPU(tc.dst), dstRq: k.Rqs[tc.dst], idle: CPUNotIdle, cpus: sd.T.Span.Clone()}
			var sds sdLbStats
			initSdLbStats(&sds)
			shared := k.SdLLCShared(tc.dst)
			shared.Overloaded, shared.NrIdleScan = !tc.busy, -1
			k.thisCPU = cpumask.CPU(tc.dst)
			mark := k.lbBegin(cpumask.CPU(tc.dst))
			k.updateSdLbStats(env, &sds)
			k.lbEnd(mark)
			var sum uint64
			for cpu := range sd.T.Span.AndCPUs(sd.T.Span) {
				sum += cpuUtilCfsRq(k.Rqs[cpu], k.S.UtilEst)
			}
			total := sds.totalCapacity
			switch v {
			case "sis-util-v1":
				want := total*100 < sum*117
				if shared.Overloaded != want || want != tc.busy {
					t.Errorf("%s, LLC of cpu%d: sum_util %d, total_capacity %d: overloaded %v, want %v (busy %v)", v, tc.dst, sum, total, shared.Overloaded, want, tc.busy)
				}
			case "sis-util-v2":
				want := max(4, 16-int(24*sum/total))
				if shared.NrIdleScan != want || (want == 4) != tc.busy {
					t.Errorf("%s, LLC of cpu%d: sum_util %d, total_capacity %d: nr_idle_scan %d, want %d (busy %v)", v, tc.dst, sum, total, shared.NrIdleScan, want, tc.busy)
				}
			}
		}
	}
}

// TestSISUtilV1SkipsScan: with the RFC, select_idle_cpu begins with
//
//	sd_share = rcu_dereference(per_cpu(sd_llc_shared, target));
//	if (sd_share && READ_ONCE(sd_share->overloaded))
//		return -1;
//
// before SIS_PROP's budget and before either scan. On zen3-2s-nps1 target
// cpu1 runs a hog and the rest of its LLC is idle (core {2, 130} first
// from target+1). With target's LLC marked overloaded select_idle_cpu
// returns -1 without scanning (no scan counted, has_idle_cores not cleared
// by a failed idle-core scan, SIS_PROP's wake_avg_idle and avg_scan_cost
// untouched), with and without an idle core known; unmarked, it returns
// cpu2. The flag read is target's LLC's: the waking CPU's own LLC (cpu8's)
// marked overloaded does not stop a scan of target's.
//
// The variant's counter: each early return is taken, and changed the
// answer, since the comparison kernel scans (what the unmarked LLC
// returns: cpu2). With every CPU of target's LLC busy that scan finds
// nothing: taken, not changed.
//
// Reference: <20220207034013.599214-1-yu.c.chen@intel.com>, the
// select_idle_cpu hunk.
func TestSISUtilV1SkipsScan(t *testing.T) {
	r := newRigSettings(t, "zen3-2s-nps1", sisVariant(t, "sis-util-v1", false))
	k := r.k
	r.hog(1)
	p := r.sleeper(64, 100*engine.Microsecond)
	r.run(5 * engine.Millisecond)
	r.unpin(p)
	// LLC 0 is target's (and cpu1's), LLC 1 the waking cpu8's.
	for _, tc := range []struct {
		waker        int
		over0, over1 bool
		idleCore     bool
		want         cpumask.CPU
	}{
		{1, true, false, true, cpumask.None},
		{1, true, false, false, cpumask.None},
		{1, false, false, true, 2},
		{1, false, false, false, 2},
		{8, true, false, true, cpumask.None},
		{8, true, false, false, cpumask.None},
		{8, false, true, true, 2},
		{8, false, true, false, 2},
	} {
		k.SdLLCShared(0).Overloaded = tc.over0
		k.SdLLCShared(8).Overloaded = tc.over1
		k.setIdleCores(1, tc.idleCore)
		rq := k.Rqs[tc.waker]
		wakerLLC := k.sdLLC(cpumask.CPU(tc.waker))
		scans, avgIdle, avgCost := rq.Wakeup.SISScans, rq.WakeAvgIdle, wakerLLC.AvgScanCost
		k.Branches = BranchCounters{}
		got := r.on(tc.waker).selectIdleCPU(p, r.llc(1), tc.idleCore, 1)
		if got != tc.want {
			t.Errorf("%+v: select_idle_cpu = %v, want %v", tc, got, tc.want)
		}
		if c, want := k.Branches[BranchLLCOverloaded], (BranchCounter{uint64(btoi(tc.over0)), uint64(btoi(tc.over0))}); c != want {
			t.Errorf("%+v: counted %+v, want %+v", tc, c, want)
		}
		if tc.want == cpumask.None {
			if rq.Wakeup.SISScans != scans || rq.WakeAvgIdle != avgIdle || wakerLLC.AvgScanCost != avgCost {
				t.Errorf("%+v: an overloaded LLC was scanned or accounted (scans %d → %d)", tc, scans, rq.Wakeup.SISScans)
			}
			if k.SdLLCShared(1).HasIdleCores != tc.idleCore {
				t.Errorf("%+v: has_idle_cores changed without a scan", tc)
			}
		} else if rq.Wakeup.SISScans != scans+1 {
			t.Errorf("%+v: no scan counted", tc)
		}
	}
	for c := 0; c < 8; c++ {
		for _, cpu := range []int{c, c + 128} {
			if cpu != 1 {
				r.hog(cpu)
			}
		}
	}
	r.run(engine.Millisecond)
	k.SdLLCShared(0).Overloaded = true
	for _, idleCore := range []bool{false, true} {
		k.setIdleCores(1, idleCore)
		k.Branches = BranchCounters{}
		if got := r.on(1).selectIdleCPU(p, r.llc(1), idleCore, 1); got != cpumask.None || k.Branches[BranchLLCOverloaded] != (BranchCounter{1, 0}) {
			t.Errorf("full LLC, has_idle_cores %v: select_idle_cpu = %v, counted %+v; want none, {1 0}", idleCore, got, k.Branches[BranchLLCOverloaded])
		}
	}
}

// nrIdleScanC is update_nr_idle_scan's expression evaluated as C does on
// LP64, step by step with exact integers: int llc_size; (llc_size − 4) × 2
// is an int; converted to unsigned long (mod 2^64) for "× sum_util"
// (mod 2^64); "/ total_capacity" unsigned; "llc_size − …" in unsigned long
// (mod 2^64); stored in int nr_scan (the low 32 bits, two's complement);
// "if (nr_scan < 4) nr_scan = 4".
func nrIdleScanC(llcSize int64, sumUtil, totalCapacity uint64) int64 {
	two64 := new(big.Int).Lsh(big.NewInt(1), 64)
	two32 := new(big.Int).Lsh(big.NewInt(1), 32)
	mod := func(x, m *big.Int) *big.Int { return new(big.Int).Mod(x, m) }
	a := mod(big.NewInt((llcSize-4)*2), two64)
	prod := mod(new(big.Int).Mul(a, new(big.Int).SetUint64(sumUtil)), two64)
	q := new(big.Int).Quo(prod, new(big.Int).SetUint64(totalCapacity))
	diff := mod(new(big.Int).Sub(big.NewInt(llcSize), q), two64)
	low := mod(diff, two32).Int64()
	if low >= 1<<31 {
		low -= 1 << 32
	}
	return max(low, 4)
}

// TestSISUtilV2NrIdleScan: the RFC's update_nr_idle_scan,
//
//	if (env->idle == CPU_NEWLY_IDLE || env->sd->span_weight != llc_size)
//		return;
//	...
//	nr_scan = llc_size - (llc_size - 4) * 2 * sum_util / sds->total_capacity;
//	if (nr_scan < 4)
//		nr_scan = 4;
//	WRITE_ONCE(sd_share->nr_idle_scan, nr_scan);
//
// at its ends, on zen3-2s-nps1's 16-CPU LLC with total_capacity 16384:
// sum_util 0 gives 16 (the whole LLC); the integer division keeps 16 up to
// 24 × 682 = 16368 < 16384 and gives 15 from 683 (16392); half the
// capacity, 8192, gives exactly 16 − 12 = 4, and 8191 gives 16 − 11 = 5;
// 8875 (24 × 8875 / 16384 = 13) would give 3, and full capacity 16 − 24 =
// −8: both floored to 4, as is anything above. On the HiKey's 4-CPU LLCs
// (llc_size − 4) × 2 = 0: always 4. For LLCs smaller than 4 the C
// expression wraps in unsigned long; the model's formula is checked against
// that evaluation (nrIdleScanC) for sizes 1–3 and 16. Newly idle balances
// and other levels do not write it, and nr_idle_scan is 0 until the first
// write (the structure is zero-allocated).
//
// Reference: <20220310005228.11737-1-yu.c.chen@intel.com>, update_nr_idle_scan.
func TestSISUtilV2NrIdleScan(t *testing.T) {
	r := newRigSettings(t, "zen3-2s-nps1", sisVariant(t, "sis-util-v2", false))
	k := r.k
	sd := r.llc(0)
	sds := k.SdLLCShared(0)
	if sd.T.SpanWeight != 16 || k.Topo.SdLLCSize[0] != 16 || sds.NrIdleScan != 0 {
		t.Fatalf("sd_llc(0): span_weight %d, sd_llc_size %d, boot nr_idle_scan %d", sd.T.SpanWeight, k.Topo.SdLLCSize[0], sds.NrIdleScan)
	}
	const total = 16384
	for _, tc := range []struct {
		sum  uint64
		want int
	}{{0, 16}, {682, 16}, {683, 15}, {8191, 5}, {8192, 4}, {8874, 4}, {8875, 4}, {16384, 4}, {20000, 4}} {
		// The expectation in the posting's words, with Go's truncating
		// division of non-negative numbers as C's unsigned one.
		want := max(4, 16-int(24*tc.sum/total))
		if want != tc.want {
			t.Fatalf("sum_util %d: the formula gives %d, the table says %d", tc.sum, want, tc.want)
		}
		for _, idle := range []int{CPUNotIdle, CPUIdle} {
			sds.NrIdleScan = -1
			k.updateNrIdleScan(0, sd, idle, total, tc.sum)
			if sds.NrIdleScan != want {
				t.Errorf("idle type %d, sum_util %d: nr_idle_scan %d, want %d", idle, tc.sum, sds.NrIdleScan, want)
			}
		}
	}
	sds.NrIdleScan = 7
	k.updateNrIdleScan(0, sd, CPUNewlyIdle, total, 0)
	for _, d := range k.Domains(0) {
		if d.T.SpanWeight != 16 {
			k.updateNrIdleScan(0, d, CPUNotIdle, total, 0)
		}
	}
	if sds.NrIdleScan != 7 {
		t.Errorf("nr_idle_scan changed to %d by a newly idle or non-LLC balance", sds.NrIdleScan)
	}

	h := newRigSettings(t, "hikey", sisVariant(t, "sis-util-v2", false))
	if h.k.Topo.SdLLCSize[0] != 4 {
		t.Fatalf("hikey sd_llc_size %d, want 4", h.k.Topo.SdLLCSize[0])
	}
	for _, sum := range []uint64{0, 2048, 4096} {
		h.k.updateNrIdleScan(0, h.llc(0), CPUNotIdle, 4096, sum)
		if n := h.k.SdLLCShared(0).NrIdleScan; n != 4 {
			t.Errorf("hikey, sum_util %d: nr_idle_scan %d, want 4", sum, n)
		}
	}

	for _, llc := range []int{1, 2, 3, 16} {
		for _, c := range []struct{ sum, total uint64 }{{0, 1024}, {1, 3000}, {1000, 2048}, {1024, 3072}, {3071, 3072}, {5000, 16384}} {
			if got, want := nrIdleScanV2(llc, c.sum, c.total), nrIdleScanC(int64(llc), c.sum, c.total); int64(got) != want {
				t.Errorf("llc_size %d, sum_util %d, total_capacity %d: nr_scan %d, C gives %d", llc, c.sum, c.total, got, want)
			}
		}
	}
}

// TestSISUtilV2Budget: with the RFC, select_idle_cpu's SIS_PROP block is
//
//	if (sched_feat(SIS_PROP) && !has_idle_core) {
//		sd_share = rcu_dereference(per_cpu(sd_llc_shared, target));
//		if (sd_share)
//			nr = READ_ONCE(sd_share->nr_idle_scan);
//	}
//
// and the loop's "if (!--nr) return -1;" then examines nr_idle_scan − 1
// CPUs; the block after the scan that spent wake_avg_idle and updated
// avg_scan_cost is removed. On zen3-2s-nps1 target cpu1's LLC is scanned
// from cpu2 in the order 2..7, 128..135, 0 (then 1, target): every CPU of
// it busy but the one at position j of that order. For nr_idle_scan n the
// idle CPU is found when j <= n − 1, and otherwise -1 after exactly n − 1
// CPUs examined; n = 0 (before any periodic balance wrote it) never
// reaches "!--nr" and the whole LLC is scanned. An idle-core scan is not
// bounded by nr: with n = 4 and only core {0, 128} idle, the idle-core
// scan reaches it at cpu128, 7th in the order, and returns cpu128
// (select_idle_core returns the CPU it was called on). The waking CPU's wake_stamp, wake_avg_idle and its LLC's
// avg_scan_cost stay as they were; the comparison kernel (v6.0, SIS_PROP
// on) changes them in the same scan.
//
// Reference: <20220310005228.11737-1-yu.c.chen@intel.com>, the
// select_idle_cpu hunks; fair.c:select_idle_cpu (v5.17).
func TestSISUtilV2Budget(t *testing.T) {
	order := []int{2, 3, 4, 5, 6, 7, 128, 129, 130, 131, 132, 133, 134, 135, 0}
	type probe struct {
		j, n int // the idle CPU's position (1-based) in the scan order; nr_idle_scan
	}
	var probes []probe
	for _, n := range []int{4, 5, 16, 0} {
		for _, j := range []int{1, 3, 4, 5, 15} {
			probes = append(probes, probe{j, n})
		}
	}
	for _, pr := range probes {
		r := newRigSettings(t, "zen3-2s-nps1", sisVariant(t, "sis-util-v2", false))
		k := r.k
		idle := order[pr.j-1]
		for _, c := range append([]int{1}, order...) {
			if c != idle {
				r.hog(c)
			}
		}
		p := r.sleeper(64, 100*engine.Microsecond)
		r.run(5 * engine.Millisecond)
		r.unpin(p)
		k.SdLLCShared(1).NrIdleScan = pr.n
		rq := k.Rqs[1]
		this := k.sdLLC(1)
		stamp, avgIdle, avgCost := rq.WakeStamp, rq.WakeAvgIdle, this.AvgScanCost
		scanned := rq.Wakeup.SISScanned
		// The comparison kernel's SIS_PROP budget, from the waking
		// CPU's wake_avg_idle (sched_init's 2 × migration_cost if
		// nothing set it, halved per jiffy since wake_stamp) and its
		// LLC's avg_scan_cost: nr = 16 × avg_idle / (avg_scan_cost + 1),
		// at least 4.
		st, ai := rq.WakeStamp, rq.WakeAvgIdle
		if st == 0 {
			st, ai = k.initialJiffies(), 2*k.S.MigrationCost
		}
		for ; st < k.Jiffies() && ai != 0; st++ {
			ai >>= 1
		}
		nrProp := max(4, int(16*ai/(avgCost+1)))
		k.Branches = BranchCounters{}
		got := r.on(1).selectIdleCPU(p, r.llc(1), false, 1)
		want, wantScanned := cpumask.CPU(idle), pr.j
		if pr.n > 0 && pr.j > pr.n-1 {
			want, wantScanned = cpumask.None, pr.n-1
		}
		if got != want || int(rq.Wakeup.SISScanned-scanned) != wantScanned {
			t.Errorf("nr_idle_scan %d, idle cpu%d at position %d: select_idle_cpu = %v after %d CPUs, want %v after %d",
				pr.n, idle, pr.j, got, rq.Wakeup.SISScanned-scanned, want, wantScanned)
		}
		// Changed when one budget reaches the idle CPU and the other not
		// (SIS_PROP's too examines nr − 1 CPUs).
		baseFinds := pr.j <= nrProp-1
		if c, wantC := k.Branches[BranchNrIdleScan], (BranchCounter{1, uint64(btoi(baseFinds != (want != cpumask.None)))}); c != wantC {
			t.Errorf("nr_idle_scan %d, position %d (SIS_PROP's nr %d): counted %+v, want %+v", pr.n, pr.j, nrProp, c, wantC)
		}
		if rq.WakeStamp != stamp || rq.WakeAvgIdle != avgIdle || this.AvgScanCost != avgCost {
			t.Errorf("nr_idle_scan %d, position %d: SIS_PROP's bookkeeping ran (wake_stamp %d → %d, wake_avg_idle %d → %d, avg_scan_cost %d → %d)",
				pr.n, pr.j, stamp, rq.WakeStamp, avgIdle, rq.WakeAvgIdle, avgCost, this.AvgScanCost)
		}
	}

	// The idle-core scan ignores nr_idle_scan.
	r := newRigSettings(t, "zen3-2s-nps1", sisVariant(t, "sis-util-v2", false))
	for c := 0; c < 8; c++ {
		if c != 0 {
			r.hog(c)
			r.hog(c + 128)
		}
	}
	p := r.sleeper(64, 100*engine.Microsecond)
	r.run(5 * engine.Millisecond)
	r.unpin(p)
	r.k.SdLLCShared(1).NrIdleScan = 4
	r.k.Branches = BranchCounters{}
	if got := r.on(1).selectIdleCPU(p, r.llc(1), true, 1); got != 128 {
		t.Errorf("idle-core scan with nr_idle_scan 4: %v, want cpu128 (7th in the order, beyond 3)", got)
	}
	if c := r.k.Branches[BranchNrIdleScan]; c != (BranchCounter{}) {
		t.Errorf("idle-core scan: the nr_idle_scan budget counted %+v, want nothing (SIS_PROP's budget is for the other scan)", c)
	}

	// The comparison kernel keeps SIS_PROP's bookkeeping: the same scan
	// there spends wake_avg_idle and moves avg_scan_cost.
	b := newRigSettings(t, "zen3-2s-nps1", sisVariant(t, "sis-util-v2", true))
	for _, c := range append([]int{1}, order[:14]...) {
		b.hog(c)
	}
	q := b.sleeper(64, 100*engine.Microsecond)
	b.run(5 * engine.Millisecond)
	b.unpin(q)
	rq := b.k.Rqs[1]
	b.k.wakeAvgIdleInit(rq)
	avgIdle, avgCost, scanned := rq.WakeAvgIdle, b.k.sdLLC(1).AvgScanCost, rq.Wakeup.SISScanned
	b.on(1).selectIdleCPU(q, b.llc(1), false, 1)
	if rq.Wakeup.SISScanned == scanned {
		t.Fatal("comparison kernel: select_idle_cpu examined no CPU")
	}
	if rq.WakeAvgIdle == avgIdle && b.k.sdLLC(1).AvgScanCost == avgCost {
		t.Error("comparison kernel: SIS_PROP's bookkeeping did not run, so the test above shows nothing")
	}
}
