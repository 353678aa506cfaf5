package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/schedlab/schedlab/internal/sim"
)

func TestRunHackbench(t *testing.T) {
	dir := t.TempDir()
	j1, j2 := filepath.Join(dir, "1.json"), filepath.Join(dir, "2.json")
	args := []string{"run", "--machine", "hikey", "--seed", "7", "--json", j1, "hackbench", "-p", "-T", "-l", "40", "-g", "2"}
	out1, stderr, code := run(args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	// Not a terminal: no progress, only the line naming what ran.
	if want := "schedlab: hackbench on hikey (8 CPUs), kernel v6.19, seed 7\n"; stderr != want {
		t.Fatalf("stderr %q when not a terminal, want %q", stderr, want)
	}
	if !regexp.MustCompile(`^Running in threaded mode with 2 groups using 40 file descriptors each \(== 80 tasks\)
Each sender will pass 40 messages of 100 bytes
Time: \d+\.\d\d\d
$`).MatchString(out1) {
		t.Fatalf("output:\n%s", out1)
	}
	args[6] = j2
	out2, _, _ := run(args...)
	if out1 != out2 {
		t.Fatalf("same seed, different output:\n%s\n%s", out1, out2)
	}
	// The JSON documents are identical but for sim.wall_ns and
	// sim.cpu_ns (the run's thread's CPU time, on Linux at most its
	// wall time).
	var d1, d2 map[string]any
	for i, f := range []string{j1, j2} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		d := &d1
		if i == 1 {
			d = &d2
		}
		if err := json.Unmarshal(b, d); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range []map[string]any{d1, d2} {
		sim := d["sim"].(map[string]any)
		if sim["wall_ns"].(float64) <= 0 || sim["events"].(float64) <= 0 {
			t.Fatalf("sim %v", sim)
		}
		if cpu, ok := sim["cpu_ns"].(float64); runtime.GOOS == "linux" && (!ok || cpu <= 0 || cpu > sim["wall_ns"].(float64)*1.01+1e6) {
			t.Fatalf("sim %v: cpu_ns should be the run's CPU time, more than 0 and not more than its wall time", sim)
		}
		delete(sim, "wall_ns")
		delete(sim, "cpu_ns")
	}
	b1, _ := json.Marshal(d1)
	b2, _ := json.Marshal(d2)
	if !bytes.Equal(b1, b2) {
		t.Fatalf("JSON differs:\n%s\n%s", b1, b2)
	}
	if d1["schema_version"].(float64) != 3 || d1["machine"] != "hikey" || d1["kernel"] != "v6.19" || d1["seed"].(float64) != 7 {
		t.Fatalf("header %v", d1)
	}
	w := d1["workload"].(map[string]any)
	if w["name"] != "hackbench" || len(w["args"].([]any)) != 6 {
		t.Fatalf("workload %v", w)
	}
	m := map[string]float64{}
	for name, x := range d1["metrics"].(map[string]any) {
		x := x.(map[string]any)
		m[name] = x["value"].(float64)
		if want := map[string]string{"time_s": "lower", "messages": "higher", "bytes": "higher",
			"pipe_mutex_waits": "lower", "pipe_mutex_wait_s": "lower"}[name]; x["better"] != want || len(x) != 2 {
			t.Errorf("metric %s: %v, want better=%s", name, x, want)
		}
	}
	// rt-tests hackbench: every one of the 20 senders of each of the 2
	// groups sends -l 40 messages to each of the group's 20 receivers.
	if len(m) != 5 || m["time_s"] <= 0 || m["pipe_mutex_waits"] < 0 || m["pipe_mutex_wait_s"] < 0 || m["messages"] != 2*20*20*40 || m["bytes"] != 2*20*20*40*100 {
		t.Fatalf("metrics %v", m)
	}
	ss := d1["schedstat"].(map[string]any)
	cpu := ss["cpu"].(map[string]any)
	num := func(m map[string]any, k string) float64 {
		v, ok := m[k].(float64)
		if !ok {
			t.Fatalf("schedstat lacks %s: %v", k, m)
		}
		return v
	}
	ttwu, local, nsched, goidle, pcount := num(cpu, "ttwu_count"), num(cpu, "ttwu_local"), num(cpu, "sched_count"), num(cpu, "sched_goidle"), num(cpu, "pcount")
	// Every message is a wakeup or finds its receiver running: at most
	// one wakeup per message, and at least one per receiver.
	if ttwu > 2*20*20*40 || ttwu < 2*20 || local > ttwu {
		t.Fatalf("ttwu_count %v, ttwu_local %v", ttwu, local)
	}
	// __schedule counts every call; a switch to a task (pcount) or to idle
	// (sched_goidle) is one of them. Tasks ran at most 8 CPUs × the run.
	if pcount+goidle > nsched || pcount < 80 || num(cpu, "rq_cpu_time") > 8*num(d1["sim"].(map[string]any), "simulated_ns") {
		t.Fatalf("schedstat cpu %v", cpu)
	}
	if ss["version"].(float64) != 17 || ss["nr_cpus"].(float64) != 8 {
		t.Fatalf("schedstat %v", ss)
	}
	doms := ss["domains"].([]any)
	if len(doms) != 2 || doms[0].(map[string]any)["name"] != "MC" || doms[1].(map[string]any)["name"] != "PKG" {
		t.Fatalf("domains %v", doms)
	}
	// ttwu_stat counts a remote wakeup in ttwu_wake_remote of the waker's
	// lowest domain that spans the target; on the HiKey PKG spans all 8
	// CPUs, so the levels together hold every wakeup that was not local.
	// ttwu_move_affine counts wake_affine choosing the waker's CPU, at most
	// once per wakeup.
	var remote, affine float64
	for _, d := range doms {
		remote += num(d.(map[string]any), "ttwu_wake_remote")
		affine += num(d.(map[string]any), "ttwu_move_affine")
	}
	if remote != ttwu-local || affine > ttwu {
		t.Fatalf("ttwu_wake_remote over the levels %v, want ttwu_count − ttwu_local = %v; ttwu_move_affine %v", remote, ttwu-local, affine)
	}
}

func TestRunErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "hackbench", "-x"}, "schedlab: hackbench: invalid option -- 'x'\n"},
		{[]string{"run", "hackbench", "--loops=0"}, "schedlab: hackbench: --loops|-l requires an integer > 0\n"},
		{[]string{"run", "perf-bench-messaging", "--fds=3"}, "schedlab: perf bench sched messaging: unknown option `fds=3'\n"},
		{[]string{"run", "perf-bench-pipe", "-x"}, "schedlab: perf bench sched pipe: unknown switch `x'\n"},
		{[]string{"run", "perf", "bench", "sched", "pipe", "-l", "5x"}, "schedlab: perf bench sched pipe: switch `l' expects a numerical value\n"},
		{[]string{"run", "perf", "bench", "sched", "numa"}, "schedlab: perf bench: schedlab models only 'perf bench sched messaging' and 'perf bench sched pipe', not 'perf bench sched numa'\n"},
		{[]string{"run", "lat_pipe", "-x"}, "schedlab: lat_pipe: illegal option \"-x\"; usage: lat_pipe [-P <parallelism>] [-W <warmup>] [-N <repetitions>] [--cpus-pair A,B]\n"},
		{[]string{"run", "lat_pipe", "--cpus-pair", "1"}, "schedlab: lat_pipe: --cpus-pair \"1\": give two CPUs, A,B (or A:B)\n"},
		{[]string{"run", "--machine", "hikey", "lat_pipe", "--cpus-pair", "1,8"}, "schedlab: lat_pipe: --cpus-pair 1,8: the machine has CPUs 0-7\n"},
		{[]string{"run", "--machine", "hikey", "perf-bench-pipe", "--cpus-pair", "9,0"}, "schedlab: perf bench sched pipe: --cpus-pair 9,0: the machine has CPUs 0-7\n"},
		{[]string{"run", "--machine", "nope", "hackbench"}, "schedlab: unknown machine \"nope\" (see 'schedlab machines')\n"},
		{[]string{"run", "--kernel", "v9", "hackbench", "-l", "1", "-g", "1"}, ""},
		{[]string{"run", "bogus"}, ""},
		{[]string{"run"}, ""},
		{[]string{"run", "--variant", "no-such-patch", "hackbench"}, ""},
	} {
		out, stderr, code := run(c.args...)
		if code != 2 || out != "" || strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(stderr, "schedlab: ") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", c.args, code, out, stderr)
		}
		if c.want != "" && stderr != c.want {
			t.Errorf("%v: stderr %q, want %q", c.args, stderr, c.want)
		}
	}
}

