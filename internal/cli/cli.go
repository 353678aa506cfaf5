// Package cli is schedlab's command line: one file per subcommand, each
// registering a constructor with register. Main runs a command line against
// the given writers and returns the exit status, so tests drive it with
// buffers.
//
// Exit status: 0 on success, 2 for anything the user can fix (a wrong flag, a
// malformed machine, scenario or workload file), printed as one line
// "schedlab: FILE:LINE: problem". Bugs are panics and are not caught.
package cli

import (
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/spf13/cobra"
)

// Env is what every subcommand may use: output streams and whether stderr
// is a terminal (progress bars are shown only then).
type Env struct {
	Stdout   io.Writer
	Stderr   io.Writer
	Terminal bool
}

var constructors []func(*Env) *cobra.Command

// register adds a subcommand constructor; each subcommand file calls it from init.
func register(f func(*Env) *cobra.Command) { constructors = append(constructors, f) }

// NewRoot builds the command tree.
func NewRoot(env *Env) *cobra.Command {
	root := &cobra.Command{
		Use:   "schedlab",
		Short: "A deterministic simulator of the Linux kernel's fair scheduler",
		Long: `schedlab models a machine (CPUs, caches, NUMA nodes and Linux's sched domains),
runs the kernel's fair class on it (EEVDF or CFS, PELT, wakeups, load balancing)
and reports what the real tools report.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(env.Stdout)
	root.SetErr(env.Stderr)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return fmt.Errorf("%s: %w (see '%s --help')", c.CommandPath(), err, c.CommandPath())
	})
	cmds := make([]*cobra.Command, 0, len(constructors))
	for _, f := range constructors {
		cmds = append(cmds, f(env))
	}
	sort.Slice(cmds, func(i, j int) bool { return cmds[i].Name() < cmds[j].Name() })
	root.AddCommand(cmds...)
	return root
}

// ExitError carries a specific exit status.
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string { return e.Err.Error() }
func (e *ExitError) Unwrap() error { return e.Err }

// Main runs schedlab with args and returns the process exit status.
func Main(stdout, stderr io.Writer, args []string) int {
	env := &Env{Stdout: stdout, Stderr: stderr, Terminal: isTerminal(stderr)}
	root := NewRoot(env)
	root.SetArgs(args)
	err := root.Execute()
	if err == nil {
		return 0
	}
	code := 2
	var ee *ExitError
	if errors.As(err, &ee) {
		code = ee.Code
	}
	msg := strings.TrimSpace(err.Error())
	// One line: user errors never print a stack or a multi-line dump.
	msg = strings.ReplaceAll(msg, "\n", "; ")
	fmt.Fprintf(stderr, "schedlab: %s\n", msg)
	return code
}
