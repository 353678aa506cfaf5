// Package report renders a results directory as one self-contained HTML
// file: the comparison tables, a bar chart with confidence intervals per
// table, latency CDFs for workloads that report latency percentiles (from
// the runs' latency histograms where they record them: schbench), per-CPU
// occupancy heat maps of traced runs with their colour scale, and the
// schedstat comparison. Plots are drawn with gonum/plot and embedded as
// data URIs (SVG for charts, PNG for heat maps); the page loads nothing
// from anywhere. Axis labels have the decimals their step needs and no
// more, and a legend goes into a corner of the plot that no data enters,
// or beside it. The same plots can be written as files (WritePlots).
package report

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"html/template"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"gonum.org/v1/plot/plotter"

	"github.com/schedlab/schedlab/internal/experiment"
	"github.com/schedlab/schedlab/internal/experiment/compare"
	"github.com/schedlab/schedlab/internal/workload"
)

// Options configure Build.
type Options struct {
	Test compare.Test
	// Heatmaps selects the traced runs drawn: "last-load" (default: every
	// variant at the last load of each workload), "all" or "none".
	Heatmaps string
}

// Report is a rendered report.
type Report struct {
	HTML  []byte
	Plots []*Plot
}

// Count returns how many plots of a kind the report holds.
func (r *Report) Count(kind string) int {
	n := 0
	for _, p := range r.Plots {
		if p.Kind == kind {
			n++
		}
	}
	return n
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._=-]+`)

func fileName(parts ...string) string {
	return unsafeName.ReplaceAllString(strings.Join(parts, "__"), "_")
}

type cellView struct {
	Text  string
	Class string
}

type tableView struct {
	ID, Title, Caption string
	Param              string
	Variants           []string
	Rows               []rowView
	Text               string
	Plot               *plotView
	Warnings           []string
}

type rowView struct {
	Load  string
	Cells []cellView
}

type plotView struct {
	Kind, Title, Alt string
	Note             string       // after the title in the caption
	Src              template.URL // a data: URI, built here
}

type statView struct {
	Title, Text string
}

type page struct {
	Name, Description, Patch, Profile string
	Facts                             [][2]string
	Tables                            []tableView
	CDFs                              []plotView
	Heatmaps                          []plotView
	Schedstat                         []statView
	Missing                           int
}

func dataURI(p *Plot) plotView {
	v := plotView{Kind: p.Kind, Title: p.Title, Alt: p.Title, Note: p.Note}
	if p.SVG != nil {
		v.Src = template.URL("data:image/svg+xml;base64," + base64.StdEncoding.EncodeToString(p.SVG))
	} else {
		v.Src = template.URL("data:image/png;base64," + base64.StdEncoding.EncodeToString(p.PNG))
	}
	return v
}

// Build renders the results.
func Build(res *experiment.Results, opt Options) (*Report, error) {
	plan := res.Plan
	recs := res.Found()
	tables, err := compare.Analyze(plan, res.Records, compare.AnalyzeOptions{Test: opt.Test})
	if err != nil {
		return nil, err
	}
	rep := &Report{}
	pg := &page{Name: plan.Name, Description: plan.Description, Patch: plan.Patch, Profile: plan.Profile, Missing: len(res.Missing)}
	var machines []string
	for _, m := range plan.Machines {
		machines = append(machines, fmt.Sprintf("%s (%d CPUs)", m.Label, m.NrCPUs))
	}
	pg.Facts = [][2]string{
		{"Machines", strings.Join(machines, ", ")},
		{"Kernels", strings.Join(plan.Kernels, ", ")},
		{"Variants", strings.Join(plan.Variants, ", ")},
		{"Runs", fmt.Sprintf("%d per variant and load, seeds derived from master seed %d", plan.Runs, plan.Seed)},
		{"Results", fmt.Sprintf("%d of %d runs", len(recs), len(res.Records))},
	}
	if len(plan.Features) > 0 {
		pg.Facts = append(pg.Facts, [2]string{"Features", strings.Join(plan.Features, ", ")})
	}
	// Columns of flags, and a comparison across kernels: what each
	// column runs.
	var cols []string
	for _, v := range plan.Variants[1:] {
		c, _ := plan.Column(v)
		if c.Kernel != "" || !(len(c.Variants) == 1 && c.Variants[0] == v && len(c.Features)+len(c.Sysctls) == 0) {
			what := c.Flags()
			if c.Kernel == "" {
				what = "tip " + what
			}
			cols = append(cols, v+" = "+what)
		}
	}
	if len(cols) > 0 {
		pg.Facts = append(pg.Facts, [2]string{"Columns", strings.Join(cols, "; ")})
	}
	if len(plan.Skipped) > 0 {
		pg.Facts = append(pg.Facts, [2]string{"Skipped", strings.Join(plan.Skipped, ", ") + " (not in this schedlab)"})
	}
	for ti, t := range tables {
		tv := tableView{ID: fmt.Sprintf("t%d", ti), Param: t.Param, Variants: t.Variants, Warnings: t.Warnings}
		if t.ColumnKernels != nil {
			// A comparison across kernels says each column's.
			tv.Variants = nil
			for i, v := range t.Variants {
				tv.Variants = append(tv.Variants, v+" ("+t.ColumnKernels[i]+")")
			}
		}
		if tv.Param == "" {
			tv.Param = "load"
		}
		dir, sign := "lower is better", "positive = better"
		switch {
		case t.Metric.Better == workload.Counter:
			dir, sign = "a count, neither better nor worse", "positive = more"
		case t.Metric.HigherBetter():
			dir = "higher is better"
		}
		unit := ""
		if t.Metric.Unit != "" {
			unit = " (" + t.Metric.Unit + ")"
		}
		tv.Title = fmt.Sprintf("%s — %s%s on %s, kernel %s", t.Command, t.Metric.Label, unit, t.Machine, t.Kernel)
		tv.Caption = fmt.Sprintf("%s of the runs, %s; in parentheses the change from tip, %s; ± the %.0f%% confidence interval; * significant (%s, p < %g), ~ not.",
			t.Stat, dir, sign, t.Conf*100, t.Test, t.Alpha)
		for li, load := range t.Loads {
			rv := rowView{Load: load}
			for vi := range t.Variants {
				c := &t.Cells[li][vi]
				cv := cellView{Text: "-"}
				if c.N() > 0 {
					ci := "±?"
					if x := c.CIPct(); !math.IsNaN(x) {
						ci = fmt.Sprintf("±%.1f%%", x)
					}
					cv.Text = fmt.Sprintf("%s (%.2f%%) %s", strconvValue(c.Center, t.Metric.Decimals), c.Pct, ci)
					if vi > 0 {
						if c.Significant {
							cv.Text += " *"
							if c.Pct > 0 {
								cv.Class = "better"
							} else if c.Pct < 0 {
								cv.Class = "worse"
							}
						} else {
							cv.Text += " ~"
						}
					}
				}
				rv.Cells = append(rv.Cells, cv)
			}
			tv.Rows = append(tv.Rows, rv)
		}
		var txt bytes.Buffer
		if err := compare.FormatTable(&txt, t); err != nil {
			return nil, err
		}
		tv.Text = txt.String()
		p, err := BarPlot(fileName("bars", t.Machine, t.Kernel, t.Workload, t.Metric.Name), t)
		if err != nil {
			return nil, err
		}
		rep.Plots = append(rep.Plots, p)
		v := dataURI(p)
		tv.Plot = &v
		pg.Tables = append(pg.Tables, tv)
	}
	cdfs, err := latencyCDFs(plan, recs)
	if err != nil {
		return nil, err
	}
	for _, p := range cdfs {
		rep.Plots = append(rep.Plots, p)
		pg.CDFs = append(pg.CDFs, dataURI(p))
	}
	heat, err := heatmaps(plan, recs, opt.Heatmaps)
	if err != nil {
		return nil, err
	}
	for _, p := range heat {
		rep.Plots = append(rep.Plots, p)
		pg.Heatmaps = append(pg.Heatmaps, dataURI(p))
	}
	for _, c := range compare.SchedstatComparisons(plan, recs) {
		var b bytes.Buffer
		if err := c.Format(&b); err != nil {
			return nil, err
		}
		pg.Schedstat = append(pg.Schedstat, statView{Title: c.Title(), Text: b.String()})
	}
	var b bytes.Buffer
	if err := pageTmpl.Execute(&b, pg); err != nil {
		return nil, err
	}
	rep.HTML = b.Bytes()
	return rep, nil
}

func strconvValue(v float64, decimals int) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return fmt.Sprint(v)
	}
	return fmt.Sprintf("%.*f", decimals, v)
}

type cfgKey struct{ machine, kernel, workload, load string }

// latencyCDFs draws, for every workload with latency percentiles and every
// load, the distribution of each variant (latencyData).
func latencyCDFs(plan *experiment.Plan, recs []*experiment.Record) ([]*Plot, error) {
	var out []*Plot
	for _, c := range latencyData(plan, recs) {
		p, err := CDFPlot(c.name, c.title, c.note, c.unit, plan.Variants, c.lines)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

// cdfData is what a latency CDF draws: a step line per variant of the
// plan (nil for one without runs).
type cdfData struct {
	name, title, note, unit string
	lines                   []plotter.XYs
	histogram               bool // the lines come from histograms
}

// latencyData is, for every workload with latency percentiles and every
// load, the distribution of each variant. Where every run of the load
// recorded the histogram behind the percentiles (schbench), a variant's
// CDF is its runs' histograms pooled; otherwise it is each percentile's
// mean over runs.
func latencyData(plan *experiment.Plan, recs []*experiment.Record) []cdfData {
	type acc struct {
		sum     map[string]float64
		n       map[string]int
		buckets map[uint64]workload.Bucket // by value
	}
	data := map[cfgKey]map[string]*acc{} // → variant → metric sums
	groups := map[string]string{}        // workload → latency group
	noHist := map[cfgKey]bool{}          // a run without the histogram
	for _, r := range recs {
		k := cfgKey{r.Machine, plan.TableKernel(r), r.Workload.Name, r.Param.Value}
		var a *acc
		for _, m := range r.Metrics {
			info := compare.Metric(m.Name)
			if info.LatencyGroup == "" {
				continue
			}
			if g, ok := groups[r.Workload.Name]; ok && g != info.LatencyGroup {
				continue // the first group of a workload only
			}
			groups[r.Workload.Name] = info.LatencyGroup
			if data[k] == nil {
				data[k] = map[string]*acc{}
			}
			if a = data[k][r.Variant]; a == nil {
				a = &acc{sum: map[string]float64{}, n: map[string]int{}, buckets: map[uint64]workload.Bucket{}}
				data[k][r.Variant] = a
			}
			a.sum[m.Name] += m.Value
			a.n[m.Name]++
		}
		if a == nil {
			continue
		}
		h := histogramOf(r, groups[r.Workload.Name])
		if h == nil {
			noHist[k] = true
			continue
		}
		for _, b := range h.Buckets {
			if x, ok := a.buckets[b.Value]; ok {
				b.Count += x.Count
			}
			a.buckets[b.Value] = b
		}
	}
	var out []cdfData
	for _, m := range plan.Machines {
		for _, k := range plan.Kernels {
			for _, w := range plan.Workloads {
				g, ok := groups[w.Name]
				if !ok {
					continue
				}
				for _, load := range w.Param.Values {
					key := cfgKey{m.Label, k, w.Name, load}
					d := data[key]
					if d == nil {
						continue
					}
					lines := make([]plotter.XYs, len(plan.Variants))
					var samples uint64
					for vi, v := range plan.Variants {
						a := d[v]
						if a == nil {
							continue
						}
						if !noHist[key] {
							buckets := make([]workload.Bucket, 0, len(a.buckets))
							for _, b := range a.buckets {
								buckets = append(buckets, b)
								samples += b.Count
							}
							sort.Slice(buckets, func(i, j int) bool { return buckets[i].Value < buckets[j].Value })
							lines[vi] = cdfSteps(buckets)
							continue
						}
						names := make([]string, 0, len(a.sum))
						for n := range a.sum {
							names = append(names, n)
						}
						sort.Strings(names)
						var pts []plotter.XY
						for _, n := range names {
							// The minimum and the maximum are the 0th and
							// the 100th; the old schbench's min is always 0.
							x, p := a.sum[n]/float64(a.n[n]), compare.Metric(n).Percentile
							if !math.IsNaN(x) && !(p == 0 && x <= 0) {
								pts = append(pts, plotter.XY{X: x, Y: p / 100})
							}
						}
						lines[vi] = percentileSteps(pts)
					}
					loadText := ""
					if w.Param.Index >= 0 {
						loadText = fmt.Sprintf(" %s=%s", w.Param.Name, load)
					}
					title := fmt.Sprintf("%s%s on %s, kernel %s: %s distribution", w.Tool, loadText, m.Label, k, g)
					note := "the percentiles each run reports, mean over runs"
					if !noHist[key] {
						note = fmt.Sprintf("from %s's latency histogram, each variant's runs pooled (%d samples in all): each bucket rises by its share of the samples, at the value %s reports for it", w.Tool, samples, w.Tool)
					}
					out = append(out, cdfData{name: fileName("cdf", m.Label, k, w.Name, w.Param.Name+"="+load), title: title, note: note,
						unit: compare.Metric(g + ".p50").Unit, lines: lines, histogram: !noHist[key]})
				}
			}
		}
	}
	return out
}

// histogramOf is r's histogram of the latency group, if it recorded one.
func histogramOf(r *experiment.Record, group string) *workload.Histogram {
	for i := range r.Histograms {
		if r.Histograms[i].Name == group {
			return &r.Histograms[i]
		}
	}
	return nil
}

// heatmaps draws the occupancy of traced runs.
func heatmaps(plan *experiment.Plan, recs []*experiment.Record, which string) ([]*Plot, error) {
	if which == "none" {
		return nil, nil
	}
	last := map[string]string{}
	for _, w := range plan.Workloads {
		last[w.Name] = w.Param.Values[len(w.Param.Values)-1]
	}
	var out []*Plot
	for _, r := range recs {
		if r.Occupancy == nil {
			continue
		}
		if which != "all" && r.Param.Value != last[r.Workload.Name] {
			continue
		}
		load := ""
		if r.Param.Name != "" {
			load = " " + r.Param.Name + "=" + r.Param.Value
		}
		title := fmt.Sprintf("%s%s on %s, %s %s, seed %d: CPU occupancy", r.Workload.Tool, load, r.Machine, r.Kernel, r.Variant, r.Seed)
		short := fmt.Sprintf("%s%s, %s", r.Workload.Tool, load, r.Variant)
		p, err := HeatmapPlot(fileName("occupancy", r.Key), short, title, r.Occupancy)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

// WritePlots writes every plot into dir: NAME.svg (charts) and NAME.png.
func WritePlots(dir string, r *Report) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, p := range r.Plots {
		if p.SVG != nil {
			if err := os.WriteFile(filepath.Join(dir, p.Name+".svg"), p.SVG, 0o644); err != nil {
				return err
			}
		}
		if err := os.WriteFile(filepath.Join(dir, p.Name+".png"), p.PNG, 0o644); err != nil {
			return err
		}
	}
	return nil
}

var pageTmpl = template.Must(template.New("report").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>schedlab: {{.Name}}</title>
<style>
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 2em auto; max-width: 1200px; padding: 0 1em; color: #222; background: #fff; }
h1 { font-size: 1.6em; margin-bottom: 0.2em; }
h2 { font-size: 1.15em; margin-top: 2em; border-bottom: 1px solid #ccc; padding-bottom: 0.2em; }
table.facts td { padding: 0.1em 1em 0.1em 0; vertical-align: top; }
table.facts td:first-child { font-weight: 600; }
table.cmp { border-collapse: collapse; font-variant-numeric: tabular-nums; margin: 0.5em 0; }
table.cmp th, table.cmp td { border: 1px solid #ccc; padding: 0.25em 0.6em; text-align: right; white-space: nowrap; }
table.cmp th { background: #f0f0f0; }
td.better { background: #d9f2d9; }
td.worse { background: #f8d7d7; }
p.caption { font-size: 0.85em; color: #555; }
figure.plot { margin: 1em 0; }
figure.plot img { max-width: 100%; height: auto; border: 1px solid #eee; }
figure.plot figcaption { font-size: 0.85em; color: #555; }
pre { background: #f7f7f7; padding: 0.6em; overflow-x: auto; font-size: 0.8em; }
.missing { color: #b00; font-weight: 600; }
div.wide { max-width: 100%; overflow-x: auto; }
.grid { display: flex; flex-wrap: wrap; gap: 1em; }
.grid figure.plot { flex: 1 1 45%; }
</style>
</head>
<body>
<h1>{{.Name}}{{if .Profile}} ({{.Profile}}){{end}}</h1>
{{if .Description}}<p>{{.Description}}</p>{{end}}
{{if .Patch}}<p>Patch: <em>{{.Patch}}</em></p>{{end}}
<table class="facts">
{{range .Facts}}<tr><td>{{index . 0}}</td><td>{{index . 1}}</td></tr>
{{end}}</table>
{{if .Missing}}<p class="missing">{{.Missing}} runs are missing: the figures below use the runs present.</p>{{end}}
{{range .Tables}}
<section class="comparison" id="{{.ID}}">
<h2>{{.Title}}</h2>
<div class="wide"><table class="cmp">
<tr><th>{{.Param}}</th>{{range .Variants}}<th>{{.}}</th>{{end}}</tr>
{{range .Rows}}<tr><th>{{.Load}}</th>{{range .Cells}}<td{{if .Class}} class="{{.Class}}"{{end}}>{{.Text}}</td>{{end}}</tr>
{{end}}</table></div>
<p class="caption">{{.Caption}}</p>
{{range .Warnings}}<p class="caption">note: {{.}}</p>{{end}}
{{with .Plot}}<figure class="plot" data-kind="{{.Kind}}"><img src="{{.Src}}" alt="{{.Alt}}"><figcaption>{{.Title}}</figcaption></figure>{{end}}
<details><summary>as text</summary><pre>{{.Text}}</pre></details>
</section>
{{end}}
{{if .CDFs}}
<section id="latency">
<h2>Latency distributions</h2>
<div class="grid">
{{range .CDFs}}<figure class="plot" data-kind="{{.Kind}}"><img src="{{.Src}}" alt="{{.Alt}}"><figcaption>{{.Title}}: {{.Note}}.</figcaption></figure>
{{end}}</div>
</section>
{{end}}
{{if .Heatmaps}}
<section id="occupancy">
<h2>CPU occupancy of traced runs</h2>
<p class="caption">From the sched_switch tracepoints of run 0: the fraction of each time bin a CPU ran a task, on the colour scale beside each map (white idle, dark blue busy all the bin).</p>
<div class="grid">
{{range .Heatmaps}}<figure class="plot" data-kind="{{.Kind}}" data-scale="busy 0-100%"><img src="{{.Src}}" alt="{{.Alt}}"><figcaption>{{.Title}}</figcaption></figure>
{{end}}</div>
</section>
{{end}}
{{if .Schedstat}}
<section id="schedstat">
<h2>schedstat</h2>
<p class="caption">/proc/schedstat counters summed over each configuration's runs, as per-CPU averages, in the layout of perf sched stats diff (RUN1 is tip).</p>
{{range .Schedstat}}<details><summary>{{.Title}}</summary><pre>{{.Text}}</pre></details>
{{end}}
</section>
{{end}}
</body>
</html>
`))
