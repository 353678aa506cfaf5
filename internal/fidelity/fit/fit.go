// Package fit calibrates cost-model parameters against the fidelity
// corpus: the procedure issue 12 asks for ("fit the cost-model parameters
// that are estimates within the physical ranges their sources allow").
//
// The procedure is a coordinate search, one pass, in the order the
// parameters are given: starting from the machines' own defaults, each
// parameter in turn is tried at every candidate value with the values
// already chosen for the earlier ones, and keeps the value whose run of
// the selected cases scores best. Best is the lowest median |log ratio|
// of simulated to published over the points (docs/fidelity.md), ties
// broken by more points within 2×; a candidate that scores no better than
// the current value does not replace it, so the defaults stand unless the
// corpus says otherwise. Every trial is one run of the plan (usually
// `--quick`) with a costs file of the values tried laid over every run's
// machine costs (sim.Config.CostsFile), so a trial is deterministic and
// independent of the others.
//
// The candidates are the caller's: they must lie within each parameter's
// range (costmodel.Param.Min/Max), and choosing them within what the
// parameter's source allows is the caller's job. A fit applies to the
// cases selected, all at once, never to one case: select the cases of one
// machine family when the parameter is a machine's.
package fit

import (
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/schedlab/schedlab/internal/costmodel"
	"github.com/schedlab/schedlab/internal/fidelity"
	"github.com/schedlab/schedlab/internal/fidelity/score"
)

// Axis is one parameter and the values to try.
type Axis struct {
	Param  string
	Values []float64
}

// ParseAxis reads "PARAM=V1,V2,...": a cost parameter
// ('schedlab costs') and at least one value inside its range.
func ParseAxis(spec string) (Axis, error) {
	name, list, ok := strings.Cut(spec, "=")
	if !ok || name == "" || list == "" {
		return Axis{}, fmt.Errorf("--fit %s: write PARAM=V1,V2,..., e.g. --fit tcp_send_ns=3000,4500,6000", spec)
	}
	p, ok := costmodel.Lookup(name)
	if !ok {
		return Axis{}, fmt.Errorf("--fit %s: %v", spec, &costmodel.UnknownParamError{Key: name})
	}
	a := Axis{Param: name}
	for _, f := range strings.Split(list, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return Axis{}, fmt.Errorf("--fit %s: %q is not a number", spec, f)
		}
		if v < p.Min || v > p.Max {
			return Axis{}, fmt.Errorf("--fit %s: %s must lie in %s..%s %s, not %s", spec, name, costmodel.FormatNumber(p.Min), costmodel.FormatNumber(p.Max), p.Unit, costmodel.FormatNumber(v))
		}
		if p.Integer && v != math.Trunc(v) {
			return Axis{}, fmt.Errorf("--fit %s: %s takes whole numbers, not %s", spec, name, costmodel.FormatNumber(v))
		}
		a.Values = append(a.Values, v)
	}
	return a, nil
}

// Setting is one parameter's value in a trial.
type Setting struct {
	Param string
	Value float64
}

// Trial is one scored run of the plan with some parameters set.
type Trial struct {
	Settings []Setting // in the order of the axes; empty for the defaults
	Summary  score.Summary
}

// Label is the trial's settings as "a=1 b=2", or "defaults".
func (t Trial) Label() string {
	if len(t.Settings) == 0 {
		return "defaults"
	}
	var parts []string
	for _, s := range t.Settings {
		parts = append(parts, s.Param+"="+costmodel.FormatNumber(s.Value))
	}
	return strings.Join(parts, " ")
}

// Options say what to run each trial on.
type Options struct {
	Corpus *fidelity.Corpus
	Cases  []*fidelity.Case
	Plan   fidelity.PlanOptions // Quick, Seeds; CostsFile is set per trial
	Jobs   int
	// Where names the corpus in reports (fidelity/cases).
	Where string
	// Trial, if set, is called after each trial.
	Trial func(Trial)
}

// Result is the whole search: every trial in order, the best settings
// and their summary.
type Result struct {
	Trials []Trial
	Best   Trial
	// Defaults is the first trial: the machines' own values.
	Defaults Trial
}

