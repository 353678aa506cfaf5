package fidelity

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/schedlab/schedlab/internal/fileerr"
	"github.com/schedlab/schedlab/internal/sim"
)

const goodFile = "testdata/corpus/synthetic-hikey-messaging.yaml"

func readGood(t testing.TB) string {
	data, err := os.ReadFile(goodFile)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func TestParseGood(t *testing.T) {
	c, err := Parse(goodFile, []byte(readGood(t)))
	if err != nil {
		t.Fatal(err)
	}
	if c.ID != "synthetic-hikey-messaging" || c.Machine.Preset != "hikey" || c.Simulate.Scale != 10 || len(c.Columns) != 3 || len(c.Rows) != 2 {
		t.Errorf("parsed %+v", c)
	}
	if got := c.Args("4"); strings.Join(got, " ") != "-p -t -l 50 -g 4" {
		t.Errorf("args for load 4: %q", got)
	}
	// A load that carries several flags reaches the tool as separate
	// arguments, as an unquoted shell expansion is split: hikey's
	// runnable-avg case ran 10 groups (hackbench's default) because
	// "-l 2560 -g 1" was one argument.
	if got := substitute([]string{"-p", "{load}", "x{load}y"}, "-l 2560 -g 1"); strings.Join(got, "|") != "-p|-l|2560|-g|1|x-l|2560|-g|1y" {
		t.Errorf("load with spaces: %q", got)
	}
	if !c.Simulated(0) || !c.Simulated(1) || c.Simulated(2) {
		t.Error("tip and the variant column are simulated, the column without a variant is not")
	}
	if c.Rows[0].Values["outside"] != 0.19 || c.Rows[0].SD["tip"] != 0.001 || c.Rows[1].SD != nil {
		t.Errorf("rows %+v", c.Rows)
	}
	if !c.InQuick(0) || c.InQuick(1) {
		t.Error("quick: [1] takes row 1 only")
	}
}

// Each mistake is reported at its file and line. The edits apply to the
// good case file; line numbers are the good file's (cat -n it).
func TestParseErrors(t *testing.T) {
	good := readGood(t)
	for _, tc := range []struct {
		name    string
		old     string // replaced in the good file ("" appends new)
		new     string
		line    int
		message string
	}{
		{"yaml syntax", "  runs: 5\n", "  runs: [5\n", 18, "did not find expected"},
		{"unknown top key", "", "colour: blue\n", 43, `unknown key "colour" in the case`},
		{"unknown nested key", "  unit: s\n", "  unit: s\n  units: s\n", 23, `unknown key "units" in metric`},
		{"duplicate key", "  unit: s\n", "  unit: s\n  unit: ms\n", 23, `duplicate key "unit" in metric (first at line 22)`},
		{"missing section", "command: \"perf bench sched messaging -p -t -l 500 -g {load}\"\n", "", 4, "the case has no command"},
		{"missing field", "  author: \"schedlab tests\"\n", "", 6, "source has no author"},
		{"no citation", "  message_id: \"<synthetic-1@example.invalid>\"\n", "", 6, "neither message_id nor url"},
		{"bad message id", "<synthetic-1@example.invalid>", "synthetic-1", 7, "is not a Message-ID"},
		{"bad url", "  message_id:", "  url: ftp://x\n  message_id:", 7, "is not an http(s) URL"},
		{"bad date", "date: 2024-01-02", "date: 2024-13-02", 8, `source.date "2024-13-02"`},
		{"id and file name", "id: synthetic-hikey-messaging", "id: other", 4, "does not match the file name"},
		{"held out", `title: "synthetic test case"`, `title: "Re: [RFC PATCH] sched/fair: Choose the CPU where short task is running during wake up"`, 6, "is held out"},
		{"preset", "preset: hikey", "preset: hikey970", 11, `machine.preset "hikey970" is not a schedlab preset`},
		{"host", "preset: hikey", "preset: host", 11, "machine.preset host"},
		{"preset and file", "  preset: hikey\n", "  preset: hikey\n  file: box.yaml\n", 12, "both a preset and a file"},
		{"machine file path", "  preset: hikey\n", "  file: ../box.yaml\n", 11, "no directories"},
		{"kernel", "baseline: v5.12", "baseline: v5.10", 14, `kernel.baseline "v5.10" is not a schedlab kernel`},
		{"statistic", "statistic: mean", "statistic: average", 19, `aggregation.statistic "average"`},
		{"runs", "runs: 5", "runs: five", 18, "aggregation.runs must be an integer"},
		{"direction", "better: lower", "better: smaller", 23, `metric.better "smaller": lower or higher`},
		{"metric", "name: time_s", "name: time_ms", 21, `metric.name "time_ms": perf-bench-messaging reports time_s, messages, bytes`},
		{"tool", "tool: perf-bench-messaging", "tool: hackbench2", 25, `unknown workload "hackbench2"`},
		{"no load token", "-g {load}\"\n  scale", "-g 1\"\n  scale", 26, "simulate.args has no {load}, but row 1 has load \"1\""},
		{"load token without loads", "  - load: 2\n", "  - load: \"\"\n", 39, "row 2 has no load, but simulate.args takes {load}"},
		{"tool rejects a load", "  - load: 2\n", "  - load: x\n", 39, "perf-bench-messaging with load x:"},
		{"unterminated quote", `args: "-p -t -l 50 -g {load}"`, `args: "-p -t -l '50 -g {load}"`, 26, "unterminated ' quote"},
		{"scale", "scale: 10", "scale: -1", 27, "simulate.scale -1: must be positive"},
		{"scale without why", "  why: \"time is proportional to -l; -l 50 keeps the test fast\"\n", "", 27, "say why in simulate.why"},
		{"quick load", "quick: [1]", "quick: [1, 3]", 29, `simulate.quick: no row has load "3"`},
		{"quick twice", "quick: [1]", "quick: [1, 1]", 29, `simulate.quick lists load "1" twice`},
		{"cpus", "  quick: [1]\n", "  quick: [1]\n  cpus: 0-8\n", 30, `simulate.cpus "0-8" on hikey (8 CPUs)`},
		{"variant", "variant: blocked-load-outside-newidle", "variant: sis-util", 33, `variant "sis-util" is not a schedlab variant`},
		{"variant of another kernel", "baseline: v5.12", "baseline: v6.19", 33, "variant blocked-load-outside-newidle applies to kernel v5.12"},
		{"held-out variant", "variant: blocked-load-outside-newidle", "variant: blocked-avg-ratelimit", 33, "is a held-out patch"},
		{"tip with variant", "  - name: tip\n", "  - name: tip\n    variant: blocked-load-outside-newidle\n", 32, "the first column is tip"},
		{"column twice", "  - name: other\n", "  - name: outside\n", 34, `column "outside" is declared twice (first at line 32)`},
		{"column name", "  - name: other\n", "  - name: \"o t\"\n", 34, `column name "o t"`},
		{"undeclared column", "other: 0.5}", "others: 0.5}", 37, `values: column "others" is not declared in columns (have tip, outside, other)`},
		{"value not a number", "tip: 0.30,", "tip: fast,", 40, "values of tip must be a number"},
		{"value not positive", "tip: 0.30,", "tip: 0,", 40, "published values are positive"},
		{"sd without value", "    values: {tip: 0.30, outside: 0.33}\n", "    values: {tip: 0.30, outside: 0.33}\n    sd: {other: 1}\n", 41, "sd: column other has no value in this row"},
		{"sd undeclared", "sd: {tip: 0.001, outside: 0.001}", "sd: {tip: 0.001, nope: 0.001}", 38, `sd: column "nope" is not declared`},
		{"sd negative", "sd: {tip: 0.001, outside: 0.001}", "sd: {tip: -0.001}", 38, "a standard deviation is not negative"},
		{"load twice", "  - load: 2\n", "  - load: 1\n", 39, `load "1" is also row 1's (line 36)`},
		{"no values", "    values: {tip: 0.30, outside: 0.33}\n", "    values: {}\n", 40, `row "2" has no values`},
		{"no rows", "rows:\n  - load: 1\n    values: {tip: 0.20, outside: 0.19, other: 0.5}\n    sd: {tip: 0.001, outside: 0.001}\n  - load: 2\n    values: {tip: 0.30, outside: 0.33}\n", "rows: []\n", 35, "rows must be a non-empty list"},
		{"empty", "", "", 0, ""}, // replaced below
		{"alias", "  unit: s\n", "  unit: &u s\n", 22, "anchors and aliases are not supported"},
		{"empty string", `author: "schedlab tests"`, `author: ""`, 9, "source.author is empty"},
		{"not a mapping", "kernel:\n  baseline: v5.12\n  published: \"synthetic: no kernel ran\"\n", "kernel: v5.12\n", 13, "kernel must be a mapping"},
		// Columns as kernel configurations: each setting is checked as
		// schedlab run --feature/--sysctl checks it, at its own line.
		{"unknown feature", "  - name: other\n", "  - name: other\n    features:\n      - NO_TTWU_QUEUE\n      - NO_SUCH_FEATURE\n", 37, `--feature NO_SUCH_FEATURE: unknown sched feature "NO_SUCH_FEATURE" (v5.12 has`},
		{"feature not in the kernel", "  - name: other\n", "  - name: other\n    features: [PLACE_LAG]\n", 35, "--feature PLACE_LAG: feature PLACE_LAG is not in v5.12"},
		{"unknown sysctl", "  - name: other\n", "  - name: other\n    sysctls: [migration_cost=1]\n", 35, `--sysctl migration_cost=1: unknown sysctl "migration_cost"`},
		{"sysctl value", "  - name: other\n", "  - name: other\n    sysctls: [migration_cost_ns=fast]\n", 35, `--sysctl migration_cost_ns=fast: migration_cost_ns: "fast" is not a non-negative integer`},
		{"sysctl without value", "  - name: other\n", "  - name: other\n    sysctls: [migration_cost_ns]\n", 35, "--sysctl migration_cost_ns: write NAME=VALUE"},
		{"tip sysctl", "  - name: tip\n", "  - name: tip\n    sysctls: [hz=99]\n", 32, "--sysctl hz=99: hz must be 100, 250, 300 or 1000"},
		{"case-wide sysctl", "  quick: [1]\n", "  quick: [1]\n  sysctls: [nope=1]\n", 30, `--sysctl nope=1: unknown sysctl "nope"`},
		{"case-wide feature in another kernel", "  quick: [1]\n", "  quick: [1]\n  features: [SIS_PROP]\n", 30, "--feature SIS_PROP: feature SIS_PROP is not in v6.19 (for column other, kernel v6.19)"},
		{"empty features", "  - name: other\n", "  - name: other\n    features: []\n", 35, "columns.2.features must be a non-empty list"},
		{"not one word", "  - name: other\n", "  - name: other\n    features: [\"NO_A NO_B\"]\n", 35, `"NO_A NO_B" is not one word`},
		{"tip with kernel", "  - name: tip\n", "  - name: tip\n    kernel: v6.19\n", 32, "the first column is tip, which runs kernel.baseline (v5.12)"},
		{"column kernel", "  - name: other\n", "  - name: other\n    kernel: v5.10\n", 35, `column other: kernel "v5.10" is not a schedlab kernel`},
		{"variant of the column's kernel", "    variant: blocked-load-outside-newidle\n", "    variant: blocked-load-outside-newidle\n    kernel: v6.19\n", 33, "variant blocked-load-outside-newidle applies to kernel v5.12, and the column's kernel is v6.19"},
		{"no-op column", "  - name: other\n", "  - name: other\n    features: [SIS_PROP, TTWU_QUEUE]\n", 34, "column other runs the same kernel as tip (--kernel v5.12 --feature SIS_PROP --feature TTWU_QUEUE): its settings change nothing"},
		{"same kernel twice", "  - name: other\n", "  - name: other\n    sysctls: [migration_cost_ns=100000]\n  - name: again\n    sysctls: [nr_migrate=32, migration_cost_ns=100000]\n", 36, "column again runs the same kernel as column other"},
	} {
		data := good
		if tc.name == "case-wide feature in another kernel" {
			good := strings.Replace(good, "  - name: other\n", "  - name: other\n    kernel: v6.19\n", 1)
			data = strings.Replace(good, tc.old, tc.new, 1)
			checkParseError(t, tc.name, data, tc.line, tc.message)
			continue
		}
		switch {
		case tc.name == "empty":
			data, tc.line, tc.message = "# nothing\n", 1, "empty case file"
		case tc.old == "":
			data += tc.new
		default:
			if !strings.Contains(good, tc.old) {
				t.Fatalf("%s: %q is not in the good file", tc.name, tc.old)
			}
			data = strings.Replace(good, tc.old, tc.new, 1)
		}
		checkParseError(t, tc.name, data, tc.line, tc.message)
	}
}

func checkParseError(t *testing.T, name, data string, line int, message string) {
	t.Helper()
	_, err := Parse(goodFile, []byte(data))
	want := goodFile + ":" + strconv.Itoa(line) + ": "
	var fe *fileerr.Error
	if err == nil || !errors.As(err, &fe) || !strings.HasPrefix(err.Error(), want) || !strings.Contains(err.Error(), message) {
		t.Errorf("%s: got %v\nwant %s...%s", name, err, want, message)
	}
}

// A parsed case writes back (Marshal) into the same case.
func TestMarshalRoundTrip(t *testing.T) {
	files, _ := filepath.Glob("testdata/corpus/synthetic-*.yaml")
	for _, f := range files {
		if strings.HasSuffix(f, "synthetic-box.yaml") {
			continue
		}
		data, _ := os.ReadFile(f)
		c, err := Parse(f, data)
		if err != nil {
			t.Fatal(err)
		}
		again, err := Parse(f, c.Marshal())
		if err != nil {
			t.Fatalf("%s: the marshalled case does not parse: %v\n%s", f, err, c.Marshal())
		}
		if !sameCase(c, again) {
			t.Errorf("%s: round trip differs:\n%+v\n%+v", f, c, again)
		}
	}
}

func sameCase(a, b *Case) bool {
	x, y := *a, *b
	x.lines, y.lines = nil, nil
	return reflect.DeepEqual(x, y)
}

func TestLoadCorpus(t *testing.T) {
	c, err := Load(os.DirFS("testdata/corpus"), "testdata/corpus")
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, cs := range c.Cases {
		ids = append(ids, cs.ID)
	}
	if strings.Join(ids, " ") != "synthetic-box-schbench synthetic-hikey-messaging synthetic-hikey-tbench synthetic-mech-hikey-goidle" {
		t.Errorf("cases %v", ids)
	}
	mf := c.Machines["synthetic-box.yaml"]
	if mf == nil || len(mf.Spec.CPUs) != 4 || len(mf.Hash) != 64 {
		t.Fatalf("machine file %+v", mf)
	}
	sel, err := c.Select("synthetic-hikey-*")
	if err != nil || len(sel) != 2 {
		t.Errorf("select: %v %v", sel, err)
	}
	if _, err := c.Select("nope*"); err == nil || !strings.Contains(err.Error(), `--case "nope*": no case of testdata/corpus matches`) {
		t.Errorf("select nothing: %v", err)
	}
}

// The corpus's cross-file mistakes name the file and line too.
func TestLoadErrors(t *testing.T) {
	box, _ := os.ReadFile("testdata/corpus/synthetic-box.yaml")
	sch, _ := os.ReadFile("testdata/corpus/synthetic-box-schbench.yaml")
	msg := []byte(readGood(t))
	for _, tc := range []struct {
		name  string
		files map[string]string
		want  string
	}{
		{"missing machine file", map[string]string{"synthetic-box-schbench.yaml": string(sch)},
			"cases/synthetic-box-schbench.yaml:10: machine.file synthetic-box.yaml: no such file beside the case in cases"},
		{"bad machine file", map[string]string{"synthetic-box-schbench.yaml": string(sch), "synthetic-box.yaml": strings.Replace(string(box), "sockets: 1", "sockets: 0", 1)},
			"cases/synthetic-box.yaml:5: "},
		{"cpus beyond the machine file", map[string]string{"synthetic-box-schbench.yaml": strings.Replace(string(sch), `cpus: "0-3"`, `cpus: "0-5"`, 1), "synthetic-box.yaml": string(box)},
			`cases/synthetic-box-schbench.yaml:27: simulate.cpus "0-5" on synthetic-box.yaml (4 CPUs)`},
		{"stray machine file", map[string]string{"synthetic-box.yaml": string(box)},
			`cases/synthetic-box.yaml:2: unknown key "name" in the case (known: id, source, machine, kernel, command, aggregation, metric, simulate, columns, rows, fitted, notes) (is this a machine file? no case names it as machine.file)`},
		{"same id twice", map[string]string{"synthetic-hikey-messaging.yaml": string(msg), "synthetic-hikey-messaging.yml": string(msg)},
			`cases/synthetic-hikey-messaging.yml:4: id "synthetic-hikey-messaging" is also cases/synthetic-hikey-messaging.yaml's`},
	} {
		fsys := fstest.MapFS{}
		for n, d := range tc.files {
			fsys[n] = &fstest.MapFile{Data: []byte(d)}
		}
		_, err := Load(fsys, "cases")
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%s: %v\nwant %s", tc.name, err, tc.want)
		}
	}
	// An empty directory is an empty corpus, not an error.
	c, err := Load(fstest.MapFS{".gitkeep": &fstest.MapFile{}}, "cases")
	if err != nil || len(c.Cases) != 0 {
		t.Errorf("empty corpus: %v, %d cases", err, len(c.Cases))
	}
}

