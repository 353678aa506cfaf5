package fidelity

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/schedlab/schedlab/internal/engine"
	"github.com/schedlab/schedlab/internal/experiment"
	"github.com/schedlab/schedlab/internal/sim"
)

// Seeds per point, and the master seed they are derived from.
const (
	// DefaultSeeds is the runs behind each simulated value of a full
	// run: enough for a 95% t-interval that means something.
	DefaultSeeds = 5
	// DefaultMaxSeeds is the most seeds a row with deltas gets in a full
	// run: its deltas add seeds, paired, until each is settled by the
	// sweep's stopping rule (Plan.Extend).
	DefaultMaxSeeds = 20
	// DeltaWithinPct is the stopping rule's resolution: a delta whose
	// interval's half-width is at most this many percent of tip is
	// settled even if it spans zero.
	DeltaWithinPct = 1.0
	// QuickSeeds is the runs per value of --quick, the CI subset.
	QuickSeeds = 3
	// MasterSeed is what every run's seed is derived from
	// (experiment.DeriveSeed): seed i is the same for every case, row
	// and column, so tip and a variant are compared at equal seeds, and
	// a --quick run's seeds are the first of a full run's.
	MasterSeed = 1
)

// PlanOptions choose what a plan runs.
type PlanOptions struct {
	// Quick runs only each case's simulate.quick loads (cases without
	// them are left out) with QuickSeeds seeds.
	Quick bool
	// Loads, if set, keeps only the rows whose load is one of them
	// (`schedlab fidelity --loads 1,2`): a fit names the rows it used so.
	Loads []string
	// Seeds overrides the seeds per value (0: DefaultSeeds, or
	// QuickSeeds with Quick).
	Seeds int
	// MaxSeeds is the most seeds a row with deltas may get by the
	// stopping rule (Plan.Extend); 0 is DefaultMaxSeeds for a full run
	// without Seeds, else Seeds (no stopping rule: every value gets
	// Seeds).
	MaxSeeds int
	// CostsFile is a cost-model file applied over every run's machine
	// costs (sim.Config.CostsFile; `schedlab fidelity --costs`, and each
	// trial of --fit); its contents are part of every run's key.
	CostsFile string
	// FullLength runs every benchmark for its whole command line
	// (sim.Config.FullLength, `schedlab fidelity --full-length`): tbench
	// does not stop at steady state.
	FullLength bool
	// Warmup is sim.Config.Warmup for the cases whose tool can run back
	// to back (hackbench; `schedlab fidelity --warmup`).
	Warmup engine.Time
	// Sysctls are NAME=VALUE settings laid over every run after the
	// case's own (`schedlab fidelity --sysctl`): a model mechanism that
	// is off by default, measured across the corpus. They are part of
	// every run's key.
	Sysctls []string
	// Shard and Shards keep only shard Shard of Shards (`schedlab
	// fidelity --shard i/n`): the rows (case and load) of every Shards-th
	// group, starting at group Shard (Plan.shardRows). A row is never
	// split, so the stopping rule (Extend), which reads only a row's own
	// records, gives a shard the same runs of that row as the whole plan;
	// rows whose first run is one simulation (a mechanism case's several
	// figures of one benchmark run, or cases that share a tip) are one
	// group, so the shard that has them simulates it once, as the whole
	// plan does. Shards 0 or 1 keeps every row.
	Shard, Shards int
}

// Plan is the runs of some cases: case × row × simulated column × seed,
// for every published value of a simulated column in the rows taken.
type Plan struct {
	Corpus *Corpus
	Cases  []*Case // the cases with at least one run, in the corpus's order
	Quick  bool
	// Seeds is what every simulated value gets; MaxSeeds what a row
	// with deltas may get (Extend).
	Seeds    int
	MaxSeeds int
	Runs     []Run
	// CostsFile is PlanOptions.CostsFile, and costsHash its contents'
	// SHA-256.
	CostsFile  string
	costsHash  string
	FullLength bool
	Warmup     engine.Time
	Sysctls    []string
}

// Run is one simulation of the plan.
type Run struct {
	Index  int
	Case   *Case
	Row    int // index in Case.Rows
	Column int // index in Case.Columns
	// SeedIndex is i of the point's seeds; Seed is its seed.
	SeedIndex int
	Seed      uint64
	// Key names the run's record in a results directory: case, load,
	// column, seed index and a hash of everything the run is made of
	// (machine, machine file's contents, kernel, variants, features,
	// sysctls, tool, args, cpus, seed), so an edited case never reuses
	// an old record.
	Key string
}

// Load is the run's row load.
func (r *Run) Load() string { return r.Case.Rows[r.Row].Load }

// ColumnName is the run's column.
func (r *Run) ColumnName() string { return r.Case.Columns[r.Column].Name }

