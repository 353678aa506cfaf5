package cli

import (
	"github.com/spf13/cobra"

	"github.com/schedlab/schedlab/internal/costmodel"
	"github.com/schedlab/schedlab/internal/sim"
	"github.com/schedlab/schedlab/internal/texttable"
	"github.com/schedlab/schedlab/internal/topology"
)

// schedlab costs: the cost model's parameters for a machine.
func init() {
	register(func(env *Env) *cobra.Command {
		var costsFile string
		var wide bool
		c := &cobra.Command{
			Use:   "costs [MACHINE]",
			Short: "Print the cost model's parameters for a machine, with their sources",
			Long: `Print every parameter of the machine cost model (context switch, pipe and
socket calls, IPIs, cache refill, SMT and memory-bandwidth sharing, scheduler
path costs), its value for MACHINE and where the value comes from: a
datasheet, a published microbenchmark, an estimate, calibration, or the file
and line that set it.

MACHINE is a preset, "host" or a YAML machine file (default ` + sim.DefaultMachine + `).
A machine file's costs: section and --costs FILE (the same keys, at top
level) override the defaults; docs/costs.md describes every parameter. The sources
wrap to fit 100 columns; --wide prints each parameter on one line.`,
			Args: cobra.MaximumNArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				name := sim.DefaultMachine
				if len(args) == 1 {
					name = args[0]
				}
				spec, err := topology.Load(name)
				if err != nil {
					return err
				}
				p, err := costmodel.Resolve(spec, costsFile)
				if err != nil {
					return err
				}
				width := texttable.Width
				if wide {
					width = 0
				}
				return costmodel.WriteTable(env.Stdout, p, spec.Name, width)
			},
		}
		c.Flags().StringVar(&costsFile, "costs", "", "a costs file (YAML: parameter: value) applied on top")
		c.Flags().BoolVar(&wide, "wide", false, "each parameter on one line, its source unwrapped (the layout before the table fitted 100 columns)")
		return c
	})
}
