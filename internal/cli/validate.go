package cli

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/schedlab/schedlab/internal/costmodel"
	"github.com/schedlab/schedlab/internal/sim"
	"github.com/schedlab/schedlab/internal/topology"
)

// simulateHackbench runs rt-tests hackbench through the run pipeline
// (sim.Run) with base's machine, kernel and options, and returns its time.
func simulateHackbench(base sim.Config) costmodel.Simulator {
	return func(_ *topology.MachineSpec, _ *costmodel.Params, args []string) (float64, error) {
		cfg := base
		cfg.Tool, cfg.Args = "hackbench", args
		res, err := sim.Run(cfg, sim.Options{})
		if err != nil {
			return 0, err
		}
		t, ok := res.Metric("time_s")
		if !ok {
			return 0, errors.New("hackbench reported no time_s")
		}
		return t, nil
	}
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
			rf           runFlags
			groups       string
			loops, runs  int
			modes        string
			hackbenchBin string
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
quick calibration run first (a few seconds). The simulation goes through the
same run pipeline as 'schedlab run', so --kernel, --variant, --feature,
--sysctl, --seed and the other run options apply. The table is what it is:
the parameters are never tuned per case.`,
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
				if err := rf.check(cmd.Flags()); err != nil {
					return err
				}
				if rf.noCosts {
					return errors.New("--no-costs: validation compares the cost model with the real machine; it needs the costs")
				}
				spec, p, how, file, err := validationMachine(env, rf.machine, rf.costsFile)
				if err != nil {
					return err
				}
				if file != "" {
					defer os.Remove(file)
				}
				cfg := rf.config("hackbench", nil)
				if file != "" {
					cfg.Machine, cfg.CostsFile = file, ""
				} else if cfg.Machine == "" {
					cfg.Machine = "host"
				}
				if err := cfg.Resolve(); err != nil {
					return err
				}
				fmt.Fprintf(env.Stdout, "machine %s (%d CPUs), costs: %s\nreal: %s, median of %d runs; simulated: schedlab, kernel %s%s, seed %d\n\n",
					spec.Name, len(spec.CPUs), how, bin, runs, cfg.Kernel, variantSuffix(cfg.VariantLabel()), cfg.Seed)
				results, err := runValidation(bin, cases, runs, spec, p, simulateHackbench(cfg))
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
		rf.add(hb.Flags(), false)
		hb.Flags().Lookup("machine").Usage = "the simulated machine: a file from schedlab calibrate (default: host, calibrated now)"
		hb.Flags().Lookup("costs").Usage = "a costs file for host"
		hb.Flags().StringVar(&hackbenchBin, "hackbench", "hackbench", "the real hackbench binary")
		validate.AddCommand(hb)
		return validate
	})
}

// validationMachine resolves the simulated machine and its costs, and says
// where the costs come from. A quick calibration is written to a temporary
// machine file (returned; the caller removes it), so the simulation runs
// through the run pipeline from a file like any other machine.
func validationMachine(env *Env, machine, costs string) (*topology.MachineSpec, *costmodel.Params, string, string, error) {
	if machine != "" {
		spec, err := topology.Load(machine)
		if err != nil {
			return nil, nil, "", "", err
		}
		p, err := costmodel.Resolve(spec, costs)
		return spec, p, "from " + machine, "", err
	}
	spec, err := topology.ReadHost()
	if err != nil {
		return nil, nil, "", "", err
	}
	if costs != "" {
		p, err := costmodel.Resolve(spec, costs)
		return spec, p, "from " + costs, "", err
	}
	fmt.Fprintln(env.Stderr, "calibrating (quick)...")
	m, err := costmodel.Calibrate(spec, costmodel.CalibrateOptions{Quick: true})
	if err != nil {
		return nil, nil, "", "", err
	}
	p, _ := costmodel.Defaults(costmodel.GenericName)
	settings := costmodel.Derive(m, spec)
	for _, s := range settings {
		if err := p.Set(s.Key, s.Value, s.Source); err != nil {
			return nil, nil, "", "", err
		}
	}
	f, err := os.CreateTemp("", "schedlab-validate-*.yaml")
	if err != nil {
		return nil, nil, "", "", err
	}
	defer f.Close()
	if err := costmodel.WriteMachine(f, spec, settings, []string{"schedlab validate: quick calibration"}); err != nil {
		os.Remove(f.Name())
		return nil, nil, "", "", err
	}
	return spec, p, "quick calibration now", f.Name(), nil
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
