package sched

import (
	"math/big"
	"math/bits"
	"testing"

	"github.com/schedlab/schedlab/internal/cpumask"
	"github.com/schedlab/schedlab/internal/engine"
	"github.com/schedlab/schedlab/internal/kernels"
	"github.com/schedlab/schedlab/internal/topology"
)

// Tests of the baselines' arithmetic at the edges a slip in the model
// would cross unnoticed by the scenario tests: update_sd_pick_busiest's
// choice between overloaded groups, avg_idle's update and cap, and
// EEVDF's lag (issue 38, §5). Each expectation is computed from the
// kernel's formula in the test.

// TestPickBusiestOverloadedTie: between two overloaded groups,
// update_sd_pick_busiest takes the new one only if its avg_load is
// strictly higher: "return sgs->avg_load > busiest->avg_load" (v6.19; v6.0
// and v5.12 write it "if (sgs->avg_load <= busiest->avg_load) return
// false"). imbalance_pct plays no part in this choice in any of the three
// (it enters later, in find_busiest_group's "100 × busiest.avg_load <=
// imbalance_pct × local.avg_load"), and the asymmetric-capacity test after
// the switch concerns only groups up to fully_busy. So on a tie the group
// met first in the domain's group list stays the busiest.
//
// avg_load = group_load × SCHED_CAPACITY_SCALE / group_capacity, in
// integers: groups whose loads differ by less than group_capacity / 1024
// tie, and a group with more load but more capacity may have the lower
// avg_load. The cases run on the zen3's PKG domain of CPU 0 (its groups
// the 8 LLCs, group 0 local): group 1 is met first and becomes the busiest
// (overloaded is busier than the initial has_spare), then group 2 is
// offered.
//
// Reference: fair.c:update_sd_pick_busiest, update_sg_lb_stats,
// init_sd_lb_stats (v6.19, v6.0, v5.12).
func TestPickBusiestOverloadedTie(t *testing.T) {
	type group struct{ load, capacity uint64 }
	for _, kern := range kernels.Names() {
		k := newTestKernel(t, "zen3-2s-nps1", kern)
		sd := k.Domains(0)[2]
		if len(sd.T.Groups) < 3 || sd.T.Flags&topology.SDAsymCPUCapacity != 0 {
			t.Fatalf("%s: domain %s has %d groups", kern, sd.T.Name, len(sd.T.Groups))
		}
		env := &lbEnv{sd: sd, dstCPU: 0, dstRq: k.Rqs[0], idle: CPUIdle, cpus: sd.T.Span.Clone()}
		stats := func(g group) SgLbStats {
			return SgLbStats{GroupLoad: g.load, GroupCapacity: g.capacity, AvgLoad: g.load * SchedCapacityScale / g.capacity,
				GroupUtil: g.capacity, GroupRunnable: g.capacity * 2, SumNrRunning: 24, SumHNrRunning: 24,
				GroupWeight: 16, GroupType: GroupOverloaded}
		}
		for _, c := range []struct {
			name          string
			first, second group
		}{
			{"equal avg_load", group{16000, 16384}, group{16000, 16384}},
			{"second one above", group{16000, 16384}, group{16016, 16384}},         // 1000 vs 1001
			{"second one below", group{16000, 16384}, group{15999, 16384}},         // 1000 vs 999
			{"more load, same avg_load", group{16000, 16384}, group{16015, 16384}}, // 16015·1024/16384 = 1000.9
			{"more load, more capacity", group{16000, 16384}, group{17000, 17408}}, // 1000 vs 1000
			{"less load, less capacity", group{16000, 16384}, group{15000, 15000}}, // 1000 vs 1024
		} {
			first, second := stats(c.first), stats(c.second)
			var sds sdLbStats
			initSdLbStats(&sds)
			sds.local = sd.T.Groups[0]
			g1, g2 := sd.T.Groups[1], sd.T.Groups[2]
			if !k.updateSdPickBusiest(env, &sds, g1, &first) {
				t.Fatalf("%s: %s: the first overloaded group was not taken over has_spare", kern, c.name)
			}
			sds.busiest, sds.busiestStat = g1, first
			want := second.AvgLoad > first.AvgLoad
			if got := k.updateSdPickBusiest(env, &sds, g2, &second); got != want {
				t.Errorf("%s: %s: avg_load %d then %d (loads %d, %d): second taken %v, want %v",
					kern, c.name, first.AvgLoad, second.AvgLoad, c.first.load, c.second.load, got, want)
			}
		}
	}
}

