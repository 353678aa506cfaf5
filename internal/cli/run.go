package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/schedlab/schedlab/internal/experiment"
	"github.com/schedlab/schedlab/internal/kernels"
	"github.com/schedlab/schedlab/internal/sched"
	"github.com/schedlab/schedlab/internal/sim"
	"github.com/schedlab/schedlab/internal/topology"
	"github.com/schedlab/schedlab/internal/workload"
)

// schedlab run: one benchmark, with the tool's own arguments, on one
// simulated machine. See docs/workloads.md.
func init() {
	register(func(env *Env) *cobra.Command {
		var (
			rf                                runFlags
			jsonFile, traceFile, schedstatDir string
			schedstatEvery                    string
			traceEvents                       []string
			traceFrom, traceTo                string
			cpuProfile                        string
		)
		var tools strings.Builder
		for _, t := range sim.Tools() {
			fmt.Fprintf(&tools, "  %-22s %s\n", t.Name, t.Summary)
		}
		c := &cobra.Command{
			Use:   "run [flags] WORKLOAD [the tool's own arguments]",
			Short: "Run a benchmark (hackbench, schbench, tbench, stream, rt-app) on a simulated machine",
			Long: `Run a benchmark on a simulated machine and print what the real tool prints.
Everything after WORKLOAD is the tool's own command line, e.g.

  schedlab run --machine zen3-2s-nps1 --variant short-task-v3 hackbench -p -T -l 20000 -g 4

Without --machine the machine is ` + sim.DefaultMachine + `; without --kernel it is
v6.19, or the variant's baseline when --variant is given (--variant base:NAME
runs the kernel the variant is compared with). The same --seed gives
byte-identical output. --json FILE also writes the run's record: metrics,
schedstat totals, balance counters, the variant's branch counters (did the
patch's code run, did it change a decision) and the simulation's size
(docs/workloads.md describes the schema).

Workloads:
` + tools.String(),
			Args: func(cmd *cobra.Command, args []string) error {
				if len(args) == 0 {
					return fmt.Errorf("run: name a workload, e.g. 'schedlab run hackbench' (workloads: %s)", strings.Join(toolNames(), ", "))
				}
				return nil
			},
			RunE: func(cmd *cobra.Command, args []string) error {
				tool, toolArgs := args[0], args[1:]
				t, _, err := sim.Parse(tool, toolArgs)
				if errors.Is(err, workload.ErrHelp) {
					fmt.Fprint(env.Stdout, t.Usage)
					return nil
				}
				if err != nil {
					return err
				}
				return runTool(env, cmd, &rf, tool, toolArgs, runOutputs{jsonFile, traceFile, schedstatDir, schedstatEvery, traceEvents, traceFrom, traceTo, cpuProfile})
			},
		}
		f := c.Flags()
		f.SetInterspersed(false)
		rf.add(f, false)
		f.StringVar(&jsonFile, "json", "", "also write the run's record as JSON to this file")
		f.StringVar(&traceFile, "trace", "", "write sched tracepoints: FILE.txt (ftrace text), FILE.dat (trace.dat for trace-cmd), FILE.json (Chrome/Perfetto)")
		f.StringSliceVar(&traceEvents, "trace-events", nil, "trace only these events (e.g. sched_switch,sched_wakeup)")
		f.StringVar(&traceFrom, "trace-from", "", "trace from this simulated time (e.g. 10ms)")
		f.StringVar(&traceTo, "trace-to", "", "trace up to this simulated time")
		f.StringVar(&schedstatDir, "schedstat", "", "write /proc/schedstat snapshots before and after the workload into DIR")
		f.StringVar(&schedstatEvery, "schedstat-every", "", "with --schedstat, also write a snapshot every DURATION of simulated time (e.g. 250ms) as DIR/schedstat-0001.txt, -0002.txt, …, as a loop over cat /proc/schedstat does")
		f.StringVar(&cpuProfile, "cpuprofile", "", "write a Go CPU profile of the simulation to FILE (go tool pprof FILE): where schedlab's own time goes")
		return c
	})
}

// runOutputs are run's output flags.
type runOutputs struct {
	json, trace, schedstat string
	schedstatEvery         string // --schedstat-every: the period of the extra snapshots
	events                 []string
	from, to               string
	cpuProfile             string // --cpuprofile: the simulation's Go CPU profile
}