// Better reports whether summary a beats b: a lower median |log ratio|,
// or the same and more points within 2×.
func Better(a, b score.Summary) bool {
	am, bm := float64(a.MedianAbsLogRatio), float64(b.MedianAbsLogRatio)
	if math.IsNaN(bm) && !math.IsNaN(am) {
		return true
	}
	if am != bm {
		return am < bm
	}
	return a.Within2x > b.Within2x
}

// Run does the search.
func Run(axes []Axis, opt Options) (*Result, error) {
	tmp, err := os.MkdirTemp("", "schedlab-fit-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	trial := func(n int, set []Setting) (Trial, error) {
		po := opt.Plan
		if len(set) > 0 {
			path := filepath.Join(tmp, fmt.Sprintf("trial%03d.yaml", n))
			var b strings.Builder
			for _, s := range set {
				fmt.Fprintf(&b, "%s: %s\n", s.Param, costmodel.FormatNumber(s.Value))
			}
			if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
				return Trial{}, err
			}
			po.CostsFile = path
		}
		plan, err := fidelity.NewPlan(opt.Corpus, opt.Cases, po)
		if err != nil {
			return Trial{}, err
		}
		out, err := fidelity.Execute(plan, fidelity.ExecOptions{Jobs: opt.Jobs})
		if err != nil {
			return Trial{}, err
		}
		rep, err := score.Build(plan, out.Records, opt.Where, "")
		if err != nil {
			return Trial{}, err
		}
		t := Trial{Settings: append([]Setting(nil), set...), Summary: rep.Summary}
		if opt.Trial != nil {
			opt.Trial(t)
		}
		return t, nil
	}
	res := &Result{}
	def, err := trial(0, nil)
	if err != nil {
		return nil, err
	}
	res.Trials, res.Defaults, res.Best = append(res.Trials, def), def, def
	var chosen []Setting
	for _, ax := range axes {
		for _, v := range ax.Values {
			t, err := trial(len(res.Trials), append(append([]Setting(nil), chosen...), Setting{ax.Param, v}))
			if err != nil {
				return nil, err
			}
			res.Trials = append(res.Trials, t)
			if Better(t.Summary, res.Best.Summary) {
				res.Best = t
			}
		}
		chosen = append([]Setting(nil), res.Best.Settings...)
	}
	return res, nil
}

// WriteTable prints every trial's summary, the best marked.
func WriteTable(w io.Writer, res *Result) error {
	width := 0
	for _, t := range res.Trials {
		width = max(width, len(t.Label()))
	}
	for _, t := range res.Trials {
		mark := " "
		if sameSettings(t.Settings, res.Best.Settings) {
			mark = "*"
		}
		if _, err := fmt.Fprintf(w, "%s %-*s  %s\n", mark, width, t.Label(), t.Summary.Line()); err != nil {
			return err
		}
	}
	return nil
}

// WriteCosts writes the best settings as a costs file (`--costs FILE`, or
// a machine file's costs: section), each with its source: "fitted to the
// fidelity corpus (N points)" and how.
func WriteCosts(w io.Writer, res *Result, how string) error {
	if len(res.Best.Settings) == 0 {
		_, err := fmt.Fprintf(w, "# fitted to the fidelity corpus (%s): no candidate beat the defaults (%s)\n", points(res.Defaults.Summary.Points), how)
		return err
	}
	set := append([]Setting(nil), res.Best.Settings...)
	sort.SliceStable(set, func(i, j int) bool { return set[i].Param < set[j].Param })
	for _, s := range set {
		src := fmt.Sprintf("fitted to the fidelity corpus (%s): %s; median |log ratio| %.3f -> %.3f", points(res.Best.Summary.Points), how,
			float64(res.Defaults.Summary.MedianAbsLogRatio), float64(res.Best.Summary.MedianAbsLogRatio))
		if _, err := fmt.Fprintf(w, "%s: {value: %s, source: %s}\n", s.Param, costmodel.FormatNumber(s.Value), strconv.Quote(src)); err != nil {
			return err
		}
	}
	return nil
}

func points(n int) string {
	if n == 1 {
		return "1 point"
	}
	return fmt.Sprintf("%d points", n)
}

func sameSettings(a, b []Setting) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
