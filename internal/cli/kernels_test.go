package cli

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/schedlab/schedlab/internal/kernels"
)

var update = flag.Bool("update", false, "rewrite docs/kernels.md's generated section")

func runCLI(t *testing.T, args ...string) string {
	t.Helper()
	var out, errb bytes.Buffer
	if code := Main(&out, &errb, args); code != 0 || errb.Len() != 0 {
		t.Fatalf("%v: exit %d, stderr %q", args, code, errb.String())
	}
	return out.String()
}

// `schedlab kernels` lists v6.19 (the default), v6.0 and v5.12.
func TestKernelsList(t *testing.T) {
	lines := strings.Split(strings.TrimRight(runCLI(t, "kernels"), "\n"), "\n")
	want := []string{"NAME CLASS SCHEDSTAT DIFFERENCES", "v6.19 EEVDF 17 (default)", "v6.0 CFS 15", "v5.12 CFS 15"}
	if len(lines) != len(want) {
		t.Fatalf("%d lines, want %d:\n%s", len(lines), len(want), strings.Join(lines, "\n"))
	}
	for i, w := range want {
		if got := strings.Join(strings.Fields(lines[i]), " "); !strings.HasPrefix(got, w) {
			t.Errorf("line %d: %q, want it to start with %q", i, lines[i], w)
		}
	}
}

