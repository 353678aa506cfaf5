package cli

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// pctColumn is the Δ % and share columns at the end of an attribution
// row.
var pctColumn = regexp.MustCompile(`\s([+-]\d+\.\d\d)\s+(-?\d+\.\d)%$`)

// checkPrintedIdentity: in each attribution table the printed parts and
// remainder add up to the printed simulated change, to the last digit.
func checkPrintedIdentity(t *testing.T, out string) {
	t.Helper()
	tables := 0
	var sum int64
	in := false
	for _, line := range strings.Split(out, "\n") {
		trimmed := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(trimmed, "part ") && strings.Contains(line, "Δ %"):
			in, sum = true, 0
			continue
		case !in:
			continue
		}
		m := pctColumn.FindStringSubmatch(line)
		if m == nil {
			t.Fatalf("attribution row without a Δ %%: %q", line)
		}
		v, err := strconv.ParseFloat(m[1], 64)
		if err != nil {
			t.Fatal(err)
		}
		n := int64(math.Round(v * 100))
		if strings.HasPrefix(trimmed, "= simulated change") {
			if sum != n {
				t.Errorf("printed parts and remainder add up to %d hundredths of a percent, the simulated change is %s", sum, m[1])
			}
			tables++
			in = false
			continue
		}
		sum += n
	}
	if tables != 2 {
		t.Fatalf("%d attribution tables, want 2 (task-time and CPUs):\n%s", tables, out)
	}
}

