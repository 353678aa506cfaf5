package experiment

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/schedlab/schedlab/internal/sim"
)

// EstimateRow is the expected cost of one class of a plan's runs: the
// points of one machine, workload and load (kernels, variants and run
// indices cost alike, to first order).
type EstimateRow struct {
	Machine, Workload, Load string
	Runs                    int
	// Progress is the fraction of the probe run simulated within the
	// probe's budget (1: it finished), and ProbeWall the wall time it took.
	Progress  float64
	ProbeWall time.Duration
	// PerRun is the extrapolated wall time of one run: ProbeWall /
	// Progress.
	PerRun time.Duration
}

// Total is the class's expected wall time on one core.
func (r *EstimateRow) Total() time.Duration { return time.Duration(r.Runs) * r.PerRun }

// Estimate probes one run of every class of p's points that dir does not
// hold yet (run index 0's configuration, tip's kernel where tip is in the
// plan), each for at most budget of wall time (now is the clock), and
// extrapolates each class's wall time from the progress made. Workloads
// whose progress is not linear in wall time (a start-up phase, tbench's
// stop at steady state, which ends runs early) make it an approximation.
func Estimate(p *Plan, dir string, budget time.Duration, now func() time.Time) ([]EstimateRow, error) {
	done, err := doneKeys(dir)
	if err != nil {
		return nil, err
	}
	type class struct {
		m, w int
		load string
	}
	idx := map[class]int{}
	var rows []EstimateRow
	var probe []Point
	for _, pt := range p.Points() {
		if done[pt.Key] {
			continue
		}
		c := class{pt.Machine, pt.Workload, pt.Load}
		i, ok := idx[c]
		if !ok {
			i = len(rows)
			idx[c] = i
			rows = append(rows, EstimateRow{Machine: p.Machines[pt.Machine].Name, Workload: p.Workloads[pt.Workload].Name, Load: pt.Load})
			probe = append(probe, pt)
		}
		rows[i].Runs++
		if pt.Variant == Tip && probe[i].Variant != Tip {
			probe[i] = pt
		}
	}
	for i := range rows {
		pt := probe[i]
		b, err := sim.Build(p.RunConfig(&pt, dir))
		if err != nil {
			return nil, fmt.Errorf("%s: %v", pt.Key, err)
		}
		prog, _, used, err := b.Probe(budget, now)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", pt.Key, err)
		}
		r := &rows[i]
		r.Progress, r.ProbeWall = prog, used
		if prog <= 0 {
			prog = 1e-3 // nothing measurable yet: count it as 1000 times the probe
		}
		r.PerRun = time.Duration(float64(used) / prog)
	}
	return rows, nil
}

// doneKeys are the keys of the runs dir holds ("" or a missing directory:
// none), which an estimate of a resumed sweep leaves out.
func doneKeys(dir string) (map[string]bool, error) {
	keys := map[string]bool{}
	if dir == "" {
		return keys, nil
	}
	ents, err := os.ReadDir(filepath.Join(dir, RunsDir))
	if errors.Is(err, fs.ErrNotExist) {
		return keys, nil
	}
	if err != nil {
		return nil, err
	}
	for _, e := range ents {
		if n := e.Name(); strings.HasSuffix(n, ".json") && !strings.HasPrefix(n, tmpPrefix) {
			keys[strings.TrimSuffix(n, ".json")] = true
		}
	}
	return keys, nil
}