// runTool runs one tool with its arguments through sim.Run and prints its
// output, as `schedlab run` does.
func runTool(env *Env, cmd *cobra.Command, rf *runFlags, tool string, toolArgs []string, o runOutputs) error {
	if err := rf.check(cmd.Flags()); err != nil {
		return err
	}
	cfg := rf.config(tool, toolArgs)
	if err := cfg.Resolve(); err != nil {
		return err
	}
	kernelNote := kernelOrigin(cfg.Kernel, rf.kernel, cfg.Variants)
	// Every output is checked before the run starts.
	if err := sim.CheckOutputFile("--json", o.json); err != nil {
		return err
	}
	if err := sim.CheckOutputFile("--cpuprofile", o.cpuProfile); err != nil {
		return err
	}
	var opt sim.Options
	var obs *runObservers
	if o.trace != "" || o.schedstat != "" || o.schedstatEvery != "" || len(o.events) > 0 || o.from != "" || o.to != "" {
		var err error
		obs, err = newRunObservers(o.trace, o.events, o.from, o.to, o.schedstat, o.schedstatEvery)
		if err != nil {
			return err
		}
		opt.Observers = append(opt.Observers, obs.attach)
	}
	prog := newProgress(env)
	prog.header("%s on %s, kernel %s%s, seed %d%s", cfg.Tool, machineName(cfg.Machine), cfg.Kernel, variantSuffix(cfg.VariantLabel()), cfg.Seed, kernelNote)
	if prog.on() {
		opt.Progress = prog.run
	}
	if obs != nil && obs.every > 0 {
		// The periodic snapshots ride on the run's slices (sim.Options:
		// Progress after every 1 ms of simulated time), which do not
		// change the order of events.
		inner := opt.Progress
		opt.Progress = func(frac float64) {
			obs.tick()
			if inner != nil {
				inner(frac)
			}
		}
	}
	var prof *os.File
	if o.cpuProfile != "" {
		f, err := os.Create(o.cpuProfile)
		if err != nil {
			return fmt.Errorf("--cpuprofile %s: %v", o.cpuProfile, unwrapPathError(err))
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			f.Close()
			return fmt.Errorf("--cpuprofile %s: %v", o.cpuProfile, err)
		}
		prof = f
	}
	res, err := sim.Run(cfg, opt)
	if prof != nil {
		pprof.StopCPUProfile()
		if cerr := prof.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("--cpuprofile %s: %v", o.cpuProfile, cerr)
		}
	}
	prog.clear()
	if err != nil {
		return err
	}
	io.WriteString(env.Stdout, res.Output)
	if o.json != "" {
		b, err := json.MarshalIndent(res, "", "  ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(o.json, append(b, '\n'), 0o644); err != nil {
			return fmt.Errorf("--json %s: %v", o.json, unwrapPathError(err))
		}
	}
	printWarnings(env.Stderr, res.Warnings)
	// One line on stderr names what ran, so that the tool's own output
	// (which says nothing of the kernel) cannot be read as another
	// kernel's; stdout stays the tool's format.
	fmt.Fprintf(env.Stderr, "schedlab: %s on %s (%d CPUs), kernel %s%s, seed %d",
		res.Workload.Tool, res.Machine, res.NrCPUs, res.Kernel, variantSuffix(res.Variant), res.Seed)
	if prog.on() {
		fmt.Fprintf(env.Stderr, ": %d events, %v simulated in %.2fs",
			res.Sim.Events, time.Duration(res.Sim.SimulatedNs), float64(res.Sim.WallNs)/1e9)
	}
	fmt.Fprintln(env.Stderr, kernelNote)
	return nil
}

// kernelOrigin says, when no --kernel named the kernel and a variant
// brought it, which variant did (" (v6.0 is short-task-v3's baseline;
// v6.19 without --variant)"), and is "" otherwise. A variant runs on the
// kernel its patch was written against, which need not be the default
// baseline: a time read without that note looks like the patch's effect.
func kernelOrigin(kernel, asked string, variants []string) string {
	if asked != "" || kernel == kernels.Default {
		return ""
	}
	for _, v := range variants {
		name := strings.TrimPrefix(v, sim.BasePrefix)
		if info, ok := sched.LookupVariant(name); ok && info.Baseline == kernel {
			return fmt.Sprintf(" (%s is %s's baseline; %s without --variant)", kernel, name, kernels.Default)
		}
	}
	return ""
}

// machineName is the name of the machine arg names: a preset's, host, or a
// machine file's name: (its file name without one), the name every output
// gives it; arg itself if it does not load (the run then says why).
func machineName(arg string) string {
	if spec, err := topology.Load(arg); err == nil {
		return spec.Name
	}
	return arg
}

// printWarnings prints each distinct warning once, in order, as
// "schedlab: warning: ...": runs of one workload (compare's columns and
// seeds) read the same input and warn alike.
func printWarnings(w io.Writer, lists ...[]string) {
	seen := map[string]bool{}
	for _, l := range lists {
		for _, s := range l {
			if !seen[s] {
				seen[s] = true
				fmt.Fprintf(w, "schedlab: warning: %s\n", s)
			}
		}
	}
}

// recordWarnings are the warnings of records, for printWarnings.
func recordWarnings(recs []*experiment.Record) [][]string {
	var out [][]string
	for _, r := range recs {
		if r != nil {
			out = append(out, r.Warnings)
		}
	}
	return out
}

func toolNames() []string {
	var out []string
	for _, t := range sim.Tools() {
		out = append(out, t.Name)
	}
	return out
}

func variantSuffix(v string) string {
	if v == "" {
		return ""
	}
	return " + " + v
}
