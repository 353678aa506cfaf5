// Package testutil holds what several packages' tests share: the rule for
// tests that need a program outside the Go toolchain (trace-cmd, rt-tests'
// hackbench, Slurm, Chromium).
//
// Such a test skips where the program is missing, so that `go test ./...`
// passes on a developer's machine. In CI it must not: .ci/run installs every
// program the tests use and exports CI, and with CI set a missing program is
// a broken setup, so the test fails instead of passing by skipping.
package testutil

import (
	"os"
	"os/exec"
	"testing"
)

// CI reports whether the tests run in CI: the environment variable CI is
// set to anything but "" or "false" (GitHub Actions, GitLab and .ci/run
// set CI=true).
func CI() bool {
	v := os.Getenv("CI")
	return v != "" && v != "false" && v != "0"
}

// NeedTool returns the path of the program name for a test that runs it.
// If it is not in PATH the test is skipped, or fails when CI is set.
func NeedTool(t testing.TB, name string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		Need(t, false, "%s is not installed (.ci/run installs it)", name)
	}
	return path
}

// Need is NeedTool for any other prerequisite: when ok is false the test
// is skipped with the message, or fails with it when CI is set.
func Need(t testing.TB, ok bool, format string, args ...any) {
	t.Helper()
	if ok {
		return
	}
	if CI() {
		t.Fatalf("CI is set, and "+format, args...)
	}
	t.Skipf(format, args...)
}