// TestAvgIdleUpdate: when a task is activated on a CPU that was idle,
// ttwu_do_activate (v6.19; ttwu_do_wakeup in v5.12) folds the idle time
// into avg_idle and caps it:
//
//	delta = rq_clock(rq) − rq->idle_stamp
//	max = 2 × rq->max_idle_balance_cost
//	update_avg(&rq->avg_idle, delta)    // avg += (s64)(delta − avg) / 8
//	if (rq->avg_idle > max) rq->avg_idle = max
//
// The division is C's signed division, which truncates toward zero: a
// difference of −13 moves the average by −1 (an arithmetic shift would
// give −2), +13 by +1. The cases, on a HiKey whose CPU 1 idles after its
// task blocks until CPU 0 wakes it:
//
//   - after a long idle (1 s, as booted: avg_idle = 2 × migration_cost,
//     max_idle_balance_cost = migration_cost): the average overshoots the
//     cap and stops at 2 × max_idle_balance_cost;
//   - after a short one (100 µs): below the cap, the plain average;
//   - with 2 × max_idle_balance_cost one or two below the new average:
//     capped; at or one above it: not;
//   - differences of ∓13 ns: truncation toward zero.
//
// In the last four, the values of avg_idle and max_idle_balance_cost are
// set from the Wakeup tracepoint hook, which runs in ttwu_do_activate
// just before these lines, from the delta the hook sees.
//
// Reference: core.c:ttwu_do_activate (v6.19), ttwu_do_wakeup (v5.12),
// sched.h:update_avg.
func TestAvgIdleUpdate(t *testing.T) {
	type pre struct{ avg, maxCost, delta uint64 }
	cases := []struct {
		name   string
		idle   engine.Time
		set    func(delta uint64) (avg, maxCost uint64) // nil: as the run left them
		capped bool
	}{
		{"long idle, capped", engine.Second, nil, true},
		{"short idle, below the cap", 100 * engine.Microsecond, nil, false},
		{"cap just below the average", 2 * engine.Millisecond, func(d uint64) (uint64, uint64) {
			a := d / 2
			return a, (a + (d-a)/8 - 1) / 2
		}, true},
		{"cap at or just above the average", 2 * engine.Millisecond, func(d uint64) (uint64, uint64) {
			a := d / 2
			return a, (a + (d-a)/8 + 1) / 2
		}, false},
		{"difference −13: −1", 2 * engine.Millisecond, func(d uint64) (uint64, uint64) { return d + 13, d }, false},
		{"difference +13: +1", 2 * engine.Millisecond, func(d uint64) (uint64, uint64) { return d - 13, d }, false},
	}
	for _, kern := range []string{kernels.V619, kernels.V512} {
		for _, c := range cases {
			r := newRig(t, "hikey", kern)
			k := r.k
			r.hog(0)
			p := r.sleeper(1, 100*engine.Microsecond)
			r.run(200 * engine.Microsecond) // the sleeper has blocked
			r.run(c.idle)
			rq := k.Rqs[1]
			var seen *pre
			k.Hooks.Wakeup = func(q *Task, cpu cpumask.CPU) {
				if q != p || cpu != 1 || seen != nil {
					return
				}
				if rq.IdleStamp == 0 {
					t.Fatalf("%s: %s: idle_stamp is 0 at the activation", kern, c.name)
				}
				delta := rq.Clock - rq.IdleStamp
				if c.set != nil {
					rq.AvgIdle, rq.MaxIdleBalanceCost = c.set(delta)
				}
				seen = &pre{rq.AvgIdle, rq.MaxIdleBalanceCost, delta}
			}
			if !r.on(0).TryToWakeUp(p, 0) {
				t.Fatalf("%s: %s: the task was not asleep", kern, c.name)
			}
			for i := 0; seen == nil && i < 1000; i++ {
				k.Eng.Step() // up to the activation (after the IPI on v6.19)
			}
			if seen == nil || rq.IdleStamp != 0 {
				t.Fatalf("%s: %s: no activation on cpu1 (idle_stamp %d)", kern, c.name, rq.IdleStamp)
			}
			avg := seen.avg + uint64((int64(seen.delta)-int64(seen.avg))/8)
			max := 2 * seen.maxCost
			want := min(avg, max)
			if (avg > max) != c.capped {
				t.Fatalf("%s: %s: the case does not test what it says: avg %d, max %d", kern, c.name, avg, max)
			}
			t.Logf("%s: %s: avg_idle %d, delta %d, max %d -> %d", kern, c.name, seen.avg, seen.delta, max, rq.AvgIdle)
			if rq.AvgIdle != want {
				t.Errorf("%s: %s: avg_idle %d, delta %d, max_idle_balance_cost %d: avg_idle becomes %d, want %d",
					kern, c.name, seen.avg, seen.delta, seen.maxCost, rq.AvgIdle, want)
			}
		}
	}
}

