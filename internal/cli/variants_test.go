package cli

import (
	"bytes"
	"strings"
	"testing"

	"github.com/schedlab/schedlab/internal/sched"
	"github.com/schedlab/schedlab/internal/texttable"
)

// TestVariantsList checks that `schedlab variants --wide` prints one line
// per variant with its name, baseline, description and touched functions.
func TestVariantsList(t *testing.T) {
	var out, errb bytes.Buffer
	if code := Main(&out, &errb, []string{"variants", "--wide"}); code != 0 || errb.Len() != 0 {
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

// TestVariantsFit: by default every line fits 100 columns, and each
// variant's description and functions are all there, wrapped, where
// --wide has them on the variant's one line (wider than 100 columns).
func TestVariantsFit(t *testing.T) {
	var out, wide, errb bytes.Buffer
	if code := Main(&out, &errb, []string{"variants"}); code != 0 || errb.Len() != 0 {
		t.Fatalf("exit %d, stderr %q", code, errb.String())
	}
	if err := texttable.Check(out.String(), texttable.Width); err != nil {
		t.Errorf("variants: %v", err)
	}
	Main(&wide, &errb, []string{"variants", "--wide"})
	if texttable.Check(wide.String(), texttable.Width) == nil {
		t.Errorf("variants --wide fits 100 columns: nothing shows that it is the wide layout")
	}
	// Each variant's entry holds, in its DESCRIPTION column, the
	// description and the functions (spaces aside: wrapping moves them).
	lines := strings.Split(strings.TrimRight(out.String(), "\n"), "\n")
	col := len([]rune(lines[0])) - len("DESCRIPTION")
	entries := map[string]string{}
	name := ""
	for _, l := range lines[1:] {
		r := []rune(l)
		if l[0] != ' ' {
			name = strings.Fields(l)[0]
		}
		entries[name] += string(r[col:])
	}
	squeeze := func(s string) string { return strings.Join(strings.Fields(s), "") }
	for _, v := range sched.Variants() {
		want := v.Description + "functions:" + strings.Join(v.Touches, ",")
		if squeeze(entries[v.Name]) != squeeze(want) {
			t.Errorf("%s's entry reads %q, want its description and functions %q", v.Name, entries[v.Name], want)
		}
		wideLine := ""
		for _, l := range strings.Split(wide.String(), "\n") {
			if strings.HasPrefix(l, v.Name+" ") {
				wideLine = l
			}
		}
		if !strings.Contains(wideLine, v.Description) || !strings.HasSuffix(wideLine, strings.Join(v.Touches, ",")) {
			t.Errorf("--wide's line for %s lacks its description or functions: %q", v.Name, wideLine)
		}
	}
}

func TestVariantsRejectsArgs(t *testing.T) {
	var out, errb bytes.Buffer
	if code := Main(&out, &errb, []string{"variants", "x"}); code != 2 {
		t.Fatalf("exit %d, want 2", code)
	}
}
