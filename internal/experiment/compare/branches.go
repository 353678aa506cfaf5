package compare

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"github.com/schedlab/schedlab/internal/experiment"
)

// BranchRow is one branch that a variant column's patch changes, its
// counters summed over the column's runs (sim.VariantBranches): did the
// patch's code run, and did it decide otherwise than the comparison
// kernel would have there.
type BranchRow struct {
	Machine  string `json:"machine"`
	Kernel   string `json:"kernel"`
	Workload string `json:"workload"`
	Variant  string `json:"variant"`
	Branch   string `json:"branch"`
	// Description says what taken and changed count.
	Description string `json:"description"`
	Runs        int    `json:"runs"`
	Taken       uint64 `json:"taken"`
	// Changed is nil for a branch that counts only taken.
	Changed *uint64 `json:"changed,omitempty"`
	// Param and ByLoad are the same per load of the ranged parameter,
	// in the plan's order.
	Param  string        `json:"param,omitempty"`
	ByLoad []BranchCount `json:"by_load,omitempty"`
}

// BranchCount is a branch's counters at one load.
type BranchCount struct {
	Load    string  `json:"load"`
	Runs    int     `json:"runs"`
	Taken   uint64  `json:"taken"`
	Changed *uint64 `json:"changed,omitempty"`
}

// Branches sums the variant columns' branch counters of a plan's records,
// in the plan's order: machine, kernel, workload, variant, and each
// variant's branches in its own order. Tip has none.
func Branches(p *experiment.Plan, recs []*experiment.Record) []BranchRow {
	type key struct{ machine, kernel, workload, variant string }
	byKey := map[key][]*experiment.Record{}
	for _, r := range recs {
		if r != nil && len(r.VariantBranches) > 0 {
			k := key{r.Machine, r.Kernel, r.Workload.Name, r.Variant}
			byKey[k] = append(byKey[k], r)
		}
	}
	var rows []BranchRow
	for _, m := range p.Machines {
		for _, kern := range p.Kernels {
			for _, w := range p.Workloads {
				for _, v := range p.Variants {
					rs := byKey[key{m.Label, kern, w.Name, v}]
					if len(rs) == 0 {
						continue
					}
					rows = append(rows, branchRows(m.Label, kern, w, v, rs)...)
				}
			}
		}
	}
	return rows
}

// branchRows sums one column's records (all of one variant label).
func branchRows(machine, kernel string, w experiment.PlanWorkload, variant string, rs []*experiment.Record) []BranchRow {
	var rows []BranchRow
	index := map[string]int{} // "variant\x00branch" → row
	for _, r := range rs {
		for _, vb := range r.VariantBranches {
			for _, b := range vb.Branches {
				id := vb.Name + "\x00" + b.Name
				i, ok := index[id]
				if !ok {
					i = len(rows)
					index[id] = i
					row := BranchRow{Machine: machine, Kernel: kernel, Workload: w.Name, Variant: variant, Branch: b.Name,
						Description: b.Description, Param: w.Param.Name}
					if variant != vb.Name {
						row.Variant = variant + " (" + vb.Name + ")"
					}
					if b.Changed != nil {
						row.Changed = new(uint64)
					}
					for _, load := range w.Param.Values {
						c := BranchCount{Load: load}
						if b.Changed != nil {
							c.Changed = new(uint64)
						}
						row.ByLoad = append(row.ByLoad, c)
					}
					rows = append(rows, row)
				}
				row := &rows[i]
				row.Runs++
				row.Taken += b.Taken
				if b.Changed != nil && row.Changed != nil {
					*row.Changed += *b.Changed
				}
				for j := range row.ByLoad {
					c := &row.ByLoad[j]
					if c.Load == r.Param.Value {
						c.Runs++
						c.Taken += b.Taken
						if b.Changed != nil && c.Changed != nil {
							*c.Changed += *b.Changed
						}
					}
				}
			}
		}
	}
	return rows
}

// FormatBranches writes the branch counters of the variant columns, one
// line per variant and branch: summed over the column's runs, and per load
// when there are several, "taken/changed". Nothing if no row.
//
//	short-task-v4  wake_affine_idle:is_short_task  taken 0 times in 18 runs
func FormatBranches(w io.Writer, rows []BranchRow) error {
	if len(rows) == 0 {
		return nil
	}
	bw := bufio.NewWriter(w)
	fmt.Fprintln(bw, "Branches the variants change (taken; changed: decided unlike the comparison kernel):")
	vw, bw2 := 0, 0
	for _, r := range rows {
		vw, bw2 = max(vw, len(r.Variant)), max(bw2, len(r.Branch))
	}
	group := ""
	for _, r := range rows {
		if g := r.Machine + ", " + r.Kernel + ", " + r.Workload; g != group {
			group = g
			if many := rows[0].Machine != rows[len(rows)-1].Machine || rows[0].Kernel != rows[len(rows)-1].Kernel ||
				rows[0].Workload != rows[len(rows)-1].Workload; many {
				fmt.Fprintf(bw, "  %s:\n", g)
			}
		}
		fmt.Fprintf(bw, "  %-*s  %-*s  taken %d %s", vw, r.Variant, bw2, r.Branch, r.Taken, plural(r.Taken, "time", "times"))
		switch {
		case r.Changed == nil:
			fmt.Fprint(bw, " (changed not counted)")
		case r.Taken > 0:
			fmt.Fprintf(bw, ", changed %d (%.1f%%)", *r.Changed, 100*float64(*r.Changed)/float64(r.Taken))
		}
		fmt.Fprintf(bw, " in %d %s", r.Runs, plural(uint64(r.Runs), "run", "runs"))
		if len(r.ByLoad) > 1 {
			var parts []string
			for _, c := range r.ByLoad {
				s := fmt.Sprintf("%s: %d", c.Load, c.Taken)
				if c.Changed != nil {
					s += fmt.Sprintf("/%d", *c.Changed)
				}
				parts = append(parts, s)
			}
			fmt.Fprintf(bw, "; %s %s", r.Param, strings.Join(parts, ", "))
		}
		fmt.Fprintln(bw)
	}
	return bw.Flush()
}

func plural(n uint64, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
