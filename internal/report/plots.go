package report

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"sort"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/schedlab/schedlab/internal/experiment/compare"
	"github.com/schedlab/schedlab/internal/workload"
)

// colors are the variants' colours, tip first (Okabe-Ito, readable by the
// colour-blind).
func init() {
	// Sans-serif text in the PNGs too (the fonts are compiled in).
	plot.DefaultFont.Variant = "Sans"
}

var colors = []color.RGBA{
	{0x55, 0x55, 0x55, 0xff}, // tip: grey
	{0x00, 0x72, 0xb2, 0xff},
	{0xe6, 0x9f, 0x00, 0xff},
	{0x00, 0x9e, 0x73, 0xff},
	{0xd5, 0x5e, 0x00, 0xff},
	{0xcc, 0x79, 0xa7, 0xff},
	{0x56, 0xb4, 0xe9, 0xff},
	{0xf0, 0xe4, 0x42, 0xff},
}

func variantColor(i int) color.RGBA { return colors[i%len(colors)] }

// Plot is one rendered figure.
type Plot struct {
	Name  string // file name without extension
	Kind  string // "bars", "cdf" or "heatmap"
	Title string
	// Note says what the figure shows, for its caption.
	Note string
	SVG  []byte // nil for heatmaps
	PNG  []byte
	// legend is where the legend went (charts only).
	legend place
}

// figure is a gonum plot with what the report draws around it: a legend
// placed where it hides no data, and a panel right of the plot (a heat
// map's colour scale).
type figure struct {
	p *plot.Plot
	// legend's entries are drawn by render, not by the plot; nil for
	// none.
	legend *plot.Legend
	// shapes is the data in the plotting area's unit square (for the
	// legend's place), given the plot with its axes' ranges set.
	shapes func(p *plot.Plot) []shape
	// side is the width of a panel right of the plot, which drawSide
	// draws given the plotting area.
	side     vg.Length
	drawSide func(area, side draw.Canvas)
}

// place is where the legend goes when the plot is w × h.
func (f *figure) place(w, h vg.Length) place {
	if f.legend == nil {
		return outside
	}
	area := f.p.DataCanvas(draw.Canvas{Rectangle: vg.Rectangle{Max: vg.Point{X: w, Y: h}}})
	lw, lh := legendBox(f.legend, area)
	var shapes []shape
	if f.shapes != nil {
		shapes = f.shapes(f.p)
	}
	return chooseLegend(shapes, lw, lh)
}

