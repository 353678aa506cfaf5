package cli

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/schedlab/schedlab/internal/sched"
)

// schedlab variants: the patches schedlab can run against their baselines.
func init() {
	register(func(env *Env) *cobra.Command {
		return &cobra.Command{
			Use:   "variants",
			Short: "List the kernel variants (patches) schedlab models",
			Long: `List every variant: a named patch applied to a kernel baseline. Each line gives
the variant's name, its baseline (the kernel its patch was written
against, which runs use unless --kernel names another baseline the
variant applies to), what the patch changes and the kernel functions it
touches.`,
			Args: cobra.NoArgs,
			RunE: func(c *cobra.Command, args []string) error {
				tw := tabwriter.NewWriter(env.Stdout, 0, 8, 2, ' ', 0)
				fmt.Fprintln(tw, "NAME\tBASELINE\tDESCRIPTION\tFUNCTIONS")
				for _, v := range sched.Variants() {
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", v.Name, v.BaselineText(), v.Description, strings.Join(v.Touches, ","))
				}
				return tw.Flush()
			},
		}
	})
}
