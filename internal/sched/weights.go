package sched

import "math/bits"

// Load-weight resolution on 64-bit kernels (sched.h, v6.19).
const (
	SchedFixedpointShift = 10
	SchedCapacityShift   = 10
	SchedCapacityScale   = 1 << SchedCapacityShift
	NiceZeroLoadShift    = SchedFixedpointShift + SchedFixedpointShift
	NiceZeroLoad         = 1 << NiceZeroLoadShift
	WMultShift           = 32
	WeightIdleprio       = 3
	WMultIdleprio        = 1431655765
	MaxRTPrio            = 100
	DefaultPrio          = MaxRTPrio + 20
)

// schedPrioToWeight mirrors core.c:sched_prio_to_weight (v6.19; nice -20..19).
var schedPrioToWeight = [40]uint64{
	88761, 71755, 56483, 46273, 36291,
	29154, 23254, 18705, 14949, 11916,
	9548, 7620, 6100, 4904, 3906,
	3121, 2501, 1991, 1586, 1277,
	1024, 820, 655, 526, 423,
	335, 272, 215, 172, 137,
	110, 87, 70, 56, 45,
	36, 29, 23, 18, 15,
}

// schedPrioToWmult mirrors core.c:sched_prio_to_wmult (v6.19): 2^32/weight as the
// kernel tabulates it (some entries are one above the floor).
var schedPrioToWmult = [40]uint32{
	48388, 59856, 76040, 92818, 118348,
	147320, 184698, 229616, 287308, 360437,
	449829, 563644, 704093, 875809, 1099582,
	1376151, 1717300, 2157191, 2708050, 3363326,
	4194304, 5237765, 6557202, 8165337, 10153587,
	12820798, 15790321, 19976592, 24970740, 31350126,
	39045157, 49367440, 61356676, 76695844, 95443717,
	119304647, 148102320, 186737708, 238609294, 286331153,
}

// scaleLoad mirrors sched.h:scale_load (v6.19).
func scaleLoad(w uint64) uint64 { return w << SchedFixedpointShift }

// scaleLoadDown mirrors sched.h:scale_load_down (v6.19; 64-bit): 0 stays 0, else at
// least 2.
func scaleLoadDown(w uint64) uint64 {
	if w == 0 {
		return 0
	}
	w >>= SchedFixedpointShift
	if w < 2 {
		return 2
	}
	return w
}

// LoadWeight mirrors struct load_weight (every baseline).
type LoadWeight struct {
	Weight    uint64
	InvWeight uint32
}

func updateLoadAdd(lw *LoadWeight, inc uint64) { lw.Weight += inc; lw.InvWeight = 0 }
func updateLoadSub(lw *LoadWeight, dec uint64) { lw.Weight -= dec; lw.InvWeight = 0 }
func updateLoadSet(lw *LoadWeight, w uint64)   { lw.Weight = w; lw.InvWeight = 0 }

// updateInvWeight mirrors fair.c:__update_inv_weight (v6.19).
func updateInvWeight(lw *LoadWeight) {
	if lw.InvWeight != 0 {
		return
	}
	w := scaleLoadDown(lw.Weight)
	switch {
	case w >= 1<<32-1:
		lw.InvWeight = 1
	case w == 0:
		lw.InvWeight = 0xFFFFFFFF
	default:
		lw.InvWeight = uint32(0xFFFFFFFF / w)
	}
}

// calcDelta mirrors fair.c:__calc_delta (v6.19): delta * weight / lw->weight
// computed with the inverse weight and a 96-bit product, as the kernel does.
func calcDelta(delta uint64, weight uint64, lw *LoadWeight) uint64 {
	fact := scaleLoadDown(weight)
	factHi := uint32(fact >> 32)
	shift := uint(WMultShift)
	updateInvWeight(lw)
	if factHi != 0 {
		fs := uint(bits.Len32(factHi))
		shift -= fs
		fact >>= fs
	}
	fact = uint64(uint32(fact)) * uint64(lw.InvWeight)
	factHi = uint32(fact >> 32)
	if factHi != 0 {
		fs := uint(bits.Len32(factHi))
		shift -= fs
		fact >>= fs
	}
	return mulU64U32Shr(delta, uint32(fact), shift)
}

// mulU64U32Shr mirrors math64.h:mul_u (v6.19)64_u32_shr: (a * mul) >> shift without
// overflow.
func mulU64U32Shr(a uint64, mul uint32, shift uint) uint64 {
	hi, lo := bits.Mul64(a, uint64(mul))
	if shift == 0 {
		return lo
	}
	if shift >= 64 {
		return hi >> (shift - 64)
	}
	return lo>>shift | hi<<(64-shift)
}

// calcDeltaFair mirrors fair.c:calc_delta_fair (v6.19): wall time to the entity's
// virtual time.
func calcDeltaFair(delta uint64, se *SchedEntity) uint64 {
	if se.Load.Weight != NiceZeroLoad {
		delta = calcDelta(delta, NiceZeroLoad, &se.Load)
	}
	return delta
}

// seWeight mirrors sched.h:se_weight (v6.19; the unscaled weight).
func seWeight(se *SchedEntity) uint64 { return scaleLoadDown(se.Load.Weight) }
