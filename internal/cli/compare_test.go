package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func runMain(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var o, e bytes.Buffer
	code = Main(&o, &e, args)
	return o.String(), e.String(), code
}

// compare prints tip first, then each variant in the order given, a row
// per load; the output does not depend on the number of workers; --json
// and --bench-out hold every run.
func TestCompare(t *testing.T) {
	dir := t.TempDir()
	jsonFile, benchFile := filepath.Join(dir, "c.json"), filepath.Join(dir, "c.txt")
	args := []string{"compare", "--machine", "hikey", "--variant", "short-task-v4", "--variant", "short-task-v3", "--runs", "2",
		"--json", jsonFile, "--bench-out", benchFile, "--jobs", "1", "hackbench", "-p", "-T", "-l", "30", "-g", "1,2"}
	out, errOut, code := runMain(t, args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	lines := strings.Split(out, "\n")
	var header string
	var rows []string
	for i, l := range lines {
		if strings.HasPrefix(l, "groups:") {
			header, rows = l, lines[i+1:i+3]
		}
	}
	f := strings.Fields(header)
	if len(f) != 4 || f[1] != "tip" || f[2] != "short-task-v4" || f[3] != "short-task-v3" {
		t.Fatalf("header %q in\n%s", header, out)
	}
	for i, r := range rows {
		f := strings.Fields(r)
		if len(f) < 10 || f[0] != []string{"1", "2"}[i] || f[2] != "(0.00%)" {
			t.Errorf("row %q", r)
		}
	}
	for _, want := range []string{"Test          : hackbench -p -T -l 30 -g N", "Machine       : hikey (8 CPUs), kernel v6.0", "Interpretation: Lower is better"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
	// Parallel gives the same table.
	for i := range args {
		if args[i] == "--jobs" {
			args[i+1] = "3"
		}
	}
	out2, errOut, code := runMain(t, args...)
	if code != 0 || out2 != out {
		t.Errorf("--jobs 3 differs (exit %d, %s):\n%s\nvs\n%s", code, errOut, out2, out)
	}
	var doc struct {
		Tables []struct {
			Variants []string
			Loads    []string
			Cells    [][]struct {
				N      int      `json:"n"`
				Center *float64 `json:"center"`
			}
		}
		Runs []struct {
			Key     string `json:"key"`
			Seed    uint64 `json:"seed"`
			Run     int    `json:"run"`
			Variant string `json:"variant"`
			Metrics map[string]struct {
				Value  float64 `json:"value"`
				Better string  `json:"better"`
			} `json:"metrics"`
			VariantBranches []struct {
				Name     string `json:"name"`
				Branches []struct {
					Name    string  `json:"name"`
					Taken   uint64  `json:"taken"`
					Changed *uint64 `json:"changed"`
				} `json:"branches"`
			} `json:"variant_branches"`
		}
	}
	data, err := os.ReadFile(jsonFile)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Tables) != 1 || len(doc.Runs) != 12 || doc.Tables[0].Cells[1][2].N != 2 || doc.Tables[0].Cells[1][2].Center == nil {
		t.Fatalf("json: %d tables, %d runs", len(doc.Tables), len(doc.Runs))
	}
	// Paired seeds: run i has one seed whatever the variant and load.
	seeds := map[int]uint64{}
	for _, r := range doc.Runs {
		if s, ok := seeds[r.Run]; ok && s != r.Seed {
			t.Errorf("%s: seed %d, run %d had %d", r.Key, r.Seed, r.Run, s)
		}
		seeds[r.Run] = r.Seed
		// hackbench -l 30 -g G: G groups of 20 senders, each sending 30
		// messages of 100 bytes to each of its group's 20 receivers.
		g := 1
		if strings.Contains(r.Key, "__groups=2__") {
			g = 2
		}
		if m := r.Metrics["time_s"]; m.Value <= 0 || m.Better != "lower" {
			t.Errorf("%s: time_s %+v", r.Key, m)
		}
		if r.Metrics["messages"].Value != float64(g*20*20*30) || r.Metrics["bytes"].Value != float64(g*20*20*30*100) {
			t.Errorf("%s: metrics %v, want %d messages", r.Key, r.Metrics, g*20*20*30)
		}
	}
	// After the table, each variant's branches with their counters
	// summed over the column's runs, as the records hold them.
	taken := map[string]uint64{}
	for _, r := range doc.Runs {
		if (r.Variant == "tip") != (len(r.VariantBranches) == 0) {
			t.Errorf("%s: branch counters %+v", r.Key, r.VariantBranches)
		}
		for _, vb := range r.VariantBranches {
			for _, b := range vb.Branches {
				taken[vb.Name+" "+b.Name] += b.Taken
			}
		}
	}
	for _, want := range []string{"short-task-v4 wake_affine_idle:is_short_task", "short-task-v3 wake_affine_idle:is_short_task", "short-task-v3 select_idle_cpu:is_short_task"} {
		found := false
		for _, l := range lines {
			if f := strings.Fields(l); len(f) > 4 && f[0]+" "+f[1] == want && f[2] == "taken" {
				found = f[3] == fmt.Sprint(taken[want])
			}
		}
		if _, ok := taken[want]; !ok || !found {
			t.Errorf("no line %q taken %d in\n%s", want, taken[want], out)
		}
	}
	bench, err := os.ReadFile(benchFile)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(bench), "\nBenchmarkHackbench/groups="); n != 12 || !strings.Contains(string(bench), "/variant=short-task-v3 1 ") || !strings.Contains(string(bench), "Unit s better=lower") {
		t.Errorf("%d benchmark lines:\n%s", n, bench)
	}
}

func TestCompareErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"compare", "--variant", "nosuch", "hackbench"}, "unknown variant \"nosuch\""},
		{[]string{"compare", "--machine", "hikey", "nosuchtool"}, "unknown workload \"nosuchtool\""},
		{[]string{"compare", "--machine", "hikey", "hackbench", "-g", "1,2", "-l", "3,4"}, "more than one ranged argument"},
		{[]string{"compare", "--machine", "hikey", "--test", "z", "hackbench"}, "unknown test"},
		{[]string{"compare", "--machine", "hikey", "--metric", "nope", "--runs", "1", "hackbench", "-l", "5"}, "has no metric \"nope\""},
	} {
		_, errOut, code := runMain(t, tc.args...)
		if code != 2 || !strings.Contains(errOut, tc.want) || strings.Count(errOut, "\n") != 1 {
			t.Errorf("%q: exit %d, %q (want %q)", tc.args, code, errOut, tc.want)
		}
	}
	out, _, code := runMain(t, "compare", "hackbench", "-h")
	if code != 0 || !strings.Contains(out, "hackbench <options>") {
		t.Errorf("tool help: %d %q", code, out)
	}
}

func TestExperimentsList(t *testing.T) {
	out, errOut, code := runMain(t, "experiments")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, name := range []string{"short-task", "idle-cores-nosmt", "blocked-avg-ratelimit", "tg-propagate"} {
		if !strings.Contains(out, "\n"+name+" ") {
			t.Errorf("no %s in\n%s", name, out)
		}
	}
	out, _, code = runMain(t, "experiments", "show", "short-task")
	if code != 0 || !strings.Contains(out, "paper:") || !strings.Contains(out, "zen3-2s-nps4") {
		t.Errorf("show: %d\n%s", code, out)
	}
}

// Each table's direction is its metric's, as the workload gave it: rt-app's
// phase_loops is higher-is-better, its wakeup latency and hackbench's time
// lower-is-better, in compare's table, its --json and --bench-out, and in
// collect's tables of a results directory (read back from the records).
func TestMetricDirections(t *testing.T) {
	dir := t.TempDir()
	rtapp, err := filepath.Abs("../sim/testdata/example.json")
	if err != nil {
		t.Fatal(err)
	}
	interp := func(out string) map[string]string {
		got := map[string]string{}
		var metric string
		for _, l := range strings.Split(out, "\n") {
			if m, ok := strings.CutPrefix(l, "Metric        : "); ok {
				metric = m
			}
			if d, ok := strings.CutPrefix(l, "Interpretation: "); ok {
				got[metric] = d
			}
		}
		return got
	}
	jsonFile, benchFile := filepath.Join(dir, "c.json"), filepath.Join(dir, "c.txt")
	out, errOut, code := runMain(t, "compare", "--machine", "hikey", "--runs", "2", "--variant", "no-tg-propagate",
		"--json", jsonFile, "--bench-out", benchFile, "--metric", "phase_loops", "--metric", "wu_lat_us.max", "rt-app", rtapp)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	want := map[string]string{"phase_loops (phase_loops), (none)": "Higher is better", "max wu lat (wu_lat_us.max), usec": "Lower is better"}
	if got := interp(out); len(got) != 2 || got["phase_loops (phase_loops), (none)"] != want["phase_loops (phase_loops), (none)"] || got["max wu lat (wu_lat_us.max), usec"] != want["max wu lat (wu_lat_us.max), usec"] {
		t.Errorf("interpretations %v, want %v\n%s", got, want, out)
	}
	bench, _ := os.ReadFile(benchFile)
	if !strings.Contains(string(bench), "\nUnit phase_loops better=higher\n") || !strings.Contains(string(bench), "\nUnit max-us better=lower\n") {
		t.Errorf("bench units:\n%s", bench)
	}
	var doc struct {
		SchemaVersion int `json:"schema_version"`
		Tables        []struct {
			Metric struct{ Name, Better string }
		}
	}
	data, _ := os.ReadFile(jsonFile)
	if err := json.Unmarshal(data, &doc); err != nil || doc.SchemaVersion != 2 || len(doc.Tables) != 2 || doc.Tables[0].Metric.Better != "higher" || doc.Tables[1].Metric.Better != "lower" {
		t.Errorf("json tables %+v (%v)", doc.Tables, err)
	}

	exp := filepath.Join(dir, "e.yaml")
	os.WriteFile(exp, []byte("name: dirs\nmachines: [hikey]\nkernel: v6.19\nvariants: [no-tg-propagate]\nruns: 2\nworkloads:\n"+
		"  - name: rt\n    run: rt-app "+rtapp+"\n    metrics: [phase_loops]\n  - hackbench -p -T -l 5 -g 1,2\n"), 0o644)
	res := filepath.Join(dir, "res")
	if _, errOut, code := runMain(t, "sweep", exp, "--out", res); code != 0 {
		t.Fatalf("sweep: exit %d: %s", code, errOut)
	}
	out, errOut, code = runMain(t, "collect", res)
	if code != 0 {
		t.Fatalf("collect: exit %d: %s", code, errOut)
	}
	if got := interp(out); len(got) != 2 || got["phase_loops (phase_loops), (none)"] != "Higher is better" || got["time (time_s), s"] != "Lower is better" {
		t.Errorf("collect's interpretations %v\n%s", got, out)
	}
}

