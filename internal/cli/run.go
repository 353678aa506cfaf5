package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/schedlab/schedlab/internal/sched"
	"github.com/schedlab/schedlab/internal/workload"
	wlrun "github.com/schedlab/schedlab/internal/workload/run"
)

// schedlab run: one benchmark, with the tool's own arguments, on one
// simulated machine. See docs/workloads.md.
func init() {
	register(func(env *Env) *cobra.Command {
		var (
			machine, kernel, variant, jsonFile string
			seed                               uint64
			features                           []string
			costsFile, traceFile, schedstatDir string
			noCosts                            bool
			backgroundCgroups                  int
			cpus                               string
			traceEvents                        []string
			traceFrom, traceTo                 string
		)
		var tools strings.Builder
		for _, t := range wlrun.Tools() {
			fmt.Fprintf(&tools, "  %-22s %s\n", t.Name, t.Summary)
		}
		c := &cobra.Command{
			Use:   "run [flags] WORKLOAD [the tool's own arguments]",
			Short: "Run a benchmark (hackbench, schbench, tbench, stream, rt-app) on a simulated machine",
			Long: `Run a benchmark on a simulated machine and print what the real tool prints.
Everything after WORKLOAD is the tool's own command line, e.g.

  schedlab run --machine zen3-2s-nps1 --variant short-task-v3 hackbench -p -T -l 20000 -g 4

Without --machine the machine is ` + wlrun.DefaultMachine + `; without --kernel it is
v6.19, or the variant's baseline when --variant is given. The same --seed gives
byte-identical output. --json FILE also writes the metrics, the schedstat
totals and the simulation's size (docs/workloads.md describes the schema).

Workloads:
` + tools.String(),
			Args: cobra.MinimumNArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				tool, toolArgs := args[0], args[1:]
				t, _, err := wlrun.Parse(tool, toolArgs)
				if errors.Is(err, workload.ErrHelp) {
					fmt.Fprint(env.Stdout, t.Usage)
					return nil
				}
				if err != nil {
					return err
				}
				if variant != "" {
					base, err := variantBaseline(variant)
					if err != nil {
						return err
					}
					if kernel == "" {
						kernel = base
					} else if kernel != base {
						return fmt.Errorf("variant %s applies to kernel %s, not %s", variant, base, kernel)
					}
				}
				var bar *progressBar
				if env.Terminal {
					bar = newProgressBar(env.Stderr, time.Now())
				}
				cfg := wlrun.Config{
					Machine: machine, Kernel: kernel, Variant: variant, Features: features,
					Seed: seed, Tool: tool, Args: toolArgs, ApplyVariant: applyVariant,
					CostsFile: costsFile, NoCosts: noCosts, BackgroundCgroups: backgroundCgroups, CPUs: cpus,
				}
				if traceFile != "" || schedstatDir != "" {
					obs, err := newRunObservers(traceFile, traceEvents, traceFrom, traceTo, schedstatDir)
					if err != nil {
						return err
					}
					cfg.Attach = obs.attach
				}
				if bar != nil {
					cfg.Progress = func(f float64) { bar.update(f, time.Now()) }
				}
				start := time.Now()
				res, err := wlrun.Run(cfg)
				wall := time.Since(start)
				if bar != nil {
					bar.clear()
				}
				if err != nil {
					return err
				}
				env.Stdout.Write(res.Output)
				if jsonFile != "" {
					var b bytes.Buffer
					if err := writeRunJSON(&b, res, wall); err != nil {
						return err
					}
					if err := os.WriteFile(jsonFile, b.Bytes(), 0o644); err != nil {
						return fmt.Errorf("%s: %v", jsonFile, unwrapPathError(err))
					}
				}
				if env.Terminal {
					fmt.Fprintf(env.Stderr, "schedlab: %s on %s (%d CPUs), kernel %s%s, seed %d: %d events, %v simulated in %.2fs\n",
						res.Tool, res.Machine, res.NrCPUs, res.Kernel, variantSuffix(res.Variant), res.Seed, res.Events, res.Simulated, wall.Seconds())
				}
				return nil
			},
		}
		f := c.Flags()
		f.SetInterspersed(false)
		f.StringVar(&machine, "machine", "", "machine: a preset (see 'schedlab machines'), host, or a YAML file (default "+wlrun.DefaultMachine+")")
		f.StringVar(&kernel, "kernel", "", "kernel baseline: "+strings.Join(sched.Kernels, " or ")+" (default v6.19, or the variant's baseline)")
		f.StringVar(&variant, "variant", "", "kernel variant (see 'schedlab variants')")
		f.Uint64Var(&seed, "seed", 1, "seed of every random stream of the run")
		f.StringVar(&jsonFile, "json", "", "also write the results as JSON to this file")
		f.StringArrayVar(&features, "feature", nil, "set a sched_feature, e.g. NO_TTWU_QUEUE (repeatable)")
		f.StringVar(&costsFile, "costs", "", "cost-model file applied over the machine's costs (see 'schedlab costs')")
		f.BoolVar(&noCosts, "no-costs", false, "run without the cost model (no context-switch, refill, IPI-distance or idle-exit costs)")
		f.StringVar(&traceFile, "trace", "", "write sched tracepoints: FILE.txt (ftrace text), FILE.dat (trace.dat for trace-cmd), FILE.json (Chrome/Perfetto)")
		f.StringSliceVar(&traceEvents, "trace-events", nil, "trace only these events (e.g. sched_switch,sched_wakeup)")
		f.StringVar(&traceFrom, "trace-from", "", "trace from this simulated time (e.g. 10ms)")
		f.StringVar(&traceTo, "trace-to", "", "trace up to this simulated time")
		f.StringVar(&cpus, "cpus", "", "run the workload confined to these CPUs, as 'taskset -c LIST' does (children inherit the affinity)")
		f.IntVar(&backgroundCgroups, "background-cgroups", 0, "add N cgroups, each with a task that runs 300 µs every 50-250 ms (blocked-load work of a desktop or phone)")
		f.StringVar(&schedstatDir, "schedstat", "", "write /proc/schedstat snapshots before and after the workload into DIR")
		return c
	})
}

