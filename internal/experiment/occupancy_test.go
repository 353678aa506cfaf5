package experiment

import (
	"math/rand"
	"testing"

	"github.com/schedlab/schedlab/internal/sched"
	"github.com/schedlab/schedlab/internal/trace"
)

// The occupancy binning, with its doubling bin width, agrees with a
// brute-force count of busy nanoseconds per bin.
func TestOccupancyMatchesBruteForce(t *testing.T) {
	const n, end = 3, 5_000_000 // 3 CPUs, 5 ms
	rng := rand.New(rand.NewSource(1))
	o := newOccupancyWriter(n)
	busy := make([][]bool, n) // per ns would be too big: per µs
	for c := range busy {
		busy[c] = make([]bool, end/1000)
	}
	state := make([]bool, n)
	since := make([]int, n)
	for ts := 0; ts < end; ts += 1000 * (1 + rng.Intn(50)) {
		cpu := rng.Intn(n)
		next := rng.Intn(2) == 0
		if state[cpu] {
			for u := since[cpu] / 1000; u < ts/1000; u++ {
				busy[cpu][u] = true
			}
		}
		pid := int32(0)
		if next {
			pid = 7
		}
		if err := o.Write(trace.Event{Type: trace.SchedSwitch, TS: uint64(ts) + sched.ClockBase, CPU: int32(cpu), Next: trace.Task{Pid: pid}}); err != nil {
			t.Fatal(err)
		}
		state[cpu], since[cpu] = next, ts
	}
	for cpu := range state {
		if state[cpu] {
			for u := since[cpu] / 1000; u < end/1000; u++ {
				busy[cpu][u] = true
			}
		}
	}
	occ := o.finish(end)
	bins := len(occ.CPUs[0])
	if bins > maxOccBins || int64(bins)*occ.BinNs < end || occ.BinNs%1000 != 0 {
		t.Fatalf("%d bins of %d ns", bins, occ.BinNs)
	}
	for cpu := 0; cpu < n; cpu++ {
		for b := 0; b < bins; b++ {
			lo, hi := int64(b)*occ.BinNs/1000, min(int64(b+1)*occ.BinNs, end)/1000
			var cnt int64
			for u := lo; u < hi; u++ {
				if busy[cpu][u] {
					cnt++
				}
			}
			want := byte(float64(cnt)/float64(hi-lo)*255 + 0.5)
			if got := occ.CPUs[cpu][b]; got != want {
				t.Fatalf("cpu %d bin %d: %d, want %d", cpu, b, got, want)
			}
		}
	}
}
