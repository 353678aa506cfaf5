package fidelity

import (
	"math"
	"testing"

	corpus "github.com/schedlab/schedlab/fidelity"
	"github.com/schedlab/schedlab/internal/costmodel"
	"github.com/schedlab/schedlab/internal/topology"
	"github.com/schedlab/schedlab/internal/workload/kobj"
)

// Kunpeng 920's cluster-gated idle state's wake time is derived from the
// wayca-kp128-lat-pipe case (docs/costs.md, "Kunpeng 920 across a
// cluster"): the round trip to a core of another cluster (rows 4-28,
// their mean) less the round trip to the cluster partner (row 0), less
// what the lines a round trip waits for (two hops of kobj.PipeHopLines(1))
// cost more across the die than inside the cluster, is two wakeups'
// difference between the gated state and WFI; the preset rounds the
// gated wake time to a whole µs. A change to the case's rows, to the
// lines a hop waits for, to the line costs or to the presets' idle states
// fails here until the derivation is redone.
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
		spec, err := topology.Load(m)
		if err != nil {
			t.Fatal(err)
		}
		states := spec.IdleStatesOf(0)
		if len(states) != 2 || !states[1].Cluster {
			t.Fatalf("%s: idle states %+v, want WFI and a cluster state", m, states)
		}
		extra := ((others/float64(n)-partner)*1000 - float64(lines)*float64(p.LineSameLLC-p.LineSameCluster)) / 2
		want := states[0].Wake() + int64(math.Round(extra/1000))*1000
		if got := states[1].Wake(); got != want {
			t.Errorf("%s: the gated state wakes in %d ns, derived WFI's %d + %.0f ns, %d in whole µs", m, got, states[0].Wake(), extra, want)
		}
		if p.LineOtherLLC < p.LineSameLLC {
			t.Errorf("%s: line_other_llc_ns %d below line_same_llc_ns %d: the other die would be nearer than another cluster", m, p.LineOtherLLC, p.LineSameLLC)
		}
	}
}
