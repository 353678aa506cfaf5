package compare

import (
	"bytes"
	"testing"

	"github.com/schedlab/schedlab/internal/sim"
	"github.com/schedlab/schedlab/internal/workload"
)

// The variant columns' branch counters are summed over each column's
// runs, in total and per load, and printed one line per variant and
// branch; a branch without a changed count says so. Pinned byte for byte.
func TestFormatBranchesGolden(t *testing.T) {
	p, recs := fakeResults(t, "hackbench -p -T -l 2000 -g 1,2,4", "time_s", workload.LowerIsBetter, map[string][][]float64{
		"tip":           {{1, 1, 1}, {1, 1, 1}, {1, 1, 1}},
		"short-task-v3": {{1, 1, 1}, {1, 1, 1}, {1, 1, 1}},
		"short-task-v4": {{1, 1, 1}, {1, 1, 1}, {1, 1, 1}},
	})
	u := func(n uint64) *uint64 { return &n }
	for _, r := range recs {
		li := map[string]uint64{"1": 1, "2": 2, "4": 3}[r.Param.Value]
		switch r.Variant {
		case "short-task-v3":
			r.VariantBranches = []sim.VariantBranches{{Name: "short-task-v3", Branches: []sim.BranchCounter{
				{Name: "wake_affine_idle:is_short_task", Taken: 10 * li, Changed: u(li)},
				{Name: "select_idle_cpu:is_short_task", Taken: 0, Changed: u(0)},
			}}}
		case "short-task-v4":
			r.VariantBranches = []sim.VariantBranches{{Name: "short-task-v4", Branches: []sim.BranchCounter{
				{Name: "wake_affine_idle:is_short_task", Taken: 0, Changed: u(0)},
				{Name: "add_tg_cfs_propagate:off", Taken: 1},
			}}}
		}
	}
	rows := Branches(p, recs)
	var b bytes.Buffer
	if err := FormatBranches(&b, rows); err != nil {
		t.Fatal(err)
	}
	want := `Branches the variants change (taken; changed: decided unlike the comparison kernel):
  short-task-v3  wake_affine_idle:is_short_task  taken 180 times, changed 18 (10.0%) in 9 runs; groups 1: 30/3, 2: 60/6, 4: 90/9
  short-task-v3  select_idle_cpu:is_short_task   taken 0 times in 9 runs; groups 1: 0/0, 2: 0/0, 4: 0/0
  short-task-v4  wake_affine_idle:is_short_task  taken 0 times in 9 runs; groups 1: 0/0, 2: 0/0, 4: 0/0
  short-task-v4  add_tg_cfs_propagate:off        taken 9 times (changed not counted) in 9 runs; groups 1: 3, 2: 3, 4: 3
`
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
	if len(rows) != 4 || rows[0].Taken != 180 || *rows[0].Changed != 18 || rows[3].Changed != nil || rows[3].ByLoad[2].Runs != 3 {
		t.Errorf("rows %+v", rows)
	}
	// Tip's records carry none: nothing to print.
	b.Reset()
	if err := FormatBranches(&b, Branches(p, recs[:0])); err != nil || b.Len() != 0 {
		t.Errorf("no records: %q, %v", b.String(), err)
	}
}
