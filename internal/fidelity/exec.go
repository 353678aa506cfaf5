package fidelity

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/schedlab/schedlab/internal/experiment"
	"github.com/schedlab/schedlab/internal/fileerr"
	"github.com/schedlab/schedlab/internal/sim"
)

// The layout of a fidelity results directory: the marker file, the
// machine files the runs read, and one record per run in runs/KEY.json
// (experiment's record format, written atomically by
// experiment.WriteRecord).
const (
	MarkerFile  = "fidelity.json"
	MachinesDir = "machines"
)

// markerSchemaVersion is the version of MarkerFile.
const markerSchemaVersion = 1

// ExecOptions configure Execute.
type ExecOptions struct {
	// Dir is the results directory; "" runs in memory (machine files go
	// to a temporary directory, removed at the end).
	Dir string
	// Jobs is the number of runs at once (default 1).
	Jobs int
	// Progress, if set, is called after every finished run, serially.
	Progress func(experiment.Progress)
}

// Outcome is what Execute did.
type Outcome struct {
	// Records are the plan's runs' records, by Run.Index.
	Records []*experiment.Record
	// Executed runs were simulated now; Reused were read from the
	// results directory; Checked of those were run again to check that
	// the model still gives what the directory holds; Shared were the
	// same simulation as a run executed now (another case's figure of
	// one run), their records copied.
	Executed, Reused, Checked, Shared int
}

// Execute runs the plan's runs through the run pipeline (sim.Run) on
// opt.Jobs goroutines, one kernel per run; a run is single-threaded and
// deterministic, so the records do not depend on the number of jobs.
//
// With a results directory, a run whose record is there is not run again
// (records are keyed by everything the run is made of, Run.Key), and each
// finished run is written at once, atomically, so a killed run loses at
// most the runs in flight. A directory is tied to the model that filled
// it: before reusing records, Execute runs again the cheapest reused run
// of each machine and benchmark and fails if any now differs (the model
// changed; use another directory).
//
// With a stopping rule (Plan.MaxSeeds above Plan.Seeds), Execute then
// applies it: it extends the plan by the seeds the unsettled rows need
// (Plan.Extend) and runs them, until every row is settled or at its most
// seeds. The plan's runs grow; the records are by Run.Index.
func Execute(p *Plan, opt ExecOptions) (*Outcome, error) {
	machineDir, cleanup, err := prepare(p, opt.Dir)
	if err != nil {
		return nil, err
	}
	defer cleanup()
	out := &Outcome{}
	if err := p.executeFrom(0, out, machineDir, opt); err != nil {
		return nil, err
	}
	for {
		start := len(out.Records)
		if p.Extend(out.Records) == 0 {
			return out, nil
		}
		if err := p.executeFrom(start, out, machineDir, opt); err != nil {
			return nil, err
		}
	}
}

// executeFrom runs (or reads from the results directory) the runs from
// index start on, into out.Records. The first pass (start 0) checks the
// reused records against the model (recheck); later passes read the same
// directory and model.
func (p *Plan) executeFrom(start int, out *Outcome, machineDir string, opt ExecOptions) error {
	jobs := opt.Jobs
	if jobs < 1 {
		jobs = 1
	}
	out.Records = append(out.Records, make([]*experiment.Record, len(p.Runs)-start)...)
	var todo []int
	reused := 0
	for i := start; i < len(p.Runs); i++ {
		r := &p.Runs[i]
		if opt.Dir == "" {
			todo = append(todo, i)
			continue
		}
		path := experiment.RecordPath(opt.Dir, r.Key)
		rec, err := experiment.ReadRecord(path)
		if errors.Is(err, fs.ErrNotExist) {
			todo = append(todo, i)
			continue
		}
		if err != nil {
			return err
		}
		if err := check(p, r, rec, machineDir); err != nil {
			return fmt.Errorf("%s: %v", path, err)
		}
		out.Records[i] = rec
		out.Reused++
		reused++
	}
	if start == 0 && reused > 0 {
		n, err := recheck(p, out.Records, machineDir, opt.Dir)
		if err != nil {
			return err
		}
		out.Checked = n
	}
	// Runs of different cases can be one simulation: the mechanism
	// corpus reads several figures of one benchmark run, one case per
	// figure. The key's last part hashes everything a run is made of, so
	// runs that share it are simulated once and the record copied.
	var unique []int
	firstOf := map[string]int{}
	var copies []int
	for _, i := range todo {
		h := configHash(p.Runs[i].Key)
		if _, ok := firstOf[h]; ok {
			copies = append(copies, i)
			continue
		}
		firstOf[h] = i
		unique = append(unique, i)
	}
	todo = unique
	begin := time.Now()
	done := 0
	err := experiment.Parallel(jobs, todo, func(i int) (*experiment.Record, error) {
		r := &p.Runs[i]
		rec, err := execute(p, r, machineDir)
		if err == nil && opt.Dir != "" {
			err = experiment.WriteRecord(opt.Dir, rec)
		}
		if err != nil {
			// A mistake in the case names its file and line; anything
			// else says which run.
			var fe *fileerr.Error
			if !errors.As(err, &fe) || fe.File != r.Case.File {
				err = fmt.Errorf("%s (%s): %w", r.Key, r.Case.File, err)
			}
			return nil, err
		}
		return rec, nil
	}, func(i int, rec *experiment.Record) {
		out.Records[i] = rec
		out.Executed++
		done++
		if opt.Progress != nil {
			opt.Progress(experiment.Progress{Done: done, Todo: len(todo), Skipped: reused, Elapsed: time.Since(begin), Key: p.Runs[i].Key})
		}
	})
	if err != nil {
		return err
	}
	for _, i := range copies {
		r := &p.Runs[i]
		rec := sharedRecord(out.Records[firstOf[configHash(r.Key)]], r)
		if opt.Dir != "" {
			if err := experiment.WriteRecord(opt.Dir, rec); err != nil {
				return err
			}
		}
		out.Records[i] = rec
		out.Shared++
	}
	return nil
}

