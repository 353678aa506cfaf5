package explain

import (
	"io"
	"math"
	"strings"
	"sync"
	"testing"

	"github.com/schedlab/schedlab/internal/engine"
	"github.com/schedlab/schedlab/internal/observe"
	"github.com/schedlab/schedlab/internal/sched"
	"github.com/schedlab/schedlab/internal/sim"
	"github.com/schedlab/schedlab/internal/topology"
	"github.com/schedlab/schedlab/internal/workload"
)

// pingPong is two tasks in strict ping-pong: each runs burst, wakes the
// other (a plain wakeup, not WF_SYNC) and blocks until woken. One round
// trip is a unit of work; its window is [0, end].
type pingPong struct {
	k      *sched.Kernel
	burst  engine.Time
	a, b   *sched.Task
	trips  int
	mark   func()
	end    engine.Time
	closed bool
}

func (pp *pingPong) WatchWindow(mark func()) { pp.mark = mark }

// The rest of workload.Instance: the test drives the kernel itself.
func (pp *pingPong) Start(*sched.Kernel) error { return nil }
func (pp *pingPong) Done() bool                { return false }
func (pp *pingPong) Progress() float64         { return 0 }
func (pp *pingPong) Report(io.Writer) error    { return nil }
func (pp *pingPong) Metrics() workload.Metrics { return nil }

func (pp *pingPong) MeasuredWindow() (workload.Window, bool) {
	return workload.Window{From: 0, To: pp.end, Work: float64(pp.trips), Unit: "trip"}, true
}

// player is one side: the first op of "a" is a burst, of "b" a block.
type player struct {
	pp    *pingPong
	first bool
	ran   bool
	other func() *sched.Task
}

func (p *player) Next(k *sched.Kernel, t *sched.Task) sched.Op {
	if p.pp.closed {
		return sched.Block()
	}
	if !p.ran {
		if !p.first {
			p.first = true
			return sched.Block()
		}
		p.ran = true
		return sched.Run(p.pp.burst)
	}
	p.ran = false
	if t == p.pp.a {
		p.pp.trips++
	}
	k.WakeUp(p.other(), 0)
	return sched.Block()
}

// runPingPong runs the ping-pong for d on the machine file with settings
// s, without the cost model, recorded by rec; it returns the kernel.
func runPingPong(t *testing.T, machine string, s sched.Settings, d engine.Time, rec *Recorder) *sched.Kernel {
	t.Helper()
	spec, err := topology.Load(machine)
	if err != nil {
		t.Fatal(err)
	}
	topo, err := topology.Build(spec, sched.TopologyOptions(s))
	if err != nil {
		t.Fatal(err)
	}
	k, err := sched.New(engine.New(1), topo, s)
	if err != nil {
		t.Fatal(err)
	}
	finish, err := rec.Attach(k)
	if err != nil {
		t.Fatal(err)
	}
	pp := &pingPong{k: k, burst: 50 * engine.Microsecond}
	rec.Watch(pp)
	pp.mark()
	pa := &player{pp: pp, first: true}
	pb := &player{pp: pp}
	pa.other = func() *sched.Task { return pp.b }
	pb.other = func() *sched.Task { return pp.a }
	if pp.a, err = k.Fork(sched.TaskSpec{Comm: "ping", CPU: 0, Prog: pa}); err != nil {
		t.Fatal(err)
	}
	if pp.b, err = k.Fork(sched.TaskSpec{Comm: "pong", CPU: 0, Prog: pb}); err != nil {
		t.Fatal(err)
	}
	k.Eng.RunUntil(d)
	pp.end = k.Now()
	pp.mark()
	if err := finish(); err != nil {
		t.Fatal(err)
	}
	return k
}

