package fidelity

import (
	"os/exec"
	"regexp"
	"testing"
)

// Under go test the binary has no vcs stamp, so Commit asks git about the
// work tree the test runs in.
func TestCommit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	if err := exec.Command("git", "rev-parse", "HEAD").Run(); err != nil {
		t.Skip("not in a git work tree")
	}
	if c := Commit(); !regexp.MustCompile(`^[0-9a-f]{40}(-modified)?$`).MatchString(c) {
		t.Errorf("commit %q", c)
	}
}