func TestExplainCommand(t *testing.T) {
	dir := t.TempDir()
	j := filepath.Join(dir, "x.json")
	args := []string{"explain", "--machine", "hikey", "--variant", "short-task-v3", "--json", j, "hackbench", "-l", "50", "-g", "3"}
	out, stderr, code := run(args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{
		"schedlab explain: hackbench -l 50 -g 3 on hikey (8 CPUs), kernel v6.0: tip (base:short-task-v3) against short-task-v3, 1 run\n",
		"\n1. First divergence\n", "First decision with a different CPU or reason: #",
		"select_task_rq_fair wakeup fast path", "waking CPU ",
		"\n2. Decisions over 1 run", "wakeups by path and reason", "short task (select_idle_cpu scan skipped)",
		"wakeups by distance, waking CPU -> chosen (ttwu_local, ttwu_wake_remote by domain)", "same CPU (ttwu_local)",
		"\n3. Attribution\n", "time_s: ", "run: context switch", "wait: run-queue wait behind other tasks",
		"= simulated change", "The remainder, ", "concurrency ",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	// The machine's levels, as the kernel names them for v6.0.
	if !regexp.MustCompile(`(?m)^    MC\s+\d+`).MatchString(out) || !regexp.MustCompile(`(?m)^    DIE\s+\d+`).MatchString(out) {
		t.Errorf("no MC and DIE rows:\n%s", out)
	}
	checkPrintedIdentity(t, out)
	if want := "schedlab: explain hackbench on hikey (8 CPUs), kernel v6.0, tip base:short-task-v3 against short-task-v3, master seed 1, 1 run (v6.0 is short-task-v3's baseline; v6.19 without --variant)\n"; stderr != want {
		t.Errorf("stderr %q, want %q", stderr, want)
	}
	// Deterministic, whatever ran it.
	args[6] = filepath.Join(dir, "y.json")
	if out2, _, _ := run(args...); out2 != out {
		t.Error("the same command printed something else the second time")
	}
	b1, _ := os.ReadFile(j)
	b2, _ := os.ReadFile(args[6])
	if string(b1) != string(b2) {
		t.Error("the same command wrote other JSON the second time")
	}
	var doc struct {
		SchemaVersion int      `json:"schema_version"`
		Workload      string   `json:"workload"`
		Tip           string   `json:"tip"`
		Variant       string   `json:"variant"`
		Seeds         []uint64 `json:"seeds"`
		Divergence    struct {
			First    string `json:"first"`
			Matching int    `json:"matching_decisions"`
			Decision struct {
				Index int `json:"index"`
				Tip   struct {
					Kind, Reason, Path string
					TimeNs             int64 `json:"time_ns"`
				} `json:"tip"`
			} `json:"first_different_decision"`
		} `json:"divergence"`
		Decisions []struct {
			Title string `json:"title"`
			Rows  []struct {
				Label        string
				Tip, Variant uint64
			} `json:"rows"`
		} `json:"decisions"`
		Attribution struct {
			Simulated float64 `json:"simulated_pct"`
			Remainder float64 `json:"remainder_pct"`
			Parts     []struct {
				Name string  `json:"name"`
				Pct  float64 `json:"pct"`
			} `json:"parts"`
			CPU struct {
				Parts []struct {
					Pct float64 `json:"pct"`
				} `json:"parts"`
				Remainder float64 `json:"remainder_pct"`
			} `json:"cpu_view"`
		} `json:"attribution"`
	}
	if err := json.Unmarshal(b1, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.SchemaVersion != 1 || doc.Workload != "hackbench" || doc.Tip != "base:short-task-v3" || len(doc.Seeds) != 1 ||
		doc.Divergence.First == "" || doc.Divergence.Decision.Index != doc.Divergence.Matching || doc.Divergence.Decision.Tip.Kind == "" ||
		len(doc.Decisions) == 0 || len(doc.Attribution.Parts) == 0 {
		t.Fatalf("JSON %s", b1)
	}
	for i, parts := range [][]float64{pcts(doc.Attribution.Parts), pcts(doc.Attribution.CPU.Parts)} {
		rem := []float64{doc.Attribution.Remainder, doc.Attribution.CPU.Remainder}[i]
		var s float64
		for _, p := range parts {
			s += p
		}
		if math.Abs(s+rem-doc.Attribution.Simulated) > 1e-9 {
			t.Errorf("JSON parts %v + remainder %v ≠ simulated %v", s, rem, doc.Attribution.Simulated)
		}
	}
}

func pcts[T any](parts []T) []float64 {
	var out []float64
	for _, p := range parts {
		b, _ := json.Marshal(p)
		var x struct{ Pct float64 }
		json.Unmarshal(b, &x)
		out = append(out, x.Pct)
	}
	return out
}

func TestExplainErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"explain", "--machine", "hikey", "hackbench", "-l", "5"}, "schedlab: --variant: name the variant to explain (see 'schedlab variants'), or give --column NAME=FLAGS\n"},
		{[]string{"explain", "--variant", "short-task-v3", "--column", "p=--feature SIS_PROP", "hackbench"}, "schedlab: --column p=--feature SIS_PROP: explain compares tip with either one variant or one column; give --variant or --column, not both\n"},
		{[]string{"explain", "--column", "p--feature SIS_PROP", "hackbench"}, "schedlab: --column p--feature SIS_PROP: write NAME=FLAGS, e.g. 'nowaw=--feature NO_WA_WEIGHT'\n"},
		{[]string{"explain", "--column", "p=--feature NO_SUCH_FEATURE", "hackbench", "-l", "5"}, ""},
		{[]string{"explain", "--column", "p=--featur SIS_PROP", "hackbench", "-l", "5"}, ""},
		{[]string{"explain", "--variant", "base:short-task-v3", "hackbench"}, "schedlab: --variant base:short-task-v3: explain compares a variant with its base; give the variant's name\n"},
		{[]string{"explain", "--variant", "short-task-v3", "--runs", "0", "hackbench"}, "schedlab: --runs 0: give at least 1\n"},
		{[]string{"explain", "--variant", "short-task-v3", "--runs", "x", "hackbench"}, ""},
		{[]string{"explain", "--variant", "no-such-patch", "hackbench"}, ""},
		{[]string{"explain", "--variant", "short-task-v3", "--kernel", "v6.19", "hackbench"}, ""},
		{[]string{"explain", "--variant", "short-task-v3", "hackbench", "-x"}, "schedlab: hackbench: invalid option -- 'x'\n"},
		{[]string{"explain", "--variant", "short-task-v3", "bogus"}, ""},
		{[]string{"explain"}, ""},
		{[]string{"explain", "--machine", "hikey", "--variant", "short-task-v3", "--metric", "nope", "hackbench", "-l", "5", "-g", "1"}, ""},
		{[]string{"explain", "--variant", "short-task-v3", "--json", "/nonexistent/x.json", "hackbench"}, ""},
	} {
		out, stderr, code := run(c.args...)
		if code != 2 || out != "" || strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(stderr, "schedlab: ") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", c.args, code, out, stderr)
		}
		if c.want != "" && stderr != c.want {
			t.Errorf("%v: stderr %q, want %q", c.args, stderr, c.want)
		}
	}
	// The tool's own help, as run gives it.
	if out, _, code := run("explain", "--variant", "short-task-v3", "hackbench", "-h"); code != 0 || !strings.HasPrefix(out, "hackbench V 2.40\n") {
		t.Errorf("hackbench -h: exit %d, %q", code, out)
	}
}

