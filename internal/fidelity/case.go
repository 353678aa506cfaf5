package fidelity

import (
	"fmt"
	"strings"

	"github.com/schedlab/schedlab/internal/fileerr"
)

// Case is one case file: one published result set, its citation, and how
// schedlab simulates it (fidelity/README.md describes every field). It is
// plain data, parsed and validated by Parse.
type Case struct {
	// File names the case in errors and citations ("fidelity/cases/x.yaml").
	File        string
	ID          string
	Source      Source
	Machine     Machine
	Kernel      Kernel
	Command     string // exactly as published, {load} for the row's load
	Aggregation Aggregation
	Metric      Metric
	Simulate    Simulate
	// Columns are the table's kernels, tip first.
	Columns []Column
	Rows    []Row
	// Fitted names the cost parameters fitted on some of the case's
	// rows (`schedlab fidelity --fit`): those rows' points and deltas
	// are in-sample for the summary, the others out-of-sample.
	Fitted []Fit
	Notes  string

	// mechanism is set by Validate when the metric is a counter or a
	// ratio of the run's record rather than one of the tool's metrics.
	mechanism bool

	// lines are the lines of the case's keys by path ("machine.preset",
	// "columns.1.variant", "rows.0.values.tip"), for Validate's errors.
	lines map[string]int
}

// Source is who published the numbers, and where.
type Source struct {
	Title     string
	MessageID string
	URL       string
	Date      string // YYYY-MM-DD, YYYY-MM or YYYY
	Author    string
}

// Machine is a preset or a machine file beside the case, with the
// configuration as the source states it.
type Machine struct {
	Preset string
	File   string
	Config string
}

// Kernel is the closest schedlab baseline and what the source ran.
type Kernel struct {
	Baseline  string
	Published string
}

// Aggregation is how the source reduced its runs to one number.
type Aggregation struct {
	Runs      int // 0: not stated
	Statistic string
}

// The statistics a source may have reported.
var statistics = []string{"mean", "median", "min", "max", "single", "unknown"}

// Metric is the simulated metric (a name of `schedlab run --json`'s
// metrics) and which way is better.
type Metric struct {
	Name   string
	Unit   string
	Better string // "lower" or "higher"
}

// HigherBetter reports whether a larger value is better.
func (m Metric) HigherBetter() bool { return m.Better == "higher" }

// Simulate is what schedlab runs for the case.
type Simulate struct {
	Tool string
	// Args are the tool's arguments as one command line, {load} standing
	// for each row's load.
	Args string
	// Scale maps simulated to published: published ≈ simulated × Scale.
	Scale float64
	Why   string
	CPUs  string
	// Quick are the loads `fidelity --quick` runs.
	Quick []string
	// Features and Sysctls are settings every simulated column runs
	// with (the source's setup for all its kernels): sched_features as
	// written to debugfs ("NO_TTWU_QUEUE") and NAME=VALUE sysctls, as
	// `schedlab run --feature/--sysctl` takes them.
	Features []string
	Sysctls  []string
}

// LoadToken is the placeholder for a row's load in simulate.args and
// command.
const LoadToken = "{load}"

// Column is one kernel of the published table. The first column (tip) is
// the case's baseline (kernel.baseline), with its Features and Sysctls if
// it has any. Every other column is a kernel configuration: tip with the
// column's Variant, Features and Sysctls, or, with a Kernel of its own,
// that baseline with them (tip's settings describe tip's kernel and are
// not inherited). A column with none of them is a patch schedlab cannot
// run: shown, not simulated. ColumnConfig gives the configuration.
type Column struct {
	Name    string
	Variant string
	// Kernel is another baseline (a CFS tip against an EEVDF kernel);
	// "" is tip's.
	Kernel string
	// Features are sched_features as written to debugfs
	// ("NO_TTWU_QUEUE"), Sysctls NAME=VALUE settings
	// ("migration_cost_ns=100000"), as `schedlab run --feature/--sysctl`
	// take them.
	Features []string
	Sysctls  []string
}

// Configured reports whether the column names anything that changes its
// kernel: a variant, a kernel, features or sysctls.
func (col *Column) Configured() bool {
	return col.Variant != "" || col.Kernel != "" || len(col.Features) > 0 || len(col.Sysctls) > 0
}

// Row is one load of the table: the published numbers by column name.
type Row struct {
	Load   string
	Values map[string]float64
	SD     map[string]float64
	// Noise marks a patched column's published change that its source
	// itself calls noise, run-to-run variation or the effect of an
	// overloaded system: column name → what the source says, in the
	// case author's words. Such a delta is scored but counted apart.
	Noise map[string]string
}

// Fit is one calibration that used some of a case's rows: the cost
// parameters fitted (docs/costs.md names each fit and its command) and
// the loads of the rows whose points it was scored on.
type Fit struct {
	Params []string
	Loads  []string
}

// InSample reports whether row i was used to fit a cost parameter, and
// which parameters.
func (c *Case) InSample(i int) (params []string, ok bool) {
	for _, f := range c.Fitted {
		if contains(f.Loads, c.Rows[i].Load) {
			params = append(params, f.Params...)
		}
	}
	return params, len(params) > 0
}

// Mechanism reports whether the case is one of the mechanism corpus: its
// metric is a figure that says why a benchmark moved (a schedstat
// counter or ratio, a balancer counter: a counter of `schedlab run
// --json`'s record, or a ratio of two), not the benchmark's own result.
// The summary scores mechanism cases apart.
func (c *Case) Mechanism() bool { return c.mechanism }

// Simulated reports whether column i is run: tip, or a column with a
// variant, kernel, features or sysctls.
func (c *Case) Simulated(i int) bool { return i == 0 || c.Columns[i].Configured() }

// InQuick reports whether row i is in the --quick subset: its load is one
// of simulate.quick.
func (c *Case) InQuick(i int) bool { return contains(c.Simulate.Quick, c.Rows[i].Load) }

// Column returns the index of the named column, or -1.
func (c *Case) Column(name string) int {
	for i, col := range c.Columns {
		if col.Name == name {
			return i
		}
	}
	return -1
}

// Args returns the tool's arguments for a load.
func (c *Case) Args(load string) []string {
	words, err := splitArgs(c.Simulate.Args)
	if err != nil {
		panic("fidelity: " + c.File + ": args not validated: " + err.Error())
	}
	return substitute(words, load)
}

// PublishedCommand is the published command with the load substituted.
func (c *Case) PublishedCommand(load string) string {
	return strings.ReplaceAll(c.Command, LoadToken, load)
}

// Citation is the source in one line: author, date, and the message-id or
// URL.
func (c *Case) Citation() string {
	where := c.Source.MessageID
	if where == "" {
		where = c.Source.URL
	}
	return fmt.Sprintf("%s, %s, %s", c.Source.Author, c.Source.Date, where)
}

// MachineLabel is the machine as tables name it: the preset, or the
// machine file's name.
func (c *Case) MachineLabel() string {
	if c.Machine.Preset != "" {
		return c.Machine.Preset
	}
	return c.Machine.File
}

// line is the line of a key path (1 when unknown: a case built in Go).
func (c *Case) line(path string) int {
	if l := c.lines[path]; l > 0 {
		return l
	}
	// The nearest enclosing key that has a line.
	for {
		i := strings.LastIndexByte(path, '.')
		if i < 0 {
			return 1
		}
		path = path[:i]
		if l := c.lines[path]; l > 0 {
			return l
		}
	}
}

// errAt is a mistake in the case at a key path's line.
func (c *Case) errAt(path, format string, args ...any) error {
	return fileerr.Errorf(c.File, c.line(path), format, args...)
}