func baseline(t *testing.T) sched.Settings {
	s, err := sched.Baseline("v6.19")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestPingPongOneKindOfDecision: on one LLC of four idle CPUs, a
// ping-pong's wakeups find the wakee's prev idle. With WA_IDLE,
// wake_affine_idle returns prev (the waker's CPU runs the waker), and
// select_idle_sibling returns target = prev, idle. Without it
// (NO_WA_IDLE) wake_affine decides by weight or has no opinion; either
// way select_idle_sibling returns the same idle prev (as target, or as
// the cache-affine idle prev), so only the reason of the wakeups changes:
// the first divergence is the first wakeup, after the two forks, at the
// same time and CPU, and nothing else (forks, distances, times) differs.
// Reference: fair.c:wake_affine_idle, select_idle_sibling (v6.19).
func TestPingPongOneKindOfDecision(t *testing.T) {
	tip := baseline(t)
	other := tip
	if err := other.SetFeature("NO_WA_IDLE"); err != nil {
		t.Fatal(err)
	}
	cmp := NewComparer(5)
	var recs [2]*Recorder
	var ks [2]*sched.Kernel
	var wg sync.WaitGroup
	for i, s := range []sched.Settings{tip, other} {
		recs[i] = &Recorder{Stream: cmp.Sink(i), Close: cmp.Done(i)}
		wg.Add(1)
		go func(i int, s sched.Settings) {
			defer wg.Done()
			ks[i] = runPingPong(t, "testdata/quad.yaml", s, 20*engine.Millisecond, recs[i])
		}(i, s)
	}
	wg.Wait()
	d := cmp.Result()
	if d.Time != nil {
		t.Errorf("a decision at a different time, #%d: %+v / %+v; without the cost model nothing moves a time", d.Time.Index, *d.Time.Tip, *d.Time.Other)
	}
	p := d.Decision
	if p == nil || p.Tip == nil || p.Other == nil {
		t.Fatalf("no divergence: %+v", d)
	}
	if p.Index != 2 || len(d.Before) != 2 || d.Before[0].Tip.Kind != sched.DecisionFork || d.Before[1].Tip.Kind != sched.DecisionFork {
		t.Errorf("divergence at #%d after %v, want the first wakeup (#2) after the two forks", p.Index, d.Before)
	}
	x, y := p.Tip, p.Other
	if x.Kind != sched.DecisionWakeup || x.T != y.T || x.PID != y.PID || x.CPU != y.CPU || x.Prev != y.Prev || x.Chosen != y.Chosen {
		t.Fatalf("divergence %+v / %+v: want one wakeup, the same but for its reason", *x, *y)
	}
	if x.Reason != sched.ReasonTargetIdle || x.Affine != sched.AffineIdlePrev || x.Chosen != x.Prev {
		t.Errorf("tip's wakeup %+v: want target = prev idle by wake_affine_idle", *x)
	}
	if y.Affine != sched.AffineWeightThis && y.Affine != sched.AffinePrev {
		t.Errorf("NO_WA_IDLE's wakeup %+v: want wake_affine_weight's outcome", *y)
	}
	want := map[sched.Affine]sched.Reason{sched.AffineWeightThis: sched.ReasonPrevIdle, sched.AffinePrev: sched.ReasonTargetIdle}[y.Affine]
	if y.Reason != want {
		t.Errorf("NO_WA_IDLE's wakeup %+v: reason %v, want %v", *y, y.Reason, want)
	}
	a, b := recs[0].Data(), recs[1].Data()
	ca, cb := a.Counts, b.Counts
	if ca.Total(sched.DecisionWakeup) == 0 || ca.Total(sched.DecisionWakeup) != cb.Total(sched.DecisionWakeup) ||
		ca.Total(sched.DecisionFork) != 2 || cb.Total(sched.DecisionFork) != 2 || ca.Total(sched.DecisionBalance) != cb.Total(sched.DecisionBalance) {
		t.Errorf("totals differ: %v / %v", ca.Paths, cb.Paths)
	}
	if !sameMap(ca.Waker, cb.Waker) || !sameMap(ca.Prev, cb.Prev) || !sameMap(ca.Balance, cb.Balance) {
		t.Errorf("distances differ: %v %v / %v %v", ca.Waker, ca.Prev, cb.Waker, cb.Prev)
	}
	if sameMap(ca.Affine, cb.Affine) {
		t.Errorf("wake_affine's outcomes are the same: %v", ca.Affine)
	}
	for k, v := range ca.Paths {
		if k.Kind != sched.DecisionWakeup && cb.Paths[k] != v {
			t.Errorf("%v: %d / %d; only wakeups differ", k, v, cb.Paths[k])
		}
	}
	// The same times, so the same accounts and nothing to attribute.
	at := Attribute(MetricSpec{Name: "trip_ns", Better: "lower"}, "tip", "NO_WA_IDLE", []*RunData{a}, []*RunData{b},
		[]float64{float64(a.Window.T()) / a.Window.Work}, []float64{float64(b.Window.T()) / b.Window.Work})
	if at.Simulated != 0 || at.Remainder != 0 || at.Concurrency != 0 {
		t.Errorf("attribution %+v, want all 0", at)
	}
	for _, p := range append(at.Parts, at.CPU.Parts...) {
		if p.Pct != 0 || p.TauNs != 0 {
			t.Errorf("part %+v of identical runs", p)
		}
	}
	checkTaskTimes(t, a)
	checkTaskTimes(t, b)
	for _, tt := range a.Tasks {
		if tt.Run == 0 || tt.Sleep == 0 {
			t.Errorf("task %+v: a ping-pong player runs and sleeps", tt)
		}
	}
	_ = ks
}

func sameMap[K comparable](a, b map[K]uint64) bool {
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	for k, v := range b {
		if a[k] != v {
			return false
		}
	}
	return true
}

// checkTaskTimes: every task's run, wait and sleep add up to its time in
// the window, to the nanosecond, and none is negative.
func checkTaskTimes(t *testing.T, d *RunData) {
	t.Helper()
	if len(d.Tasks) == 0 {
		t.Fatal("no task followed")
	}
	for _, tt := range d.Tasks {
		if got := tt.Run + tt.WaitSum() + tt.Sleep; got != tt.Elapsed {
			t.Errorf("%s[%d]: run %d + wait %d + sleep %d = %d, its time in the window %d", tt.Comm, tt.PID, tt.Run, tt.WaitSum(), tt.Sleep, got, tt.Elapsed)
		}
		if tt.Run < 0 || tt.Sleep < 0 || tt.Elapsed < 0 {
			t.Errorf("%s[%d]: negative time %+v", tt.Comm, tt.PID, tt)
		}
		for w, x := range tt.Wait {
			if x < 0 {
				t.Errorf("%s[%d]: wait %v %d", tt.Comm, tt.PID, Wait(w), x)
			}
		}
	}
}

// pairRun is one run through sim.Run with a recorder, and its kernel.
type pairRun struct {
	res  *sim.Result
	data *RunData
	k    *sched.Kernel
}

// runPair runs tip (cfg with base:variant) and the variant on one seed,
// at once, comparing their decisions.
func runPair(t *testing.T, cfg sim.Config, variant string) (tip, other pairRun, d Divergence) {
	t.Helper()
	cmp := NewComparer(5)
	var out [2]pairRun
	var errs [2]error
	var wg sync.WaitGroup
	for side, v := range []string{sim.BasePrefix + variant, variant} {
		c := cfg
		c.Variants = []string{v}
		rec := &Recorder{Stream: cmp.Sink(side), Close: cmp.Done(side)}
		wg.Add(1)
		go func(side int) {
			defer wg.Done()
			defer cmp.Done(side)()
			grab := func(k *sched.Kernel) (func() error, error) { out[side].k = k; return nil, nil }
			res, err := sim.Run(c, sim.Options{Observers: []sim.Observer{rec.Attach, grab}, Watch: rec.Watch})
			out[side].res, out[side].data, errs[side] = res, rec.Data(), err
		}(side)
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	return out[0], out[1], cmp.Result()
}

// TestAgainstItself: idle-cores-nosmt changes test_idle_cores only on a
// machine without SMT; on one with SMT it is its base, and the two runs
// are one: no divergence, every count and time the same, every part 0.
func TestAgainstItself(t *testing.T) {
	cfg := sim.Config{Machine: "testdata/smt4.yaml", Seed: 3, Tool: "hackbench", Args: []string{"-p", "-l", "30", "-g", "1", "-f", "4"}}
	a, b, d := runPair(t, cfg, "idle-cores-nosmt")
	if d.Decision != nil || d.Time != nil || d.Compared == 0 {
		t.Fatalf("divergence %+v between a kernel and itself", d)
	}
	if want := a.data.Counts.Total(sched.DecisionWakeup) + a.data.Counts.Total(sched.DecisionFork) + a.data.Counts.Total(sched.DecisionBalance); uint64(d.Compared) != want {
		t.Errorf("compared %d decisions, recorded %d", d.Compared, want)
	}
	secs := Tables(a.data.Counts, b.data.Counts)
	if len(secs) == 0 {
		t.Fatal("no tables")
	}
	for _, s := range secs {
		for _, r := range s.Rows {
			if r.Tip != r.Variant {
				t.Errorf("%s, %s: %d / %d", s.Title, r.Label, r.Tip, r.Variant)
			}
		}
	}
	ma, _ := a.res.Metric("time_s")
	mb, _ := b.res.Metric("time_s")
	at := Attribute(MetricSpec{Name: "time_s", Unit: "s", Better: "lower", Decimals: 4}, "tip", "same", []*RunData{a.data}, []*RunData{b.data}, []float64{ma}, []float64{mb})
	if at.Simulated != 0 || at.Remainder != 0 || at.Note != "" || len(at.Parts) == 0 {
		t.Fatalf("attribution %+v", at)
	}
	for _, p := range append(at.Parts, at.CPU.Parts...) {
		if p.Pct != 0 || p.TauNs != 0 || p.TipNs != p.OtherNs {
			t.Errorf("part %+v", p)
		}
	}
	checkTaskTimes(t, a.data)
}

// TestCountsAreTheKernels: the decision tables count what the kernel's
// own counters count: schedstat's ttwu_count, ttwu_local, and per domain
// ttwu_wake_remote and ttwu_move_affine, and the balancer's migrations;
// on a machine with CLS, MC and NUMA levels and one with MC and PKG.
func TestCountsAreTheKernels(t *testing.T) {
	for _, cfg := range []sim.Config{
		{Machine: "hikey", Seed: 5, Tool: "hackbench", Args: []string{"-l", "40", "-g", "2"}},
		{Machine: "kunpeng920-96", Variants: []string{"sis-cluster"}, Seed: 5, Tool: "hackbench", Args: []string{"-p", "-l", "20", "-g", "4"}},
	} {
		rec := &Recorder{}
		var k *sched.Kernel
		grab := func(kk *sched.Kernel) (func() error, error) { k = kk; return nil, nil }
		res, err := sim.Run(cfg, sim.Options{Observers: []sim.Observer{rec.Attach, grab}, Watch: rec.Watch})
		if err != nil {
			t.Fatal(err)
		}
		c := rec.Data().Counts
		snap := observe.Snapshot(k)
		var count, local uint64
		remote, affine := map[string]uint64{}, map[string]uint64{}
		for _, cpu := range snap.CPUs {
			count += cpu.TtwuCount
			local += cpu.TtwuLocal
			for _, d := range cpu.Domains {
				remote[d.Name] += d.TtwuWakeRemote
				affine[d.Name] += d.TtwuMoveAffine
			}
		}
		if got := c.Total(sched.DecisionWakeup); got != count || count == 0 {
			t.Errorf("%s: %d wakeups, ttwu_count %d", cfg.Machine, got, count)
		}
		if c.Waker[LevelSame] != local {
			t.Errorf("%s: %d wakeups on the waking CPU, ttwu_local %d", cfg.Machine, c.Waker[LevelSame], local)
		}
		gotRemote := map[string]uint64{}
		for l, n := range c.Waker {
			if l != LevelSame {
				gotRemote[c.LevelName(l)] += n
			}
		}
		for name, n := range remote {
			if gotRemote[name] != n {
				t.Errorf("%s: %s: %d remote wakeups counted, ttwu_wake_remote %d", cfg.Machine, name, gotRemote[name], n)
			}
			if c.MoveAffine[name] != affine[name] {
				t.Errorf("%s: %s: %d affine pulls counted, ttwu_move_affine %d", cfg.Machine, name, c.MoveAffine[name], affine[name])
			}
		}
		var moved uint64
		for _, n := range c.Balance {
			moved += n
		}
		if moved != res.Balance.Migrations {
			t.Errorf("%s: %d balance migrations counted, balance.migrations %d", cfg.Machine, moved, res.Balance.Migrations)
		}
		if c.Total(sched.DecisionFork) != uint64(len(k.Tasks)) {
			t.Errorf("%s: %d forks counted, %d tasks", cfg.Machine, c.Total(sched.DecisionFork), len(k.Tasks))
		}
		checkTaskTimes(t, rec.Data())
		if !rec.Data().Window.Measured {
			t.Errorf("%s: hackbench's window not found", cfg.Machine)
		}
	}
}

// TestIdentity: the parts and the remainder add up to the simulated
// change exactly as computed (the remainder is defined so), the
// remainder is the concurrency and window terms, and the CPUs' identity
// leaves only the window's; the printed figures add up to the printed
// change too (TestExplainCommand, in internal/cli).
func TestIdentity(t *testing.T) {
	cfg := sim.Config{Machine: "hikey", Seed: 9, Tool: "hackbench", Args: []string{"-l", "50", "-g", "3"}}
	a, b, d := runPair(t, cfg, "short-task-v3")
	if d.Decision == nil {
		t.Fatal("short-task-v3 and its base never part on a loaded hikey")
	}
	ma, _ := a.res.Metric("time_s")
	mb, _ := b.res.Metric("time_s")
	at := Attribute(MetricSpec{Name: "time_s", Unit: "s", Better: "lower", Decimals: 4}, "tip", "v3", []*RunData{a.data}, []*RunData{b.data}, []float64{ma}, []float64{mb})
	if at.Note != "" || at.Simulated == 0 {
		t.Fatalf("attribution %+v", at)
	}
	if want := (ma - mb) / ma * 100; at.Simulated != want {
		t.Errorf("simulated %v, want %v", at.Simulated, want)
	}
	var sum float64
	for _, p := range at.Parts {
		sum += p.Pct
	}
	if at.Remainder != at.Simulated-sum {
		t.Errorf("remainder %v, simulated − parts %v", at.Remainder, at.Simulated-sum)
	}
	if got := sum + at.Remainder; math.Abs(got-at.Simulated) > 1e-12*math.Abs(at.Simulated) {
		t.Errorf("parts + remainder = %v, simulated %v", got, at.Simulated)
	}
	if got := at.Concurrency + at.Window; math.Abs(got-at.Remainder) > 1e-9 {
		t.Errorf("concurrency %v + window %v = %v, remainder %v", at.Concurrency, at.Window, got, at.Remainder)
	}
	// hackbench's time_s is its window's length: nothing beyond τ.
	if math.Abs(at.Window) > 1e-9 {
		t.Errorf("metric vs window %v, want 0 for hackbench", at.Window)
	}
	var cpu float64
	for _, p := range at.CPU.Parts {
		cpu += p.Pct
	}
	if math.Abs(cpu+at.CPU.Remainder-at.Simulated) > 1e-12*math.Abs(at.Simulated) || math.Abs(at.CPU.Remainder) > 1e-9 {
		t.Errorf("CPU view: parts %v + remainder %v, simulated %v", cpu, at.CPU.Remainder, at.Simulated)
	}
	checkTaskTimes(t, a.data)
	checkTaskTimes(t, b.data)
}

// TestComparer: synthetic streams, one side ahead of the other, with the
// time drifting before a decision differs.
func TestComparer(t *testing.T) {
	mk := func(n int, drift, diff int) []Rec {
		var out []Rec
		for i := 0; i < n; i++ {
			r := Rec{T: engine.Time(i) * 1000, PID: sched.PID(i%3 + 1), Kind: sched.DecisionWakeup, CPU: 1, Prev: 2, Chosen: 2, Reason: sched.ReasonTargetIdle}
			if drift >= 0 && i >= drift {
				r.T += 7
			}
			if diff >= 0 && i == diff {
				r.Chosen = 3
			}
			out = append(out, r)
		}
		return out
	}
	for _, c := range []struct {
		name             string
		a, b             []Rec
		time, dec, index int
	}{
		{"same", mk(5000, -1, -1), mk(5000, -1, -1), -1, -1, 5000},
		{"time first", mk(5000, -1, -1), mk(5000, 1200, 3000), 1200, 3000, 3000},
		{"decision first", mk(5000, -1, -1), mk(5000, -1, 10), -1, 10, 10},
		{"shorter", mk(4000, -1, -1), mk(5000, -1, -1), -1, 4000, 4000},
	} {
		cmp := NewComparer(3)
		cmp.limit = 100 // make the side ahead wait
		var wg sync.WaitGroup
		for side, recs := range [][]Rec{c.a, c.b} {
			wg.Add(1)
			go func(side int, recs []Rec) {
				defer wg.Done()
				sink, done := cmp.Sink(side), cmp.Done(side)
				for i := 0; i < len(recs); i += 64 {
					sink(recs[i:min(i+64, len(recs))])
				}
				done()
			}(side, recs)
		}
		wg.Wait()
		d := cmp.Result()
		if (d.Time == nil) != (c.time < 0) || (d.Time != nil && d.Time.Index != c.time) {
			t.Errorf("%s: time divergence %+v, want #%d", c.name, d.Time, c.time)
		}
		if (d.Decision == nil) != (c.dec < 0) || (d.Decision != nil && d.Decision.Index != c.dec) {
			t.Errorf("%s: divergence %+v, want #%d", c.name, d.Decision, c.dec)
		}
		if d.Compared != c.index {
			t.Errorf("%s: %d matching, want %d", c.name, d.Compared, c.index)
		}
		if d.Decision != nil && c.dec > 3 && (len(d.Before) != 3 || d.Before[2].Index != c.dec-1) {
			t.Errorf("%s: context %v", c.name, d.Before)
		}
		if c.name == "shorter" && (d.Decision.Tip != nil || d.Decision.Other == nil) {
			t.Errorf("shorter: %+v, want tip's stream ended", d.Decision)
		}
	}
}

// TestLevelsAcrossTables: a v5.12 tip has no CLS level (its table is SMT,
// MC, PKG, NODE, NUMA), the cluster-level variant adds one. Their
// decision tables must still put each domain in the row of its own kind:
// tip's MC beside the variant's MC, not beside its CLS (a level numbered
// by table index did that), and each NUMA level beside the one of the
// same node distance. Both runs' counts come from the kernels' own
// domains, looked up again here.
func TestLevelsAcrossTables(t *testing.T) {
	cfg := sim.Config{Machine: "kunpeng920-96", Kernel: "v5.12", CPUs: "0-47", Seed: 3, Tool: "hackbench", Args: []string{"-p", "-T", "-l", "30", "-g", "2"}}
	tip, other, _ := runPair(t, cfg, "cluster-level")
	want := map[string]Level{"SMT": 0, "CLS": 1, "MC": 2, "PKG": 3, "DIE": 3}
	for side, r := range []pairRun{tip, other} {
		names := map[string]bool{}
		for _, sd := range r.k.Domains(0) {
			names[sd.T.Name] = true
			l := CanonicalLevel(r.k.Topo, sd.T)
			if w, ok := want[sd.T.Name]; ok && l != w {
				t.Errorf("side %d: %s is level %d, want %d", side, sd.T.Name, l, w)
			}
			// NUMA levels: 4 + the number of smaller distances.
			if sd.T.Name == "NUMA" || sd.T.Name == "NODE" {
				smaller := 0
				seen := map[int]bool{}
				for _, row := range r.k.Topo.Spec.Distance {
					for _, d := range row {
						if d < sd.T.NumaDistance && !seen[d] {
							seen[d] = true
							smaller++
						}
					}
				}
				if l != Level(4+smaller) {
					t.Errorf("side %d: NUMA at distance %d is level %d, want %d", side, sd.T.NumaDistance, l, 4+smaller)
				}
			}
		}
		if names["CLS"] != (side == 1) || !names["MC"] {
			t.Fatalf("side %d has domains %v: the test needs a tip without CLS and a variant with it", side, names)
		}
		c := r.data.Counts
		for l, n := range c.Names {
			if w, ok := want[n]; ok && l != w {
				t.Errorf("side %d: the counts put %s at level %d, want %d", side, n, l, w)
			}
		}
		if c.Waker[want["MC"]] == 0 {
			t.Errorf("side %d: no wakeup counted at MC", side)
		}
	}
	if tip.data.Counts.Waker[want["CLS"]] != 0 {
		t.Errorf("tip, without a CLS level, counts %d wakeups at CLS", tip.data.Counts.Waker[want["CLS"]])
	}
	// The table: one MC row with both sides' MC counts.
	found := false
	for _, sec := range Tables(tip.data.Counts, other.data.Counts) {
		if !strings.HasPrefix(sec.Title, "wakeups by distance, waking") {
			continue
		}
		for _, row := range sec.Rows {
			found = found || row.Label == "MC"
			if row.Label == "MC" && (row.Tip != tip.data.Counts.Waker[2] || row.Variant != other.data.Counts.Waker[2]) {
				t.Errorf("MC row %d / %d, want %d / %d", row.Tip, row.Variant, tip.data.Counts.Waker[2], other.data.Counts.Waker[2])
			}
		}
	}
	if !found {
		t.Error("no MC row in the wakeup distance table")
	}
}
