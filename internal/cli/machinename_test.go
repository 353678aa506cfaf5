package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A machine file's name: is the machine's name in every output, not its
// file's name: run's stderr line and --json record, replay's line,
// compare's table and line, the runs compare --out and sweep keep (their
// keys, records and the machine file copied beside them), collect's table
// and report's page.
func TestMachineFileName(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "box-file.yaml")
	os.WriteFile(file, []byte("name: lab-box\ncores_per_llc: 4\n"), 0o644)
	const name = "lab-box"
	bad := func(s string) bool { return strings.Contains(s, "box-file") }

	js := filepath.Join(dir, "run.json")
	_, errOut, code := runMain(t, "run", "--machine", file, "--json", js, "hackbench", "-l", "5", "-g", "1")
	var rec struct{ Machine string }
	b, _ := os.ReadFile(js)
	json.Unmarshal(b, &rec)
	if code != 0 || !strings.HasPrefix(errOut, "schedlab: hackbench on "+name+" (4 CPUs)") || rec.Machine != name {
		t.Errorf("run: exit %d, stderr %q, --json machine %q", code, errOut, rec.Machine)
	}

	_, errOut, code = runMain(t, "replay", "--machine", file, filepath.Join("..", "replay", "testdata", "hackbench-pipe.txt"))
	if code != 0 || !strings.HasPrefix(errOut, "schedlab: replay on "+name+" (4 CPUs)") {
		t.Errorf("replay: exit %d, stderr %q", code, errOut)
	}

	res := filepath.Join(dir, "cmp")
	out, errOut, code := runMain(t, "compare", "--machine", file, "--runs", "2", "--jobs", "1", "--out", res, "hackbench", "-l", "5", "-g", "1")
	if code != 0 || !strings.Contains(out, "Machine       : "+name+" (4 CPUs)") || !strings.Contains(errOut, "schedlab: compare hackbench on "+name+" (4 CPUs)") || bad(out) || bad(errOut) {
		t.Errorf("compare: exit %d, stderr %q\n%s", code, errOut, out)
	}
	exp := filepath.Join(dir, "e.yaml")
	os.WriteFile(exp, []byte("name: e\nmachines: [box-file.yaml]\nruns: 1\nworkloads: [hackbench -l 5 -g 1]\n"), 0o644)
	swept := filepath.Join(dir, "sweep")
	if _, errOut, code := runMain(t, "sweep", exp, "--out", swept, "--jobs", "1"); code != 0 {
		t.Fatalf("sweep: exit %d: %s", code, errOut)
	}
	for _, d := range []string{res, swept} {
		runs, _ := filepath.Glob(filepath.Join(d, "runs", "*.json"))
		if len(runs) == 0 {
			t.Errorf("%s: no runs", d)
		}
		for _, r := range runs {
			b, _ := os.ReadFile(r)
			var rec struct{ Key, Machine string }
			json.Unmarshal(b, &rec)
			if !strings.HasPrefix(filepath.Base(r), name+"__") || rec.Machine != name || !strings.HasPrefix(rec.Key, name+"__") {
				t.Errorf("%s: key %q, machine %q", r, rec.Key, rec.Machine)
			}
		}
		if _, err := os.Stat(filepath.Join(d, "machines", name+".yaml")); err != nil {
			t.Errorf("%s: the machine file is not kept under its name: %v", d, err)
		}
		collected, errOut, code := runMain(t, "collect", d)
		if code != 0 || !strings.Contains(collected, "Machine       : "+name) || bad(collected) || bad(errOut) {
			t.Errorf("collect %s: exit %d, %s\n%s", d, code, errOut, collected)
		}
		html := filepath.Join(dir, filepath.Base(d)+".html")
		if _, errOut, code := runMain(t, "report", d, "-o", html); code != 0 {
			t.Fatalf("report %s: exit %d: %s", d, code, errOut)
		}
		page, _ := os.ReadFile(html)
		if !strings.Contains(string(page), name) || bad(string(page)) {
			t.Errorf("report %s: the page does not name the machine %s only", d, name)
		}
	}
}

// Two different machines that would go by one name in one sweep are
// refused, in one line naming the experiment file's line and both: two
// files with the same name:, a file named after a preset (without name:,
// its file name is its name), a file whose name: is a preset's. The same
// machine listed twice says so. A name unfit for keys and file names is
// an error at its line.
func TestMachineNameClash(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) {
		os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644)
	}
	write("a.yaml", "name: lab\ncores_per_llc: 4\n")
	write("b.yaml", "name: lab\ncores_per_llc: 8\n")
	write("hikey.yaml", "cores_per_llc: 4\n")
	write("mine.yaml", "name: hikey\ncores_per_llc: 2\n")
	write("spaced.yaml", "cores_per_llc: 4\nname: my box\n")
	exp := filepath.Join(dir, "e.yaml")
	for _, tc := range []struct{ machines, want string }{
		{"[a.yaml, b.yaml]", "a.yaml and b.yaml are two machines named lab: give one of them another name (name: in its machine file)"},
		{"[hikey, hikey.yaml]", "hikey and hikey.yaml are two machines named hikey: give one of them another name"},
		{"[mine.yaml, hikey]", "mine.yaml and hikey are two machines named hikey: give one of them another name"},
		{"[a.yaml, ./a.yaml]", "machine lab is listed twice"},
		{"[spaced.yaml]", filepath.Join(dir, "spaced.yaml") + ":2: name \"my box\": a machine's name keys its runs and names their files"},
	} {
		write("e.yaml", "name: e\nruns: 1\nmachines: "+tc.machines+"\nworkloads: [hackbench -l 5 -g 1]\n")
		out, errOut, code := runMain(t, "sweep", exp, "--out", filepath.Join(dir, "r"))
		if code != 2 || out != "" || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, tc.want) || !strings.Contains(errOut, exp+":3: ") {
			t.Errorf("machines %s: exit %d, stderr %q, want %q at %s:3", tc.machines, code, errOut, tc.want, exp)
		}
		if _, err := os.Stat(filepath.Join(dir, "r")); err == nil {
			t.Errorf("machines %s: the refused sweep made its directory", tc.machines)
			os.RemoveAll(filepath.Join(dir, "r"))
		}
	}
	_, errOut, code := runMain(t, "run", "--machine", filepath.Join(dir, "spaced.yaml"), "hackbench")
	if code != 2 || !strings.HasPrefix(errOut, "schedlab: "+filepath.Join(dir, "spaced.yaml")+":2: name \"my box\"") {
		t.Errorf("run on a machine named \"my box\": exit %d, %q", code, errOut)
	}
}
