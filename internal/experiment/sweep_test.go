package experiment

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// tinyPlan is a sweep small enough for the default test suite: 16 runs on
// the 8-CPU HiKey.
func tinyPlan(t *testing.T) *Plan {
	t.Helper()
	s, err := Parse("tiny.yaml", []byte(`name: tiny
machines: [hikey]
variants: [short-task-v3]
runs: 2
seed: 3
trace: true
workloads:
  - hackbench -p -T -l 20 -g 1,2
  - schbench -m 1 -t 2,3 -r 1
`))
	if err != nil {
		t.Fatal(err)
	}
	p, err := Resolve(s, ResolveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func deterministic(recs []*Record) []string {
	out := make([]string, len(recs))
	for i, r := range recs {
		if r != nil {
			out[i] = string(r.Deterministic())
		}
	}
	return out
}

func equalRecords(t *testing.T, what string, a, b []*Record) {
	t.Helper()
	da, db := deterministic(a), deterministic(b)
	if len(da) != len(db) {
		t.Fatalf("%s: %d vs %d records", what, len(da), len(db))
	}
	for i := range da {
		if da[i] != db[i] {
			t.Fatalf("%s: record %d differs:\n%s\n%s", what, i, da[i], db[i])
		}
	}
}

// The records of a sweep do not depend on the number of workers, and a
// sweep into a directory gives the same records as one in memory.
func TestSweepParallelEqualsSerial(t *testing.T) {
	p := tinyPlan(t)
	serial, err := Sweep(p, SweepOptions{Jobs: 1})
	if err != nil {
		t.Fatal(err)
	}
	parallel, err := Sweep(p, SweepOptions{Jobs: 4})
	if err != nil {
		t.Fatal(err)
	}
	equalRecords(t, "jobs 1 vs 4", serial, parallel)
	for i, r := range serial {
		pt := &p.Points()[i]
		if err := p.Check(pt, r); err != nil {
			t.Fatalf("%s: %v", pt.Key, err)
		}
		if (r.Occupancy != nil) != (pt.Run == 0) {
			t.Errorf("%s: occupancy %v", pt.Key, r.Occupancy != nil)
		}
	}
	dir := t.TempDir()
	if err := PrepareDir(dir, p, false); err != nil {
		t.Fatal(err)
	}
	if _, err := Sweep(p, SweepOptions{Dir: dir, Jobs: 2}); err != nil {
		t.Fatal(err)
	}
	res, err := ReadResults(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Complete() || len(res.Temps) > 0 || len(res.Extra) > 0 {
		t.Fatalf("missing %v temps %v extra %v", res.Missing, res.Temps, res.Extra)
	}
	equalRecords(t, "directory vs memory", serial, res.Records)

	// Resume: lose three runs, leave a stale temporary file of one of
	// them, and a record of another shard's temporary file.
	for _, i := range []int{1, 5, 9} {
		if err := os.Remove(RecordPath(dir, p.Points()[i].Key)); err != nil {
			t.Fatal(err)
		}
	}
	stale := filepath.Join(dir, RunsDir, tmpPrefix+p.Points()[5].Key+".json-123")
	other := filepath.Join(dir, RunsDir, tmpPrefix+"someone-else.json-456")
	for _, f := range []string{stale, other} {
		if err := os.WriteFile(f, []byte("{partial"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := PrepareDir(dir, p, false); err == nil || !strings.Contains(err.Error(), "--resume") {
		t.Fatalf("PrepareDir without resume: %v", err)
	}
	if err := PrepareDir(dir, p, true); err != nil {
		t.Fatal(err)
	}
	var done int
	recs, err := Sweep(p, SweepOptions{Dir: dir, Jobs: 2, Progress: func(pr Progress) { done = pr.Done }})
	if err != nil {
		t.Fatal(err)
	}
	if done != 3 {
		t.Errorf("resume ran %d runs, want 3", done)
	}
	equalRecords(t, "resumed", serial, recs)
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("stale temporary file left: %v", err)
	}
	if _, err := os.Stat(other); err != nil {
		t.Errorf("another shard's temporary file removed: %v", err)
	}

	// A different experiment may not reuse the directory.
	p2 := tinyPlan(t)
	p2.Runs = 3
	if err := p2.expand(); err != nil {
		t.Fatal(err)
	}
	if err := PrepareDir(dir, p2, true); err == nil || !strings.Contains(err.Error(), "planned differently") {
		t.Errorf("different plan: %v", err)
	}

	// The plan reads back from the directory.
	back, err := LoadPlan(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(back.JSON(), p.JSON()) || len(back.Points()) != len(p.Points()) {
		t.Error("plan does not round-trip")
	}
}

// Shards of a sweep into one directory add up to the whole sweep.
func TestSweepShards(t *testing.T) {
	p := tinyPlan(t)
	dir := t.TempDir()
	if err := PrepareDir(dir, p, true); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		if _, err := Sweep(p, SweepOptions{Dir: dir, Jobs: 1, Shard: i, Shards: 3}); err != nil {
			t.Fatal(err)
		}
		res, err := ReadResults(dir)
		if err != nil {
			t.Fatal(err)
		}
		if i < 2 && res.Complete() {
			t.Fatalf("complete after shard %d", i)
		}
	}
	res, err := ReadResults(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Complete() {
		t.Fatalf("missing %v", res.Missing)
	}
	whole, err := Sweep(p, SweepOptions{Jobs: 2})
	if err != nil {
		t.Fatal(err)
	}
	equalRecords(t, "shards vs whole", whole, res.Records)
}

// idle-cores-nosmt runs on the kunpeng920-96 preset confined to node 0
// (cpus: 0-23), as the evaluation pinned hackbench: the plan carries the
// list into the results directory, and a run of the plan keeps its tasks
// on the listed CPUs. (Unconfined, this hackbench stays on node 0 anyway,
// so the run is confined to node 2 instead, where it would never go.)
func TestBuiltinPinned(t *testing.T) {
	s, ok := Builtin("idle-cores-nosmt")
	if !ok {
		t.Fatal("no idle-cores-nosmt")
	}
	p, err := Resolve(s, ResolveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if m := p.Machines[0]; len(p.Machines) != 1 || m.Label != "kunpeng920-96" || m.File || m.NrCPUs != 96 || p.CPUs != "0-23" {
		t.Fatalf("machines %+v, cpus %q", p.Machines, p.CPUs)
	}
	dir := t.TempDir()
	if err := PrepareDir(dir, p, false); err != nil {
		t.Fatal(err)
	}
	back, err := LoadPlan(dir)
	if err != nil {
		t.Fatal(err)
	}
	if back.CPUs != "0-23" {
		t.Fatalf("experiment.json has cpus %q", back.CPUs)
	}
	pt := back.Points()[0]
	back.Workloads[0].Args = []string{"-p", "-T", "-l", "5", "-g", "2"} // a tiny run
	back.CPUs = "48-71"
	r, err := Execute(back, &pt, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.NrCPUs != 96 || r.Options == nil || r.Options.CPUs != "48-71" || r.Occupancy == nil {
		t.Fatalf("record machine %s %d CPUs, options %+v", r.Machine, r.NrCPUs, r.Options)
	}
	inside := 0
	for cpu, bins := range r.Occupancy.CPUs {
		busy := false
		for _, b := range bins {
			busy = busy || b > 0
		}
		switch {
		case busy && (cpu < 48 || cpu > 71):
			t.Errorf("cpu%d, outside cpus 48-71, ran a task", cpu)
		case busy:
			inside++
		}
	}
	if inside == 0 {
		t.Error("no CPU ran a task")
	}
}

// A plan's cpus: must fit every machine, at the file's line.
func TestPlanCPUsOutOfRange(t *testing.T) {
	s, err := Parse("e.yaml", []byte("machines: [hikey]\ncpus: 4-11\nworkloads:\n  - hackbench -g 1,2\n"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = Resolve(s, ResolveOptions{})
	if err == nil || !strings.HasPrefix(err.Error(), "e.yaml:2: cpus 4-11 on hikey (8 CPUs): ") {
		t.Fatalf("%v", err)
	}
}

// A resumed sweep runs again, per machine and workload, the stored run with
// the fewest events and refuses a directory whose records another model
// made: here every hackbench record's output is not what the model prints
// (as after a change to the workload), so the resume names one of them
// and runs nothing; schbench's records alone pass.
func TestSweepResumeRechecks(t *testing.T) {
	p := tinyPlan(t)
	dir := t.TempDir()
	if err := PrepareDir(dir, p, false); err != nil {
		t.Fatal(err)
	}
	if _, err := Sweep(p, SweepOptions{Dir: dir, Jobs: 2}); err != nil {
		t.Fatal(err)
	}
	// One schbench run lost: the resume runs it after checking.
	var lost string
	for _, pt := range p.Points() {
		if strings.HasPrefix(p.Workloads[pt.Workload].Tool, "schbench") {
			lost = RecordPath(dir, pt.Key)
			break
		}
	}
	if err := os.Remove(lost); err != nil {
		t.Fatal(err)
	}
	if _, err := Sweep(p, SweepOptions{Dir: dir, Jobs: 2}); err != nil {
		t.Fatalf("resume of an untouched directory: %v", err)
	}
	for _, pt := range p.Points() {
		if p.Workloads[pt.Workload].Tool != "hackbench" {
			continue
		}
		r, err := ReadRecord(RecordPath(dir, pt.Key))
		if err != nil {
			t.Fatal(err)
		}
		r.Output += "another model\n"
		if err := WriteRecord(dir, r); err != nil {
			t.Fatal(err)
		}
	}
	_, err := Sweep(p, SweepOptions{Dir: dir, Jobs: 2})
	if err == nil || !strings.Contains(err.Error(), dir+" holds runs of another model: ") || !strings.Contains(err.Error(), "hackbench") {
		t.Fatalf("resume over another model's hackbench runs: %v", err)
	}
}
