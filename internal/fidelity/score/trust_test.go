package score

import (
	"bytes"
	"math"
	"strings"
	"testing"
)

// Trust counts a report's significant deltas per machine and benchmark,
// as the summary counts them, and Note says what they mean for a compare
// on that machine and benchmark (issue 40: "No word on how far to trust a
// delta").
func TestTrust(t *testing.T) {
	nan := math.NaN()
	right := ScoreDelta(10, 9, nan, nan, []float64{10, 10}, []float64{9, 9}, false)   // +10%, published sign
	wrong := ScoreDelta(10, 9, nan, nan, []float64{10, 10}, []float64{11, 11}, false) // opposite
	none := ScoreDelta(10, 9, nan, nan, []float64{10, 10}, []float64{9, 11}, false)   // spans zero
	small := ScoreDelta(10, 9.9, nan, nan, []float64{10, 10}, []float64{9, 9}, false) // not significant
	rep := &Report{Commit: "0123456789abcdef", Cases: []*Case{
		{Machine: "zen3-2s-nps1", Tool: "perf-bench-messaging", Deltas: []Delta{right, wrong, none}},
		{Machine: "zen3-2s-nps1", Tool: "hackbench", Deltas: []Delta{right, small}},
		{Machine: "zen3-2s-nps2.yaml", Tool: "tbench", Deltas: []Delta{right}},
		{Machine: "hikey", Tool: "hackbench", Deltas: []Delta{small}},
		{Machine: "hikey", Tool: "schbench"},
	}}
	tr := rep.Trust()
	want := []TrustGroup{
		{Machine: "hikey", Benchmark: "hackbench", Deltas: 1},
		{Machine: "zen3-2s-nps1", Benchmark: "hackbench", Deltas: 5, Significant: 4, PublishedSign: 2, NoEffect: 1, Opposite: 1, Within2x: 2},
		{Machine: "zen3-2s-nps2", Benchmark: "tbench", Deltas: 1, Significant: 1, PublishedSign: 1, Within2x: 1},
	}
	if len(tr.Groups) != len(want) {
		t.Fatalf("groups %+v", tr.Groups)
	}
	for i := range want {
		if tr.Groups[i] != want[i] {
			t.Errorf("group %d: %+v, want %+v", i, tr.Groups[i], want[i])
		}
	}
	// It reads back.
	var b bytes.Buffer
	if err := tr.Write(&b); err != nil {
		t.Fatal(err)
	}
	back, err := ReadTrust(b.Bytes())
	if err != nil || back.Commit != tr.Commit || len(back.Groups) != 3 {
		t.Fatalf("read back: %+v, %v", back, err)
	}
	if _, err := ReadTrust([]byte(`{"schema_version": 1, "bogus": 1}`)); err == nil {
		t.Error("an unknown field is accepted")
	}
	for _, c := range []struct{ machine, tool, want string }{
		{"zen3-2s-nps1", "hackbench", "corpus: 2 of 4 significant published deltas on zen3-2s-nps1 hackbench reproduced with their sign (1 no effect, 1 opposite; docs/fidelity.md at 0123456)"},
		{"hikey", "perf-bench-messaging", "corpus: 1 published delta of hackbench on hikey, none significant; on zen3-2s-nps1, 2 of 4 reproduced with their sign (docs/fidelity.md at 0123456)"},
		{"kunpeng920-96", "tbench", "corpus: no significant published delta of tbench on kunpeng920-96; on zen3-2s-nps2, 1 of 1 reproduced with their sign (docs/fidelity.md at 0123456)"},
		{"hikey", "stream", "corpus: no significant published delta of stream on hikey, nor on another machine: nothing says how far to trust this delta (docs/fidelity.md at 0123456)"},
	} {
		if got := tr.Note(c.machine, c.tool); got != c.want {
			t.Errorf("Note(%s, %s):\n got %q\nwant %q", c.machine, c.tool, got, c.want)
		}
	}
	tr.Quick = true
	if got := tr.Note("hikey", "stream"); !strings.HasSuffix(got, "(docs/fidelity.md at 0123456, its --quick subset)") {
		t.Errorf("quick: %q", got)
	}
}

// The committed trust file parses.
func TestEmbeddedTrust(t *testing.T) {
	EmbeddedTrust()
}