// configHash is the part of a run's key that hashes what the run is made
// of (Plan.key): runs with equal hashes are the same simulation.
func configHash(key string) string { return key[strings.LastIndex(key, "__")+2:] }

// sharedRecord is the record of run r made from the record of another run
// that is the same simulation: its own key, column, seed index and load.
func sharedRecord(from *experiment.Record, r *Run) *experiment.Record {
	rec := *from
	rec.Key, rec.Run = r.Key, r.SeedIndex
	rec.Param.Name, rec.Param.Value = "load", r.Load()
	rec.Machine, rec.Variant = r.Case.MachineLabel(), r.ColumnName()
	return &rec
}

// execute runs one run and makes its record.
func execute(p *Plan, r *Run, machineDir string) (*experiment.Record, error) {
	res, err := sim.Run(p.Config(r, machineDir), sim.Options{})
	if err != nil {
		return nil, err
	}
	rec := &experiment.Record{Key: r.Key, Experiment: "fidelity", Run: r.SeedIndex, Result: *res}
	rec.Param.Name, rec.Param.Value = "load", r.Load()
	rec.Machine, rec.Variant = r.Case.MachineLabel(), r.ColumnName()
	if _, ok := rec.Metric(r.Case.Metric.Name); !ok {
		var have []string
		for _, m := range rec.Metrics {
			have = append(have, m.Name)
		}
		return nil, r.Case.errAt("metric.name", "metric.name %q: %s reports %s", r.Case.Metric.Name, r.Case.Simulate.Tool, strings.Join(have, ", "))
	}
	return rec, nil
}

// check reports how a stored record differs from the run it is keyed as.
func check(p *Plan, r *Run, rec *experiment.Record, machineDir string) error {
	cfg := p.Config(r, machineDir)
	switch {
	case rec.Key != r.Key || rec.Experiment != "fidelity":
		return fmt.Errorf("key %q of %q, expected %q", rec.Key, rec.Experiment, r.Key)
	case rec.Machine != r.Case.MachineLabel() || rec.Kernel != cfg.Kernel || rec.Variant != r.ColumnName():
		return fmt.Errorf("machine/kernel/column %s/%s/%s, expected %s/%s/%s", rec.Machine, rec.Kernel, rec.Variant, r.Case.MachineLabel(), cfg.Kernel, r.ColumnName())
	case rec.Workload.Tool != cfg.Tool || strings.Join(rec.Workload.Args, "\x00") != strings.Join(cfg.Args, "\x00"):
		return fmt.Errorf("workload %s %q, expected %s %q", rec.Workload.Tool, rec.Workload.Args, cfg.Tool, cfg.Args)
	case rec.Seed != r.Seed || rec.Run != r.SeedIndex || rec.Param.Value != r.Load():
		return fmt.Errorf("seed %d (#%d) load %q, expected %d (#%d) load %q", rec.Seed, rec.Run, rec.Param.Value, r.Seed, r.SeedIndex, r.Load())
	}
	if _, ok := rec.Metric(r.Case.Metric.Name); !ok {
		return fmt.Errorf("no metric %q", r.Case.Metric.Name)
	}
	return nil
}