// compare names on stderr the kernel its variants brought, and
// --variant base:NAME makes tip NAME's comparison kernel without NAME's
// column (issue 40): here v6.0, which plain tip (v6.19) is not.
func TestCompareNamesKernel(t *testing.T) {
	common := []string{"--machine", "hikey", "--runs", "1", "--jobs", "1", "hackbench", "-l", "5", "-g", "1,2"}
	out, errOut, code := runMain(t, append([]string{"compare", "--variant", "short-task-v3"}, common...)...)
	if want := "schedlab: compare hackbench on hikey (8 CPUs), kernel v6.0, columns tip, short-task-v3, master seed 1, 1 run each (v6.0 is short-task-v3's baseline; v6.19 without --variant)\n"; code != 0 || errOut != want {
		t.Fatalf("exit %d, stderr\n%q, want\n%q", code, errOut, want)
	}
	tipV60 := tipColumn(t, out)
	out, errOut, code = runMain(t, append([]string{"compare", "--variant", "base:short-task-v3"}, common...)...)
	if code != 0 || !strings.Contains(out, "kernel v6.0") || !strings.Contains(errOut, "columns tip, master seed") {
		t.Fatalf("base: exit %d, stderr %q\n%s", code, errOut, out)
	}
	if got := tipColumn(t, out); got != tipV60 {
		t.Errorf("base:short-task-v3's tip %q, short-task-v3's tip %q: want the same kernel", got, tipV60)
	}
	out, errOut, code = runMain(t, append([]string{"compare"}, common...)...)
	if code != 0 || !strings.Contains(out, "kernel v6.19") || strings.Contains(errOut, "baseline") {
		t.Fatalf("plain: exit %d, stderr %q\n%s", code, errOut, out)
	}
	_, errOut, code = runMain(t, append([]string{"compare", "--variant", "base:nosuch"}, common...)...)
	if code != 2 || !strings.Contains(errOut, `base:nosuch: unknown variant "nosuch"`) {
		t.Errorf("base:nosuch: exit %d, %q", code, errOut)
	}
}

// tipColumn is the tip values of a compare table, row by row.
func tipColumn(t *testing.T, out string) string {
	t.Helper()
	var b strings.Builder
	in := false
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "groups:") {
			in = true
			continue
		}
		if in && strings.TrimSpace(l) == "" {
			break
		}
		if in && len(strings.Fields(l)) >= 2 {
			b.WriteString(strings.Fields(l)[1] + " ")
		}
	}
	if b.Len() == 0 {
		t.Fatalf("no table in\n%s", out)
	}
	return b.String()
}

// compare's help says when a cell has no 95% interval: with fewer runs
// than the test needs (2 for the t-tests, 6 for the U test), and then a
// line under the table says why. With enough runs there is no such line.
func TestCompareSaysWhyNoInterval(t *testing.T) {
	for _, c := range []struct {
		args []string
		note string
	}{
		{[]string{"--runs", "1"}, "No 95% intervals: 1 runs per cell, and the Welch t-test needs at least 2 (--runs 2)."},
		{[]string{"--runs", "3", "--test", "utest"}, "No 95% intervals: 3 runs per cell, and the Mann-Whitney U test needs at least 6 (--runs 6)."},
		{[]string{"--runs", "2"}, ""},
		{[]string{"--runs", "2", "--test", "paired"}, ""},
	} {
		args := append([]string{"compare", "--machine", "hikey"}, c.args...)
		out, errOut, code := runMain(t, append(args, "hackbench", "-l", "10", "-g", "1,2")...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", c.args, code, errOut)
		}
		got := ""
		for _, l := range strings.Split(out, "\n") {
			if strings.HasPrefix(l, "No 95% intervals") {
				got = l
			}
		}
		if got != c.note {
			t.Errorf("%v: the line under the table is %q, want %q", c.args, got, c.note)
		}
		if c.note == "" && strings.Contains(out, "±?") {
			t.Errorf("%v: a cell without an interval:\n%s", c.args, out)
		}
	}
	help, _, _ := runMain(t, "compare", "--help")
	if !strings.Contains(help, "Welch's and the paired t-test give one from 2 runs") || !strings.Contains(help, "a line under the table says why") {
		t.Errorf("compare --help no longer says when a cell has no interval:\n%s", help)
	}
}