// refCalcDeltaFair is calc_delta_fair(delta, se) for a task of the given
// nice level, computed as kernel-fair.md §2.2 states __calc_delta: fact =
// scale_load_down(NICE_0_LOAD) × inv_weight (sched_prio_to_wmult), its
// upper 32 bits shifted out into the shift of 32, then delta × fact >>
// shift in full precision. Nice 0 is the fast path (delta unchanged).
func refCalcDeltaFair(delta uint64, nice int) uint64 {
	if nice == 0 {
		return delta
	}
	fact := uint64(1024) * uint64(schedPrioToWmult[nice+20])
	shift := uint(32)
	if hi := fact >> 32; hi != 0 {
		fs := uint(bits.Len64(hi))
		shift -= fs
		fact >>= fs
	}
	r := new(big.Int).Mul(new(big.Int).SetUint64(delta), new(big.Int).SetUint64(fact))
	return r.Rsh(r, shift).Uint64()
}

// lagEnt is one entity of a hand-built EEVDF queue: its nice level, its
// vruntime as an offset from the queue's zero_vruntime, and its slice.
type lagEnt struct {
	nice  int
	off   int64
	slice uint64
}

const lagBase = uint64(1) << 40 // the queues' zero_vruntime

func (e lagEnt) weight() int64 { return int64(schedPrioToWeight[e.nice+20]) }

func (e lagEnt) entity() *SchedEntity {
	se := &SchedEntity{OnRq: true, Slice: e.slice, CustomSlice: true, Vruntime: lagBase + uint64(e.off)}
	se.Load = LoadWeight{Weight: scaleLoad(schedPrioToWeight[e.nice+20]), InvWeight: schedPrioToWmult[e.nice+20]}
	se.Deadline = se.Vruntime + refCalcDeltaFair(e.slice, e.nice)
	return se
}

// lagQueue builds a cfs_rq of k (not any CPU's) holding curr and the tree
// entities, kept as enqueue_entity keeps them: sum_w_vruntime, sum_weight,
// the tree's augmented slices, nr_queued.
func lagQueue(k *Kernel, curr *lagEnt, tree []lagEnt) (*CfsRq, []*SchedEntity) {
	c := newCfsRq(k.Rqs[0], k.RootTG)
	c.ZeroVruntime = lagBase
	if curr != nil {
		c.Curr = curr.entity()
		c.NrQueued++
	}
	var ses []*SchedEntity
	for _, e := range tree {
		se := e.entity()
		k.enqueueEntityTree(c, se)
		c.NrQueued++
		ses = append(ses, se)
	}
	return c, ses
}

