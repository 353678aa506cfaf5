package fidelity_test

import (
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	corpus "github.com/schedlab/schedlab/fidelity"
	"github.com/schedlab/schedlab/internal/fidelity"
	"github.com/schedlab/schedlab/internal/fidelity/score"
)

// docs/fidelity.md is `schedlab fidelity --markdown` over the whole
// corpus, or over its --quick subset when the full run did not fit in a
// stop (its "Made on" line then says ", the --quick subset"; issue 12
// wants the full table). Regenerating it here would run the corpus (too
// long for CI), so the test checks what does not need the runs: the
// preamble is what --markdown writes now, the commit line's counts are
// the current corpus's (or its quick subset's), the case sections are its
// cases in order, the summary line has the summary's format and point
// count, and every table header is one --markdown writes. A stale doc (a
// case added, removed or edited in its points, a changed layout) fails;
// simulated figures that moved with the model do not, until the doc is
// regenerated.
func TestDocMatchesCorpus(t *testing.T) {
	const path = "../../" + fidelity.GeneratedDoc
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	regen := "regenerate it: go build -o /tmp/schedlab ./cmd/schedlab && /tmp/schedlab fidelity --markdown --trust fidelity/trust.json > docs/fidelity.md"
	rest, ok := strings.CutPrefix(doc, score.MarkdownPreamble)
	if !ok {
		t.Fatalf("%s does not open with the preamble --markdown writes; %s", path, regen)
	}
	c, err := fidelity.Load(corpus.Cases(), corpus.Dir)
	if err != nil {
		t.Fatal(err)
	}
	made := regexp.MustCompile("^Made on commit `([0-9a-f]{40}(-modified)?|unknown)` from " + regexp.QuoteMeta(corpus.Dir) + "(, the --quick subset)?: (.*); (\\d+) seeds per simulated value\\.\n")
	m := made.FindStringSubmatch(rest)
	if m == nil {
		t.Fatalf("%s: no 'Made on commit' line for the corpus after the preamble; %s", path, regen)
	}
	quick := m[3] != ""
	// fidelity/trust.json comes from the same run: its commit and subset
	// are the doc's (compare and report quote it beside a delta).
	tr := score.EmbeddedTrust()
	if tr.Commit != m[1] || tr.Quick != quick {
		t.Errorf("%s is from commit %q (quick %v), %s from %q (quick %v): write both from one run, with --markdown and --trust %s", corpus.TrustFile, tr.Commit, tr.Quick, path, m[1], quick, corpus.TrustFile)
	}
	taken := func(cs *fidelity.Case, row, _ int) bool { return !quick || cs.InQuick(row) }
	if quick {
		regen = "regenerate it: go build -o /tmp/schedlab ./cmd/schedlab && /tmp/schedlab fidelity --quick --markdown --trust fidelity/trust.json > docs/fidelity.md (or the full corpus without --quick)"
	}
	counts := score.Count(c.Cases, taken)
	if m[4] != counts.Line() {
		t.Errorf("%s counts %q, the corpus now %q; %s", path, m[4], counts.Line(), regen)
	}
	lines := strings.Split(rest, "\n")
	var summary string
	var cases []string
	headers := map[string]bool{}
	for _, h := range score.MarkdownTableHeaders() {
		headers[h] = true
	}
	for i, l := range lines {
		if l == "## Summary" && i+2 < len(lines) {
			summary = lines[i+2]
		}
		if id, ok := strings.CutPrefix(l, "### "); ok {
			cases = append(cases, id)
		}
		if strings.HasPrefix(l, "| ") && i+1 < len(lines) && strings.HasPrefix(lines[i+1], "|---") && !headers[l] {
			t.Errorf("%s: table header %q is not one --markdown writes", path, l)
		}
	}
	sm := regexp.MustCompile(score.SummaryLineRE).FindStringSubmatch(summary)
	if sm == nil {
		t.Errorf("%s: summary line %q has not the summary's format; %s", path, summary, regen)
	} else if bench := benchmarkPoints(c.Cases, taken); sm[1] != strconv.Itoa(bench) {
		t.Errorf("%s: the summary has %s points, the corpus's benchmark cases %d; %s", path, sm[1], bench, regen)
	}
	// The cases with a point (a published value of a simulated column).
	var want []string
	for _, cs := range c.Cases {
		if score.Count([]*fidelity.Case{cs}, taken).Points > 0 {
			want = append(want, cs.ID)
		}
	}
	if strings.Join(cases, " ") != strings.Join(want, " ") {
		t.Errorf("%s has the cases %v, the corpus %v; %s", path, cases, want, regen)
	}
}

// benchmarkPoints counts the points of the cases that are not mechanism
// cases: what the summary scores (the mechanism corpus has its own).
func benchmarkPoints(cases []*fidelity.Case, in func(cs *fidelity.Case, row, col int) bool) int {
	var bench []*fidelity.Case
	for _, cs := range cases {
		if !cs.Mechanism() {
			bench = append(bench, cs)
		}
	}
	return score.Count(bench, in).Points
}
