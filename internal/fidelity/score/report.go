package score

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/schedlab/schedlab/internal/experiment"
	"github.com/schedlab/schedlab/internal/fidelity"
)

// SchemaVersion is the version of the JSON report (`fidelity --json`).
const SchemaVersion = 1

// Num is a float64 that JSON writes as null when it is NaN or infinite
// (an interval of one run, a ratio without a value).
type Num float64

// MarshalJSON writes the number, or null.
func (n Num) MarshalJSON() ([]byte, error) {
	f := float64(n)
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return []byte("null"), nil
	}
	return strconv.AppendFloat(nil, f, 'g', -1, 64), nil
}

// UnmarshalJSON reads a number; null reads as NaN.
func (n *Num) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*n = Num(math.NaN())
		return nil
	}
	f, err := strconv.ParseFloat(string(b), 64)
	*n = Num(f)
	return err
}

// Report is a fidelity run scored: what `schedlab fidelity` prints, --json
// writes and --markdown renders. It is a function of the corpus, the
// options and the model only: no wall time, so equal inputs give equal
// bytes.
type Report struct {
	SchemaVersion int `json:"schema_version"`
	// Commit is the schedlab commit the report was made on ("" when
	// unknown).
	Commit string `json:"commit,omitempty"`
	// Corpus is where the cases came from ("fidelity/cases", embedded,
	// or --corpus DIR).
	Corpus string `json:"corpus"`
	Quick  bool   `json:"quick"`
	// Seeds is the seeds every simulated value has at least; MaxSeeds
	// the most a delta's row may get (the stopping rule; equal to Seeds
	// without one).
	Seeds    int     `json:"seeds"`
	MaxSeeds int     `json:"max_seeds"`
	Cases    []*Case `json:"cases"`
	Summary  Summary `json:"summary"`
	// InSample and OutOfSample are the summary of the points and deltas
	// of rows a cost parameter was fitted on, and of the others.
	InSample    Summary `json:"in_sample"`
	OutOfSample Summary `json:"out_of_sample"`
	// Mechanism is the summary of the mechanism corpus's cases (schedstat
	// and balancer figures, fidelity.Case.Mechanism), which Summary,
	// InSample and OutOfSample leave out: they are the benchmarks'.
	Mechanism Summary `json:"mechanism"`
	// Sources are the summary per source, by date: three AMD reports
	// carry most of the corpus's points, and a reader should see each
	// source's figures beside the corpus's.
	Sources []Source `json:"sources"`
	Counts  Counts   `json:"counts"`
}

// Source is one source's (post's or paper's) cases, summarized.
type Source struct {
	Author    string  `json:"author"`
	Date      string  `json:"date"`
	Title     string  `json:"title"`
	MessageID string  `json:"message_id,omitempty"`
	URL       string  `json:"url,omitempty"`
	Cases     int     `json:"cases"`
	Summary   Summary `json:"summary"`
}

// Case is one case's points and deltas, with what a reader needs to
// judge them.
type Case struct {
	ID              string  `json:"id"`
	File            string  `json:"file"`
	Title           string  `json:"title"`
	Author          string  `json:"author"`
	Date            string  `json:"date"`
	MessageID       string  `json:"message_id,omitempty"`
	URL             string  `json:"url,omitempty"`
	Machine         string  `json:"machine"`
	MachineConfig   string  `json:"machine_config"`
	Kernel          string  `json:"kernel"`
	KernelPublished string  `json:"kernel_published"`
	Command         string  `json:"command"`
	Aggregation     string  `json:"aggregation"`
	Tool            string  `json:"tool"`
	Args            string  `json:"args"`
	Scale           float64 `json:"scale"`
	Why             string  `json:"why,omitempty"`
	CPUs            string  `json:"cpus,omitempty"`
	Metric          string  `json:"metric"`
	// Mechanism marks a mechanism case (a counter or ratio of the run,
	// scored in the report's Mechanism summary).
	Mechanism bool   `json:"mechanism,omitempty"`
	Unit      string `json:"unit"`
	Better    string `json:"better"`
	// Columns are the simulated columns' kernels, as `schedlab run`
	// flags, tip first.
	Columns []Column `json:"columns"`
	// Unsimulated are the columns schedlab cannot run (shown, not
	// scored).
	Unsimulated []string `json:"unsimulated_columns,omitempty"`
	Points      []Point  `json:"points"`
	Deltas      []Delta  `json:"deltas"`
	Summary     Summary  `json:"summary"`
}

// Column is a simulated column and the kernel it runs.
type Column struct {
	Name string `json:"name"`
	// Flags are its configuration as `schedlab run` flags: --kernel,
	// then any --variant, --feature and --sysctl.
	Flags string `json:"flags"`
}

// Counts are the size of the scored corpus, as `fidelity --list` counts
// it.
type Counts struct {
	Points int `json:"points"`
	// Sources are distinct posts or papers (message-id, else URL);
	// Threads distinct titles, a reply's "Re:" removed.
	Sources    int `json:"sources"`
	Threads    int `json:"threads"`
	Machines   int `json:"machines"`
	Benchmarks int `json:"benchmarks"`
	Cases      int `json:"cases"`
}

