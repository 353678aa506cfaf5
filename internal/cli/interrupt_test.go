package cli

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/schedlab/schedlab/internal/experiment"
)

// mainEnv makes the test binary, started again with it set, run schedlab's
// Main on its arguments: a real process that a test can send SIGINT.
const mainEnv = "SCHEDLAB_CLI_TEST_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(mainEnv) == "1" {
		os.Exit(Main(os.Stdout, os.Stderr, os.Args[1:]))
	}
	os.Exit(m.Run())
}

// waitForRuns waits until dir/runs holds a record, or the process done
// reports its end (then false).
func waitForRuns(t *testing.T, dir string, done <-chan struct{}) bool {
	t.Helper()
	deadline := time.After(2 * time.Minute)
	for {
		if n, _ := filepath.Glob(filepath.Join(dir, experiment.RunsDir, "*.json")); len(n) > 0 {
			return true
		}
		select {
		case <-done:
			return false
		case <-deadline:
			t.Fatalf("no run in %s after 2 minutes", dir)
		case <-time.After(5 * time.Millisecond):
		}
	}
}

func countRecords(t *testing.T, dir string) int {
	t.Helper()
	res, err := experiment.ReadResults(dir)
	if err != nil {
		t.Fatal(err)
	}
	return len(res.Found())
}

// resumeLine finds the one line of an interrupted command, checks its
// count of kept runs against the directory, and returns the command that
// resumes it, as words.
func resumeLine(t *testing.T, stderr, what, dir string) []string {
	t.Helper()
	re := regexp.MustCompile(`^schedlab: ` + what + ` interrupted: (\d+) of (?:at most )?\d+ runs kept in (\S+); resume with: schedlab (.*)\n$`)
	m := re.FindStringSubmatch(stderr)
	if m == nil {
		t.Fatalf("stderr %q is not one line matching %s", stderr, re)
	}
	if n, _ := strconv.Atoi(m[1]); m[2] != dir || n != countRecords(t, dir) {
		t.Errorf("%q: %s holds %d runs", stderr, dir, countRecords(t, dir))
	}
	words, err := experiment.SplitCommand(m[3])
	if err != nil {
		t.Fatalf("resume command %q: %v", m[3], err)
	}
	return words
}

// Ctrl-C on a sweep: exit 130 and one line saying how many runs DIR keeps
// and the command that resumes; that command completes DIR to what a
// sweep that was never interrupted gives.
func TestSweepSIGINT(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a sweep in a subprocess")
	}
	dir := t.TempDir()
	exp := filepath.Join(dir, "e.yaml")
	if err := os.WriteFile(exp, []byte("name: intr\nmachines: [hikey]\nvariants: [short-task-v3]\ncolumns: [\"nowaw=--feature NO_WA_WEIGHT\"]\nruns: 3\nseed: 2\n"+
		"workloads:\n  - hackbench -p -T -l 60 -g 1,2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	res := filepath.Join(dir, "res")
	cmd := exec.Command(os.Args[0], "sweep", exp, "--out", res, "--jobs", "1")
	cmd.Env = append(os.Environ(), mainEnv+"=1", ProgressEnv+"=0")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	var werr error
	go func() { werr = cmd.Wait(); close(done) }()
	if !waitForRuns(t, res, done) {
		t.Fatalf("the sweep ended before a run was kept: %v, %s", werr, stderr.String())
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	<-done
	var ee *exec.ExitError
	if !errors.As(werr, &ee) || ee.ExitCode() != InterruptedCode {
		t.Fatalf("exit %v, want %d; stderr %q", werr, InterruptedCode, stderr.String())
	}
	kept := countRecords(t, res)
	words := resumeLine(t, stderr.String(), "sweep intr", res)
	if want := []string{"sweep", "--out", res, "--resume"}; !slices.Equal(words, want) {
		t.Errorf("resume command %q, want %q", words, want)
	}
	if stdout.Len() != 0 || kept >= 2*2*2*3 {
		t.Errorf("stdout %q; %d runs kept of %d", stdout.String(), kept, 2*2*2*3)
	}
	if _, errOut, code := runMain(t, words...); code != 0 {
		t.Fatalf("%q: exit %d: %s", words, code, errOut)
	}
	straight := filepath.Join(dir, "straight")
	if _, errOut, code := runMain(t, "sweep", exp, "--out", straight, "--jobs", "2"); code != 0 {
		t.Fatalf("straight sweep: exit %d: %s", code, errOut)
	}
	a, err := experiment.ReadResults(res)
	if err != nil {
		t.Fatal(err)
	}
	b, err := experiment.ReadResults(straight)
	if err != nil {
		t.Fatal(err)
	}
	if !a.Complete() || len(a.Records) != len(b.Records) {
		t.Fatalf("resumed: %d missing, %d records vs %d", len(a.Missing), len(a.Records), len(b.Records))
	}
	for i := range a.Records {
		if !bytes.Equal(a.Records[i].Deterministic(), b.Records[i].Deterministic()) {
			t.Errorf("%s differs from the straight sweep's", a.Records[i].Key)
		}
	}
}

// An interrupted compare (its context cancelled, as Ctrl-C does) keeps
// the runs it finished in --out and prints the command that resumes it,
// which prints what a compare never interrupted prints; without --out it
// says that nothing was kept. Neither writes a table.
func TestCompareInterrupted(t *testing.T) {
	dir := t.TempDir()
	res := filepath.Join(dir, "cmp")
	work := []string{"--machine", "hikey", "--runs", "3", "--jobs", "1", "--column", "nowaw=--feature NO_WA_WEIGHT", "hackbench", "-l", "60", "-g", "1,2"}
	interrupt := func(args []string, dir string) (string, string, int) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		var out, errb bytes.Buffer
		done := make(chan struct{})
		code := 0
		go func() { code = MainContext(ctx, &out, &errb, args); close(done) }()
		if dir != "" {
			if !waitForRuns(t, dir, done) {
				t.Fatalf("compare ended before a run was kept: %s", errb.String())
			}
		}
		cancel()
		<-done
		return out.String(), errb.String(), code
	}
	out, errOut, code := interrupt(append([]string{"compare", "--out", res}, work...), res)
	if code != InterruptedCode || out != "" {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	words := resumeLine(t, errOut, "compare", res)
	if want := slices.Concat([]string{"compare", "--out", res}, work[:8], []string{"--resume"}, work[8:]); !slices.Equal(words, want) {
		t.Errorf("resume command %q, want %q", words, want)
	}
	resumed, errOut, code := runMain(t, words...)
	if code != 0 {
		t.Fatalf("%q: exit %d: %s", words, code, errOut)
	}
	straight, errOut, code := runMain(t, append([]string{"compare"}, work...)...)
	if code != 0 || resumed != straight {
		t.Errorf("resumed (exit %d, %s):\n%s\nstraight:\n%s", code, errOut, resumed, straight)
	}
	out, errOut, code = interrupt(append([]string{"compare"}, work...), "")
	if code != InterruptedCode || out != "" || !regexp.MustCompile(`^schedlab: compare interrupted after \d+ of 12 runs; none kept \(with --out DIR compare keeps the runs it finishes, and --resume continues them\)\n$`).MatchString(errOut) {
		t.Errorf("without --out: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}
