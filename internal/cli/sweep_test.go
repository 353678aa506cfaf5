package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/schedlab/schedlab/internal/experiment"
)

// TestHelperSchedlab is not a test: re-executed with SCHEDLAB_HELPER=1, the
// test binary is schedlab, with the arguments after "--".
func TestHelperSchedlab(t *testing.T) {
	if os.Getenv("SCHEDLAB_HELPER") != "1" {
		t.Skip("helper process")
	}
	args := os.Args
	for i, a := range args {
		if a == "--" {
			args = args[i+1:]
			break
		}
	}
	os.Exit(Main(os.Stdout, os.Stderr, args))
}

// schedlabCommand runs the test binary as schedlab.
func schedlabCommand(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, append([]string{"-test.run=^TestHelperSchedlab$", "--"}, args...)...)
	cmd.Env = append(os.Environ(), "SCHEDLAB_HELPER=1")
	return cmd
}

// killExperiment has enough short runs (48 on the HiKey) for a kill to
// land in the middle of the sweep.
const killExperiment = `name: killme
machines: [hikey]
variants: [short-task-v3, short-task-v4]
runs: 4
seed: 11
trace: true
workloads:
  - hackbench -p -T -l 60 -g 1,2,3,4
`

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func countJSON(dir string) int {
	ents, _ := os.ReadDir(filepath.Join(dir, experiment.RunsDir))
	n := 0
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".json") && !strings.HasPrefix(e.Name(), ".") {
			n++
		}
	}
	return n
}

