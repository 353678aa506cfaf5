package compare

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/stat"
)

// MMTests are a cell's statistics as mmtests' compare-kernels prints them
// for a benchmark of several iterations (its SummariseMultiops rows; Mel
// Gorman's mmtests, bin/lib/MMTests/Summarise.pm and Stat.pm): the
// minimum, the mean (arithmetic, or harmonic for rates, as the table's),
// its standard deviation and coefficient of variation, the maximum, and
// the mean of the best 50%, 95% and 99% of the runs (BAmean-N, mmtests'
// one-sided trimmed mean: the runs sorted best first, int(n·N/100) of
// them, at least one).
type MMTests struct {
	Min  float64 `json:"min"`
	Mean float64 `json:"mean"`
	// Stddev is the sample standard deviation (n−1) for an arithmetic
	// mean; for a harmonic mean H it is mmtests' HStddev,
	// H²·sqrt(Σ(1/x − 1/H)²/n). NaN with fewer than two runs.
	Stddev float64 `json:"stddev"`
	// CoeffVar is 100·Stddev/Mean, 0 where either is unknown or the
	// mean is 0 (as mmtests prints it).
	CoeffVar float64 `json:"coeffvar"`
	Max      float64 `json:"max"`
	// Best are the means of the best BestPct percent of the runs.
	Best [3]float64 `json:"-"`
}

// BestPct are the percentages of the BAmean rows mmtests prints.
var BestPct = [3]int{50, 95, 99}

// MarshalJSON names the best-run means ("bmean_50") and writes NaN as null.
func (m MMTests) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Min      *float64 `json:"min"`
		Mean     *float64 `json:"mean"`
		Stddev   *float64 `json:"stddev"`
		CoeffVar *float64 `json:"coeffvar"`
		Max      *float64 `json:"max"`
		BMean50  *float64 `json:"bmean_50"`
		BMean95  *float64 `json:"bmean_95"`
		BMean99  *float64 `json:"bmean_99"`
	}{num(m.Min), num(m.Mean), num(m.Stddev), num(m.CoeffVar), num(m.Max), num(m.Best[0]), num(m.Best[1]), num(m.Best[2])})
}

// mmtestsOf computes a sample's statistics; higherBetter sorts the best
// runs first, harmonic picks the harmonic mean. No values give NaNs.
func mmtestsOf(xs []float64, higherBetter, harmonic bool) MMTests {
	nan := math.NaN()
	m := MMTests{Min: nan, Mean: nan, Stddev: nan, Max: nan, Best: [3]float64{nan, nan, nan}}
	if len(xs) == 0 {
		return m
	}
	m.Min, m.Max = floats.Min(xs), floats.Max(xs)
	mean := func(v []float64) float64 {
		if !harmonic {
			return stat.Mean(v, nil)
		}
		for _, x := range v {
			if x <= 0 {
				return nan // mmtests' calc_hmean
			}
		}
		return stat.HarmonicMean(v, nil)
	}
	m.Mean = mean(xs)
	if n := len(xs); n > 1 {
		if harmonic {
			r := make([]float64, n)
			for i, x := range xs {
				r[i] = 1 / x
			}
			m.Stddev = math.Sqrt(stat.PopVariance(r, nil)) * m.Mean * m.Mean
		} else {
			m.Stddev = stat.StdDev(xs, nil)
		}
	}
	if !math.IsNaN(m.Stddev) && !math.IsNaN(m.Mean) && m.Mean != 0 {
		m.CoeffVar = m.Stddev * 100 / m.Mean
	}
	sorted := append([]float64(nil), xs...)
	sort.Float64s(sorted)
	if higherBetter {
		floats.Reverse(sorted)
	}
	for i, p := range BestPct {
		k := max(len(sorted)*p/100, 1)
		m.Best[i] = mean(sorted[:k])
	}
	return m
}

// mmPct is the change from base to v in percent as compare-kernels
// prints it, positive when better: pdiff for a higher-is-better
// statistic, pndiff for a lower-is-better one; 0 when they are equal,
// NaN (printed "?") when base is 0 or either unknown.
func mmPct(base, v float64, higherBetter bool) float64 {
	if base == v {
		return 0
	}
	return pctChange(base, v, higherBetter)
}