// schedlab's own flags go before the workload; everything after it is the
// tool's, even if it looks like one of schedlab's.
func TestRunFlagsPassThrough(t *testing.T) {
	_, stderr, code := run("run", "--machine", "hikey", "hackbench", "--machine", "x")
	if code != 2 || stderr != "schedlab: hackbench: unrecognized option '--machine'\n" {
		t.Fatalf("exit %d, %q", code, stderr)
	}
	out, _, code := run("run", "hackbench", "-h")
	if code != 0 || !strings.HasPrefix(out, "hackbench V 2.40\nUsage:\n") {
		t.Fatalf("exit %d, %q", code, out)
	}
	out, _, code = run("run", "--machine", "hikey", "perf", "bench", "--format=simple", "sched", "messaging", "-g", "1", "-l", "5", "-t")
	if code != 0 || !regexp.MustCompile(`^\d+\.\d\d\d\n$`).MatchString(out) {
		t.Fatalf("exit %d, %q", code, out)
	}
}

func TestProgressBar(t *testing.T) {
	var b bytes.Buffer
	t0 := time.Unix(0, 0)
	now := t0
	p := &progress{w: &b, bar: true, start: t0, now: func() time.Time { return now }}
	now = t0.Add(500 * time.Millisecond)
	p.run(0.5)
	if b.Len() != 0 {
		t.Fatal("bar drawn before a second")
	}
	now = t0.Add(1500 * time.Millisecond)
	p.run(0.5)
	if !strings.Contains(b.String(), "[####################....................]  50%") {
		t.Fatalf("%q", b.String())
	}
	p.clear()
	if !strings.HasSuffix(b.String(), "\r\033[K") {
		t.Fatalf("%q", b.String())
	}
}

