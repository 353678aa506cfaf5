package experiment

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
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
	// holds; when it is not 0, PerRun is their mean cost (recordCost:
	// CPU time, or wall time in records without it) and nothing was
	// probed.
	Measured int
	// Progress is the fraction of the probe run simulated within the
	// probe's budget (1: it finished), and ProbeWall the wall time it took.
	Progress  float64
	ProbeWall time.Duration
	// PerRun is the expected wall time of one run: the mean of the
	// measured runs, or else ProbeWall / Progress × Scale.
	PerRun time.Duration
	// Scale corrects a cut-short probe by what the directory's runs say
	// of such probes (1: no correction): the ratio of the measured mean
	// to the probe's extrapolation in the reference class RefMachine,
	// RefLoad, a class of the same workload that holds runs (reference).
	Scale               float64
	RefMachine, RefLoad string
}

// Total is the class's expected wall time on one core, at most.
func (r *EstimateRow) Total() time.Duration { return time.Duration(r.Runs) * r.PerRun }

// Least is the class's wall time on one core if the stopping rule needs
// no run beyond what it needs now.
func (r *EstimateRow) Least() time.Duration { return time.Duration(r.AtLeast) * r.PerRun }

// Estimate is the expected cost of the runs of p that dir does not hold
// yet, one row per machine, workload and load. A class of which dir holds
// runs costs their mean CPU time a run (wall time where a record has no
// CPU time): what a sweep measured, start-up phases and tbench's stop at
// steady state included. Every other class is
// probed: one run (run index 0's configuration, tip's kernel where tip is
// in the plan) for at most budget of wall time (now is the clock), its
// wall time extrapolated from the progress made. Workloads whose progress
// is not linear in wall time (a start-up phase, tbench's stop at steady
// state, which ends runs early) make a probe an approximation; where dir
// holds runs of the same workload, a cut-short probe is scaled by how far
// such a probe missed there (reference: the measured mean over the probe's
// extrapolation in the nearest class that has runs). With a
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
	var workload []int // each class's workload entry in the plan
	var probe []*Point
	var wall []time.Duration
	for _, pt := range p.Points() {
		c := class{pt.Machine, pt.Workload, pt.Load}
		i, ok := idx[c]
		if !ok {
			i = len(rows)
			idx[c] = i
			rows = append(rows, EstimateRow{Machine: p.Machines[pt.Machine].Name, Workload: p.Workloads[pt.Workload].Name, Load: pt.Load, Scale: 1})
			workload = append(workload, pt.Workload)
			probe = append(probe, nil)
			wall = append(wall, 0)
		}
		// The class's probe: run index 0's configuration, tip's
		// where the plan has it (a reference class is probed too).
		if probe[i] == nil || pt.Variant == Tip && probe[i].Variant != Tip {
			probe[i] = &pt
		}
		r := &rows[i]
		if rec := recs[pt.Index]; rec != nil {
			r.Measured++
			wall[i] += recordCost(rec)
			continue
		}
		switch need[pt.Index] {
		case never:
			continue
		case surely:
			r.AtLeast++
		}
		r.Runs++
	}
	type probed struct {
		progress float64
		used     time.Duration
	}
	probes := map[int]probed{}
	probeClass := func(i int) (probed, error) {
		if pr, ok := probes[i]; ok {
			return pr, nil
		}
		pt := probe[i]
		b, err := sim.Build(p.RunConfig(pt, dir))
		if err != nil {
			return probed{}, fmt.Errorf("%s: %v", pt.Key, err)
		}
		prog, _, used, err := b.Probe(budget, now)
		if err != nil {
			return probed{}, fmt.Errorf("%s: %v", pt.Key, err)
		}
		probes[i] = probed{prog, used}
		return probes[i], nil
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
		pr, err := probeClass(i)
		if err != nil {
			return nil, err
		}
		r.Progress, r.ProbeWall = pr.progress, pr.used
		r.PerRun = extrapolate(pr.progress, pr.used)
		if pr.progress < 1 {
			// Scale by the first reference whose probe is cut short
			// too (one that finishes says nothing of extrapolating);
			// at most two probed, so references cost few probes.
			tried := 0
			for _, j := range references(workload, rows, i) {
				if tried == 2 {
					break
				}
				tried++
				ref, err := probeClass(j)
				if err != nil {
					return nil, err
				}
				if ref.progress >= 1 || extrapolate(ref.progress, ref.used) <= 0 {
					continue
				}
				measured := wall[j] / time.Duration(rows[j].Measured)
				r.Scale = float64(measured) / float64(extrapolate(ref.progress, ref.used))
				r.RefMachine, r.RefLoad = rows[j].Machine, rows[j].Load
				r.PerRun = time.Duration(float64(r.PerRun) * r.Scale)
				break
			}
		}
		out = append(out, *r)
	}
	return out, nil
}

// recordCost is what a run a directory holds cost: its CPU time where
// the record has it (sim.cpu_ns), which unlike its wall time leaves out
// what the run spent stopped (a suspended laptop, a SIGSTOP) or waiting
// for a core, else its wall time.
func recordCost(r *Record) time.Duration {
	if r.Sim.CPUNs > 0 {
		return time.Duration(r.Sim.CPUNs)
	}
	return time.Duration(r.Sim.WallNs)
}

// extrapolate is the wall time of a run of which a probe simulated
// progress in used.
func extrapolate(progress float64, used time.Duration) time.Duration {
	if progress <= 0 {
		progress = 1e-3 // nothing measurable yet: count it as 1000 times the probe
	}
	return time.Duration(float64(used) / progress)
}

// references are the classes that can scale class u's probe, best first:
// those of u's workload (the same workload entry of the plan) that hold
// runs, nearest in load first (the same load; else the ratio of numeric
// loads, one doubling as far as one halving), then on u's machine, then
// the higher load (a workload's cost grows with its load, so the higher
// of two equally near loads errs on the side of more), then plan order.
// Loads that are not both numbers are near only when equal.
func references(workload []int, rows []EstimateRow, u int) []int {
	type cand struct {
		i    int
		dist float64
		same bool
		load float64
	}
	var cs []cand
	for i := range rows {
		if i == u || rows[i].Measured == 0 || workload[i] != workload[u] {
			continue
		}
		d, l := loadDistance(rows[i].Load, rows[u].Load)
		if math.IsInf(d, 1) {
			continue
		}
		cs = append(cs, cand{i, d, rows[i].Machine == rows[u].Machine, l})
	}
	sort.SliceStable(cs, func(a, b int) bool {
		x, y := cs[a], cs[b]
		if x.dist != y.dist {
			return x.dist < y.dist
		}
		if x.same != y.same {
			return x.same
		}
		return x.load > y.load
	})
	out := make([]int, len(cs))
	for k, c := range cs {
		out[k] = c.i
	}
	return out
}

// loadDistance is how far load a is from load b: 0 when equal, |ln(a/b)|
// when both are positive numbers, +Inf otherwise; and a as a number (0
// when it is none).
func loadDistance(a, b string) (float64, float64) {
	x, errX := strconv.ParseFloat(a, 64)
	if errX != nil || x <= 0 {
		x = 0
	}
	if a == b {
		return 0, x
	}
	y, errY := strconv.ParseFloat(b, 64)
	if x == 0 || errY != nil || y <= 0 {
		return math.Inf(1), x
	}
	return math.Abs(math.Log(x / y)), x
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
