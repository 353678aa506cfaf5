package cli

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/schedlab/schedlab/internal/costmodel"
	"github.com/schedlab/schedlab/internal/cpumask"
	"github.com/schedlab/schedlab/internal/kernels"
	"github.com/schedlab/schedlab/internal/topology"
)

// schedlab machines: the built-in machines.
func init() {
	register(func(env *Env) *cobra.Command {
		return &cobra.Command{
			Use:   "machines",
			Short: "List the built-in machines",
			Long: `List the built-in machine presets with their CPU counts. Any command that takes
a machine also accepts "host" (this machine, read from /sys) or the path of a
YAML machine file (see docs/machines.md).`,
			Args: cobra.NoArgs,
			RunE: func(c *cobra.Command, args []string) error {
				tw := tabwriter.NewWriter(env.Stdout, 0, 8, 2, ' ', 0)
				fmt.Fprintln(tw, "NAME\tCPUS\tDESCRIPTION")
				for _, p := range topology.Presets() {
					fmt.Fprintf(tw, "%s\t%d\t%s\n", p.Name, p.NrCPUs, p.Description)
				}
				fmt.Fprintf(tw, "%s\t-\tthis machine, read from /sys\n", topology.HostName)
				return tw.Flush()
			},
		}
	})
}

// schedlab machine show: a machine's CPUs and sched domains.
func init() {
	register(func(env *Env) *cobra.Command {
		machine := &cobra.Command{
			Use:   "machine",
			Short: "Inspect a machine model",
			Args:  cobra.NoArgs,
			RunE: func(c *cobra.Command, args []string) error {
				return fmt.Errorf("%s: missing subcommand (see '%s --help')", c.CommandPath(), c.CommandPath())
			},
		}
		var kernel, cpus string
		var asJSON, asYAML bool
		show := &cobra.Command{
			Use:   "show NAME|FILE",
			Short: "Print a machine's CPUs and the sched domains Linux builds for it",
			Long: `Print a machine (a preset name, "host", or a YAML machine file): its CPUs,
node distances and idle states, then each CPU's sched domains the way the
kernel's sched_domain debug output shows them at boot, with each domain's
flags and sd_init parameters.

With --yaml, write the machine as a machine file instead: loading it gives the
same domains, flags, idle states and cost parameters (every one written out
with its source), a starting point for a machine of your own.`,
			Args: cobra.ExactArgs(1),
			RunE: func(c *cobra.Command, args []string) error {
				spec, err := topology.Load(args[0])
				if err != nil {
					return err
				}
				if _, err := costmodel.For(spec); err != nil { // the file's costs: section
					return err
				}
				if asYAML {
					for _, f := range []string{"json", "cpu", "kernel"} {
						if c.Flags().Changed(f) {
							return fmt.Errorf("--yaml writes the whole machine, for every kernel: drop --%s", f)
						}
					}
					return writeMachineYAML(env.Stdout, spec)
				}
				topo, err := topology.Build(spec, topology.Options{Kernel: kernel})
				if err != nil {
					return err
				}
				mask := cpumask.Full(topo.NrCPUs)
				if cpus != "" {
					if mask, err = cpumask.Parse(topo.NrCPUs, cpus); err != nil {
						return fmt.Errorf("--cpu: %w", err)
					}
				}
				if asJSON {
					return topology.FormatJSONCPUs(env.Stdout, topo, mask)
				}
				return topology.FormatTextCPUs(env.Stdout, topo, mask)
			},
		}
		show.Flags().StringVar(&kernel, "kernel", kernels.V619, "kernel baseline: "+strings.Join(kernels.Names(), ", "))
		show.Flags().BoolVar(&asJSON, "json", false, "print JSON instead of text")
		show.Flags().BoolVar(&asYAML, "yaml", false, "write the machine as a YAML machine file that loads back as the same machine")
		show.Flags().StringVar(&cpus, "cpu", "", "only these CPUs (a cpu list such as 0-3,128)")
		machine.AddCommand(show)
		return machine
	})
}
