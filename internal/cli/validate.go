package cli

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/schedlab/schedlab/internal/calibrate"
)

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
			seeds        int
			within       float64
			modes        string
			hackbenchBin string
		)
		hb := &cobra.Command{
			Use:   "hackbench",
			Short: "Run real and simulated hackbench -p -T/-P and print both times",
			Long: `Run rt-tests' hackbench (Debian package rt-tests) on this machine with
-p -T and -p -P for each group count, and the simulated hackbench with the
same arguments on this machine's model, and print the real time (the median
of --runs runs), the simulated time (the mean over --seeds seeds, from
--seed on), both ranges, their ratio, and how many cases are within
±--within percent. The real runs go in rounds (every case once, then again)
so that a drifting machine shifts every case alike; the simulations run
after them, never beside a real run.

The simulated machine is "host" with costs from, in order of preference:
--machine FILE (a file written by schedlab calibrate), --costs FILE, or a
calibration run first (about ten seconds). The simulation goes through the
same run pipeline as 'schedlab run', so --kernel, --variant, --feature,
--sysctl, --seed and the other run options apply. The table is what it is:
the parameters are never tuned per case.`,
			Args: cobra.NoArgs,
			RunE: func(cmd *cobra.Command, args []string) error {
				bin, err := exec.LookPath(hackbenchBin)
				if err != nil {
					return fmt.Errorf("%s not found: install rt-tests (apt-get install rt-tests)", hackbenchBin)
				}
				var cases []calibrate.HackbenchCase
				gs, err := parseIntList(groups)
				if err != nil {
					return fmt.Errorf("--groups: %w", err)
				}
				for _, m := range strings.Split(modes, ",") {
					if m != "T" && m != "P" {
						return fmt.Errorf("--modes: %q is not T or P", m)
					}
					for _, g := range gs {
						cases = append(cases, calibrate.HackbenchCase{Mode: "-" + m, Groups: g, Loops: loops})
					}
				}
				if runs < 1 {
					return errors.New("--runs must be at least 1")
				}
				if seeds < 1 {
					return errors.New("--seeds must be at least 1")
				}
				if !(within > 0) {
					return errors.New("--within must be a positive percentage")
				}
				if err := rf.check(cmd.Flags()); err != nil {
					return err
				}
				if rf.noCosts {
					return errors.New("--no-costs: validation compares the cost model with the real machine; it needs the costs")
				}
				spec, _, how, file, err := calibrate.ValidationMachine(rf.machine, rf.costsFile, env.Stderr)
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
				seedText := fmt.Sprintf("seed %d", cfg.Seed)
				if seeds > 1 {
					seedText = fmt.Sprintf("mean of seeds %d-%d", cfg.Seed, cfg.Seed+uint64(seeds)-1)
				}
				pr := newProgress(env)
				results, err := calibrate.Validate(bin, cases, runs, seeds, cfg, pr.run)
				pr.clear()
				if err != nil {
					return err
				}
				fmt.Fprintf(env.Stdout, "machine %s (%d CPUs), costs: %s\nreal: %s, median of %d runs in rounds; simulated: schedlab, kernel %s%s, %s\n\n",
					spec.Name, len(spec.CPUs), how, bin, runs, cfg.Kernel, variantSuffix(cfg.VariantLabel()), seedText)
				return calibrate.WriteValidationTable(env.Stdout, results, within)
			},
		}
		hb.Flags().StringVar(&groups, "groups", "1,2,4", "group counts (-g)")
		hb.Flags().IntVar(&loops, "loops", 200, "messages per sender and receiver (-l)")
		hb.Flags().IntVar(&runs, "runs", 9, "real runs per case (the median is shown)")
		hb.Flags().IntVar(&seeds, "seeds", 3, "simulated runs per case, one per seed from --seed (the mean is shown)")
		hb.Flags().Float64Var(&within, "within", 15, "the tolerance the last column and the summary count, in percent of the real time")
		hb.Flags().StringVar(&modes, "modes", "T,P", "T (threads), P (processes) or both")
		rf.add(hb.Flags(), false)
		hb.Flags().Lookup("machine").Usage = "the simulated machine: a file from schedlab calibrate (default: host, calibrated now)"
		hb.Flags().Lookup("costs").Usage = "a costs file for host"
		hb.Flags().StringVar(&hackbenchBin, "hackbench", "hackbench", "the real hackbench binary")
		validate.AddCommand(hb)
		return validate
	})
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
