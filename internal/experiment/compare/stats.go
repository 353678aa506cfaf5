package compare

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strings"

	"golang.org/x/perf/benchmath"
	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"

	"github.com/schedlab/schedlab/internal/experiment"
	"github.com/schedlab/schedlab/internal/schedstat"
	"github.com/schedlab/schedlab/internal/workload"
)

// Test is the significance test of a comparison.
type Test int

const (
	// Welch is Welch's two-sample t-test on the values (on their
	// reciprocals for harmonic means), with the mean as the statistic:
	// benchmath's AssumeNormal. It can find a difference with 3 runs
	// per side.
	Welch Test = iota
	// UTest is the Mann-Whitney U test with the median as the statistic:
	// benchmath's AssumeNothing, benchstat's default. It needs at least 4
	// runs per side to reach p < 0.05.
	UTest
	// Paired is the paired t-test on the per-run differences from tip
	// (on reciprocals for harmonic means), with the mean as the
	// statistic. Run i of tip and of every variant share one seed
	// (experiment.DeriveSeed: common random numbers), so whatever the
	// seed decides alike on both sides cancels in the difference; runs
	// are paired by run index, and a run missing on either side is left
	// out of the test.
	Paired
)

// MinRuns is the fewest runs per cell that give a 95% confidence
// interval: benchmath's AssumeNormal needs 2, AssumeNothing (the U test's
// median interval, and benchstat's default) 6.
func (t Test) MinRuns() int {
	if t == UTest {
		return 6
	}
	return 2
}

func (t Test) String() string {
	switch t {
	case UTest:
		return "Mann-Whitney U test"
	case Paired:
		return "paired t-test"
	}
	return "Welch t-test"
}

// ParseTest reads "welch" or "utest".
func ParseTest(s string) (Test, error) {
	switch strings.ToLower(s) {
	case "welch", "t", "ttest", "t-test":
		return Welch, nil
	case "utest", "u", "mann-whitney", "mwu":
		return UTest, nil
	case "paired":
		return Paired, nil
	}
	return 0, fmt.Errorf("unknown test %q (welch, utest or paired)", s)
}

// AnalyzeOptions configure Analyze.
type AnalyzeOptions struct {
	Test       Test
	Alpha      float64 // default 0.05
	Confidence float64 // default 0.95
}

// Table is the comparison of one metric of one workload on one machine
// and kernel: a row per load, a column per variant, tip first.
type Table struct {
	Machine  string `json:"machine"`
	NrCPUs   int    `json:"nr_cpus"`
	Kernel   string `json:"kernel"`
	Workload string `json:"workload"`
	Tool     string `json:"tool"`
	// Command is the command line with the ranged value as N.
	Command  string     `json:"command"`
	Param    string     `json:"param"`
	Metric   MetricInfo `json:"metric"`
	Stat     Stat       `json:"-"`
	Variants []string   `json:"variants"`
	// ColumnKernels are the kernels of the columns, tip first, when
	// they differ (a comparison across kernels); nil when every column
	// runs Kernel.
	ColumnKernels []string `json:"column_kernels,omitempty"`
	// ColumnFlags say, for each column, what it adds to tip as
	// `schedlab run` flags ("" for tip and a column of one variant);
	// nil when no column is more than its variant.
	ColumnFlags []string `json:"column_flags,omitempty"`
	Loads       []string `json:"loads"`
	Cells       [][]Cell `json:"cells"` // [load][variant]
	Test        Test     `json:"-"`
	Alpha       float64  `json:"alpha"`
	Conf        float64  `json:"confidence"`
	Seed        uint64   `json:"seed"`
	// Sequential is the plan's stopping rule for runs (nil: every cell
	// has the plan's runs).
	Sequential *experiment.Sequential `json:"sequential,omitempty"`
	// MaxRuns is the plan's runs: with a stopping rule, the most a cell
	// gets (the rule's number of looks depends on it).
	MaxRuns int `json:"-"`
	// Warnings are benchmath's remarks on the samples, deduplicated.
	Warnings []string `json:"warnings,omitempty"`
}

// Cell is one variant at one load.
type Cell struct {
	Values []float64 `json:"values"` // in run order
	// Runs are the run indices of Values (paired by the paired test).
	Runs   []int   `json:"-"`
	Center float64 `json:"center"`
	Lo     float64 `json:"lo"`
	Hi     float64 `json:"hi"`
	Stddev float64 `json:"stddev"`
	CV     float64 `json:"cv_pct"`
	// MMTests are the statistics mmtests' compare-kernels prints
	// (FormatMMTests).
	MMTests MMTests `json:"mmtests"`
	// Pct is the change of Center from tip's, in percent, positive when
	// better; 0 for tip.
	Pct float64 `json:"pct"`
	// P is the test's p-value against tip; Significant says P < Alpha.
	P           float64 `json:"p"`
	Significant bool    `json:"significant"`
	// Within says, in a plan with a stopping rule, that the paired
	// difference from tip is settled by the rule's resolution alone
	// (experiment.Sequential.WithinResolution): within ±WithinPct, sign
	// not settled. The table marks it "=" instead of the test's mark.
	Within bool `json:"within_resolution,omitempty"`
}