func variantSuffix(v string) string {
	if v == "" {
		return ""
	}
	return " + " + v
}

// applyVariant and variantBaseline adapt the variants of package sched.
var applyVariant = sched.ApplyVariant

func variantBaseline(name string) (string, error) {
	var names []string
	for _, v := range sched.Variants() {
		if v.Name == name {
			return v.Baseline, nil
		}
		names = append(names, v.Name)
	}
	return "", fmt.Errorf("unknown variant %q (known: %s)", name, strings.Join(names, ", "))
}

// RunJSONSchemaVersion is the version of the --json document.
const RunJSONSchemaVersion = 1

// metrics marshals as a JSON object whose keys keep the workload's order;
// a dotted name ("latency_us.p50") nests ({"latency_us": {"p50": …}}).
type metrics []workload.Metric

func (m metrics) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i := 0; i < len(m); i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		name := m[i].Name
		if group, _, ok := strings.Cut(name, "."); ok {
			j := i
			var sub metrics
			for ; j < len(m); j++ {
				g, rest, ok := strings.Cut(m[j].Name, ".")
				if !ok || g != group {
					break
				}
				sub = append(sub, workload.Metric{Name: rest, Value: m[j].Value})
			}
			k, _ := json.Marshal(group)
			b.Write(k)
			b.WriteByte(':')
			inner, _ := sub.MarshalJSON()
			b.Write(inner)
			i = j - 1
			continue
		}
		k, _ := json.Marshal(name)
		b.Write(k)
		b.WriteByte(':')
		writeNumber(&b, m[i].Value)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// writeNumber writes integers without an exponent and NaN/Inf as null.
func writeNumber(b *bytes.Buffer, v float64) {
	switch {
	case v != v || v > 1e308 || v < -1e308:
		b.WriteString("null")
	case v == float64(int64(v)) && v > -1e15 && v < 1e15:
		b.WriteString(strconv.FormatInt(int64(v), 10))
	default:
		b.WriteString(strconv.FormatFloat(v, 'g', -1, 64))
	}
}

type runJSON struct {
	SchemaVersion int    `json:"schema_version"`
	Machine       string `json:"machine"`
	NrCPUs        int    `json:"nr_cpus"`
	Kernel        string `json:"kernel"`
	Variant       string `json:"variant"`
	Seed          uint64 `json:"seed"`
	Workload      struct {
		Name string   `json:"name"`
		Args []string `json:"args"`
	} `json:"workload"`
	Metrics   metrics `json:"metrics"`
	Schedstat struct {
		TTWUCount   uint64 `json:"ttwu_count"`
		TTWULocal   uint64 `json:"ttwu_local"`
		SchedCount  uint64 `json:"sched_count"`
		SchedGoidle uint64 `json:"sched_goidle"`
		RunTimeNs   uint64 `json:"run_time_ns"`
		RunDelayNs  uint64 `json:"run_delay_ns"`
		Pcount      uint64 `json:"pcount"`
		YldCount    uint64 `json:"yld_count"`
		Domains     []struct {
			Level          string `json:"level"`
			TTWUWakeRemote uint64 `json:"ttwu_wake_remote"`
			TTWUMoveAffine uint64 `json:"ttwu_move_affine"`
		} `json:"domains"`
	} `json:"schedstat"`
	Balance *balanceJSON `json:"balance,omitempty"`
	Sim     struct {
		Events      uint64 `json:"events"`
		SimulatedNs int64  `json:"simulated_ns"`
		// WallNs is the one field that differs between identical runs.
		WallNs int64 `json:"wall_ns"`
	} `json:"sim"`
}

