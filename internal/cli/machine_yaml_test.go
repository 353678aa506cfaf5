package cli

import (
	"encoding/json"
	"github.com/schedlab/schedlab/internal/kernels"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/schedlab/schedlab/internal/costmodel"
	"github.com/schedlab/schedlab/internal/topology"
)

// showJSON runs machine show --json and returns the document without its
// source (a preset's is "preset", a file's its path) and its name.
func showJSON(t *testing.T, machine, kernel string) (doc map[string]any, name string) {
	t.Helper()
	code, out, errs := runMachinesCLI("machine", "show", "--json", "--kernel", kernel, machine)
	if code != 0 || errs != "" {
		t.Fatalf("machine show --json %s: exit %d, stderr %q", machine, code, errs)
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("machine show --json %s: %v", machine, err)
	}
	name, _ = doc["machine"].(string)
	delete(doc, "machine")
	delete(doc, "source")
	return doc, name
}

// For every preset P, machine show --yaml P > p.yaml, then machine show
// --json p.yaml equals machine show --json P apart from the source (and
// the name, which is kept anyway) in both baselines, and the file gives the
// preset's cost parameters and idle states (issue 11).
func TestMachineShowYAMLRoundTrip(t *testing.T) {
	presets := topology.Presets()
	if len(presets) < 7 {
		t.Fatalf("only %d presets", len(presets))
	}
	dir := t.TempDir()
	for _, p := range presets {
		t.Run(p.Name, func(t *testing.T) {
			code, out, errs := runMachinesCLI("machine", "show", "--yaml", p.Name)
			if code != 0 || errs != "" {
				t.Fatalf("exit %d, stderr %q", code, errs)
			}
			file := filepath.Join(dir, p.Name+".yaml")
			if err := os.WriteFile(file, []byte(out), 0o644); err != nil {
				t.Fatal(err)
			}
			for _, kernel := range kernels.Names() {
				want, wantName := showJSON(t, p.Name, kernel)
				got, gotName := showJSON(t, file, kernel)
				if gotName != wantName {
					t.Errorf("name %q, want %q", gotName, wantName)
				}
				if !reflect.DeepEqual(got, want) {
					g, _ := json.MarshalIndent(got, "", " ")
					w, _ := json.MarshalIndent(want, "", " ")
					t.Errorf("--kernel %s: machine show --json of the file differs from the preset:\n%s", kernel, firstLineDiff(string(g), string(w)))
				}
			}

			preset, err := topology.Load(p.Name)
			if err != nil {
				t.Fatal(err)
			}
			loaded, err := topology.Load(file)
			if err != nil {
				t.Fatal(err)
			}
			// machine show --json does not print costs: compare them.
			pc, err := costmodel.For(preset)
			if err != nil {
				t.Fatal(err)
			}
			fc, err := costmodel.For(loaded)
			if err != nil {
				t.Fatal(err)
			}
			for _, q := range costmodel.All() {
				if g, w := fc.Get(q.Key), pc.Get(q.Key); g != w {
					t.Errorf("cost %s = %v from the file, %v in the preset", q.Key, g, w)
				}
				// The file keeps each value's source, and adds its line.
				if !strings.HasPrefix(fc.Source(q.Key), pc.Source(q.Key)+" ("+file+":") {
					t.Errorf("cost %s: source %q, want the preset's %q and the file's line", q.Key, fc.Source(q.Key), pc.Source(q.Key))
				}
			}
			for c := range preset.CPUs {
				cpu := preset.CPUs[c].CPU
				if g, w := loaded.IdleStatesOf(cpu), preset.IdleStatesOf(cpu); !reflect.DeepEqual(g, w) {
					t.Errorf("cpu %d: idle states %+v, want %+v", c, g, w)
				}
			}
			if loaded.ReclaimDistance != preset.ReclaimDistance {
				t.Errorf("reclaim_distance %d, want %d", loaded.ReclaimDistance, preset.ReclaimDistance)
			}
		})
	}
}

func firstLineDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := range min(len(al), len(bl)) {
		if al[i] != bl[i] {
			return "line " + itoaCLI(i+1) + ":\n got " + al[i] + "\nwant " + bl[i]
		}
	}
	return "lengths differ"
}

// A machine file's own costs come out resolved: its base's defaults with its
// settings applied, every parameter explicit; written again, the same.
func TestMachineShowYAMLFileCosts(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "box.yaml")
	os.WriteFile(src, []byte("name: box\ncores_per_llc: 4\ncosts:\n  base: hikey\n  syscall_ns: {value: 123, source: measured}\n"), 0o644)
	code, out, errs := runMachinesCLI("machine", "show", "--yaml", src)
	if code != 0 || errs != "" {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	if !strings.Contains(out, "\n  base: hikey\n") || !strings.Contains(out, "\n  syscall_ns: {value: 123, source: \"measured ("+src+":5)\"}\n") {
		t.Errorf("costs section:\n%s", out)
	}
	copyFile := filepath.Join(dir, "copy.yaml")
	os.WriteFile(copyFile, []byte(out), 0o644)
	a, _ := topology.Load(src)
	b, err := topology.Load(copyFile)
	if err != nil {
		t.Fatal(err)
	}
	pa, _ := costmodel.For(a)
	pb, _ := costmodel.For(b)
	hikey, _ := costmodel.Defaults("hikey")
	for _, q := range costmodel.All() {
		if pa.Get(q.Key) != pb.Get(q.Key) {
			t.Errorf("%s: %v in the file, %v in its copy", q.Key, pa.Get(q.Key), pb.Get(q.Key))
		}
		if want := hikey.Get(q.Key); q.Key != "syscall_ns" && pb.Get(q.Key) != want {
			t.Errorf("%s: %v, want hikey's %v", q.Key, pb.Get(q.Key), want)
		}
	}
	if pb.Get("syscall_ns") != 123 {
		t.Errorf("syscall_ns %v", pb.Get("syscall_ns"))
	}
}

func TestMachineShowYAMLErrors(t *testing.T) {
	dir := t.TempDir()
	misplaced := filepath.Join(dir, "m.yaml")
	os.WriteFile(misplaced, []byte("name: m\ncores_per_llc: 4\ncosts:\n  reclaim_distance: 32\n"), 0o644)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"machine", "show", "--yaml", "--json", "hikey"}, "schedlab: --yaml writes the whole machine, for every kernel: drop --json\n"},
		{[]string{"machine", "show", "--yaml", "--cpu", "0", "hikey"}, "schedlab: --yaml writes the whole machine, for every kernel: drop --cpu\n"},
		{[]string{"machine", "show", "--yaml", "--kernel", "v6.0", "hikey"}, "schedlab: --yaml writes the whole machine, for every kernel: drop --kernel\n"},
		{[]string{"machine", "show", "--yaml", "nosuch"}, "schedlab: unknown machine \"nosuch\" (see 'schedlab machines')\n"},
		// A machine-file key put into the costs section is not a cost.
		{[]string{"machine", "show", "--yaml", misplaced}, "schedlab: " + misplaced + ":4: unknown cost parameter \"reclaim_distance\" ('schedlab costs' lists them all)\n"},
	} {
		code, out, errs := runMachinesCLI(tc.args...)
		if code != 2 || errs != tc.want || out != "" {
			t.Errorf("%v: exit %d stdout %q stderr %q, want 2 and %q", tc.args, code, out, errs, tc.want)
		}
	}
}
