package score

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/schedlab/schedlab/internal/fidelity"
	"github.com/schedlab/schedlab/internal/texttable"
)

// Line is the summary in one line, as the text output ends and
// docs/fidelity.md states it.
//
// The delta part counts significant deltas (those the source calls noise
// apart): with the published sign (the 95% interval excludes zero on the
// published side), no effect (the interval spans zero), opposite, and
// within 2×.
func (s Summary) Line() string {
	line := fmt.Sprintf("%s: %d within 2× (%s), %d within 25%% (%s), median |log ratio| %s; %s, %d significant: %d published sign (%s), %d no effect (%s), %d opposite (%s), %d within 2× (%s)",
		plural(s.Points, "point"), s.Within2x, share(s.Within2x, s.Points), s.Within25, share(s.Within25, s.Points), fmtLog(float64(s.MedianAbsLogRatio)),
		plural(s.Deltas, "delta"), s.Significant, s.SameSign, share(s.SameSign, s.Significant), s.NoEffect, share(s.NoEffect, s.Significant),
		s.Opposite, share(s.Opposite, s.Significant), s.DeltaWithin2x, share(s.DeltaWithin2x, s.Significant))
	if s.InAuthorSpread > 0 {
		line += fmt.Sprintf("; %d of the significant within their author's spread across reports (%d of them with the published sign)", s.InAuthorSpread, s.InAuthorSpreadSameSign)
	}
	if s.Noise > 0 {
		line += fmt.Sprintf("; %d called noise by their source, apart (%d of them with the published sign)", s.Noise, s.NoiseSameSign)
	}
	return line
}

// SummaryLineRE matches Summary.Line.
const SummaryLineRE = `^(\d+) points?: (\d+) within 2× \((\d+%|-)\), (\d+) within 25% \((\d+%|-)\), median \|log ratio\| ([0-9.]+ \(×[0-9.]+\)|-); (\d+) deltas?, (\d+) significant: (\d+) published sign \((\d+%|-)\), (\d+) no effect \((\d+%|-)\), (\d+) opposite \((\d+%|-)\), (\d+) within 2× \((\d+%|-)\)(; \d+ of the significant within their author's spread across reports \(\d+ of them with the published sign\))?(; \d+ called noise by their source, apart \(\d+ of them with the published sign\))?$`

// plural writes n and the word, with an s unless n is 1.
func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

func share(n, of int) string {
	if of == 0 {
		return "-"
	}
	return fmt.Sprintf("%d%%", int(math.Round(float64(n)*100/float64(of))))
}

func fmtLog(x float64) string {
	if math.IsNaN(x) {
		return "-"
	}
	return fmt.Sprintf("%.2f (×%.2f)", x, math.Exp(x))
}

// Line is the counts in one line: "N points from M sources (T threads),
// K machines, B benchmarks (C cases)".
func (n Counts) Line() string {
	return fmt.Sprintf("%s from %s (%s), %s, %s (%s)", plural(n.Points, "point"), plural(n.Sources, "source"), plural(n.Threads, "thread"),
		plural(n.Machines, "machine"), plural(n.Benchmarks, "benchmark"), plural(n.Cases, "case"))
}

// CountsLineRE matches Counts.Line.
const CountsLineRE = `^(\d+) points? from (\d+) sources? \((\d+) threads?\), (\d+) machines?, (\d+) benchmarks? \((\d+) cases?\)$`

// fmtVal writes a simulated value with four significant digits, without
// an exponent; NaN is "-".
func fmtVal(x float64) string {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return "-"
	}
	if x == 0 {
		return "0"
	}
	d := 3 - int(math.Floor(math.Log10(math.Abs(x))))
	if d < 0 {
		d = 0
	}
	return strconv.FormatFloat(x, 'f', d, 64)
}

// fmtPub writes a published value as the case gives it.
func fmtPub(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }

func fmtCI(lo, hi Num) string {
	if math.IsNaN(float64(lo)) || math.IsNaN(float64(hi)) {
		return ""
	}
	return "[" + fmtVal(float64(lo)) + ", " + fmtVal(float64(hi)) + "]"
}

func fmtPct(x Num) string {
	if math.IsNaN(float64(x)) {
		return "-"
	}
	return fmt.Sprintf("%+.1f%%", float64(x))
}