// lagOracleV is the queue's zero-lag vruntime V = Σ w·v / Σ w, rounded
// down, from the entities' own values (as offsets from lagBase).
func lagOracleV(ents []lagEnt) int64 {
	var num, den int64
	for _, e := range ents {
		num += e.weight() * e.off
		den += e.weight()
	}
	q := num / den
	if num%den != 0 && num < 0 {
		q--
	}
	return q
}

// TestPlaceEntityLag: place_entity (v6.19) places an entity with saved lag
// vlag on a queue of total weight W (sum_weight plus curr's) at V − lag,
// where the lag is inflated for the entity's own weight w:
//
//	lag = vlag × (W + w); lag = div_s64(lag, W)   // W = 1 if 0
//
// in that order (multiply, then divide), with div_s64 truncating toward
// zero, under PLACE_LAG, when the queue is not empty and vlag ≠ 0. The
// deadline is vruntime + calc_delta_fair(base_slice, se). The queue: curr
// nice 0 at V0, nice 0 at V0 + 0.3 ms and nice 5 at V0 − 0.2 ms (W = 1024 +
// 1024 + 335 = 2383). vlag ±1001 for a nice −3 task (w = 1991): ±1001 ×
// 4374 / 2383 = ±1837.4, so ±1837 (flooring would give −1838 for the
// negative one, dividing first 0); vlag 2383 divides exactly (4374); vlag
// −7 for a nice-19 task (w = 15): −7 × 2398 / 2383 = −7.04 → −7.
//
// Reference: fair.c:place_entity, avg_vruntime (v6.19); kernel-fair.md
// §3.1.3.
func TestPlaceEntityLag(t *testing.T) {
	k := newTestKernel(t, "hikey", kernels.V619)
	// base_slice: 0.70 ms × (1 + ilog2(min(ncpus, 8))).
	baseSlice := uint64(700000) * uint64(bits.Len(uint(min(k.NrCPUs(), 8))))
	curr := lagEnt{0, 0, baseSlice}
	tree := []lagEnt{{0, 300000, baseSlice}, {5, -200000, baseSlice}}
	for _, c := range []struct {
		name     string
		nice     int
		vlag     int64
		empty    bool
		noLag    bool
		wantLag  int64
		roundsTo bool // whether the division had a remainder
	}{
		{"positive vlag, remainder", -3, 1001, false, false, 1837, true},
		{"negative vlag, remainder", -3, -1001, false, false, -1837, true},
		{"exact", -3, 2383, false, false, 4374, false},
		{"nice 19, small negative vlag", 19, -7, false, false, -7, true},
		{"vlag 0", -3, 0, false, false, 0, false},
		{"NO_PLACE_LAG", -3, 1001, false, true, 0, false},
		{"empty queue", -3, 1001, true, false, 0, false},
	} {
		k.S.PlaceLag = !c.noLag
		var q *CfsRq
		var ents []lagEnt
		if c.empty {
			q, _ = lagQueue(k, nil, nil)
		} else {
			q, _ = lagQueue(k, &curr, tree)
			ents = append([]lagEnt{curr}, tree...)
		}
		v := int64(0) // an empty queue's avg_vruntime is its zero_vruntime
		var load int64
		if len(ents) > 0 {
			v = lagOracleV(ents)
			for _, e := range ents {
				load += e.weight()
			}
		}
		se := lagEnt{c.nice, 0, baseSlice}.entity()
		se.OnRq, se.CustomSlice, se.Vlag = false, false, c.vlag
		lag := int64(0)
		if !c.noLag && !c.empty && c.vlag != 0 {
			w := lagEnt{nice: c.nice}.weight()
			lag = c.vlag * (load + w) / load // Go's / truncates toward zero, as div_s64
			if rem := c.vlag * (load + w) % load; (rem != 0) != c.roundsTo {
				t.Fatalf("%s: the case's remainder is %d", c.name, rem)
			}
		}
		if lag != c.wantLag {
			t.Fatalf("%s: the formula gives %d, the comment %d", c.name, lag, c.wantLag)
		}
		k.placeEntity(q, se, 0)
		if got, want := int64(se.Vruntime-lagBase), v-lag; got != want {
			t.Errorf("%s: vlag %d, W %d: placed at V0%+d, want V%+d − lag %d = V0%+d", c.name, c.vlag, load, got, v, lag, want)
		}
		if got, want := se.Deadline-se.Vruntime, refCalcDeltaFair(baseSlice, c.nice); got != want || se.Slice != baseSlice {
			t.Errorf("%s: deadline − vruntime %d, slice %d; want calc_delta_fair(%d) = %d", c.name, got, se.Slice, baseSlice, want)
		}
	}
	k.S.PlaceLag = true
}