// With --progress and no terminal, a plain line every five seconds: none
// before, one at 5 s, none again until 10 s.
func TestProgressLines(t *testing.T) {
	var b bytes.Buffer
	t0 := time.Unix(0, 0)
	now := t0
	p := &progress{w: &b, lines: true, start: t0, now: func() time.Time { return now }}
	for _, c := range []struct {
		at    time.Duration
		frac  float64
		lines int
	}{{time.Second, 0.1, 0}, {5 * time.Second, 0.25, 1}, {7 * time.Second, 0.3, 1}, {10 * time.Second, 0.5, 2}} {
		now = t0.Add(c.at)
		p.run(c.frac)
		if got := strings.Count(b.String(), "\n"); got != c.lines {
			t.Fatalf("at %v: %d lines, want %d: %q", c.at, got, c.lines, b.String())
		}
	}
	if want := "schedlab:  25% after 5s\nschedlab:  50% after 10s\n"; b.String() != want {
		t.Fatalf("%q, want %q", b.String(), want)
	}
	if strings.Contains(b.String(), "\r") {
		t.Fatal("a log line must not redraw")
	}
}

// Every tool's -h and --help print the tool's own usage on stdout and exit
// 0, nothing on stderr, and nothing is simulated (docs/workloads.md).
func TestRunToolHelp(t *testing.T) {
	for _, tc := range []struct {
		tool  string // as registered
		words []string
		first string // the usage's first line
	}{
		{"hackbench", []string{"hackbench"}, "hackbench V 2.40"},
		{"perf-bench-messaging", []string{"perf-bench-messaging"}, " Usage: perf bench sched messaging <options>"},
		{"perf", []string{"perf", "bench", "sched", "messaging"}, " Usage: perf bench sched messaging <options>"},
		{"perf", []string{"perf", "bench", "sched"}, " Usage: perf bench sched messaging <options>"},
		{"perf", []string{"perf"}, " Usage: perf bench sched messaging <options>"},
		{"perf", []string{"perf", "bench", "sched", "pipe"}, " Usage: perf bench sched messaging <options>"},
		{"perf-bench-pipe", []string{"perf-bench-pipe"}, " Usage: perf bench sched pipe <options>"},
		{"lat_pipe", []string{"lat_pipe"}, "Usage: lat_pipe [-P <parallelism>] [-W <warmup>] [-N <repetitions>]"},
		{"schbench", []string{"schbench"}, "schbench usage:"},
		{"schbench-current", []string{"schbench-current"}, "schbench usage:"},
		{"tbench", []string{"tbench"}, "dbench version 4.00 - Copyright Andrew Tridgell 1999-2004"},
		{"stream", []string{"stream"}, "stream [NAME=VALUE ...]"},
		{"rt-app", []string{"rt-app"}, "rt-app FILE.json"},
	} {
		tool, ok := sim.Lookup(tc.tool)
		if !ok {
			t.Fatalf("no tool %s", tc.tool)
		}
		for _, h := range []string{"-h", "--help"} {
			args := append(append([]string{"run", "--machine", "hikey"}, tc.words...), h)
			out, stderr, code := run(args...)
			if code != 0 || stderr != "" || out != tool.Usage || !strings.HasPrefix(strings.TrimLeft(out, "\n"), tc.first+"\n") {
				t.Errorf("%s: exit %d, stderr %q, stdout\n%s", strings.Join(args[3:], " "), code, stderr, out)
			}
		}
	}
	// And so does any tool registered later.
	for _, tool := range sim.Tools() {
		if out, _, code := run("run", tool.Name, "-h"); code != 0 || out != tool.Usage {
			t.Errorf("%s -h: exit %d", tool.Name, code)
		}
	}
}

