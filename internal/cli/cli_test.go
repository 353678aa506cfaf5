package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/schedlab/schedlab/internal/schedstat"
)

func run(args ...string) (string, string, int) {
	var out, errb bytes.Buffer
	code := Main(&out, &errb, args)
	return out.String(), errb.String(), code
}

func TestUnknownCommandAndFlag(t *testing.T) {
	for _, args := range [][]string{{"bogus"}, {"version", "--nope"}, {"scenario"}} {
		_, stderr, code := run(args...)
		if code != 2 {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
		if strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(stderr, "schedlab: ") {
			t.Errorf("%v: stderr %q is not one line", args, stderr)
		}
	}
}

func TestScenarioCommand(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "s.txt")
	text := "machine name=hikey\n----\n\ntask name=a cpu=0 affinity=0\nrun 10ms\n----\n\nadvance by=5ms\n----\n\ntasks\n----\n"
	os.WriteFile(f, []byte(text), 0o644)
	out, stderr, code := run("scenario", f)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(out, "a/1 state=R cpu=0 cgroup=/ on_rq=1 running=1 sum_exec_runtime=4000000") {
		t.Fatalf("output:\n%s", out)
	}
	// The printed file is its own expectation: --check on it passes.
	os.WriteFile(f, []byte(out), 0o644)
	out2, _, code := run("scenario", "--check", f)
	if code != 0 || !strings.Contains(out2, "all as expected") {
		t.Fatalf("check: exit %d\n%s", code, out2)
	}
	// A changed expectation fails with exit 1.
	os.WriteFile(f, []byte(strings.Replace(out, "running=1", "running=0", 1)), 0o644)
	if _, _, code := run("scenario", "--check", f); code != 1 {
		t.Fatalf("check of a wrong expectation: exit %d", code)
	}
}