// TestUpdateEntityLagClamp: update_entity_lag (6.19.10, the v6.19
// baseline's tree, with 6.19.7's backport of 6e3c0a4e1ad1) saves vlag = V −
// vruntime clamped to ±limit, limit = calc_delta_fair(cfs_rq_max_slice +
// TICK_NSEC, se): the largest slice on the queue (curr's and the tree's,
// whoever owns it), not the entity's own (v6.6's form was
// calc_delta_fair(max(2 × se->slice, TICK_NSEC), se); the lag-clamp fix
// 6e3c0a4e1ad1 changed it). TICK_NSEC = (10⁹ + HZ/2) / HZ.
//
// The queue: curr nice 0 (slice 3 ms) at V0, nice 0 (1 ms) at V0 + 0.1
// ms, nice 5 (5 ms: the largest) at V0 − 0.05 ms, and the entity itself
// (slice 2 ms) in the tree, so that V counts it. For a nice −3 entity
// limit = calc_delta_fair(5 ms + TICK_NSEC) (scaled by 1024/1991, rounded
// by __calc_delta's inverse-weight product); for nice 0 it is 5 ms +
// TICK_NSEC exactly. Its vruntime is put far on either side (clamped),
// close (not), and where V − vruntime is limit + 1 (clamped to limit),
// limit − 1 and −limit − 1.
//
// Reference: fair.c:update_entity_lag, cfs_rq_max_slice, avg_vruntime,
// calc_delta_fair (v6.19); kernel-fair.md §2.2, §3.1.3.
func TestUpdateEntityLagClamp(t *testing.T) {
	k := newTestKernel(t, "hikey", kernels.V619)
	// The oracle of calc_delta_fair against kernel-fair.md §2.2's golden
	// values (1 ms of execution).
	for _, g := range []struct {
		nice int
		want uint64
	}{{-20, 11536}, {-5, 328099}, {-1, 801879}, {0, 1000000}, {1, 1248780}, {5, 3056716}, {19, 68266666}} {
		if got := refCalcDeltaFair(1000000, g.nice); got != g.want {
			t.Fatalf("calc_delta_fair oracle: nice %d gives %d, want %d", g.nice, got, g.want)
		}
	}
	tick := (uint64(1e9) + uint64(k.S.HZ)/2) / uint64(k.S.HZ)
	ms := int64(engine.Millisecond)
	curr := lagEnt{0, 0, 3 * uint64(ms)}
	others := []lagEnt{{0, ms / 10, uint64(ms)}, {5, -ms / 20, 5 * uint64(ms)}}
	all := func(off int64, nice int) []lagEnt {
		return append([]lagEnt{curr, {nice, off, 2 * uint64(ms)}}, others...)
	}
	// f(off) = V − vruntime for the entity at V0 + off: non-increasing in
	// off, by 0 or 1 per step (the entity's weight is below the total), so
	// every value is met; find the smallest off with f(off) <= target.
	offFor := func(nice int, target int64) int64 {
		f := func(off int64) int64 { return lagOracleV(all(off, nice)) - off }
		lo, hi := int64(-1)<<40, int64(1)<<40
		for lo < hi {
			mid := lo + (hi-lo)/2
			if f(mid) <= target {
				hi = mid
			} else {
				lo = mid + 1
			}
		}
		if f(lo) != target {
			t.Fatalf("no vruntime gives V − vruntime = %d", target)
		}
		return lo
	}
	for _, nice := range []int{-3, 0} {
		limit := int64(refCalcDeltaFair(5*uint64(ms)+tick, nice))
		for _, c := range []struct {
			name string
			lag  int64 // V − vruntime wanted before the clamp; 0: use off
			off  int64
		}{
			{"far behind V: clamped to +limit", 0, -100 * ms},
			{"far ahead of V: clamped to −limit", 0, 100 * ms},
			{"close: not clamped", 0, 12345},
			{"limit + 1", limit + 1, 0},
			{"limit − 1", limit - 1, 0},
			{"−limit − 1", -limit - 1, 0},
			{"−limit + 1", -limit + 1, 0},
		} {
			off := c.off
			if c.lag != 0 {
				off = offFor(nice, c.lag)
			}
			q, ses := lagQueue(k, &curr, all(off, nice)[1:])
			se := ses[0]
			vlag := lagOracleV(all(off, nice)) - off
			want := min(max(vlag, -limit), limit)
			k.updateEntityLag(q, se)
			if se.Vlag != want {
				t.Errorf("nice %d, %s: V − vruntime = %d, limit %d: vlag %d, want %d", nice, c.name, vlag, limit, se.Vlag, want)
			}
		}
	}
}

