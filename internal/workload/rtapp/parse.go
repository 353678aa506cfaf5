package rtapp

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/schedlab/schedlab/internal/workload"
)

// Usage is the tool's usage.
const Usage = `rt-app FILE.json

Runs an rt-app workload file (see docs/workloads.md for the keys schedlab
models).
`

// ParseArgs reads `rt-app FILE.json`.
func ParseArgs(args []string) (*Spec, error) {
	if len(args) == 1 && (args[0] == "-h" || args[0] == "--help") {
		return nil, workload.ErrHelp
	}
	if len(args) != 1 {
		return nil, fmt.Errorf("rt-app: give one JSON file (rt-app FILE.json)")
	}
	data, err := os.ReadFile(args[0])
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, fmt.Errorf("%s: %v", args[0], err)
	}
	spec, err := ParseSpec(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", args[0], err)
	}
	return spec, nil
}
