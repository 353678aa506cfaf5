// Package golden compares what a test produces with a golden file, and
// owns the one flag that rewrites them: -rewrite. Only tests import it.
//
// Every package with tests imports it (a blank import where no golden
// file is compared), so that the flag is defined in every test binary and
//
//	go test ./... -rewrite
//
// rewrites every golden file and scenario expectation at once; without
// that, go test would stop at the first package that does not know the
// flag. TestEveryPackageKnowsRewrite keeps it so.
package golden

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

var rewrite = flag.Bool("rewrite", false, "rewrite golden files and scenario expectations with what the code produces now (review the diff!)")

// Rewriting reports whether the tests run with -rewrite, for a test that
// rewrites its expectations itself (the scenario files).
func Rewriting() bool { return *rewrite }

// Check compares got with the golden file at path (relative to the
// package's directory, where go test runs). Under -rewrite it writes got
// to path instead, creating the directory. A missing or different file
// fails the test, naming the first line that differs.
func Check(t testing.TB, path string, got []byte) {
	t.Helper()
	if *rewrite {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Errorf("%v (go test -rewrite creates it)", err)
		return
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the output (go test -rewrite rewrites it; review the diff): %s", path, firstDiff(string(got), string(want)))
	}
}

// firstDiff says where got and want first differ.
func firstDiff(got, want string) string {
	gl, wl := strings.SplitAfter(got, "\n"), strings.SplitAfter(want, "\n")
	for i := 0; i < len(gl) || i < len(wl); i++ {
		var g, w string
		if i < len(gl) {
			g = gl[i]
		}
		if i < len(wl) {
			w = wl[i]
		}
		if g != w {
			return "line " + strconv.Itoa(i+1) + ":\n got: " + quote(g) + "\nwant: " + quote(w)
		}
	}
	return "they differ"
}

func quote(s string) string {
	if s == "" {
		return "(end of file)"
	}
	return strconv.Quote(s)
}
