package experiment

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
)

// The layout of a results directory.
const (
	PlanFile    = "experiment.json"
	RunsDir     = "runs"
	MachinesDir = "machines"
	tmpPrefix   = ".tmp-"
)

// Localize copies the plan's machine files into dir/machines and makes
// their refs relative to dir, so the directory alone describes the sweep.
func (p *Plan) Localize(dir string) error {
	for i := range p.Machines {
		m := &p.Machines[i]
		if !m.File || !filepath.IsAbs(m.Ref) {
			continue
		}
		data := m.yaml
		if data == nil {
			var err error
			if data, err = os.ReadFile(m.Ref); err != nil {
				return err
			}
		}
		rel := filepath.Join(MachinesDir, m.Label+".yaml")
		if err := writeAtomic(dir, rel, data); err != nil {
			return err
		}
		m.Ref = rel
	}
	return nil
}

// JSON is the plan as experiment.json holds it.
func (p *Plan) JSON() []byte {
	b, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		panic("experiment: " + err.Error())
	}
	return append(b, '\n')
}

// LoadPlan reads a results directory's experiment.json.
func LoadPlan(dir string) (*Plan, error) {
	data, err := os.ReadFile(filepath.Join(dir, PlanFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s is not a results directory (no %s)", dir, PlanFile)
	}
	if err != nil {
		return nil, err
	}
	return parsePlan(filepath.Join(dir, PlanFile), data)
}

func parsePlan(name string, data []byte) (*Plan, error) {
	var p Plan
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	if p.SchemaVersion != PlanSchemaVersion {
		return nil, fmt.Errorf("%s: schema version %d, this schedlab reads %d", name, p.SchemaVersion, PlanSchemaVersion)
	}
	if len(p.Variants) == 0 || p.Variants[0] != Tip || p.Runs < 1 || len(p.Workloads) == 0 || len(p.Machines) == 0 || len(p.Kernels) == 0 {
		return nil, fmt.Errorf("%s: not a valid plan", name)
	}
	if q := p.Sequential; q != nil && (q.MinRuns < 1 || q.MinRuns >= p.Runs || !(q.WithinPct > 0 && q.WithinPct <= 100)) {
		return nil, fmt.Errorf("%s: sequential: min_runs %d of %d runs, within_pct %g: not a valid stopping rule", name, q.MinRuns, p.Runs, q.WithinPct)
	}
	if err := p.checkColumns(); err != nil {
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	for _, w := range p.Workloads {
		if w.Param.Index >= len(w.Args) || len(w.Param.Values) == 0 {
			return nil, fmt.Errorf("%s: workload %s: ranged argument %d of %d", name, w.Name, w.Param.Index, len(w.Args))
		}
	}
	if err := p.expand(); err != nil {
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	return &p, nil
}

// PrepareDir makes dir the results directory of p: it writes the plan (and
// the machine files) into a new or empty directory, or checks that an
// existing one holds the same plan. Without resume, a directory that
// already holds runs is an error.
func PrepareDir(dir string, p *Plan, resume bool) error {
	if err := os.MkdirAll(filepath.Join(dir, RunsDir), 0o755); err != nil {
		return err
	}
	if err := p.Localize(dir); err != nil {
		return err
	}
	want := p.JSON()
	have, err := os.ReadFile(filepath.Join(dir, PlanFile))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return writeAtomic(dir, PlanFile, want)
	case err != nil:
		return err
	case !bytes.Equal(have, want):
		old, perr := parsePlan(filepath.Join(dir, PlanFile), have)
		name := "another experiment"
		if perr == nil {
			name = "experiment " + old.Name
			if old.Profile != "" {
				name += " (profile " + old.Profile + ")"
			}
		}
		return fmt.Errorf("%s holds the results of %s, planned differently from this one: use another --out (or compare %s)", dir, name, PlanFile)
	}
	if !resume {
		n, err := countRuns(dir)
		if err != nil {
			return err
		}
		if n > 0 {
			return fmt.Errorf("%s already holds %d run(s) of this experiment: add --resume to continue it, or use another --out", dir, n)
		}
	}
	return nil
}

func countRuns(dir string) (int, error) {
	ents, err := os.ReadDir(filepath.Join(dir, RunsDir))
	if err != nil {
		return 0, err
	}
	n := 0
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".json") && !strings.HasPrefix(e.Name(), tmpPrefix) {
			n++
		}
	}
	return n, nil
}

