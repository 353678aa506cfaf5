package report

import (
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"gonum.org/v1/plot"
)

func labelled(ts []plot.Tick) (vals []float64, labels []string) {
	for _, t := range ts {
		if t.Label != "" {
			vals = append(vals, t.Value)
			labels = append(labels, t.Label)
		}
	}
	return vals, labels
}

// A label reads back as its tick's value and has no spurious decimals: no
// trailing zero after the point, no bare point, no -0.
func checkLabels(t *testing.T, what string, ts []plot.Tick) {
	t.Helper()
	for _, tk := range ts {
		if tk.Label == "" {
			continue
		}
		v, err := strconv.ParseFloat(tk.Label, 64)
		if err != nil || math.Abs(v-tk.Value) > 1e-9*math.Max(1, math.Abs(tk.Value)) {
			t.Errorf("%s: label %q for %g", what, tk.Label, tk.Value)
		}
		if strings.Contains(tk.Label, ".") && (strings.HasSuffix(tk.Label, "0") || strings.HasSuffix(tk.Label, ".")) || tk.Label == "-0" {
			t.Errorf("%s: label %q has spurious decimals", what, tk.Label)
		}
	}
}

// The labelled ticks of a linear axis are the multiples, within the range,
// of the smallest step of 1, 2 or 5 × 10^k that gives at most 7 of them
// (and so at least 3); each label is its value with the decimals it needs.
func TestLinearTicks(t *testing.T) {
	for _, c := range []struct {
		min, max float64
		integer  bool
		want     string
	}{
		{0, 0.0158, false, "0 0.005 0.01 0.015"},
		{0, 1, false, "0 0.2 0.4 0.6 0.8 1"},
		{0, 1000, false, "0 200 400 600 800 1000"},
		{0, 1008, false, "0 200 400 600 800 1000"},
		{233, 800, false, "300 400 500 600 700 800"},
		{0, 3, false, "0 0.5 1 1.5 2 2.5 3"},
		{0, 3, true, "0 1 2 3"},
		{-0.5, 7.5, true, "0 2 4 6"},
		{0.1, 0.7, false, "0.1 0.2 0.3 0.4 0.5 0.6 0.7"},
		{0, 2.5e6, false, "0 500000 1000000 1500000 2000000 2500000"},
	} {
		ts := linearTicks{integer: c.integer}.Ticks(c.min, c.max)
		checkLabels(t, c.want, ts)
		if _, l := labelled(ts); strings.Join(l, " ") != c.want {
			t.Errorf("%g..%g (integer %v): %q, want %q", c.min, c.max, c.integer, strings.Join(l, " "), c.want)
		}
	}
	r := rand.New(rand.NewPCG(3, 4))
	for range 2000 {
		lo := (r.Float64() - 0.3) * math.Pow(10, float64(r.IntN(12)-5))
		hi := lo + r.Float64()*math.Pow(10, float64(r.IntN(12)-5))
		if !(hi > lo) || (hi-lo)/math.Max(math.Abs(lo), math.Abs(hi)) < 1e-6 {
			continue
		}
		ts := linearTicks{}.Ticks(lo, hi)
		checkLabels(t, "random", ts)
		vals, _ := labelled(ts)
		if len(vals) < 3 || len(vals) > 7 {
			t.Fatalf("%g..%g: %d labelled ticks %v", lo, hi, len(vals), vals)
		}
		step := vals[1] - vals[0]
		mant := step / math.Pow(10, math.Floor(math.Log10(step)+1e-6))
		if math.Abs(mant-1) > 1e-6 && math.Abs(mant-2) > 1e-6 && math.Abs(mant-5) > 1e-6 {
			t.Fatalf("%g..%g: step %g", lo, hi, step)
		}
		for _, tk := range ts {
			if tk.Value < lo-1e-9*(hi-lo) || tk.Value > hi+1e-9*(hi-lo) {
				t.Fatalf("%g..%g: tick %g outside", lo, hi, tk.Value)
			}
		}
	}
}

// A log axis labels 1, 2 and 5 × 10^k in its range, or only the powers
// of ten when there would be more than 8 labels; the other integers ×
// 10^k are unlabelled ticks.
func TestLogTicks(t *testing.T) {
	for _, c := range []struct {
		min, max float64
		want     string
	}{
		{19, 407, "20 50 100 200"},
		{12, 17000, "100 1000 10000"},
		{0.3, 40, "0.5 1 2 5 10 20"},
		{1.5, 1.9, "1.5 1.9"}, // no 1, 2 or 5 × 10^k inside: its ends
		{8.8, 1.2e9, "10 100 1000 10000 100000 1000000 10000000 100000000 1e+09"},
	} {
		ts := logTicks{}.Ticks(c.min, c.max)
		checkLabels(t, c.want, ts)
		if _, l := labelled(ts); strings.Join(l, " ") != c.want {
			t.Errorf("%g..%g: %q, want %q", c.min, c.max, strings.Join(l, " "), c.want)
		}
		for _, tk := range ts {
			if tk.Value < c.min*(1-1e-9) || tk.Value > c.max*(1+1e-9) {
				t.Errorf("%g..%g: tick %g outside", c.min, c.max, tk.Value)
			}
		}
	}
}

// A label has the decimals of its step and no more.
func TestTickLabel(t *testing.T) {
	for _, c := range []struct {
		v, step float64
		want    string
	}{
		{1, 1, "1"}, {4, 2, "4"}, {1, 0.5, "1"}, {0.25, 0.05, "0.25"}, {2500, 500, "2500"},
		{0.1 + 0.2, 0.1, "0.3"}, {math.Copysign(0, -1), 1, "0"}, {1e-17, 0.1, "0"}, {-1.5, 0.5, "-1.5"},
		{698696.6000000001, 0.2, "698696.6"}, {1e-7, 1e-7, "1e-07"}, {2.5e9, 5e8, "2.5e+09"},
		{123456789, 1, "123456789"}, {0.000125, 0.000005, "0.000125"},
	} {
		if got := tickLabel(c.v, c.step); got != c.want {
			t.Errorf("tickLabel(%v, %v) = %q, want %q", c.v, c.step, got, c.want)
		}
	}
}

// CPU axes are labelled at whole CPUs: each CPU up to 16, then a
// power-of-two step that keeps 16 labels at most.
func TestCPUTicks(t *testing.T) {
	for _, c := range []struct {
		n    int
		want string
	}{
		{1, "0"}, {8, "0 1 2 3 4 5 6 7"}, {16, "0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15"},
		{24, "0 2 4 6 8 10 12 14 16 18 20 22"},
		{256, "0 16 32 48 64 80 96 112 128 144 160 176 192 208 224 240"},
	} {
		ts := cpuTicks(c.n)(-0.5, float64(c.n)-0.5)
		checkLabels(t, c.want, ts)
		if _, l := labelled(ts); strings.Join(l, " ") != c.want {
			t.Errorf("%d CPUs: %q, want %q", c.n, strings.Join(l, " "), c.want)
		}
	}
}
