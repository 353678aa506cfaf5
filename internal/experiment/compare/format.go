package compare

import (
	"bufio"
	"encoding/json"
	"fmt"
	"github.com/schedlab/schedlab/internal/workload"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode"

	"github.com/schedlab/schedlab/internal/experiment"
)

const banner = "=================================================================="

// FormatTable writes a table the way AMD's scheduler tests are posted to
// LKML: a banner saying what was run and how to read it, then one row per
// load and one column per variant, each cell "value (pct%) ±ci%" and a
// significance mark, "*" for significant and "~" for not.
func FormatTable(w io.Writer, t *Table) error {
	bw := bufio.NewWriter(w)
	m := &t.Metric
	direction := "Lower is better"
	switch {
	case m.Better == workload.Counter:
		direction = "A count, neither better nor worse: + is more, - is fewer"
	case m.HigherBetter():
		direction = "Higher is better"
	}
	runs, fewest := 0, 0
	for _, row := range t.Cells {
		for i := range row {
			n := row[i].N()
			runs = max(runs, n)
			if n > 0 && (fewest == 0 || n < fewest) {
				fewest = n
			}
		}
	}
	nruns := fmt.Sprint(runs)
	if fewest < runs {
		nruns = fmt.Sprintf("%d-%d", fewest, runs)
	}
	unit := m.Unit
	if unit == "" {
		unit = "(none)"
	}
	fmt.Fprintln(bw, banner)
	fmt.Fprintf(bw, "Test          : %s\n", t.Command)
	if t.ColumnKernels != nil {
		fmt.Fprintf(bw, "Machine       : %s (%d CPUs), kernel %s for tip; the columns' kernels differ (the kernel: row)\n", t.Machine, t.NrCPUs, t.Kernel)
	} else {
		fmt.Fprintf(bw, "Machine       : %s (%d CPUs), kernel %s\n", t.Machine, t.NrCPUs, t.Kernel)
	}
	fmt.Fprintf(bw, "Metric        : %s (%s), %s\n", m.Label, m.Name, unit)
	fmt.Fprintf(bw, "Interpretation: %s\n", direction)
	fmt.Fprintf(bw, "Statistic     : %s of %s %s (seeds from master seed %d; run i of tip and of each variant share one seed), ±%.0f%% confidence interval\n", t.Stat, nruns, plural(uint64(runs), "run", "runs"), t.Seed, t.Conf*100)
	if t.Sequential != nil {
		fmt.Fprintf(bw, "Runs          : %s (Bonferroni over the looks; --full-length runs all); = within ±%g%% of tip by that rule, sign not settled\n", t.Sequential, t.Sequential.WithinPct)
	}
	if t.Test == Paired {
		fmt.Fprintf(bw, "Significance  : %s of the per-run differences from tip (runs paired by seed), * p < %g, ~ not significant\n", t.Test, t.Alpha)
	} else {
		fmt.Fprintf(bw, "Significance  : %s against tip, * p < %g, ~ not significant\n", t.Test, t.Alpha)
	}
	label := "Columns       : "
	for i, f := range t.ColumnFlags {
		if f == "" {
			continue
		}
		if !strings.HasPrefix(f, "--kernel ") {
			f = "tip " + f
		}
		fmt.Fprintf(bw, "%s%s = %s\n", label, t.Variants[i], f)
		label = strings.Repeat(" ", len(label))
	}
	fmt.Fprintln(bw, banner)

	// Format every cell's parts, then align columns.
	type parts struct{ val, pct, ci, mark string }
	cells := make([][]parts, len(t.Cells))
	valW, pctW, ciW := 0, 0, 0
	for li, row := range t.Cells {
		cells[li] = make([]parts, len(row))
		for vi := range row {
			c := &row[vi]
			p := parts{val: "-", pct: "", ci: "", mark: ""}
			if c.N() > 0 {
				p.val = formatValue(c.Center, m.Decimals)
				p.pct = fmt.Sprintf("(%.2f%%)", c.Pct)
				if vi > 0 && math.IsNaN(c.Pct) {
					p.pct = "(?)"
				}
				if ci := c.CIPct(); math.IsNaN(ci) {
					p.ci = "±?"
				} else {
					p.ci = fmt.Sprintf("±%.1f%%", ci)
				}
				if vi > 0 {
					p.mark = "~"
					if c.Significant {
						p.mark = "*"
					}
					if c.Within {
						p.mark = "="
					}
				}
			}
			cells[li][vi] = p
			valW = max(valW, len(p.val))
			pctW = max(pctW, len(p.pct))
			ciW = max(ciW, len(p.ci))
		}
	}
	cellW := valW + 1 + pctW + 1 + ciW + 2
	label = t.Param
	if label == "" {
		label = "load"
	}
	label += ":"
	labelW := len(label)
	if t.ColumnKernels != nil {
		labelW = max(labelW, len("kernel:"))
	}
	for _, l := range t.Loads {
		labelW = max(labelW, len(l))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%-*s", labelW, label)
	for _, v := range t.Variants {
		if len(v) > cellW {
			cellW = len(v)
		}
	}
	for _, v := range t.Variants {
		fmt.Fprintf(&b, "   %-*s", cellW, v)
	}
	bw.WriteString(strings.TrimRight(b.String(), " ") + "\n")
	if t.ColumnKernels != nil {
		b.Reset()
		fmt.Fprintf(&b, "%-*s", labelW, "kernel:")
		for _, k := range t.ColumnKernels {
			fmt.Fprintf(&b, "   %-*s", cellW, k)
		}
		bw.WriteString(strings.TrimRight(b.String(), " ") + "\n")
	}
	for li, l := range t.Loads {
		b.Reset()
		fmt.Fprintf(&b, "%*s", labelW, l)
		for vi := range t.Variants {
			p := cells[li][vi]
			s := fmt.Sprintf("%*s %*s %*s %s", valW, p.val, pctW, p.pct, ciW, p.ci, p.mark)
			fmt.Fprintf(&b, "   %-*s", cellW, s)
		}
		bw.WriteString(strings.TrimRight(b.String(), " ") + "\n")
	}
	for _, w := range t.Warnings {
		fmt.Fprintf(bw, "note: %s\n", w)
	}
	return bw.Flush()
}

func formatValue(v float64, decimals int) string {
	if math.IsNaN(v) {
		return "NaN"
	}
	if math.IsInf(v, 0) {
		return "Inf"
	}
	return strconv.FormatFloat(v, 'f', decimals, 64)
}

// FormatTables writes several tables separated by blank lines.
func FormatTables(w io.Writer, tables []*Table) error {
	for i, t := range tables {
		if i > 0 {
			if _, err := io.WriteString(w, "\n"); err != nil {
				return err
			}
		}
		if err := FormatTable(w, t); err != nil {
			return err
		}
	}
	return nil
}

// MarshalJSON writes NaN and infinities as null.
func (c Cell) MarshalJSON() ([]byte, error) {
	type cell struct {
		N           int       `json:"n"`
		Values      []float64 `json:"values"`
		Center      *float64  `json:"center"`
		Lo          *float64  `json:"lo"`
		Hi          *float64  `json:"hi"`
		Stddev      *float64  `json:"stddev"`
		CV          *float64  `json:"cv_pct"`
		Pct         *float64  `json:"pct"`
		P           *float64  `json:"p"`
		Significant bool      `json:"significant"`
		MMTests     *MMTests  `json:"mmtests,omitempty"`
	}
	var mm *MMTests
	if len(c.Values) > 0 {
		mm = &c.MMTests
	}
	return json.Marshal(cell{len(c.Values), c.Values, num(c.Center), num(c.Lo), num(c.Hi), num(c.Stddev), num(c.CV), num(c.Pct), num(c.P), c.Significant, mm})
}

func num(f float64) *float64 {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil
	}
	return &f
}