// recheck runs again, for each machine and benchmark, the reused run that
// simulated the fewest events, and fails when the result differs from the
// stored one: the directory was filled by another model. (Per benchmark, so
// that a change to one workload's model, STREAM's say, is caught too.) It
// returns the runs checked.
func recheck(p *Plan, recs []*experiment.Record, machineDir, dir string) (int, error) {
	n, bad, err := experiment.Recheck(recs,
		func(i int) string { return p.Runs[i].Case.MachineLabel() + "\x00" + p.Runs[i].Case.Simulate.Tool },
		func(i int) (*experiment.Record, error) { return execute(p, &p.Runs[i], machineDir) })
	if err != nil {
		return 0, err
	}
	if bad >= 0 {
		return 0, fmt.Errorf("--dir %s holds results of another model: run %s gives a different result now; use a new --dir, or remove this one", dir, p.Runs[bad].Key)
	}
	return n, nil
}

// PrepareDir makes dir a results directory for p, as Execute does before
// its first run: `fidelity --slurm` does it before the shards start, so
// that they find it (and sbatch its log directory) in place.
func PrepareDir(p *Plan, dir string) error {
	_, cleanup, err := prepare(p, dir)
	cleanup()
	return err
}

// prepare makes the results directory (marker, machine files) or, without
// one, a temporary directory for the machine files.
func prepare(p *Plan, dir string) (machineDir string, cleanup func(), err error) {
	cleanup = func() {}
	if dir == "" {
		if len(p.Corpus.Machines) == 0 {
			return "", cleanup, nil
		}
		tmp, err := os.MkdirTemp("", "schedlab-fidelity-")
		if err != nil {
			return "", cleanup, err
		}
		cleanup = func() { os.RemoveAll(tmp) }
		if err := writeMachines(p, tmp); err != nil {
			cleanup()
			return "", func() {}, err
		}
		return tmp, cleanup, nil
	}
	if _, err := os.Stat(filepath.Join(dir, experiment.PlanFile)); err == nil {
		return "", cleanup, fmt.Errorf("--dir %s holds a sweep's results (%s): use another directory", dir, experiment.PlanFile)
	}
	if err := os.MkdirAll(filepath.Join(dir, experiment.RunsDir), 0o755); err != nil {
		return "", cleanup, fmt.Errorf("--dir %s: %v", dir, err)
	}
	marker := filepath.Join(dir, MarkerFile)
	want := []byte(fmt.Sprintf("{\"schema_version\": %d, \"contents\": \"schedlab fidelity results: runs/KEY.json, one record per run\"}\n", markerSchemaVersion))
	have, err := os.ReadFile(marker)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if n, _ := os.ReadDir(filepath.Join(dir, experiment.RunsDir)); len(n) > 0 {
			return "", cleanup, fmt.Errorf("--dir %s holds runs but no %s: it is not a fidelity results directory", dir, MarkerFile)
		}
		if err := writeFile(marker, want); err != nil {
			return "", cleanup, err
		}
	case err != nil:
		return "", cleanup, err
	default:
		var m struct {
			SchemaVersion int `json:"schema_version"`
		}
		if json.Unmarshal(have, &m) != nil || m.SchemaVersion != markerSchemaVersion {
			return "", cleanup, fmt.Errorf("%s: not a fidelity results directory of this schedlab (schema version %d)", marker, markerSchemaVersion)
		}
	}
	// A run killed between writing its record's temporary file and the
	// rename leaves the temporary file (experiment.WriteRecord's
	// ".tmp-KEY.json-*"). Only this plan's are removed: the shards of a
	// plan (--shard) share the directory, and another shard's are its
	// runs in flight.
	ents, err := os.ReadDir(filepath.Join(dir, experiment.RunsDir))
	if err != nil {
		return "", cleanup, err
	}
	mine := make(map[string]bool, len(p.Runs))
	for i := range p.Runs {
		mine[p.Runs[i].Key] = true
	}
	for _, e := range ents {
		key, _, ok := strings.Cut(strings.TrimPrefix(e.Name(), ".tmp-"), ".json-")
		if strings.HasPrefix(e.Name(), ".tmp-") && ok && mine[key] {
			if err := os.Remove(filepath.Join(dir, experiment.RunsDir, e.Name())); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return "", cleanup, err
			}
		}
	}
	md := filepath.Join(dir, MachinesDir)
	return md, cleanup, writeMachines(p, md)
}

// writeMachines writes the plan's machine files into dir.
func writeMachines(p *Plan, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	names := make([]string, 0, len(p.Corpus.Machines))
	for n := range p.Corpus.Machines {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if err := writeFile(filepath.Join(dir, n), p.Corpus.Machines[n].Data); err != nil {
			return err
		}
	}
	return nil
}

// writeFile writes data to path through a temporary file and a rename, so
// that path holds the old or the new contents whenever the process dies.
func writeFile(path string, data []byte) error {
	if have, err := os.ReadFile(path); err == nil && bytes.Equal(have, data) {
		return nil
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".tmp-"+filepath.Base(path)+"-*")
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
}
