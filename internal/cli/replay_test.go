package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func realTracePath(t *testing.T) string {
	t.Helper()
	p := filepath.Join("..", "..", "..", "shared", "traces", "real-4cpu-sched.dat")
	if _, err := os.Stat(p); err != nil {
		p = filepath.Join("..", "..", "..", "..", "shared", "traces", "real-4cpu-sched.dat")
	}
	if _, err := os.Stat(p); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	return p
}

// schedlab replay TRACE --machine M prints the side-by-side summary, with
// --trace on the replay itself; it is the same run as run ... replay.
func TestReplayCommand(t *testing.T) {
	path := realTracePath(t)
	dat := filepath.Join(t.TempDir(), "replayed.dat")
	out, stderr, code := run("replay", path, "--machine", "hikey", "--trace", dat)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"replay of " + path + ": 120 tasks", "recorded |    replayed", "  TOTAL:"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if st, err := os.Stat(dat); err != nil || st.Size() == 0 {
		t.Errorf("--trace wrote nothing: %v", err)
	}
	out2, _, code := run("run", "--machine", "hikey", "replay", path)
	if code != 0 || out2 != out {
		t.Errorf("run ... replay differs from replay (exit %d)", code)
	}
}

// A malformed trace: one error line naming the file and where, exit 2.
func TestReplayMalformed(t *testing.T) {
	dir := t.TempDir()
	for name, data := range map[string]string{
		"bad.txt": "# tracer: nop\nhello world\n",
		"bad.dat": "\x17\x08\x44tracing7\x00\x00\x08\x00\x10",
	} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		_, stderr, code := run("replay", p, "--machine", "hikey")
		if code != 2 || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, p+":") {
			t.Errorf("%s: exit %d, stderr %q", name, code, stderr)
		}
	}
}

// --recorded-on scales the bursts by the recording machine's capacities
// (hikey960's little CPUs have 592) and must have the trace's CPUs.
func TestReplayRecordedOn(t *testing.T) {
	path := realTracePath(t)
	out, stderr, code := run("replay", path, "--machine", "hikey", "--recorded-on", "hikey960")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	plain, _, _ := run("replay", path, "--machine", "hikey")
	burst := func(s string) string {
		i := strings.Index(s, " bursts (")
		j := strings.Index(s[i:], " ms)")
		return s[i+9 : i+j]
	}
	if a, b := burst(out), burst(plain); a == b {
		t.Errorf("bursts %s ms scaled and unscaled", a)
	}
	dir := t.TempDir()
	big := filepath.Join(dir, "m.txt")
	os.WriteFile(big, []byte("  a-1 [009] d..2. 1.000000: sched_switch: prev_comm=a prev_pid=1 prev_prio=120 prev_state=S ==> next_comm=b next_pid=2 next_prio=120\n"), 0o644)
	_, stderr, code = run("replay", big, "--recorded-on", "hikey")
	if code != 2 || !strings.Contains(stderr, "--recorded-on hikey: the machine has 8 CPUs, the trace 10") {
		t.Errorf("exit %d: %s", code, stderr)
	}
}

// compare takes replay like any benchmark: variants against tip on one
// trace, paired by seed.
func TestCompareReplay(t *testing.T) {
	out, stderr, code := run("compare", "--machine", "hikey", "--variant", "short-task-v4", "--runs", "2", "--jobs", "1",
		"replay", filepath.Join("..", "replay", "testdata", "hackbench-pipe.txt"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"Test          : replay ../replay/testdata/hackbench-pipe.txt", "Metric        : runtime_ms", "short-task-v4"} {
		if !strings.Contains(out, want) {
			t.Errorf("compare output lacks %q:\n%s", want, out)
		}
	}
}

// schedlab trace latency reads a real kernel's trace.dat as it reads
// ftrace text: the table perf sched latency prints, from the same events.
func TestTraceLatencyDat(t *testing.T) {
	path := realTracePath(t)
	out, stderr, code := run("trace", "latency", path)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(out, "  smbd-notifyd:2965     |      0.303 ms |        4 |") {
		t.Errorf("no smbd-notifyd row:\n%s", out)
	}
	bad := filepath.Join(t.TempDir(), "bad.dat")
	os.WriteFile(bad, []byte("\x17\x08\x44tracing9\x00"), 0o644)
	_, stderr, code = run("trace", "latency", bad)
	if code != 2 || stderr != "schedlab: "+bad+": byte 10: file format version \"9\": schedlab reads versions 6 and 7\n" {
		t.Errorf("exit %d: %q", code, stderr)
	}
}

// --order recorded replays the real trace with every recorded task wakeup
// carried out on a sleeping wakee, and is the same run as run ... replay
// --order recorded; a wrong value is one error line and exit 2.
func TestReplayOrder(t *testing.T) {
	path := realTracePath(t)
	out, stderr, code := run("replay", path, "--machine", "hikey", "--order", "recorded")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	lines := strings.SplitN(out, "\n", 3)
	var n int
	if i := strings.Index(lines[0], " sleeps ended by a task"); i < 0 {
		t.Fatalf("no count of task wakeups: %s", lines[0])
	} else if _, err := fmt.Sscan(lines[0][strings.LastIndex(lines[0][:i], " ")+1:i], &n); err != nil || n == 0 {
		t.Fatalf("count of task wakeups in %q: %v", lines[0], err)
	}
	if want := fmt.Sprintf(" %d wakeups of a sleeping task, 0 before the wakee slept", n); !strings.Contains(lines[1], want) || !strings.Contains(lines[1], "recorded order: ") {
		t.Errorf("want all %d task wakeups of the reconstruction carried out on a sleeping wakee: %s", n, lines[1])
	}
	out2, _, code := run("run", "--machine", "hikey", "replay", "--order=recorded", path)
	if code != 0 || out2 != out {
		t.Errorf("run ... replay --order=recorded differs from replay --order recorded (exit %d)", code)
	}
	_, stderr, code = run("replay", path, "--machine", "hikey", "--order", "sorted")
	if code != 2 || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "--order sorted: want free or recorded") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
}

