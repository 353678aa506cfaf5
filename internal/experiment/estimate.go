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
	// Runs is the number of the class's runs still to run at most, and
	// AtLeast the number the plan's stopping rule needs in any case
	// (Runs without a rule). Runs a results directory holds are left out,
	// and so are the runs of a cell the rule has settled on those
	// records.
	Runs, AtLeast int
	// Measured is the number of the class's runs the results directory
	// holds; when it is not 0, PerRun is their mean wall time and nothing
	// was probed.
	Measured int
	// Progress is the fraction of the probe run simulated within the
	// probe's budget (1: it finished), and ProbeWall the wall time it took.
	Progress  float64
	ProbeWall time.Duration
	// PerRun is the expected wall time of one run: the mean of the
	// measured runs, or else ProbeWall / Progress.
	PerRun time.Duration
}

// Total is the class's expected wall time on one core, at most.
func (r *EstimateRow) Total() time.Duration { return time.Duration(r.Runs) * r.PerRun }

// Least is the class's wall time on one core if the stopping rule needs
// no run beyond what it needs now.
func (r *EstimateRow) Least() time.Duration { return time.Duration(r.AtLeast) * r.PerRun }

// Estimate is the expected cost of the runs of p that dir does not hold
// yet, one row per machine, workload and load. A class of which dir holds
// runs costs their mean wall time a run: what a sweep measured, start-up
// phases and tbench's stop at steady state included. Every other class is
// probed: one run (run index 0's configuration, tip's kernel where tip is
// in the plan) for at most budget of wall time (now is the clock), its
// wall time extrapolated from the progress made. Workloads whose progress
// is not linear in wall time (a start-up phase, tbench's stop at steady
// state, which ends runs early) make a probe an approximation. With a
// stopping rule (Plan.Sequential), the records in dir decide which runs
// the rule still needs (Plan.cellNeed, as the sweep does): a settled cell
// needs none, an open one at least its next run indices.
func Estimate(p *Plan, dir string, budget time.Duration, now func() time.Time) ([]EstimateRow, error) {
	done, err := doneKeys(dir)
	if err != nil {
		return nil, err
	}
	recs := map[int]*Record{}
	for _, pt := range p.Points() {
		if done[pt.Key] {
			r, err := ReadRecord(RecordPath(dir, pt.Key))
			if err != nil {
				return nil, err
			}
			recs[pt.Index] = r
		}
	}
	// What the stopping rule still needs of each point not run.
	const (
		never   = iota // its cell is settled
		perhaps        // beyond the run indices its column needs now
		surely         // among them (every point without a rule)
	)
	need := map[int]int{}
	cells := map[int]bool{}
	for _, pt := range p.Points() {
		if recs[pt.Index] == nil {
			need[pt.Index] = surely
			cells[p.cellOf(&pt)] = true
		}
	}
	if p.Sequential != nil {
		rec := func(i int) *Record { return recs[i] }
		for c := range cells {
			ns, complete := p.cellNeed(c, rec)
			for v := range p.Variants {
				for r := 0; r < p.Runs; r++ {
					i := p.pointIndex(c, v, r)
					if _, ok := need[i]; !ok {
						continue
					}
					switch {
					case complete:
						need[i] = never
					case r >= ns[v]:
						need[i] = perhaps
					}
				}
			}
		}
	}
	type class struct {
		m, w int
		load string
	}
	idx := map[class]int{}
	var rows []EstimateRow
	var probe []*Point
	var wall []time.Duration
	for _, pt := range p.Points() {
		c := class{pt.Machine, pt.Workload, pt.Load}
		i, ok := idx[c]
		if !ok {
			i = len(rows)
			idx[c] = i
			rows = append(rows, EstimateRow{Machine: p.Machines[pt.Machine].Name, Workload: p.Workloads[pt.Workload].Name, Load: pt.Load})
			probe = append(probe, nil)
			wall = append(wall, 0)
		}
		r := &rows[i]
		if rec := recs[pt.Index]; rec != nil {
			r.Measured++
			wall[i] += time.Duration(rec.Sim.WallNs)
			continue
		}
		switch need[pt.Index] {
		case never:
			continue
		case surely:
			r.AtLeast++
		}
		r.Runs++
		if probe[i] == nil || pt.Variant == Tip && probe[i].Variant != Tip {
			probe[i] = &pt
		}
	}
	var out []EstimateRow
	for i := range rows {
		r := &rows[i]
		if r.Runs == 0 {
			continue // all run, or left out by the stopping rule
		}
		if r.Measured > 0 {
			r.PerRun = wall[i] / time.Duration(r.Measured)
			out = append(out, *r)
			continue
		}
		pt := probe[i]
		b, err := sim.Build(p.RunConfig(pt, dir))
		if err != nil {
			return nil, fmt.Errorf("%s: %v", pt.Key, err)
		}
		prog, _, used, err := b.Probe(budget, now)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", pt.Key, err)
		}
		r.Progress, r.ProbeWall = prog, used
		if prog <= 0 {
			prog = 1e-3 // nothing measurable yet: count it as 1000 times the probe
		}
		r.PerRun = time.Duration(float64(used) / prog)
		out = append(out, *r)
	}
	return out, nil
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
