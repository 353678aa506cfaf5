package schbench_test

import (
	"bytes"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/schedlab/schedlab/internal/sim"
)

// Same seed ⇒ the same output and metrics, in both modes.
func TestCurrentDeterministic(t *testing.T) {
	for _, args := range [][]string{
		{"-m", "1", "-t", "2", "-r", "1"},
		{"-m", "2", "-t", "4", "-r", "2", "-R", "400"},
	} {
		a, err := sim.Run(sim.Config{Machine: "hikey", Seed: 7, Tool: "schbench-current", Args: args}, sim.Options{})
		if err != nil {
			t.Fatal(err)
		}
		b, _ := sim.Run(sim.Config{Machine: "hikey", Seed: 7, Tool: "schbench-current", Args: args}, sim.Options{})
		if !bytes.Equal(a.Deterministic(), b.Deterministic()) {
			t.Errorf("%v: two runs with the same seed differ:\n%s\n%s", args, a.Output, b.Output)
		}
	}
}

// valRE is a "%-10u (" field: the value left-justified in ten columns.
var (
	valRE = regexp.MustCompile(`th: \d+ +\(`)
	numRE = regexp.MustCompile(`\d+(\.\d+)?`)
)

func maskReport(t *testing.T, s string) string {
	s = valRE.ReplaceAllStringFunc(s, func(f string) string {
		if v := f[len("th: ") : len(f)-1]; len(v) != 11 && len(strings.TrimRight(v, " ")) < 10 {
			t.Errorf("field %q is not %%-10u", f)
		}
		return "th: V ("
	})
	return numRE.ReplaceAllString(s, "N")
}

// The final report has the layout of the reference's sample output
// (workloads-and-formats.md 2.2, testdata/reference-final-report.txt: the
// sample, with the elided request block filled in with the wakeup block's
// shape).
func TestCurrentFormat(t *testing.T) {
	ref, err := os.ReadFile("testdata/reference-final-report.txt")
	if err != nil {
		t.Fatal(err)
	}
	res, err := sim.Run(sim.Config{Machine: "hikey", Seed: 1, Tool: "schbench-current", Args: []string{"-m", "1", "-t", "2", "-r", "30", "-i", "30"}}, sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	out := res.Output
	// -i 30 with -r 30: one interval report at 30 s, then the final one.
	i := strings.LastIndex(out, "Wakeup Latencies")
	if i < 0 || !strings.Contains(out[:i], "current rps: ") {
		t.Fatalf("no interval report:\n%s", out)
	}
	if got, want := maskReport(t, out[i:]), maskReport(t, string(ref)); got != want {
		t.Errorf("--- reference (masked)\n%s--- schedlab (masked)\n%s", want, got)
	}
}
