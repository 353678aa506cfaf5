package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/schedlab/schedlab/internal/schedstat"
)

// TestRunSchedstatEvery checks --schedstat-every against what it promises:
//   - The periodic snapshots do not change the run. stdout and
//     schedstat-after.txt are byte-identical to a run without them: the
//     snapshots ride on the run's 1 ms slices, which do not reorder events.
//   - Snapshot N is taken once N periods of simulated time have passed
//     since the workload's start. A run of S ns with period P therefore
//     writes exactly floor(S/P) of them, numbered 1 to floor(S/P), and
//     nothing else. The period here is 2 ms, two slices, so a snapshot
//     taken at every slice would show.
//   - Each snapshot reads the same counters later. Every counter between
//     consecutive snapshots is non-negative (schedstat.Diff refuses one
//     that went down), and the timestamps (jiffies) do not go back.
func TestRunSchedstatEvery(t *testing.T) {
	dir := t.TempDir()
	args := []string{"hackbench", "-p", "-T", "-l", "10", "-g", "1"}
	runWith := func(name string, extra ...string) (string, string) {
		ss := filepath.Join(dir, name)
		js := filepath.Join(dir, name+".json")
		a := append([]string{"run", "--machine", "hikey", "--schedstat", ss, "--json", js}, extra...)
		out, stderr, code := run(append(a, args...)...)
		if code != 0 {
			t.Fatalf("%v: exit %d\n%s%s", a, code, out, stderr)
		}
		return out, ss
	}
	plainOut, plain := runWith("plain")
	everyOut, every := runWith("every", "--schedstat-every", "2ms")
	if plainOut != everyOut {
		t.Errorf("stdout differs with --schedstat-every:\n%s\n---\n%s", plainOut, everyOut)
	}
	a, _ := os.ReadFile(filepath.Join(plain, SchedstatAfter))
	b, _ := os.ReadFile(filepath.Join(every, SchedstatAfter))
	if len(a) == 0 || string(a) != string(b) {
		t.Errorf("schedstat-after.txt differs with --schedstat-every")
	}

	var rec struct {
		Sim struct {
			SimulatedNs int64 `json:"simulated_ns"`
		} `json:"sim"`
	}
	data, err := os.ReadFile(every + ".json")
	if err != nil || json.Unmarshal(data, &rec) != nil {
		t.Fatalf("json: %v", err)
	}
	want := int(rec.Sim.SimulatedNs / 2_000_000)
	if want < 2 {
		t.Fatalf("the run simulated %d ns; the test needs at least two periods", rec.Sim.SimulatedNs)
	}
	names := []string{SchedstatBefore}
	for n := 1; n <= want; n++ {
		names = append(names, PeriodicSnapshot(n))
	}
	names = append(names, SchedstatAfter)
	ents, err := os.ReadDir(every)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range ents {
		got = append(got, e.Name())
	}
	sorted := slices.Sorted(slices.Values(names)) // ReadDir's order
	if !slices.Equal(got, sorted) {
		t.Errorf("%s holds %v; want %v (%d periods of 2 ms in %d ns)", every, got, names, want, rec.Sim.SimulatedNs)
	}
	var prev *schedstat.Snapshot
	for _, name := range names {
		f, err := os.Open(filepath.Join(every, name))
		if err != nil {
			t.Fatalf("%s: %v (want %d periodic snapshots for %d ns)", name, err, want, rec.Sim.SimulatedNs)
		}
		s, err := schedstat.Parse(f)
		f.Close()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if prev != nil {
			if _, err := schedstat.Diff(prev, s); err != nil {
				t.Errorf("%s against the snapshot before it: %v", name, err)
			}
		}
		prev = s
	}

	// Bad input: one line, exit 2, before anything runs.
	for _, tc := range []struct {
		flags []string
		want  string
	}{
		{[]string{"--schedstat-every", "1ms"}, "--schedstat-every needs --schedstat DIR"},
		{[]string{"--schedstat", filepath.Join(dir, "x"), "--schedstat-every", "500us"}, "at least 1ms"},
		{[]string{"--schedstat", filepath.Join(dir, "x"), "--schedstat-every", "soon"}, "--schedstat-every: bad duration"},
	} {
		a := append(append([]string{"run", "--machine", "hikey"}, tc.flags...), args...)
		out, stderr, code := run(a...)
		if code != 2 || out != "" || !strings.Contains(stderr, tc.want) || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 and one line with %q", tc.flags, code, out, stderr, tc.want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "x")); err == nil {
		t.Errorf("a refused run created its --schedstat directory")
	}
}
