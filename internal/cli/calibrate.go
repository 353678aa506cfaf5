package cli

import (
	"bytes"
	"fmt"
	"os"
	"runtime"

	"github.com/spf13/cobra"

	"github.com/schedlab/schedlab/internal/calibrate"
	"github.com/schedlab/schedlab/internal/topology"
)

// schedlab calibrate: measure this host's costs and write a machine file.
func init() {
	register(func(env *Env) *cobra.Command {
		var out, name string
		var quick bool
		c := &cobra.Command{
			Use:   "calibrate",
			Short: "Measure this machine's costs and write a machine file with them",
			Long: `Run microbenchmarks on this machine and write a YAML machine file: the
topology as /sys describes it (like the "host" machine) and a costs: section
with the measured parameters, each with how it was measured:

  syscall (getppid); pipe and AF_UNIX socket write/read per call and per byte;
  pipe ping-pong between two threads pinned to one CPU (context switch) and to
  CPUs at each distance the host has: SMT sibling, same LLC, other LLC, other
  node (wakeup latency); a token passed round a ring of 8 threads and of 8
  processes on one CPU (the extra cost of switching address spaces);
  cache-line bounces at those distances; SMT throughput
  sharing; memory-copy bandwidth with 1..N threads on one LLC and one node.

Parameters the host cannot show keep their generic defaults. The figures are
noisy (run it on an otherwise idle machine); --quick runs about a tenth as
long. Progress goes to stderr; the file to -o FILE or stdout. Use the file as
a machine (schedlab run --machine FILE ...) or with --costs.`,
			Args: cobra.NoArgs,
			RunE: func(cmd *cobra.Command, args []string) error {
				spec, err := topology.ReadHost()
				if err != nil {
					return err
				}
				if name != "" {
					spec.Name = name
				}
				spec.Description = "this machine, read from /sys, with costs measured by schedlab calibrate"
				fmt.Fprintf(env.Stderr, "calibrating %d CPUs (%s)...\n", len(spec.CPUs), runtime.GOARCH)
				m, err := calibrate.Measure(spec, calibrate.Options{Quick: quick, Log: env.Stderr})
				if err != nil {
					return err
				}
				var b bytes.Buffer
				if err := calibrate.WriteMachine(&b, spec, calibrate.Derive(m, spec), calibrationComment(m)); err != nil {
					return err
				}
				if out == "" {
					_, err = env.Stdout.Write(b.Bytes())
					return err
				}
				if err := os.WriteFile(out, b.Bytes(), 0o644); err != nil {
					return err
				}
				fmt.Fprintf(env.Stderr, "wrote %s\n", out)
				return nil
			},
		}
		c.Flags().StringVarP(&out, "output", "o", "", "write the machine file here instead of stdout")
		c.Flags().StringVar(&name, "name", "", "machine name in the file (default: host)")
		c.Flags().BoolVar(&quick, "quick", false, "shorter runs, noisier figures")
		return c
	})
}

func calibrationComment(m *calibrate.Measurements) []string {
	return []string{
		"Written by schedlab calibrate: this machine's topology from /sys and the",
		"cost parameters its microbenchmarks measured (docs/costs.md).",
		fmt.Sprintf("host %s, kernel %s, %s, %s, load average %.2f at the start", m.Host, m.Kernel, m.CPUModel, m.Date, m.LoadAvg),
	}
}
