package frames_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/schedlab/schedlab/internal/golden"
	"github.com/schedlab/schedlab/internal/sim"
	"github.com/schedlab/schedlab/internal/workload"
	"github.com/schedlab/schedlab/internal/workload/frames"
)

func TestParse(t *testing.T) {
	for _, c := range []struct {
		args  string
		check func(frames.Config) bool
		err   string // the error's text; "" for none
	}{
		{"", func(c frames.Config) bool { return c == frames.DefaultConfig() }, ""},
		{"-r 120 -d 2.5 -a 2 -s 500", func(c frames.Config) bool {
			return c.Refresh == 120 && c.Duration == 2.5 && c.Apps == 2 && c.SwitchMs == 500
		}, ""},
		{"--refresh=90 -n 300 --ui-us 2000 --ui-spread 0 --render-us=2500 --render-spread 10", func(c frames.Config) bool {
			return c.Refresh == 90 && c.Frames == 300 && c.UIUs == 2000 && c.UISpread == 0 && c.RenderUs == 2500 && c.RenderSpread == 10
		}, ""},
		{"--heavy-pct 10 --heavy-mult 2.5 --launch-frames 0 --launch-mult 1 -b 2 -p0 --bg-run-us 500 --bg-period-ms 5", func(c frames.Config) bool {
			return c.HeavyPct == 10 && c.HeavyMult == 2.5 && c.LaunchFrames == 0 && c.LaunchMult == 1 && c.BgHogs == 2 && c.BgPeriodic == 0 && c.BgRunUs == 500 && c.BgPeriodMs == 5
		}, ""},
		{"--heavy-p 7", func(c frames.Config) bool { return c.HeavyPct == 7 }, ""},
		{"-r 75", nil, `frames: -r "75": the refresh rate must be 60, 90 or 120`},
		{"-d 0", nil, `frames: -d "0": the duration must be more than 0 seconds`},
		{"-d x", nil, `frames: -d "x": must be a number from 0 to 3600`},
		{"-a 0", nil, `frames: -a "0": must be an integer from 1 to 64`},
		{"--heavy-pct 101", nil, `frames: --heavy-pct "101": must be a number from 0 to 100`},
		{"--heavy-mult NaN", nil, `frames: --heavy-mult "NaN": must be a number from 1 to 100`},
		{"--bg-run-us 30000", nil, `frames: --bg-run-us 30000 is longer than --bg-period-ms 20`},
		{"-x", nil, `frames: invalid option -- 'x'`},
		{"--launch", nil, `frames: option '--launch' is ambiguous; possibilities: '--launch-frames' '--launch-mult'`},
		{"-r", nil, `frames: option requires an argument -- 'r'`},
		{"extra", nil, `frames: unexpected argument "extra"`},
	} {
		cfg, err := frames.Parse(strings.Fields(c.args))
		switch {
		case c.err != "":
			if err == nil || err.Error() != c.err {
				t.Errorf("%q: error %v, want %q", c.args, err, c.err)
			}
		case err != nil:
			t.Errorf("%q: %v", c.args, err)
		case !c.check(cfg):
			t.Errorf("%q: %+v", c.args, cfg)
		}
	}
	if _, err := frames.Parse([]string{"-h"}); err != workload.ErrHelp {
		t.Errorf("-h: %v", err)
	}
}

func FuzzParse(f *testing.F) {
	f.Add("-r 60 -d 10 -a 3 -s 2000")
	f.Add("--refresh=120 -n5 --heavy-pct 2.5 -b1 -p 0")
	f.Fuzz(func(t *testing.T, s string) {
		c, err := frames.Parse(strings.Fields(s))
		if err != nil {
			if strings.Contains(err.Error(), "\n") || !strings.HasPrefix(err.Error(), "frames: ") {
				if err != workload.ErrHelp {
					t.Fatalf("error %q", err)
				}
			}
			return
		}
		if (c.Refresh != 60 && c.Refresh != 90 && c.Refresh != 120) || c.Duration <= 0 || c.Apps < 1 || c.Frames < 0 ||
			c.UIUs < 1 || c.RenderUs < 1 || c.HeavyMult < 1 || c.LaunchMult < 1 || c.BgRunUs > c.BgPeriodMs*1000 {
			t.Fatalf("accepted %+v", c)
		}
	})
}

func run(t testing.TB, seed uint64, variants []string, args ...string) *sim.Result {
	t.Helper()
	res, err := sim.Run(sim.Config{Machine: "hikey", Seed: seed, Tool: "frames", Args: args, Variants: variants}, sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// Same seed ⇒ byte-identical output and metrics; another seed draws other
// frames.
func TestDeterministic(t *testing.T) {
	args := []string{"-d", "3", "-s", "1000", "-b", "1", "--heavy-pct", "20"}
	a, b := run(t, 7, nil, args...), run(t, 7, nil, args...)
	if !bytes.Equal(a.Deterministic(), b.Deterministic()) || a.Output != b.Output {
		t.Errorf("two runs with seed 7 differ:\n%s\n%s", a.Output, b.Output)
	}
	if c := run(t, 8, nil, args...); c.Output == a.Output {
		t.Errorf("seeds 7 and 8 give the same output:\n%s", a.Output)
	}
}

// The frame count: -n stops at exactly N frames; -d 1 at 60 Hz has one
// frame per vsync of the first second at most (vsyncs 1 to 59 can start
// a frame that ends before 1 s).
func TestFrameCount(t *testing.T) {
	res := run(t, 1, nil, "-n", "100")
	if n, _ := res.Metric("frames"); n != 100 {
		t.Errorf("-n 100: %v frames", n)
	}
	res = run(t, 1, nil, "-d", "1", "-s", "0", "-p", "0", "--ui-us", "100", "--render-us", "100", "--ui-spread", "0", "--render-spread", "0", "--launch-frames", "0", "--heavy-pct", "0")
	if n, _ := res.Metric("frames"); n != 59 {
		t.Errorf("-d 1 with light frames: %v frames, want 59", n)
	}
	if j, _ := res.Metric("janky_pct"); j != 0 {
		t.Errorf("light frames: %v%% janky", j)
	}
}

// The output's format, pinned (go test -rewrite rewrites it).
func TestGolden(t *testing.T) {
	res := run(t, 1, nil, "-d", "5")
	golden.Check(t, "testdata/frames-d5.txt", []byte(res.Output))
}

func benchRun(b *testing.B, args ...string) {
	var events uint64
	var simulated, wall int64
	for i := 0; i < b.N; i++ {
		res := run(b, 1, nil, args...)
		events += res.Sim.Events
		simulated += res.Sim.SimulatedNs
		wall += res.Sim.WallNs
	}
	b.ReportMetric(float64(events)/(float64(wall)/1e9), "events/s")
	b.ReportMetric(float64(events)/float64(b.N), "events/op")
	b.ReportMetric(float64(simulated)/float64(wall), "sim-s/wall-s")
}

// BenchmarkFrames: the default run (10 s, 3 apps, 4 periodic background
// tasks) and one with two CPU-bound background tasks at 120 Hz.
func BenchmarkFrames(b *testing.B) {
	b.Run("default", func(b *testing.B) { benchRun(b) })
	b.Run("120hz-hogs", func(b *testing.B) { benchRun(b, "-r", "120", "-b", "2") })
}
