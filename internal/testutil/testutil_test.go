package testutil

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestNeedTool runs the test binary again as a child whose test needs a
// program that does not exist, with and without CI: without CI the child's
// test is skipped (the binary passes), with CI=true it fails.
func TestNeedTool(t *testing.T) {
	if os.Getenv("TESTUTIL_CHILD") == "1" {
		NeedTool(t, "no-such-program-schedlab")
		t.Fatal("NeedTool returned for a missing program")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, ci := range []string{"", "false", "true"} {
		cmd := exec.Command(exe, "-test.run=^TestNeedTool$", "-test.v")
		cmd.Env = append(os.Environ(), "TESTUTIL_CHILD=1", "CI="+ci)
		out, err := cmd.CombinedOutput()
		failed := err != nil
		switch {
		case ci == "true" && (!failed || !strings.Contains(string(out), "CI is set, and no-such-program-schedlab is not installed")):
			t.Errorf("CI=%q: the child passed or said the wrong thing (%v):\n%s", ci, err, out)
		case ci != "true" && (failed || !strings.Contains(string(out), "--- SKIP: TestNeedTool")):
			t.Errorf("CI=%q: the child did not skip (%v):\n%s", ci, err, out)
		}
	}
	if p := NeedTool(t, "go"); p == "" {
		t.Error("no path for go")
	}
}