// FuzzParseCase: no input panics the parser; every error is a FileError at
// a line of the input; a case that parses validates again and writes back
// (Marshal) into the same case.
func FuzzParseCase(f *testing.F) {
	files, _ := filepath.Glob("testdata/corpus/*.yaml")
	for _, name := range files {
		data, _ := os.ReadFile(name)
		f.Add(data)
	}
	f.Add([]byte("id: x\nrows: [{load: 1, values: {tip: 1}}]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := parse("case.yaml", data)
		if err != nil {
			checkFileError(t, err, data)
			return
		}
		// The case's file is cases/<id>.yaml; name it so.
		c.File = c.ID + ".yaml"
		if err := c.Validate(); err != nil {
			checkFileError(t, err, data)
			return
		}
		if err := c.Validate(); err != nil {
			t.Fatalf("a valid case fails to validate again: %v", err)
		}
		again, err := Parse(c.File, c.Marshal())
		if err != nil {
			t.Fatalf("the marshalled case does not parse: %v\n%s", err, c.Marshal())
		}
		if !sameCase(c, again) {
			t.Fatalf("round trip differs:\n%+v\n%+v", c, again)
		}
	})
}

func checkFileError(t *testing.T, err error, data []byte) {
	var fe *fileerr.Error
	if !errors.As(err, &fe) {
		t.Fatalf("%T %v: not a *fileerr.Error", err, err)
	}
	if lines := fileerr.LineCount(data); fe.Line < 1 || fe.Line > lines {
		t.Fatalf("line %d of a %d-line input: %v", fe.Line, lines, err)
	}
}

