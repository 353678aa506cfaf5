package cli

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/schedlab/schedlab/internal/sched"
	"github.com/schedlab/schedlab/internal/texttable"
)

// schedlab variants: the patches schedlab can run against their baselines.
func init() {
	register(func(env *Env) *cobra.Command {
		var wide bool
		c := &cobra.Command{
			Use:   "variants",
			Short: "List the kernel variants (patches) schedlab models",
			Long: `List every variant: a named patch applied to a kernel baseline. Each entry gives
the variant's name, its baseline (the kernel its patch was written
against, which runs use unless --kernel names another baseline the
variant applies to), what the patch changes and the kernel functions it
touches. The list fits 100 columns, its descriptions wrapped; --wide
prints one line per variant.`,
			Args: cobra.NoArgs,
			RunE: func(c *cobra.Command, args []string) error {
				if wide {
					tw := tabwriter.NewWriter(env.Stdout, 0, 8, 2, ' ', 0)
					fmt.Fprintln(tw, "NAME\tBASELINE\tDESCRIPTION\tFUNCTIONS")
					for _, v := range sched.Variants() {
						fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", v.Name, v.BaselineText(), v.Description, strings.Join(v.Touches, ","))
					}
					return tw.Flush()
				}
				// The functions go under the description, so that one
				// column wraps.
				rows := [][]string{{"NAME", "BASELINE", "DESCRIPTION"}}
				for _, v := range sched.Variants() {
					rows = append(rows, []string{v.Name, v.BaselineText(), v.Description + "\nfunctions: " + strings.Join(v.Touches, ", ")})
				}
				return texttable.Write(env.Stdout, "", rows, texttable.Width, 1, 2)
			},
		}
		c.Flags().BoolVar(&wide, "wide", false, "one line per variant, however long (the layout before the list fitted 100 columns)")
		return c
	})
}