// render draws f with a plot of w × h, widened by its side panel and, if
// no corner of the plotting area is free, by its legend.
func (f *figure) render(w, h vg.Length, where place, format string) ([]byte, error) {
	side := f.side
	if f.legend != nil && where == outside {
		side += f.legend.Rectangle(draw.Canvas{}).Size().X + 2*legendMargin
	}
	cw, err := draw.NewFormattedCanvas(w+side, h, format)
	if err != nil {
		return nil, err
	}
	dc := draw.New(cw)
	dc.SetColor(color.White)
	dc.Fill(dc.Rectangle.Path())
	pc := draw.Crop(dc, 0, -side, 0, 0)
	sc := draw.Crop(dc, w, 0, 0, 0)
	f.p.Draw(pc)
	area := f.p.DataCanvas(pc)
	if f.legend != nil {
		drawLegend(f.legend, where, area, sc)
	}
	if f.drawSide != nil {
		f.drawSide(area, draw.Crop(sc, side-f.side, 0, 0, 0))
	}
	var b bytes.Buffer
	if _, err := cw.WriteTo(&b); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// finish renders f as SVG and PNG.
func (f *figure) finish(name, kind, title, note string, w, h vg.Length) (*Plot, error) {
	where := f.place(w, h)
	svg, err := f.render(w, h, where, "svg")
	if err != nil {
		return nil, err
	}
	png, err := f.render(w, h, where, "png")
	if err != nil {
		return nil, err
	}
	return &Plot{Name: name, Kind: kind, Title: title, Note: note, SVG: svg, PNG: png, legend: where}, nil
}

// groupedBars draws, for each load (x = 0, 1, ...), one bar per variant
// with its confidence interval as an error bar.
type groupedBars struct {
	t *compare.Table
}

func (g *groupedBars) geometry(li, vi int) (x0, x1 float64) {
	nv := len(g.t.Variants)
	w := 0.8 / float64(nv)
	x0 = float64(li) - 0.4 + float64(vi)*w
	return x0 + 0.1*w, x0 + 0.9*w
}

// hasCI reports whether cell has an interval to draw.
func hasCI(cell *compare.Cell) bool {
	return !math.IsNaN(cell.Lo) && !math.IsNaN(cell.Hi) && !math.IsInf(cell.Hi, 0) && !math.IsInf(cell.Lo, 0)
}

func (g *groupedBars) Plot(c draw.Canvas, plt *plot.Plot) {
	trX, trY := plt.Transforms(&c)
	ls := draw.LineStyle{Color: color.Black, Width: vg.Points(0.8)}
	for li, row := range g.t.Cells {
		for vi := range row {
			cell := &row[vi]
			if cell.N() == 0 || math.IsNaN(cell.Center) {
				continue
			}
			x0, x1 := g.geometry(li, vi)
			pts := []vg.Point{{X: trX(x0), Y: trY(0)}, {X: trX(x1), Y: trY(0)}, {X: trX(x1), Y: trY(cell.Center)}, {X: trX(x0), Y: trY(cell.Center)}}
			c.FillPolygon(variantColor(vi), c.ClipPolygonXY(pts))
			if hasCI(cell) {
				// An interval reaching below the axis (few runs)
				// is cut at it, not drawn over the tick labels.
				xm := trX((x0 + x1) / 2)
				c.StrokeLines(ls, c.ClipLinesXY([]vg.Point{{X: xm, Y: trY(cell.Lo)}, {X: xm, Y: trY(cell.Hi)}})...)
				cap := (trX(x1) - trX(x0)) / 4
				for _, y := range []float64{cell.Lo, cell.Hi} {
					if y >= plt.Y.Min && y <= plt.Y.Max {
						c.StrokeLine2(ls, xm-cap, trY(y), xm+cap, trY(y))
					}
				}
			}
		}
	}
}

// shapes are the bars and error bars in the plotting area's unit square.
func (g *groupedBars) shapes(p *plot.Plot) []shape {
	var out []shape
	for li, row := range g.t.Cells {
		for vi := range row {
			cell := &row[vi]
			if cell.N() == 0 || math.IsNaN(cell.Center) {
				continue
			}
			x0, x1 := g.geometry(li, vi)
			out = append(out, shape{rect: box{p.X.Norm(x0), p.Y.Norm(0), p.X.Norm(x1), p.Y.Norm(cell.Center)}})
			if hasCI(cell) {
				xm := p.X.Norm((x0 + x1) / 2)
				out = append(out, shape{line: []point{{xm, p.Y.Norm(cell.Lo)}, {xm, p.Y.Norm(cell.Hi)}}})
			}
		}
	}
	return out
}

func (g *groupedBars) DataRange() (xmin, xmax, ymin, ymax float64) {
	xmin, xmax = -0.5, float64(len(g.t.Loads))-0.5
	for _, row := range g.t.Cells {
		for _, cell := range row {
			for _, v := range []float64{cell.Center, cell.Hi} {
				if !math.IsNaN(v) && !math.IsInf(v, 0) && v > ymax {
					ymax = v
				}
			}
		}
	}
	if ymax == 0 {
		ymax = 1
	}
	return xmin, xmax, 0, ymax * 1.05
}

// swatch is a legend entry: a filled square.
type swatch color.RGBA

func (s swatch) Thumbnail(c *draw.Canvas) {
	pts := []vg.Point{{X: c.Min.X, Y: c.Min.Y}, {X: c.Max.X, Y: c.Min.Y}, {X: c.Max.X, Y: c.Max.Y}, {X: c.Min.X, Y: c.Max.Y}}
	c.FillPolygon(color.RGBA(s), pts)
}

func newPlot(title, xlabel, ylabel string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = xlabel
	p.Y.Label.Text = ylabel
	p.X.Tick.Marker = linearTicks{}
	p.Y.Tick.Marker = linearTicks{}
	return p
}

// newLegend is an empty legend in the plots' style.
func newLegend() *plot.Legend {
	lg := plot.NewLegend()
	return &lg
}

// BarPlot is a table as grouped bars: the statistic per load and variant
// with its confidence interval.
func BarPlot(name string, t *compare.Table) (*Plot, error) {
	unit := t.Metric.Unit
	if unit != "" {
		unit = " (" + unit + ")"
	}
	dir := "lower is better"
	switch {
	case t.Metric.Better == workload.Counter:
		dir = "a count"
	case t.Metric.HigherBetter():
		dir = "higher is better"
	}
	title := fmt.Sprintf("%s on %s, %s (%s)", t.Command, t.Machine, t.Kernel, dir)
	param := t.Param
	if param == "" {
		param = "load"
	}
	p := newPlot(title, param, fmt.Sprintf("%s %s%s", t.Stat, t.Metric.Label, unit))
	p.Add(plotter.NewGrid())
	g := &groupedBars{t: t}
	p.Add(g)
	p.NominalX(t.Loads...)
	lg := newLegend()
	for i, v := range t.Variants {
		lg.Add(v, swatch(variantColor(i)))
	}
	w := vg.Length(40+8*len(t.Loads)*len(t.Variants)) * vg.Millimeter
	if w < 140*vg.Millimeter {
		w = 140 * vg.Millimeter
	}
	if w > 280*vg.Millimeter {
		w = 280 * vg.Millimeter
	}
	f := &figure{p: p, legend: lg, shapes: g.shapes}
	return f.finish(name, "bars", title, "", w, barHeight)
}

const barHeight = 90 * vg.Millimeter

// cdfSteps is the CDF of a histogram as a step line: from (v₀, 0) up to
// (v₀, F₀), across to (v₁, F₀), up to (v₁, F₁), … up to (vₙ, 1), where vᵢ
// is bucket i's value and Fᵢ the share of the samples in buckets 0 … i.
// Each rise is one bucket's share of the samples. Nil for no samples.
func cdfSteps(buckets []workload.Bucket) plotter.XYs {
	var total uint64
	for _, b := range buckets {
		total += b.Count
	}
	if total == 0 {
		return nil
	}
	out := make(plotter.XYs, 0, 2*len(buckets))
	var cum uint64
	for _, b := range buckets {
		if b.Count == 0 {
			continue
		}
		x := float64(b.Value)
		out = append(out, plotter.XY{X: x, Y: float64(cum) / float64(total)})
		cum += b.Count
		out = append(out, plotter.XY{X: x, Y: float64(cum) / float64(total)})
	}
	return out
}

// percentileSteps is the step line of a distribution known only by
// percentiles (value x at fraction y, in ascending y): from (x₀, y₀)
// across to each next value, then up to its fraction.
func percentileSteps(pts []plotter.XY) plotter.XYs {
	sort.SliceStable(pts, func(a, b int) bool { return pts[a].Y < pts[b].Y })
	var out plotter.XYs
	for i, p := range pts {
		if i > 0 {
			out = append(out, plotter.XY{X: p.X, Y: pts[i-1].Y})
		}
		out = append(out, p)
	}
	return out
}

// logAxisRatio is the ratio of the largest to the smallest latency from
// which a CDF's latency axis is logarithmic.
const logAxisRatio = 10

// CDFPlot draws the latency distribution of each variant at one load,
// each given as a step line (cdfSteps, percentileSteps) of fractions of
// the samples; a variant without one is left out. The latency axis is
// logarithmic when the latencies span a decade or more.
func CDFPlot(name, title, note, unit string, variants []string, lines []plotter.XYs) (*Plot, error) {
	f, err := cdfFigure(title, unit, variants, lines)
	if err != nil {
		return nil, fmt.Errorf("report: %s: %v", name, err)
	}
	return f.finish(name, "cdf", title, note, cdfWidth, cdfHeight)
}

const cdfWidth, cdfHeight = 140 * vg.Millimeter, 90 * vg.Millimeter

// cdfFigure is CDFPlot's figure.
func cdfFigure(title, unit string, variants []string, lines []plotter.XYs) (*figure, error) {
	p := newPlot(title, "latency ("+unit+")", "fraction of samples ≤ latency")
	p.Add(plotter.NewGrid())
	lg := newLegend()
	xmin, xmax := math.Inf(1), math.Inf(-1)
	for i, pts := range lines {
		if len(pts) == 0 {
			continue
		}
		l, err := plotter.NewLine(pts)
		if err != nil {
			return nil, err
		}
		l.Color = variantColor(i)
		l.Width = vg.Points(1.5)
		p.Add(l)
		lg.Add(variants[i], l)
		for _, q := range pts {
			xmin, xmax = math.Min(xmin, q.X), math.Max(xmax, q.X)
		}
	}
	if math.IsInf(xmin, 0) {
		return nil, fmt.Errorf("no latencies")
	}
	// A margin left and right, so that the first and last rises are
	// not on the frame.
	if xmin > 0 && xmax/xmin >= logAxisRatio {
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = logTicks{}
		p.X.Min, p.X.Max = xmin/1.15, xmax*1.15
	} else {
		pad := math.Max((xmax-xmin)*0.04, math.Max(1, xmax*0.01))
		p.X.Min, p.X.Max = math.Max(0, xmin-pad), xmax+pad
	}
	p.Y.Min, p.Y.Max = 0, 1
	f := &figure{p: p, legend: lg, shapes: func(p *plot.Plot) []shape {
		var out []shape
		for _, pts := range lines {
			if len(pts) == 0 {
				continue
			}
			s := shape{line: make([]point, len(pts))}
			for j, q := range pts {
				s.line[j] = point{p.X.Norm(q.X), p.Y.Norm(q.Y)}
			}
			out = append(out, s)
		}
		return out
	}}
	return f, nil
}
