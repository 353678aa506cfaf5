package fidelity

import (
	"math"
	"testing"

	corpus "github.com/schedlab/schedlab/fidelity"
	"github.com/schedlab/schedlab/internal/costmodel"
	"github.com/schedlab/schedlab/internal/engine"
	"github.com/schedlab/schedlab/internal/workload/kobj"
)

// Kunpeng 920's dearer wakeup across clusters is derived from the
// wayca-kp128-lat-pipe case (docs/costs.md, "Kunpeng 920 across a
// cluster"): the round trip to a core of another cluster (rows 4-28,
// their mean) less the round trip to the cluster partner (row 0), less
// what the lines a round trip waits for (two hops of kobj.PipeHopLines(1))
// cost more across the die than inside the cluster, is two wakeups'
// difference between ipi_same_llc_ns and ipi_same_cluster_ns; the presets
// round it to a whole µs. An IPI off the die pays at least as much (the
// other-die rows lie above the other-cluster ones). A change to the case's
// rows, to the lines a hop waits for, to the line costs or to the presets'
// IPI latencies fails here until the derivation is redone.
func TestKunpengClusterWakeDerived(t *testing.T) {
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
	for _, m := range []string{"kunpeng920-128", "kunpeng920-96"} {
		p, ok := costmodel.Defaults(m)
		if !ok {
			t.Fatalf("no preset %s", m)
		}
		// The 8-cluster part's log gives both presets their IPIs; the
		// 6-cluster part's are the same times costmodel.Kunpeng96Slower
		// (fitted to its own log), rounded as the preset rounds them.
		slower := 1.0
		if m == "kunpeng920-96" {
			slower = costmodel.Kunpeng96Slower
		}
		sameCluster := float64(p.IPISameCluster) / slower
		extra := ((others/float64(n)-partner)*1000 - float64(lines)*float64(p.LineSameLLC-p.LineSameCluster)) / 2
		want := engine.Time(costmodel.RoundSig3((sameCluster + math.Round(extra/1000)*1000) * slower))
		if math.Abs(float64(p.IPISameLLC-want)) > 0.01*float64(want) {
			t.Errorf("%s: ipi_same_llc_ns %d, derived ipi_same_cluster_ns %d + %.0f ns, %d in whole µs", m, p.IPISameLLC, p.IPISameCluster, extra, want)
		}
		if p.IPIOtherLLC < p.IPISameLLC || p.IPIOtherNode < p.IPIOtherLLC {
			t.Errorf("%s: ipi_other_llc_ns %d, ipi_other_node_ns %d: below ipi_same_llc_ns %d, the other die would wake sooner than another cluster", m, p.IPIOtherLLC, p.IPIOtherNode, p.IPISameLLC)
		}
		if p.LineOtherLLC < p.LineSameLLC {
			t.Errorf("%s: line_other_llc_ns %d below line_same_llc_ns %d: the other die would be nearer than another cluster", m, p.LineOtherLLC, p.LineSameLLC)
		}
	}
}
