package texttable

import (
	"bytes"
	"strings"
	"testing"
	"text/tabwriter"
)

// A table that fits is written as tabwriter writes it (padding 2), and
// so is any table with width 0.
func TestWriteFitsLikeTabwriter(t *testing.T) {
	rows := [][]string{{"NAME", "VALUE", "SOURCE"}, {"context_switch_ns", "600", "an estimate, ≈ 1 µs"}, {"x", "0.25", "a placeholder"}}
	var tw bytes.Buffer
	w := tabwriter.NewWriter(&tw, 0, 8, 2, ' ', 0)
	for _, r := range rows {
		w.Write([]byte(strings.Join(r, "\t") + "\n"))
	}
	w.Flush()
	for _, width := range []int{0, 100, 46} {
		var b bytes.Buffer
		if err := Write(&b, "", rows, width, 2); err != nil {
			t.Fatal(err)
		}
		if b.String() != tw.String() {
			t.Errorf("width %d:\n%s\nwant, as tabwriter:\n%s", width, b.String(), tw.String())
		}
	}
}

// Too wide a table wraps its wrap columns at spaces, breaks a word longer
// than its column, keeps the other columns whole and fits the width.
func TestWriteWraps(t *testing.T) {
	rows := [][]string{
		{"NAME", "DESCRIPTION"},
		{"short-task-v3", "this_cpu check at the end needs nr_running(this_cpu)==1 and a short curr\nfunctions: wake_affine_idle, select_idle_cpu"},
		{"sis-node-limit", "<20230601111326.GV4253@hirez.programming.kicks-ass.net>"},
	}
	var b bytes.Buffer
	Write(&b, "  ", rows, 40, 1)
	want := `  NAME            DESCRIPTION
  short-task-v3   this_cpu check at the
                  end needs
                  nr_running(this_cpu)==
                  1 and a short curr
                  functions:
                  wake_affine_idle,
                  select_idle_cpu
  sis-node-limit  <20230601111326.GV4253
                  @hirez.programming.kic
                  ks-ass.net>
`
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
	if err := Check(b.String(), 40); err != nil {
		t.Error(err)
	}
	if err := Check(b.String(), 25); err == nil || !strings.HasPrefix(err.Error(), "line 1 is 29 columns") {
		t.Errorf("Check at 25: %v", err)
	}
}

// Two wrap columns share the room in proportion to their widest cells,
// and none is made narrower than minWrap.
func TestFitShares(t *testing.T) {
	got := fit([]int{10, 60, 30}, 0, 64, []int{1, 2})
	if got[0] != 10 || got[1] != 34 || got[2] != 16 {
		t.Errorf("widths %v, want [10 34 16]", got)
	}
	got = fit([]int{90, 60}, 0, 100, []int{1})
	if got[1] != minWrap {
		t.Errorf("widths %v, want the wrap column at %d", got, minWrap)
	}
}
