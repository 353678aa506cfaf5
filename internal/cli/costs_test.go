package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/schedlab/schedlab/internal/costmodel"
	"github.com/schedlab/schedlab/internal/testutil"
	"github.com/schedlab/schedlab/internal/texttable"
	"github.com/schedlab/schedlab/internal/topology"
)

func mustLoad(t *testing.T, machine string) *topology.MachineSpec {
	t.Helper()
	spec, err := topology.Load(machine)
	if err != nil {
		t.Fatal(err)
	}
	return spec
}

func runCostsCLI(args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = Main(&out, &errb, args)
	return code, out.String(), errb.String()
}

// schedlab costs prints every parameter with a value and a source.
func TestCostsCommand(t *testing.T) {
	code, out, errs := runCostsCLI("costs", "kunpeng920-96", "--wide")
	if code != 0 || errs != "" {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	if !strings.HasPrefix(out, "cost parameters of kunpeng920-96 (defaults: kunpeng920-96)\n") {
		t.Errorf("header: %q", strings.SplitN(out, "\n", 2)[0])
	}
	for _, q := range costmodel.All() {
		if !regexp.MustCompile(`(?m)^` + q.Key + `\s+[0-9.]+\s+\S+\s+\S`).MatchString(out) {
			t.Errorf("no row for %s", q.Key)
		}
	}
	// --costs on top, and its errors with file and line.
	dir := t.TempDir()
	good := filepath.Join(dir, "c.yaml")
	os.WriteFile(good, []byte("syscall_ns: 123\n"), 0o644)
	code, out, _ = runCostsCLI("costs", "hikey", "--costs", good, "--wide")
	if code != 0 || !regexp.MustCompile(`(?m)^syscall_ns\s+123\s+ns\*\s+`+regexp.QuoteMeta(good)+`:1$`).MatchString(out) {
		t.Errorf("--costs: exit %d\n%s", code, out)
	}
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(bad, []byte("# x\nsyscall: 1\n"), 0o644)
	code, _, errs = runCostsCLI("costs", "hikey", "--costs", bad)
	if code != 2 || !strings.HasPrefix(errs, "schedlab: "+bad+`:2: unknown cost parameter "syscall"`) {
		t.Errorf("bad costs file: exit %d, %q", code, errs)
	}
}

// TestCostsFit: by default every line of every preset's table fits 100
// columns, the sources wrapped under the SOURCE column; --wide has each
// parameter on one line, and the same text.
func TestCostsFit(t *testing.T) {
	for _, m := range []string{"zen3-2s-nps1", "kunpeng920-128", "hikey", "chromebook-7c"} {
		_, out, _ := runCostsCLI("costs", m)
		code, wide, errs := runCostsCLI("costs", m, "--wide")
		if code != 0 || errs != "" {
			t.Fatalf("%s --wide: exit %d, stderr %q", m, code, errs)
		}
		if err := texttable.Check(out, texttable.Width); err != nil {
			t.Errorf("costs %s: %v", m, err)
		}
		if texttable.Check(wide, texttable.Width) == nil {
			t.Errorf("costs %s --wide fits 100 columns: it wraps nothing", m)
		}
		if strings.Join(strings.Fields(out), "") != strings.Join(strings.Fields(wide), "") {
			t.Errorf("costs %s: the wrapped table does not say what --wide says, spaces aside", m)
		}
		// Every parameter starts a line, and every source is whole on
		// its --wide line.
		p, err := costmodel.Resolve(mustLoad(t, m), "")
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range costmodel.All() {
			if !regexp.MustCompile(`(?m)^` + q.Key + `\s+` + regexp.QuoteMeta(p.FormatValue(q.Key)) + `\s`).MatchString(out) {
				t.Errorf("costs %s: no line for %s", m, q.Key)
			}
			if !regexp.MustCompile(`(?m)^` + q.Key + `\s.*` + regexp.QuoteMeta(p.Source(q.Key)) + `$`).MatchString(wide) {
				t.Errorf("costs %s --wide: %s's source is not on its line", m, q.Key)
			}
		}
	}
}

// A tiny real-against-simulated validation; needs rt-tests' hackbench.
// Only the table's format is checked, not the figures.
func TestValidateHackbench(t *testing.T) {
	testutil.NeedTool(t, "hackbench")
	costs := filepath.Join(t.TempDir(), "costs.yaml")
	os.WriteFile(costs, []byte("context_switch_ns: 1000\n"), 0o644)
	code, out, errs := runCostsCLI("validate", "hackbench", "--groups", "1", "--loops", "5", "--runs", "1", "--seeds", "2", "--seed", "3", "--costs", costs)
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if len(lines) != 8 || !strings.HasPrefix(lines[0], "machine host (") || !strings.Contains(lines[0], "costs: from "+costs) ||
		!strings.Contains(lines[1], "median of 1 runs in rounds") || !strings.HasSuffix(lines[1], "mean of seeds 3-4") {
		t.Fatalf("output:\n%s", out)
	}
	if got := strings.Fields(lines[3]); strings.Join(got, " ") != "hackbench groups loops real (s) real range simulated (s) sim range sim/real within ±15%" {
		t.Errorf("table header %q", lines[3])
	}
	row := regexp.MustCompile(`^\s+-p -[TP]\s+1\s+5\s+\d+\.\d{3}\s+\d+\.\d{3}-\d+\.\d{3}\s+\d+\.\d{3}\s+\d+\.\d{3}-\d+\.\d{3}\s+\d+\.\d\d\s+(yes|no)$`)
	for _, l := range lines[4:6] {
		if !row.MatchString(l) {
			t.Errorf("row %q", l)
		}
	}
	if !regexp.MustCompile(`^[0-2] of 2 cases within ±15% of real$`).MatchString(lines[7]) {
		t.Errorf("summary %q", lines[7])
	}
}

func TestValidateErrors(t *testing.T) {
	code, _, errs := runCostsCLI("validate", "hackbench", "--hackbench", "no-such-hackbench-binary")
	if code != 2 || !strings.Contains(errs, "install rt-tests") {
		t.Errorf("exit %d, %q", code, errs)
	}
	// hackbench is looked up first; sh stands in for it.
	for _, c := range []struct{ flag, value, want string }{
		{"--seeds", "0", "--seeds must be at least 1"},
		{"--within", "0", "--within must be a positive percentage"},
		{"--runs", "0", "--runs must be at least 1"},
	} {
		code, out, errs := runCostsCLI("validate", "hackbench", "--hackbench", "sh", c.flag, c.value)
		if code != 2 || out != "" || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, c.want) {
			t.Errorf("%s %s: exit %d, out %q, stderr %q", c.flag, c.value, code, out, errs)
		}
	}
}

