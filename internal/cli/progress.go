package cli

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/schedlab/schedlab/internal/experiment"
)

// ProgressEnv is the environment variable that turns progress lines on
// where stderr is not a terminal (Slurm and CI logs), as --progress does.
const ProgressEnv = "SCHEDLAB_PROGRESS"

// progressLineEvery is how often progress lines are written to a log.
const progressLineEvery = 5 * time.Second

const progressWidth = 40

// progress shows how far a run or a sweep has come, on stderr only, never
// in the tool's own output. On a terminal it draws a bar, once a run has
// taken more than a second, redrawn at most ten times a second; with
// --progress (or SCHEDLAB_PROGRESS=1) it writes a line every five seconds
// for logs. Otherwise it is silent.
type progress struct {
	w     io.Writer
	bar   bool
	lines bool
	start time.Time
	last  time.Time
	drawn bool
	now   func() time.Time
}

func newProgress(env *Env) *progress {
	return &progress{w: env.Stderr, bar: env.Terminal, lines: env.ProgressLines && !env.Terminal, start: time.Now(), now: time.Now}
}

// on reports whether progress is shown at all.
func (p *progress) on() bool { return p.bar || p.lines }

// header says what runs (machine, kernel, variant, seed) when progress is
// shown.
func (p *progress) header(format string, args ...any) {
	if p.on() {
		fmt.Fprintf(p.w, "schedlab: "+format+"\n", args...)
	}
}

// due reports whether it is time to draw again, and marks it drawn.
func (p *progress) due(final bool) bool {
	now := p.now()
	switch {
	case p.bar:
		if now.Sub(p.start) < time.Second || (!final && now.Sub(p.last) < 100*time.Millisecond) {
			return false
		}
	case p.lines:
		if now.Sub(p.last) < progressLineEvery && !(final && now.Sub(p.start) >= progressLineEvery) {
			return false
		}
		if p.last.IsZero() && now.Sub(p.start) < progressLineEvery {
			return false
		}
	default:
		return false
	}
	p.last = now
	return true
}

// run shows the fraction of one benchmark done.
func (p *progress) run(frac float64) {
	if !p.due(false) {
		return
	}
	frac = clamp01(frac)
	el := p.now().Sub(p.start)
	if p.lines {
		fmt.Fprintf(p.w, "schedlab: %3d%% after %s\n", int(frac*100), fmtDuration(el))
		return
	}
	filled := int(frac * progressWidth)
	fmt.Fprintf(p.w, "\r[%s%s] %3d%% %5.1fs", strings.Repeat("#", filled), strings.Repeat(".", progressWidth-filled), int(frac*100), el.Seconds())
	p.drawn = true
}

// sweep shows the runs of a sweep done, with an estimate of the rest.
func (p *progress) sweep(e experiment.Progress) {
	if !p.due(e.Done >= e.Todo) {
		return
	}
	frac := 1.0
	if e.Todo > 0 {
		frac = float64(e.Done) / float64(e.Todo)
	}
	eta := "?"
	if e.Done > 0 {
		eta = fmtDuration(time.Duration(float64(e.Elapsed) / float64(e.Done) * float64(e.Todo-e.Done)))
	}
	skipped := ""
	if e.MaxTodo > e.Todo {
		skipped = fmt.Sprintf(" (at most %d)", e.MaxTodo)
	}
	if e.Skipped > 0 {
		skipped += fmt.Sprintf(" (+%d done before)", e.Skipped)
	}
	if p.lines {
		fmt.Fprintf(p.w, "schedlab: %d/%d runs%s %3d%% after %s, ETA %s\n", e.Done, e.Todo, skipped, int(frac*100), fmtDuration(e.Elapsed), eta)
		return
	}
	filled := int(frac * progressWidth)
	fmt.Fprintf(p.w, "\r\033[K[%s%s] %d/%d runs%s %3d%%  %s, ETA %s",
		strings.Repeat("#", filled), strings.Repeat(".", progressWidth-filled), e.Done, e.Todo, skipped,
		int(frac*100), fmtDuration(e.Elapsed), eta)
	p.drawn = true
}

// clear erases the bar.
func (p *progress) clear() {
	if p.drawn {
		fmt.Fprint(p.w, "\r\033[K")
		p.drawn = false
	}
}

func clamp01(f float64) float64 {
	if f < 0 {
		return 0
	}
	if f > 1 {
		return 1
	}
	return f
}
