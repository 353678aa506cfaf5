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

	"github.com/schedlab/schedlab/internal/experiment"
	"github.com/schedlab/schedlab/internal/experiment/compare"
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
	SVG   []byte // nil for heatmaps
	PNG   []byte
}

func render(p *plot.Plot, w, h vg.Length, format string) ([]byte, error) {
	wt, err := p.WriterTo(w, h, format)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if _, err := wt.WriteTo(&b); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
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

func (g *groupedBars) Plot(c draw.Canvas, plt *plot.Plot) {
	trX, trY := plt.Transforms(&c)
	for li, row := range g.t.Cells {
		for vi := range row {
			cell := &row[vi]
			if cell.N() == 0 || math.IsNaN(cell.Center) {
				continue
			}
			x0, x1 := g.geometry(li, vi)
			pts := []vg.Point{{X: trX(x0), Y: trY(0)}, {X: trX(x1), Y: trY(0)}, {X: trX(x1), Y: trY(cell.Center)}, {X: trX(x0), Y: trY(cell.Center)}}
			c.FillPolygon(variantColor(vi), c.ClipPolygonXY(pts))
			if !math.IsNaN(cell.Lo) && !math.IsNaN(cell.Hi) && !math.IsInf(cell.Hi, 0) {
				xm := trX((x0 + x1) / 2)
				ls := draw.LineStyle{Color: color.Black, Width: vg.Points(0.8)}
				c.StrokeLine2(ls, xm, trY(cell.Lo), xm, trY(cell.Hi))
				cap := (trX(x1) - trX(x0)) / 4
				c.StrokeLine2(ls, xm-cap, trY(cell.Lo), xm+cap, trY(cell.Lo))
				c.StrokeLine2(ls, xm-cap, trY(cell.Hi), xm+cap, trY(cell.Hi))
			}
		}
	}
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
	// Headroom for the legend above the bars.
	return xmin, xmax, 0, ymax * (1.1 + 0.07*float64(len(g.t.Variants)))
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
	p.Legend.Top = true
	p.Legend.Left = false
	return p
}

// BarPlot is a table as grouped bars: the statistic per load and variant
// with its confidence interval.
func BarPlot(name string, t *compare.Table) (*Plot, error) {
	unit := t.Metric.Unit
	if unit != "" {
		unit = " (" + unit + ")"
	}
	dir := "lower is better"
	if t.Metric.HigherBetter() {
		dir = "higher is better"
	}
	title := fmt.Sprintf("%s on %s, %s (%s)", t.Command, t.Machine, t.Kernel, dir)
	param := t.Param
	if param == "" {
		param = "load"
	}
	p := newPlot(title, param, fmt.Sprintf("%s %s%s", t.Stat, t.Metric.Label, unit))
	p.Add(plotter.NewGrid())
	p.Add(&groupedBars{t: t})
	p.NominalX(t.Loads...)
	for i, v := range t.Variants {
		p.Legend.Add(v, swatch(variantColor(i)))
	}
	w := vg.Length(40+8*len(t.Loads)*len(t.Variants)) * vg.Millimeter
	if w < 140*vg.Millimeter {
		w = 140 * vg.Millimeter
	}
	if w > 280*vg.Millimeter {
		w = 280 * vg.Millimeter
	}
	return finish(p, name, "bars", title, w, 90*vg.Millimeter)
}

func finish(p *plot.Plot, name, kind, title string, w, h vg.Length) (*Plot, error) {
	svg, err := render(p, w, h, "svg")
	if err != nil {
		return nil, err
	}
	png, err := render(p, w, h, "png")
	if err != nil {
		return nil, err
	}
	return &Plot{Name: name, Kind: kind, Title: title, SVG: svg, PNG: png}, nil
}

// CDFPlot draws the latency distribution of each variant at one load: the
// percentiles a run reports (mean over runs), as a step function.
func CDFPlot(name, title, unit string, variants []string, points [][]plotter.XY) (*Plot, error) {
	p := newPlot(title, "latency ("+unit+")", "percentile")
	p.Add(plotter.NewGrid())
	p.Legend.Left = true
	p.Legend.Top = true
	p.Legend.XOffs = 10 * vg.Millimeter
	for i, pts := range points {
		if len(pts) == 0 {
			continue
		}
		sort.Slice(pts, func(a, b int) bool { return pts[a].Y < pts[b].Y })
		xys := make(plotter.XYs, len(pts))
		copy(xys, pts)
		l, err := plotter.NewLine(xys)
		if err != nil {
			return nil, err
		}
		l.StepStyle = plotter.PostStep
		l.Color = variantColor(i)
		l.Width = vg.Points(1.5)
		p.Add(l)
		p.Legend.Add(variants[i], l)
	}
	p.Y.Min, p.Y.Max = 0, 100
	return finish(p, name, "cdf", title, 140*vg.Millimeter, 90*vg.Millimeter)
}

// occGrid is an Occupancy as a heat map grid: x the time (ms), y the CPU.
type occGrid struct{ o *experiment.Occupancy }

func (g occGrid) Dims() (c, r int) {
	if len(g.o.CPUs) == 0 {
		return 0, 0
	}
	return len(g.o.CPUs[0]), len(g.o.CPUs)
}
func (g occGrid) Z(c, r int) float64 { return float64(g.o.CPUs[r][c]) / 255 }
func (g occGrid) X(c int) float64 {
	return (float64(c) + 0.5) * float64(g.o.BinNs) / 1e6
}
func (g occGrid) Y(r int) float64 { return float64(r) }
func (g occGrid) Min() float64    { return 0 }
func (g occGrid) Max() float64    { return 1 }

// busyPalette goes from white (idle) to dark blue (busy all the bin).
type busyPalette int

func (n busyPalette) Colors() []color.Color {
	out := make([]color.Color, int(n))
	for i := range out {
		f := float64(i) / float64(int(n)-1)
		out[i] = color.RGBA{uint8(255 - f*(255-0x08)), uint8(255 - f*(255-0x30)), uint8(255 - f*(255-0x6b)), 0xff}
	}
	return out
}

// HeatmapPlot draws a traced run's per-CPU occupancy over time.
// The plot's own title is short; title is the figure's caption.
func HeatmapPlot(name, short, title string, o *experiment.Occupancy) (*Plot, error) {
	p := newPlot(short, "simulated time (ms)", "CPU")
	if c, r := (occGrid{o}).Dims(); c < 2 || r < 1 {
		return nil, fmt.Errorf("report: occupancy of %s has %d bins", name, c)
	}
	h := plotter.NewHeatMap(occGrid{o}, busyPalette(64))
	h.Rasterized = true
	p.Add(h)
	n := len(o.CPUs)
	p.Y.Tick.Marker = cpuTicks(n)
	height := vg.Length(60+minInt(n, 256)/2) * vg.Millimeter
	png, err := render(p, 150*vg.Millimeter, height, "png")
	if err != nil {
		return nil, err
	}
	return &Plot{Name: name, Kind: "heatmap", Title: title, PNG: png}, nil
}

func minInt(a, b int) int {
	if a < b {
		return a
	}
	return b
}
