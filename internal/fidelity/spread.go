package fidelity

import (
	"fmt"
	"math"
	"strings"
)

// An author's spread across reports.
//
// Most sources publish one value per kernel and load with no standard
// deviation, so the corpus calls a published change significant when it is
// at least 5% (score.SignificantPct). Some authors, though, published the
// same tip measurement in several reports: the same benchmark command on
// the same machine, against tips that schedlab runs as one kernel. Those
// values differ by the author's run-to-run variation plus whatever the tips
// changed that schedlab does not model, and that is the resolution schedlab
// can be judged at: a patch's published change smaller than that spread
// cannot be told apart from it, on the author's hardware or in the model.
// (K Prateek Nayak's 2022 Zen3 reports give STREAM Copy's tip, 10 runs, in
// NPS4 as 123,059 to 173,889 MB/s across four reports.)
//
// TipSpread groups the published tip values of every case by what makes
// them the same measurement to schedlab: the author, the machine (preset or
// machine file), the tool and its arguments at that load, the CPUs, the
// metric, and tip's kernel (the settings its configuration resolves to). A
// group with values from at least MinSpreadReports reports (message-ids,
// else URLs; one value per report, the first case's by ID) has a spread.
// The score records it beside each delta (score.Delta.SetAuthorSpread); it
// changes no count of the summary's headline.

// MinSpreadReports is the fewest reports a spread is taken from.
const MinSpreadReports = 3

// TipSpread is the spread of one tip measurement across an author's
// reports.
type TipSpread struct {
	// Reports is how many reports published it; Mean and SD are the mean
	// and sample standard deviation of their values.
	Reports  int
	Mean, SD float64
}

// CoV is SD / Mean.
func (s TipSpread) CoV() float64 { return s.SD / s.Mean }

// spreadKey is what makes two cases' tip values at a load the same
// measurement.
func (c *Case) spreadKey(load string) string {
	return strings.Join([]string{
		c.Source.Author,
		c.MachineLabel(),
		c.Simulate.Tool,
		strings.Join(c.Args(load), "\x1f"),
		c.Simulate.CPUs,
		c.Metric.Name,
		c.tipKernel(),
	}, "\x1e")
}

// tipKernel is tip's kernel as the settings it runs with (its baseline,
// variant bases, features and sysctls resolved), so that two ways of
// writing one configuration ("--variant base:sis-util-v1" and "--feature
// SIS_PROP --feature NO_SIS_UTIL") are one kernel; the flags when they do
// not resolve.
func (c *Case) tipKernel() string {
	cfg := c.ColumnConfig(0)
	s, err := cfg.Settings()
	if err != nil {
		return c.ColumnFlags(0)
	}
	return fmt.Sprintf("%+v", s)
}

// sourceID is the report a case comes from: its message-id, else its URL.
func (c *Case) sourceID() string {
	if c.Source.MessageID != "" {
		return c.Source.MessageID
	}
	return c.Source.URL
}

// TipSpread returns the spread of row i's tip value across its author's
// reports, and false when fewer than MinSpreadReports reports published
// that measurement (or the corpus was not made by Load).
func (c *Corpus) TipSpread(cs *Case, i int) (TipSpread, bool) {
	s, ok := c.spreads[cs.spreadKey(cs.Rows[i].Load)]
	return s, ok
}

// tipSpreads computes every group's spread.
func (c *Corpus) tipSpreads() map[string]TipSpread {
	type group struct {
		seen map[string]bool
		vals []float64
	}
	groups := map[string]*group{}
	for _, cs := range c.Cases { // sorted by ID: the first case of a report gives its value
		if cs.Mechanism() {
			continue
		}
		tip := cs.Columns[0].Name
		for _, row := range cs.Rows {
			v, ok := row.Values[tip]
			if !ok {
				continue
			}
			k := cs.spreadKey(row.Load)
			g := groups[k]
			if g == nil {
				g = &group{seen: map[string]bool{}}
				groups[k] = g
			}
			if src := cs.sourceID(); !g.seen[src] {
				g.seen[src] = true
				g.vals = append(g.vals, v)
			}
		}
	}
	out := map[string]TipSpread{}
	for k, g := range groups {
		n := len(g.vals)
		if n < MinSpreadReports {
			continue
		}
		var sum float64
		for _, v := range g.vals {
			sum += v
		}
		mean := sum / float64(n)
		var ss float64
		for _, v := range g.vals {
			ss += (v - mean) * (v - mean)
		}
		out[k] = TipSpread{Reports: n, Mean: mean, SD: math.Sqrt(ss / float64(n-1))}
	}
	return out
}
