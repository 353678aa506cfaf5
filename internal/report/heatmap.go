package report

import (
	"fmt"
	"image"
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/schedlab/schedlab/internal/experiment"
)

// busyColor is the colour of a CPU busy a fraction f of a time bin: from
// white (idle) to dark blue (busy all the bin), in a straight line.
func busyColor(f float64) color.RGBA {
	f = math.Max(0, math.Min(1, f))
	mix := func(to uint8) uint8 { return uint8(math.Round(255 - f*(255-float64(to)))) }
	return color.RGBA{mix(busyR), mix(busyG), mix(busyB), 0xff}
}

// The colour of a CPU busy all the bin.
const busyR, busyG, busyB = 0x08, 0x30, 0x6b

// occRaster draws an Occupancy: x the simulated time (ms), y the CPU. It
// draws one image pixel per device pixel, each the colour of the bin and
// CPU under it, so that bins keep sharp edges (gonum's raster heat map
// scales a bin-sized image and blurs them).
type occRaster struct{ o *experiment.Occupancy }

func (g occRaster) bins() int { return len(g.o.CPUs[0]) }

// endMs is where the last bin ends.
func (g occRaster) endMs() float64 {
	full := int64(g.bins()) * g.o.BinNs
	if g.o.EndNs > int64(g.bins()-1)*g.o.BinNs && g.o.EndNs < full {
		return float64(g.o.EndNs) / 1e6
	}
	return float64(full) / 1e6
}

func (g occRaster) DataRange() (xmin, xmax, ymin, ymax float64) {
	return 0, g.endMs(), -0.5, float64(len(g.o.CPUs)) - 0.5
}

func (g occRaster) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	x0, x1 := trX(0), trX(g.endMs())
	y0, y1 := trY(-0.5), trY(float64(len(g.o.CPUs))-0.5)
	dpi := 72.0
	if d, ok := c.Canvas.(interface{ DPI() float64 }); ok {
		dpi = d.DPI()
	}
	w, h := int(math.Round((x1 - x0).Dots(dpi))), int(math.Round((y1 - y0).Dots(dpi)))
	if w < 1 || h < 1 {
		return
	}
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	n, bins := len(g.o.CPUs), g.bins()
	binMs, end := float64(g.o.BinNs)/1e6, g.endMs()
	for px := 0; px < w; px++ {
		bin := min(bins-1, int((float64(px)+0.5)/float64(w)*end/binMs))
		for py := 0; py < h; py++ {
			cpu := min(n-1, int((float64(h-py)-0.5)/float64(h)*float64(n)))
			img.SetRGBA(px, py, busyColor(float64(g.o.CPUs[cpu][bin])/255))
		}
	}
	c.DrawImage(vg.Rectangle{Min: vg.Point{X: x0, Y: y0}, Max: vg.Point{X: x1, Y: y1}}, img)
}

// scaleTicks are the colour scale's labelled fractions.
var scaleTicks = []float64{0, 0.25, 0.5, 0.75, 1}

const (
	scaleGap   = 4 * vg.Millimeter // between the plot and the bar
	scaleWidth = 5 * vg.Millimeter
	scaleTick  = 1.5 * vg.Millimeter
)

// scaleSide is the width of the colour scale's panel with labels in sty.
func scaleSide(sty text.Style) vg.Length {
	return scaleGap + scaleWidth + scaleTick + sty.Width(" 100%") + 2*vg.Millimeter
}

// drawScale draws the heat map's colour scale in side, as tall as the
// plotting area: the colours from idle (bottom) to busy (top), framed,
// with ticks labelled 0% to 100% and the word "busy" above.
func drawScale(area, side draw.Canvas, sty text.Style) {
	x0 := side.Min.X + scaleGap
	x1 := x0 + scaleWidth
	y0, y1 := area.Min.Y, area.Max.Y
	dpi := 72.0
	if d, ok := side.Canvas.(interface{ DPI() float64 }); ok {
		dpi = d.DPI()
	}
	h := max(1, int(math.Round((y1 - y0).Dots(dpi))))
	img := image.NewRGBA(image.Rect(0, 0, 1, h))
	for py := 0; py < h; py++ {
		img.SetRGBA(0, py, busyColor((float64(h-py)-0.5)/float64(h)))
	}
	side.DrawImage(vg.Rectangle{Min: vg.Point{X: x0, Y: y0}, Max: vg.Point{X: x1, Y: y1}}, img)
	frame := draw.LineStyle{Color: color.Gray{0x80}, Width: vg.Points(0.5)}
	side.StrokeLines(frame, []vg.Point{{X: x0, Y: y0}, {X: x1, Y: y0}, {X: x1, Y: y1}, {X: x0, Y: y1}, {X: x0, Y: y0}})
	tick := draw.LineStyle{Color: color.Black, Width: vg.Points(0.5)}
	lsty := sty
	lsty.XAlign, lsty.YAlign = draw.XLeft, draw.YCenter
	for _, f := range scaleTicks {
		y := y0 + vg.Length(f)*(y1-y0)
		side.StrokeLine2(tick, x1, y, x1+scaleTick, y)
		side.FillText(lsty, vg.Point{X: x1 + scaleTick + vg.Millimeter, Y: y}, fmt.Sprintf("%.0f%%", f*100))
	}
	tsty := sty
	tsty.XAlign, tsty.YAlign = draw.XCenter, draw.YBottom
	side.FillText(tsty, vg.Point{X: (x0 + x1) / 2, Y: y1 + vg.Millimeter}, "busy")
}

