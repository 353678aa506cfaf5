package experiment

import (
	"fmt"
	"strings"
)

// Param is the one ranged argument of a workload's command line: the token
// whose comma-separated values are the loads, e.g. "1,2,4" in
// `hackbench -p -T -l 2000 -g 1,2,4`.
type Param struct {
	// Name labels the rows of the table and the benchmark names
	// ("groups", "workers", "clients").
	Name string `json:"name"`
	// Flag is the option the values belong to ("-g", "--groups"); empty
	// for a positional argument.
	Flag string `json:"flag,omitempty"`
	// Index is the position of the ranged token in the arguments, -1 when
	// nothing is ranged (one load).
	Index int `json:"index"`
	// Prefix is what precedes the value in that token: "-g" for "-g1,2",
	// "--groups=" for "--groups=1,2", "" for a separate token.
	Prefix string   `json:"prefix,omitempty"`
	Values []string `json:"values"`
}

// single is the load label of a workload without a ranged argument.
const single = "-"

// paramNames names a tool's options as the tables label them.
var paramNames = map[string]map[string]string{
	"hackbench": {"-g": "groups", "--groups": "groups", "-f": "fds", "--fds": "fds",
		"-l": "loops", "--loops": "loops", "-s": "datasize", "--datasize": "datasize"},
	"perf-bench-messaging": {"-g": "groups", "--group": "groups", "-l": "loops", "--nr_loops": "loops"},
	"perf":                 {"-g": "groups", "--group": "groups", "-l": "loops", "--nr_loops": "loops"},
	"schbench": {"-t": "workers", "--threads": "workers", "-m": "message-threads", "--message-threads": "message-threads",
		"-r": "runtime", "--runtime": "runtime", "-s": "sleeptime", "--sleeptime": "sleeptime",
		"-c": "cputime", "--cputime": "cputime", "-R": "rps", "--rps": "rps"},
	"stream": {"OMP_NUM_THREADS": "threads", "STREAM_ARRAY_SIZE": "array-size", "NTIMES": "ntimes"},
	"tbench": {"": "clients", "-t": "timelimit", "--timelimit": "timelimit"},
}

// ParseCommand splits a workload command line (tool, then the tool's own
// arguments) and finds its ranged argument: the one token holding a
// comma-separated list. A token is ranged in four spellings: a separate
// value ("-g 1,2,4", or a positional "1,2,4"), a short option with its value
// attached ("-g1,2,4"), a long option with "=" ("--groups=1,2,4"), or a
// NAME=VALUE word (STREAM's "OMP_NUM_THREADS=4,16").
func ParseCommand(cmd []string) (tool string, args []string, p Param, err error) {
	if len(cmd) == 0 || cmd[0] == "" {
		return "", nil, Param{}, fmt.Errorf("empty workload command")
	}
	tool, args = cmd[0], append([]string{}, cmd[1:]...)
	p.Index = -1
	for i, a := range args {
		if !strings.Contains(a, ",") {
			continue
		}
		if p.Index >= 0 {
			return "", nil, Param{}, fmt.Errorf("more than one ranged argument (%q and %q): range one parameter per workload", args[p.Index], a)
		}
		q := Param{Index: i}
		val := a
		switch {
		case strings.HasPrefix(a, "--"):
			eq := strings.IndexByte(a, '=')
			if eq < 0 {
				return "", nil, Param{}, fmt.Errorf("ranged argument %q: write --option=v1,v2,...", a)
			}
			q.Flag, q.Prefix, val = a[:eq], a[:eq+1], a[eq+1:]
		case strings.HasPrefix(a, "-") && len(a) > 2 && !isNumberStart(a[1]):
			q.Flag, q.Prefix, val = a[:2], a[:2], a[2:]
		case strings.Contains(a[:strings.IndexByte(a, ',')], "="):
			// NAME=v1,v2: STREAM's build settings.
			eq := strings.IndexByte(a, '=')
			q.Flag, q.Prefix, val = a[:eq], a[:eq+1], a[eq+1:]
		default:
			if i > 0 && takesValue(args[i-1]) {
				q.Flag = args[i-1]
			}
		}
		for _, v := range strings.Split(val, ",") {
			v = strings.TrimSpace(v)
			if v == "" {
				return "", nil, Param{}, fmt.Errorf("ranged argument %q has an empty value", a)
			}
			for _, seen := range q.Values {
				if seen == v {
					return "", nil, Param{}, fmt.Errorf("ranged argument %q lists %s twice", a, v)
				}
			}
			q.Values = append(q.Values, v)
		}
		p = q
	}
	if p.Index < 0 {
		p.Values = []string{single}
		return tool, args, p, nil
	}
	p.Name = paramName(tool, p.Flag)
	return tool, args, p, nil
}

func isNumberStart(c byte) bool { return c >= '0' && c <= '9' || c == '.' }

// takesValue reports whether tok is an option whose value may be the next
// token: "-g" or "--groups" (not "-g4", "--groups=4" or a negative number).
func takesValue(tok string) bool {
	if len(tok) < 2 || tok[0] != '-' || isNumberStart(tok[1]) {
		return false
	}
	if tok[1] == '-' {
		return len(tok) > 2 && !strings.Contains(tok, "=")
	}
	return len(tok) == 2
}

func paramName(tool, flag string) string {
	if n, ok := paramNames[tool][flag]; ok {
		return n
	}
	if flag == "" {
		return "arg"
	}
	return strings.TrimLeft(flag, "-")
}

// ArgsFor returns the tool's arguments for one load.
func (p *Param) ArgsFor(args []string, value string) []string {
	out := append([]string{}, args...)
	if p.Index >= 0 {
		out[p.Index] = p.Prefix + value
	}
	return out
}

// Display is the command line with the ranged values shown as given.
func Display(tool string, args []string) string {
	return strings.Join(append([]string{tool}, args...), " ")
}

// DisplayRanged is the command line with the ranged token replaced by
// a placeholder: "hackbench -p -T -l 2000 -g N".
func (p *Param) DisplayRanged(tool string, args []string) string {
	if p.Index < 0 {
		return Display(tool, args)
	}
	return Display(tool, p.ArgsFor(args, "N"))
}

// SplitCommand splits a command line written as one string on blanks,
// keeping single- or double-quoted parts together (no escapes, no
// variables: it is not a shell).
func SplitCommand(s string) ([]string, error) {
	var out []string
	var cur strings.Builder
	have := false
	var quote byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			} else {
				cur.WriteByte(c)
			}
		case c == '\'' || c == '"':
			quote, have = c, true
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			if have {
				out = append(out, cur.String())
				cur.Reset()
				have = false
			}
		default:
			cur.WriteByte(c)
			have = true
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("unterminated %c quote in %q", quote, s)
	}
	if have {
		out = append(out, cur.String())
	}
	return out, nil
}
