package getopt

import (
	"reflect"
	"strings"
	"testing"
)

var hb = []Option{
	{'p', "pipe", false}, {'T', "threads", false}, {'P', "process", false},
	{'l', "loops", true}, {'g', "groups", true}, {'f', "fds", true}, {'s', "datasize", true},
	{'F', "fifo", false}, {'i', "inet", false},
}

func names(opts []Opt) string {
	var b []string
	for _, o := range opts {
		if o.Option.HasArg {
			b = append(b, o.Name+"="+o.Arg)
		} else {
			b = append(b, o.Name)
		}
	}
	return strings.Join(b, " ")
}

func TestParse(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
		rest []string
	}{
		{[]string{"-p", "-T", "-l", "20000", "-g", "4"}, "-p -T -l=20000 -g=4", nil},
		{[]string{"-pTl20000", "-g4"}, "-p -T -l=20000 -g=4", nil},
		{[]string{"--loops=5", "--groups", "3", "--thr"}, "--loops=5 --groups=3 --threads", nil},
		{[]string{"x", "-p", "--", "-T"}, "-p", []string{"x", "-T"}},
	} {
		got, rest, err := Parse("hackbench", hb, c.args)
		if err != nil {
			t.Errorf("%v: %v", c.args, err)
			continue
		}
		if names(got) != c.want || !reflect.DeepEqual(rest, c.rest) {
			t.Errorf("%v: got %q %q, want %q %q", c.args, names(got), rest, c.want, c.rest)
		}
	}
}

// The messages are glibc getopt_long's.
func TestErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-x"}, "hackbench: invalid option -- 'x'"},
		{[]string{"-l"}, "hackbench: option requires an argument -- 'l'"},
		{[]string{"--bogus"}, "hackbench: unrecognized option '--bogus'"},
		{[]string{"--loops"}, "hackbench: option '--loops' requires an argument"},
		{[]string{"--pipe=1"}, "hackbench: option '--pipe' doesn't allow an argument"},
		{[]string{"--p"}, "hackbench: option '--p' is ambiguous; possibilities: '--pipe' '--process'"},
		{[]string{"--bogus=3"}, "hackbench: unrecognized option '--bogus=3'"},
	} {
		_, _, err := Parse("hackbench", hb, c.args)
		if err == nil || err.Error() != c.want {
			t.Errorf("%v: error %v, want %q", c.args, err, c.want)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add("-p -T -l 20000 -g 4")
	f.Add("--loops=3 -pTg2 -- x")
	f.Fuzz(func(t *testing.T, s string) {
		opts, rest, err := Parse("hackbench", hb, strings.Fields(s))
		if err != nil {
			if !strings.HasPrefix(err.Error(), "hackbench: ") || strings.Contains(err.Error(), "\n") {
				t.Fatalf("bad error %q", err)
			}
			return
		}
		for _, o := range opts {
			if o.Option == nil {
				t.Fatal("nil option")
			}
		}
		_ = rest
	})
}
