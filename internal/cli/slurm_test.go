package cli

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/schedlab/schedlab/internal/experiment"
	"github.com/schedlab/schedlab/internal/testutil"
)

// A sweep through Slurm: `sweep --slurm` writes a job-array script, sbatch
// runs its shards on the cluster .ci/run starts on this machine (.ci/slurm-up),
// and collect finds the same results as a local sweep. Skipped where Slurm
// is not installed or no node is idle, and failed instead when CI is set
// (.ci/run installs Slurm and .ci/slurm-up waits for its node to be idle).
func TestSlurmSweep(t *testing.T) {
	sbatch := needIdleSlurm(t)
	tmp := t.TempDir()
	// slurmd runs the job as the submitting user, from its own working
	// directory: everything it needs is under tmp, by absolute path.
	if err := os.Chmod(tmp, 0o755); err != nil {
		t.Fatal(err)
	}
	spec := filepath.Join(tmp, "slurm.yaml")
	writeFile(t, spec, `name: slurmtest
machines: [hikey]
variants: [short-task-v3]
runs: 3
seed: 5
trace: true
workloads:
  - hackbench -p -T -l 20 -g 1,2
  - schbench -m 1 -t 2 -r 1
`)
	wrapper := helperWrapper(t, tmp)
	out, script := filepath.Join(tmp, "results"), filepath.Join(tmp, "sweep.sbatch")
	_, errOut, code := runMain(t, "sweep", spec, "--out", out, "--slurm", script, "--slurm-tasks", "3", "--slurm-schedlab", wrapper)
	if code != 0 {
		t.Fatalf("sweep --slurm: %s", errOut)
	}
	text, err := os.ReadFile(script)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"#SBATCH --array=0-2", "--shard \"${SLURM_ARRAY_TASK_ID}/3\"", "--resume"} {
		if !strings.Contains(string(text), want) {
			t.Errorf("script lacks %q:\n%s", want, text)
		}
	}
	sbatchWait(t, sbatch, tmp, script, out)
	stdout, stderr, code := runMain(t, "collect", out)
	if code != 0 || !strings.Contains(stderr, "18 of 18 runs") || !strings.Contains(stdout, "groups:") {
		t.Fatalf("collect: %d %s\n%s", code, stderr, stdout)
	}
	plan, err := experiment.Load(spec, "")
	if err != nil {
		t.Fatal(err)
	}
	local, err := experiment.Sweep(plan, experiment.SweepOptions{Jobs: 2})
	if err != nil {
		t.Fatal(err)
	}
	res, err := experiment.ReadResults(out)
	if err != nil {
		t.Fatal(err)
	}
	for i := range local {
		if string(local[i].Deterministic()) != string(res.Records[i].Deterministic()) {
			t.Fatalf("%s differs between Slurm and a local sweep", local[i].Key)
		}
	}
}

// needIdleSlurm skips the test (fails it when CI is set) unless sbatch is
// installed and a Slurm node is idle, and returns sbatch's path.
func needIdleSlurm(t *testing.T) string {
	t.Helper()
	sbatch := testutil.NeedTool(t, "sbatch")
	o, err := exec.Command(testutil.NeedTool(t, "sinfo"), "-h", "-o", "%t").Output()
	idle := false
	for _, st := range strings.Fields(string(o)) {
		idle = idle || st == "idle"
	}
	testutil.Need(t, err == nil && idle, "no idle Slurm node (sinfo: %v %q); run .ci/slurm-up as root", err, o)
	return sbatch
}

// helperWrapper writes dir/schedlab, a script that runs this test binary
// as schedlab (TestHelperSchedlab): the binary the Slurm tasks run.
func helperWrapper(t *testing.T, dir string) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	wrapper := filepath.Join(dir, "schedlab")
	writeFile(t, wrapper, "#!/bin/sh\nSCHEDLAB_HELPER=1 exec "+shellQuote(exe)+" -test.run='^TestHelperSchedlab$' -- \"$@\"\n")
	if err := os.Chmod(wrapper, 0o755); err != nil {
		t.Fatal(err)
	}
	return wrapper
}

// sbatchWait submits script from dir and waits for its array to end,
// failing with the tasks' logs (logDir/slurm-*.out) if any task failed.
func sbatchWait(t *testing.T, sbatch, dir, script, logDir string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if o, err := exec.CommandContext(ctx, sbatch, "--wait", "--chdir", dir, script).CombinedOutput(); err != nil {
		logs, _ := filepath.Glob(filepath.Join(logDir, "slurm-*.out"))
		var tails []string
		for _, l := range logs {
			b, _ := os.ReadFile(l)
			tails = append(tails, l+":\n"+string(b))
		}
		t.Fatalf("sbatch --wait: %v\n%s\n%s", err, o, strings.Join(tails, "\n"))
	}
}
