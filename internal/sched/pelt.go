package sched

// PELT arithmetic, mirroring kernel/sched/pelt.c and pelt.h (v6.19). Every
// step is the kernel's integer arithmetic; the _avg values only change when a
// 1024-unit (1,048,576 ns) period boundary is crossed.

// PELT constants (sched-pelt.h).
const (
	LoadAvgPeriod        = 32
	LoadAvgMax           = 47742
	PeltMinDivider       = LoadAvgMax - 1024
	utilAvgUnchanged     = 1 << 31 // UTIL_AVG_UNCHANGED (v5.13+)
	utilAvgUnchangedV512 = 0x1     // UTIL_AVG_UNCHANGED of v5.12, in bit 0
	utilEstWeightShift   = 2
	utilEstMargin        = SchedCapacityScale / 100
)

// runnableAvgYNInv mirrors sched-pelt.h:runnable_avg_yN_inv (v6.19): (2^32-1)*y^n for
// y^32 = 1/2.
var runnableAvgYNInv = [32]uint32{
	0xffffffff, 0xfa83b2da, 0xf5257d14, 0xefe4b99a, 0xeac0c6e6, 0xe5b906e6,
	0xe0ccdeeb, 0xdbfbb796, 0xd744fcc9, 0xd2a81d91, 0xce248c14, 0xc9b9bd85,
	0xc5672a10, 0xc12c4cc9, 0xbd08a39e, 0xb8fbaf46, 0xb504f333, 0xb123f581,
	0xad583ee9, 0xa9a15ab4, 0xa5fed6a9, 0xa2704302, 0x9ef5325f, 0x9b8d39b9,
	0x9837f050, 0x94f4efa8, 0x91c3d373, 0x8ea4398a, 0x8b95c1e3, 0x88980e80,
	0x85aac367, 0x82cd8698,
}

// SchedAvg mirrors struct sched_avg (v6.19; UtilEstEwma holds the second
// util_est field of v6.0 and v5.12).
type SchedAvg struct {
	LastUpdateTime uint64
	LoadSum        uint64
	RunnableSum    uint64
	UtilSum        uint32
	PeriodContrib  uint32
	LoadAvg        uint64
	RunnableAvg    uint64
	UtilAvg        uint64
	// UtilEst is v6.8+'s util_est (the EWMA, UTIL_AVG_UNCHANGED in bit
	// 31) or, in the two-field form of v6.0 and v5.12
	// (Settings.UtilEstForm), util_est.enqueued (with the flag in bit 31,
	// bit 0 for v5.12); UtilEstEwma is then util_est.ewma. A cfs_rq uses
	// UtilEst alone: the sum of its tasks' estimates.
	UtilEst     uint32
	UtilEstEwma uint32
	// utilEstBit0 marks a v5.12 util_est.enqueued: the kernel's flag is
	// its bit 0, which cfs_se_util_change clears when PELT moves.
	// schedlab keeps the "unchanged" state in bit 31 for every form and
	// clears bit 0 as well when this is set.
	utilEstBit0 bool
}

// decayLoad mirrors pelt.c:decay_load (v6.19): val * y^n.
func decayLoad(val uint64, n uint64) uint64 {
	if n > LoadAvgPeriod*63 {
		return 0
	}
	localN := n
	if localN >= LoadAvgPeriod {
		val >>= localN / LoadAvgPeriod
		localN %= LoadAvgPeriod
	}
	return mulU64U32Shr(val, runnableAvgYNInv[localN], 32)
}

// accumulatePeltSegments mirrors pelt.c:__accumulate_pelt_segments (v6.19).
func accumulatePeltSegments(periods uint64, d1, d3 uint32) uint32 {
	c3 := d3
	c1 := uint32(decayLoad(uint64(d1), periods))
	c2 := uint32(LoadAvgMax - decayLoad(LoadAvgMax, periods) - 1024)
	return c1 + c2 + c3
}

// accumulateSum mirrors pelt.c:accumulate_sum (v6.19). delta is in 1024 ns units.
func accumulateSum(delta uint64, sa *SchedAvg, load, runnable uint64, running bool) uint32 {
	contrib := uint32(delta)
	delta += uint64(sa.PeriodContrib)
	periods := delta / 1024
	if periods != 0 {
		sa.LoadSum = decayLoad(sa.LoadSum, periods)
		sa.RunnableSum = decayLoad(sa.RunnableSum, periods)
		sa.UtilSum = uint32(decayLoad(uint64(sa.UtilSum), periods))
		delta %= 1024
		if load != 0 {
			contrib = accumulatePeltSegments(periods, 1024-sa.PeriodContrib, uint32(delta))
		}
	}
	sa.PeriodContrib = uint32(delta)
	if load != 0 {
		sa.LoadSum += load * uint64(contrib)
	}
	if runnable != 0 {
		sa.RunnableSum += runnable * uint64(contrib) << SchedCapacityShift
	}
	if running {
		sa.UtilSum += contrib << SchedCapacityShift
	}
	return uint32(periods)
}

// updateLoadSum mirrors pelt.c:___update_load_sum (v6.19); it reports whether a
// period boundary was crossed.
func updateLoadSum(now uint64, sa *SchedAvg, load, runnable uint64, running bool) bool {
	delta := int64(now - sa.LastUpdateTime)
	if delta < 0 {
		sa.LastUpdateTime = now
		return false
	}
	d := uint64(delta) >> 10
	if d == 0 {
		return false
	}
	sa.LastUpdateTime += d << 10
	if load == 0 {
		runnable = 0
		running = false
	}
	return accumulateSum(d, sa, load, runnable, running) != 0
}

// getPeltDivider mirrors pelt.h:get_pelt_divider (v6.19).
func getPeltDivider(sa *SchedAvg) uint32 { return PeltMinDivider + sa.PeriodContrib }

// updateLoadAvg mirrors pelt.c:___update_load_avg (v6.19).
func updateLoadAvg(sa *SchedAvg, load uint64) {
	divider := uint64(getPeltDivider(sa))
	sa.LoadAvg = load * sa.LoadSum / divider
	sa.RunnableAvg = sa.RunnableSum / divider
	sa.UtilAvg = uint64(sa.UtilSum) / divider
}
