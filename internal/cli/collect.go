package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/schedlab/schedlab/internal/experiment"
	"github.com/schedlab/schedlab/internal/experiment/compare"
)

// schedlab collect: check a results directory written by shards (Slurm
// array tasks, or sweeps on several machines), merge other directories of
// the same experiment into it, and print the comparison tables.
func init() {
	register(func(env *Env) *cobra.Command {
		var (
			test, stats string
			quiet       bool
		)
		c := &cobra.Command{
			Use:   "collect DIR [SHARD_DIR...]",
			Short: "Check and merge the results of a sharded sweep, and print its tables",
			Long: `Check that DIR holds every run of its experiment, each matching its point
(key, seed, variant, workload), and print the comparison tables. Runs found in
further directories of the same experiment (shards swept on machines without
a shared file system) are copied into DIR first; a run present in two
directories must be identical in everything but its wall time.

Exits with status 1 when runs are missing (they are listed; continue with
'schedlab sweep --out DIR --resume'). Leftover temporary files of killed runs
are reported and removed.`,
			Args: cobra.MinimumNArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				tst, err := compare.ParseTest(test)
				if err != nil {
					return err
				}
				if err := checkStats(stats); err != nil {
					return err
				}
				dir := args[0]
				for _, other := range args[1:] {
					n, err := mergeDir(dir, other)
					if err != nil {
						return err
					}
					fmt.Fprintf(env.Stderr, "schedlab: collect: %d runs merged from %s\n", n, other)
				}
				res, err := experiment.ReadResults(dir)
				if err != nil {
					return err
				}
				for _, t := range res.Temps {
					fmt.Fprintf(env.Stderr, "schedlab: collect: removing %s (a run killed before it finished)\n", filepath.Join(dir, experiment.RunsDir, t))
					os.Remove(filepath.Join(dir, experiment.RunsDir, t))
				}
				for _, x := range res.Extra {
					fmt.Fprintf(env.Stderr, "schedlab: collect: %s belongs to no run of %s\n", filepath.Join(dir, experiment.RunsDir, x), res.Plan.Name)
				}
				total := len(res.Records) - res.Unneeded
				unneeded := ""
				if res.Unneeded > 0 {
					unneeded = fmt.Sprintf(" (%d more left out by the stopping rule: %s)", res.Unneeded, res.Plan.Sequential)
				}
				fmt.Fprintf(env.Stderr, "schedlab: collect: %s: %d of %d runs%s\n", res.Plan.Name, total-len(res.Missing), total, unneeded)
				if !quiet {
					tables, err := compare.Analyze(res.Plan, res.Records, compare.AnalyzeOptions{Test: tst})
					if err != nil {
						return err
					}
					if err := printTables(env.Stdout, tables, stats); err != nil {
						return err
					}
					if err := formatBranches(env.Stdout, res.Plan, res.Records); err != nil {
						return err
					}
				}
				if len(res.Missing) > 0 {
					show := res.Missing
					if len(show) > 10 {
						show = show[:10]
					}
					return &ExitError{Code: 1, Err: fmt.Errorf("collect: %d runs missing (%s%s): continue with 'schedlab sweep --out %s --resume'",
						len(res.Missing), strings.Join(show, ", "), map[bool]string{true: ", ...", false: ""}[len(res.Missing) > 10], dir)}
				}
				return nil
			},
		}
		c.Flags().StringVar(&test, "test", "welch", "significance test: welch, utest or paired")
		c.Flags().BoolVarP(&quiet, "quiet", "q", false, "only check and merge; do not print the tables")
		c.Flags().StringVar(&stats, "stats", "", "also print, under each table, mmtests' compare-kernels statistics: --stats mmtests")
		return c
	})
}

// mergeDir copies the runs of src missing from dst, after checking both
// hold the same experiment; a run in both must agree.
func mergeDir(dst, src string) (int, error) {
	a, err := experiment.ReadResults(dst)
	if err != nil {
		return 0, err
	}
	b, err := experiment.ReadResults(src)
	if err != nil {
		return 0, err
	}
	pa, _ := os.ReadFile(filepath.Join(dst, experiment.PlanFile))
	pb, _ := os.ReadFile(filepath.Join(src, experiment.PlanFile))
	if string(pa) != string(pb) {
		return 0, fmt.Errorf("collect: %s and %s hold different experiments (%s differs)", dst, src, experiment.PlanFile)
	}
	n := 0
	for i, r := range b.Records {
		if r == nil {
			continue
		}
		if have := a.Records[i]; have != nil {
			if string(have.Deterministic()) != string(r.Deterministic()) {
				return 0, fmt.Errorf("collect: run %s differs between %s and %s", r.Key, dst, src)
			}
			continue
		}
		if err := experiment.WriteRecord(dst, r); err != nil {
			return 0, err
		}
		n++
	}
	return n, nil
}
