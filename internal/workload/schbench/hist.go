package schbench

import (
	"math"
	"math/bits"

	"github.com/schedlab/schedlab/internal/workload"
)

// The latency histogram of schbench, taken from fio ("mr axboe's magic
// latency histogram"): values below 512 are kept exactly, larger ones in
// 256 buckets per power of two; a bucket reports its midpoint.
const (
	platBits    = 8
	platVal     = 1 << platBits
	platGroupNr = 19
	platNr      = platGroupNr * platVal
)

// Stats mirrors struct stats: the histogram, the sample count, max and min.
type Stats struct {
	Plat     [platNr]uint32
	Samples  uint64
	Max, Min uint32
}

// platValToIdx mirrors schbench.c:plat_val_to_idx.
func platValToIdx(val uint32) uint32 {
	msb := uint32(0)
	if val != 0 {
		msb = uint32(31 - bits.LeadingZeros32(val))
	}
	if msb <= platBits {
		return val
	}
	errorBits := msb - platBits
	base := (errorBits + 1) << platBits
	offset := (platVal - 1) & (val >> errorBits)
	if base+offset < platNr-1 {
		return base + offset
	}
	return platNr - 1
}

// platIdxToVal mirrors schbench.c:plat_idx_to_val.
func platIdxToVal(idx uint32) uint32 {
	if idx < platVal<<1 {
		return idx
	}
	errorBits := (idx >> platBits) - 1
	base := uint32(1) << (errorBits + platBits)
	k := idx % platVal
	return base + uint32((float64(k)+0.5)*float64(uint32(1)<<errorBits))
}

// platIdxBounds is the range of values plat_val_to_idx puts in bucket idx:
// lo to hi inclusive (the last bucket takes every larger value too).
func platIdxBounds(idx uint32) (lo, hi uint32) {
	if idx < platVal<<1 {
		return idx, idx
	}
	errorBits := (idx >> platBits) - 1
	base := uint32(1) << (errorBits + platBits)
	lo = base + (idx%platVal)<<errorBits
	if idx == platNr-1 {
		return lo, math.MaxUint32
	}
	return lo, lo + 1<<errorBits - 1
}

// Histogram is s as a run records it: the buckets that hold samples, each
// with its bounds and the value the tool reports for it (plat_idx_to_val).
func (s *Stats) Histogram(name string) workload.Histogram {
	h := workload.Histogram{Name: name, Scheme: "schbench_plat", Buckets: []workload.Bucket{}}
	for i := uint32(0); i < platNr; i++ {
		if s.Plat[i] == 0 {
			continue
		}
		lo, hi := platIdxBounds(i)
		h.Buckets = append(h.Buckets, workload.Bucket{Lo: uint64(lo), Hi: uint64(hi), Value: uint64(platIdxToVal(i)), Count: uint64(s.Plat[i])})
	}
	return h
}

// Add mirrors add_lat. Like the tool, Min starts at 0 in zeroed memory and
// so stays 0 (the old schbench always prints min=0).
func (s *Stats) Add(us uint32) {
	if us > s.Max {
		s.Max = us
	}
	if us < s.Min {
		s.Min = us
	}
	s.Plat[platValToIdx(us)]++
	s.Samples++
}

// Percentiles mirrors calc_percentiles: for each p of plist, the value of
// the first bucket where the running count reaches p/100 × samples.
func (s *Stats) Percentiles(plist []float64) []uint32 {
	out, _ := s.PercentileCounts(plist)
	return out
}

// PercentileCounts is Percentiles plus, for each percentile, the number of
// samples between it and the previous one (the current schbench's
// "(N samples)" column: calc_percentiles' ocounts after its differencing).
func (s *Stats) PercentileCounts(plist []float64) ([]uint32, []uint64) {
	out := make([]uint32, len(plist))
	counts := make([]uint64, len(plist))
	if len(plist) == 0 {
		return out, counts
	}
	var sum uint64
	j := 0
	for i := uint32(0); i < platNr; i++ {
		sum += uint64(s.Plat[i])
		for float64(sum) >= plist[j]/100.0*float64(s.Samples) {
			out[j] = platIdxToVal(i)
			counts[j] = sum
			if j == len(plist)-1 {
				for k := len(counts) - 1; k > 0; k-- {
					counts[k] -= counts[k-1]
				}
				return out, counts
			}
			j++
		}
	}
	for k := len(counts) - 1; k > 0; k-- {
		counts[k] -= counts[k-1]
	}
	return out, counts
}

// AddLat mirrors the current schbench's add_lat: unlike Add, Min is the
// smallest sample (a zero Min means "none yet").
func (s *Stats) AddLat(us uint32) {
	if us > s.Max {
		s.Max = us
	}
	if s.Min == 0 || us < s.Min {
		s.Min = us
	}
	s.Plat[platValToIdx(us)]++
	s.Samples++
}

// Combine mirrors combine_stats: fold o into s. As in the tool, an o with
// no samples (Min 0) makes s.Min 0.
func (s *Stats) Combine(o *Stats) {
	for i := range s.Plat {
		s.Plat[i] += o.Plat[i]
	}
	s.Samples += o.Samples
	if o.Max > s.Max {
		s.Max = o.Max
	}
	if s.Min == 0 || o.Min < s.Min {
		s.Min = o.Min
	}
}
