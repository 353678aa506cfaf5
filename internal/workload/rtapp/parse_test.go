package rtapp

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/schedlab/schedlab/internal/fileerr"
)

// TestParseArgsErrorLine: a syntax error names the file and the line of
// the offending character.
func TestParseArgsErrorLine(t *testing.T) {
	f := filepath.Join(t.TempDir(), "bad.json")
	os.WriteFile(f, []byte("{\n \"tasks\": \n  x\n}\n"), 0o644)
	_, err := ParseArgs([]string{f})
	var fe *fileerr.Error
	if !errors.As(err, &fe) || fe.Line != 3 || !strings.HasPrefix(err.Error(), f+":3: ") {
		t.Fatalf("error %v, want %s:3: ...", err, f)
	}
	// A mistake in what the file means is located by its JSON path.
	os.WriteFile(f, []byte("{\"tasks\": {}}\n"), 0o644)
	if _, err := ParseArgs([]string{f}); err == nil || err.Error() != f+": tasks: must be an object with at least one task" {
		t.Fatalf("error %v", err)
	}
}
