package report

import (
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// A legend goes where it hides no data: into the first corner of the
// plotting area, in the order of legendCorners, that no line, bar or
// error bar enters, or else beside the plot, right of it.

// place is where a legend goes.
type place int

const (
	topLeft place = iota
	topRight
	bottomRight
	bottomLeft
	outside // right of the plotting area
)

func (p place) String() string {
	return [...]string{"top left", "top right", "bottom right", "bottom left", "outside"}[p]
}

// legendCorners is the order in which corners are tried.
var legendCorners = []place{topRight, topLeft, bottomRight, bottomLeft}

// box is a rectangle in the plotting area's unit square: x and y from 0
// (left, bottom) to 1 (right, top).
type box struct{ x0, y0, x1, y1 float64 }

// shape is data in the unit square: a polyline, or a filled rectangle.
type shape struct {
	line []point // a polyline; nil for a rectangle
	rect box
}

type point struct{ x, y float64 }

// chooseLegend is the first corner of legendCorners where a box of w × h
// (fractions of the plotting area) meets none of the shapes; outside if
// there is none or the box is larger than half the area either way.
func chooseLegend(shapes []shape, w, h float64) place {
	if w > 0.5 || h > 0.5 {
		return outside
	}
	for _, c := range legendCorners {
		b := cornerBox(c, w, h)
		free := true
		for _, s := range shapes {
			if s.meets(b) {
				free = false
				break
			}
		}
		if free {
			return c
		}
	}
	return outside
}

func cornerBox(c place, w, h float64) box {
	switch c {
	case topLeft:
		return box{0, 1 - h, w, 1}
	case topRight:
		return box{1 - w, 1 - h, 1, 1}
	case bottomRight:
		return box{1 - w, 0, 1, h}
	default:
		return box{0, 0, w, h}
	}
}

// meets reports whether s has a point in b (edges included).
func (s shape) meets(b box) bool {
	if s.line == nil {
		r := s.rect
		return r.x0 <= b.x1 && b.x0 <= r.x1 && r.y0 <= b.y1 && b.y0 <= r.y1
	}
	if len(s.line) == 1 {
		p := s.line[0]
		return p.x >= b.x0 && p.x <= b.x1 && p.y >= b.y0 && p.y <= b.y1
	}
	for i := 1; i < len(s.line); i++ {
		if segmentMeets(s.line[i-1], s.line[i], b) {
			return true
		}
	}
	return false
}

// segmentMeets reports whether the segment p–q has a point in b: the
// segment clipped to b's slab in x, then in y (Liang–Barsky), is not
// empty.
func segmentMeets(p, q point, b box) bool {
	t0, t1 := 0.0, 1.0
	clip := func(d, lo, hi, at float64) bool {
		// p + t·d within [lo, hi] along one axis.
		if d == 0 {
			return at >= lo && at <= hi
		}
		ta, tb := (lo-at)/d, (hi-at)/d
		if ta > tb {
			ta, tb = tb, ta
		}
		t0, t1 = max(t0, ta), min(t1, tb)
		return t0 <= t1
	}
	return clip(q.x-p.x, b.x0, b.x1, p.x) && clip(q.y-p.y, b.y0, b.y1, p.y)
}

// legendMargin is the gap between a legend and the plotting area's edge.
const legendMargin = 2 * vg.Millimeter

// legendBox is a legend's size in the unit square of a plotting area.
func legendBox(lg *plot.Legend, area draw.Canvas) (w, h float64) {
	sz := lg.Rectangle(area).Size()
	aw, ah := area.Max.X-area.Min.X, area.Max.Y-area.Min.Y
	if aw <= 0 || ah <= 0 {
		return 1, 1
	}
	return float64(sz.X+2*legendMargin) / float64(aw), float64(sz.Y+2*legendMargin) / float64(ah)
}

// drawLegend draws lg in corner c of the plotting area, or, for outside,
// at the top of side (a strip right of the plot).
func drawLegend(lg *plot.Legend, c place, area, side draw.Canvas) {
	sz := lg.Rectangle(area).Size()
	lg.Top, lg.Left = true, true
	r := vg.Rectangle{}
	switch c {
	case topLeft, bottomLeft:
		r.Min.X = area.Min.X + legendMargin
	case topRight, bottomRight:
		r.Min.X = area.Max.X - legendMargin - sz.X
	case outside:
		r.Min.X = side.Min.X + legendMargin
	}
	switch c {
	case topLeft, topRight, outside:
		r.Max.Y = area.Max.Y - legendMargin
	default:
		r.Max.Y = area.Min.Y + legendMargin + sz.Y
	}
	r.Max.X, r.Min.Y = r.Min.X+sz.X, r.Max.Y-sz.Y
	lg.Draw(draw.Canvas{Canvas: area.Canvas, Rectangle: r})
}
