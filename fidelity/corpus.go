// Package fidelity carries the fidelity corpus in the binary: the case
// files of cases/ (README.md describes their format) and the machine files
// beside them, embedded so that `schedlab fidelity` runs the same corpus
// wherever the binary goes. Package internal/fidelity parses and runs it.
package fidelity

import (
	"embed"
	"io/fs"
)

// Dir is where the corpus lives in the repository; errors in an embedded
// case name its file under it ("fidelity/cases/x.yaml:12: ...").
const Dir = "fidelity/cases"

// files holds cases/ whole. "all:" keeps the placeholder .gitkeep, so the
// pattern matches even while the corpus is empty (go:embed rejects a
// directory with nothing to embed); internal/fidelity reads only the
// .yaml and .yml files.
//
//go:embed all:cases
var files embed.FS

// Cases is the embedded cases/ directory: case files and machine files at
// its top level.
func Cases() fs.FS {
	sub, err := fs.Sub(files, "cases")
	if err != nil {
		panic("fidelity: " + err.Error())
	}
	return sub
}

// TrustFile is the corpus's delta record per machine and benchmark, written
// by `schedlab fidelity --trust fidelity/trust.json` beside
// docs/fidelity.md from the same run, and embedded so that `schedlab
// compare` and `schedlab report` can say beside a simulated delta how
// often the corpus's published deltas on that machine and benchmark came
// out right (package internal/fidelity/score reads it).
const TrustFile = "fidelity/trust.json"

//go:embed trust.json
var trust []byte

// Trust is the embedded trust.json.
func Trust() []byte { return trust }
