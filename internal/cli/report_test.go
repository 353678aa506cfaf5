package cli

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/schedlab/schedlab/internal/experiment"
	"github.com/schedlab/schedlab/internal/report"
	"github.com/schedlab/schedlab/internal/testutil"
)

const reportExperiment = `name: reportme
machines: [hikey]
variants: [short-task-v3, short-task-v4]
runs: 2
trace: true
workloads:
  - hackbench -p -T -l 20 -g 1,2
  - schbench -m 1 -t 2,3 -r 1
`

var figureRE = regexp.MustCompile(`<figure class="plot" data-kind="(\w+)"[^>]*><img src="data:image/(svg|png)`)

// The report is one self-contained HTML file with the expected plots:
// one bar chart per table, one latency CDF per schbench load (drawn from
// the runs' histograms, every sample of the load's runs pooled), one heat
// map with its colour scale per variant at each workload's last load;
// --plots-dir writes them as files. Where Debian's chromium is installed,
// a headless screenshot of the whole page must not be blank and must show
// every heat map's colour scale.
func TestReport(t *testing.T) {
	tmp := t.TempDir()
	spec := filepath.Join(tmp, "reportme.yaml")
	writeFile(t, spec, reportExperiment)
	out := filepath.Join(tmp, "out")
	if _, errOut, code := runMain(t, "sweep", spec, "--out", out, "--jobs", "2"); code != 0 {
		t.Fatalf("sweep: %s", errOut)
	}
	html, plots := filepath.Join(tmp, "report.html"), filepath.Join(tmp, "plots")
	_, errOut, code := runMain(t, "report", out, "-o", html, "--plots-dir", plots)
	if code != 0 {
		t.Fatalf("report: %s", errOut)
	}
	data, err := os.ReadFile(html)
	if err != nil {
		t.Fatal(err)
	}
	page := string(data)
	kinds := map[string]int{}
	for _, m := range figureRE.FindAllStringSubmatch(page, -1) {
		kinds[m[1]]++
	}
	// 2 tables (hackbench time, schbench p99), 2 schbench loads, 3
	// variants x 2 workloads traced at their last load.
	if kinds["bars"] != 2 || kinds["cdf"] != 2 || kinds["heatmap"] != 6 || strings.Count(page, "<figure") != 10 {
		t.Errorf("figures %v", kinds)
	}
	for _, bad := range []string{"http://", "https://", "<script", "<link", "ZgotmplZ"} {
		if strings.Contains(page, bad) && !strings.Contains(page, "http://www.w3.org") {
			t.Errorf("report contains %q", bad)
		}
	}
	if !strings.Contains(page, "<td class=") && !strings.Contains(page, "~</td>") {
		t.Error("no comparison cells")
	}
	if !strings.Contains(page, "<summary>hackbench groups=2 on hikey, kernel v6.0</summary>") {
		t.Error("no schedstat comparison")
	}
	if n := strings.Count(page, `data-kind="heatmap" data-scale="busy 0-100%"`); n != 6 {
		t.Errorf("%d heat maps say they have a colour scale", n)
	}
	// Each CDF pools the samples of its load's runs.
	res, err := experiment.ReadResults(out)
	if err != nil {
		t.Fatal(err)
	}
	samples := map[string]float64{}
	for _, r := range res.Found() {
		if r.Workload.Name == "schbench" {
			n, _ := r.Metrics.Get("samples")
			samples[r.Param.Value] += n
		}
	}
	for _, load := range []string{"2", "3"} {
		want := fmt.Sprintf("schbench workers=%s on hikey, kernel v6.0: latency_us distribution: from schbench&#39;s latency histogram, each variant&#39;s runs pooled (%.0f samples in all)", load, samples[load])
		if samples[load] == 0 || !strings.Contains(page, want) {
			t.Errorf("no CDF caption %q", want)
		}
	}
	files, _ := filepath.Glob(filepath.Join(plots, "*"))
	var svg, pngs int
	for _, f := range files {
		switch filepath.Ext(f) {
		case ".svg":
			svg++
		case ".png":
			pngs++
		}
	}
	if svg != 4 || pngs != 10 {
		t.Errorf("plots dir: %d svg, %d png", svg, pngs)
	}

	chromium := testutil.NeedTool(t, "chromium")
	shot := filepath.Join(tmp, "shot.png")
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
		"--disable-component-update", "--disable-sync", "--no-first-run", "--disable-dev-shm-usage",
		"--user-data-dir="+filepath.Join(tmp, "chromium"), "--screenshot="+shot, "--window-size=1200,4500", "file://"+html)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium: %v\n%s", err, stderr.String())
	}
	f, err := os.Open(shot)
	if err != nil {
		t.Fatalf("no screenshot: %v\n%s", err, stderr.String())
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	dark, colored := inkFraction(img)
	// Text, tables and plots: a blank or failed page is all white.
	if dark < 0.005 || colored < 0.01 {
		t.Errorf("screenshot looks blank: %.4f dark, %.4f coloured pixels", dark, colored)
	}
	// The window holds the whole page: its last 200 rows are blank.
	if d, c := inkFraction(img.(interface {
		SubImage(image.Rectangle) image.Image
	}).SubImage(image.Rect(0, img.Bounds().Max.Y-200, img.Bounds().Max.X, img.Bounds().Max.Y))); d+c > 0 {
		t.Errorf("the page runs to the bottom of the screenshot")
	}
	// Every heat map is on the page with its colour scale, which the
	// browser draws at least 100 pixels tall.
	scales := report.FindBusyScales(img)
	if len(scales) != kinds["heatmap"] {
		t.Errorf("%d colour scales in the screenshot, for %d heat maps: %v", len(scales), kinds["heatmap"], scales)
	}
	for _, s := range scales {
		if s.Dy() < 100 || s.Dx() < 8 {
			t.Errorf("colour scale %v", s)
		}
	}
}

// inkFraction is the fraction of dark pixels (text, axes) and of
// saturated ones (bars, heat maps) in img.
func inkFraction(img image.Image) (dark, colored float64) {
	b := img.Bounds()
	var nd, nc, n int
	for y := b.Min.Y; y < b.Max.Y; y += 2 {
		for x := b.Min.X; x < b.Max.X; x += 2 {
			r, g, bl, _ := img.At(x, y).RGBA()
			r, g, bl = r>>8, g>>8, bl>>8
			n++
			if r+g+bl < 200 {
				nd++
			}
			mx, mn := max(r, g, bl), min(r, g, bl)
			if mx-mn > 60 {
				nc++
			}
		}
	}
	return float64(nd) / float64(n), float64(nc) / float64(n)
}
