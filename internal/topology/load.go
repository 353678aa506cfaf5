package topology

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
)

// UnknownMachineError is returned by Load for a name that is neither a
// preset, "host", nor an existing file.
type UnknownMachineError struct{ Name string }

func (e *UnknownMachineError) Error() string {
	return fmt.Sprintf("unknown machine %q (see 'schedlab machines')", e.Name)
}

// Load resolves a machine argument as the scenario, run and machine
// commands accept it: a preset name, "host" (this machine's /sys), or the
// path of a YAML machine file. Names that look like paths (containing a
// slash or ending in .yaml/.yml) are always read as files.
func Load(nameOrFile string) (*MachineSpec, error) {
	looksLikeFile := strings.ContainsRune(nameOrFile, '/') || strings.HasSuffix(nameOrFile, ".yaml") || strings.HasSuffix(nameOrFile, ".yml")
	if !looksLikeFile {
		if s, ok := Preset(nameOrFile); ok {
			return s, nil
		}
		if nameOrFile == HostName {
			return ReadHost()
		}
	}
	st, err := os.Stat(nameOrFile)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if looksLikeFile {
			return nil, fmt.Errorf("machine file %s does not exist", nameOrFile)
		}
		return nil, &UnknownMachineError{Name: nameOrFile}
	case err != nil:
		return nil, err
	case st.IsDir():
		return nil, fmt.Errorf("%s is a directory, not a machine file", nameOrFile)
	}
	return LoadFile(nameOrFile)
}
