package cli

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// compareRun is a run of compare's --json.
type compareRun struct {
	Key     string `json:"key"`
	Kernel  string `json:"kernel"`
	Variant string `json:"variant"`
	Seed    uint64 `json:"seed"`
	Run     int    `json:"run"`
	Param   struct {
		Value string `json:"value"`
	} `json:"param"`
	Options *struct {
		Features []string `json:"features"`
		Sysctls  []string `json:"sysctls"`
	} `json:"options"`
	Metrics map[string]struct {
		Value float64 `json:"value"`
	} `json:"metrics"`
}

func readCompareRuns(t *testing.T, file string) []compareRun {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct{ Runs []compareRun }
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	return doc.Runs
}

// tableHeader is the column names of compare's table.
func tableHeader(t *testing.T, out string) []string {
	t.Helper()
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "groups:") {
			return strings.Fields(l)[1:]
		}
	}
	t.Fatalf("no table in\n%s", out)
	return nil
}

// compare --column: each column is tip plus its flags, and its runs ran
// with them on tip's kernel, run i of every column on one seed; the table
// says what each column adds; the output does not depend on --jobs.
func TestCompareColumns(t *testing.T) {
	dir := t.TempDir()
	jsonFile := filepath.Join(dir, "c.json")
	args := []string{"compare", "--machine", "hikey", "--runs", "2", "--jobs", "1", "--json", jsonFile, "--feature", "NO_TTWU_QUEUE",
		"--column", "nowaw=--feature NO_WA_WEIGHT", "--column", "cost=--sysctl migration_cost_ns=250000",
		"hackbench", "-l", "20", "-g", "1,2"}
	out, errOut, code := runMain(t, args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if h := tableHeader(t, out); !slices.Equal(h, []string{"tip", "nowaw", "cost"}) {
		t.Errorf("columns %v", h)
	}
	for _, want := range []string{"Machine       : hikey (8 CPUs), kernel v6.19\n",
		"Columns       : nowaw = tip --feature NO_WA_WEIGHT\n                cost = tip --sysctl migration_cost_ns=250000\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
	if !strings.Contains(errOut, "kernel v6.19, columns tip, nowaw, cost,") {
		t.Errorf("stderr %q", errOut)
	}
	runs := readCompareRuns(t, jsonFile)
	if len(runs) != 3*2*2 {
		t.Fatalf("%d runs", len(runs))
	}
	seeds := map[int]uint64{}
	for _, r := range runs {
		var features, sysctls []string
		if r.Options != nil {
			features, sysctls = r.Options.Features, r.Options.Sysctls
		}
		want := map[string][2][]string{
			"tip":   {{"NO_TTWU_QUEUE"}, nil},
			"nowaw": {{"NO_TTWU_QUEUE", "NO_WA_WEIGHT"}, nil},
			"cost":  {{"NO_TTWU_QUEUE"}, {"migration_cost_ns=250000"}},
		}[r.Variant]
		if r.Kernel != "v6.19" || !slices.Equal(features, want[0]) || !slices.Equal(sysctls, want[1]) {
			t.Errorf("%s: kernel %s features %v sysctls %v, want %v", r.Key, r.Kernel, features, sysctls, want)
		}
		if s, ok := seeds[r.Run]; ok && s != r.Seed {
			t.Errorf("%s: seed %d, run %d of another column had %d", r.Key, r.Seed, r.Run, s)
		}
		seeds[r.Run] = r.Seed
	}
	args[6] = "3" // --jobs
	out2, errOut, code := runMain(t, args...)
	if code != 0 || out2 != out {
		t.Errorf("--jobs 3 differs (exit %d, %s):\n%s\nvs\n%s", code, errOut, out2, out)
	}
}

// Columns on other kernels than tip's: refused with a line that names
// them and the flag; with --mixed-kernels the table and every run say
// each column's kernel.
func TestCompareMixedKernels(t *testing.T) {
	dir := t.TempDir()
	jsonFile := filepath.Join(dir, "c.json")
	common := []string{"--machine", "hikey", "--runs", "1", "--jobs", "1", "--variant", "short-task-v3", "--column", "eevdf=--kernel v6.19", "--column", "nowaw=--feature NO_WA_WEIGHT"}
	work := []string{"hackbench", "-l", "20", "-g", "1,2"}
	out, errOut, code := runMain(t, slices.Concat([]string{"compare"}, common, work)...)
	if want := "schedlab: columns run on different kernels: tip v6.0; eevdf v6.19 (--kernel): compare across kernels with --mixed-kernels (mixed_kernels: true in an experiment file), or compare them separately\n"; code != 2 || out != "" || errOut != want {
		t.Errorf("exit %d, stdout %q, stderr\n%q\nwant\n%q", code, out, errOut, want)
	}
	out, errOut, code = runMain(t, slices.Concat([]string{"compare", "--mixed-kernels", "--json", jsonFile}, common, work)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	kernelOf := map[string]string{"tip": "v6.0", "short-task-v3": "v6.0", "eevdf": "v6.19", "nowaw": "v6.0"}
	var row []string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "kernel:") {
			row = strings.Fields(l)[1:]
		}
	}
	if h := tableHeader(t, out); len(row) != len(h) || len(h) != 4 {
		t.Fatalf("header %v, kernel row %v", h, row)
	} else {
		for i, name := range h {
			if row[i] != kernelOf[name] {
				t.Errorf("column %s: kernel %s in the table, want %s", name, row[i], kernelOf[name])
			}
		}
	}
	if !strings.Contains(out, "kernel v6.0 for tip; the columns' kernels differ") || !strings.Contains(errOut, "kernels v6.0 (tip, short-task-v3, nowaw), v6.19 (eevdf)") {
		t.Errorf("stdout\n%s\nstderr %q", out, errOut)
	}
	for _, r := range readCompareRuns(t, jsonFile) {
		if r.Kernel != kernelOf[r.Variant] {
			t.Errorf("%s ran %s, want %s", r.Key, r.Kernel, kernelOf[r.Variant])
		}
	}
}

// A wrong column string is one line naming it, exit 2, and nothing on
// stdout.
func TestCompareColumnErrors(t *testing.T) {
	for _, tc := range []struct{ column, want string }{
		{"nowaw", `--column "nowaw": write NAME=FLAGS`},
		{"=--feature X", `--column "=--feature X": a column needs a name`},
		{"x=", `--column "x=": column x sets nothing`},
		{"x=--featur NO_WA_WEIGHT", `--column "x=--featur NO_WA_WEIGHT": column x: unknown flag --featur`},
		{"x=--feature", `--column "x=--feature": column x: --feature needs a value`},
		{"x=--sysctl migration_cost_ns", `column x: --sysctl migration_cost_ns: write NAME=VALUE`},
		{"x=--feature 'NO_WA", `unterminated ' quote`},
		{"tip=--feature NO_WA_WEIGHT", "tip is the first column already"},
		{"x=--feature NO_SUCH", `column x: --feature NO_SUCH: unknown sched feature "NO_SUCH"`},
		{"x=--sysctl migration_cost_ns=abc", `column x: --sysctl migration_cost_ns=abc:`},
		{"x=--variant nosuch", `column x: unknown variant "nosuch"`},
		{"x=--kernel v9", `column x: --kernel: `},
		{"short-task-v4=--feature NO_WA_WEIGHT", "column short-task-v4: that is a variant's name"},
	} {
		out, errOut, code := runMain(t, "compare", "--machine", "hikey", "--runs", "1", "--column", tc.column, "hackbench", "-l", "5")
		if code != 2 || out != "" || !strings.HasPrefix(errOut, "schedlab: ") || !strings.Contains(errOut, tc.want) || strings.Count(errOut, "\n") != 1 {
			t.Errorf("--column %q: exit %d, stdout %q, stderr %q (want %q)", tc.column, code, out, errOut, tc.want)
		}
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--column", "a=--feature NO_WA_WEIGHT", "--column", "a=--feature NO_TTWU_QUEUE"}, `a column named a is given already`},
		{[]string{"--stats", "mmtest"}, `--stats "mmtest": the one extra block is mmtests`},
		{[]string{"--resume"}, "--resume continues the runs compare kept in --out DIR: give --out"},
	} {
		out, errOut, code := runMain(t, slices.Concat([]string{"compare", "--machine", "hikey", "--runs", "1"}, tc.args, []string{"hackbench", "-l", "5"})...)
		if code != 2 || out != "" || !strings.Contains(errOut, tc.want) || strings.Count(errOut, "\n") != 1 {
			t.Errorf("%q: exit %d, stdout %q, stderr %q (want %q)", tc.args, code, out, errOut, tc.want)
		}
	}
}

// --stats mmtests adds compare-kernels' rows under the table, computed
// from the runs: here each column's minimum, maximum and mean at each
// load, from the runs in --json.
func TestCompareStatsMMTests(t *testing.T) {
	dir := t.TempDir()
	jsonFile := filepath.Join(dir, "c.json")
	out, errOut, code := runMain(t, "compare", "--machine", "hikey", "--runs", "3", "--jobs", "2", "--json", jsonFile, "--stats", "mmtests",
		"--column", "nowaw=--feature NO_WA_WEIGHT", "hackbench", "-l", "20", "-g", "1,2")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	i := strings.Index(out, "\nmmtests compare-kernels statistics of time_s")
	if i < 0 {
		t.Fatalf("no mmtests block in\n%s", out)
	}
	rows := map[string][]string{} // "Min 1" → the column values
	for _, l := range strings.Split(out[i:], "\n") {
		f := strings.Fields(l)
		if len(f) < 4 || strings.HasPrefix(l, " ") {
			continue
		}
		var vals []string
		for j := 2; j < len(f); j++ {
			if _, err := strconv.ParseFloat(f[j], 64); err == nil && !strings.HasSuffix(f[j], "%)") {
				vals = append(vals, f[j])
			}
		}
		rows[f[0]+" "+f[1]] = vals
	}
	for _, name := range []string{"Min", "Amean", "Stddev", "CoeffVar", "Max", "BAmean-50", "BAmean-95", "BAmean-99"} {
		if len(rows[name+" 1"]) != 2 || len(rows[name+" 2"]) != 2 {
			t.Errorf("row %s: %v %v", name, rows[name+" 1"], rows[name+" 2"])
		}
	}
	vals := map[string][]float64{} // "tip 1" → time_s of its runs
	for _, r := range readCompareRuns(t, jsonFile) {
		k := r.Variant + " " + r.Param.Value
		vals[k] = append(vals[k], r.Metrics["time_s"].Value)
	}
	for _, load := range []string{"1", "2"} {
		for ci, col := range []string{"tip", "nowaw"} {
			xs := vals[col+" "+load]
			lo, hi, sum := math.Inf(1), math.Inf(-1), 0.0
			for _, x := range xs {
				lo, hi, sum = math.Min(lo, x), math.Max(hi, x), sum+x
			}
			for name, want := range map[string]float64{"Min": lo, "Max": hi, "Amean": sum / float64(len(xs))} {
				if got := rows[name+" "+load]; len(got) == 2 && got[ci] != fmt.Sprintf("%.4f", want) {
					t.Errorf("%s %s of %s: %s, runs %v", name, load, col, got[ci], xs)
				}
			}
		}
	}
}

// compare --out keeps its runs as sweep does: report and collect read the
// directory, collect prints compare's table, and the same compare again
// needs --resume, which runs nothing more and prints the same table.
func TestCompareOutReport(t *testing.T) {
	dir := t.TempDir()
	res := filepath.Join(dir, "cmp")
	args := []string{"compare", "--machine", "hikey", "--runs", "2", "--jobs", "2", "--out", res,
		"--column", "nowaw=--feature NO_WA_WEIGHT", "hackbench", "-l", "20", "-g", "1,2"}
	out, errOut, code := runMain(t, args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(errOut, "; runs kept in "+res) {
		t.Errorf("stderr %q", errOut)
	}
	html := filepath.Join(dir, "r.html")
	if _, errOut, code := runMain(t, "report", res, "-o", html); code != 0 {
		t.Fatalf("report: exit %d: %s", code, errOut)
	}
	page, err := os.ReadFile(html)
	if err != nil || !strings.Contains(string(page), "<th>nowaw</th>") || !strings.Contains(string(page), "nowaw = tip --feature NO_WA_WEIGHT") {
		t.Errorf("report (%v) lacks the nowaw column", err)
	}
	table := out[:strings.Index(out, "\ncorpus:")]
	collected, errOut, code := runMain(t, "collect", res)
	if code != 0 || collected != table {
		t.Errorf("collect: exit %d (%s):\n%s\nwant compare's table:\n%s", code, errOut, collected, table)
	}
	if _, errOut, code := runMain(t, args...); code != 2 || !strings.Contains(errOut, "add --resume to continue it") {
		t.Errorf("again without --resume: exit %d, %q", code, errOut)
	}
	again, errOut, code := runMain(t, slices.Concat(args[:1], []string{"--resume"}, args[1:])...)
	if code != 0 || again != out {
		t.Errorf("--resume: exit %d (%s):\n%s\nwant\n%s", code, errOut, again, out)
	}
}

// sweep takes columns from its experiment file and from --column, the
// flag's after the file's; --resume continues the plan in DIR and so
// refuses --column.
func TestSweepColumns(t *testing.T) {
	dir := t.TempDir()
	exp := filepath.Join(dir, "e.yaml")
	os.WriteFile(exp, []byte("name: cols\nmachines: [hikey]\ncolumns:\n  - nowaw=--feature NO_WA_WEIGHT\nruns: 1\nworkloads:\n  - hackbench -l 5 -g 1\n"), 0o644)
	res := filepath.Join(dir, "res")
	if _, errOut, code := runMain(t, "sweep", exp, "--out", res, "--column", "cost=--sysctl migration_cost_ns=250000"); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	out, errOut, code := runMain(t, "collect", res)
	if code != 0 || !slices.Equal(tableHeader2(t, out), []string{"tip", "nowaw", "cost"}) {
		t.Errorf("collect: exit %d (%s)\n%s", code, errOut, out)
	}
	if _, errOut, code := runMain(t, "sweep", "--out", res, "--resume", "--column", "x=--feature NO_WA_WEIGHT"); code != 2 || !strings.Contains(errOut, "--column changes the experiment") {
		t.Errorf("--resume --column: exit %d, %q", code, errOut)
	}
	if _, errOut, code := runMain(t, "sweep", exp, "--out", filepath.Join(dir, "r2"), "--column", "cfs=--kernel v6.0"); code != 2 || !strings.Contains(errOut, "cfs v6.0 (--kernel): compare across kernels with --mixed-kernels") {
		t.Errorf("sweep across kernels: exit %d, %q", code, errOut)
	}
}

// tableHeader2 is the column names of a table whose rows are not ranged.
func tableHeader2(t *testing.T, out string) []string {
	t.Helper()
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "load:") {
			return strings.Fields(l)[1:]
		}
	}
	t.Fatalf("no table in\n%s", out)
	return nil
}

