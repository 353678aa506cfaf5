// Package getopt parses a benchmark's own command line the way glibc's
// getopt_long does, so that `schedlab run TOOL ARGS` accepts exactly the
// spellings the real tool accepts (bundled short options "-pT", attached
// values "-l20000", "--loops=20000" or "--loops 20000", unambiguous
// abbreviations of long options "--loo 5", non-options anywhere) and
// rejects the rest with getopt's own messages, each naming the option.
package getopt

import (
	"fmt"
	"strings"
)

// Option describes one option. Short is 0 for a long-only option; Long is
// "" for a short-only one.
type Option struct {
	Short  byte
	Long   string
	HasArg bool
}

// Opt is one option found on the command line.
type Opt struct {
	Option *Option
	Arg    string
	// Name is how the user spelled it ("-l" or "--loops"), for messages.
	Name string
}

// Error is a command-line mistake, worded as getopt prints it
// ("hackbench: invalid option -- 'x'").
type Error struct {
	Prog, Msg string
}

func (e *Error) Error() string { return e.Prog + ": " + e.Msg }

// Parse parses args (without the program name) against opts. It returns
// the options in order and the non-option arguments; "--" ends option
// parsing.
func Parse(prog string, opts []Option, args []string) ([]Opt, []string, error) {
	var out []Opt
	var rest []string
	fail := func(format string, a ...any) ([]Opt, []string, error) {
		return nil, nil, &Error{prog, fmt.Sprintf(format, a...)}
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			rest = append(rest, args[i+1:]...)
			return out, rest, nil
		case strings.HasPrefix(a, "--"):
			_, val, hasVal := strings.Cut(a[2:], "=")
			o, err := findLong(opts, a[2:])
			if err != "" {
				return fail("%s", err)
			}
			if o.HasArg {
				if !hasVal {
					if i+1 >= len(args) {
						return fail("option '--%s' requires an argument", o.Long)
					}
					i++
					val = args[i]
				}
			} else if hasVal {
				return fail("option '--%s' doesn't allow an argument", o.Long)
			}
			out = append(out, Opt{o, val, "--" + o.Long})
		case len(a) > 1 && a[0] == '-':
			for j := 1; j < len(a); j++ {
				c := a[j]
				o := findShort(opts, c)
				if o == nil {
					return fail("invalid option -- '%c'", c)
				}
				if !o.HasArg {
					out = append(out, Opt{o, "", "-" + string(c)})
					continue
				}
				val := a[j+1:]
				if val == "" {
					if i+1 >= len(args) {
						return fail("option requires an argument -- '%c'", c)
					}
					i++
					val = args[i]
				}
				out = append(out, Opt{o, val, "-" + string(c)})
				break
			}
		default:
			rest = append(rest, a)
		}
	}
	return out, rest, nil
}

func findShort(opts []Option, c byte) *Option {
	for i := range opts {
		if opts[i].Short == c && c != 0 {
			return &opts[i]
		}
	}
	return nil
}

// findLong finds an exact or unambiguous-prefix match; on failure it
// returns getopt's message.
func findLong(opts []Option, arg string) (*Option, string) {
	name, _, _ := strings.Cut(arg, "=")
	var match *Option
	var possible []string
	n := 0
	for i := range opts {
		l := opts[i].Long
		if l == "" {
			continue
		}
		if l == name {
			return &opts[i], ""
		}
		if name != "" && strings.HasPrefix(l, name) {
			match = &opts[i]
			possible = append(possible, "'--"+l+"'")
			n++
		}
	}
	switch n {
	case 0:
		return nil, fmt.Sprintf("unrecognized option '--%s'", arg)
	case 1:
		return match, ""
	}
	return nil, fmt.Sprintf("option '--%s' is ambiguous; possibilities: %s", name, strings.Join(possible, " "))
}
