package cli

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/schedlab/schedlab/internal/fidelity/score"
	"github.com/schedlab/schedlab/internal/texttable"
)

// The synthetic cases of internal/fidelity's tests: made-up numbers, small
// runs.
const fidelityTestCorpus = "../fidelity/testdata/corpus"

func runFidelity(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	old := fidelityCommit
	fidelityCommit = func() string { return "0000000000000000000000000000000000000000" }
	defer func() { fidelityCommit = old }()
	var out, errb bytes.Buffer
	code = Main(&out, &errb, append([]string{"fidelity"}, args...))
	return code, out.String(), errb.String()
}

// schedlab fidelity --quick on the synthetic corpus: per case its points
// and deltas, then the count and summary lines.
func TestFidelityEndToEnd(t *testing.T) {
	code, out, errs := runFidelity(t, "--corpus", fidelityTestCorpus, "--quick", "--seeds", "2", "--jobs", "2")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{
		"synthetic-box-schbench: synthetic test case\n",
		"synthetic-hikey-messaging: synthetic test case\n",
		"  load  column   published Δ  significant  simulated Δ",
		"\nfidelity --quick: 3 points from 2 sources (1 thread), 2 machines, 2 benchmarks (2 cases)\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "synthetic-hikey-tbench") {
		t.Error("the tbench case has no quick loads and must not run with --quick")
	}
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	last, ok := strings.CutPrefix(lines[len(lines)-1], "summary: ")
	if !ok || !regexp.MustCompile(score.SummaryLineRE).MatchString(last) || !strings.HasPrefix(last, "3 points: ") || !strings.Contains(last, "; 1 delta, ") {
		t.Errorf("summary line %q", lines[len(lines)-1])
	}
	if !strings.HasPrefix(errs, "schedlab: fidelity --quick: 2 of 4 cases have no simulate.quick loads and do not run: synthetic-hikey-tbench, synthetic-mech-hikey-goidle\nschedlab: fidelity: 6 runs: 6 new, in ") {
		t.Errorf("stderr %q", errs)
	}
}

// Two runs give byte-identical JSON (it holds no wall time), whatever the
// number of jobs; a rerun in a results directory runs nothing.
func TestFidelityDeterministicAndResumable(t *testing.T) {
	dir := t.TempDir()
	j1, j2 := filepath.Join(dir, "a.json"), filepath.Join(dir, "b.json")
	results := filepath.Join(dir, "results")
	code, out1, errs := runFidelity(t, "--corpus", fidelityTestCorpus, "--quick", "--seeds", "2", "--jobs", "1", "--json", j1, "--dir", results)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if !strings.Contains(errs, ": 6 new, 0 already in "+results) {
		t.Errorf("first run: %q", errs)
	}
	code, out2, errs := runFidelity(t, "--corpus", fidelityTestCorpus, "--quick", "--seeds", "2", "--jobs", "2", "--json", j2, "--dir", results)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if !strings.Contains(errs, ": 0 new, 6 already in "+results+" (2 rerun to check them)") {
		t.Errorf("the second run ran again: %q", errs)
	}
	a, _ := os.ReadFile(j1)
	b, _ := os.ReadFile(j2)
	if len(a) == 0 || !bytes.Equal(a, b) || out1 != out2 {
		t.Error("two runs of the same corpus differ")
	}
	// And without a directory (fresh runs), the same JSON.
	j3 := filepath.Join(dir, "c.json")
	if code, _, errs := runFidelity(t, "--corpus", fidelityTestCorpus, "--quick", "--seeds", "2", "--json", j3); code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	c, _ := os.ReadFile(j3)
	if !bytes.Equal(a, c) {
		t.Error("a fresh run's JSON differs from the results directory's")
	}
	for _, want := range []string{`"schema_version": 1`, `"commit": "0000000000000000000000000000000000000000"`, `"quick": true`, `"runs": [`} {
		if !bytes.Contains(a, []byte(want)) {
			t.Errorf("the JSON lacks %s", want)
		}
	}
}