// Build scores a plan's records (experiment.Record by Run.Index, as
// fidelity.Execute returns them).
func Build(p *fidelity.Plan, recs []*experiment.Record, corpus, commit string) (*Report, error) {
	if len(recs) != len(p.Runs) {
		panic(fmt.Sprintf("score: %d records for %d runs", len(recs), len(p.Runs)))
	}
	// values[case][row][column] are the runs' metric in seed order.
	type cell struct {
		cs       *fidelity.Case
		row, col int
	}
	values := map[cell][]float64{}
	for i := range p.Runs {
		r := &p.Runs[i]
		rec := recs[i]
		if rec == nil {
			panic("score: run " + r.Key + " has no record")
		}
		v, ok := rec.Metric(r.Case.Metric.Name)
		if !ok {
			return nil, fmt.Errorf("%s: run %s has no metric %q", r.Case.File, r.Key, r.Case.Metric.Name)
		}
		k := cell{r.Case, r.Row, r.Column}
		if len(values[k]) != r.SeedIndex {
			panic("score: runs out of seed order at " + r.Key)
		}
		values[k] = append(values[k], v)
	}
	rep := &Report{SchemaVersion: SchemaVersion, Commit: commit, Corpus: corpus, Quick: p.Quick, Seeds: p.Seeds, MaxSeeds: p.MaxSeeds}
	var all, in, out, mech []Point
	var allD, inD, outD, mechD []Delta
	for _, cs := range p.Cases {
		c := caseInfo(cs)
		for ri, row := range cs.Rows {
			fitted, _ := cs.InSample(ri)
			tip, ok := values[cell{cs, ri, 0}]
			for ci, col := range cs.Columns {
				runs, ran := values[cell{cs, ri, ci}]
				if !ran {
					continue
				}
				pt := ScorePoint(row.Values[col.Name], cs.Simulate.Scale, runs)
				pt.Load, pt.Column, pt.Variant, pt.Fitted = row.Load, col.Name, col.Variant, fitted
				if sd, ok := row.SD[col.Name]; ok {
					pt.SD = Num(sd)
				}
				c.Points = append(c.Points, pt)
				switch {
				case cs.Mechanism():
					mech = append(mech, pt)
				case fitted != nil:
					in = append(in, pt)
				default:
					out = append(out, pt)
				}
				if ci == 0 || !ok {
					continue
				}
				d := ScoreDelta(row.Values[cs.Columns[0].Name], row.Values[col.Name], sdOf(row, cs.Columns[0].Name), sdOf(row, col.Name), tip, runs, cs.Metric.HigherBetter())
				d.Load, d.Column, d.Variant, d.Fitted, d.Noise = row.Load, col.Name, col.Variant, fitted, row.Noise[col.Name]
				if p.Corpus != nil {
					if sp, ok := p.Corpus.TipSpread(cs, ri); ok {
						_, sdTip := row.SD[cs.Columns[0].Name]
						_, sdCol := row.SD[col.Name]
						d.SetAuthorSpread(sp.Reports, sp.CoV(), sdTip || sdCol)
					}
				}
				c.Deltas = append(c.Deltas, d)
				switch {
				case cs.Mechanism():
					mechD = append(mechD, d)
				case fitted != nil:
					inD = append(inD, d)
				default:
					outD = append(outD, d)
				}
			}
		}
		c.Summary = Summarize(c.Points, c.Deltas)
		if !cs.Mechanism() {
			all = append(all, c.Points...)
			allD = append(allD, c.Deltas...)
		}
		rep.Cases = append(rep.Cases, c)
	}
	rep.Summary = Summarize(all, allD)
	rep.InSample, rep.OutOfSample = Summarize(in, inD), Summarize(out, outD)
	rep.Mechanism = Summarize(mech, mechD)
	rep.Sources = bySource(rep.Cases)
	rep.Counts = Count(p.Cases, func(cs *fidelity.Case, row, col int) bool {
		_, ok := values[cell{cs, row, col}]
		return ok
	})
	return rep, nil
}

// bySource summarizes the cases per source (message-id, else URL, as
// Count tells sources apart), sorted by date, then by where.
func bySource(cases []*Case) []Source {
	type acc struct {
		src    Source
		points []Point
		deltas []Delta
	}
	idx := map[string]*acc{}
	var order []string
	for _, c := range cases {
		if c.Mechanism {
			continue // the mechanism corpus has its own summary
		}
		key := c.MessageID
		if key == "" {
			key = c.URL
		}
		a := idx[key]
		if a == nil {
			a = &acc{src: Source{Author: c.Author, Date: c.Date, Title: c.Title, MessageID: c.MessageID, URL: c.URL}}
			idx[key] = a
			order = append(order, key)
		}
		a.src.Cases++
		a.points = append(a.points, c.Points...)
		a.deltas = append(a.deltas, c.Deltas...)
	}
	sort.SliceStable(order, func(i, j int) bool {
		a, b := idx[order[i]].src, idx[order[j]].src
		if a.Date != b.Date {
			return a.Date < b.Date
		}
		return order[i] < order[j]
	})
	out := []Source{}
	for _, k := range order {
		a := idx[k]
		a.src.Summary = Summarize(a.points, a.deltas)
		out = append(out, a.src)
	}
	return out
}