// Validate reads a tool's metric names from an instance that has not
// run. Every tool gives them but STREAM, whose Metrics needs the run's
// times; its cases' metric is checked when the first run ends.
func TestMetricNamesBeforeRun(t *testing.T) {
	for tool, args := range map[string][]string{
		"hackbench":            {"-g", "1"},
		"perf-bench-messaging": {"-g", "1"},
		"perf":                 {"bench", "sched", "messaging", "-g", "1"},
		"perf-bench-pipe":      {"-l", "10", "--cpus-pair", "0,1"},
		"lat_pipe":             {"-W", "1", "-N", "20", "--cpus-pair", "1,64"},
		"schbench":             {"-m", "1", "-t", "1"},
		"schbench-current":     {"-m", "1", "-t", "1"},
		"tbench":               {"1", "127.0.0.1"},
		"stream":               {"OMP_NUM_THREADS=2"},
		"rt-app":               {"../sim/testdata/example.json"},
		"replay":               {"../replay/testdata/hackbench-pipe.txt"},
		"frames":               {"-d", "1"},
	} {
		_, inst, err := sim.Parse(tool, args)
		if err != nil {
			t.Errorf("%s %v: %v", tool, args, err)
			continue
		}
		names := metricNames(inst)
		if len(names) == 0 {
			t.Errorf("%s names no metric before it runs", tool)
		}
	}
	if n := len(sim.Tools()); n != 12 {
		t.Errorf("%d tools: add the new one here", n)
	}
}