func TestFidelityList(t *testing.T) {
	code, out, errs := runFidelity(t, "--corpus", fidelityTestCorpus, "--list", "--wide")
	if code != 0 || errs != "" {
		t.Fatalf("exit %d: %s", code, errs)
	}
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	// A header, one line per point (the unsimulated column is not a
	// point; the tbench case's settings columns are), the count.
	if len(lines) != 15 || lines[14] != "13 points from 4 sources (2 threads), 2 machines, 3 benchmarks (4 cases)" {
		t.Fatalf("list:\n%s", out)
	}
	if !regexp.MustCompile(`^synthetic-hikey-messaging +schedlab tests, 2024-01-02, <synthetic-1@example\.invalid> +hikey +perf bench sched messaging -p -t -l 500 -g 2 +2 +outside +0\.33 s$`).MatchString(lines[6]) {
		t.Errorf("point line %q", lines[6])
	}
	code, out, _ = runFidelity(t, "--corpus", fidelityTestCorpus, "--list", "--quick", "--case", "synthetic-hikey-*")
	if code != 0 || !strings.HasSuffix(out, "\n2 points from 1 source (1 thread), 1 machine, 1 benchmark (1 case)\n") {
		t.Errorf("--list --quick --case: exit %d\n%s", code, out)
	}
	if code, _, errs = runFidelity(t, "--corpus", fidelityTestCorpus, "--wide"); code != 2 || !strings.Contains(errs, "--wide is a layout of --list") {
		t.Errorf("--wide without --list: exit %d, %q", code, errs)
	}
}

// TestFidelityListFits: the embedded corpus's list fits 100 columns by
// default, grouped by case, and ends with its count; --wide has a line
// per point, wider than 100 columns, with each point's case, citation,
// machine and command, which the default gives under the case.
func TestFidelityListFits(t *testing.T) {
	code, out, errs := runFidelity(t, "--list")
	if code != 0 || errs != "" {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if err := texttable.Check(out, texttable.Width); err != nil {
		t.Error(err)
	}
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	count := lines[len(lines)-1]
	if !regexp.MustCompile(score.CountsLineRE).MatchString(count) {
		t.Fatalf("the list does not end with its count: %q", count)
	}
	_, wide, _ := runFidelity(t, "--list", "--wide")
	if texttable.Check(wide, texttable.Width) == nil {
		t.Error("--list --wide fits 100 columns: it is not the wide layout")
	}
	wideLines := strings.Split(strings.TrimRight(wide, "\n"), "\n")
	if wideLines[len(wideLines)-1] != count {
		t.Errorf("--wide ends with %q, want the count %q", wideLines[len(wideLines)-1], count)
	}
	// Each point of --wide, under its case in the default list: the
	// case, its machine and citation, then the load, column, value and
	// command (wrapped: compared without spaces).
	squeeze := func(s string) string { return strings.Join(strings.Fields(s), "") }
	byCase := map[string]string{}
	cur := ""
	for _, l := range lines[:len(lines)-1] {
		if l != "" && l[0] != ' ' {
			cur = l
		}
		byCase[cur] += l + "\n"
	}
	header := regexp.MustCompile(`^case +source +machine +command +load +column +published$`)
	if !header.MatchString(wideLines[0]) {
		t.Fatalf("--wide header %q", wideLines[0])
	}
	cols := regexp.MustCompile(`  +`)
	points := 0
	for _, l := range wideLines[1 : len(wideLines)-1] {
		f := cols.Split(l, -1)
		if len(f) != 7 {
			t.Fatalf("--wide line %q: %d cells", l, len(f))
		}
		block := squeeze(byCase[f[0]])
		for _, want := range []string{"machine:" + f[2], "source:" + f[1], f[4] + f[5] + f[6] + f[3]} {
			if !strings.Contains(block, squeeze(want)) {
				t.Fatalf("case %s in the default list lacks %q:\n%s", f[0], want, byCase[f[0]])
			}
		}
		points++
	}
	if want := regexp.MustCompile(`^\d+`).FindString(count); want != fmt.Sprint(points) {
		t.Errorf("--wide lists %d points, the count says %s", points, want)
	}
}

func TestFidelityMarkdown(t *testing.T) {
	code, out, errs := runFidelity(t, "--corpus", fidelityTestCorpus, "--quick", "--seeds", "2", "--case", "synthetic-hikey-*", "--markdown")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if !strings.HasPrefix(out, score.MarkdownPreamble+"Made on commit `0000000000000000000000000000000000000000` from "+fidelityTestCorpus+", the --quick subset: ") ||
		!strings.Contains(out, "\n### synthetic-hikey-messaging\n") {
		t.Errorf("markdown:\n%s", out)
	}
}

// Bad flags and malformed cases: one line naming the problem (the file
// and line for a case), exit 2, nothing on stdout.
func TestFidelityErrors(t *testing.T) {
	bad := t.TempDir()
	good, _ := os.ReadFile(filepath.Join(fidelityTestCorpus, "synthetic-hikey-messaging.yaml"))
	os.WriteFile(filepath.Join(bad, "synthetic-hikey-messaging.yaml"), bytes.Replace(good, []byte("variant: blocked-load-outside-newidle"), []byte("variant: sis-util"), 1), 0o644)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--corpus", bad}, "schedlab: " + bad + `/synthetic-hikey-messaging.yaml:33: variant "sis-util" is not a schedlab variant`},
		{[]string{"--corpus", bad, "--list"}, "schedlab: " + bad + "/synthetic-hikey-messaging.yaml:33: "},
		{[]string{"--corpus", filepath.Join(bad, "nope")}, "schedlab: --corpus " + filepath.Join(bad, "nope") + ": not a directory"},
		{[]string{"--corpus", fidelityTestCorpus, "--case", "nope-*"}, `schedlab: --case "nope-*": no case of ` + fidelityTestCorpus + " matches"},
		{[]string{"--corpus", fidelityTestCorpus, "--case", "[x"}, `schedlab: --case "[x": syntax error in pattern`},
		{[]string{"--jobs", "-1"}, "schedlab: --jobs -1: give at least 1"},
		{[]string{"--seeds", "0"}, "schedlab: --seeds 0: give at least 1"},
		{[]string{"--seeds", "x"}, "schedlab: schedlab fidelity: --seeds x: must be an integer"},
		{[]string{"--list", "--json", "x.json"}, "schedlab: fidelity: --list runs nothing, so --json has no effect"},
		{[]string{"--json", filepath.Join(bad, "no", "x.json")}, "schedlab: --json " + filepath.Join(bad, "no", "x.json") + ": directory " + filepath.Join(bad, "no") + " does not exist"},
		{[]string{"--dir", "/proc/self/x"}, "schedlab: --dir /proc/self/x: "},
		{[]string{"extra"}, "schedlab: unknown command \"extra\" for \"schedlab fidelity\""},
		{[]string{"--fit", "nope_ns=1"}, `schedlab: --fit nope_ns=1: unknown cost parameter "nope_ns"`},
		{[]string{"--fit", "pipe_write_ns"}, "schedlab: --fit pipe_write_ns: write PARAM=V1,V2,..."},
		{[]string{"--fit", "pipe_write_ns=-4"}, "schedlab: --fit pipe_write_ns=-4: pipe_write_ns must lie in 0.."},
		{[]string{"--fit", "pipe_write_ns=500", "--markdown"}, "schedlab: fidelity: --fit runs its own trials and prints its own table: drop --markdown"},
		{[]string{"--sysctl", "nope=1"}, `schedlab: --sysctl nope=1: unknown sysctl "nope"`},
		{[]string{"--sysctl", "model_kobj_locks=x"}, `schedlab: --sysctl model_kobj_locks=x: model_kobj_locks: "x" is not a boolean`},
		{[]string{"--sysctl", "model_kobj_locks"}, "schedlab: --sysctl model_kobj_locks: write NAME=VALUE"},
		{[]string{"--costs", filepath.Join(bad, "none.yaml")}, "schedlab: --costs " + filepath.Join(bad, "none.yaml") + ": "},
	} {
		code, out, errs := runFidelity(t, tc.args...)
		if code != 2 || out != "" || !strings.HasPrefix(errs, tc.want) || strings.Count(errs, "\n") != 1 {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want %q", tc.args, code, out, errs, tc.want)
		}
	}
}