// heatWidth is a heat map's width without its colour scale.
const heatWidth = 150 * vg.Millimeter

// HeatmapPlot draws a traced run's per-CPU occupancy over time, with its
// colour scale beside it. The plot's own title is short; title is the
// figure's caption.
func HeatmapPlot(name, short, title string, o *experiment.Occupancy) (*Plot, error) {
	if len(o.CPUs) == 0 || len(o.CPUs[0]) < 2 || o.BinNs <= 0 {
		bins := 0
		if len(o.CPUs) > 0 {
			bins = len(o.CPUs[0])
		}
		return nil, fmt.Errorf("report: occupancy of %s has %d bins", name, bins)
	}
	for _, row := range o.CPUs {
		if len(row) != len(o.CPUs[0]) {
			return nil, fmt.Errorf("report: occupancy of %s has CPUs with different numbers of bins", name)
		}
	}
	p := newPlot(short, "simulated time (ms)", "CPU")
	p.Add(occRaster{o})
	n := len(o.CPUs)
	p.Y.Tick.Marker = cpuTicks(n)
	sty := p.Y.Tick.Label
	f := &figure{p: p, side: scaleSide(sty), drawSide: func(area, side draw.Canvas) { drawScale(area, side, sty) }}
	height := vg.Length(60+min(n, 256)/2) * vg.Millimeter
	png, err := f.render(heatWidth, height, outside, "png")
	if err != nil {
		return nil, err
	}
	return &Plot{Name: name, Kind: "heatmap", Title: title, PNG: png}, nil
}

// FindBusyScales finds the heat maps' colour scales in an image: a heat
// map's PNG, or a screenshot of a report's page (for the tests). A scale is
// a run of pixels down a column, at least 40 tall, whose colours follow
// busyColor from at least 90% busy at the top to at most 10% at the
// bottom, never getting busier going down, falling by at most 10% from one
// pixel to the next and never keeping one colour for more than 3 pixels,
// through at least 20 distinct percentages; such runs in adjacent columns,
// in the same place within 3 pixels, are one scale, if at least 3 pixels
// wide. A heat map's bins do not pass for one: a column crosses each
// CPU's bin in one colour.
func FindBusyScales(img image.Image) []image.Rectangle {
	const minRun, minLevels, maxFlat, tol = 40, 20, 3, 3
	b := img.Bounds()
	var scales []image.Rectangle
	var open []int // indices in scales of those that reach the last column
	for x := b.Min.X; x < b.Max.X; x++ {
		var runs [][2]int // [y0, y1)
		start, flat := -1, 0
		var top, last float64
		levels := map[int]bool{}
		end := func(y int) {
			if start >= 0 && y-start >= minRun && top >= 0.9 && last <= 0.1 && len(levels) >= minLevels {
				runs = append(runs, [2]int{start, y})
			}
			start = -1
		}
		for y := b.Min.Y; y < b.Max.Y; y++ {
			f, ok := busyFraction(img.At(x, y))
			if start >= 0 {
				switch {
				case !ok || f > last+0.02 || last-f > 0.1:
					end(y)
				case math.Abs(f-last) < 0.003:
					if flat++; flat == maxFlat {
						end(y - flat + 1) // the run keeps the flat stretch's first pixel
					}
				default:
					flat = 0
				}
			}
			if !ok {
				continue
			}
			if start < 0 {
				start, top, flat = y, f, 0
				clear(levels)
			}
			levels[int(math.Round(f*100))] = true
			last = f
		}
		end(b.Max.Y)
		var next []int
		for _, r := range runs {
			grown := false
			for _, i := range open {
				if s := scales[i]; abs(s.Min.Y-r[0]) <= tol && abs(s.Max.Y-r[1]) <= tol {
					scales[i].Max.X = x + 1
					next, grown = append(next, i), true
					break
				}
			}
			if !grown {
				scales = append(scales, image.Rect(x, r[0], x+1, r[1]))
				next = append(next, len(scales)-1)
			}
		}
		open = next
	}
	var out []image.Rectangle
	for _, s := range scales {
		if s.Dx() >= 3 {
			out = append(out, s)
		}
	}
	return out
}

// busyFraction is the fraction f whose busyColor c is, if it is one to
// within a few levels per channel.
func busyFraction(c color.Color) (float64, bool) {
	r, g, bl, _ := c.RGBA()
	dr, dg, db := 255-float64(r>>8), 255-float64(g>>8), 255-float64(bl>>8)
	lr, lg, lb := 255.0-busyR, 255.0-busyG, 255.0-busyB
	f := (dr*lr + dg*lg + db*lb) / (lr*lr + lg*lg + lb*lb)
	er, eg, eb := dr-f*lr, dg-f*lg, db-f*lb
	if er*er+eg*eg+eb*eb > 12*12 || f < -0.05 || f > 1.05 {
		return 0, false
	}
	return f, true
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
