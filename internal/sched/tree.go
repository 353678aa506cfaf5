package sched

// The kernel keeps queued entities (except curr) in cfs_rq->tasks_timeline,
// an rb-tree cached at its leftmost node: ordered by deadline for EEVDF,
// by vruntime for CFS. For EEVDF each node carries augmented values of its
// subtree (fair.c:min_vruntime_update, v6.19): min_vruntime, which the heap
// search of __pick_eevdf descends by, and min_slice and max_slice, which
// cfs_rq_min_slice and cfs_rq_max_slice read at the root. schedlab keeps
// the same red-black tree (lib/rbtree.c's rules, written out here with the
// augmentation done as rbtree_augmented.h does: propagate up from a changed
// node until the values hold, copy on a rotation and to an erased node's
// successor), so every queue operation costs O(log n) however many
// entities a queue holds.
//
// An entity whose key equals an existing one goes after it, as
// rb_add_cached puts equal keys to the right; the tree's order is the only
// thing the model observes, never its shape.
//
// The augmented values are kept exact. Two bugs later reported against the
// kernel's augmentation (max_slice not set by __enqueue_entity before the
// insertion, and RB_DECLARE_CALLBACKS copying only min_vruntime on a
// rotation or when a successor replaces an erased node) are not modelled:
// cfs_rq_min_slice and cfs_rq_max_slice return the true minimum and maximum
// of the queue, as they did when they scanned it, and as the kernel does
// with the fixes.

// entityBefore mirrors fair.c:entity_before (v6.19) for the tree's key.
func (k *Kernel) entityBefore(a, b *SchedEntity) bool {
	if k.S.EEVDF {
		return int64(a.Deadline-b.Deadline) < 0
	}
	return int64(a.Vruntime-b.Vruntime) < 0
}

// minVruntimeUpdate mirrors fair.c:min_vruntime_update (v6.19, with
// max_slice as the lag-clamp fix 6e3c0a4e1ad1 adds it): the node's
// augmented values from its own and its children's. It reports whether
// they were unchanged.
func minVruntimeUpdate(se *SchedEntity) bool {
	oldMinVruntime, oldMinSlice, oldMaxSlice := se.minVruntime, se.minSlice, se.maxSlice
	se.minVruntime = se.Vruntime
	se.minSlice = se.Slice
	se.maxSlice = se.Slice
	for _, rse := range [2]*SchedEntity{se.rbRight, se.rbLeft} {
		if rse == nil {
			continue
		}
		// __min_vruntime_update, __min_slice_update, __max_slice_update
		if int64(se.minVruntime-rse.minVruntime) > 0 {
			se.minVruntime = rse.minVruntime
		}
		if rse.minSlice < se.minSlice {
			se.minSlice = rse.minSlice
		}
		if rse.maxSlice > se.maxSlice {
			se.maxSlice = rse.maxSlice
		}
	}
	return se.minVruntime == oldMinVruntime && se.minSlice == oldMinSlice && se.maxSlice == oldMaxSlice
}

// minVruntimeCbPropagate mirrors min_vruntime_cb_propagate(&se->run_node,
// NULL) (RB_DECLARE_CALLBACKS, v6.19): recompute the augmented values from
// se up to the root, stopping where nothing changed. se must be in the
// tree and its ancestors' values right but for se's change.
func minVruntimeCbPropagate(se *SchedEntity) {
	for ; se != nil; se = se.rbParent {
		if minVruntimeUpdate(se) {
			break
		}
	}
}

// minVruntimePropagateTo mirrors min_vruntime_cb_propagate(&se->run_node,
// &stop->run_node) (RB_DECLARE_CALLBACKS, v6.19): as minVruntimeCbPropagate,
// but stopping below stop.
func minVruntimePropagateTo(se, stop *SchedEntity) {
	for ; se != stop; se = se.rbParent {
		if minVruntimeUpdate(se) {
			break
		}
	}
}

// rbIsRed reports whether n is a red node (nil leaves are black).
func rbIsRed(n *SchedEntity) bool { return n != nil && n.rbRed }

// rbReplaceChild puts n where old was under parent (or at the root).
func (c *CfsRq) rbReplaceChild(old, n, parent *SchedEntity) {
	switch {
	case parent == nil:
		c.rbRoot = n
	case parent.rbLeft == old:
		parent.rbLeft = n
	default:
		parent.rbRight = n
	}
}

// rbRotateLeft turns x's right child y into the subtree's top. Like
// RBNAME_rotate, y takes x's augmented values (the subtree holds the same
// entities) and x's are recomputed.
func (c *CfsRq) rbRotateLeft(x *SchedEntity) {
	y := x.rbRight
	x.rbRight = y.rbLeft
	if y.rbLeft != nil {
		y.rbLeft.rbParent = x
	}
	y.rbParent = x.rbParent
	c.rbReplaceChild(x, y, x.rbParent)
	y.rbLeft = x
	x.rbParent = y
	y.minVruntime, y.minSlice, y.maxSlice = x.minVruntime, x.minSlice, x.maxSlice
	minVruntimeUpdate(x)
}