// FormatMMTests writes a table's statistics as compare-kernels lays them
// out: two header lines (each column's kernel, then its name), then one
// row per statistic and load, each value with its change from tip in
// parentheses, the mean's marked "*  x%*" when the table's test finds it
// significant.
func FormatMMTests(w io.Writer, t *Table) error {
	bw := bufio.NewWriter(w)
	m := &t.Metric
	higher := m.HigherBetter()
	harmonic := m.Stat == HMean
	mean, sd, cv, best := "Amean", "Stddev", "CoeffVar", "BAmean-%d"
	if harmonic {
		mean, sd, cv, best = "Hmean", "HStddev", "HCoeffVar", "BHmean-%d"
	}
	stats := make([][]MMTests, len(t.Cells))
	for li, row := range t.Cells {
		stats[li] = make([]MMTests, len(row))
		for vi := range row {
			stats[li][vi] = row[vi].MMTests
		}
	}
	type rowDef struct {
		name         string
		get          func(s *MMTests) float64
		lowerBetter  bool // Stddev and CoeffVar: pndiff whatever the metric
		significance bool
	}
	rows := []rowDef{
		{"Min", func(s *MMTests) float64 { return s.Min }, false, false},
		{mean, func(s *MMTests) float64 { return s.Mean }, false, true},
		{sd, func(s *MMTests) float64 { return s.Stddev }, true, false},
		{cv, func(s *MMTests) float64 { return s.CoeffVar }, true, false},
		{"Max", func(s *MMTests) float64 { return s.Max }, false, false},
	}
	for i, p := range BestPct {
		rows = append(rows, rowDef{fmt.Sprintf(best, p), func(s *MMTests) float64 { return s.Best[i] }, false, false})
	}
	// Widths: the statistic's name, the load, each value (at least 12
	// wide, as compare-kernels'), the change.
	nameW, loadW, valW := 0, 0, 12
	for _, r := range rows {
		nameW = max(nameW, len(r.name))
	}
	for _, l := range t.Loads {
		loadW = max(loadW, len(l))
	}
	decimals := max(m.Decimals, 2)
	for li := range stats {
		for vi := range stats[li] {
			for _, r := range rows {
				valW = max(valW, len(formatValue(r.get(&stats[li][vi]), decimals)))
			}
		}
	}
	const pctW = 11 // " (%7.2f%%)"
	kernels := t.ColumnKernels
	if kernels == nil {
		for range t.Variants {
			kernels = append(kernels, t.Kernel)
		}
	}
	for _, head := range [][]string{kernels, t.Variants} {
		var b strings.Builder
		fmt.Fprintf(&b, "%*s", nameW+1+loadW, "")
		for _, h := range head {
			fmt.Fprintf(&b, " %*s", valW+pctW, h)
		}
		bw.WriteString(strings.TrimRight(b.String(), " ") + "\n")
	}
	for _, r := range rows {
		for li, load := range t.Loads {
			var b strings.Builder
			fmt.Fprintf(&b, "%-*s %-*s", nameW, r.name, loadW, load)
			base := r.get(&stats[li][0])
			for vi := range t.Variants {
				c := &t.Cells[li][vi]
				if c.N() == 0 {
					fmt.Fprintf(&b, " %*s%*s", valW, "-", pctW, "")
					continue
				}
				v := r.get(&stats[li][vi])
				pct := "      ?"
				if x := mmPct(base, v, higher && !r.lowerBetter); !math.IsNaN(x) {
					pct = fmt.Sprintf("%7.2f", x)
				}
				if r.significance && vi > 0 && c.Significant {
					fmt.Fprintf(&b, " %*s *%s%%*", valW, formatValue(v, decimals), pct)
				} else {
					fmt.Fprintf(&b, " %*s (%s%%)", valW, formatValue(v, decimals), pct)
				}
			}
			bw.WriteString(strings.TrimRight(b.String(), " ") + "\n")
		}
	}
	return bw.Flush()
}
