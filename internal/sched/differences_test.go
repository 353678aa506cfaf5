package sched

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/schedlab/schedlab/internal/kernels"
)

// TestBaselineDifferences checks the documented differences of each
// baseline (kernels.Baseline.Differences) against the code: every setting
// a difference names has another value on v6.19, every setting and
// kernels fact whose default differs from v6.19 is named by a difference,
// and every test a difference names exists. So the list that `schedlab
// kernels show` prints and docs/kernels.md carries cannot drift from
// Baseline and the tests.
func TestBaselineDifferences(t *testing.T) {
	ref := MustBaseline(kernels.V619)
	refFacts := factMap(kernels.Must(kernels.V619))
	hex := regexp.MustCompile(`^[0-9a-f]{12}$`)
	for _, b := range kernels.All() {
		s := MustBaseline(b.Name)
		facts := factMap(&b)
		diffs := b.Differences()
		if (len(diffs) == 0) != (b.Name == kernels.V619) {
			t.Errorf("%s: %d differences from v6.19", b.Name, len(diffs))
		}
		if b.Definition == "" {
			t.Errorf("%s: no definition", b.Name)
		}
		named := map[string]bool{}
		seen := map[string]bool{}
		for _, d := range diffs {
			at := b.Name + " " + d.Name
			if d.Name == "" || seen[d.Name] || d.What == "" {
				t.Errorf("%s: empty or repeated name, or no description", at)
			}
			seen[d.Name] = true
			if len(d.Commits) == 0 {
				t.Errorf("%s: no commit", at)
			}
			for _, c := range d.Commits {
				if (c.ID != "" && !hex.MatchString(c.ID)) || (c.Verified && c.ID == "") || c.Title == "" || !strings.HasPrefix(c.Release, "v") {
					t.Errorf("%s: bad commit %+v", at, c)
				}
			}
			if len(d.Settings) == 0 {
				t.Errorf("%s: names no setting", at)
			}
			for _, n := range d.Settings {
				named[n] = true
				var got, want string
				if f, ok := strings.CutPrefix(n, "kernels."); ok {
					got, want = facts[f], refFacts[f]
					if got == "" {
						t.Errorf("%s: no kernels fact %s", at, f)
					}
				} else {
					var err error
					if got, err = s.Value(n); err != nil {
						t.Errorf("%s: %v", at, err)
					}
					want, _ = ref.Value(n)
				}
				if got == want {
					t.Errorf("%s: %s is %s on both %s and v6.19", at, n, got, b.Name)
				}
			}
			if len(d.Tests) == 0 && d.Note == "" {
				t.Errorf("%s: no test and no note saying why", at)
			}
			for _, tn := range d.Tests {
				if err := testExists(tn); err != nil {
					t.Errorf("%s: %v", at, err)
				}
			}
		}
		for _, n := range SettingNames() {
			got, _ := s.Value(n)
			want, _ := ref.Value(n)
			if got != want && !named[n] {
				t.Errorf("%s: %s is %s (v6.19: %s) but no difference names it", b.Name, n, got, want)
			}
		}
		for f, v := range facts {
			if v != refFacts[f] && !named["kernels."+f] && f != "Name" {
				t.Errorf("%s: kernels fact %s is %s (v6.19: %s) but no difference names it", b.Name, f, v, refFacts[f])
			}
		}
		if b.Name != kernels.V619 && len(b.NotModelled()) == 0 {
			t.Errorf("%s: nothing listed as not modelled", b.Name)
		}
	}
}

func factMap(b *kernels.Baseline) map[string]string {
	m := map[string]string{}
	for _, f := range b.Facts() {
		m[f.Name] = f.Value
	}
	return m
}

// testExists finds a test a Difference names: "pkg.TestX", a test
// function in a package directory named pkg under internal/, or
// "scenario:FILE", a scenario file.
func testExists(name string) error {
	if file, ok := strings.CutPrefix(name, "scenario:"); ok {
		_, err := os.Stat(filepath.Join("..", "scenario", "testdata", "scenarios", file))
		return err
	}
	pkg, fn, ok := strings.Cut(name, ".")
	if !ok || !strings.HasPrefix(fn, "Test") {
		return &os.PathError{Op: "test", Path: name, Err: fs.ErrInvalid}
	}
	found := false
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil || found || d.IsDir() || filepath.Base(filepath.Dir(path)) != pkg || !strings.HasSuffix(path, "_test.go") {
			return err
		}
		src, err := os.ReadFile(path)
		if err == nil && strings.Contains(string(src), "\nfunc "+fn+"(t *testing.T)") {
			found = true
		}
		return err
	})
	if err == nil && !found {
		err = &os.PathError{Op: "test", Path: name, Err: fs.ErrNotExist}
	}
	return err
}
