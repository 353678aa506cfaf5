package frames

import (
	"fmt"
	"math"
	"strconv"

	"github.com/schedlab/schedlab/internal/workload"
	"github.com/schedlab/schedlab/internal/workload/getopt"
)

// Usage is the tool's usage text.
const Usage = `frames: Android-style frame rendering (UI thread + RenderThread per app) with app switches between cgroups
usage: frames [options]
	-r, --refresh HZ        display refresh rate: 60, 90 or 120 (def: 60)
	-d, --duration SECS     simulated seconds to run (def: 10)
	-n, --frames N          stop after N frames instead (def: 0, use -d)
	-a, --apps N            apps; the front one draws, the others wait in background (def: 3)
	-s, --switch MS         the front app changes every MS ms; 0 never, nor with -a 1 (def: 2000)
	    --ui-us US          UI thread work per frame, mean, µs at max capacity and frequency (def: 3000)
	    --ui-spread US      its standard deviation (def: 1000)
	    --render-us US      RenderThread work per frame, mean (def: 4000)
	    --render-spread US  its standard deviation (def: 1000)
	    --heavy-pct P       percent of frames that are heavy (def: 5)
	    --heavy-mult X      a heavy frame's work multiplier (def: 3)
	    --launch-frames N   frames after coming to the front that are launch frames (def: 10)
	    --launch-mult X     a launch frame's work multiplier (def: 4)
	-b, --bg-hogs N         CPU-bound tasks in the background group (def: 0)
	-p, --bg-periodic N     periodic tasks in the background group (def: 4)
	    --bg-run-us US      a periodic task's work per period (def: 1000)
	    --bg-period-ms MS   its period (def: 20)
	-h, --help              this text
`

var opts = []getopt.Option{
	{Short: 'r', Long: "refresh", HasArg: true},
	{Short: 'd', Long: "duration", HasArg: true},
	{Short: 'n', Long: "frames", HasArg: true},
	{Short: 'a', Long: "apps", HasArg: true},
	{Short: 's', Long: "switch", HasArg: true},
	{Long: "ui-us", HasArg: true},
	{Long: "ui-spread", HasArg: true},
	{Long: "render-us", HasArg: true},
	{Long: "render-spread", HasArg: true},
	{Long: "heavy-pct", HasArg: true},
	{Long: "heavy-mult", HasArg: true},
	{Long: "launch-frames", HasArg: true},
	{Long: "launch-mult", HasArg: true},
	{Short: 'b', Long: "bg-hogs", HasArg: true},
	{Short: 'p', Long: "bg-periodic", HasArg: true},
	{Long: "bg-run-us", HasArg: true},
	{Long: "bg-period-ms", HasArg: true},
	{Short: 'h', Long: "help"},
}

// Limits on what one run simulates.
const (
	maxApps     = 64
	maxBgTasks  = 1024
	maxDuration = 3600    // seconds
	maxFrames   = 1 << 22 // about 9.7 hours at 120 Hz
	maxWorkUs   = 1e6     // one second of work per frame or period
	maxMult     = 100
)

// Parse parses the tool's options; every error is one line starting
// "frames: " and naming the option.
func Parse(args []string) (Config, error) {
	cfg := DefaultConfig()
	o, rest, err := getopt.Parse("frames", opts, args)
	if err != nil {
		return cfg, err
	}
	if len(rest) > 0 {
		return cfg, fmt.Errorf("frames: unexpected argument %q", rest[0])
	}
	for _, x := range o {
		bad := func(what string) error {
			return fmt.Errorf("frames: %s %s: %s", x.Name, strconv.Quote(x.Arg), what)
		}
		intArg := func(lo, hi int) (int, error) {
			v, err := strconv.Atoi(x.Arg)
			if err != nil || v < lo || v > hi {
				return 0, bad(fmt.Sprintf("must be an integer from %d to %d", lo, hi))
			}
			return v, nil
		}
		floatArg := func(lo, hi float64) (float64, error) {
			v, err := strconv.ParseFloat(x.Arg, 64)
			if err != nil || math.IsNaN(v) || v < lo || v > hi {
				return 0, bad(fmt.Sprintf("must be a number from %g to %g", lo, hi))
			}
			return v, nil
		}
		var e error
		switch x.Option.Long {
		case "refresh":
			cfg.Refresh, e = intArg(1, 1000)
			if e == nil && cfg.Refresh != 60 && cfg.Refresh != 90 && cfg.Refresh != 120 {
				e = bad("the refresh rate must be 60, 90 or 120")
			}
		case "duration":
			cfg.Duration, e = floatArg(0, maxDuration)
			if e == nil && cfg.Duration == 0 {
				e = bad("the duration must be more than 0 seconds")
			}
		case "frames":
			cfg.Frames, e = intArg(0, maxFrames)
		case "apps":
			cfg.Apps, e = intArg(1, maxApps)
		case "switch":
			cfg.SwitchMs, e = intArg(0, maxDuration*1000)
		case "ui-us":
			cfg.UIUs, e = floatArg(1, maxWorkUs)
		case "ui-spread":
			cfg.UISpread, e = floatArg(0, maxWorkUs)
		case "render-us":
			cfg.RenderUs, e = floatArg(1, maxWorkUs)
		case "render-spread":
			cfg.RenderSpread, e = floatArg(0, maxWorkUs)
		case "heavy-pct":
			cfg.HeavyPct, e = floatArg(0, 100)
		case "heavy-mult":
			cfg.HeavyMult, e = floatArg(1, maxMult)
		case "launch-frames":
			cfg.LaunchFrames, e = intArg(0, maxFrames)
		case "launch-mult":
			cfg.LaunchMult, e = floatArg(1, maxMult)
		case "bg-hogs":
			cfg.BgHogs, e = intArg(0, maxBgTasks)
		case "bg-periodic":
			cfg.BgPeriodic, e = intArg(0, maxBgTasks)
		case "bg-run-us":
			cfg.BgRunUs, e = floatArg(1, maxWorkUs)
		case "bg-period-ms":
			cfg.BgPeriodMs, e = floatArg(1, 1000)
		case "help":
			return cfg, workload.ErrHelp
		}
		if e != nil {
			return cfg, e
		}
	}
	if cfg.BgRunUs > cfg.BgPeriodMs*1000 {
		return cfg, fmt.Errorf("frames: --bg-run-us %g is longer than --bg-period-ms %g", cfg.BgRunUs, cfg.BgPeriodMs)
	}
	return cfg, nil
}
