package fidelity

import (
	"math"
	"testing"

	corpus "github.com/schedlab/schedlab/fidelity"
	"github.com/schedlab/schedlab/internal/costmodel"
	"github.com/schedlab/schedlab/internal/workload/kobj"
)

// Kunpeng 920's line cost between clusters of a die is derived from the
// wayca-kp128-lat-pipe case (docs/costs.md): the round trip to a core of
// another cluster (rows 4-28, their mean) less the round trip to the
// cluster partner (row 0), over the lines a round trip waits for (two
// hops of kobj.PipeHopLines(1)), is line_same_llc_ns − line_same_cluster_ns
// in both Kunpeng presets, to the 10 ns the preset rounds to. A change to
// the case's rows, to the lines a hop waits for or to the presets fails
// here until the derivation is redone.
func TestKunpengClusterLineDerived(t *testing.T) {
	c, err := Load(corpus.Cases(), corpus.Dir)
	if err != nil {
		t.Fatal(err)
	}
	var lp *Case
	for _, k := range c.Cases {
		if k.ID == "wayca-kp128-lat-pipe" {
			lp = k
		}
	}
	if lp == nil {
		t.Fatal("no case wayca-kp128-lat-pipe")
	}
	var partner, others float64
	n := 0
	for _, r := range lp.Rows {
		v := r.Values["tip"]
		switch r.Load {
		case "0":
			partner = v
		case "4", "8", "12", "16", "20", "24", "28":
			others += v
			n++
		}
	}
	if n != 7 || partner == 0 {
		t.Fatalf("rows: %d other clusters, partner %v", n, partner)
	}
	lines := 2 * kobj.PipeHopLines(1)
	want := (others/float64(n) - partner) * 1000 / float64(lines) // ns a line
	for _, m := range []string{"kunpeng920-128", "kunpeng920-96"} {
		p, ok := costmodel.Defaults(m)
		if !ok {
			t.Fatalf("no preset %s", m)
		}
		got := p.LineSameLLC - p.LineSameCluster
		if math.Abs(float64(got)-want) > 5+1e-9 {
			t.Errorf("%s: line_same_llc_ns − line_same_cluster_ns = %d ns, derived %.1f ns (%d lines a round trip)", m, got, want, lines)
		}
		if p.LineOtherLLC < p.LineSameLLC {
			t.Errorf("%s: line_other_llc_ns %d below line_same_llc_ns %d: the other die would be nearer than another cluster", m, p.LineOtherLLC, p.LineSameLLC)
		}
	}
}
