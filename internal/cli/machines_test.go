package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/schedlab/schedlab/internal/topology"
)

func runMachinesCLI(args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = Main(&out, &errb, args)
	return code, out.String(), errb.String()
}

func TestMachinesList(t *testing.T) {
	code, out, errs := runMachinesCLI("machines")
	if code != 0 || errs != "" {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	for _, p := range topology.Presets() {
		found := false
		for _, line := range strings.Split(out, "\n") {
			f := strings.Fields(line)
			if len(f) >= 3 && f[0] == p.Name && f[1] == itoaCLI(p.NrCPUs) {
				found = true
			}
		}
		if !found {
			t.Errorf("preset %s (%d CPUs) not listed:\n%s", p.Name, p.NrCPUs, out)
		}
	}
	if !strings.Contains(out, "\nhost ") {
		t.Errorf("host not listed:\n%s", out)
	}
}

func itoaCLI(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// Reference: topology.c:sched_domain_debug_one layout, v6.19.
func TestMachineShowText(t *testing.T) {
	code, out, errs := runMachinesCLI("machine", "show", "zen3-2s-nps1")
	if code != 0 || errs != "" {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	for _, want := range []string{
		"machine zen3-2s-nps1:",
		" domain-0: span=0,128 level=SMT\n",
		"  domain-1: span=0-7,128-135 level=MC\n",
		"   domain-2: span=0-63,128-191 level=PKG\n",
		"    domain-3: span=0-255 level=NUMA\n",
		"CPU255 attaching sched-domain(s):",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	code, out, _ = runMachinesCLI("machine", "show", "zen3-2s-nps1", "--kernel", "v6.0", "--cpu", "128")
	if code != 0 || !strings.Contains(out, "level=DIE") || !strings.Contains(out, "SD_SHARE_PKG_RESOURCES") ||
		strings.Count(out, "attaching sched-domain") != 1 || !strings.Contains(out, "CPU128 attaching") {
		t.Errorf("--kernel v6.0 --cpu 128: exit %d\n%s", code, out)
	}
}

func TestMachineShowJSON(t *testing.T) {
	code, out, errs := runMachinesCLI("machine", "show", "kunpeng920-96", "--json", "--cpu", "0,24")
	if code != 0 || errs != "" {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	var doc struct {
		Machine string `json:"machine"`
		Kernel  string `json:"kernel"`
		CPUs    []struct {
			CPU     int `json:"cpu"`
			Domains []struct {
				Name   string   `json:"name"`
				Span   string   `json:"span"`
				Flags  []string `json:"flags"`
				Groups []string `json:"groups"`
			} `json:"domains"`
		} `json:"cpus"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if doc.Machine != "kunpeng920-96" || doc.Kernel != "v6.19" || len(doc.CPUs) != 2 || doc.CPUs[1].CPU != 24 {
		t.Fatalf("header %+v", doc)
	}
	d := doc.CPUs[0].Domains
	if len(d) != 5 || d[0].Name != "CLS" || d[0].Span != "0-3" || d[1].Span != "0-23" || d[4].Span != "0-95" ||
		len(d[1].Groups) != 6 || d[1].Groups[1] != "4-7" || d[0].Flags[len(d[0].Flags)-2] != "SD_SHARE_LLC" {
		t.Errorf("domains of cpu0: %+v", d)
	}
}

func TestMachineShowFile(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "box.yaml")
	os.WriteFile(good, []byte("name: box\ncores_per_llc: 4\nthreads_per_core: 2\n"), 0o644)
	code, out, errs := runMachinesCLI("machine", "show", good)
	if code != 0 || !strings.Contains(out, "span=0,4 level=SMT") {
		t.Errorf("exit %d stderr %q\n%s", code, errs, out)
	}
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(bad, []byte("name: bad\ncores_per_llc: 4\nthreads_per_core: 3\n"), 0o644)
	code, out, errs = runMachinesCLI("machine", "show", bad)
	if want := "schedlab: " + bad + ":3: threads_per_core must be 1, 2, 4 or 8\n"; code != 2 || errs != want || out != "" {
		t.Errorf("exit %d stderr %q, want 2 %q", code, errs, want)
	}
}

func TestMachineShowErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"machine", "show", "nosuch"}, "schedlab: unknown machine \"nosuch\" (see 'schedlab machines')\n"},
		{[]string{"machine", "show", "hikey", "--kernel", "v4.19"}, "schedlab: unknown kernel \"v4.19\" (known: v6.19, v6.0, v5.12)\n"},
		{[]string{"machine", "show", "hikey", "--cpu", "9"}, "schedlab: --cpu: CPU 9 out of range in cpu list \"9\" (machine has 8 CPUs)\n"},
	} {
		code, out, errs := runMachinesCLI(tc.args...)
		if code != 2 || errs != tc.want || out != "" {
			t.Errorf("%v: exit %d stdout %q stderr %q, want 2 and %q", tc.args, code, out, errs, tc.want)
		}
	}
}
