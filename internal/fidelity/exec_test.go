package fidelity

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/schedlab/schedlab/internal/experiment"
)

func loadTestCorpus(t *testing.T) *Corpus {
	t.Helper()
	c, err := Load(os.DirFS("testdata/corpus"), "testdata/corpus")
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// quickPlan is the synthetic corpus's --quick subset with two seeds: 6
// small runs (messaging load 1, tip and variant; schbench load 2 on the
// machine file).
func quickPlan(t *testing.T) *Plan {
	t.Helper()
	c := loadTestCorpus(t)
	p, err := NewPlan(c, c.Cases, PlanOptions{Quick: true, Seeds: 2})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestPlan(t *testing.T) {
	c := loadTestCorpus(t)
	full, err := NewPlan(c, c.Cases, PlanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// schbench 2 rows × tip; messaging 2 rows × (tip, outside), the
	// unsimulated column not run; tbench 1 row × (tip, outside,
	// no_sis_prop, migcost, eevdf); the mechanism case 1 row × (tip,
	// nowa): 13 points × 5 seeds.
	if len(full.Runs) != 13*DefaultSeeds || full.Seeds != DefaultSeeds || len(full.Cases) != 4 {
		t.Fatalf("%d runs, %d seeds, %d cases", len(full.Runs), full.Seeds, len(full.Cases))
	}
	q := quickPlan(t)
	// The quick subset: messaging load 1 (tip, outside), schbench load
	// 2; tbench has no quick loads and is left out.
	if len(q.Runs) != 3*2 || len(q.Cases) != 2 {
		t.Fatalf("quick: %d runs, %d cases", len(q.Runs), len(q.Cases))
	}
	// A quick run's keys are the full run's first seeds: a results
	// directory serves both.
	keys := map[string]bool{}
	for _, r := range full.Runs {
		keys[r.Key] = true
	}
	for _, r := range q.Runs {
		if !keys[r.Key] {
			t.Errorf("quick run %s is not a run of the full plan", r.Key)
		}
	}
	// Tip runs the baseline with the base of the case's variants (as
	// `schedlab compare` runs its tip; blocked-load-outside-newidle has
	// none on v5.12, whose own paths are its base), the column its
	// variant; the machine file is read from the directory given.
	for _, r := range q.Runs {
		cfg := q.Config(&r, "/m")
		switch {
		case r.Case.ID == "synthetic-box-schbench" && cfg.Machine != "/m/synthetic-box.yaml":
			t.Errorf("machine %s", cfg.Machine)
		case r.Column == 1 && (len(cfg.Variants) != 1 || cfg.Variants[0] != "blocked-load-outside-newidle"):
			t.Errorf("variant column runs %v", cfg.Variants)
		case r.Column == 0 && r.Case.ID == "synthetic-box-schbench" && len(cfg.Variants) != 0:
			t.Errorf("tip without variant columns runs %v", cfg.Variants)
		case r.Column == 0 && r.Case.ID == "synthetic-hikey-messaging" && len(cfg.Variants) != 0:
			t.Errorf("tip runs %v", cfg.Variants)
		}
	}
	if _, err := NewPlan(c, c.Cases, PlanOptions{Seeds: -1}); err == nil {
		t.Error("seeds -1 accepted")
	}
}

// A column is a kernel configuration: tip is the baseline with the
// case-wide settings, then its own; a column without a kernel is tip plus
// its own changes (a variant replacing tip's variant bases); a column with
// a kernel is that kernel with the case-wide settings and its own. Each is
// what `schedlab run` would be given, and runs with tip's seeds.
func TestColumnConfigs(t *testing.T) {
	c := loadTestCorpus(t)
	cases, _ := c.Select("synthetic-hikey-tbench")
	cs := cases[0]
	want := map[string]string{
		"tip":         "--kernel v5.12 --feature NO_WA_BIAS --sysctl model_cost_jitter_pct=5",
		"outside":     "--kernel v5.12 --variant blocked-load-outside-newidle --feature NO_WA_BIAS --sysctl model_cost_jitter_pct=5",
		"no_sis_prop": "--kernel v5.12 --feature NO_WA_BIAS --feature NO_SIS_PROP --sysctl model_cost_jitter_pct=5",
		"migcost":     "--kernel v5.12 --feature NO_WA_BIAS --sysctl model_cost_jitter_pct=5 --sysctl migration_cost_ns=100000",
		"eevdf":       "--kernel v6.19 --sysctl model_cost_jitter_pct=5",
	}
	for i, col := range cs.Columns {
		if !cs.Simulated(i) {
			t.Errorf("column %s is not simulated", col.Name)
		}
		if got := cs.ColumnFlags(i); got != want[col.Name] {
			t.Errorf("column %s runs %q, want %q", col.Name, got, want[col.Name])
		}
	}
	// The settings reach the run's configuration, and so its key; tip
	// and every column share the seeds.
	p, err := NewPlan(c, cases, PlanOptions{Seeds: 2})
	if err != nil {
		t.Fatal(err)
	}
	seeds := map[int][]uint64{}
	for i := range p.Runs {
		r := &p.Runs[i]
		cfg := p.Config(r, "")
		if r.ColumnName() == "migcost" && strings.Join(cfg.Sysctls, " ") != "model_cost_jitter_pct=5 migration_cost_ns=100000" {
			t.Errorf("migcost runs sysctls %v", cfg.Sysctls)
		}
		if r.ColumnName() == "eevdf" && (cfg.Kernel != "v6.19" || len(cfg.Variants)+len(cfg.Features) != 0) {
			t.Errorf("eevdf runs %+v", cfg)
		}
		seeds[r.Column] = append(seeds[r.Column], r.Seed)
	}
	for col, s := range seeds {
		if fmt.Sprint(s) != fmt.Sprint(seeds[0]) {
			t.Errorf("column %d runs seeds %v, tip %v", col, s, seeds[0])
		}
	}
	keys := map[string]bool{}
	for _, r := range p.Runs {
		h := r.Key[strings.LastIndex(r.Key, "__")+2:]
		if keys[h] {
			t.Errorf("run %s shares its configuration hash with another run", r.Key)
		}
		keys[h] = true
	}
}

// An edited case gets new keys: a results directory never serves the old
// runs for it.
func TestKeyChangesWithTheCase(t *testing.T) {
	c := loadTestCorpus(t)
	p1, _ := NewPlan(c, c.Cases, PlanOptions{Quick: true, Seeds: 1})
	cs := *c.Cases[1]
	cs.Simulate.Args = strings.Replace(cs.Simulate.Args, "-l 50", "-l 60", 1)
	p2, _ := NewPlan(c, []*Case{&cs}, PlanOptions{Quick: true, Seeds: 1})
	if p1.Runs[1].Key == p2.Runs[0].Key || !strings.HasPrefix(p2.Runs[0].Key, "synthetic-hikey-messaging__load=1__tip__seed000__") {
		t.Errorf("keys %s and %s", p1.Runs[1].Key, p2.Runs[0].Key)
	}
	mf := *c.Machines["synthetic-box.yaml"]
	mf.Hash = "other"
	c2 := *c
	c2.Machines = map[string]*MachineFile{"synthetic-box.yaml": &mf}
	p3, _ := NewPlan(&c2, c.Cases[:1], PlanOptions{Quick: true, Seeds: 1})
	if p1.Runs[0].Key == p3.Runs[0].Key {
		t.Error("a changed machine file keeps its runs' keys")
	}
	// --full-length runs are other runs: another key, and the flag in
	// every run's configuration.
	p4, _ := NewPlan(c, c.Cases, PlanOptions{Quick: true, Seeds: 1, FullLength: true})
	if p4.Runs[0].Key == p1.Runs[0].Key || !p4.Config(&p4.Runs[0], "").FullLength || p1.Config(&p1.Runs[0], "").FullLength {
		t.Errorf("full-length keys %s and %s", p4.Runs[0].Key, p1.Runs[0].Key)
	}
	// --sysctl: another key, and the setting after the case's own.
	p5, _ := NewPlan(c, c.Cases, PlanOptions{Quick: true, Seeds: 1, Sysctls: []string{"model_kobj_locks=0"}})
	sys := p5.Config(&p5.Runs[0], "").Sysctls
	if p5.Runs[0].Key == p1.Runs[0].Key || len(sys) == 0 || sys[len(sys)-1] != "model_kobj_locks=0" {
		t.Errorf("--sysctl keys %s and %s, sysctls %v", p5.Runs[0].Key, p1.Runs[0].Key, sys)
	}
}

func deterministic(recs []*experiment.Record) []byte {
	var b bytes.Buffer
	for _, r := range recs {
		b.Write(r.Deterministic())
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// Records do not depend on the number of jobs.
func TestExecuteJobs(t *testing.T) {
	p := quickPlan(t)
	one, err := Execute(p, ExecOptions{Jobs: 1})
	if err != nil {
		t.Fatal(err)
	}
	two, err := Execute(p, ExecOptions{Jobs: 3})
	if err != nil {
		t.Fatal(err)
	}
	if one.Executed != len(p.Runs) || !bytes.Equal(deterministic(one.Records), deterministic(two.Records)) {
		t.Error("the records differ between 1 and 3 jobs")
	}
	r := one.Records[0]
	if r.Variant != "tip" || r.Machine != "synthetic-box.yaml" || r.Param.Value != "2" || r.Experiment != "fidelity" {
		t.Errorf("record labels %s %s %s %s", r.Variant, r.Machine, r.Param.Value, r.Experiment)
	}
}

// A rerun in the same results directory runs nothing new and gives the
// same records; a removed record is run again; records of another model
// are refused.
func TestExecuteResume(t *testing.T) {
	p := quickPlan(t)
	dir := t.TempDir()
	first, err := Execute(p, ExecOptions{Dir: dir, Jobs: 2})
	if err != nil {
		t.Fatal(err)
	}
	if first.Executed != len(p.Runs) || first.Reused != 0 {
		t.Fatalf("first: %+v", first)
	}
	if _, err := os.Stat(filepath.Join(dir, MachinesDir, "synthetic-box.yaml")); err != nil {
		t.Errorf("the machine file is not in the directory: %v", err)
	}
	stale := filepath.Join(dir, experiment.RunsDir, ".tmp-"+p.Runs[0].Key+".json-123")
	os.WriteFile(stale, []byte("{"), 0o644)
	second, err := Execute(p, ExecOptions{Dir: dir, Jobs: 2})
	if _, err := os.Stat(stale); err == nil {
		t.Error("a killed run's temporary file is left in runs/")
	}
	if err != nil {
		t.Fatal(err)
	}
	// One rerun per machine (hikey, the machine file) checks the model.
	if second.Executed != 0 || second.Reused != len(p.Runs) || second.Checked != 2 {
		t.Errorf("second: executed %d, reused %d, checked %d", second.Executed, second.Reused, second.Checked)
	}
	if !bytes.Equal(deterministic(first.Records), deterministic(second.Records)) {
		t.Error("reused records differ from the first run's")
	}
	os.Remove(experiment.RecordPath(dir, p.Runs[3].Key))
	third, err := Execute(p, ExecOptions{Dir: dir, Jobs: 2})
	if err != nil || third.Executed != 1 || third.Reused != len(p.Runs)-1 {
		t.Errorf("after removing one record: %+v %v", third, err)
	}
	// Records that the model no longer gives: every stored output
	// changed, as another schedlab would have written them.
	spoil(t, p, dir, func(*Run) bool { return true })
	if _, err := Execute(p, ExecOptions{Dir: dir}); err == nil || !strings.Contains(err.Error(), "holds results of another model") {
		t.Errorf("stale records: %v", err)
	}
	// A record under another run's key is refused.
	b, _ := os.ReadFile(experiment.RecordPath(dir, p.Runs[0].Key))
	os.WriteFile(experiment.RecordPath(dir, p.Runs[1].Key), b, 0o644)
	if _, err := Execute(p, ExecOptions{Dir: dir}); err == nil || !strings.Contains(err.Error(), "expected") {
		t.Errorf("misplaced record: %v", err)
	}
}

func TestExecuteDirErrors(t *testing.T) {
	p := quickPlan(t)
	sweep := t.TempDir()
	os.WriteFile(filepath.Join(sweep, experiment.PlanFile), []byte("{}"), 0o644)
	if _, err := Execute(p, ExecOptions{Dir: sweep}); err == nil || !strings.Contains(err.Error(), "holds a sweep's results") {
		t.Errorf("a sweep's directory: %v", err)
	}
	other := t.TempDir()
	os.MkdirAll(filepath.Join(other, experiment.RunsDir), 0o755)
	os.WriteFile(filepath.Join(other, experiment.RunsDir, "x.json"), []byte("{}"), 0o644)
	if _, err := Execute(p, ExecOptions{Dir: other}); err == nil || !strings.Contains(err.Error(), "not a fidelity results directory") {
		t.Errorf("runs without a marker: %v", err)
	}
}

// STREAM names its metrics before it runs, so a case asking for one it
// does not report fails when the corpus is read, at the metric's line,
// before any simulation.
func TestStreamMetricCheckedUpFront(t *testing.T) {
	data := []byte(`id: synthetic-stream
source: {title: "synthetic test case", url: "https://example.invalid/s", date: "2024", author: "schedlab tests"}
machine: {preset: hikey, config: "synthetic"}
kernel: {baseline: v6.19, published: "synthetic"}
command: "stream"
aggregation: {runs: 1, statistic: single}
metric:
  name: copy_gb_s
  unit: GB/s
  better: higher
simulate: {tool: stream, args: "STREAM_ARRAY_SIZE=10000 NTIMES=2 OMP_NUM_THREADS=2"}
columns: [{name: tip}]
rows: [{load: "", values: {tip: 1}}]
`)
	_, err := Parse("cases/synthetic-stream.yaml", data)
	if err == nil || err.Error() != `cases/synthetic-stream.yaml:8: metric.name "copy_gb_s": stream reports copy_mb_s, scale_mb_s, add_mb_s, triad_mb_s, and counters by their path in 'schedlab run --json' (schedstat.…, balance.…, sim.…), or a ratio A/B of two` {
		t.Errorf("got %v", err)
	}
}

// A directory whose records of one benchmark come from another model is
// refused even when the machine's other benchmark still matches: the
// check reruns the cheapest reused run of each machine and benchmark
// (hikey runs perf-bench-messaging and tbench here; only tbench's records
// are changed).
func TestRecheckPerBenchmark(t *testing.T) {
	c := loadTestCorpus(t)
	p, err := NewPlan(c, c.Cases, PlanOptions{Seeds: 1})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if _, err := Execute(p, ExecOptions{Dir: dir, Jobs: 2}); err != nil {
		t.Fatal(err)
	}
	if spoil(t, p, dir, func(r *Run) bool { return r.Case.Simulate.Tool == "tbench" }) == 0 {
		t.Fatal("the test corpus has no tbench runs")
	}
	if _, err := Execute(p, ExecOptions{Dir: dir}); err == nil || !strings.Contains(err.Error(), "holds results of another model") {
		t.Errorf("tbench's records from another model: %v", err)
	}
}

// spoil changes the stored output of every run of p in dir that which
// picks, as another schedlab would have written it, and returns how many.
func spoil(t *testing.T, p *Plan, dir string, which func(*Run) bool) int {
	t.Helper()
	n := 0
	for i := range p.Runs {
		r := &p.Runs[i]
		if !which(r) {
			continue
		}
		path := experiment.RecordPath(dir, r.Key)
		rec, err := experiment.ReadRecord(path)
		if err != nil {
			t.Fatal(err)
		}
		rec.Output += "x"
		b, _ := json.Marshal(rec)
		os.WriteFile(path, b, 0o644)
		n++
	}
	return n
}

// Two cases whose runs are the same simulation (the mechanism corpus
// reads several figures of one run, one case each) run it once: the
// second case's records are copies with their own keys, equal to what a
// run of their own gives.
func TestSharedRuns(t *testing.T) {
	c := loadTestCorpus(t)
	var msg *Case
	for _, cs := range c.Cases {
		if cs.ID == "synthetic-hikey-messaging" {
			msg = cs
		}
	}
	twin := *msg
	twin.ID = "synthetic-hikey-messaging-twin"
	twin.Metric.Name = "messages"
	p, err := NewPlan(c, []*Case{msg, &twin}, PlanOptions{Quick: true, Seeds: 2})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	out, err := Execute(p, ExecOptions{Jobs: 2, Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if out.Executed != 4 || out.Shared != 4 || len(out.Records) != 8 {
		t.Fatalf("executed %d, shared %d, %d records; want 4, 4, 8", out.Executed, out.Shared, len(out.Records))
	}
	alone, err := NewPlan(c, []*Case{&twin}, PlanOptions{Quick: true, Seeds: 2})
	if err != nil {
		t.Fatal(err)
	}
	own, err := Execute(alone, ExecOptions{Jobs: 1})
	if err != nil {
		t.Fatal(err)
	}
	for i, rec := range own.Records {
		shared := out.Records[4+i]
		if shared.Key != rec.Key || shared.Key != p.Runs[4+i].Key || !bytes.Equal(shared.Deterministic(), rec.Deterministic()) || shared.Variant != rec.Variant {
			t.Errorf("run %d: shared record %s differs from its own run's %s", i, shared.Key, rec.Key)
		}
	}
	// A rerun reads them all back.
	again, err := Execute(p, ExecOptions{Jobs: 1, Dir: dir})
	if err != nil || again.Reused != 8 || again.Executed != 0 {
		t.Fatalf("rerun: %+v, %v", again, err)
	}
}
