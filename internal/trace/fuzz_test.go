package trace

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzParseLine: the parser never panics, and whatever it accepts prints
// back to a line that parses to the same event.
func FuzzParseLine(f *testing.F) {
	for _, name := range []string{"ftrace-small.txt"} {
		data, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		for _, l := range strings.Split(string(data), "\n") {
			if l != "" && l[0] != '#' {
				f.Add([]byte(l))
			}
		}
	}
	f.Add([]byte("           <...>-1       [000] d..2.     0.000001: sched_process_exit: comm=x pid=1 prio=120"))
	f.Fuzz(func(t *testing.T, line []byte) {
		ev, err := ParseLine(line)
		if err != nil {
			return
		}
		out := AppendLine(nil, &ev)
		back, err := ParseLine(bytes.TrimSuffix(out, []byte{'\n'}))
		if err != nil {
			t.Fatalf("reparse of %q (from %q): %v", out, line, err)
		}
		if back != ev {
			t.Fatalf("round trip of %q:\n got %+v\nwant %+v", line, back, ev)
		}
	})
}
