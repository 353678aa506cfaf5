// Package scenario runs scenario files: small scripts that build a machine,
// create cgroups and tasks with simple programs, advance simulated time and
// print the kernel model's state. The same files are the project's
// data-driven tests (testdata/scenarios/*.txt, compared with the expected
// output written under each command) and the input of `schedlab scenario`.
//
// The file format is cockroachdb/datadriven's: a command line
// "name key=value key=(a,b) word", optional input lines, a "----" line and
// the expected output, ended by a blank line. docs/scenarios.md lists every
// command.
package scenario

import (
	"fmt"
	"strings"

	"github.com/schedlab/schedlab/internal/fileerr"
)

// Command is one command of a scenario file.
type Command struct {
	File  string
	Line  int // line of the command, 1-based
	Name  string
	Args  []Arg
	Input []string // lines between the command and "----"
	// InputLine is the line number of Input[0].
	InputLine int
	Expected  string // text after "----", with a trailing newline, or ""
	HasSep    bool
	// outStart and outEnd delimit the expected output's lines (0-based,
	// end exclusive) in the file, for rewriting.
	outStart, outEnd int
}

// Arg is one argument: key=value, key=(v1,v2), or a bare key.
type Arg struct {
	Key  string
	Vals []string
}

// Parse splits a scenario file into commands.
func Parse(file, text string) ([]*Command, error) {
	lines := splitLines(text)
	var cmds []*Command
	i := 0
	for i < len(lines) {
		line := strings.TrimSpace(lines[i])
		if line == "" || strings.HasPrefix(line, "#") {
			i++
			continue
		}
		if line == "----" {
			return nil, fileerr.Errorf(file, i+1, `"----" without a command before it`)
		}
		c := &Command{File: file, Line: i + 1}
		if err := parseCommandLine(c, line); err != nil {
			return nil, err
		}
		i++
		for i < len(lines) && strings.TrimSpace(lines[i]) != "----" {
			if strings.TrimSpace(lines[i]) == "" {
				break
			}
			if c.InputLine == 0 {
				c.InputLine = i + 1
			}
			c.Input = append(c.Input, lines[i])
			i++
		}
		if i < len(lines) && strings.TrimSpace(lines[i]) == "----" {
			c.HasSep = true
			i++
			c.outStart = i
			var out []string
			// A "----" followed by "----" opens a block that may contain
			// blank lines, closed by "----" "----" (datadriven's form).
			if i < len(lines) && strings.TrimSpace(lines[i]) == "----" {
				i++
				for i < len(lines) && !(strings.TrimSpace(lines[i]) == "----" && i+1 < len(lines) && strings.TrimSpace(lines[i+1]) == "----") {
					out = append(out, lines[i])
					i++
				}
				if i >= len(lines) {
					return nil, fileerr.Errorf(file, c.Line, "unterminated ----/---- output block")
				}
				i += 2
			} else {
				for i < len(lines) && lines[i] != "" {
					out = append(out, lines[i])
					i++
				}
			}
			c.outEnd = i
			if len(out) > 0 {
				c.Expected = strings.Join(out, "\n") + "\n"
			}
		} else if len(c.Input) > 0 || i < len(lines) {
			// A command without "----" is allowed only at the end.
			if i < len(lines) {
				return nil, fileerr.Errorf(file, c.Line, "command %q is not followed by a \"----\" line", c.Name)
			}
		}
		cmds = append(cmds, c)
	}
	return cmds, nil
}

func parseCommandLine(c *Command, line string) error {
	fields, err := splitFields(line)
	if err != nil {
		return &fileerr.Error{File: c.File, Line: c.Line, Msg: err.Error()}
	}
	c.Name = fields[0]
	for _, f := range fields[1:] {
		k, v, ok := strings.Cut(f, "=")
		if !ok {
			c.Args = append(c.Args, Arg{Key: f})
			continue
		}
		if k == "" {
			return fileerr.Errorf(c.File, c.Line, "argument %q has no name", f)
		}
		if strings.HasPrefix(v, "(") {
			if !strings.HasSuffix(v, ")") {
				return fileerr.Errorf(c.File, c.Line, "argument %q: unclosed parenthesis", f)
			}
			inner := v[1 : len(v)-1]
			var vals []string
			for _, s := range strings.Split(inner, ",") {
				vals = append(vals, strings.TrimSpace(s))
			}
			c.Args = append(c.Args, Arg{Key: k, Vals: vals})
			continue
		}
		c.Args = append(c.Args, Arg{Key: k, Vals: []string{v}})
	}
	return nil
}

// splitFields splits on spaces outside parentheses.
func splitFields(line string) ([]string, error) {
	var out []string
	depth := 0
	start := -1
	for i, r := range line {
		switch {
		case r == '(':
			depth++
		case r == ')':
			depth--
			if depth < 0 {
				return nil, fmt.Errorf("unbalanced ')'")
			}
		}
		if (r == ' ' || r == '\t') && depth == 0 {
			if start >= 0 {
				out = append(out, line[start:i])
				start = -1
			}
			continue
		}
		if start < 0 {
			start = i
		}
	}
	if depth != 0 {
		return nil, fmt.Errorf("unbalanced '('")
	}
	if start >= 0 {
		out = append(out, line[start:])
	}
	return out, nil
}

// splitLines splits a file into lines without their line endings: "\n"
// or "\r\n", and any further carriage returns before the newline (a
// CRLF file edited into "\r\r\n" would otherwise keep a stray "\r"
// that the next rewrite turns into a different line ending).
func splitLines(text string) []string {
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, "\r")
	}
	return lines
}

// Rewrite returns the file text with each command's expected output
// replaced by outputs[i], keeping everything else (comments included).
func Rewrite(text string, cmds []*Command, outputs []string) string {
	lines := splitLines(text)
	var b strings.Builder
	pos := 0
	for i, c := range cmds {
		if !c.HasSep {
			continue
		}
		for ; pos < c.outStart; pos++ {
			b.WriteString(lines[pos])
			b.WriteByte('\n')
		}
		b.WriteString(formatOutput(outputs[i]))
		pos = c.outEnd
	}
	for ; pos < len(lines); pos++ {
		b.WriteString(lines[pos])
		if pos != len(lines)-1 {
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// formatOutput renders an output for the file: plain, or in a
// ----/---- block when it contains blank lines.
func formatOutput(out string) string {
	if out != "" && !strings.HasSuffix(out, "\n") {
		out += "\n"
	}
	if strings.Contains(out, "\n\n") || strings.HasPrefix(out, "\n") {
		return "----\n" + out + "----\n----\n"
	}
	return out
}