// writeAtomic writes data to dir/rel so that rel either does not exist or
// holds all of data, whenever the process dies: a temporary file in the
// same directory, fsync, rename, fsync of the directory.
func writeAtomic(dir, rel string, data []byte) error {
	path := filepath.Join(dir, rel)
	d := filepath.Dir(path)
	if err := os.MkdirAll(d, 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(d, tmpPrefix+filepath.Base(rel)+"-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	df, err := os.Open(d)
	if err != nil {
		return err
	}
	err = df.Sync()
	df.Close()
	return err
}

// RecordPath is where a run's record lives in a results directory.
func RecordPath(dir, key string) string { return filepath.Join(dir, RunsDir, key+".json") }

// WriteRecord writes a record into dir atomically.
func WriteRecord(dir string, r *Record) error {
	b, err := json.MarshalIndent(r, "", " ")
	if err != nil {
		return err
	}
	return writeAtomic(dir, filepath.Join(RunsDir, r.Key+".json"), append(b, '\n'))
}

// ReadRecord reads one record file.
func ReadRecord(path string) (*Record, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseRecord(path, data)
}

// ParseRecord reads a record (what WriteRecord writes); errors name the
// file.
func ParseRecord(name string, data []byte) (*Record, error) {
	var r Record
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	if r.SchemaVersion != RecordSchemaVersion {
		return nil, fmt.Errorf("%s: schema version %d, this schedlab reads %d", name, r.SchemaVersion, RecordSchemaVersion)
	}
	return &r, nil
}

// Check reports how a record differs from the point it claims to be.
func (p *Plan) Check(pt *Point, r *Record) error {
	w := &p.Workloads[pt.Workload]
	args := w.Param.ArgsFor(w.Args, pt.Load)
	switch {
	case r.Key != pt.Key:
		return fmt.Errorf("key %q, expected %q", r.Key, pt.Key)
	case r.Experiment != p.Name:
		return fmt.Errorf("experiment %q, expected %q", r.Experiment, p.Name)
	case r.Machine != p.Machines[pt.Machine].Label || r.Kernel != p.ColumnKernel(pt.Variant, pt.Kernel) || r.Variant != pt.Variant:
		return fmt.Errorf("machine/kernel/variant %s/%s/%s, expected %s/%s/%s", r.Machine, r.Kernel, r.Variant, p.Machines[pt.Machine].Label, p.ColumnKernel(pt.Variant, pt.Kernel), pt.Variant)
	case r.Workload.Name != w.Name || r.Workload.Tool != w.Tool || strings.Join(r.Workload.Args, "\x00") != strings.Join(args, "\x00"):
		return fmt.Errorf("workload %s %q, expected %s %q", r.Workload.Tool, r.Workload.Args, w.Tool, args)
	case r.Run != pt.Run || r.Seed != pt.Seed:
		return fmt.Errorf("run %d seed %d, expected run %d seed %d", r.Run, r.Seed, pt.Run, pt.Seed)
	case r.Schedstat == nil || len(r.Metrics) == 0:
		return fmt.Errorf("no metrics or schedstat")
	case pt.Trace && r.Occupancy == nil:
		return fmt.Errorf("no occupancy, though the point is traced")
	}
	return nil
}

// Progress is reported after each finished run.
type Progress struct {
	Done int // runs finished by this sweep
	// Todo is the runs this sweep has to do; with a stopping rule, those
	// it knows of so far (it grows as loads need more runs), and MaxTodo
	// the most it could come to.
	Todo    int
	MaxTodo int
	Skipped int // runs already in the directory
	Elapsed time.Duration
	Key     string
}

// SweepOptions configure Sweep.
type SweepOptions struct {
	// Dir is the results directory (prepared by PrepareDir); empty runs
	// in memory.
	Dir string
	// Jobs is the number of runs at once (default 1).
	Jobs int
	// Shard i of Shards runs only the points with index i mod Shards.
	Shard, Shards int
	// Progress, if set, is called after every finished run, serially.
	Progress func(Progress)
	// Context, when done (Ctrl-C), stops the sweep: no run starts, the
	// runs in flight stop where they are and are lost, and Sweep returns
	// an *Interrupted. Runs finished before are written as always.
	Context context.Context
}

// Interrupted is the error of a sweep stopped by its context: how many
// runs it finished, and how many of its points have a record now (those
// it finished and, with a results directory, those it found there).
type Interrupted struct {
	Done  int
	Have  int
	Total int // the sweep's points; with a stopping rule, the most it could run
}

func (e *Interrupted) Error() string {
	return fmt.Sprintf("interrupted: %d of %d runs done", e.Have, e.Total)
}

// Unwrap makes an Interrupted a context.Canceled.
func (e *Interrupted) Unwrap() error { return context.Canceled }

// interrupted turns err into an *Interrupted if ctx stopped the sweep.
func interrupted(ctx context.Context, err error, done int, recs []*Record) error {
	if ctx.Err() == nil || !errors.Is(err, ctx.Err()) {
		return err
	}
	have := 0
	for _, r := range recs {
		if r != nil {
			have++
		}
	}
	return &Interrupted{Done: done, Have: have, Total: len(recs)}
}

// Sweep runs the plan's points (or one shard of them) on opt.Jobs
// goroutines, one kernel per run. With a results directory, runs already
// there are skipped, stale temporary files of this shard's runs removed,
// and each finished run is written atomically as soon as it is done. It
// returns the records of the points it covers in canonical order (those
// read back from the directory included).
func Sweep(p *Plan, opt SweepOptions) ([]*Record, error) {
	points := p.points
	if opt.Shards > 1 {
		points = p.Shard(opt.Shard, opt.Shards)
	}
	jobs := opt.Jobs
	if jobs < 1 {
		jobs = 1
	}
	ctx := opt.Context
	if ctx == nil {
		ctx = context.Background()
	}
	opt.Context = ctx
	recs := make([]*Record, len(points))
	var todo []int
	if opt.Dir != "" {
		mine := map[string]bool{}
		for _, pt := range points {
			mine[pt.Key] = true
		}
		if err := removeStaleTemps(opt.Dir, mine); err != nil {
			return nil, err
		}
		for i := range points {
			pt := &points[i]
			r, err := ReadRecord(RecordPath(opt.Dir, pt.Key))
			if errors.Is(err, fs.ErrNotExist) {
				todo = append(todo, i)
				continue
			}
			if err != nil {
				return nil, err
			}
			if err := p.Check(pt, r); err != nil {
				return nil, fmt.Errorf("%s: %v", RecordPath(opt.Dir, pt.Key), err)
			}
			recs[i] = r
		}
		if err := recheck(ctx, p, points, recs, opt.Dir); err != nil {
			return nil, interrupted(ctx, err, 0, recs)
		}
	} else {
		for i := range points {
			todo = append(todo, i)
		}
	}
	if p.Sequential != nil {
		return sweepSequential(p, points, recs, opt, jobs)
	}
	start := time.Now()
	done := 0
	err := Parallel(jobs, todo, func(i int) (*Record, error) {
		pt := &points[i]
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		r, err := execute(ctx, p, pt, opt.Dir, nil)
		if err == nil && opt.Dir != "" {
			err = WriteRecord(opt.Dir, r)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", pt.Key, err)
		}
		return r, nil
	}, func(i int, r *Record) {
		recs[i] = r
		done++
		if opt.Progress != nil {
			opt.Progress(Progress{Done: done, Todo: len(todo), Skipped: len(points) - len(todo), Elapsed: time.Since(start), Key: points[i].Key})
		}
	})
	if err != nil {
		return nil, interrupted(ctx, err, done, recs)
	}
	return recs, nil
}

// recheck runs again, for each machine and workload, the reused run that
// simulated the fewest events, and fails when its record differs from the
// stored one: the directory holds runs of another model (a binary whose
// model, or a workload's stopping rule, has changed since), which a resumed
// sweep would otherwise mix with new runs. Fidelity's --dir has the same
// check (Recheck).
func recheck(ctx context.Context, p *Plan, points []Point, recs []*Record, dir string) error {
	_, bad, err := Recheck(recs,
		func(i int) string { return recs[i].Machine + "\x00" + recs[i].Workload.Name },
		func(i int) (*Record, error) { return execute(ctx, p, &points[i], dir, nil) })
	if err != nil {
		return err
	}
	if bad >= 0 {
		return fmt.Errorf("%s holds runs of another model: %s gives a different result now; use a new --out, or move that workload's runs out of %s", dir, RecordPath(dir, points[bad].Key), filepath.Join(dir, RunsDir))
	}
	return nil
}

// Recheck runs again, for each group of stored records (recs[i] nil is no
// record), the one that simulated the fewest events (ties: the smaller
// key), in index order, and compares the new record with the stored one
// without wall time (Deterministic). It returns how many it ran and the
// index of the first that differs, -1 if none; an error of again stops it.
// A results directory reused by a sweep or by fidelity calls it to find
// records another model made.
func Recheck(recs []*Record, group func(i int) string, again func(i int) (*Record, error)) (checked, differs int, err error) {
	cheapest := map[string]int{}
	for i, r := range recs {
		if r == nil {
			continue
		}
		k := group(i)
		j, ok := cheapest[k]
		if !ok || r.Sim.Events < recs[j].Sim.Events || r.Sim.Events == recs[j].Sim.Events && r.Key < recs[j].Key {
			cheapest[k] = i
		}
	}
	idx := make([]int, 0, len(cheapest))
	for _, i := range cheapest {
		idx = append(idx, i)
	}
	slices.Sort(idx)
	for _, i := range idx {
		r, err := again(i)
		if err != nil {
			return 0, -1, fmt.Errorf("%s: %v", recs[i].Key, err)
		}
		if !bytes.Equal(r.Deterministic(), recs[i].Deterministic()) {
			return 0, i, nil
		}
	}
	return len(idx), -1, nil
}

// removeStaleTemps removes temporary files left by killed runs of the
// given keys (a run killed between creating its temporary file and the
// rename). Other shards' temporary files are left alone: they may be in
// flight.
func removeStaleTemps(dir string, keys map[string]bool) error {
	ents, err := os.ReadDir(filepath.Join(dir, RunsDir))
	if err != nil {
		return err
	}
	for _, e := range ents {
		name := e.Name()
		if !strings.HasPrefix(name, tmpPrefix) {
			continue
		}
		rest := strings.TrimPrefix(name, tmpPrefix)
		i := strings.LastIndex(rest, ".json-")
		if i < 0 || !keys[rest[:i]] {
			continue
		}
		if err := os.Remove(filepath.Join(dir, RunsDir, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}

// Results is a results directory read whole.
type Results struct {
	Dir     string
	Plan    *Plan
	Records []*Record // in canonical order; nil where missing
	Missing []string  // keys of points without a record that the plan needs
	// Unneeded counts the points without a record that the plan's
	// stopping rule left out (Plan.Sequential): not missing.
	Unneeded int
	Temps    []string // leftover temporary files
	Extra    []string // files in runs/ that belong to no point
}

// ReadResults reads a results directory and checks every record against
// the point of its key.
func ReadResults(dir string) (*Results, error) {
	p, err := LoadPlan(dir)
	if err != nil {
		return nil, err
	}
	res := &Results{Dir: dir, Plan: p, Records: make([]*Record, len(p.points))}
	index := map[string]int{}
	for i, pt := range p.points {
		index[pt.Key] = i
	}
	ents, err := os.ReadDir(filepath.Join(dir, RunsDir))
	if err != nil {
		return nil, err
	}
	for _, e := range ents {
		name := e.Name()
		switch {
		case strings.HasPrefix(name, tmpPrefix):
			res.Temps = append(res.Temps, name)
			continue
		case !strings.HasSuffix(name, ".json"):
			res.Extra = append(res.Extra, name)
			continue
		}
		i, ok := index[strings.TrimSuffix(name, ".json")]
		if !ok {
			res.Extra = append(res.Extra, name)
			continue
		}
		path := filepath.Join(dir, RunsDir, name)
		r, err := ReadRecord(path)
		if err != nil {
			return nil, err
		}
		if err := p.Check(&p.points[i], r); err != nil {
			return nil, fmt.Errorf("%s: %v", path, err)
		}
		res.Records[i] = r
	}
	need := p.Needed(res.Records)
	for i, r := range res.Records {
		switch {
		case r == nil && need[i]:
			res.Missing = append(res.Missing, p.points[i].Key)
		case r == nil:
			res.Unneeded++
		}
	}
	sort.Strings(res.Temps)
	sort.Strings(res.Extra)
	return res, nil
}

// Complete returns the records of a directory with every run present.
func (r *Results) Complete() bool { return len(r.Missing) == 0 }

// Found returns the records present, in canonical order.
func (r *Results) Found() []*Record {
	var out []*Record
	for _, x := range r.Records {
		if x != nil {
			out = append(out, x)
		}
	}
	return out
}

// sweepSequential is Sweep for a plan with a stopping rule. Each cell of
// points (whole cells: Plan.Shard keeps them together) starts with the run
// indices the rule needs at least; when a cell's queued runs have all
// finished, the rule decides (Plan.cellNeed) whether it needs the next
// run index, whose runs then join the queue. recs holds the records
// already in the directory (nil where missing), by position in points.
// It returns the records present at the end, in canonical order; runs
// the rule left out have none.
func sweepSequential(p *Plan, points []Point, recs []*Record, opt SweepOptions, jobs int) ([]*Record, error) {
	pos := map[int]int{} // point index → position in points
	cells := map[int][]int{}
	var order []int // cells in canonical order
	for i := range points {
		pos[points[i].Index] = i
		c := p.cellOf(&points[i])
		if _, ok := cells[c]; !ok {
			order = append(order, c)
		}
		cells[c] = append(cells[c], i)
	}
	var (
		mu       sync.Mutex
		cond     = sync.NewCond(&mu)
		queue    []int // positions to run
		inflight int
		pending  = map[int]int{} // cell → its runs queued or running
		firstErr error
		done     int
		skipped  int
		start    = time.Now()
	)
	for _, r := range recs {
		if r != nil {
			skipped++
		}
	}
	rec := func(index int) *Record {
		if i, ok := pos[index]; ok {
			return recs[i]
		}
		return nil
	}
	// advance queues what cell c needs next; called with mu held when
	// none of its runs is queued or running.
	advance := func(c int) {
		ns, complete := p.cellNeed(c, rec)
		if complete {
			return
		}
		for v, n := range ns {
			for r := 0; r < n; r++ {
				if i := pos[p.pointIndex(c, v, r)]; recs[i] == nil {
					queue = append(queue, i)
					pending[c]++
				}
			}
		}
	}
	mu.Lock()
	for _, c := range order {
		advance(c)
	}
	mu.Unlock()
	maxTodo := len(points) - skipped
	var wg sync.WaitGroup
	for w := 0; w < jobs; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			mu.Lock()
			defer mu.Unlock()
			for {
				for len(queue) == 0 && inflight > 0 && firstErr == nil {
					cond.Wait()
				}
				if err := opt.Context.Err(); err != nil && firstErr == nil {
					firstErr = err
				}
				if firstErr != nil || len(queue) == 0 {
					cond.Broadcast()
					return
				}
				i := queue[0]
				queue = queue[1:]
				inflight++
				mu.Unlock()
				pt := &points[i]
				r, err := execute(opt.Context, p, pt, opt.Dir, nil)
				if err == nil && opt.Dir != "" {
					err = WriteRecord(opt.Dir, r)
				}
				mu.Lock()
				inflight--
				if err != nil {
					if firstErr == nil {
						firstErr = fmt.Errorf("%s: %w", pt.Key, err)
					}
					cond.Broadcast()
					continue
				}
				recs[i] = r
				done++
				c := p.cellOf(pt)
				if pending[c]--; pending[c] == 0 {
					advance(c)
				}
				cond.Broadcast()
				if opt.Progress != nil {
					opt.Progress(Progress{Done: done, Todo: done + inflight + len(queue), MaxTodo: maxTodo,
						Skipped: skipped, Elapsed: time.Since(start), Key: pt.Key})
				}
			}
		}()
	}
	wg.Wait()
	if firstErr != nil {
		return nil, interrupted(opt.Context, firstErr, done, recs)
	}
	var out []*Record
	for _, r := range recs {
		if r != nil {
			out = append(out, r)
		}
	}
	return out, nil
}
