package golden

import (
	"fmt"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

const importPath = "github.com/schedlab/schedlab/internal/golden"

func TestCheck(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "out.txt")
	*rewrite = true
	Check(t, path, []byte("a\nb\n"))
	*rewrite = false
	if data, err := os.ReadFile(path); err != nil || string(data) != "a\nb\n" {
		t.Fatalf("-rewrite wrote %q, %v", data, err)
	}
	Check(t, path, []byte("a\nb\n"))
	r := &recorder{TB: t}
	Check(r, path, []byte("a\nc\n"))
	Check(r, path+".missing", nil)
	if len(r.errs) != 2 || !strings.Contains(r.errs[0], "out.txt differs from the output") || !strings.Contains(r.errs[1], "go test -rewrite creates it") {
		t.Errorf("a different and a missing file: %q", r.errs)
	}
	for got, want := range map[string]string{
		"a\nc\n":  "line 2:\n got: \"c\\n\"\nwant: \"b\\n\"",
		"a\nb\nc": "line 3:\n got: \"c\"\nwant: (end of file)",
		"a\nb":    "line 2:\n got: \"b\"\nwant: \"b\\n\"",
	} {
		if d := firstDiff(got, "a\nb\n"); d != want {
			t.Errorf("%q: %s, want %s", got, d, want)
		}
	}
}

// recorder is a test that records its errors instead of failing.
type recorder struct {
	testing.TB
	errs []string
}

func (r *recorder) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

// Every package with tests links this package, so that every test binary
// defines -rewrite and go test ./... -rewrite runs.
func TestEveryPackageKnowsRewrite(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatal(err)
	}
	self, _ := filepath.Abs(".")
	checked := 0
	err = filepath.WalkDir(root, func(dir string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		if name := d.Name(); dir != root && (name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
			return filepath.SkipDir
		}
		if dir == self {
			return nil
		}
		tests, _ := filepath.Glob(filepath.Join(dir, "*_test.go"))
		if len(tests) == 0 {
			return nil
		}
		checked++
		for _, f := range tests {
			file, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
			if err != nil {
				return err
			}
			for _, imp := range file.Imports {
				if p, _ := strconv.Unquote(imp.Path.Value); p == importPath {
					return nil
				}
			}
		}
		rel, _ := filepath.Rel(root, dir)
		t.Errorf("no test of ./%s imports %s: go test ./... -rewrite would fail there with \"flag provided but not defined\"; add a rewrite_test.go with a blank import (see ./internal/sched/rewrite_test.go)", rel, importPath)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 10 {
		t.Fatalf("only %d packages with tests under %s", checked, root)
	}
}
