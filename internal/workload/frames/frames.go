// Package frames models Android-style frame rendering with apps that move
// between cgroups (schedlab run frames; docs/workloads.md): the workload
// for which the v4.10 task-group propagation series matters, because
// Android moves an app's threads between cpu cgroups when it comes to the
// front or leaves it.
//
// Each app has a UI thread and a RenderThread, threads of one process.
// The front app draws a frame at every vsync (refresh rate 60, 90 or
// 120 Hz; vsync n is at n·10⁹/Hz ns): its UI thread wakes at the vsync,
// runs its part of the frame, hands the frame to the RenderThread (a futex
// wake) and waits for the next vsync; the RenderThread runs its part (the
// GPU submission modelled as CPU work) and the frame ends when it is done.
// The frame time runs from the vsync that started the frame to the
// RenderThread's completion; the frame misses its deadline ("janky") when
// it ends after the next vsync, one period after its start. A UI thread
// still busy at a vsync skips it (Choreographer's skipped frames): it
// draws at the first vsync after its work, and the skipped vsyncs are
// counted. The RenderThread takes frames in order.
//
// Work is drawn per frame from the app's own random stream: UI and
// RenderThread work are normal with the given mean and standard
// deviation, cut below at a tenth of the mean, in µs at capacity 1024 and
// the maximum frequency (sched.Run), so a frame takes longer on a slower
// CPU and at a lower schedutil frequency. A frame is heavy with the given
// probability (both parts times the heavy multiplier), and the first
// launch frames after an app comes to the front are times the launch
// multiplier instead (an app launch's first frames).
//
// Cgroups as Android's cpuctl hierarchy (cgroup v1) has them, under the
// root: top-app and foreground with cpu.shares 1024 and background with
// 52 (AOSP init.rc: "write /dev/cpuctl/bg_non_interactive/cpu.shares 52",
// commented "5.0 %"; top-app and foreground are [assumed] at the default
// 1024). The front app's threads are in top-app, the other apps' in
// background. Every switch period an ActivityManager thread (in
// foreground) does 500 µs of work and moves the next app's threads from
// background to top-app (Kernel.MoveTask, core.c:sched_move_task) right
// before its launch frames, and the old front app's threads to
// background, where they wait until they are the front app again.
// Background work is CPU-bound tasks and periodic tasks in the background
// group.
package frames

import (
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"sort"

	"github.com/schedlab/schedlab/internal/costmodel"
	"github.com/schedlab/schedlab/internal/engine"
	"github.com/schedlab/schedlab/internal/sched"
	"github.com/schedlab/schedlab/internal/workload"
	"github.com/schedlab/schedlab/internal/workload/kobj"
)

// Config is a parsed frames command line.
type Config struct {
	Refresh      int     // -r, Hz
	Duration     float64 // -d, seconds (when Frames is 0)
	Frames       int     // -n, frames to complete; 0: run Duration
	Apps         int     // -a
	SwitchMs     int     // -s; 0: the front app never changes
	UIUs         float64 // --ui-us, mean µs at max capacity
	UISpread     float64 // --ui-spread, standard deviation µs
	RenderUs     float64 // --render-us
	RenderSpread float64 // --render-spread
	HeavyPct     float64 // --heavy-pct, percent of frames
	HeavyMult    float64 // --heavy-mult
	LaunchFrames int     // --launch-frames
	LaunchMult   float64 // --launch-mult
	BgHogs       int     // -b
	BgPeriodic   int     // -p
	BgRunUs      float64 // --bg-run-us
	BgPeriodMs   float64 // --bg-period-ms
	Costs        costmodel.Syscalls
}

// DefaultConfig is the defaults of Usage.
func DefaultConfig() Config {
	return Config{Refresh: 60, Duration: 10, Apps: 3, SwitchMs: 2000,
		UIUs: 3000, UISpread: 1000, RenderUs: 4000, RenderSpread: 1000,
		HeavyPct: 5, HeavyMult: 3, LaunchFrames: 10, LaunchMult: 4,
		BgPeriodic: 4, BgRunUs: 1000, BgPeriodMs: 20,
		Costs: costmodel.DefaultSyscalls()}
}

// cpu.shares of Android's groups (see the package doc for the source).
const (
	TopAppShares     = 1024
	ForegroundShares = 1024
	BackgroundShares = 52
)

