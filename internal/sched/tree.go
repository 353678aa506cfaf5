package sched

// The kernel keeps queued entities (except curr) in an rb-tree: ordered by
// deadline and augmented with the subtree's minimum vruntime for EEVDF
// (v6.10+), ordered by vruntime for CFS. schedlab keeps them in a slice sorted
// the same way. The orders are identical: an entity whose key equals an
// existing one goes after it, as rb_add_cached puts equal keys to the right.
// The EEVDF heap search of __pick_eevdf returns the first eligible entity in
// tree order, which pickEEVDF finds by a scan from the left. Runqueues hold
// tens of entities, where a slice is faster than a tree; the price is O(n)
// insertion on very long queues.

// entityBefore mirrors fair.c:entity_before (v6.19) for the tree's key.
func (k *Kernel) entityBefore(a, b *SchedEntity) bool {
	if k.S.EEVDF {
		return int64(a.Deadline-b.Deadline) < 0
	}
	return int64(a.Vruntime-b.Vruntime) < 0
}

// timelineInsert puts se after every entity it is not before.
func (k *Kernel) timelineInsert(c *CfsRq, se *SchedEntity) {
	tl := c.timeline
	lo, hi := 0, len(tl)
	for lo < hi {
		m := (lo + hi) / 2
		if k.entityBefore(se, tl[m]) {
			hi = m
		} else {
			lo = m + 1
		}
	}
	tl = append(tl, nil)
	copy(tl[lo+1:], tl[lo:])
	tl[lo] = se
	c.timeline = tl
}

// timelineRemove removes se from the timeline.
func timelineRemove(c *CfsRq, se *SchedEntity) {
	tl := c.timeline
	for i, e := range tl {
		if e == se {
			copy(tl[i:], tl[i+1:])
			tl[len(tl)-1] = nil
			c.timeline = tl[:len(tl)-1]
			return
		}
	}
	panic("sched: dequeue of an entity not in the timeline")
}

// pickFirstEntity mirrors fair.c:__pick_first_entity (v6.19).
func pickFirstEntity(c *CfsRq) *SchedEntity {
	if len(c.timeline) == 0 {
		return nil
	}
	return c.timeline[0]
}

// pickNextEntityInTree mirrors fair.c:__pick_next_entity (v6.19; the tree successor).
func pickNextEntityInTree(c *CfsRq, se *SchedEntity) *SchedEntity {
	for i, e := range c.timeline {
		if e == se {
			if i+1 < len(c.timeline) {
				return c.timeline[i+1]
			}
			return nil
		}
	}
	return nil
}

// pickLastEntity mirrors fair.c:__pick_last_entity (v6.19).
func pickLastEntity(c *CfsRq) *SchedEntity {
	if len(c.timeline) == 0 {
		return nil
	}
	return c.timeline[len(c.timeline)-1]
}
