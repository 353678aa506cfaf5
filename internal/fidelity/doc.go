// Package fidelity reads the fidelity corpus and runs it: the published
// result sets of fidelity/cases (fidelity/README.md describes a case
// file), each simulated through the one run pipeline (package sim), so
// that package score can say how close schedlab comes.
//
// # Cases
//
// Parse reads a case file with yaml.v3's Node API, so every mistake is a
// fileerr.Error naming the file and line: an unknown or duplicate key, a
// missing field, a value of the wrong type. Validate then checks what the
// case means against this schedlab: the id matches the file name, the
// source is cited (message-id or URL) and is not one of the held-out
// threads, the preset, kernel baselines, tool and variants exist (each
// variant for its column's kernel), every feature and sysctl is one its
// column's kernel takes (checked by sim.Config.Settings, as `schedlab run
// --feature/--sysctl` checks them, at the setting's line), no two
// simulated columns run the same kernel, every row's load parses with the
// tool, the metric is one the tool reports, every column named in values
// or sd is declared, simulate.args holds {load} exactly when rows have
// loads. Load reads a directory (the embedded corpus or --corpus DIR):
// files that a case names as machine.file are machine files (parsed by
// package topology, with their own file:line errors), all others cases.
// Marshal writes a case back; Parse(Marshal(c)) is c, which the fuzz
// target checks.
//
// # Columns
//
// A column is a kernel configuration (columns.go, Case.ColumnConfig): tip
// is kernel.baseline with the case-wide settings and its own; another
// column is tip plus its variant, features and sysctls, or another
// baseline with the case-wide settings and its own. A column with none of
// these is a patch schedlab cannot run, shown and not simulated.
//
// # Plan and runs
//
// NewPlan lays out case × row × simulated column × seed: one Run for every
// published value of tip or of a simulated column, in every row (or,
// with --quick, in the rows of simulate.quick), DefaultSeeds seeds each
// (QuickSeeds with --quick). Seeds come from MasterSeed and the seed
// index only, so tip and a column are compared at equal seeds (the deltas
// are paired) and a quick run's seeds are a full run's first ones. Tip is
// the baseline with the base of the case's variants, as `schedlab compare`
// runs it.
//
// Execute runs the plan on a pool of goroutines, one kernel per run
// through sim.Run; runs are single-threaded and deterministic, so the
// records do not depend on the number of workers. With a results
// directory, each run's record (experiment.Record, written atomically by
// experiment.WriteRecord into runs/KEY.json) is kept, and a rerun reads
// the records it finds instead of running them. A run's key holds a hash
// of everything the run is made of (machine or machine file contents,
// kernel, variants, features, sysctls, tool, args, cpus, seed), so an
// edited case runs anew and a quick run's records serve the full run. Records do not say which
// model made them, so before reusing any, Execute runs again the cheapest
// reused run of each machine and refuses the directory if one differs.
//
// The sweep machinery of package experiment is reused for what fits
// (record format, atomic writes, seed derivation, the progress type) but
// not its Plan: a sweep is one dense matrix (machines × kernels ×
// workloads × loads × variants × runs) stored with its experiment.json,
// and refuses a directory planned differently, while the corpus is a
// union of small tables, each with its own machine, kernel, tool and
// columns, whose --quick and full runs share one directory.
package fidelity