// N is the number of runs.
func (c *Cell) N() int { return len(c.Values) }

// Group is records of one configuration (everything but the run).
type group struct {
	machine, kernel, workload, variant, load string
}

// Analyze builds the comparison tables of a plan's records (missing
// records are skipped; cells with no runs stay empty). Tables come in the
// plan's order: machine, kernel, workload, metric.
func Analyze(p *experiment.Plan, recs []*experiment.Record, opt AnalyzeOptions) ([]*Table, error) {
	if opt.Alpha == 0 {
		opt.Alpha = 0.05
	}
	if opt.Confidence == 0 {
		opt.Confidence = 0.95
	}
	byGroup := map[group][]*experiment.Record{}
	for _, r := range recs {
		if r == nil {
			continue
		}
		g := group{r.Machine, p.TableKernel(r), r.Workload.Name, r.Variant, r.Param.Value}
		byGroup[g] = append(byGroup[g], r)
	}
	for _, rs := range byGroup {
		sort.Slice(rs, func(i, j int) bool { return rs[i].Run < rs[j].Run })
	}
	var tables []*Table
	for _, m := range p.Machines {
		for _, k := range p.Kernels {
			for _, w := range p.Workloads {
				metrics := w.Metrics
				if len(metrics) == 0 {
					// The tool's first metric, from any record.
					for g, rs := range byGroup {
						if g.workload == w.Name && len(rs) > 0 && len(rs[0].Metrics) > 0 {
							metrics = []string{rs[0].Metrics[0].Name}
							break
						}
					}
				}
				for _, name := range metrics {
					info, err := describeFromRecords(byGroup, m.Label, k, w.Name, name)
					if err != nil {
						return nil, err
					}
					t := &Table{Machine: m.Label, NrCPUs: m.NrCPUs, Kernel: k, Workload: w.Name, Tool: w.Tool,
						Command: w.Param.DisplayRanged(w.Tool, w.Args), Param: w.Param.Name, Metric: info,
						Variants: p.Variants, Loads: w.Param.Values, Test: opt.Test, Alpha: opt.Alpha, Conf: opt.Confidence, Seed: p.Seed, Sequential: p.Sequential, MaxRuns: p.Runs}
					t.Stat = t.Metric.Stat
					t.describeColumns(p, k)
					if opt.Test == UTest {
						t.Stat = Median
					}
					any := false
					warn := map[string]bool{}
					for _, load := range t.Loads {
						row := make([]Cell, len(t.Variants))
						for vi, v := range t.Variants {
							for _, r := range byGroup[group{m.Label, k, w.Name, v, load}] {
								val, ok := r.Metric(name)
								if !ok {
									return nil, fmt.Errorf("workload %s: %v", w.Name, r.CheckMetric(name))
								}
								row[vi].Values = append(row[vi].Values, val)
								row[vi].Runs = append(row[vi].Runs, r.Run)
								any = true
							}
						}
						t.summarize(row, warn)
						t.Cells = append(t.Cells, row)
					}
					for w := range warn {
						t.Warnings = append(t.Warnings, w)
					}
					sort.Strings(t.Warnings)
					if any {
						tables = append(tables, t)
					}
				}
			}
		}
	}
	return tables, nil
}

// describeColumns fills in the columns' kernels and flags where tip runs
// kernel.
func (t *Table) describeColumns(p *experiment.Plan, kernel string) {
	mixed, defined := false, false
	kernels := make([]string, len(t.Variants))
	flags := make([]string, len(t.Variants))
	for i, v := range t.Variants {
		kernels[i] = p.ColumnKernel(v, kernel)
		mixed = mixed || kernels[i] != kernel
		if c, ok := p.Column(v); ok && !(c.Kernel == "" && len(c.Variants) == 1 && c.Variants[0] == v && len(c.Features)+len(c.Sysctls) == 0) {
			flags[i] = c.Flags()
			defined = true
		}
	}
	if mixed {
		t.ColumnKernels = kernels
	}
	if defined {
		t.ColumnFlags = flags
	}
}

