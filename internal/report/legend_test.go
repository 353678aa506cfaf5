package report

import (
	"bytes"
	"image/png"
	"math"
	"testing"

	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/schedlab/schedlab/internal/experiment/compare"
	"github.com/schedlab/schedlab/internal/workload"
)

// A legend takes the first corner, top right, top left, bottom right,
// bottom left, that no data enters, edges included; beside the plot if
// every corner holds data or the legend is too big for one.
func TestChooseLegend(t *testing.T) {
	bar := func(x0, x1, y float64) shape { return shape{rect: box{x0, 0, x1, y}} }
	line := func(pts ...point) shape { return shape{line: pts} }
	const w, h = 0.3, 0.2
	for _, c := range []struct {
		name   string
		shapes []shape
		want   place
	}{
		{"no data", nil, topRight},
		{"a tall bar in the middle", []shape{bar(0.4, 0.6, 1)}, topRight},
		{"a tall bar on the right", []shape{bar(0.8, 0.9, 0.95)}, topLeft},
		{"a bar up to the box's edge", []shape{bar(0.8, 0.9, 0.8)}, topLeft},
		{"a bar just below the box", []shape{bar(0.8, 0.9, 0.79)}, topRight},
		{"tall bars at both ends", []shape{bar(0.05, 0.2, 0.9), bar(0.8, 0.95, 0.9)}, outside},
		{"an error bar on the right", []shape{line(point{0.75, 0.5}, point{0.75, 0.85})}, topLeft},
		// A CDF rising at the left and running along the top: only the
		// bottom right is free.
		{"an early CDF", []shape{line(point{0.02, 0}, point{0.02, 0.3}, point{0.1, 0.3}, point{0.1, 0.97}, point{0.98, 0.97}, point{0.98, 1})}, bottomRight},
		// A late CDF: along the bottom, rising at the right.
		{"a late CDF", []shape{line(point{0.02, 0}, point{0.02, 0.01}, point{0.9, 0.01}, point{0.9, 1})}, topLeft},
		// A diagonal through the top-right box with both ends outside it.
		{"a line crossing a corner", []shape{line(point{0.6, 1.2}, point{1.2, 0.6})}, topLeft},
		{"a line passing a corner", []shape{line(point{0.5, 1.1}, point{0.65, 0.95}), line(point{0, 0.5}, point{1, 0.5})}, topRight},
		{"a single point in a corner", []shape{line(point{0.9, 0.9})}, topLeft},
	} {
		if got := chooseLegend(c.shapes, w, h); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
	if got := chooseLegend(nil, 0.6, 0.1); got != outside {
		t.Errorf("a legend wider than half the plot: %v", got)
	}
}

// The figures place their legends from their data: a CDF that rises at
// once and runs along the top puts it bottom right; bars up to the top at
// both ends of the axis put it beside the plot, which widens the image by
// the legend's width.
func TestFigureLegends(t *testing.T) {
	early := cdfSteps([]workload.Bucket{{Value: 10, Count: 90}, {Value: 11, Count: 9}, {Value: 500, Count: 1}})
	late := cdfSteps([]workload.Bucket{{Value: 10, Count: 1}, {Value: 400, Count: 9}, {Value: 500, Count: 90}})
	for _, c := range []struct {
		lines []plotter.XYs
		want  place
	}{
		{[]plotter.XYs{early, early}, bottomRight},
		{[]plotter.XYs{late}, topLeft},
	} {
		p, err := CDFPlot("cdf", "t", "", "usec", []string{"tip", "v"}, c.lines)
		if err != nil {
			t.Fatal(err)
		}
		if p.legend != c.want {
			t.Errorf("CDF legend %v, want %v", p.legend, c.want)
		}
	}

	cell := func(v float64) compare.Cell {
		return compare.Cell{Center: v, Lo: v * 0.99, Hi: v * 1.01, Values: []float64{v, v}}
	}
	tb := &compare.Table{Command: "x", Machine: "m", Kernel: "k", Variants: []string{"tip", "a-long-variant-name"},
		Loads: []string{"1", "2"}, Metric: compare.Metric("time_s"), Stat: compare.AMean,
		Cells: [][]compare.Cell{{cell(10), cell(10)}, {cell(10), cell(10)}}}
	p, err := BarPlot("bars", tb)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(p.PNG))
	if err != nil {
		t.Fatal(err)
	}
	plotPx := int(math.Round((140 * vg.Millimeter).Dots(96)))
	if p.legend != outside || img.Bounds().Dx() <= plotPx+40 {
		t.Errorf("bars to the top: legend %v, image %d px wide (plot %d)", p.legend, img.Bounds().Dx(), plotPx)
	}
	tb.Cells[1][0], tb.Cells[1][1] = cell(2), cell(2)
	if p, _ := BarPlot("bars", tb); p.legend != topRight {
		t.Errorf("short bars on the right: legend %v", p.legend)
	}
}