// MarshalJSON adds the statistic and the test by name.
func (t *Table) MarshalJSON() ([]byte, error) {
	type plain Table
	return json.Marshal(struct {
		*plain
		Statistic string `json:"statistic"`
		TestName  string `json:"test"`
	}{(*plain)(t), t.Stat.String(), t.Test.String()})
}

// benchName is the Go benchmark name of a workload: "Benchmark" and the
// workload's name in camel case ("perf-bench-messaging" →
// "BenchmarkPerfBenchMessaging").
func benchName(workload string) string {
	var b strings.Builder
	b.WriteString("Benchmark")
	up := true
	for _, r := range workload {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			up = true
			continue
		}
		if up {
			r = unicode.ToUpper(r)
			up = false
		}
		b.WriteRune(r)
	}
	return b.String()
}

// benchMetrics are the metrics of a workload written in the benchmark
// format: the table metrics and, for a latency percentile, the other
// percentiles of its distribution.
func benchMetrics(w *experiment.PlanWorkload, r *experiment.Record) []string {
	want := map[string]bool{}
	groups := map[string]bool{}
	for _, m := range w.Metrics {
		want[m] = true
		if g := Metric(m).LatencyGroup; g != "" {
			groups[g] = true
		}
	}
	var out []string
	for i, m := range r.Metrics {
		if want[m.Name] || groups[Metric(m.Name).LatencyGroup] || len(w.Metrics) == 0 && i == 0 {
			out = append(out, m.Name)
		}
	}
	return out
}

