package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/schedlab/schedlab/internal/experiment"
)

// The run options work in compare and, under the same names, in an
// experiment file run by sweep; both reach every run (the record's
// options) and both give the same records for the same seed.
func TestRunOptionsEverywhere(t *testing.T) {
	dir := t.TempDir()
	cj := filepath.Join(dir, "compare.json")
	out, errOut, code := runMain(t, "compare", "--machine", "zen3-2s-nps1", "--cpus", "0-15", "--background-cgroups", "4",
		"--sysctl", "migration_cost_ns=250000", "--variant", "short-task-v3", "--runs", "2", "--json", cj,
		"hackbench", "-p", "-T", "-l", "100", "-g", "1")
	if code != 0 {
		t.Fatalf("compare: exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, "short-task-v3") || !strings.Contains(out, "kernel v6.0") {
		t.Fatalf("compare table:\n%s", out)
	}
	var doc struct {
		Runs []*experiment.Record `json:"runs"`
	}
	b, err := os.ReadFile(cj)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Runs) != 4 {
		t.Fatalf("%d runs, want tip and short-task-v3 twice", len(doc.Runs))
	}
	for _, r := range doc.Runs {
		o := r.Options
		if o == nil || o.CPUs != "0-15" || o.BackgroundCgroups != 4 || len(o.Sysctls) != 1 || o.Sysctls[0] != "migration_cost_ns=250000" {
			t.Fatalf("run %s: options %+v", r.Key, o)
		}
	}

	exp := filepath.Join(dir, "opts.yaml")
	if err := os.WriteFile(exp, []byte(`name: opts
machines: [zen3-2s-nps1]
variants: [short-task-v3]
cpus: 0-15
background_cgroups: 4
sysctls: [migration_cost_ns=250000]
runs: 2
workloads:
  - run: hackbench -p -T -l 100 -g 1
`), 0o644); err != nil {
		t.Fatal(err)
	}
	res := filepath.Join(dir, "res")
	if _, errOut, code := runMain(t, "sweep", exp, "--out", res, "--jobs", "2"); code != 0 {
		t.Fatalf("sweep: exit %d: %s", code, errOut)
	}
	got, err := experiment.ReadResults(res)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Found()) != 4 {
		t.Fatalf("%d records", len(got.Found()))
	}
	for _, r := range got.Found() {
		o := r.Options
		if o == nil || o.CPUs != "0-15" || o.BackgroundCgroups != 4 || len(o.Sysctls) != 1 {
			t.Fatalf("sweep run %s: options %+v", r.Key, o)
		}
		// The same point in compare gave the same run, byte for byte.
		for _, c := range doc.Runs {
			if c.Variant == r.Variant && c.Run == r.Run {
				a, b := *c, *r
				a.Key, b.Key, a.Experiment, b.Experiment = "", "", "", ""
				if string(a.Deterministic()) != string(b.Deterministic()) {
					t.Errorf("%s/%d: compare and sweep differ", r.Variant, r.Run)
				}
			}
		}
	}
}

// Unwritable outputs fail at once, naming the flag, before any run, and
// leave nothing behind.
func TestOutputsCheckedFirst(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--json", "/proc/x.json", "hackbench"}, "schedlab: --json /proc/x.json: "},
		{[]string{"run", "--trace", "/proc/x.dat", "hackbench"}, "schedlab: --trace /proc/x.dat: "},
		{[]string{"run", "--schedstat", "/proc/self/x", "hackbench"}, "schedlab: --schedstat /proc/self/x: "},
		{[]string{"compare", "--json", "/proc/x.json", "hackbench", "-g", "1,2"}, "schedlab: --json /proc/x.json: "},
		{[]string{"compare", "--bench-out", "/proc/x.txt", "hackbench", "-g", "1,2"}, "schedlab: --bench-out /proc/x.txt: "},
		{[]string{"sweep", "short-task", "--out", filepath.Join(dir, "r"), "--slurm", "/proc/x.sh"}, "schedlab: --slurm /proc/x.sh: "},
		{[]string{"sweep", "short-task", "--out", "/proc/r"}, "schedlab: --out /proc/r: "},
	} {
		start := time.Now()
		out, errOut, code := runMain(t, c.args...)
		if code != 2 || out != "" || !strings.HasPrefix(errOut, c.want) || strings.Count(errOut, "\n") != 1 {
			t.Errorf("%v: exit %d, stdout %q, stderr %q (want %q…)", c.args, code, out, errOut, c.want)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("%v: took %v: the check must come before the runs", c.args, d)
		}
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("left behind: %v", ents)
	}
}