// NewPlan lays out the runs of cases (from c). It fails only on a bad
// option: the cases are valid.
func NewPlan(c *Corpus, cases []*Case, opt PlanOptions) (*Plan, error) {
	seeds := opt.Seeds
	if seeds == 0 {
		seeds = DefaultSeeds
		if opt.Quick {
			seeds = QuickSeeds
		}
	}
	if seeds < 1 || seeds > 1000 {
		return nil, fmt.Errorf("--seeds %d: give 1 to 1000 (2 or more for intervals)", seeds)
	}
	maxSeeds := opt.MaxSeeds
	if maxSeeds == 0 {
		maxSeeds = seeds
		if !opt.Quick && opt.Seeds == 0 {
			maxSeeds = DefaultMaxSeeds
		}
	}
	if maxSeeds < seeds || maxSeeds > 1000 {
		return nil, fmt.Errorf("--max-seeds %d: give %d (--seeds) to 1000", maxSeeds, seeds)
	}
	p := &Plan{Corpus: c, Quick: opt.Quick, Seeds: seeds, MaxSeeds: maxSeeds, CostsFile: opt.CostsFile, FullLength: opt.FullLength, Warmup: opt.Warmup, Sysctls: opt.Sysctls}
	if opt.CostsFile != "" {
		data, err := os.ReadFile(opt.CostsFile)
		if err != nil {
			return nil, fmt.Errorf("--costs %s: %v", opt.CostsFile, err)
		}
		sum := sha256.Sum256(data)
		p.costsHash = hex.EncodeToString(sum[:])
	}
	if opt.Shards > 1 && (opt.Shard < 0 || opt.Shard >= opt.Shards) {
		return nil, fmt.Errorf("--shard %d/%d: want i/n with 0 <= i < n", opt.Shard, opt.Shards)
	}
	mine := p.shardRows(cases, opt)
	for _, cs := range cases {
		n := len(p.Runs)
		for ri, row := range cs.Rows {
			if !opt.keepsRow(cs, ri) {
				continue
			}
			if mine != nil && !mine[rowRef{cs, ri}] {
				continue
			}
			for ci, col := range cs.Columns {
				if _, ok := row.Values[col.Name]; !ok || !cs.Simulated(ci) {
					continue
				}
				for s := 0; s < seeds; s++ {
					r := Run{Index: len(p.Runs), Case: cs, Row: ri, Column: ci, SeedIndex: s, Seed: experiment.DeriveSeed(MasterSeed, s)}
					r.Key = p.key(&r)
					p.Runs = append(p.Runs, r)
				}
			}
		}
		if len(p.Runs) > n {
			p.Cases = append(p.Cases, cs)
		}
	}
	return p, nil
}

// Extend applies the stopping rule to the records of the runs so far
// (recs[i] is p.Runs[i]'s): every row with a delta (a simulated patched
// column and tip both published in it) whose deltas are not all settled
// gets one more seed for each of its simulated columns, paired, up to
// MaxSeeds. A delta is settled by the sweep's rule (experiment.Sequential
// with DeltaWithinPct, its Bonferroni-corrected confidence over the looks
// from Seeds to MaxSeeds): the interval of the per-seed differences from
// tip, in percent of tip's mean, excludes zero or is at most
// DeltaWithinPct wide on either side. It returns the runs added (0: every
// row is settled or at MaxSeeds). Which seeds a row gets depends only on
// that row's own records, so the runs do not depend on the number of
// jobs or the order runs finish in.
func (p *Plan) Extend(recs []*experiment.Record) int {
	if p.MaxSeeds <= p.Seeds {
		return 0
	}
	type rowKey struct {
		cs  *Case
		row int
	}
	// values[row][column] are the metric's values in seed order.
	values := map[rowKey]map[int][]float64{}
	var order []rowKey
	for i := range p.Runs {
		r := &p.Runs[i]
		k := rowKey{r.Case, r.Row}
		if values[k] == nil {
			values[k] = map[int][]float64{}
			order = append(order, k)
		}
		v := math.NaN()
		if i < len(recs) && recs[i] != nil {
			if x, ok := recs[i].Metric(r.Case.Metric.Name); ok {
				v = x
			}
		}
		values[k][r.Column] = append(values[k][r.Column], v)
	}
	rule := &experiment.Sequential{MinRuns: p.Seeds, WithinPct: DeltaWithinPct}
	added := 0
	for _, k := range order {
		cols := values[k]
		tip := cols[0]
		n := len(tip)
		if tip == nil || n >= p.MaxSeeds {
			continue
		}
		settled := true
		for ci, xs := range cols {
			if ci == 0 || len(xs) != n {
				continue
			}
			mean := 0.0
			for _, t := range tip {
				mean += t
			}
			mean = math.Abs(mean / float64(n))
			d := make([]float64, n)
			for i := range d {
				d[i] = 100 * (xs[i] - tip[i]) / mean
			}
			if mean == 0 || math.IsNaN(mean) || !rule.Settled(d, p.MaxSeeds) {
				settled = false
				break
			}
		}
		if settled || len(cols) < 2 {
			continue
		}
		row := k.cs.Rows[k.row]
		for ci, col := range k.cs.Columns {
			if _, ok := row.Values[col.Name]; !ok || !k.cs.Simulated(ci) {
				continue
			}
			r := Run{Index: len(p.Runs), Case: k.cs, Row: k.row, Column: ci, SeedIndex: n, Seed: experiment.DeriveSeed(MasterSeed, n)}
			r.Key = p.key(&r)
			p.Runs = append(p.Runs, r)
			added++
		}
	}
	return added
}

