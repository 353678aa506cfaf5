package cli

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/schedlab/schedlab/internal/experiment"
	"github.com/schedlab/schedlab/internal/experiment/compare"
	"github.com/schedlab/schedlab/internal/report"
)

// schedlab report: a results directory as one self-contained HTML file.
func init() {
	register(func(env *Env) *cobra.Command {
		var out, plotsDir, test, heat string
		c := &cobra.Command{
			Use:   "report RESULTS_DIR -o report.html",
			Short: "Render a sweep's results as one self-contained HTML report with plots",
			Long: `Render a results directory (from 'schedlab sweep') as one HTML file that needs
nothing else: the comparison tables, a bar chart with confidence intervals per
table, latency CDFs for workloads that report latency percentiles (schbench's
drawn from its whole latency histogram), per-CPU occupancy heat maps of traced
runs with a colour scale (sweep with --trace, or an experiment with trace:
true), and the schedstat comparison of the variants. --plots-dir also writes
every plot as SVG and PNG files.`,
			Args: cobra.ExactArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				if out == "" && plotsDir == "" {
					return fmt.Errorf("report: give -o FILE.html and/or --plots-dir DIR")
				}
				tst, err := compare.ParseTest(test)
				if err != nil {
					return err
				}
				switch heat {
				case "last-load", "all", "none":
				default:
					return fmt.Errorf("report: --heatmaps %q: last-load, all or none", heat)
				}
				res, err := experiment.ReadResults(args[0])
				if err != nil {
					return err
				}
				if len(res.Found()) == 0 {
					return fmt.Errorf("report: %s holds no runs yet", args[0])
				}
				rep, err := report.Build(res, report.Options{Test: tst, Heatmaps: heat})
				if err != nil {
					return err
				}
				if out != "" {
					if err := os.WriteFile(out, rep.HTML, 0o644); err != nil {
						return fmt.Errorf("%s: %v", out, unwrapPathError(err))
					}
				}
				if plotsDir != "" {
					if err := report.WritePlots(plotsDir, rep); err != nil {
						return err
					}
				}
				fmt.Fprintf(env.Stderr, "schedlab: report of %s: %s, %s, %s, %s",
					res.Plan.Name, counted(rep.Count("bars"), "table"), counted(rep.Count("bars"), "bar chart"),
					counted(rep.Count("cdf"), "latency CDF"), counted(rep.Count("heatmap"), "heat map"))
				if len(res.Missing) > 0 {
					fmt.Fprintf(env.Stderr, " (%d runs missing)", len(res.Missing))
				}
				fmt.Fprintln(env.Stderr)
				return nil
			},
		}
		c.Flags().StringVarP(&out, "output", "o", "", "the HTML file to write")
		c.Flags().StringVar(&plotsDir, "plots-dir", "", "also write every plot as SVG and PNG into this directory")
		c.Flags().StringVar(&test, "test", "welch", "significance test: welch or utest")
		c.Flags().StringVar(&heat, "heatmaps", "last-load", "traced runs to draw: last-load (every variant at each workload's last load), all, none")
		return c
	})
}

// counted is n and the noun, in the plural unless n is 1 ("1 table",
// "0 heat maps").
func counted(n int, noun string) string { return fmt.Sprintf("%d %s%s", n, noun, plural(n)) }