// amWork is the ActivityManager's work at a switch ([assumed]).
const amWork = 500 * engine.Microsecond

// hogSlice is the length of one operation of a CPU-bound task.
const hogSlice = 10 * engine.Millisecond

// Bench is one frames run.
type Bench struct {
	cfg  Config
	k    *sched.Kernel
	done bool
	end  engine.Time // the duration's end (0 with -n)

	TopApp, Foreground, Background *sched.TaskGroup
	Apps                           []*App
	front                          int

	frameNs    []engine.Time // frame times, in completion order
	janky      int
	skipped    int64
	workFrames engine.Time // work of the completed frames
	workBg     engine.Time // work the background tasks completed
	switches   int
	moves      int

	// OnMove, when set, is called right before (done false) and right
	// after (done true) each task's move between groups; tests read the
	// PELT signals there.
	OnMove func(k *sched.Kernel, p *sched.Task, to *sched.TaskGroup, done bool)
}

// App is one app: its threads, whether it is in front, its frame stream.
type App struct {
	b          *Bench
	ID         int
	Front      bool
	sinceFront int
	UI         *sched.Task
	Render     *sched.Task
	ui         *uiThread
	rt         *renderThread
	wake       kobj.Futex // the UI thread waits here while in background
	rnd        *rand.Rand
}

// New returns a run for cfg.
func New(cfg Config) *Bench { return &Bench{cfg: cfg} }

// SetCosts sets the system-call costs (workload.CostAware).
func (b *Bench) SetCosts(c costmodel.Syscalls) { b.cfg.Costs = c }

// vsync is the time of vsync n.
func (b *Bench) vsync(n int64) engine.Time {
	return engine.Time(n * int64(engine.Second) / int64(b.cfg.Refresh))
}

// nextVsync is the first vsync after now.
func (b *Bench) nextVsync(now engine.Time) int64 {
	n := int64(now) * int64(b.cfg.Refresh) / int64(engine.Second)
	for b.vsync(n) <= now {
		n++
	}
	return n
}

// Start creates the groups, the apps (app 0 in front), the background
// tasks and the ActivityManager, all forked from CPU 0.
func (b *Bench) Start(k *sched.Kernel) error {
	b.k = k
	var err error
	mk := func(name string, shares uint64) *sched.TaskGroup {
		if err != nil {
			return nil
		}
		var g *sched.TaskGroup
		if g, err = k.CreateGroup(nil, name, 100); err == nil {
			err = k.SetGroupShares(g, shares)
		}
		return g
	}
	b.TopApp = mk("top-app", TopAppShares)
	b.Foreground = mk("foreground", ForegroundShares)
	b.Background = mk("background", BackgroundShares)
	if err != nil {
		return fmt.Errorf("frames: %v", err)
	}
	for i := 0; i < b.cfg.Apps; i++ {
		a := &App{b: b, ID: i, Front: i == 0, rnd: k.Eng.Rand(fmt.Sprintf("frames/app%d", i))}
		a.ui = &uiThread{a: a}
		a.rt = &renderThread{a: a}
		g := b.Background
		if a.Front {
			g = b.TopApp
		}
		mm := int64(i + 1) // the threads of one process share its address space
		if a.UI, err = k.Fork(sched.TaskSpec{Comm: fmt.Sprintf("app%d.ui", i), Group: g, Prog: a.ui, MM: mm}); err != nil {
			return err
		}
		if a.Render, err = k.Fork(sched.TaskSpec{Comm: fmt.Sprintf("app%d.render", i), Group: g, Prog: a.rt, MM: mm}); err != nil {
			return err
		}
		b.Apps = append(b.Apps, a)
	}
	for i := 0; i < b.cfg.BgHogs; i++ {
		if _, err := k.Fork(sched.TaskSpec{Comm: fmt.Sprintf("bg-hog%d", i), Group: b.Background, Prog: &hog{b: b}}); err != nil {
			return err
		}
	}
	rnd := k.Eng.Rand("frames/background")
	for i := 0; i < b.cfg.BgPeriodic; i++ {
		period := engine.Time(b.cfg.BgPeriodMs * float64(engine.Millisecond))
		p := &periodic{b: b, period: period, run: engine.Time(b.cfg.BgRunUs * float64(engine.Microsecond)),
			next: engine.Time(rnd.Int64N(int64(period)))}
		if _, err := k.Fork(sched.TaskSpec{Comm: fmt.Sprintf("bg-periodic%d", i), Group: b.Background, Prog: p}); err != nil {
			return err
		}
	}
	if b.cfg.SwitchMs > 0 && b.cfg.Apps > 1 {
		if _, err := k.Fork(sched.TaskSpec{Comm: "ActivityManager", Group: b.Foreground, Prog: &activityManager{b: b}}); err != nil {
			return err
		}
	}
	if b.cfg.Frames == 0 {
		b.end = engine.Time(b.cfg.Duration * float64(engine.Second))
		k.Eng.Schedule(engine.NewTimer("frames-duration", b.finish), b.end)
	}
	return nil
}

