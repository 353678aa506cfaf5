package sched

import (
	"fmt"
	"testing"
)

// TestTimelineModel checks the augmented rb-tree against the sorted slice
// it replaced (issue 15), for both keys (EEVDF's deadline, CFS's
// vruntime): random insertions with many equal keys, removals and slice
// changes propagated up (min_vruntime_cb_propagate) keep the order of a
// slice into which each entity goes after every one it is not before, and
// checkTree finds the red-black rules, the cached leftmost entity and every
// node's min_vruntime, min_slice and max_slice right; cfs_rq_min_slice,
// cfs_rq_max_slice, __pick_next_entity and __pick_last_entity agree with
// the slice.
func TestTimelineModel(t *testing.T) {
	for _, eevdf := range []bool{true, false} {
		t.Run(fmt.Sprintf("eevdf=%v", eevdf), func(t *testing.T) {
			k := &Kernel{}
			k.S.EEVDF = eevdf
			c := &CfsRq{rq: &Rq{}, tg: &TaskGroup{Name: "/"}}
			rnd := uint64(7)
			next := func(n int) int {
				rnd ^= rnd << 13
				rnd ^= rnd >> 7
				rnd ^= rnd << 17
				return int(rnd % uint64(n))
			}
			var model []*SchedEntity
			var pool []*SchedEntity
			for i := 0; i < 300; i++ {
				pool = append(pool, &SchedEntity{})
			}
			for step := 0; step < 20000; step++ {
				se := pool[next(len(pool))]
				switch {
				case !se.onTimeline:
					// Keys near 2^64 so that wrapped comparisons count.
					se.Deadline = uint64(next(50)) - 20
					se.Vruntime = uint64(next(50)) - 20
					se.Slice = uint64(1 + next(8))
					k.timelineInsert(c, se)
					i := 0
					for i < len(model) && !k.entityBefore(se, model[i]) {
						i++
					}
					model = append(model[:i], append([]*SchedEntity{se}, model[i:]...)...)
				case next(3) == 0:
					se.Slice = uint64(1 + next(8))
					minVruntimeCbPropagate(se)
				default:
					timelineRemove(c, se)
					for i, e := range model {
						if e == se {
							model = append(model[:i], model[i+1:]...)
							break
						}
					}
				}
				k.checkTree(c)
				got := c.timelineEntities()
				if len(got) != len(model) {
					t.Fatalf("step %d: %d entities, want %d", step, len(got), len(model))
				}
				minS, maxS := u64Max, uint64(0)
				for i := range got {
					if got[i] != model[i] {
						t.Fatalf("step %d: entity %d out of order", step, i)
					}
					minS, maxS = min(minS, model[i].Slice), max(maxS, model[i].Slice)
					want := (*SchedEntity)(nil)
					if i+1 < len(model) {
						want = model[i+1]
					}
					if pickNextEntityInTree(c, got[i]) != want {
						t.Fatalf("step %d: __pick_next_entity of entity %d", step, i)
					}
				}
				if cfsRqMinSlice(c) != minS || cfsRqMaxSlice(c) != maxS {
					t.Fatalf("step %d: min/max slice %d/%d, want %d/%d", step, cfsRqMinSlice(c), cfsRqMaxSlice(c), minS, maxS)
				}
				if len(model) > 0 && (pickFirstEntity(c) != model[0] || pickLastEntity(c) != model[len(model)-1]) {
					t.Fatalf("step %d: first or last entity wrong", step)
				}
			}
		})
	}
}