func sdOf(row fidelity.Row, col string) float64 {
	if sd, ok := row.SD[col]; ok {
		return sd
	}
	return math.NaN()
}

func caseInfo(cs *fidelity.Case) *Case {
	c := &Case{ID: cs.ID, File: cs.File, Title: cs.Source.Title, Author: cs.Source.Author, Date: cs.Source.Date,
		MessageID: cs.Source.MessageID, URL: cs.Source.URL, Machine: cs.MachineLabel(), MachineConfig: cs.Machine.Config,
		Kernel: cs.Kernel.Baseline, KernelPublished: cs.Kernel.Published, Command: cs.Command,
		Aggregation: aggregation(cs.Aggregation), Tool: cs.Simulate.Tool, Args: cs.Simulate.Args, Scale: cs.Simulate.Scale,
		Why: cs.Simulate.Why, CPUs: cs.Simulate.CPUs, Metric: cs.Metric.Name, Mechanism: cs.Mechanism(), Unit: cs.Metric.Unit, Better: cs.Metric.Better,
		Points: []Point{}, Deltas: []Delta{}}
	for i, col := range cs.Columns {
		if !cs.Simulated(i) {
			c.Unsimulated = append(c.Unsimulated, col.Name)
			continue
		}
		c.Columns = append(c.Columns, Column{Name: col.Name, Flags: cs.ColumnFlags(i)})
	}
	return c
}

func aggregation(a fidelity.Aggregation) string {
	switch {
	case a.Statistic == "single":
		return "a single run"
	case a.Statistic == "unknown" && a.Runs == 0:
		return "aggregation not stated"
	case a.Statistic == "unknown":
		return fmt.Sprintf("%d runs, statistic not stated", a.Runs)
	case a.Runs == 0:
		return a.Statistic + ", runs not stated"
	case a.Runs == 1:
		return a.Statistic + " of 1 run"
	}
	return fmt.Sprintf("%s of %d runs", a.Statistic, a.Runs)
}

// Benchmark is the benchmark a tool runs: hackbench and perf bench
// messaging are one, as are the two schbench versions.
func Benchmark(tool string) string {
	switch tool {
	case "hackbench", "perf-bench-messaging", "perf":
		return "hackbench"
	case "schbench", "schbench-current":
		return "schbench"
	}
	return tool
}

// Count counts the points of cases (the published values of a simulated
// column for which in(case, row, column) holds), their distinct sources
// (message-id, else URL), machines and benchmarks.
func Count(cases []*fidelity.Case, in func(cs *fidelity.Case, row, col int) bool) Counts {
	sources, threads, machines, benches := map[string]bool{}, map[string]bool{}, map[string]bool{}, map[string]bool{}
	var n Counts
	for _, cs := range cases {
		pts := 0
		for ri, row := range cs.Rows {
			for ci, col := range cs.Columns {
				if _, ok := row.Values[col.Name]; ok && cs.Simulated(ci) && in(cs, ri, ci) {
					pts++
				}
			}
		}
		if pts == 0 {
			continue
		}
		n.Points += pts
		n.Cases++
		src := cs.Source.MessageID
		if src == "" {
			src = cs.Source.URL
		}
		sources[src] = true
		threads[Thread(cs.Source.Title)] = true
		machines[cs.MachineLabel()] = true
		benches[Benchmark(cs.Simulate.Tool)] = true
	}
	n.Sources, n.Threads, n.Machines, n.Benchmarks = len(sources), len(threads), len(machines), len(benches)
	return n
}

// Thread is a title without its reply prefixes ("Re: ", "RE: ", "Aw: "),
// lower-cased and with blanks collapsed: the thread a post belongs to.
func Thread(title string) string {
	t := strings.Join(strings.Fields(strings.ToLower(title)), " ")
	for {
		rest, ok := strings.CutPrefix(t, "re:")
		if !ok {
			rest, ok = strings.CutPrefix(t, "aw:")
		}
		if !ok {
			return t
		}
		t = strings.TrimSpace(rest)
	}
}

// BenchmarkNames lists the distinct benchmarks of cases, sorted.
func BenchmarkNames(cases []*fidelity.Case) []string {
	seen := map[string]bool{}
	var out []string
	for _, cs := range cases {
		b := Benchmark(cs.Simulate.Tool)
		if !seen[b] {
			seen[b] = true
			out = append(out, b)
		}
	}
	sort.Strings(out)
	return out
}