// featureSection returns the words of the on:, off: and absent: lines of
// the sched_features section of `kernels show`.
func featureSection(t *testing.T, out string) map[string][]string {
	t.Helper()
	_, rest, ok := strings.Cut(out, "\nsched_features")
	if !ok {
		t.Fatalf("no sched_features section:\n%s", out)
	}
	rest, _, _ = strings.Cut(rest, "\n\n")
	m := map[string][]string{}
	key := ""
	for _, line := range strings.Split(rest, "\n")[1:] {
		f := strings.Fields(line)
		if len(f) > 0 && strings.HasSuffix(f[0], ":") {
			key, f = strings.TrimSuffix(f[0], ":"), f[1:]
		}
		m[key] = append(m[key], f...)
	}
	return m
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// `kernels show v5.12` has SIS_PROP on and no SIS_UTIL; `kernels show
// v6.0` SIS_UTIL on and SIS_PROP off; v6.19 SIS_UTIL on and no SIS_PROP
// (features.h of each). Each non-default baseline prints its differences
// with their commits, and v6.19 none.
func TestKernelsShow(t *testing.T) {
	for _, tc := range []struct {
		kernel          string
		on, off, absent []string
	}{
		{kernels.V512, []string{"SIS_PROP", "UTIL_EST_FASTUP"}, []string{"NEXT_BUDDY"}, []string{"SIS_UTIL", "ALT_PERIOD", "BASE_SLICE", "PLACE_LAG"}},
		{kernels.V60, []string{"SIS_UTIL", "ALT_PERIOD", "BASE_SLICE"}, []string{"SIS_PROP", "NEXT_BUDDY"}, []string{"PLACE_LAG", "NI_RANDOM"}},
		{kernels.V619, []string{"SIS_UTIL", "PLACE_LAG", "NI_RANDOM"}, []string{"NEXT_BUDDY"}, []string{"SIS_PROP", "UTIL_EST_FASTUP"}},
	} {
		out := runCLI(t, "kernels", "show", tc.kernel)
		f := featureSection(t, out)
		for key, names := range map[string][]string{"on": tc.on, "off": tc.off, "absent": tc.absent} {
			for _, n := range names {
				if !contains(f[key], n) {
					t.Errorf("%s: %s not %s: %v", tc.kernel, n, key, f)
				}
			}
		}
		b := kernels.Must(tc.kernel)
		diffs := b.Differences()
		if !strings.Contains(out, b.Definition[:40]) {
			t.Errorf("%s: no definition", tc.kernel)
		}
		if len(diffs) == 0 && !strings.Contains(out, "is the reference") {
			t.Errorf("%s: no word on being the reference", tc.kernel)
		}
		for i, d := range diffs {
			if !strings.Contains(out, fmt.Sprintf("\n%2d. %s\n", i+1, d.Name)) {
				t.Errorf("%s: difference %d %s missing", tc.kernel, i+1, d.Name)
			}
			for _, c := range d.Commits {
				if c.ID != "" && !strings.Contains(out, c.ID) {
					t.Errorf("%s %s: commit %s missing", tc.kernel, d.Name, c.ID)
				}
			}
		}
	}
	var out, errb bytes.Buffer
	if code := Main(&out, &errb, []string{"kernels", "show", "v5.19"}); code != 2 || !strings.Contains(errb.String(), `unknown kernel "v5.19" (known: v6.19, v6.0, v5.12)`) {
		t.Errorf("kernels show v5.19: exit %d, %q", code, errb.String())
	}
}

// `schedlab variants` gives each variant's baseline: the short-task
// patches were written against v6.0, Barry Song's and Joel Fernandes'
// patches and Vincent Guittot's v5.13 series against v5.12, and
// no-tg-propagate removes what every baseline has; SIS_NODE and its limit
// were written on the v6.4-rc tip, whose fair class v6.0 models, the
// cluster scan on v6.5-rc1 (v6.0's topology and wakeup, with the patch's
// SD_CLUSTER), the two SIS_UTIL RFCs on v5.17-rc (v6.0 with SIS_PROP on
// and SIS_UTIL off), Barry Song's cluster level on v5.10-rc (v5.12), and
// Libo Chen's in_task() test on the v5.19-rc tip (v6.0).
func TestVariantsBaselines(t *testing.T) {
	want := map[string]string{
		"short-task-rfc": "v6.0", "short-task-v1": "v6.0", "short-task-v2": "v6.0", "short-task-v3": "v6.0",
		"short-task-v4": "v6.0", "short-task-rfc2": "v6.0", "idle-cores-nosmt": "v5.12",
		"blocked-avg-ratelimit": "v5.12", "blocked-load-outside-newidle": "v5.12", "no-tg-propagate": "any (default v6.19)",
		"sis-node": "v6.0", "sis-cluster": "v6.0", "sis-node-limit": "v6.0", "sis-util-v1": "v6.0", "sis-util-v2": "v6.0",
		"cluster-level": "v5.12", "no-sync-irq": "v6.0",
	}
	seen := 0
	for _, line := range strings.Split(runCLI(t, "variants", "--wide"), "\n")[1:] {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		w, ok := want[f[0]]
		if !ok {
			t.Errorf("unexpected variant %s", f[0])
			continue
		}
		seen++
		if got := strings.Join(f[1:1+len(strings.Fields(w))], " "); got != w {
			t.Errorf("%s: baseline %q, want %q", f[0], got, w)
		}
	}
	if seen != len(want) {
		t.Errorf("%d variants listed, want %d", seen, len(want))
	}
}

const (
	docBegin = "<!-- BEGIN GENERATED: go test ./internal/cli -run TestKernelsDoc -update -->\n"
	docEnd   = "<!-- END GENERATED -->"
)

// docs/kernels.md carries `schedlab kernels show --markdown` of every
// baseline between its markers.
func TestKernelsDoc(t *testing.T) {
	var gen strings.Builder
	gen.WriteString(docBegin + "\n")
	for i, b := range kernels.All() {
		if i > 0 {
			gen.WriteString("\n")
		}
		gen.WriteString(runCLI(t, "kernels", "show", "--markdown", b.Name))
	}
	gen.WriteString("\n" + docEnd)
	path := filepath.Join("..", "..", "docs", "kernels.md")
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	i := strings.Index(string(doc), docBegin)
	j := strings.Index(string(doc), docEnd)
	if i < 0 || j < i {
		t.Fatalf("%s has no generated section (%q ... %q)", path, docBegin, docEnd)
	}
	cur := string(doc[i : j+len(docEnd)])
	if cur == gen.String() {
		return
	}
	if *update {
		if err := os.WriteFile(path, []byte(string(doc[:i])+gen.String()+string(doc[j+len(docEnd):])), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("%s's generated section is out of date: go test ./internal/cli -run TestKernelsDoc -update", path)
}