// rbRotateRight is rbRotateLeft's mirror.
func (c *CfsRq) rbRotateRight(x *SchedEntity) {
	y := x.rbLeft
	x.rbLeft = y.rbRight
	if y.rbRight != nil {
		y.rbRight.rbParent = x
	}
	y.rbParent = x.rbParent
	c.rbReplaceChild(x, y, x.rbParent)
	y.rbRight = x
	x.rbParent = y
	y.minVruntime, y.minSlice, y.maxSlice = x.minVruntime, x.minSlice, x.maxSlice
	minVruntimeUpdate(x)
}

// timelineInsert mirrors rb_add_augmented_cached(&se->run_node,
// &cfs_rq->tasks_timeline, __entity_less, &min_vruntime_cb) (v6.19): se goes
// after every entity it is not before; its own augmented values are set
// first, as __enqueue_entity does, the new leaf's are propagated up, and
// the rebalancing rotations keep them.
func (k *Kernel) timelineInsert(c *CfsRq, se *SchedEntity) {
	if se.onTimeline {
		panic("sched: enqueue of an entity already in the timeline")
	}
	se.minVruntime, se.minSlice, se.maxSlice = se.Vruntime, se.Slice, se.Slice
	var parent *SchedEntity
	leftmost := true
	for n := c.rbRoot; n != nil; {
		parent = n
		if k.entityBefore(se, n) {
			n = n.rbLeft
		} else {
			n = n.rbRight
			leftmost = false
		}
	}
	se.rbParent, se.rbLeft, se.rbRight, se.rbRed = parent, nil, nil, true
	switch {
	case parent == nil:
		c.rbRoot = se
	case k.entityBefore(se, parent):
		parent.rbLeft = se
	default:
		parent.rbRight = se
	}
	if leftmost {
		c.rbLeftmost = se
	}
	se.onTimeline = true
	c.nrTimeline++
	minVruntimeCbPropagate(parent)

	// __rb_insert: restore the red-black rules.
	z := se
	for rbIsRed(z.rbParent) {
		p := z.rbParent
		g := p.rbParent // p is red, so not the root
		if p == g.rbLeft {
			if u := g.rbRight; rbIsRed(u) {
				p.rbRed, u.rbRed, g.rbRed = false, false, true
				z = g
				continue
			}
			if z == p.rbRight {
				c.rbRotateLeft(p)
				z, p = p, z
			}
			p.rbRed, g.rbRed = false, true
			c.rbRotateRight(g)
		} else {
			if u := g.rbLeft; rbIsRed(u) {
				p.rbRed, u.rbRed, g.rbRed = false, false, true
				z = g
				continue
			}
			if z == p.rbLeft {
				c.rbRotateRight(p)
				z, p = p, z
			}
			p.rbRed, g.rbRed = false, true
			c.rbRotateLeft(g)
		}
	}
	c.rbRoot.rbRed = false
}

// timelineRemove mirrors rb_erase_augmented_cached(&se->run_node,
// &cfs_rq->tasks_timeline, &min_vruntime_cb) (v6.19).
func timelineRemove(c *CfsRq, z *SchedEntity) {
	if !z.onTimeline {
		panic("sched: dequeue of an entity not in the timeline")
	}
	if c.rbLeftmost == z {
		c.rbLeftmost = rbNext(z)
	}
	// __rb_erase_augmented: splice z out, or its successor y into its
	// place; x is the node that took the spliced node's place (maybe a nil
	// leaf, under xParent). The augmented values are recomputed upwards,
	// stopping where a node's are unchanged: above it nothing changed but
	// through it.
	var x, xParent *SchedEntity
	removedRed := z.rbRed
	switch {
	case z.rbLeft == nil:
		x, xParent = z.rbRight, z.rbParent
		c.rbTransplant(z, x)
		minVruntimeCbPropagate(xParent)
	case z.rbRight == nil:
		x, xParent = z.rbLeft, z.rbParent
		c.rbTransplant(z, x)
		minVruntimeCbPropagate(xParent)
	default:
		y := z.rbRight
		for y.rbLeft != nil {
			y = y.rbLeft
		}
		removedRed = y.rbRed
		x = y.rbRight
		// augment->copy(node, successor): y stands for z's subtree
		// from now on, so the propagation above it stops where z's
		// values still hold.
		y.minVruntime, y.minSlice, y.maxSlice = z.minVruntime, z.minSlice, z.maxSlice
		if y.rbParent == z {
			xParent = y
		} else {
			xParent = y.rbParent
			c.rbTransplant(y, x)
			y.rbRight = z.rbRight
			y.rbRight.rbParent = y
		}
		c.rbTransplant(z, y)
		y.rbLeft = z.rbLeft
		y.rbLeft.rbParent = y
		y.rbRed = z.rbRed
		// augment->propagate(parent, successor), then from the
		// successor to the root.
		minVruntimePropagateTo(xParent, y)
		minVruntimeCbPropagate(y)
	}
	z.rbParent, z.rbLeft, z.rbRight, z.rbRed = nil, nil, nil, false
	z.onTimeline = false
	c.nrTimeline--
	if !removedRed {
		c.rbEraseColor(x, xParent)
	}
}