// TestValidateModesError: a bad --modes is reported once hackbench is found.
func TestValidateModesError(t *testing.T) {
	testutil.NeedTool(t, "hackbench")
	code, _, errs := runCostsCLI("validate", "hackbench", "--modes", "X", "--costs", "x")
	if code != 2 || !strings.Contains(errs, `--modes: "X" is not T or P`) {
		t.Errorf("exit %d, %q", code, errs)
	}
}

// A misspelt parameter in a machine file's costs: section is an error at
// its line, exit 2, for every command that loads the machine, with or
// without the cost model (costmodel reads the section; topology keeps it
// raw).
func TestMachineFileCostErrors(t *testing.T) {
	box := filepath.Join(t.TempDir(), "box.yaml")
	os.WriteFile(box, []byte("name: box\nsockets: 1\ncores_per_llc: 4\nthreads_per_core: 2\ncosts:\n  context_swich_ns: 5\n"), 0o644)
	want := "schedlab: " + box + `:6: unknown cost parameter "context_swich_ns"`
	for _, args := range [][]string{
		{"run", "--machine", box, "hackbench", "-l", "1", "-g", "1"},
		{"run", "--no-costs", "--machine", box, "hackbench", "-l", "1", "-g", "1"},
		{"costs", box},
		{"machine", "show", box},
	} {
		code, _, errs := runCostsCLI(args...)
		if code != 2 || !strings.HasPrefix(errs, want) {
			t.Errorf("%v: exit %d, %q", args, code, errs)
		}
	}
}
