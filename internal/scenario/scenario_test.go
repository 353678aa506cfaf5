package scenario

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/schedlab/schedlab/internal/golden"
)

// TestScenarios runs every testdata/scenarios/*.txt file and compares each
// command's output with the expected text under it. With -rewrite the
// expected outputs are replaced by the actual ones; review them with git
// diff before committing.
func TestScenarios(t *testing.T) {
	files, err := filepath.Glob("testdata/scenarios/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no scenario files: %v", err)
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".txt"), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			cmds, outs, err := RunFile(f, string(data))
			if err != nil {
				t.Fatal(err)
			}
			if golden.Rewriting() {
				if err := os.WriteFile(f, []byte(Rewrite(string(data), cmds, outs)), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			for i, c := range cmds {
				if outs[i] != c.Expected {
					t.Errorf("%s:%d: %s\n--- expected\n%s--- got\n%s", f, c.Line, c.Name, c.Expected, outs[i])
				}
			}
		})
	}
}

// TestDeterminism runs each scenario twice and requires byte-identical
// output, including the hash of every traced event.
func TestDeterminism(t *testing.T) {
	files, _ := filepath.Glob("testdata/scenarios/*.txt")
	for _, f := range files {
		data, _ := os.ReadFile(f)
		_, a, errA := RunFile(f, string(data))
		_, b, errB := RunFile(f, string(data))
		if errA != nil || errB != nil {
			t.Fatalf("%s: %v %v", f, errA, errB)
		}
		if strings.Join(a, "\x00") != strings.Join(b, "\x00") {
			t.Errorf("%s: two runs differ", f)
		}
	}
}

func TestErrorsNameFileAndLine(t *testing.T) {
	for _, tc := range []struct{ text, want string }{
		{"machine name=hikey\n----\n\nbogus\n----\n", "s.txt:4: unknown command \"bogus\""},
		{"task name=a\nrun 1ms\n----\n", "s.txt:1: \"task\" before the machine command"},
		{"machine name=hikey\n----\n\ntask name=a\nrun 1x\n----\n", "s.txt:5: run: bad duration \"1x\""},
		{"machine name=nosuch\n----\n", "s.txt:1: "},
		{"machine name=hikey kernel=v1.0\n----\n", "s.txt:1: unknown kernel \"v1.0\""},
		{"machine name=hikey\n----\n\nadvance by=-3ms\n----\n", "s.txt:4: advance: bad duration"},
		{"machine name=hikey\n----\n\nrq cpu=99\n----\n", "s.txt:4: cpu=99"},
		{"machine name=hikey\n----\n\ntask name=a cpu=1\nwake b\n----\n", "s.txt:4: task: the program must run"},
		{"machine name=hikey\n----\n\nfeature NO_FOO\n----\n", "s.txt:4: unknown sched feature \"NO_FOO\""},
		{"machine name=hikey\n----\n\nfeature START_DEBIT\n----\n", "s.txt:4: feature START_DEBIT is not in v6.19"},
		// A command needs its "----" even when nothing is expected.
		{"machine name=hikey\n----\nx\n\nrq\n", "s.txt:5: command \"rq\" is not followed by a \"----\" line"},
		// A wrong expectation is a difference, not an error (want "").
		{"machine name=hikey\n----\nx\n\nrq\n----\n", ""},
		{"----\n", "s.txt:1: \"----\" without a command"},
		{"machine name=hikey bad=(1\n----\n", "s.txt:1: unbalanced '('"},
	} {
		cmds, outs, err := RunFile("s.txt", tc.text)
		if tc.want == "" {
			if err != nil {
				t.Errorf("%q: unexpected error %v", tc.text, err)
				continue
			}
			if len(cmds) != 2 || cmds[0].Expected != "x\n" || !strings.HasPrefix(outs[0], "machine hikey: 8 CPUs") || outs[1] != "" {
				t.Errorf("%q: %d commands, outputs %q", tc.text, len(cmds), outs)
			}
			continue
		}
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%q: got error %v, want prefix %q", tc.text, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: error spans lines: %q", tc.text, err)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add("machine name=hikey\n----\n\ntask name=a cpu=0\nrun 8ms; sleep 8ms; loop\n----\n")
	f.Add("rq cpu=(0,1)\n----\n----\nx\n\ny\n----\n----\n")
	f.Fuzz(func(t *testing.T, s string) {
		cmds, err := Parse("f.txt", s)
		if err != nil {
			return
		}
		outs := make([]string, len(cmds))
		for i, c := range cmds {
			outs[i] = c.Expected
		}
		// Rewriting with the parsed expectations must give a file that
		// parses to the same commands: names, arguments, input lines and
		// expected outputs; and rewriting that file again changes nothing.
		text := Rewrite(s, cmds, outs)
		again, err := Parse("f.txt", text)
		if err != nil || len(again) != len(cmds) {
			t.Fatalf("rewrite changed the file: %v", err)
		}
		for i, c := range cmds {
			a := again[i]
			if a.Name != c.Name || !reflect.DeepEqual(a.Args, c.Args) || !reflect.DeepEqual(a.Input, c.Input) ||
				a.Expected != c.Expected || a.HasSep != c.HasSep {
				t.Fatalf("command %d changed in the rewrite:\n%+v\n%+v\nfile:\n%s", i, *c, *a, text)
			}
		}
		if text2 := Rewrite(text, again, outs); text2 != text {
			t.Fatalf("a second rewrite changed the file:\n%q\n%q", text, text2)
		}
	})
}
