package cpumask

import (
	"slices"
	"testing"
)

func TestStringAndParse(t *testing.T) {
	for _, tc := range []struct {
		n    int
		cpus []CPU
		want string
	}{
		{8, nil, ""},
		{8, []CPU{0}, "0"},
		{8, []CPU{0, 1, 2, 3}, "0-3"},
		{256, []CPU{0, 1, 2, 128, 129, 200}, "0-2,128-129,200"},
		{130, []CPU{63, 64, 65, 129}, "63-65,129"},
	} {
		m := Of(tc.n, tc.cpus...)
		if got := m.String(); got != tc.want {
			t.Errorf("String(%v) = %q, want %q", tc.cpus, got, tc.want)
		}
		p, err := Parse(tc.n, tc.want)
		if err != nil || !p.Equal(m) {
			t.Errorf("Parse(%q) = %v, %v; want %v", tc.want, p, err, m)
		}
		if m.Weight() != len(tc.cpus) {
			t.Errorf("Weight(%v) = %d", tc.cpus, m.Weight())
		}
	}
}

func TestParseErrors(t *testing.T) {
	for _, s := range []string{"x", "3-1", "0-8", "-1", "1-"} {
		if _, err := Parse(8, s); err == nil {
			t.Errorf("Parse(%q) succeeded", s)
		}
	}
}

func TestForEachWrap(t *testing.T) {
	m := Of(16, 1, 3, 5, 9, 15)
	var got []CPU
	m.ForEachWrap(5, func(c CPU) bool { got = append(got, c); return true })
	want := []CPU{5, 9, 15, 1, 3}
	if len(got) != len(want) {
		t.Fatalf("got %v want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("got %v want %v", got, want)
		}
	}
}

func TestHex(t *testing.T) {
	for _, tc := range []struct {
		m    Mask
		want string
	}{
		{Range(8, 0, 3), "0f"},
		{Full(8), "ff"},
		{Of(64, 0, 32), "00000001,00000001"},
		{Of(34, 33, 0), "2,00000001"},
		{Range(256, 0, 255), "ffffffff,ffffffff,ffffffff,ffffffff,ffffffff,ffffffff,ffffffff,ffffffff"},
	} {
		if got := tc.m.Hex(); got != tc.want {
			t.Errorf("Hex(%v) = %q, want %q", tc.m, got, tc.want)
		}
	}
}

// TestAgainstBruteForce checks the set operations against a map-based model.
func TestAgainstBruteForce(t *testing.T) {
	const n = 200
	a, b := New(n), New(n)
	ma, mb := map[CPU]bool{}, map[CPU]bool{}
	x := uint32(12345)
	for i := 0; i < 300; i++ {
		x = x*1664525 + 1013904223
		c := CPU(x % n)
		if i%2 == 0 {
			a.Set(c)
			ma[c] = true
		} else {
			b.Set(c)
			mb[c] = true
		}
	}
	and, or, andnot := a.And(b), a.Or(b), a.AndNot(b)
	for c := CPU(0); c < n; c++ {
		if and.Test(c) != (ma[c] && mb[c]) || or.Test(c) != (ma[c] || mb[c]) || andnot.Test(c) != (ma[c] && !mb[c]) {
			t.Fatalf("cpu %d: set ops disagree", c)
		}
	}
	if a.Intersects(b) != (and.Weight() > 0) {
		t.Fatal("Intersects disagrees")
	}
	// AndCPUs walks the CPUs of And in order, and stops when told.
	var got []CPU
	for c := range a.AndCPUs(b) {
		got = append(got, c)
	}
	if want := and.CPUs(); !slices.Equal(got, want) {
		t.Fatalf("AndCPUs gave %v, want %v", got, want)
	}
	n2 := 0
	for range a.AndCPUs(b) {
		if n2++; n2 == 2 {
			break
		}
	}
	if n2 != min(2, len(got)) {
		t.Fatalf("AndCPUs did not stop at a break: %d", n2)
	}
}

func FuzzParse(f *testing.F) {
	f.Add("0-3,8")
	f.Add("")
	f.Add("1,2,3-")
	f.Fuzz(func(t *testing.T, s string) {
		m, err := Parse(64, s)
		if err != nil {
			return
		}
		back, err := Parse(64, m.String())
		if err != nil || !back.Equal(m) {
			t.Fatalf("round trip of %q: %v %v", s, back, err)
		}
	})
}
