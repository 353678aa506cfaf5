package cli

import (
	"bytes"
	"strings"
	"testing"

	"github.com/schedlab/schedlab/internal/sched"
)

// TestVariantsList checks that `schedlab variants` prints one line per
// variant with its name, baseline, description and touched functions.
func TestVariantsList(t *testing.T) {
	var out, errb bytes.Buffer
	if code := Main(&out, &errb, []string{"variants"}); code != 0 || errb.Len() != 0 {
		t.Fatalf("exit %d, stderr %q", code, errb.String())
	}
	lines := strings.Split(strings.TrimRight(out.String(), "\n"), "\n")
	if got, want := len(lines), 1+len(sched.Variants()); got != want {
		t.Fatalf("%d lines, want %d:\n%s", got, want, out.String())
	}
	if f := strings.Fields(lines[0]); len(f) != 4 || f[0] != "NAME" || f[3] != "FUNCTIONS" {
		t.Errorf("header %q", lines[0])
	}
	names := []string{"short-task-rfc", "short-task-v1", "short-task-v2", "short-task-v3",
		"short-task-v4", "short-task-rfc2", "idle-cores-nosmt"}
	for i, name := range names {
		line := lines[1+i]
		f := strings.Fields(line)
		if f[0] != name {
			t.Errorf("line %d is %q, want variant %s", i+1, line, name)
			continue
		}
		v := sched.Variants()[i]
		if f[1] != v.Baseline || !strings.Contains(line, v.Description) || f[len(f)-1] != strings.Join(v.Touches, ",") {
			t.Errorf("line %q does not give %s's baseline, description and functions", line, name)
		}
	}
	if !strings.Contains(out.String(), "test_idle_cores") || !strings.Contains(out.String(), "wake_affine_idle,select_idle_cpu,is_short_task") {
		t.Errorf("functions missing:\n%s", out.String())
	}
}

func TestVariantsRejectsArgs(t *testing.T) {
	var out, errb bytes.Buffer
	if code := Main(&out, &errb, []string{"variants", "x"}); code != 2 {
		t.Fatalf("exit %d, want 2", code)
	}
}