// Config is the run's configuration for the run pipeline; machine files
// are read from machineDir (where Execute writes them). The kernel, its
// variants, features and sysctls are the column's (Case.ColumnConfig):
// tip is the baseline with the base of every variant of the case that
// has one ("base:NAME"), as `schedlab compare` runs it, and tip's
// settings; another column is tip with its own changes, or its own
// kernel with them.
func (p *Plan) Config(r *Run, machineDir string) sim.Config {
	cs := r.Case
	cfg := cs.ColumnConfig(r.Column)
	cfg.Machine = cs.Machine.Preset
	cfg.CPUs = cs.Simulate.CPUs
	cfg.Seed = r.Seed
	cfg.Tool = cs.Simulate.Tool
	cfg.Args = cs.Args(r.Load())
	cfg.CostsFile = p.CostsFile
	cfg.FullLength = p.FullLength
	if len(p.Sysctls) > 0 {
		cfg.Sysctls = append(append([]string(nil), cfg.Sysctls...), p.Sysctls...)
	}
	if t, ok := sim.Lookup(cfg.Tool); ok && t.Repeatable {
		cfg.Warmup = p.Warmup
	}
	if cs.Machine.File != "" {
		cfg.Machine = filepath.Join(machineDir, cs.Machine.File)
	}
	return cfg
}

var unsafeRE = regexp.MustCompile(`[^A-Za-z0-9._=-]+`)

func (p *Plan) key(r *Run) string {
	cfg := p.Config(r, "")
	id := struct {
		Machine string     `json:"machine"`
		Config  sim.Config `json:"config"`
		Costs   string     `json:"costs,omitempty"`
	}{Machine: r.Case.Machine.Preset, Config: cfg, Costs: p.costsHash}
	id.Config.CostsFile = "" // its contents count, not its path
	if f := r.Case.Machine.File; f != "" {
		id.Machine = "file:" + p.Corpus.Machines[f].Hash
	}
	b, err := json.Marshal(&id)
	if err != nil {
		panic("fidelity: " + err.Error())
	}
	sum := sha256.Sum256(b)
	load := r.Load()
	if load == "" {
		load = "-"
	}
	return fmt.Sprintf("%s__load=%s__%s__seed%03d__%s", r.Case.ID, unsafeRE.ReplaceAllString(load, "_"), r.ColumnName(), r.SeedIndex, hex.EncodeToString(sum[:6]))
}

// keepsRow reports whether opt keeps row ri of cs: in the --quick subset
// if Quick, and of one of Loads if set.
func (opt PlanOptions) keepsRow(cs *Case, ri int) bool {
	return (!opt.Quick || cs.InQuick(ri)) && (opt.Loads == nil || contains(opt.Loads, cs.Rows[ri].Load))
}

// rowRef names a row of a case.
type rowRef struct {
	cs  *Case
	row int
}

// shardRows returns the rows of opt's shard, or nil to keep every row.
// The rows the other options keep (and that have a simulated value) are
// grouped by their first run's simulation (seed 0 of the first column with
// a value: the hash part of its key, which leaves the case out), groups
// numbered in the order their first row appears; group k is in shard k
// modulo Shards.
func (p *Plan) shardRows(cases []*Case, opt PlanOptions) map[rowRef]bool {
	if opt.Shards <= 1 {
		return nil
	}
	group := map[string]int{}
	mine := map[rowRef]bool{}
	for _, cs := range cases {
		for ri, row := range cs.Rows {
			if !opt.keepsRow(cs, ri) {
				continue
			}
			first := -1
			for ci, col := range cs.Columns {
				if _, ok := row.Values[col.Name]; ok && cs.Simulated(ci) {
					first = ci
					break
				}
			}
			if first < 0 {
				continue
			}
			r := Run{Case: cs, Row: ri, Column: first, Seed: experiment.DeriveSeed(MasterSeed, 0)}
			key := p.key(&r)
			h := key[strings.LastIndex(key, "__")+2:]
			g, ok := group[h]
			if !ok {
				g = len(group)
				group[h] = g
			}
			if g%opt.Shards == opt.Shard {
				mine[rowRef{cs, ri}] = true
			}
		}
	}
	return mine
}