func TestScenarioErrors(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "bad.txt")
	os.WriteFile(f, []byte("machine name=hikey\n----\n\ntask name=a\nrun 3 parsecs\n----\n"), 0o644)
	_, stderr, code := run("scenario", f)
	if code != 2 || stderr != "schedlab: "+f+":5: run takes one duration\n" {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	_, stderr, code = run("scenario", filepath.Join(dir, "missing.txt"))
	if code != 2 || !strings.Contains(stderr, "missing.txt: no such file or directory") {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
}

// TestRunTraceAndSchedstat runs a small hackbench with --trace,
// --schedstat and --json and reads the files back with the trace and
// schedstat commands. The three views of the run must agree: every
// successful try_to_wake_up emits one sched_waking and counts one
// ttwu_count on the waker's CPU, every switch to a task is one pcount
// (sched_info_arrive), and schedstat diff prints the counters averaged
// over the 8 CPUs (truncated, as perf sched stats does).
// Reference: core.c:try_to_wake_up, ttwu_stat; stats.h:sched_info_arrive
// (v6.19).
func TestRunTraceAndSchedstat(t *testing.T) {
	dir := t.TempDir()
	tr := filepath.Join(dir, "run.txt")
	ss := filepath.Join(dir, "tip")
	js := filepath.Join(dir, "run.json")
	out, stderr, code := run("run", "--machine", "hikey", "--trace", tr, "--schedstat", ss, "--json", js, "hackbench", "-p", "-T", "-l", "10", "-g", "1")
	if code != 0 || !strings.Contains(out, "Time: ") {
		t.Fatalf("run: exit %d\n%s%s", code, out, stderr)
	}
	data, err := os.ReadFile(tr)
	if err != nil || !strings.HasPrefix(string(data), "# tracer: nop") {
		t.Fatalf("trace file: %v\n%.300s", err, data)
	}
	var wakings, toTask, toIdle int
	for _, l := range strings.Split(string(data), "\n") {
		switch {
		case strings.Contains(l, ": sched_waking: "):
			wakings++
		case strings.Contains(l, ": sched_switch: prev_comm="):
			if strings.Contains(l, " next_pid=0 ") {
				toIdle++
			} else {
				toTask++
			}
		}
	}
	var doc struct {
		Metrics map[string]struct {
			Value float64 `json:"value"`
		} `json:"metrics"`
		Schedstat struct {
			CPU map[string]int `json:"cpu"`
		} `json:"schedstat"`
	}
	if b, err := os.ReadFile(js); err != nil || json.Unmarshal(b, &doc) != nil {
		t.Fatalf("json: %v", err)
	}
	// One group of 20 senders, each sending 10 messages of 100 bytes to
	// each of the 20 receivers.
	if doc.Metrics["messages"].Value != 20*20*10 || doc.Metrics["bytes"].Value != 20*20*10*100 {
		t.Errorf("metrics %v, want 4000 messages of 100 bytes", doc.Metrics)
	}
	c := doc.Schedstat.CPU
	if c["ttwu_count"] != wakings || c["pcount"] != toTask || c["sched_goidle"] < toIdle || wakings < 20 {
		t.Errorf("schedstat ttwu_count %d, pcount %d, sched_goidle %d; the trace has %d wakings, %d switches to a task, %d to idle",
			c["ttwu_count"], c["pcount"], c["sched_goidle"], wakings, toTask, toIdle)
	}
	// The --schedstat snapshots hold the same counts.
	var before, after *schedstat.Snapshot
	for _, f := range []struct {
		name string
		s    **schedstat.Snapshot
	}{{"schedstat-before.txt", &before}, {"schedstat-after.txt", &after}} {
		fh, err := os.Open(filepath.Join(ss, f.name))
		if err != nil {
			t.Fatal(err)
		}
		*f.s, err = schedstat.Parse(fh)
		fh.Close()
		if err != nil {
			t.Fatal(err)
		}
	}
	d, err := schedstat.Diff(before, after)
	if err != nil {
		t.Fatal(err)
	}
	var ttwu, pcount uint64
	for _, cs := range d.CPUs {
		ttwu += cs.TtwuCount
		pcount += cs.Pcount
	}
	if int(ttwu) != wakings || int(pcount) != toTask || len(d.CPUs) != 8 {
		t.Errorf("schedstat files: ttwu_count %d, pcount %d over %d CPUs; the trace has %d and %d", ttwu, pcount, len(d.CPUs), wakings, toTask)
	}
	lat, _, code := run("trace", "latency", tr)
	if code != 0 || !strings.Contains(lat, "hackbench") || !strings.Contains(lat, "TOTAL:") {
		t.Fatalf("trace latency: exit %d\n%s", code, lat)
	}
	diff, stderr, code := run("schedstat", "diff", ss, ss)
	want := regexp.MustCompile(`try_to_wake_up\(\) was called +: +` + strconv.Itoa(wakings/8) + `, +` + strconv.Itoa(wakings/8) + ` `)
	if code != 0 || !want.MatchString(diff) {
		t.Fatalf("schedstat diff: exit %d, want %v\n%s%s", code, want, diff, stderr)
	}
	// A bad trace file name is one error line, exit 2.
	_, stderr, code = run("run", "--machine", "hikey", "--trace", filepath.Join(dir, "x.bin"), "hackbench", "-l", "1", "-g", "1")
	if code != 2 || !strings.Contains(stderr, ".txt (ftrace text), .dat") {
		t.Fatalf("bad --trace: exit %d %q", code, stderr)
	}
}

// schedstat diff of runs of two kernels (/proc/schedstat version 17 from
// v6.19, 15 from v6.0) prints the comparison and one warning line that
// names both files and both versions; runs of one kernel print none.
func TestSchedstatDiffVersions(t *testing.T) {
	dir := t.TempDir()
	runs := map[string][]string{"tip": nil, "old": {"--kernel", "v6.0"}, "old2": {"--kernel", "v6.0", "--seed", "2"}}
	for name, flags := range runs {
		args := append([]string{"run", "--machine", "hikey", "--schedstat", filepath.Join(dir, name)}, flags...)
		if _, stderr, code := run(append(args, "hackbench", "-l", "5", "-g", "1")...); code != 0 {
			t.Fatalf("%s: exit %d: %s", name, code, stderr)
		}
	}
	tip, old, old2 := filepath.Join(dir, "tip"), filepath.Join(dir, "old"), filepath.Join(dir, "old2")
	out, stderr, code := run("schedstat", "diff", tip, old)
	if code != 0 || !strings.Contains(out, "try_to_wake_up() was called") {
		t.Fatalf("exit %d\n%s%s", code, out, stderr)
	}
	want := "schedlab: warning: " + filepath.Join(old, SchedstatAfter) + " is /proc/schedstat version 15 but " +
		filepath.Join(tip, SchedstatAfter) + " is version 17: these are different kernels; compare runs of one kernel (--kernel)\n"
	if stderr != want {
		t.Errorf("stderr\n%q\nwant\n%q", stderr, want)
	}
	// The pair form names the files given; the third run is compared
	// with the first, like the second.
	_, stderr, _ = run("schedstat", "diff", old, filepath.Join(tip, SchedstatBefore)+","+filepath.Join(tip, SchedstatAfter), old2)
	if strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, filepath.Join(tip, SchedstatAfter)+" is /proc/schedstat version 17 but "+filepath.Join(old, SchedstatAfter)+" is version 15") {
		t.Errorf("stderr %q", stderr)
	}
	if _, stderr, code := run("schedstat", "diff", old, old2); code != 0 || stderr != "" {
		t.Errorf("one kernel: exit %d, stderr %q", code, stderr)
	}
}