// TestReweightEntityFullWeights: reweight_entity keeps a group entity's
// lag and relative deadline in proportion to its weight, "se->vlag =
// div_s64(se->vlag * se->load.weight, weight)" and the same for a
// rel_deadline, with se->load.weight and weight at full resolution
// (scale_load: NICE_0_LOAD is 1024 << 10 on 64-bit), truncating toward
// zero. Group shares need not be multiples of 1024, so the scaled-down
// weights (976 and 292 here) would give other numbers (3,342,475 for the
// lag). A dequeued entity: only the rescale and the new weight.
//
// Reference: fair.c:reweight_entity (v6.19 and 6.19.10 alike in this part).
func TestReweightEntityFullWeights(t *testing.T) {
	r := newRig(t, "zen3-2s-nps1", kernels.V619)
	k := r.k
	c := k.Rqs[0].CFS
	se := &SchedEntity{}
	const oldW, newW = 1000000, 300000
	updateLoadSet(&se.Load, oldW)
	se.Vlag = 1000003
	se.Deadline = 700001
	se.RelDeadline = true
	k.reweightEntity(c, se, newW)
	if want := int64(1000003) * oldW / newW; se.Vlag != want || want != 3333343 {
		t.Errorf("vlag %d, want 1000003 × %d / %d = %d", se.Vlag, oldW, newW, want)
	}
	if want := uint64(700001 * oldW / newW); se.Deadline != want || want != 2333336 {
		t.Errorf("relative deadline %d, want 700001 × %d / %d = %d", se.Deadline, oldW, newW, want)
	}
	se.Vlag = -1000003
	updateLoadSet(&se.Load, oldW)
	k.reweightEntity(c, se, newW)
	if se.Vlag != -3333343 {
		t.Errorf("negative vlag %d, want −3333343 (div_s64 truncates toward zero)", se.Vlag)
	}
	if se.Load.Weight != newW {
		t.Errorf("weight %d, want %d", se.Load.Weight, newW)
	}
}