func (b *Bench) finish() {
	if b.done {
		return
	}
	b.done = true
	b.k.Eng.Stop()
}

// Done reports whether the duration has passed or the frames are drawn.
func (b *Bench) Done() bool { return b.done }

// Progress is the fraction of the duration or of the frames done.
func (b *Bench) Progress() float64 {
	if b.k == nil {
		return 0
	}
	if b.cfg.Frames > 0 {
		return float64(len(b.frameNs)) / float64(b.cfg.Frames)
	}
	return float64(b.k.Now()) / float64(b.end)
}

// frameDone records a frame the RenderThread has finished.
func (b *Bench) frameDone(f *frame, now engine.Time) {
	b.frameNs = append(b.frameNs, now-f.vsync)
	if now > f.deadline {
		b.janky++
	}
	b.workFrames += f.uiWork + f.renderWork
	if b.cfg.Frames > 0 && len(b.frameNs) >= b.cfg.Frames {
		b.finish()
	}
}

// percentile is the nearest-rank percentile of sorted (0 when empty).
func percentile(sorted []engine.Time, p float64) engine.Time {
	if len(sorted) == 0 {
		return 0
	}
	i := int(math.Ceil(p/100*float64(len(sorted)))) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

type summary struct {
	frames             int
	p50, p90, p95, p99 float64 // ms
	janky              int
	jankyPct           float64
	workFrames, workBg float64 // ms
	skipped            int64
	switches, moves    int
}

func (b *Bench) summary() summary {
	sorted := append([]engine.Time(nil), b.frameNs...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i] < sorted[j] })
	ms := func(t engine.Time) float64 { return float64(t) / 1e6 }
	s := summary{frames: len(sorted), janky: b.janky, skipped: b.skipped, switches: b.switches, moves: b.moves,
		p50: ms(percentile(sorted, 50)), p90: ms(percentile(sorted, 90)),
		p95: ms(percentile(sorted, 95)), p99: ms(percentile(sorted, 99)),
		workFrames: ms(b.workFrames), workBg: ms(b.workBg)}
	if s.frames > 0 {
		s.jankyPct = 100 * float64(s.janky) / float64(s.frames)
	}
	return s
}

// Report writes the run's settings and the frame table.
func (b *Bench) Report(w io.Writer) error {
	c := &b.cfg
	s := b.summary()
	period := float64(engine.Second) / float64(c.Refresh) / 1e6
	fmt.Fprintf(w, "frames: %d Hz (deadline %.3f ms after the frame's vsync), %d apps, switch every %d ms\n", c.Refresh, period, c.Apps, c.SwitchMs)
	fmt.Fprintf(w, "work per frame (us at max capacity): ui %.0f+-%.0f, render %.0f+-%.0f; heavy %g%% x%g; launch %d frames x%g\n",
		c.UIUs, c.UISpread, c.RenderUs, c.RenderSpread, c.HeavyPct, c.HeavyMult, c.LaunchFrames, c.LaunchMult)
	fmt.Fprintf(w, "background: %d cpu-bound, %d periodic (%.0f us every %g ms); cpu.shares top-app %d foreground %d background %d\n\n",
		c.BgHogs, c.BgPeriodic, c.BgRunUs, c.BgPeriodMs, TopAppShares, ForegroundShares, BackgroundShares)
	rows := []struct {
		name, val string
	}{
		{"frames", fmt.Sprint(s.frames)},
		{"frame time p50 (ms)", fmt.Sprintf("%.3f", s.p50)},
		{"frame time p90 (ms)", fmt.Sprintf("%.3f", s.p90)},
		{"frame time p95 (ms)", fmt.Sprintf("%.3f", s.p95)},
		{"frame time p99 (ms)", fmt.Sprintf("%.3f", s.p99)},
		{"janky frames", fmt.Sprint(s.janky)},
		{"janky frames (%)", fmt.Sprintf("%.2f", s.jankyPct)},
		{"skipped vsyncs", fmt.Sprint(s.skipped)},
		{"app switches", fmt.Sprint(s.switches)},
		{"tasks moved", fmt.Sprint(s.moves)},
		{"frame work done (ms)", fmt.Sprintf("%.3f", s.workFrames)},
		{"background work done (ms)", fmt.Sprintf("%.3f", s.workBg)},
	}
	fmt.Fprintf(w, "%-28s %12s\n", "metric", "value")
	for _, r := range rows {
		fmt.Fprintf(w, "%-28s %12s\n", r.name, r.val)
	}
	return nil
}

