package cli

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/schedlab/schedlab/internal/experiment"
)

// schedlab experiments: the built-in experiments, one per patch of
// patches.md, runnable by name with 'schedlab sweep NAME'.
func init() {
	register(func(env *Env) *cobra.Command {
		c := &cobra.Command{
			Use:   "experiments [show NAME]",
			Short: "List the built-in experiments (one per patch schedlab models)",
			Long: `List the built-in experiments: for each patch schedlab models, the machines,
variants and benchmarks of its evaluation, at sizes that run in minutes (the
published sizes are the profile "paper"). Run one with
'schedlab sweep NAME --out DIR'; 'schedlab experiments show NAME' prints its
file, a starting point for your own (docs/experiments.md).

Workloads and variants that this schedlab does not model yet are listed as
skipped, and a sweep leaves them out.`,
			Args: cobra.NoArgs,
			RunE: func(cmd *cobra.Command, args []string) error {
				tw := tabwriter.NewWriter(env.Stdout, 0, 8, 2, ' ', 0)
				fmt.Fprintln(tw, "NAME\tRUNS\tMACHINES\tVARIANTS\tWORKLOADS\tPROFILES\tSKIPPED")
				for _, s := range experiment.Builtins() {
					plan, err := experiment.Resolve(s, experiment.ResolveOptions{AllowMissing: true})
					if err != nil {
						return err
					}
					var machines, workloads, profiles []string
					for _, m := range plan.Machines {
						machines = append(machines, m.Label)
					}
					for _, w := range plan.Workloads {
						workloads = append(workloads, w.Name)
					}
					for _, p := range s.Profiles {
						profiles = append(profiles, p.Name)
					}
					skipped := "-"
					if len(plan.Skipped) > 0 {
						skipped = strings.Join(plan.Skipped, ", ")
					}
					fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%s\n", s.Name, len(plan.Points()), strings.Join(machines, ","),
						strings.Join(plan.Variants[1:], ","), strings.Join(workloads, ","), orDash(strings.Join(profiles, ",")), skipped)
				}
				return tw.Flush()
			},
		}
		c.AddCommand(&cobra.Command{
			Use:   "show NAME",
			Short: "Print a built-in experiment's file",
			Args:  cobra.ExactArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				data, ok := experiment.BuiltinSource(args[0])
				if !ok {
					var names []string
					for _, s := range experiment.Builtins() {
						names = append(names, s.Name)
					}
					return fmt.Errorf("no built-in experiment %q (have %s)", args[0], strings.Join(names, ", "))
				}
				_, err := env.Stdout.Write(data)
				return err
			},
		})
		return c
	})
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