// describeFromRecords describes a table's metric with the direction its
// records give it, which must agree (Metric alone if no record has it:
// the table will have no values).
func describeFromRecords(byGroup map[group][]*experiment.Record, machine, kernel, wl, name string) (MetricInfo, error) {
	info := Metric(name)
	first := map[workload.Better]string{} // a direction's first run, by key
	for g, rs := range byGroup {
		if g.machine != machine || g.kernel != kernel || g.workload != wl {
			continue
		}
		for _, r := range rs {
			if x, ok := r.Lookup(name); ok {
				if k, seen := first[x.Better]; !seen || r.Key < k {
					first[x.Better] = r.Key
				}
				info.Better = x.Better
			}
		}
	}
	if len(first) > 1 {
		return info, fmt.Errorf("metric %s is lower-is-better in run %s but higher-is-better in run %s", name, first[workload.LowerIsBetter], first[workload.HigherIsBetter])
	}
	return info, nil
}

// summarize fills a row's statistics and comparisons with tip.
func (t *Table) summarize(row []Cell, warn map[string]bool) {
	assume := benchmath.Assumption(benchmath.AssumeNormal)
	if t.Test == UTest {
		assume = benchmath.AssumeNothing
	}
	harmonic := t.Stat == HMean
	thr := benchmath.DefaultThresholds
	thr.CompareAlpha = t.Alpha
	samples := make([]*benchmath.Sample, len(row))
	for i := range row {
		c := &row[i]
		c.Center, c.Lo, c.Hi = math.NaN(), math.NaN(), math.NaN()
		if len(c.Values) == 0 {
			continue
		}
		c.Stddev, c.CV = stddev(c.Values)
		c.MMTests = mmtestsOf(c.Values, t.Metric.HigherBetter(), t.Metric.Stat == HMean)
		xs := append([]float64(nil), c.Values...)
		if harmonic {
			for j, x := range xs {
				if x <= 0 {
					xs[j] = math.NaN()
				} else {
					xs[j] = 1 / x
				}
			}
		}
		samples[i] = benchmath.NewSample(xs, &thr)
		s := assume.Summary(samples[i], t.Conf)
		for _, w := range s.Warnings {
			warn[w.Error()] = true
		}
		c.Center, c.Lo, c.Hi = s.Center, s.Lo, s.Hi
		if len(c.Values) < 2 {
			c.Lo, c.Hi = math.NaN(), math.NaN()
		}
		if harmonic {
			c.Center, c.Lo, c.Hi = recip(c.Center), recip(c.Hi), recip(c.Lo)
		}
	}
	base := &row[0]
	for i := range row {
		c := &row[i]
		c.P = math.NaN()
		if i == 0 || samples[i] == nil || samples[0] == nil {
			continue
		}
		c.Pct = pctChange(base.Center, c.Center, t.Metric.HigherBetter())
		if len(samples[0].Values) < 2 || len(samples[i].Values) < 2 {
			// One run says nothing of the spread: no test, no mark
			// of significance (the table says why it has no interval).
			continue
		}
		if constant(samples[0].Values) && constant(samples[i].Values) {
			// No spread on either side: the simulation is exact here,
			// so any difference is real (benchmath's AssumeExact).
			if samples[0].Values[0] == samples[i].Values[0] {
				c.P = 1
			} else {
				c.P, c.Significant = 0, true
			}
			continue
		}
		if q := t.Sequential; q != nil {
			c.Within = withinResolution(q, t.MaxRuns, base, c)
		}
		if t.Test == Paired {
			c.P = pairedP(base, c, harmonic)
			c.Significant = c.P < t.Alpha
			continue
		}
		cmp := assume.Compare(samples[0], samples[i])
		for _, w := range cmp.Warnings {
			warn[w.Error()] = true
		}
		c.P = cmp.P
		c.Significant = cmp.P < t.Alpha
	}
}

// pairedP is the two-sided p-value of the paired t-test of c against
// base: the differences of the runs both have (by run index), on
// reciprocals for harmonic means; NaN with fewer than 2 pairs. When every
// difference is the same the test has no spread: p is 1 if they are 0,
// else 0 (the simulation is exact there).
func pairedP(base, c *Cell, harmonic bool) float64 {
	var d []float64
	for _, pr := range pairs(base, c) {
		b, x := pr[0], pr[1]
		if harmonic {
			if b <= 0 || x <= 0 {
				continue
			}
			b, x = 1/b, 1/x
		}
		d = append(d, x-b)
	}
	n := len(d)
	if n < 2 {
		return math.NaN()
	}
	mean, sd := stat.MeanStdDev(d, nil)
	if sd == 0 || math.IsNaN(sd) {
		if mean == 0 {
			return 1
		}
		return 0
	}
	tv := mean / (sd / math.Sqrt(float64(n)))
	return 2 * distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(n - 1)}.Survival(math.Abs(tv))
}