// A variant that brings its own baseline says so on stderr: the tool's
// output names no kernel, and the default is another one (issue 40).
func TestRunNamesVariantKernel(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--variant", "short-task-v3"}, "kernel v6.0 + short-task-v3, seed 1 (v6.0 is short-task-v3's baseline; v6.19 without --variant)\n"},
		{[]string{"--kernel", "v6.0", "--variant", "short-task-v3"}, "kernel v6.0 + short-task-v3, seed 1\n"},
		{[]string{"--variant", "no-tg-propagate"}, "kernel v6.19 + no-tg-propagate, seed 1\n"},
		{[]string{"--kernel", "v5.12"}, "kernel v5.12, seed 1\n"},
	} {
		args := append([]string{"run", "--machine", "hikey"}, c.args...)
		args = append(args, "hackbench", "-l", "5", "-g", "1")
		out, stderr, code := run(args...)
		if code != 0 || !strings.HasPrefix(out, "Running in process mode") {
			t.Fatalf("%v: exit %d, %s%s", c.args, code, out, stderr)
		}
		if want := "schedlab: hackbench on hikey (8 CPUs), " + c.want; stderr != want {
			t.Errorf("%v: stderr\n%q, want\n%q", c.args, stderr, want)
		}
	}
}

// The pipe ping-pongs through the CLI: lat_pipe's line on stdout and its
// latency_us in --json (what a fidelity case's metric names), and perf
// bench sched pipe spelled as perf is typed, with schedlab's pin.
func TestRunPipePingPong(t *testing.T) {
	file := filepath.Join(t.TempDir(), "lat.json")
	out, stderr, code := run("run", "--machine", "hikey", "--json", file, "lat_pipe", "-W", "1", "--cpus-pair", "0,4")
	if code != 0 || !regexp.MustCompile(`^Pipe latency: \d+\.\d{4} microseconds\n$`).MatchString(out) {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, stderr)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var rec struct {
		Metrics map[string]struct{ Value float64 } `json:"metrics"`
	}
	if err := json.Unmarshal(data, &rec); err != nil {
		t.Fatal(err)
	}
	if lat := rec.Metrics["latency_us"].Value; !strings.Contains(out, strconv.FormatFloat(lat, 'f', 4, 64)) {
		t.Errorf("latency_us %v, printed %q", lat, out)
	}
	out, _, code = run("run", "--machine", "hikey", "perf", "bench", "sched", "pipe", "-l", "100", "--cpus-pair", "0,4")
	if code != 0 || !strings.HasPrefix(out, "# Running 'sched/pipe' benchmark:\n# Executed 100 pipe operations between two processes\n") {
		t.Fatalf("exit %d, %q", code, out)
	}
}
