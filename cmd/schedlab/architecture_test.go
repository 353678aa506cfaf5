package main

import (
	"bufio"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	// Every test binary knows -rewrite (package golden's doc).
	_ "github.com/schedlab/schedlab/internal/golden"
)

const module = "github.com/schedlab/schedlab/"

// TestArchitecture holds ARCHITECTURE.md's table of packages against the
// code: the table lists every package of the module; a package imports
// only packages of rows above its own; a package of the "tests only" layer
// is imported by no code but tests.
func TestArchitecture(t *testing.T) {
	root := filepath.Join("..", "..")
	rows, testOnly := architectureTable(t, filepath.Join(root, "ARCHITECTURE.md"))
	code := packageImports(t, root)
	for pkg := range rows {
		if _, ok := code[pkg]; !ok {
			t.Errorf("ARCHITECTURE.md lists %s, which has no Go code", pkg)
		}
	}
	for pkg, imports := range code {
		row, ok := rows[pkg]
		if !ok {
			t.Errorf("ARCHITECTURE.md does not list %s: give it a row in its layer", pkg)
			continue
		}
		for _, imp := range imports {
			switch r, ok := rows[imp]; {
			case !ok:
				// Reported as unlisted above.
			case testOnly[imp]:
				t.Errorf("%s imports %s, which only tests may import", pkg, imp)
			case r >= row:
				t.Errorf("%s imports %s, which ARCHITECTURE.md lists %s it: move one of them, or the import", pkg, imp, map[bool]string{true: "beside", false: "below"}[r == row])
			}
		}
	}
}

var backquoted = regexp.MustCompile("`([^`]+)`")

// architectureTable reads the table's rows: each package's row index, and
// the packages of the "tests only" layer.
func architectureTable(t *testing.T, path string) (map[string]int, map[string]bool) {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, testOnly := map[string]int{}, map[string]bool{}
	in, layer, n := false, "", 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "| layer | package | owns |":
			in = true
			continue
		case !in || strings.HasPrefix(line, "|---"):
			continue
		case !strings.HasPrefix(line, "|"):
			if len(rows) > 0 {
				in = false
			}
			continue
		}
		cells := strings.Split(line, "|")
		if len(cells) < 4 {
			t.Fatalf("%s: row %q has no package cell", path, line)
		}
		if l := strings.TrimSpace(cells[1]); l != "" {
			layer = l
		}
		n++
		for _, m := range backquoted.FindAllStringSubmatch(cells[2], -1) {
			if _, dup := rows[m[1]]; dup {
				t.Errorf("%s lists %s twice", path, m[1])
			}
			rows[m[1]] = n
			testOnly[m[1]] = layer == "tests only"
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(rows) < 10 {
		t.Fatalf("%s: only %d packages in the table", path, len(rows))
	}
	return rows, testOnly
}

// packageImports lists the module's packages (directories with Go files
// that are not tests, paths relative to the module) and the module
// packages each imports outside its tests, under any build tags.
func packageImports(t *testing.T, root string) map[string][]string {
	out := map[string][]string{}
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		rel, err := filepath.Rel(root, filepath.Dir(path))
		if err != nil {
			return err
		}
		pkg := filepath.ToSlash(rel)
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		imports := out[pkg]
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if q, ok := strings.CutPrefix(p, module); ok && !slices.Contains(imports, q) {
				imports = append(imports, q)
			}
		}
		out[pkg] = imports
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
