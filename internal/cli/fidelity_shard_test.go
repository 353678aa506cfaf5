package cli

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Two shards into one directory, then the report without --shard: it runs
// nothing new (but the check of one run per machine), and its JSON and
// tables are a local run's, byte for byte. The stopping rule is on
// (--max-seeds above --seeds), so the shards' extra seeds are checked too.
func TestFidelityShards(t *testing.T) {
	tmp := t.TempDir()
	results := filepath.Join(tmp, "results")
	plan := []string{"--corpus", fidelityTestCorpus, "--case", "synthetic-hikey-messaging", "--seeds", "2", "--max-seeds", "3", "--jobs", "2"}
	for _, shard := range []string{"0/2", "1/2"} {
		code, _, errs := runFidelity(t, append(plan, "--dir", results, "--shard", shard)...)
		if code != 0 {
			t.Fatalf("--shard %s: exit %d: %s", shard, code, errs)
		}
	}
	joinedJSON, localJSON := filepath.Join(tmp, "joined.json"), filepath.Join(tmp, "local.json")
	code, joined, errs := runFidelity(t, append(plan, "--dir", results, "--json", joinedJSON)...)
	if code != 0 {
		t.Fatalf("report: exit %d: %s", code, errs)
	}
	if !strings.Contains(errs, ": 0 new, ") {
		t.Errorf("the report after the shards ran runs again: %q", errs)
	}
	code, local, errs := runFidelity(t, append(plan, "--json", localJSON)...)
	if code != 0 {
		t.Fatalf("local: exit %d: %s", code, errs)
	}
	a, _ := os.ReadFile(joinedJSON)
	b, _ := os.ReadFile(localJSON)
	if len(a) == 0 || !bytes.Equal(a, b) || joined != local {
		t.Error("the shards' report differs from a local run's")
	}
}

func TestFidelityShardErrors(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--shard", "0/2"}, "schedlab: fidelity: --shard needs --dir"},
		{[]string{"--shard", "2/2", "--dir", dir}, `schedlab: --shard "2/2": want i/n with 0 <= i < n`},
		{[]string{"--shard", "x", "--dir", dir}, `schedlab: --shard "x": want i/n`},
		{[]string{"--shard", "0/2", "--dir", dir, "--markdown"}, "schedlab: fidelity: --shard runs part of the corpus, so --markdown (a report of the whole) does not go with it"},
		{[]string{"--slurm", filepath.Join(dir, "s.sbatch")}, "schedlab: fidelity: --slurm needs --dir"},
		{[]string{"--slurm", filepath.Join(dir, "s.sbatch"), "--dir", dir, "--json", "x.json"}, "schedlab: fidelity: --slurm runs part of the corpus, so --json"},
		{[]string{"--slurm", filepath.Join(dir, "s.sbatch"), "--dir", dir, "--shard", "0/2"}, "schedlab: fidelity: --slurm writes the shards' script; drop --shard"},
		{[]string{"--slurm-tasks", "3"}, "schedlab: fidelity: --slurm-tasks is an option of --slurm"},
		{[]string{"--slurm", filepath.Join(dir, "no", "s.sbatch"), "--dir", filepath.Join(dir, "r")}, "schedlab: --slurm " + filepath.Join(dir, "no", "s.sbatch") + ": directory " + filepath.Join(dir, "no") + " does not exist"},
		{[]string{"--slurm", filepath.Join(dir, "s.sbatch"), "--dir", dir, "--slurm-cpus", "0"}, "schedlab: fidelity: --slurm-tasks and --slurm-cpus must be at least 1"},
	} {
		code, out, errs := runFidelity(t, append([]string{"--corpus", fidelityTestCorpus}, tc.args...)...)
		if code != 2 || out != "" || !strings.HasPrefix(errs, tc.want) || strings.Count(errs, "\n") != 1 {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want %q", tc.args, code, out, errs, tc.want)
		}
	}
	// No partial output: the refused --slurm made no results directory.
	if _, err := os.Stat(filepath.Join(dir, "r")); err == nil {
		t.Error("a refused --slurm left a results directory")
	}
}

// fidelity --slurm writes a job array whose tasks run the shards with the
// plan's own flags (files by absolute path), and says how to make the
// report. Where a Slurm node is idle (CI: .ci/slurm-up), sbatch runs it
// and the report equals a local run's.
func TestFidelitySlurm(t *testing.T) {
	tmp := t.TempDir()
	if err := os.Chmod(tmp, 0o755); err != nil {
		t.Fatal(err)
	}
	corpusDir := filepath.Join(tmp, "corpus")
	if err := os.CopyFS(corpusDir, os.DirFS(fidelityTestCorpus)); err != nil {
		t.Fatal(err)
	}
	wrapper := helperWrapper(t, tmp)
	results, script := filepath.Join(tmp, "results"), filepath.Join(tmp, "fidelity.sbatch")
	plan := []string{"--corpus", corpusDir, "--quick", "--seeds", "2", "--sysctl", "model_kobj_locks=1"}
	code, out, errs := runFidelity(t, append(plan, "--dir", results, "--slurm", script, "--slurm-tasks", "5", "--slurm-cpus", "2", "--slurm-schedlab", wrapper, "--slurm-time", "0:10:00")...)
	if code != 0 || out != "" {
		t.Fatalf("--slurm: exit %d, stdout %q: %s", code, out, errs)
	}
	text, err := os.ReadFile(script)
	if err != nil {
		t.Fatal(err)
	}
	// The quick subset has 2 rows (messaging load 1, schbench load 2):
	// 5 tasks are cut to 2.
	for _, want := range []string{
		"#SBATCH --array=0-1\n", "#SBATCH --cpus-per-task=2\n", "#SBATCH --time=0:10:00\n",
		"exec " + wrapper + " fidelity --dir " + results + " --jobs 2 --shard \"${SLURM_ARRAY_TASK_ID}/2\" --corpus " + corpusDir + " --quick --seeds 2 --sysctl model_kobj_locks=1\n",
		"#   " + wrapper + " fidelity --dir " + results + " --corpus " + corpusDir + " --quick --seeds 2 --sysctl model_kobj_locks=1 --markdown\n",
	} {
		if !strings.Contains(string(text), want) {
			t.Errorf("script lacks %q:\n%s", want, text)
		}
	}
	if o, err := exec.Command("sh", "-n", script).CombinedOutput(); err != nil {
		t.Errorf("sh -n %s: %v %s", script, err, o)
	}
	if !strings.Contains(errs, "2 rows of 2 cases in 2 array tasks") {
		t.Errorf("stderr %q", errs)
	}

	sbatchWait(t, needIdleSlurm(t), tmp, script, results)
	code, joined, errs := runFidelity(t, append(plan, "--dir", results)...)
	if code != 0 || !strings.Contains(errs, ": 0 new, ") {
		t.Fatalf("report after Slurm: exit %d: %s", code, errs)
	}
	code, local, errs := runFidelity(t, plan...)
	if code != 0 || joined != local {
		t.Fatalf("the Slurm shards' report differs from a local run's (exit %d: %s)", code, errs)
	}
}