// withinResolution applies the stopping rule's resolution test to the
// runs c and base share (by run index): differences in percent of base's
// mean, as the rule takes them.
func withinResolution(q *experiment.Sequential, maxRuns int, base, c *Cell) bool {
	scale := math.Abs(stat.Mean(base.Values, nil))
	if scale == 0 {
		return false
	}
	var d []float64
	for _, pr := range pairs(base, c) {
		d = append(d, 100*(pr[1]-pr[0])/scale)
	}
	return len(d) >= 2 && q.WithinResolution(d, maxRuns)
}

// pairs are the values of the runs c and base share, matched by run
// index (the seed they share), in c's order: {base's, c's}.
func pairs(base, c *Cell) [][2]float64 {
	at := map[int]float64{}
	for j, r := range base.Runs {
		at[r] = base.Values[j]
	}
	var out [][2]float64
	for j, r := range c.Runs {
		if b, ok := at[r]; ok {
			out = append(out, [2]float64{b, c.Values[j]})
		}
	}
	return out
}

func constant(xs []float64) bool {
	for _, x := range xs {
		if x != xs[0] {
			return false
		}
	}
	return len(xs) > 0
}

func recip(x float64) float64 {
	if x <= 0 || math.IsNaN(x) {
		if x == 0 {
			return math.Inf(1)
		}
		return math.NaN()
	}
	return 1 / x
}

// pctChange is the change from base to v in percent, positive when v is
// better: (base-v)/base for lower-is-better, (v-base)/base otherwise.
func pctChange(base, v float64, higherBetter bool) float64 {
	if base == 0 || math.IsNaN(base) || math.IsNaN(v) {
		return math.NaN()
	}
	if higherBetter {
		return (v - base) / base * 100
	}
	return (base - v) / base * 100
}

// stddev is the sample standard deviation (n-1) and the coefficient of
// variation in percent.
func stddev(xs []float64) (sd, cv float64) {
	if len(xs) < 2 {
		return 0, 0
	}
	mean, sd := stat.MeanStdDev(xs, nil)
	if mean != 0 {
		cv = sd / math.Abs(mean) * 100
	}
	return sd, cv
}

// CIPct is the half-width of the cell's confidence interval in percent
// of its center (NaN when unknown).
func (c *Cell) CIPct() float64 {
	if math.IsNaN(c.Lo) || math.IsNaN(c.Hi) || c.Center == 0 || math.IsNaN(c.Center) {
		return math.NaN()
	}
	return (c.Hi - c.Lo) / 2 / math.Abs(c.Center) * 100
}

// SchedstatComparison is the schedstat of each variant at one load, summed
// over its runs, ready for schedstat.FormatComparison.
type SchedstatComparison struct {
	Machine, Kernel, Workload, Param, Load string
	Names                                  []string // the variants
	Sums                                   []*schedstat.Totals
}

// Title says what is compared.
func (c *SchedstatComparison) Title() string {
	load := ""
	if c.Param != "" {
		load = " " + c.Param + "=" + c.Load
	}
	return fmt.Sprintf("%s%s on %s, kernel %s", c.Workload, load, c.Machine, c.Kernel)
}

// SchedstatComparisons groups the records' schedstat sums by machine,
// kernel, workload and load, in the plan's order; configurations where a
// variant has no record are left out.
func SchedstatComparisons(p *experiment.Plan, recs []*experiment.Record) []*SchedstatComparison {
	type gk = group
	sums := map[gk]*schedstat.Totals{}
	for _, r := range recs {
		if r == nil || r.Schedstat == nil {
			continue
		}
		g := gk{r.Machine, p.TableKernel(r), r.Workload.Name, r.Variant, r.Param.Value}
		if sums[g] == nil {
			sums[g] = &schedstat.Totals{}
		}
		sums[g].Add(r.Schedstat)
	}
	var out []*SchedstatComparison
	for _, m := range p.Machines {
		for _, k := range p.Kernels {
			for _, w := range p.Workloads {
				for _, load := range w.Param.Values {
					c := &SchedstatComparison{Machine: m.Label, Kernel: k, Workload: w.Name, Param: w.Param.Name, Load: load}
					for _, v := range p.Variants {
						s := sums[gk{m.Label, k, w.Name, v, load}]
						if s == nil {
							c = nil
							break
						}
						c.Names = append(c.Names, v)
						c.Sums = append(c.Sums, s)
					}
					if c != nil {
						out = append(out, c)
					}
				}
			}
		}
	}
	return out
}

// Format writes the comparison in the layout of `perf sched stats diff`
// (schedstat.FormatComparison), per-CPU averages of the summed runs.
func (c *SchedstatComparison) Format(w io.Writer) error {
	deltas := make([]schedstat.Delta, len(c.Sums))
	for i, s := range c.Sums {
		deltas[i] = s.Delta()
	}
	return schedstat.FormatComparison(w, deltas, c.Names)
}
