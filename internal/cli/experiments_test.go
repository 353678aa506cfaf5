package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/schedlab/schedlab/internal/experiment"
)

// Every built-in experiment runs as printed: the file `experiments show`
// prints, saved alone in an empty directory, parses and plans, for its
// default size and every profile, as the same plan the built-in gives
// (the same machines, which must therefore be presets, the same kernels,
// variants, options and points). Nothing is run.
func TestBuiltinExperimentsRunAsPrinted(t *testing.T) {
	builtins := experiment.Builtins()
	if len(builtins) == 0 {
		t.Fatal("no built-in experiments")
	}
	for _, b := range builtins {
		out, stderr, code := run("experiments", "show", b.Name)
		if code != 0 || stderr != "" {
			t.Fatalf("experiments show %s: exit %d: %s", b.Name, code, stderr)
		}
		file := filepath.Join(t.TempDir(), b.Name+".yaml")
		if err := os.WriteFile(file, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
		profiles := []string{""}
		for _, p := range b.Profiles {
			profiles = append(profiles, p.Name)
		}
		for _, prof := range profiles {
			printed, err := experiment.Load(file, prof)
			if err != nil {
				t.Errorf("%s (profile %q) as printed: %v", b.Name, prof, err)
				continue
			}
			builtin, err := experiment.Load(b.Name, prof)
			if err != nil {
				t.Fatalf("built-in %s (profile %q): %v", b.Name, prof, err)
			}
			for _, m := range printed.Machines {
				if m.File {
					t.Errorf("%s names the machine file %s", b.Name, m.Ref)
				}
			}
			if len(printed.Skipped) > 0 || len(printed.Points()) == 0 {
				t.Errorf("%s (profile %q): skipped %v, %d points", b.Name, prof, printed.Skipped, len(printed.Points()))
			}
			if !bytes.Equal(printed.JSON(), builtin.JSON()) {
				t.Errorf("%s (profile %q): the printed file plans\n%s\nthe built-in\n%s", b.Name, prof, printed.JSON(), builtin.JSON())
			}
		}
	}
}