// A counter metric (balance.migrations) is neither better nor worse: the
// report's caption and bar plot say "a count" and that a positive change
// is more, as compare's table does, while time keeps "lower is better".
func TestReportCounterDirection(t *testing.T) {
	dir := t.TempDir()
	res := filepath.Join(dir, "cmp")
	if _, errOut, code := runMain(t, "compare", "--machine", "hikey", "--runs", "2", "--out", res,
		"--column", "nowaw=--feature NO_WA_WEIGHT", "--metric", "time_s", "--metric", "balance.migrations",
		"hackbench", "-l", "10", "-g", "1"); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	html := filepath.Join(dir, "r.html")
	if _, errOut, code := runMain(t, "report", res, "-o", html); code != 0 {
		t.Fatalf("report: exit %d: %s", code, errOut)
	}
	data, err := os.ReadFile(html)
	if err != nil {
		t.Fatal(err)
	}
	page := string(data)
	counter := regexp.MustCompile(`of the runs, a count, neither better nor worse; in parentheses the change from tip, positive = more;`)
	timed := regexp.MustCompile(`of the runs, lower is better; in parentheses the change from tip, positive = better;`)
	if n := len(counter.FindAllString(page, -1)); n != 1 {
		t.Errorf("%d captions of a count, want 1 (balance.migrations)", n)
	}
	if n := len(timed.FindAllString(page, -1)); n != 1 {
		t.Errorf("%d captions of lower is better, want 1 (time_s)", n)
	}
	if strings.Contains(page, "higher is better") {
		t.Errorf("the report calls a metric higher-is-better; neither is")
	}
}

// One of a thing is singular: compare with --runs 1 says "of 1 run", and
// report counts "1 table" but "0 heat maps".
func TestOneIsSingular(t *testing.T) {
	out, errOut, code := runMain(t, "compare", "--machine", "hikey", "--runs", "1", "hackbench", "-l", "5", "-g", "1")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, "Statistic     : AMean of 1 run (seeds") {
		t.Errorf("compare --runs 1:\n%s", out)
	}
	for n, want := range map[int]string{0: "0 heat maps", 1: "1 heat map", 2: "2 heat maps"} {
		if got := counted(n, "heat map"); got != want {
			t.Errorf("counted(%d) = %q, want %q", n, got, want)
		}
	}
}
