package cli

import (
	"fmt"
	"os"
	"strings"

	"github.com/schedlab/schedlab/internal/scenario"
	"github.com/spf13/cobra"
)

func init() {
	register(func(env *Env) *cobra.Command {
		var check bool
		c := &cobra.Command{
			Use:   "scenario FILE",
			Short: "Run a scenario file and print each command's output",
			Long: `Run a scenario file (see docs/scenarios.md): build a machine, create cgroups and
tasks, advance simulated time and print runqueues, PELT values and counters.

The output is the file itself with each command's output under its "----" line,
so it can be saved as the file's expected output. With --check, compare the
outputs with the expectations already in the file and exit 1 on a difference.`,
			Args: cobra.ExactArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				file := args[0]
				data, err := os.ReadFile(file)
				if err != nil {
					return fmt.Errorf("%s: %v", file, unwrapPathError(err))
				}
				cmds, outs, err := scenario.RunFile(file, string(data))
				if err != nil {
					return err
				}
				if check {
					bad := 0
					for i, c := range cmds {
						if outs[i] != c.Expected {
							bad++
							fmt.Fprintf(env.Stdout, "%s:%d: %s: output differs\n--- expected\n%s--- got\n%s", c.File, c.Line, c.Name, c.Expected, outs[i])
						}
					}
					if bad > 0 {
						return &ExitError{1, fmt.Errorf("%s: %d of %d commands differ", file, bad, len(cmds))}
					}
					fmt.Fprintf(env.Stdout, "%s: %d commands, all as expected\n", file, len(cmds))
					return nil
				}
				fmt.Fprint(env.Stdout, scenario.Rewrite(string(data), cmds, outs))
				return nil
			},
		}
		c.Flags().BoolVar(&check, "check", false, "compare with the expected outputs in the file")
		return c
	})
}

// unwrapPathError turns "open x: no such file" into "no such file".
func unwrapPathError(err error) string {
	var pe *os.PathError
	if ok := asPathError(err, &pe); ok {
		return pe.Err.Error()
	}
	return strings.TrimSpace(err.Error())
}

func asPathError(err error, target **os.PathError) bool {
	pe, ok := err.(*os.PathError)
	if ok {
		*target = pe
	}
	return ok
}
