package pingpong

import (
	"math/rand/v2"
	"sort"
	"testing"
)

// insertSort and median against a brute-force oracle written from
// lib_timing.c's comments: the samples sorted by time per iteration,
// biggest first (a stable sort keeps equal ones in arrival order, as
// insertsort puts a new value after its equals), zero times dropped;
// the median is the middle one, or for an even count the integer means
// of the two middle ones' times and counts.
func TestMedianMatchesOracle(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 2000; trial++ {
		var got, all []sample
		for i := r.IntN(25); i > 0; i-- {
			s := sample{u: uint64(r.IntN(5)) * 1000, n: uint64(1 + r.IntN(3))}
			got = insertSort(got, s)
			if s.u != 0 {
				all = append(all, s)
			}
		}
		sort.SliceStable(all, func(i, j int) bool {
			return float64(all[i].u)/float64(all[i].n) > float64(all[j].u)/float64(all[j].n)
		})
		if len(got) != len(all) {
			t.Fatalf("kept %d samples, want %d", len(got), len(all))
		}
		for i := range all {
			if got[i] != all[i] {
				t.Fatalf("sorted %v, want %v", got, all)
			}
		}
		want := sample{0, 1}
		switch n := len(all); {
		case n%2 == 1:
			want = all[n/2]
		case n > 0:
			want = sample{(all[n/2].u + all[n/2-1].u) / 2, (all[n/2].n + all[n/2-1].n) / 2}
		}
		if m := median(got); m != want {
			t.Fatalf("median of %v: %v, want %v", got, m, want)
		}
	}
}

// cFloat spells what glibc's printf does for infinities and NaNs, and
// pads like %14f; cInt is x86-64's truncating conversion.
func TestCFormats(t *testing.T) {
	inf := 1.0
	inf /= 0
	for _, c := range []struct {
		v    float64
		want string
	}{
		{28.745, "     28.745000"},
		{-1561.6, "  -1561.600000"},
		{inf, "           inf"},
		{-inf, "          -inf"},
	} {
		if got := cFloat(c.v, 14, 6); got != c.want {
			t.Errorf("cFloat(%v) = %q, want %q", c.v, got, c.want)
		}
	}
	if cInt(38872.9) != 38872 || cInt(-640.7) != -640 || cInt(inf) != -1<<31 {
		t.Error("cInt does not truncate as (int) does")
	}
}
