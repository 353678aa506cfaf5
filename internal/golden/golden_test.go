package golden

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

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