// Metrics are the frame count, the frame-time percentiles, the missed
// share and the work done.
func (b *Bench) Metrics() workload.Metrics {
	s := b.summary()
	return []workload.Metric{
		// Frames drawn in the duration: more is better (fewer skipped).
		{Name: "frames", Value: float64(s.frames), Better: workload.HigherIsBetter},
		{Name: "frame_ms.p50", Value: s.p50, Better: workload.LowerIsBetter},
		{Name: "frame_ms.p90", Value: s.p90, Better: workload.LowerIsBetter},
		{Name: "frame_ms.p95", Value: s.p95, Better: workload.LowerIsBetter},
		{Name: "frame_ms.p99", Value: s.p99, Better: workload.LowerIsBetter},
		{Name: "janky_pct", Value: s.jankyPct, Better: workload.LowerIsBetter},
		{Name: "janky_frames", Value: float64(s.janky), Better: workload.LowerIsBetter},
		{Name: "skipped_vsyncs", Value: float64(s.skipped), Better: workload.LowerIsBetter},
		{Name: "work_ms.frames", Value: s.workFrames, Better: workload.HigherIsBetter},
		{Name: "work_ms.background", Value: s.workBg, Better: workload.HigherIsBetter},
	}
}

// FrameTimes returns the frame times in completion order.
func (b *Bench) FrameTimes() []engine.Time { return b.frameNs }

// ---- apps -----------------------------------------------------------------

// frame is one frame in flight.
type frame struct {
	vsync, deadline    engine.Time
	uiWork, renderWork engine.Time
}

// draw returns the next frame's UI and RenderThread work. Every frame
// takes three draws from the app's stream, whatever its kind, so that the
// same seed gives the same frames under any scheduler setting.
func (a *App) draw() (ui, render engine.Time) {
	c := &a.b.cfg
	u, zu, zr := a.rnd.Float64(), a.rnd.NormFloat64(), a.rnd.NormFloat64()
	mult := 1.0
	switch {
	case a.sinceFront < c.LaunchFrames:
		mult = c.LaunchMult
	case u*100 < c.HeavyPct:
		mult = c.HeavyMult
	}
	a.sinceFront++
	work := func(mean, sd, z float64) engine.Time {
		us := max(mean+sd*z, mean/10) * mult
		return engine.Time(us * float64(engine.Microsecond))
	}
	return work(c.UIUs, c.UISpread, zu), work(c.RenderUs, c.RenderSpread, zr)
}

// uiThread is an app's main thread: Choreographer's doFrame at each vsync.
type uiThread struct {
	a     *App
	state int
	vsync int64 // the vsync of the frame being drawn
	last  int64 // the last vsync drawn since the app came to the front (-1: none)
	f     frame
}

const (
	uiTop = iota
	uiDraw
	uiHandOff
)

