package report

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
)

// The tick markers of the report's axes. gonum's defaults label ticks
// with a fixed number of decimals (1.000, 0.009 and 0.018 for a range
// 0..0.02); these put labelled ticks at 1, 2 or 5 × 10^k and write each
// label with the decimals its value needs and no more.

// linearTicks marks a linear axis: labelled ticks at the multiples of the
// smallest step of 1, 2 or 5 × 10^k that gives at most 7 of them,
// unlabelled ones between. Integer axes (counts, CPUs) never step below 1.
type linearTicks struct{ integer bool }

func (t linearTicks) Ticks(min, max float64) []plot.Tick {
	if !(max > min) || math.IsInf(max-min, 0) {
		return []plot.Tick{{Value: min, Label: tickLabel(min, min)}}
	}
	step, minor := niceStep(min, max, 7, t.integer)
	var ts []plot.Tick
	// Integer multiples of the step, so that 3 × 0.1 is labelled 0.3.
	for i := firstMultiple(min, step); i*step <= max+step*1e-9; i++ {
		v := i * step
		ts = append(ts, plot.Tick{Value: v, Label: tickLabel(v, step)})
	}
	for i := firstMultiple(min, minor); i*minor <= max+minor*1e-9; i++ {
		if math.Abs(math.Remainder(i*minor, step)) < minor/2 {
			continue // a labelled tick
		}
		ts = append(ts, plot.Tick{Value: i * minor})
	}
	return ts
}

// firstMultiple is the smallest i with i × step ≥ min (to rounding).
func firstMultiple(min, step float64) float64 {
	return math.Ceil(min/step - 1e-9)
}

// niceStep is the smallest of 1, 2, 5 × 10^k (at least 1 on an integer
// axis) whose multiples in min … max are at most most, with the step of
// the unlabelled ticks between.
func niceStep(min, max float64, most int, integer bool) (step, minor float64) {
	mag := math.Pow(10, math.Floor(math.Log10((max-min)/float64(most)))-1)
	for k := 0; ; k++ {
		m := []float64{1, 2, 5}[k%3]
		step = m * mag * math.Pow(10, float64(k/3))
		if integer && step < 1 {
			continue
		}
		if n := math.Floor(max/step+1e-9) - firstMultiple(min, step) + 1; n <= float64(most) {
			minor = step / 5
			if m == 2 {
				minor = step / 4
			}
			if integer && minor < 1 {
				minor = 1
			}
			return step, minor
		}
	}
}

// logTicks marks a log axis: labelled ticks at 1, 2 and 5 × 10^k, or at
// the powers of ten only when the range holds more than 8 of those;
// unlabelled ones at the other integers × 10^k.
type logTicks struct{}

func (logTicks) Ticks(min, max float64) []plot.Tick {
	if !(min > 0) || !(max > min) {
		return []plot.Tick{{Value: min, Label: tickLabel(min, min)}}
	}
	lo, hi := int(math.Floor(math.Log10(min))), int(math.Ceil(math.Log10(max)))
	in := func(v float64) bool { return v >= min*(1-1e-9) && v <= max*(1+1e-9) }
	labelled := map[int]bool{1: true, 2: true, 5: true}
	n := 0
	for e := lo; e <= hi; e++ {
		for _, m := range []float64{1, 2, 5} {
			if in(m * math.Pow(10, float64(e))) {
				n++
			}
		}
	}
	if n > 8 {
		labelled = map[int]bool{1: true}
	}
	var ts []plot.Tick
	for e := lo; e <= hi; e++ {
		p := math.Pow(10, float64(e))
		for m := 1; m <= 9; m++ {
			v := float64(m) * p
			if !in(v) {
				continue
			}
			if labelled[m] {
				ts = append(ts, plot.Tick{Value: v, Label: tickLabel(v, p)})
			} else {
				ts = append(ts, plot.Tick{Value: v})
			}
		}
	}
	if len(ts) == 0 || n == 0 {
		// Less than one labelled value in range: label its ends.
		step := math.Pow(10, math.Floor(math.Log10(max-min)))
		ts = append(ts, plot.Tick{Value: min, Label: tickLabel(min, step)}, plot.Tick{Value: max, Label: tickLabel(max, step)})
	}
	return ts
}

// tickLabel writes v, a multiple of step, with the decimals step needs and
// no trailing zeros: 1, 0.25, 2500; with an exponent below 10^-4 or from
// 10^9 (1e-07, 2.5e+09).
func tickLabel(v, step float64) string {
	if v == 0 || math.Abs(v) < math.Abs(step)*1e-9 {
		return "0"
	}
	digits := -int(math.Floor(math.Log10(math.Abs(step)) + 1e-9))
	if a := math.Abs(v); a < 1e-4 || a >= 1e9 {
		sig := int(math.Floor(math.Log10(a))) + digits + 1
		return strconv.FormatFloat(v, 'g', max(1, min(17, sig)), 64)
	}
	s := strconv.FormatFloat(v, 'f', max(0, digits), 64)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

// cpuTicks labels CPUs at whole numbers: every CPU on small machines, a
// power-of-two step on big ones (at most 16 labels).
func cpuTicks(n int) plot.TickerFunc {
	return func(min, max float64) []plot.Tick {
		step := 1
		for n/step > 16 {
			step *= 2
		}
		var ts []plot.Tick
		for c := 0; c < n; c += step {
			ts = append(ts, plot.Tick{Value: float64(c), Label: fmt.Sprint(c)})
		}
		return ts
	}
}