// A sweep killed with SIGKILL midway resumes with --resume, and the
// results directory then equals an uninterrupted sweep's (wall time
// aside): nothing lost, nothing run twice.
func TestSweepKillResume(t *testing.T) {
	tmp := t.TempDir()
	spec := filepath.Join(tmp, "killme.yaml")
	writeFile(t, spec, killExperiment)
	plan, err := experiment.Load(spec, "")
	if err != nil {
		t.Fatal(err)
	}
	total := len(plan.Points())
	want, err := experiment.Sweep(plan, experiment.SweepOptions{Jobs: 2})
	if err != nil {
		t.Fatal(err)
	}

	out := filepath.Join(tmp, "out")
	cmd := schedlabCommand(t, "sweep", spec, "--out", out, "--jobs", "2")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for countJSON(out) < 3 && time.Now().Before(deadline) {
		time.Sleep(2 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	killedAt := countJSON(out)
	if killedAt < 3 || killedAt >= total {
		t.Fatalf("killed with %d of %d runs done: not midway", killedAt, total)
	}
	// Without --resume the directory is refused.
	if o, err := schedlabCommand(t, "sweep", spec, "--out", out).CombinedOutput(); err == nil || !strings.Contains(string(o), "--resume") {
		t.Fatalf("sweep into a used directory: %v %s", err, o)
	}
	o, err := schedlabCommand(t, "sweep", "--out", out, "--resume", "--jobs", "2").CombinedOutput()
	if err != nil {
		t.Fatalf("resume: %v\n%s", err, o)
	}
	if !strings.Contains(string(o), "already done") {
		t.Errorf("resume output: %s", o)
	}
	res, err := experiment.ReadResults(out)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Complete() || len(res.Temps) != 0 || len(res.Extra) != 0 {
		t.Fatalf("after resume: missing %v, temps %v, extra %v", res.Missing, res.Temps, res.Extra)
	}
	for i := range want {
		if string(want[i].Deterministic()) != string(res.Records[i].Deterministic()) {
			t.Fatalf("%s differs from the uninterrupted sweep", want[i].Key)
		}
	}
	// collect agrees.
	stdout, stderr, code := runMain(t, "collect", out)
	if code != 0 || !strings.Contains(stderr, "48 of 48 runs") || !strings.Contains(stdout, "groups:") {
		t.Errorf("collect: %d %s\n%s", code, stderr, stdout)
	}
}

// collect merges shard directories, rejects conflicting ones, and reports
// missing runs with exit status 1.
func TestCollect(t *testing.T) {
	tmp := t.TempDir()
	spec := filepath.Join(tmp, "e.yaml")
	writeFile(t, spec, "name: c\nmachines: [hikey]\nvariants: [short-task-v3]\nruns: 2\nworkloads:\n  - hackbench -p -T -l 10 -g 1,2\n")
	a, b := filepath.Join(tmp, "a"), filepath.Join(tmp, "b")
	for i, d := range []string{a, b} {
		if _, errOut, code := runMain(t, "sweep", spec, "--out", d, "--shard", []string{"0/2", "1/2"}[i]); code != 0 {
			t.Fatalf("shard %d: %s", i, errOut)
		}
	}
	_, errOut, code := runMain(t, "collect", "-q", a)
	if code != 1 || !strings.Contains(errOut, "4 runs missing") {
		t.Errorf("incomplete: %d %s", code, errOut)
	}
	_, errOut, code = runMain(t, "collect", a, b)
	if code != 0 || !strings.Contains(errOut, "4 runs merged") || !strings.Contains(errOut, "8 of 8 runs") {
		t.Errorf("merge: %d %s", code, errOut)
	}
	other := filepath.Join(tmp, "other.yaml")
	writeFile(t, other, "name: c\nmachines: [hikey]\nvariants: [short-task-v3]\nruns: 3\nworkloads:\n  - hackbench -p -T -l 10 -g 1,2\n")
	if _, errOut, code := runMain(t, "sweep", other, "--out", a, "--resume"); code != 2 || !strings.Contains(errOut, "planned differently") {
		t.Errorf("other experiment into a: %d %s", code, errOut)
	}
	if _, errOut, code := runMain(t, "sweep", "--out", filepath.Join(tmp, "none"), "--resume"); code != 2 || !strings.Contains(errOut, "not a results directory") {
		t.Errorf("resume of nothing: %d %s", code, errOut)
	}
}

// sweep --estimate prints one row per machine, workload and load with its
// run count, and the total; it writes nothing and refuses the flags that
// would run or split the sweep.
func TestSweepEstimate(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "e.yaml")
	writeFile(t, file, killExperiment)
	out, errOut, code := run("sweep", file, "--estimate", "--estimate-probe", "50ms")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 6 || !strings.HasPrefix(lines[0], "machine") || !strings.HasPrefix(lines[5], "estimate: 48 runs, ") {
		t.Fatalf("output:\n%s", out)
	}
	for i, load := range []string{"1", "2", "3", "4"} {
		f := strings.Fields(lines[i+1])
		if len(f) != 10 || f[0] != "hikey" || f[1] != "hackbench" || f[2] != load || f[3] != "12" || f[4] != "0" || f[7] != "-" {
			t.Errorf("row %d: %q", i, lines[i+1])
		}
	}
	for _, args := range [][]string{
		{"sweep", file, "--estimate", "--shard", "0/2"},
		{"sweep", file, "--estimate", "--estimate-probe", "-1s"},
	} {
		if _, e, c := run(args...); c != 2 || strings.Count(strings.TrimSpace(e), "\n") != 0 {
			t.Errorf("%v: exit %d, %q", args, c, e)
		}
	}
}

// A sweep with a stopping rule: collect counts the runs the rule left out
// apart from missing ones and exits 0, its tables say how many runs each
// load got and by which rule, --estimate prints the least and the most it
// can cost, and --full-length drops the rule (every run).
func TestSweepSequential(t *testing.T) {
	tmp := t.TempDir()
	spec := filepath.Join(tmp, "s.yaml")
	writeFile(t, spec, "name: s\nmachines: [hikey]\nvariants: [short-task-v3]\nruns: 4\nsequential: {min_runs: 2}\nworkloads:\n  - hackbench -p -T -l 10 -g 1,2\n")
	out := filepath.Join(tmp, "r")
	_, errOut, code := runMain(t, "sweep", spec, "--out", out)
	if code != 0 || !strings.Contains(errOut, "of at most 16 (stopping rule)") {
		t.Fatalf("sweep: %d %s", code, errOut)
	}
	stdout, errOut, code := runMain(t, "collect", out)
	if code != 0 || !strings.Contains(stdout, "Runs          : sequential, at least 2 runs") {
		t.Fatalf("collect: %d %s\n%s", code, errOut, stdout)
	}
	m := regexp.MustCompile(`s: (\d+) of (\d+) runs(?: \((\d+) more left out by the stopping rule)?`).FindStringSubmatch(errOut)
	if m == nil {
		t.Fatalf("collect's count: %s", errOut)
	}
	ran, _ := strconv.Atoi(m[1])
	of, _ := strconv.Atoi(m[2])
	left, _ := strconv.Atoi(m[3])
	if ran != of || ran+left != 16 || ran < 8 {
		t.Errorf("collect: %d of %d runs, %d left out (want all that ran, of 16, at least 8): %s", ran, of, left, errOut)
	}
	t.Logf("%d runs ran, %d left out", ran, left)
	est, errOut, code := run("sweep", spec, "--estimate", "--estimate-probe", "50ms")
	if code != 0 || !strings.Contains(est, "estimate: 16 runs at most") || !strings.Contains(est, "at least 2 of the 4 runs of each load") {
		t.Errorf("estimate: %d %s\n%s", code, errOut, est)
	}
	// On the finished sweep's directory the rule needs nothing more.
	est, errOut, code = run("sweep", spec, "--out", out, "--estimate", "--estimate-probe", "50ms")
	if code != 0 || !strings.Contains(est, "estimate: 0 runs at most, 0.00 core-hours") || !strings.Contains(est, "0 runs at least") {
		t.Errorf("estimate of the finished sweep: %d %s\n%s", code, errOut, est)
	}
	est, _, _ = run("sweep", spec, "--estimate", "--estimate-probe", "50ms", "--full-length")
	if !strings.Contains(est, "estimate: 16 runs, ") || strings.Contains(est, "stopping rule") {
		t.Errorf("estimate with --full-length:\n%s", est)
	}
}