func (u *uiThread) Next(k *sched.Kernel, t *sched.Task) sched.Op {
	a, b := u.a, u.a.b
	for {
		if b.done {
			return sched.Block()
		}
		switch u.state {
		case uiTop:
			if !a.Front {
				// Not in front: wait until the ActivityManager
				// brings the app back.
				u.last = -1
				k.Charge(sched.CostSyscall, b.cfg.Costs.Futex)
				a.wake.Wait(t, a.wake.Val)
				return sched.Block()
			}
			n := b.nextVsync(k.Now())
			if u.last >= 0 && n > u.last+1 {
				b.skipped += n - u.last - 1
			}
			u.vsync = n
			u.state = uiDraw
			return sched.Sleep(b.vsync(n) - k.Now())
		case uiDraw:
			if !a.Front {
				u.state = uiTop
				continue
			}
			ui, render := a.draw()
			u.last = u.vsync
			u.f = frame{vsync: b.vsync(u.vsync), deadline: b.vsync(u.vsync + 1), uiWork: ui, renderWork: render}
			u.state = uiHandOff
			return sched.Run(ui)
		case uiHandOff:
			rt := a.rt
			rt.queue = append(rt.queue, u.f)
			if rt.futex.Waiters() > 0 {
				k.Charge(sched.CostSyscall, b.cfg.Costs.Futex)
				rt.futex.Wake(k, 1)
			}
			u.state = uiTop
		}
	}
}

// renderThread is an app's RenderThread: it draws the frames the UI
// thread hands it, in order.
type renderThread struct {
	a     *App
	queue []frame
	cur   frame
	busy  bool
	futex kobj.Futex
}

func (r *renderThread) Next(k *sched.Kernel, t *sched.Task) sched.Op {
	b := r.a.b
	if r.busy {
		r.busy = false
		b.frameDone(&r.cur, k.Now())
	}
	if b.done {
		return sched.Block()
	}
	if len(r.queue) == 0 {
		k.Charge(sched.CostSyscall, b.cfg.Costs.Futex)
		r.futex.Wait(t, r.futex.Val)
		return sched.Block()
	}
	r.cur = r.queue[0]
	r.queue = r.queue[1:]
	r.busy = true
	return sched.Run(r.cur.renderWork)
}

// activityManager changes the front app every switch period.
type activityManager struct {
	b       *Bench
	n       int // switches done
	working bool
}

func (m *activityManager) Next(k *sched.Kernel, t *sched.Task) sched.Op {
	b := m.b
	if b.done {
		return sched.Block()
	}
	if m.working {
		m.working = false
		b.switchFront(k)
	}
	next := engine.Time(m.n+1) * engine.Time(b.cfg.SwitchMs) * engine.Millisecond
	if k.Now() < next {
		return sched.Sleep(next - k.Now())
	}
	m.n++
	m.working = true
	return sched.Run(amWork)
}

// switchFront moves the next app to the front: its threads from
// background to top-app, then the old front app's threads to background
// (ActivityManager's setProcessGroup, a write of each thread's id to the
// group's tasks file).
func (b *Bench) switchFront(k *sched.Kernel) {
	old := b.Apps[b.front]
	b.front = (b.front + 1) % len(b.Apps)
	app := b.Apps[b.front]
	for _, p := range []*sched.Task{app.UI, app.Render} {
		b.move(k, p, b.TopApp)
	}
	app.Front = true
	app.sinceFront = 0
	app.wake.Val++
	app.wake.Wake(k, 1)
	old.Front = false
	for _, p := range []*sched.Task{old.UI, old.Render} {
		b.move(k, p, b.Background)
	}
	b.switches++
}

func (b *Bench) move(k *sched.Kernel, p *sched.Task, to *sched.TaskGroup) {
	if b.OnMove != nil {
		b.OnMove(k, p, to, false)
	}
	k.MoveTask(p, to)
	b.moves++
	if b.OnMove != nil {
		b.OnMove(k, p, to, true)
	}
}

// ---- background -----------------------------------------------------------

// hog is a CPU-bound background task.
type hog struct {
	b       *Bench
	started bool
}

func (h *hog) Next(k *sched.Kernel, t *sched.Task) sched.Op {
	if h.started {
		h.b.workBg += hogSlice
	}
	h.started = true
	if h.b.done {
		return sched.Block()
	}
	return sched.Run(hogSlice)
}

// periodic is a background task that runs run every period (an absolute
// timer from a random phase; a late start skips the missed periods).
type periodic struct {
	b           *Bench
	period, run engine.Time
	next        engine.Time
	running     bool
}

func (p *periodic) Next(k *sched.Kernel, t *sched.Task) sched.Op {
	if p.running {
		p.running = false
		p.b.workBg += p.run
		p.next += p.period
		for p.next < k.Now() {
			p.next += p.period
		}
	}
	if p.b.done {
		return sched.Block()
	}
	if k.Now() < p.next {
		return sched.Sleep(p.next - k.Now())
	}
	p.running = true
	return sched.Run(p.run)
}
