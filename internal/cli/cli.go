// Package cli is schedlab's command line: one file per subcommand, each
// registering a constructor with register. Main runs a command line against
// the given writers and returns the exit status, so tests drive it with
// buffers.
//
// Exit status: 0 on success, 2 for anything the user can fix (a wrong flag, a
// malformed machine, scenario or workload file), printed as one line
// "schedlab: FILE:LINE: problem"; 130 for a sweep or compare stopped by
// Ctrl-C, with a line saying what it kept and how to go on. Bugs are
// panics and are not caught.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"regexp"
	"sort"
	"strings"

	"github.com/spf13/cobra"
)

// Env is what every subcommand may use: output streams, whether stderr is
// a terminal (progress bars are drawn only then) and whether progress
// lines go to a log (--progress or SCHEDLAB_PROGRESS=1).
type Env struct {
	Stdout        io.Writer
	Stderr        io.Writer
	Terminal      bool
	ProgressLines bool
	// Args are the command line Main was given (without the program
	// name), for the command that resumes an interrupted one.
	Args []string
	// ctx is what commands that run simulations stop on, besides
	// SIGINT (interruptible).
	ctx context.Context
}

// interruptible is the context a command that runs simulations stops on:
// the Env's, and the first SIGINT (Ctrl-C). After that SIGINT the default
// action is back, so a second Ctrl-C ends the process at once. stop
// releases the signal.
func (env *Env) interruptible() (ctx context.Context, stop func()) {
	base := env.ctx
	if base == nil {
		base = context.Background()
	}
	ctx, stop = signal.NotifyContext(base, os.Interrupt)
	go func() {
		<-ctx.Done()
		stop()
	}()
	return ctx, stop
}

// InterruptedCode is the exit status of a command stopped by Ctrl-C, the
// shell's 128 + SIGINT.
const InterruptedCode = 130

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
	root.PersistentFlags().BoolVar(&env.ProgressLines, "progress", env.ProgressLines,
		"show progress on stderr: a bar on a terminal, else a line every 5 s (also "+ProgressEnv+"=1)")
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return fmt.Errorf("%s: %s (see '%s --help')", c.CommandPath(), flagErrorText(c, err), c.CommandPath())
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
	return MainContext(context.Background(), stdout, stderr, args)
}

// MainContext is Main whose sweeps stop, as on Ctrl-C, when ctx is done.
func MainContext(ctx context.Context, stdout, stderr io.Writer, args []string) int {
	env := &Env{Stdout: stdout, Stderr: stderr, Terminal: isTerminal(stderr), Args: args, ctx: ctx}
	switch os.Getenv(ProgressEnv) {
	case "", "0", "false", "no":
	default:
		env.ProgressLines = true
	}
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

// flagValueRE matches pflag's message for a value that does not parse.
var flagValueRE = regexp.MustCompile(`^invalid argument "(.*)" for "(?:-\w, )?(--[\w-]+)" flag: `)

// flagErrorText turns a flag parsing error into one plain sentence: a bad
// value names the flag, the value and what it must be, not the parser's
// internals ("strconv.ParseUint: parsing ...").
func flagErrorText(c *cobra.Command, err error) string {
	m := flagValueRE.FindStringSubmatch(err.Error())
	if m == nil {
		return err.Error()
	}
	want := "a valid value"
	if f := c.Flags().Lookup(strings.TrimPrefix(m[2], "--")); f != nil {
		switch f.Value.Type() {
		case "uint64", "uint", "uint32":
			want = "a non-negative integer"
		case "int", "int64", "int32":
			want = "an integer"
		case "bool":
			want = "true or false"
		case "float64":
			want = "a number"
		case "duration":
			want = "a duration such as 10s"
		}
	}
	return fmt.Sprintf("%s %s: must be %s", m[2], m[1], want)
}