// TestExplainMustShow is issue 38's command: sis-cluster on 32 CPUs of a
// Kunpeng 920 under tbench, stopped at steady state (-t 5: a 1 s warmup
// instead of 120 s). It takes about 10 s.
func TestExplainMustShow(t *testing.T) {
	if testing.Short() {
		t.Skip("two tbench runs on 32 CPUs")
	}
	out, stderr, code := run("explain", "--machine", "kunpeng920-128", "--cpus", "0-31", "--variant", "sis-cluster", "tbench", "-t", "5", "32")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{
		"\n1. First divergence\n", "First decision with a different CPU or reason: #",
		"\n2. Decisions over 1 run", "wakeups by distance, waking CPU -> chosen", "balance migrations by type and level",
		"\n3. Attribution\n", "throughput_mb_s: ", "the workload's measured window", "per MB",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	// sis-cluster makes the CLS level's groups clusters: the levels are
	// named as v6.0 names them on this machine.
	if !regexp.MustCompile(`(?m)^    CLS\s+\d+`).MatchString(out) || !regexp.MustCompile(`(?m)^    MC\s+\d+`).MatchString(out) {
		t.Errorf("no CLS and MC rows:\n%s", out)
	}
	checkPrintedIdentity(t, out)
}

// compare --explain adds explain's report for each load, over the same
// runs: its simulated change is the table's.
func TestCompareExplain(t *testing.T) {
	out, stderr, code := run("compare", "--machine", "hikey", "--variant", "short-task-v3", "--runs", "2", "--explain", "hackbench", "-l", "30", "-g", "1,2")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	checkTableMatchesExplain(t, out, "")
	checkPrintedIdentity(t, out[strings.Index(out, "schedlab explain:"):strings.LastIndex(out, "schedlab explain:")])
}

// TestExplainColumn: explain --column runs tip against tip with the
// column's flags laid over it, on the seeds compare's run i uses: its
// tip side is `run` with tip's flags and its other side `run` with the
// column's added, seed for seed (a change of settings the run does not
// see would leave the two equal, or equal to tip), and the printed
// attribution adds up as for a variant.
func TestExplainColumn(t *testing.T) {
	dir := t.TempDir()
	j := filepath.Join(dir, "x.json")
	out, stderr, code := run("explain", "--machine", "hikey", "--kernel", "v6.0", "--column", "prop=--feature SIS_PROP --feature NO_SIS_UTIL",
		"--json", j, "hackbench", "-l", "50", "-g", "2")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if want := "schedlab explain: hackbench -l 50 -g 2 on hikey (8 CPUs), kernel v6.0: tip against prop, 1 run\n"; !strings.HasPrefix(out, want) {
		t.Errorf("header: want %q, output:\n%s", want, out)
	}
	checkPrintedIdentity(t, out)
	var rep struct {
		Seeds       []uint64 `json:"seeds"`
		Attribution struct {
			Tip   struct{ Metric float64 } `json:"tip"`
			Other struct{ Metric float64 } `json:"variant"`
		} `json:"attribution"`
	}
	b, err := os.ReadFile(j)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &rep); err != nil || len(rep.Seeds) != 1 {
		t.Fatalf("report %s: %v, seeds %v", j, err, rep.Seeds)
	}
	seed := strconv.FormatUint(rep.Seeds[0], 10)
	metric := func(extra ...string) float64 {
		t.Helper()
		rj := filepath.Join(dir, "run.json")
		args := append([]string{"run", "--machine", "hikey", "--kernel", "v6.0", "--seed", seed, "--json", rj}, extra...)
		args = append(args, "hackbench", "-l", "50", "-g", "2")
		if _, stderr, code := run(args...); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
		var r struct {
			Metrics map[string]struct{ Value float64 } `json:"metrics"`
		}
		b, err := os.ReadFile(rj)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &r); err != nil {
			t.Fatal(err)
		}
		return r.Metrics["time_s"].Value
	}
	tip, prop := metric(), metric("--feature", "SIS_PROP", "--feature", "NO_SIS_UTIL")
	if tip == prop {
		t.Fatalf("the column's flags change nothing here (time_s %v both): pick a workload where they act", tip)
	}
	if rep.Attribution.Tip.Metric != tip || rep.Attribution.Other.Metric != prop {
		t.Errorf("explain's time_s tip %v, prop %v; run's with the same seed %v and %v", rep.Attribution.Tip.Metric, rep.Attribution.Other.Metric, tip, prop)
	}
}

