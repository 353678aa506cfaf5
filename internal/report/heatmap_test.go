package report

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"math"
	"testing"

	"github.com/schedlab/schedlab/internal/experiment"
)

// A heat map's PNG has its colour scale right of the plot: one bar as
// tall as the plotting area going from idle (white, bottom) to busy (dark
// blue, top), with labels at 0%, 25%, 50%, 75% and 100% and none between.
// The bins are drawn in the scale's colours: a CPU busy half of every bin
// is the colour halfway up the scale.
func TestHeatmapScale(t *testing.T) {
	const bins = 16
	o := &experiment.Occupancy{BinNs: 1e6, EndNs: bins * 1e6, CPUs: make([][]byte, 4)}
	for c := range o.CPUs {
		o.CPUs[c] = make([]byte, bins)
		for b := range bins {
			switch c {
			case 0:
				o.CPUs[c][b] = 255
			case 2:
				o.CPUs[c][b] = byte(255 * (b % 2))
			case 3:
				o.CPUs[c][b] = 128
			}
		}
	}
	p, err := HeatmapPlot("h", "short", "title", o)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(p.PNG))
	if err != nil {
		t.Fatal(err)
	}
	plotPx := int(math.Round(heatWidth.Dots(96)))
	scales := FindBusyScales(img)
	if len(scales) != 1 {
		t.Fatalf("%d colour scales %v in a %v image", len(scales), scales, img.Bounds())
	}
	s := scales[0]
	if s.Min.X < plotPx || s.Dy() < img.Bounds().Dy()/2 || s.Dx() < 10 {
		t.Fatalf("the scale is at %v in a %v image whose plot is %d px wide", s, img.Bounds(), plotPx)
	}
	ink := func(y int) bool { // a label's dark pixels right of the bar, at y
		for yy := y - 2; yy <= y+2; yy++ {
			for x := s.Max.X + 3; x < min(s.Max.X+60, img.Bounds().Max.X); x++ {
				if r, g, b, _ := img.At(x, yy).RGBA(); r>>8+g>>8+b>>8 < 250 {
					return true
				}
			}
		}
		return false
	}
	for i, f := range []float64{0, 0.125, 0.25, 0.375, 0.5, 0.625, 0.75, 0.875, 1} {
		y := s.Max.Y - 1 - int(math.Round(f*float64(s.Dy()-1)))
		if want := i%2 == 0; ink(y) != want {
			t.Errorf("label ink at %.1f%% of the scale: %v, want %v", f*100, ink(y), want)
		}
	}
	// The bins: CPU 3's row (busy 128/255 of every bin) is the colour the
	// scale has at 128/255, exactly, in a block as large as the row.
	half := busyColor(128.0 / 255)
	n := 0
	for y := 0; y < img.Bounds().Dy(); y++ {
		for x := 0; x < plotPx; x++ {
			if color.RGBAModel.Convert(img.At(x, y)).(color.RGBA) == half {
				n++
			}
		}
	}
	if n < 5000 {
		t.Errorf("%d pixels of the half-busy colour %v", n, half)
	}
}

// FindBusyScales finds a scale however it is scaled, and not in a heat
// map's bins, which change colour in steps.
func TestFindBusyScales(t *testing.T) {
	img := image.NewRGBA(image.Rect(0, 0, 100, 200))
	for y := range 200 {
		for x := range 100 {
			c := color.RGBA{0xff, 0xff, 0xff, 0xff}
			switch {
			case x >= 10 && x < 16 && y >= 20 && y < 180: // a scale
				c = busyColor(float64(179-y) / 159)
			case x >= 40 && x < 60 && y >= 20 && y < 180: // bins: 8 steps
				c = busyColor(float64(7-(y-20)/20) / 7)
			}
			img.SetRGBA(x, y, c)
		}
	}
	got := FindBusyScales(img)
	if len(got) != 1 || got[0] != image.Rect(10, 20, 16, 180) {
		t.Errorf("scales %v", got)
	}
}
