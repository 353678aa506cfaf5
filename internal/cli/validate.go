package cli

import (
	"errors"
	"fmt"
	"os/exec"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/schedlab/schedlab/internal/costmodel"
	"github.com/schedlab/schedlab/internal/engine"
	"github.com/schedlab/schedlab/internal/sched"
	"github.com/schedlab/schedlab/internal/topology"
	"github.com/schedlab/schedlab/internal/workload/hackbench"
	"github.com/schedlab/schedlab/internal/workload/kobj"
	wlrun "github.com/schedlab/schedlab/internal/workload/run"
)

// simulateHackbench is the validation's simulator: rt-tests hackbench on
// the simulated machine with the cost parameters the kernel and workload
// models accept today (pipe and socket call costs, the IPI latency, the
// select_idle_cpu scan cost, the load-balancing costs).
func simulateHackbench(machine *topology.MachineSpec, p *costmodel.Params, args []string) (float64, error) {
	cfg, err := hackbench.ParseRTTests(args)
	if err != nil {
		return 0, err
	}
	cfg.Costs = kobj.CostsFromModel(p)
	topo, err := topology.Build(machine, topology.Options{Kernel: sched.KernelV619})
	if err != nil {
		return 0, err
	}
	k, err := sched.New(engine.New(1), topo, sched.MustBaseline(sched.KernelV619))
	if err != nil {
		return 0, err
	}
	k.ApplyCosts(p)
	b := hackbench.New(cfg)
	if err := wlrun.Drive(k, b, 0, nil); err != nil {
		return 0, err
	}
	return b.TimeSeconds(), nil
}

// schedlab validate hackbench: real against simulated hackbench on this host.
func init() {
	register(func(env *Env) *cobra.Command {
		validate := &cobra.Command{
			Use:   "validate",
			Short: "Compare simulated benchmarks with the real ones on this machine",
			Args:  cobra.NoArgs,
			RunE: func(c *cobra.Command, args []string) error {
				return fmt.Errorf("%s: missing subcommand (see '%s --help')", c.CommandPath(), c.CommandPath())
			},
		}
		var (
			groups         string
			loops, runs    int
			machine, costs string
			modes          string
			hackbenchBin   string
		)
		hb := &cobra.Command{
			Use:   "hackbench",
			Short: "Run real and simulated hackbench -p -T/-P and print both times",
			Long: `Run rt-tests' hackbench (Debian package rt-tests) on this machine with
-p -T and -p -P for each group count, and the simulated hackbench with the
same arguments on this machine's model, and print the real time (the median
of --runs runs), the simulated time and their ratio.

The simulated machine is "host" with costs from, in order of preference:
--machine FILE (a file written by schedlab calibrate), --costs FILE, or a
quick calibration run first (a few seconds). The table is what it is: the
parameters are never tuned per case.`,
			Args: cobra.NoArgs,
			RunE: func(cmd *cobra.Command, args []string) error {
				bin, err := exec.LookPath(hackbenchBin)
				if err != nil {
					return fmt.Errorf("%s not found: install rt-tests (apt-get install rt-tests)", hackbenchBin)
				}
				var cases []costmodel.HackbenchCase
				gs, err := parseIntList(groups)
				if err != nil {
					return fmt.Errorf("--groups: %w", err)
				}
				for _, m := range strings.Split(modes, ",") {
					if m != "T" && m != "P" {
						return fmt.Errorf("--modes: %q is not T or P", m)
					}
					for _, g := range gs {
						cases = append(cases, costmodel.HackbenchCase{Mode: "-" + m, Groups: g, Loops: loops})
					}
				}
				if runs < 1 {
					return errors.New("--runs must be at least 1")
				}
				spec, p, how, err := validationMachine(env, machine, costs)
				if err != nil {
					return err
				}
				fmt.Fprintf(env.Stdout, "machine %s (%d CPUs), costs: %s\nreal: %s, median of %d runs; simulated: schedlab, kernel %s, seed 1\n\n",
					spec.Name, len(spec.CPUs), how, bin, runs, sched.KernelV619)
				results, err := runValidation(bin, cases, runs, spec, p, simulateHackbench)
				if err != nil {
					return err
				}
				return costmodel.WriteValidationTable(env.Stdout, results)
			},
		}
		hb.Flags().StringVar(&groups, "groups", "1,2,4", "group counts (-g)")
		hb.Flags().IntVar(&loops, "loops", 200, "messages per sender and receiver (-l)")
		hb.Flags().IntVar(&runs, "runs", 3, "real runs per case (the median is shown)")
		hb.Flags().StringVar(&modes, "modes", "T,P", "T (threads), P (processes) or both")
		hb.Flags().StringVar(&machine, "machine", "", "the simulated machine: a file from schedlab calibrate (default: host, calibrated now)")
		hb.Flags().StringVar(&costs, "costs", "", "a costs file for host")
		hb.Flags().StringVar(&hackbenchBin, "hackbench", "hackbench", "the real hackbench binary")
		validate.AddCommand(hb)
		return validate
	})
}

// validationMachine resolves the simulated machine and its costs, and says
// where the costs come from.
func validationMachine(env *Env, machine, costs string) (*topology.MachineSpec, *costmodel.Params, string, error) {
	if machine != "" {
		spec, err := topology.Load(machine)
		if err != nil {
			return nil, nil, "", err
		}
		p, err := costmodel.Resolve(spec, costs)
		return spec, p, "from " + machine, err
	}
	spec, err := topology.ReadHost()
	if err != nil {
		return nil, nil, "", err
	}
	if costs != "" {
		p, err := costmodel.Resolve(spec, costs)
		return spec, p, "from " + costs, err
	}
	fmt.Fprintln(env.Stderr, "calibrating (quick)...")
	m, err := costmodel.Calibrate(spec, costmodel.CalibrateOptions{Quick: true})
	if err != nil {
		return nil, nil, "", err
	}
	p, _ := costmodel.Defaults(costmodel.GenericName)
	for _, s := range costmodel.Derive(m, spec) {
		if err := p.Set(s.Key, s.Value, s.Source); err != nil {
			return nil, nil, "", err
		}
	}
	return spec, p, "quick calibration now", nil
}

// runValidation runs every case: the real binary runs times, the
// simulator once (it is deterministic).
func runValidation(bin string, cases []costmodel.HackbenchCase, runs int, spec *topology.MachineSpec, p *costmodel.Params, sim costmodel.Simulator) ([]costmodel.HackbenchResult, error) {
	var out []costmodel.HackbenchResult
	for _, c := range cases {
		r := costmodel.HackbenchResult{HackbenchCase: c}
		for range runs {
			t, err := costmodel.RunRealHackbench(bin, c.Args())
			if err != nil {
				return nil, err
			}
			r.Real = append(r.Real, t)
		}
		if sim == nil {
			r.SimErr = errors.New("no simulator")
		} else {
			r.Sim, r.SimErr = sim(spec, p, c.Args())
		}
		out = append(out, r)
	}
	return out, nil
}

func parseIntList(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("%q is not a positive integer", f)
		}
		out = append(out, n)
	}
	return out, nil
}