// TestCompareExplainColumn: compare --explain explains a column of flags
// against the table's own tip at each load, and its change is the
// table's.
func TestCompareExplainColumn(t *testing.T) {
	out, stderr, code := run("compare", "--machine", "hikey", "--kernel", "v6.0", "--column", "prop=--feature SIS_PROP --feature NO_SIS_UTIL",
		"--runs", "2", "--explain", "hackbench", "-l", "30", "-g", "1,2")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if strings.Contains(out, "left out") {
		t.Fatalf("a column was left out:\n%s", out)
	}
	checkTableMatchesExplain(t, out, " against prop")
}

// checkTableMatchesExplain: a compare --explain of hackbench -l 30 -g 1,2
// on hikey with 2 runs has one report per load (its header ending in
// against + ", 2 runs"), and each report's change is the table's.
func checkTableMatchesExplain(t *testing.T, out, against string) {
	t.Helper()
	table := regexp.MustCompile(`(?m)^\s+(\d+)\s+\S+\s+\(0\.00%\)\s+±\S+\s+\S+\s+\(([+-]?\d+\.\d\d)%\)`).FindAllStringSubmatch(out, -1)
	reports := regexp.MustCompile(`(?m)^schedlab explain: hackbench -l 30 -g (\d+) on hikey .*`+regexp.QuoteMeta(against)+`, 2 runs\n`).FindAllStringSubmatch(out, -1)
	changes := regexp.MustCompile(`(?m)^  time_s: .*: ([+-]\d+\.\d\d)% \(positive = better`).FindAllStringSubmatch(out, -1)
	if len(table) != 2 || len(reports) != 2 || len(changes) != 2 {
		t.Fatalf("%d table rows, %d reports, %d changes:\n%s", len(table), len(reports), len(changes), out)
	}
	for i := range table {
		// The table prints a gain without its sign, as mmtests does.
		if reports[i][1] != table[i][1] || strings.TrimPrefix(changes[i][1], "+") != strings.TrimPrefix(table[i][2], "+") {
			t.Errorf("load %s: the table says %s%%, explain (load %s) %s%%", table[i][1], table[i][2], reports[i][1], changes[i][1])
		}
	}
}
