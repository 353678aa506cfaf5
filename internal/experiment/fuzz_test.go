package experiment

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// oneLine reports whether err is one line that starts with the file name.
func oneLine(err error, name string) bool {
	return !strings.Contains(err.Error(), "\n") && strings.HasPrefix(err.Error(), name+": ")
}

// A run record (runs/KEY.json, read by collect, report and sweep --resume)
// that ParseRecord accepts writes back, as WriteRecord writes it, to a file
// that reads as the same record; a refused one is one error line naming
// the file. The seed is a real run's record, a few KB: minimizing each
// new input of that size takes the fuzzer up to -fuzzminimizetime (60 s
// by default) during which it runs nothing else, so run it with
// -fuzzminimizetime 2s (twice the executions and three times the new
// inputs in 15 s here):
//
//	go test -run xxx -fuzz FuzzParseRecord -fuzztime 15s -fuzzminimizetime 2s ./internal/experiment/
func FuzzParseRecord(f *testing.F) {
	s, _ := Builtin("tg-propagate")
	p, err := Resolve(s, ResolveOptions{})
	if err != nil {
		f.Fatal(err)
	}
	pt := p.Points()[0]
	// A short frames run: 0.3 s, the front app switching every 100 ms.
	p.Workloads[pt.Workload].Args = []string{"-d", "0.3", "-s", "100"}
	p.Workloads[pt.Workload].Param = Param{Index: -1}
	pt.Trace = true
	r, err := Execute(p, &pt, "", nil)
	if err != nil {
		f.Fatal(err)
	}
	data, err := json.MarshalIndent(r, "", " ")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data)
	f.Add([]byte(`{"schema_version": 3, "metrics": {"x": {"value": null, "better": "lower"}}}`))
	f.Add([]byte(`{"schema_version": 2, "metrics": {"x": 1}}`))
	f.Add([]byte(`{"schema_version": 3, "occupancy": {"bin_ns": 1, "cpus": ["AAE="]}}`))
	f.Add([]byte(`{"schema_version": 3, "histograms": [{"name": "latency_us", "scheme": "schbench_plat", "lo": [3, 600], "hi": [3, 601], "value": [3, 601], "count": [2, 1]}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		const name = "runs/k.json"
		r, err := ParseRecord(name, data)
		if err != nil {
			if !oneLine(err, name) {
				t.Fatalf("error %q", err)
			}
			return
		}
		b1, err := json.MarshalIndent(r, "", " ")
		if err != nil {
			t.Fatalf("an accepted record does not write: %v", err)
		}
		r2, err := ParseRecord(name, b1)
		if err != nil {
			t.Fatalf("the written record does not read: %v\n%s", err, b1)
		}
		if b2, _ := json.MarshalIndent(r2, "", " "); !bytes.Equal(b1, b2) {
			t.Fatalf("the record changed on a round trip:\n%s\n%s", b1, b2)
		}
	})
}

// A results directory's experiment.json that parsePlan accepts writes back
// (Plan.JSON) to the same plan with the same points; a refused one is one
// error line naming the file. The plans are kept under 20000 runs (the
// limit is a million), which keeps an execution under a few ms. Its seeds
// are large too (the built-in plans): run it with -fuzzminimizetime 2s,
// as FuzzParseRecord.
func FuzzParsePlan(f *testing.F) {
	defer func(n int) { maxPoints = n }(maxPoints)
	maxPoints = 20000
	for _, s := range Builtins() {
		for _, prof := range append([]string{""}, profileNames(s)...) {
			p, err := Resolve(s, ResolveOptions{Profile: prof, AllowMissing: true})
			if err != nil {
				f.Fatal(err)
			}
			f.Add(p.JSON())
		}
	}
	f.Add([]byte(`{"schema_version": 1, "name": "x", "machines": [{"label": "hikey", "ref": "hikey", "name": "hikey", "nr_cpus": 8}], "kernels": ["v6.19"], "variants": ["tip"], "workloads": [{"name": "h", "tool": "hackbench", "args": ["-g", "1,2"], "param": {"name": "groups", "index": 1, "values": ["1", "2"]}}], "runs": 2, "seed": 1}`))
	// Columns of flags, one on its own kernel.
	s, err := Parse("c.yaml", []byte("machines: [hikey]\nmixed_kernels: true\ncolumns: [\"cfs=--kernel v6.0\", \"nowaw=--feature NO_WA_WEIGHT\"]\nworkloads: [hackbench]\n"))
	if err != nil {
		f.Fatal(err)
	}
	p, err := Resolve(s, ResolveOptions{})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(p.JSON())
	f.Fuzz(func(t *testing.T, data []byte) {
		const name = "r/experiment.json"
		p, err := parsePlan(name, data)
		if err != nil {
			if !oneLine(err, name) {
				t.Fatalf("error %q", err)
			}
			return
		}
		b1 := p.JSON()
		p2, err := parsePlan(name, b1)
		if err != nil {
			t.Fatalf("the written plan does not read: %v\n%s", err, b1)
		}
		if !bytes.Equal(b1, p2.JSON()) || len(p.Points()) != len(p2.Points()) {
			t.Fatalf("the plan changed on a round trip:\n%s\n%s", b1, p2.JSON())
		}
		for i, pt := range p.Points() {
			if pt != p2.Points()[i] {
				t.Fatalf("point %d: %+v, then %+v", i, pt, p2.Points()[i])
			}
		}
	})
}

func profileNames(s *Spec) []string {
	var out []string
	for _, p := range s.Profiles {
		out = append(out, p.Name)
	}
	return out
}

// A plan of more than maxPoints runs is refused at once, before it is
// expanded.
func TestPlanTooLarge(t *testing.T) {
	s, err := Parse("e.yaml", []byte("machines: [hikey]\nruns: 100000\nvariants: [short-task-v3]\nworkloads:\n  - hackbench -g 1,2,3,4,5,6\n"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = Resolve(s, ResolveOptions{})
	if err == nil || !strings.Contains(err.Error(), "more than 1000000 runs (1 machines × 1 kernels × 6 loads × 2 variants × 100000 runs)") {
		t.Fatalf("%v", err)
	}
}