// writeRunJSON writes the --json document. Every field but sim.wall_ns is
// a function of the command line.
func writeRunJSON(w io.Writer, res *wlrun.Result, wall time.Duration) error {
	var j runJSON
	j.SchemaVersion = RunJSONSchemaVersion
	j.Machine, j.NrCPUs, j.Kernel, j.Variant, j.Seed = res.Machine, res.NrCPUs, res.Kernel, res.Variant, res.Seed
	j.Workload.Name, j.Workload.Args = res.Tool, res.Args
	j.Metrics = res.Metrics
	s := res.Schedstat
	js := &j.Schedstat
	js.TTWUCount, js.TTWULocal, js.SchedCount, js.SchedGoidle = s.TTWUCount, s.TTWULocal, s.SchedCount, s.SchedGoidle
	js.RunTimeNs, js.RunDelayNs, js.Pcount, js.YldCount = s.RunTimeNs, s.RunDelayNs, s.Pcount, s.YldCount
	js.Domains = make([]struct {
		Level          string `json:"level"`
		TTWUWakeRemote uint64 `json:"ttwu_wake_remote"`
		TTWUMoveAffine uint64 `json:"ttwu_move_affine"`
	}, len(s.Domains))
	for i, d := range s.Domains {
		js.Domains[i].Level, js.Domains[i].TTWUWakeRemote, js.Domains[i].TTWUMoveAffine = d.Level, d.TTWUWakeRemote, d.TTWUMoveAffine
	}
	b := res.Balance
	j.Balance = &balanceJSON{
		UpdateBlockedAverages: counterJSON(b.UpdateBlockedAverages),
		NewidleBalance:        counterJSON(b.NewidleBalance),
		PeriodicBalance:       counterJSON(b.PeriodicBalance),
		NohzIdleBalance:       counterJSON(b.NohzIdleBalance),
		ActiveBalance:         counterJSON(b.ActiveBalance),
		Migrations:            b.Migrations,
	}
	j.Sim.Events, j.Sim.SimulatedNs, j.Sim.WallNs = res.Events, int64(res.Simulated), wall.Nanoseconds()
	out, err := json.MarshalIndent(&j, "", "  ")
	if err != nil {
		return err
	}
	out = append(out, '\n')
	_, err = w.Write(out)
	return err
}

// balanceJSON is the run JSON's "balance" section: how often the
// balancing paths ran and how long they took (simulated ns).
type balanceJSON struct {
	UpdateBlockedAverages balanceCounterJSON `json:"update_blocked_averages"`
	NewidleBalance        balanceCounterJSON `json:"newidle_balance"`
	PeriodicBalance       balanceCounterJSON `json:"periodic_balance"`
	NohzIdleBalance       balanceCounterJSON `json:"nohz_idle_balance"`
	ActiveBalance         balanceCounterJSON `json:"active_balance"`
	Migrations            uint64             `json:"migrations"`
}

type balanceCounterJSON struct {
	Calls   uint64 `json:"calls"`
	TotalNs int64  `json:"total_ns"`
	MaxNs   int64  `json:"max_ns"`
}

func counterJSON(c sched.BalanceCounter) balanceCounterJSON {
	return balanceCounterJSON{Calls: c.Calls, TotalNs: int64(c.Total), MaxNs: int64(c.Max)}
}

// progressBar draws "[#####.....]  45%" on a terminal, only once a run has
// taken more than a second of wall time, and at most ten times a second.
type progressBar struct {
	w        io.Writer
	start    time.Time
	last     time.Time
	drawn    bool
	lastFrac int
}

func newProgressBar(w io.Writer, now time.Time) *progressBar {
	return &progressBar{w: w, start: now, lastFrac: -1}
}

const progressWidth = 40

func (p *progressBar) update(frac float64, now time.Time) {
	if now.Sub(p.start) < time.Second || now.Sub(p.last) < 100*time.Millisecond {
		return
	}
	if frac < 0 {
		frac = 0
	} else if frac > 1 {
		frac = 1
	}
	pct := int(frac * 100)
	p.last = now
	filled := int(frac * progressWidth)
	fmt.Fprintf(p.w, "\r[%s%s] %3d%% %5.1fs", strings.Repeat("#", filled), strings.Repeat(".", progressWidth-filled), pct, now.Sub(p.start).Seconds())
	p.drawn = true
	p.lastFrac = pct
}

// clear erases the bar.
func (p *progressBar) clear() {
	if p.drawn {
		fmt.Fprint(p.w, "\r\033[K")
		p.drawn = false
	}
}