// A text trace cut short (no newline after its last line, as a full disk
// leaves it) replays its complete lines: one warning on stderr naming the
// file and the cut line, the same text in --json's "warnings", once per
// compare however many runs read the trace; trace latency reads the
// complete lines too. A malformed line before the cut stays an error:
// one line, exit 2, nothing on stdout.
func TestReplayCutText(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "replay", "testdata", "hackbench-pipe.txt"))
	if err != nil {
		t.Fatal(err)
	}
	// Cut line 30 after "next_prio=12": what is left parses, but the line
	// is left out all the same.
	lines := strings.SplitAfter(string(data), "\n")
	dir := t.TempDir()
	cut := filepath.Join(dir, "cut.txt")
	whole := filepath.Join(dir, "whole.txt")
	os.WriteFile(cut, []byte(strings.Join(lines[:29], "")+strings.TrimSuffix(lines[29], "0\n")), 0o644)
	os.WriteFile(whole, []byte(strings.Join(lines[:29], "")), 0o644)
	want := "schedlab: warning: " + cut + ":30: the trace ends inside this line (no newline after it: cut short, as a full disk leaves a trace); the line is left out, the 29 lines before it are read\n"

	js := filepath.Join(dir, "r.json")
	out, stderr, code := run("replay", cut, "--machine", "hikey", "--json", js)
	if code != 0 || !strings.HasPrefix(stderr, want) || strings.Count(stderr, "\n") != 2 {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	ref, _, _ := run("replay", whole, "--machine", "hikey")
	if strings.ReplaceAll(out, cut, whole) != ref {
		t.Errorf("the cut trace's replay differs from its complete part's:\n%s\n%s", out, ref)
	}
	var rec struct{ Warnings []string }
	b, _ := os.ReadFile(js)
	if err := json.Unmarshal(b, &rec); err != nil || len(rec.Warnings) != 1 || "schedlab: warning: "+rec.Warnings[0]+"\n" != want {
		t.Errorf("--json warnings %q (%v)", rec.Warnings, err)
	}

	_, stderr, code = run("compare", "--machine", "hikey", "--variant", "short-task-v4", "--runs", "2", "--jobs", "1", "replay", cut)
	if code != 0 || strings.Count(stderr, want) != 1 || strings.Count(stderr, "warning") != 1 {
		t.Errorf("compare: exit %d, stderr %q", code, stderr)
	}

	out, stderr, code = run("trace", "latency", cut)
	ref, _, _ = run("trace", "latency", whole)
	if code != 0 || stderr != want || out != ref {
		t.Errorf("trace latency: exit %d, stderr %q, output equal to the complete part's: %v", code, stderr, out == ref)
	}

	bad := filepath.Join(dir, "bad.txt")
	os.WriteFile(bad, []byte(strings.Join(lines[:20], "")+"garbage\n"+strings.Join(lines[20:29], "")+"  x"), 0o644)
	for _, args := range [][]string{{"replay", bad, "--machine", "hikey"}, {"trace", "latency", bad}} {
		out, stderr, code := run(args...)
		if code != 2 || out != "" || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, bad+":") || !strings.Contains(stderr, "21") {
			t.Errorf("%v: exit %d, stdout %d bytes, stderr %q", args, code, len(out), stderr)
		}
	}
}
