package rtapp

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestParseArgsErrorLine: a syntax error names the file and the line of
// the offending character.
func TestParseArgsErrorLine(t *testing.T) {
	f := filepath.Join(t.TempDir(), "bad.json")
	os.WriteFile(f, []byte("{\n \"tasks\": \n  x\n}\n"), 0o644)
	_, err := ParseArgs([]string{f})
	if err == nil || !strings.HasPrefix(err.Error(), f+":3: ") {
		t.Fatalf("error %v, want %s:3: ...", err, f)
	}
}
