// Package fidelity reads the fidelity corpus and runs it: the published
// result sets of fidelity/cases (fidelity/README.md describes a case
// file), each simulated through the one run pipeline (package sim), so
// that package score can say how close schedlab comes.
//
// # Cases
//
// Parse reads a case file with yaml.v3's Node API, so every mistake is a
// FileError naming the file and line: an unknown or duplicate key, a
// missing field, a value of the wrong type. Validate then checks what the
// case means against this schedlab: the id matches the file name, the
// source is cited (message-id or URL) and is not one of the held-out
// threads, the preset, kernel baseline, tool and variants exist (each
// variant for the case's baseline), every row's load parses with the
// tool, the metric is one the tool reports, every column named in values
// or sd is declared, simulate.args holds {load} exactly when rows have
// loads. Load reads a directory (the embedded corpus or --corpus DIR):
// files that a case names as machine.file are machine files (parsed by
// package topology, with their own file:line errors), all others cases.
// Marshal writes a case back; Parse(Marshal(c)) is c, which the fuzz
// target checks.
package fidelity