func fmtPctCI(lo, hi Num) string {
	if math.IsNaN(float64(lo)) || math.IsNaN(float64(hi)) {
		return ""
	}
	return fmt.Sprintf("[%+.1f, %+.1f]", float64(lo), float64(hi))
}

func fmtRatio(x Num) string {
	if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
		return "-"
	}
	return fmt.Sprintf("%.2f", float64(x))
}

func yes(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func loadLabel(l string) string {
	if l == "" {
		return "-"
	}
	return l
}

// pointRows are a case's points as table cells; "fit" marks a point a
// cost parameter was fitted on (in-sample).
func pointRows(c *Case) [][]string {
	rows := [][]string{{"load", "column", "published", "simulated", "95% CI", "seeds", "ratio", "2×", "25%", "fit"}}
	for _, p := range c.Points {
		rows = append(rows, []string{loadLabel(p.Load), p.Column, fmtPub(float64(p.Published)), fmtVal(float64(p.Simulated)),
			fmtCI(p.Lo, p.Hi), fmt.Sprint(len(p.Runs)), fmtRatio(p.Ratio), yes(p.Within2x), yes(p.Within25), fitMark(p.Fitted)})
	}
	return rows
}

// spreadLines compare, for each point whose row published a spread (the
// case's sd), the simulated spread between seeds with it: the sample
// standard deviation of the seeds' values, scaled as the mean is, and
// both as a share of their mean (CoV). Without a published sd, or with
// fewer than 2 seeds, there is no line.
func spreadLines(c *Case) []string {
	var out []string
	for _, p := range c.Points {
		if math.IsNaN(float64(p.SD)) || len(p.Runs) < 2 {
			continue
		}
		sd := float64(p.SimSD)
		out = append(out, fmt.Sprintf("spread, load %s %s: simulated sd %s (CoV %.2f%%, %d seeds), published sd %s (CoV %.2f%%)",
			loadLabel(p.Load), p.Column, fmtVal(sd), 100*sd/float64(p.Simulated), len(p.Runs),
			fmtPub(float64(p.SD)), 100*float64(p.SD)/float64(p.Published)))
	}
	return out
}

// deltaRows are a case's deltas as table cells: the simulated sign is
// the interval's (published, none, opposite); the note says when the
// source calls the delta noise, and when its row was fitted on.
func deltaRows(c *Case) [][]string {
	rows := [][]string{{"load", "column", "published Δ", "significant", "simulated Δ", "95% CI", "seeds", "sign", "2×", "note"}}
	for _, d := range c.Deltas {
		var note []string
		if d.Noise != "" {
			note = append(note, "noise: "+d.Noise)
		}
		if d.InAuthorSpread {
			note = append(note, fmt.Sprintf("within the author's spread: tip's CoV %.1f%% over %d reports", float64(d.SpreadCoVPct), d.SpreadReports))
		}
		if m := fitMark(d.Fitted); m != "" {
			note = append(note, m)
		}
		rows = append(rows, []string{loadLabel(d.Load), d.Column, fmtPct(d.PublishedPct), yes(d.Significant), fmtPct(d.SimulatedPct),
			fmtPctCI(d.Lo, d.Hi), fmt.Sprint(d.Seeds), d.Sign, yes(d.Within2x), strings.Join(note, "; ")})
	}
	return rows
}

// fitMark names the parameters fitted on a row ("fit: tcp_send_ns,
// tcp_recv_ns"), or is empty.
func fitMark(params []string) string {
	if len(params) == 0 {
		return ""
	}
	return "fit: " + strings.Join(params, ", ")
}

// unsimulatedWhy says why a column is shown but not run.
const unsimulatedWhy = "no schedlab variant or settings express the patch"

// showColumns reports whether a case's columns are worth listing: some
// column other than a plain tip is simulated, or tip has settings.
func showColumns(c *Case) bool {
	return len(c.Columns) > 1 || len(c.Columns) == 1 && c.Columns[0].Flags != "--kernel "+c.Kernel
}

// sourceRows are the per-source summaries as table cells; markdown links
// each source to its message.
func sourceRows(srcs []Source, markdown bool) [][]string {
	rows := [][]string{{"source", "cases", "points", "within 2×", "within 25%", "median |log ratio|", "deltas", "significant", "published sign", "Δ within 2×"}}
	for _, src := range srcs {
		label := src.Author + ", " + src.Date
		if markdown {
			c := &Case{Author: src.Author, MessageID: src.MessageID, URL: src.URL}
			label = mdEscape(label) + " " + mdSource(c)
		}
		s := src.Summary
		rows = append(rows, []string{label, fmt.Sprint(src.Cases), fmt.Sprint(s.Points),
			countShare(s.Within2x, s.Points), countShare(s.Within25, s.Points), fmtLog(float64(s.MedianAbsLogRatio)),
			fmt.Sprint(s.Deltas), fmt.Sprint(s.Significant), countShare(s.SameSign, s.Significant), countShare(s.DeltaWithin2x, s.Significant)})
	}
	return rows
}

// countShare is "n (p%)", or "n" when there is nothing to share.
func countShare(n, of int) string {
	if of == 0 {
		return fmt.Sprint(n)
	}
	return fmt.Sprintf("%d (%s)", n, share(n, of))
}

// numeric columns are right-aligned.
var (
	pointRight  = []bool{false, false, true, true, false, true, true, false, false, false}
	deltaRight  = []bool{false, false, true, false, true, false, true, false, false, false}
	sourceRight = []bool{false, true, true, true, true, true, true, true, true, true}
)

// writeTable writes rows (the first is the header) as aligned text, each
// line indented.
func writeTable(w io.Writer, indent string, rows [][]string, right []bool) {
	widths := make([]int, len(rows[0]))
	for _, r := range rows {
		for i, cell := range r {
			widths[i] = max(widths[i], len([]rune(cell)))
		}
	}
	for _, r := range rows {
		var b strings.Builder
		b.WriteString(indent)
		for i, cell := range r {
			pad := strings.Repeat(" ", widths[i]-len([]rune(cell)))
			if i > 0 {
				b.WriteString("  ")
			}
			if right != nil && right[i] {
				b.WriteString(pad + cell)
			} else {
				b.WriteString(cell + pad)
			}
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	}
}

// WriteText writes the report as `schedlab fidelity` prints it: per case
// its citation, setup, points and deltas, then the summary line.
func (r *Report) WriteText(w io.Writer) error {
	for i, c := range r.Cases {
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "%s: %s\n", c.ID, c.Title)
		fmt.Fprintf(w, "  source:    %s\n", citation(c))
		fmt.Fprintf(w, "  machine:   %s (%s); kernel %s (published: %s)\n", c.Machine, c.MachineConfig, c.Kernel, c.KernelPublished)
		fmt.Fprintf(w, "  published: %s (%s)\n", c.Command, c.Aggregation)
		fmt.Fprintf(w, "  simulated: %s, %s\n", simulated(c), r.seedsText())
		fmt.Fprintf(w, "  metric:    %s (%s, %s is better)\n", c.Metric, c.Unit, c.Better)
		if showColumns(c) {
			for i, col := range c.Columns {
				label := "  columns:  "
				if i > 0 {
					label = "            "
				}
				fmt.Fprintf(w, "%s %s: %s\n", label, col.Name, col.Flags)
			}
		}
		if len(c.Unsimulated) > 0 {
			fmt.Fprintf(w, "  not simulated: %s (%s)\n", strings.Join(c.Unsimulated, ", "), unsimulatedWhy)
		}
		fmt.Fprintln(w)
		writeTable(w, "  ", pointRows(c), pointRight)
		for _, l := range spreadLines(c) {
			fmt.Fprintf(w, "  %s\n", l)
		}
		if len(c.Deltas) > 0 {
			fmt.Fprintln(w)
			writeTable(w, "  ", deltaRows(c), deltaRight)
		}
		fmt.Fprintf(w, "\n  %s\n", c.Summary.Line())
	}
	if len(r.Cases) > 0 {
		fmt.Fprintln(w)
		fmt.Fprintln(w, "by source:")
		writeTable(w, "  ", sourceRows(r.Sources, false), sourceRight)
		fmt.Fprintln(w)
	}
	what := "fidelity"
	if r.Quick {
		what = "fidelity --quick"
	}
	fmt.Fprintf(w, "%s: %s\n", what, r.Counts.Line())
	if r.Mechanism.Points > 0 {
		fmt.Fprintf(w, "mechanism corpus (schedstat and balancer figures, apart from the summary): %s\n", r.Mechanism.Line())
	}
	fmt.Fprintf(w, "in sample (rows a cost parameter was fitted on): %s\nout of sample: %s\n", r.InSample.Line(), r.OutOfSample.Line())
	_, err := fmt.Fprintf(w, "summary: %s\n", r.Summary.Line())
	return err
}

// seedsText says how many seeds the simulated values have: "5 seeds",
// or "5 seeds, up to 20 for a delta's row (stopping rule)".
func (r *Report) seedsText() string {
	if r.MaxSeeds > r.Seeds {
		return fmt.Sprintf("%d seeds, up to %d for a delta's row (stopping rule)", r.Seeds, r.MaxSeeds)
	}
	return plural(r.Seeds, "seed")
}

func citation(c *Case) string {
	where := c.MessageID
	if where == "" {
		where = c.URL
	} else if c.URL != "" {
		where += " " + c.URL
	}
	return fmt.Sprintf("%s, %s, %s", c.Author, c.Date, where)
}

func simulated(c *Case) string {
	cmd, rest := simulatedParts(c)
	return cmd + rest
}

// simulatedParts are the simulated command and what qualifies it: the
// cpus, the scale and why.
func simulatedParts(c *Case) (cmd, rest string) {
	cmd = c.Tool + " " + c.Args
	if c.CPUs != "" {
		rest += " (cpus " + c.CPUs + ")"
	}
	if c.Scale != 1 {
		rest += fmt.Sprintf(", × %s", fmtPub(c.Scale))
	}
	if c.Why != "" {
		rest += " (" + c.Why + ")"
	}
	return cmd, rest
}

// WriteJSON writes the report as `fidelity --json` does.
func (r *Report) WriteJSON(w io.Writer) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// WriteList writes every point of cases for which in holds, then the
// count line: what `fidelity --list` prints. Nothing is run. With width 0
// it is one table, a line per point with its case, citation, machine and
// command; with width > 0 the points are grouped by case, under the
// case's machine and citation, so that every line fits width columns
// (the commands and citations wrapped where they must).
func WriteList(w io.Writer, cases []*fidelity.Case, in func(cs *fidelity.Case, row, col int) bool, width int) error {
	type point struct {
		cs       *fidelity.Case
		row, col int
		value    float64
	}
	var points []point
	for _, cs := range cases {
		for ri, row := range cs.Rows {
			for ci, col := range cs.Columns {
				v, ok := row.Values[col.Name]
				if ok && cs.Simulated(ci) && in(cs, ri, ci) {
					points = append(points, point{cs, ri, ci, v})
				}
			}
		}
	}
	cells := func(p point) (command, load, column, published string) {
		row := p.cs.Rows[p.row]
		return p.cs.PublishedCommand(row.Load), loadLabel(row.Load), p.cs.Columns[p.col].Name, fmtPub(p.value) + " " + p.cs.Metric.Unit
	}
	if width <= 0 {
		rows := [][]string{{"case", "source", "machine", "command", "load", "column", "published"}}
		for _, p := range points {
			command, load, column, published := cells(p)
			rows = append(rows, []string{p.cs.ID, p.cs.Citation(), p.cs.MachineLabel(), command, load, column, published})
		}
		writeTable(w, "", rows, nil)
	}
	for i := 0; width > 0 && i < len(points); {
		cs := points[i].cs
		fmt.Fprintln(w, cs.ID)
		texttable.Write(w, "  ", [][]string{{"machine:", cs.MachineLabel()}, {"source:", cs.Citation()}}, width, 1)
		rows := [][]string{{"load", "column", "published", "command"}}
		for ; i < len(points) && points[i].cs == cs; i++ {
			command, load, column, published := cells(points[i])
			rows = append(rows, []string{load, column, published, command})
		}
		texttable.Write(w, "  ", rows, width, 3)
		fmt.Fprintln(w)
	}
	_, err := fmt.Fprintln(w, Count(cases, in).Line())
	return err
}
