package rtapp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"regexp"
	"strconv"

	"github.com/schedlab/schedlab/internal/fileerr"
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
		if line, msg := located(data, err); line > 0 {
			return nil, &fileerr.Error{File: args[0], Line: line, Msg: msg}
		}
		// A check of what the file means names a JSON path
		// (*SpecError), not a line.
		return nil, fmt.Errorf("%s: %v", args[0], err)
	}
	return spec, nil
}

var offsetRE = regexp.MustCompile(`^offset (\d+): `)

// located turns a parse error's byte offset (a JSON syntax error's, or an
// "offset N: " prefix) into a line and the message without the offset;
// the line is 0 for an error without an offset.
func located(data []byte, err error) (line int, msg string) {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		// The streaming decoder's offsets are not reliable; the whole-
		// buffer scanner's are: ask it where the syntax breaks.
		off := se.Offset
		var full *json.SyntaxError
		if errors.As(json.Unmarshal(data, new(any)), &full) {
			off = full.Offset
		}
		return lineAt(data, off), err.Error()
	}
	msg = err.Error()
	if m := offsetRE.FindStringSubmatch(msg); m != nil {
		off, _ := strconv.ParseInt(m[1], 10, 64)
		return lineAt(data, off), msg[len(m[0]):]
	}
	return 0, msg
}

// lineAt is the 1-based line of byte offset off.
func lineAt(data []byte, off int64) int {
	if off > int64(len(data)) {
		off = int64(len(data))
	}
	return 1 + bytes.Count(data[:off], []byte("\n"))
}