// --fit on the synthetic corpus: a table of trials (the defaults first,
// the best marked) and a costs file with the fitted source.
func TestFidelityFit(t *testing.T) {
	code, out, errs := runFidelity(t, "--corpus", fidelityTestCorpus, "--quick", "--seeds", "1", "--case", "synthetic-hikey-messaging", "--fit", "pipe_write_ns=100,50000")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	lines := strings.Split(out, "\n")
	if len(lines) < 4 || !strings.Contains(lines[0], "defaults ") || !strings.Contains(lines[1], "pipe_write_ns=100 ") || !strings.Contains(lines[2], "pipe_write_ns=50000 ") {
		t.Fatalf("trial table:\n%s", out)
	}
	if strings.Count(out, "\n* ") != 0 && !strings.HasPrefix(out, "* ") && strings.Count(out, "* ") != 1 {
		t.Errorf("want one trial marked best:\n%s", out)
	}
	if !strings.Contains(out, "# costs file") || !strings.Contains(out, "fitted to the fidelity corpus") {
		t.Errorf("no costs file in:\n%s", out)
	}
	if !strings.Contains(errs, "schedlab: fidelity --fit: 3 trials of ") || strings.Count(errs, "schedlab: trial ") != 3 {
		t.Errorf("stderr %q", errs)
	}
}