// rbTransplant puts v (maybe nil) in u's place under u's parent.
func (c *CfsRq) rbTransplant(u, v *SchedEntity) {
	c.rbReplaceChild(u, v, u.rbParent)
	if v != nil {
		v.rbParent = u.rbParent
	}
}

// rbEraseColor mirrors lib/rbtree.c:____rb_erase_color (v6.19, the same
// in v6.0 and v5.12): x (maybe a nil
// leaf under parent) is one black short; recolour and rotate until the
// black heights agree.
func (c *CfsRq) rbEraseColor(x, parent *SchedEntity) {
	for x != c.rbRoot && !rbIsRed(x) {
		if x == parent.rbLeft {
			w := parent.rbRight // not nil: its side has x's black height + 1
			if rbIsRed(w) {
				w.rbRed, parent.rbRed = false, true
				c.rbRotateLeft(parent)
				w = parent.rbRight
			}
			if !rbIsRed(w.rbLeft) && !rbIsRed(w.rbRight) {
				w.rbRed = true
				x, parent = parent, parent.rbParent
				continue
			}
			if !rbIsRed(w.rbRight) {
				w.rbLeft.rbRed, w.rbRed = false, true
				c.rbRotateRight(w)
				w = parent.rbRight
			}
			w.rbRed, parent.rbRed = parent.rbRed, false
			w.rbRight.rbRed = false
			c.rbRotateLeft(parent)
			x = c.rbRoot
		} else {
			w := parent.rbLeft
			if rbIsRed(w) {
				w.rbRed, parent.rbRed = false, true
				c.rbRotateRight(parent)
				w = parent.rbLeft
			}
			if !rbIsRed(w.rbLeft) && !rbIsRed(w.rbRight) {
				w.rbRed = true
				x, parent = parent, parent.rbParent
				continue
			}
			if !rbIsRed(w.rbLeft) {
				w.rbRight.rbRed, w.rbRed = false, true
				c.rbRotateLeft(w)
				w = parent.rbLeft
			}
			w.rbRed, parent.rbRed = parent.rbRed, false
			w.rbLeft.rbRed = false
			c.rbRotateRight(parent)
			x = c.rbRoot
		}
	}
	if x != nil {
		x.rbRed = false
	}
}

// rbNext mirrors lib/rbtree.c:rb_next (every baseline): the entity after se in tree order.
func rbNext(se *SchedEntity) *SchedEntity {
	if n := se.rbRight; n != nil {
		for n.rbLeft != nil {
			n = n.rbLeft
		}
		return n
	}
	for se.rbParent != nil && se == se.rbParent.rbRight {
		se = se.rbParent
	}
	return se.rbParent
}

// pickRootEntity mirrors fair.c:__pick_root_entity (v6.19).
func pickRootEntity(c *CfsRq) *SchedEntity { return c.rbRoot }

// pickFirstEntity mirrors fair.c:__pick_first_entity (v6.19): the cached
// leftmost entity.
func pickFirstEntity(c *CfsRq) *SchedEntity { return c.rbLeftmost }

// pickNextEntityInTree mirrors fair.c:__pick_next_entity (v6.19; the tree
// successor). It returns nil for an entity not in the tree.
func pickNextEntityInTree(c *CfsRq, se *SchedEntity) *SchedEntity {
	if !se.onTimeline {
		return nil
	}
	return rbNext(se)
}

// pickLastEntity mirrors fair.c:__pick_last_entity (v6.19; rb_last).
func pickLastEntity(c *CfsRq) *SchedEntity {
	n := c.rbRoot
	for n != nil && n.rbRight != nil {
		n = n.rbRight
	}
	return n
}

// timelineEntities returns the tree's entities in order.
func (c *CfsRq) timelineEntities() []*SchedEntity {
	out := make([]*SchedEntity, 0, c.nrTimeline)
	for se := c.rbLeftmost; se != nil; se = rbNext(se) {
		out = append(out, se)
	}
	return out
}