// Flag mistakes are one plain sentence naming the flag.
func TestFlagErrorsPlain(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--seed", "abc", "hackbench"}, "schedlab: schedlab run: --seed abc: must be a non-negative integer (see 'schedlab run --help')\n"},
		{[]string{"run", "--background-cgroups", "x", "hackbench"}, "schedlab: schedlab run: --background-cgroups x: must be an integer (see 'schedlab run --help')\n"},
		{[]string{"run", "--feature", "NO_SUCH", "hackbench"}, `schedlab: --feature NO_SUCH: unknown sched feature "NO_SUCH"`},
		{[]string{"run"}, "schedlab: run: name a workload, e.g. 'schedlab run hackbench'"},
		{[]string{"run", "--sysctl", "nope", "hackbench"}, "schedlab: --sysctl nope: write NAME=VALUE"},
		{[]string{"run", "--variant", "a", "--variant", "b", "hackbench"}, "schedlab: --variant: give one variant"},
		{[]string{"run", "--latency-limit", "-3", "hackbench"}, "schedlab: --latency-limit -3: give microseconds"},
		{[]string{"run", "--idle-disable", "C1,C2", "hackbench"}, `schedlab: --idle-disable "C1,C2": give one idle state name per flag`},
		{[]string{"run", "--idle-disable", "C9", "hackbench", "-l", "1"}, `schedlab: idle-disable C9: machine zen3-2s-nps1 has no idle state "C9" (its states: POLL, C1, C2)`},
	} {
		out, errOut, code := runMain(t, c.args...)
		if code != 2 || out != "" || !strings.HasPrefix(errOut, c.want) || strings.Count(errOut, "\n") != 1 || strings.Contains(errOut, "strconv") {
			t.Errorf("%v: exit %d, stderr %q, want %q", c.args, code, errOut, c.want)
		}
	}
}

// --idle-disable and --latency-limit reach the idle governor: schbench's
// wakeup latencies on zen3-2s-nps1 (C2 advertised 400 µs, waking in 18 µs)
// drop when C2 is off or ruled out by a latency request shorter than its
// advertised exit latency, and are the same either way.
func TestIdleFlags(t *testing.T) {
	p50 := func(args ...string) string {
		t.Helper()
		out, errOut, code := runMain(t, append([]string{"run", "--machine", "zen3-2s-nps1"}, append(args, "schbench", "-m", "2", "-t", "4", "-r", "1")...)...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errOut)
		}
		for _, l := range strings.Split(out, "\n") {
			if strings.Contains(l, "50.0000th:") {
				return strings.TrimSpace(l)
			}
		}
		t.Fatalf("%v: no p50 in %q", args, out)
		return ""
	}
	on, off, limited := p50(), p50("--idle-disable", "C2"), p50("--latency-limit", "10")
	if on == off {
		t.Errorf("--idle-disable C2 changed nothing: %s", on)
	}
	if off != limited {
		t.Errorf("--idle-disable C2 gives %s, --latency-limit 10 %s: both should leave C1 only", off, limited)
	}
	if l := p50("--latency-limit", "400"); l != on {
		t.Errorf("--latency-limit 400 admits C2 (advertised 400 µs): %s, want %s", l, on)
	}
}

// --cpuprofile writes a Go CPU profile (gzip-compressed protobuf, as
// runtime/pprof writes it) of the simulation; an unwritable path fails
// before the run, naming the flag.
func TestRunCPUProfile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cpu.pprof")
	if _, errOut, code := runMain(t, "run", "--machine", "hikey", "--cpuprofile", path, "hackbench", "-l", "50"); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	data, err := os.ReadFile(path)
	if err != nil || len(data) < 2 || data[0] != 0x1f || data[1] != 0x8b {
		t.Errorf("profile %s: %d bytes, %v: not a gzip-compressed pprof profile", path, len(data), err)
	}
	_, errOut, code := runMain(t, "run", "--cpuprofile", "/proc/nope/cpu.pprof", "hackbench")
	if code != 2 || !strings.HasPrefix(errOut, "schedlab: --cpuprofile /proc/nope/cpu.pprof: ") {
		t.Errorf("unwritable profile: exit %d, %q", code, errOut)
	}
}