// WriteBenchFormat writes the records in the Go benchmark format, one line
// per run, so that benchstat compares the variants:
//
//	BenchmarkHackbench/groups=4/variant=short-task-v3 1 0.0492 s
//
// Configuration lines (experiment, machine, cpus, kernel) precede each
// machine and kernel's lines, and "Unit" lines say which way is better.
// Compare with `benchstat -col /variant FILE`.
func WriteBenchFormat(w io.Writer, p *experiment.Plan, recs []*experiment.Record) error {
	bw := bufio.NewWriter(w)
	wl := map[string]*experiment.PlanWorkload{}
	for i := range p.Workloads {
		wl[p.Workloads[i].Name] = &p.Workloads[i]
	}
	fmt.Fprintf(bw, "experiment: %s\n", p.Name)
	units := map[string]bool{}
	var unitLines []string
	for _, r := range recs {
		if r == nil {
			continue
		}
		for _, name := range benchMetrics(wl[r.Workload.Name], r) {
			x, _ := r.Lookup(name)
			m := Describe(x)
			if units[m.BenchUnit] {
				continue
			}
			units[m.BenchUnit] = true
			unitLines = append(unitLines, fmt.Sprintf("Unit %s better=%s", m.BenchUnit, m.Better))
		}
	}
	sort.Strings(unitLines)
	for _, l := range unitLines {
		fmt.Fprintln(bw, l)
	}
	var lastMachine, lastKernel string
	for _, r := range recs {
		if r == nil {
			continue
		}
		if r.Machine != lastMachine || r.Kernel != lastKernel {
			fmt.Fprintf(bw, "machine: %s\ncpus: %d\nkernel: %s\n", r.Machine, r.NrCPUs, r.Kernel)
			lastMachine, lastKernel = r.Machine, r.Kernel
		}
		name := benchName(r.Workload.Name)
		if r.Param.Name != "" {
			name += "/" + r.Param.Name + "=" + r.Param.Value
		}
		name += "/variant=" + r.Variant
		bw.WriteString(name + " 1")
		for _, mn := range benchMetrics(wl[r.Workload.Name], r) {
			v, _ := r.Metric(mn)
			fmt.Fprintf(bw, " %s %s", strconv.FormatFloat(v, 'g', -1, 64), Metric(mn).BenchUnit)
		}
		bw.WriteString("\n")
	}
	return bw.Flush()
}
