package cli

import (
	"fmt"

	"github.com/spf13/cobra"
)

// Version is schedlab's version string.
const Version = "0.1.0-dev"

func init() {
	register(func(env *Env) *cobra.Command {
		return &cobra.Command{
			Use:   "version",
			Short: "Print schedlab's version",
			Args:  cobra.NoArgs,
			RunE: func(c *cobra.Command, args []string) error {
				fmt.Fprintf(env.Stdout, "schedlab %s\n", Version)
				return nil
			},
		}
	})
}
