package costmodel

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/schedlab/schedlab/internal/cpumask"
	"github.com/schedlab/schedlab/internal/topology"
)

// shares runs the integer sharing and returns each task's fraction.
func shares(tab *Table, tasks []MemTask) []float64 {
	out := make([]Share, len(tasks))
	tab.NewMemSharer().Shares(tasks, out)
	f := make([]float64, len(out))
	for i, s := range out {
		f[i] = math.Min(1, float64(s.Num)/float64(s.Den))
	}
	return f
}

func memTasks(cpus []cpumask.CPU, demand int64, memNode int) []MemTask {
	var out []MemTask
	for _, c := range cpus {
		out = append(out, MemTask{CPU: c, Demand: demand, MemNode: memNode})
	}
	return out
}

func cpuRange(lo, n int) []cpumask.CPU {
	var out []cpumask.CPU
	for c := lo; c < lo+n; c++ {
		out = append(out, cpumask.CPU(c))
	}
	return out
}

// docs/costs.md's examples: eight STREAM threads on one Zen3 CCX get
// 51.2/8 = 6.4 GB/s each; four on four CCXs their core's 28; all 64 cores
// of node 0 share its 170.
func TestMemSharesExamples(t *testing.T) {
	s := preset(t, "zen3-2s-nps1")
	p := mustFor(t, s)
	tab := Compile(p, s)
	const d = 100000 // 100 GB/s asked: more than any limit
	check := func(name string, tasks []MemTask, wantGBps float64) {
		t.Helper()
		for i, f := range shares(tab, tasks) {
			if got := f * d / 1000; math.Abs(got-wantGBps) > 1e-6 {
				t.Errorf("%s: task %d gets %.6f GB/s, want %.6f", name, i, got, wantGBps)
			}
		}
	}
	check("one CCX", memTasks(cpuRange(0, 8), d, -1), p.MemBWLLC/8)
	var spread []cpumask.CPU
	for l := range 4 {
		spread = append(spread, cpumask.CPU(8*l))
	}
	check("four CCXs", memTasks(spread, d, -1), p.MemBWCore)
	check("node 0", memTasks(cpuRange(0, 64), d, -1), p.MemBWNode/64)
	// Memory on node 1 draws on node 1's bandwidth wherever the tasks run.
	far := append(memTasks(cpuRange(0, 32), d, 1), memTasks(cpuRange(64, 32), d, -1)...)
	check("64 tasks on node 1's memory", far, p.MemBWNode/64)
}

// A saturated LLC's tasks stop at its share; the node's remainder goes to
// the others (the limits used not to redistribute: every task of the node
// was held to node/total demand).
func TestMemSharesRedistribute(t *testing.T) {
	s := preset(t, "zen3-2s-nps1")
	p := mustFor(t, s)
	tab := Compile(p, s)
	const d = 20000 // 20 GB/s, under the core limit
	// 8 tasks on CCX 0 (51.2 for 160 asked: 0.32 each) and 8 alone on
	// CCXs 1..7 and 0's node (8 × 20 = 160 more): the node's 170 leaves
	// 170 − 51.2 = 118.8 for the 8, 14.85 each, 0.7425 of their demand.
	tasks := memTasks(cpuRange(0, 8), d, -1)
	for l := 1; l <= 7; l++ {
		tasks = append(tasks, MemTask{CPU: cpumask.CPU(8 * l), Demand: d})
	}
	tasks = append(tasks, MemTask{CPU: 9, Demand: d}) // CCX 1's second task
	got := shares(tab, tasks)
	for i := range 8 {
		if math.Abs(got[i]-p.MemBWLLC/8/20) > 1e-9 {
			t.Errorf("CCX 0 task %d: %v, want %v", i, got[i], p.MemBWLLC/8/20)
		}
	}
	want := (p.MemBWNode - p.MemBWLLC) / 8 / 20
	for i := 8; i < len(tasks); i++ {
		if math.Abs(got[i]-want) > 1e-9 {
			t.Errorf("task %d on cpu %d: %v, want %v", i, tasks[i].CPU, got[i], want)
		}
	}
}

// The integer sharing is the float one, and is max-min fair: no limit is
// exceeded, and every task is at its own limit or behind a full limit in
// which no task gets a larger fraction.
func TestMemSharesMatchOracle(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, mp := range topology.Presets() {
		spec := preset(t, mp.Name)
		def := mustFor(t, spec)
		for trial := range 60 {
			p := def.Clone()
			if trial%3 != 0 {
				p.MemBWCore = 1 + r.Float64()*40
				p.MemBWLLC = 1 + r.Float64()*100
				p.MemBWNode = 1 + r.Float64()*200
			}
			tab := Compile(p, spec)
			// The oracle takes the limits as compiled (whole bytes per µs).
			p.MemBWCore, p.MemBWLLC, p.MemBWNode = float64(tab.CoreBandwidth)/1000, float64(tab.LLCBandwidth)/1000, float64(tab.NodeBandwidth)/1000
			n := 1 + r.IntN(min(48, len(spec.CPUs)))
			var tasks []MemTask
			var dem []MemDemand
			for _, c := range r.Perm(len(spec.CPUs))[:n] {
				d := int64(r.IntN(40000))
				if r.IntN(8) == 0 {
					d = 0
				}
				mn := -1
				if r.IntN(3) == 0 {
					mn = r.IntN(spec.NrNodes())
				}
				tasks = append(tasks, MemTask{CPU: cpumask.CPU(c), Demand: d, MemNode: mn})
				dem = append(dem, MemDemand{CPU: cpumask.CPU(c), Demand: float64(d) / 1000, MemNode: mn})
			}
			got, want := shares(tab, tasks), p.MemShares(spec, dem)
			for i := range tasks {
				if math.Abs(got[i]-want[i]) > 1e-6 {
					t.Fatalf("%s trial %d: task %d (%+v) gets %v, oracle %v", mp.Name, trial, i, tasks[i], got[i], want[i])
				}
			}
			checkMaxMin(t, spec, tab, tasks, got)
		}
	}
}

func checkMaxMin(t *testing.T, spec *topology.MachineSpec, tab *Table, tasks []MemTask, f []float64) {
	t.Helper()
	type key struct {
		kind string
		id   int
	}
	caps := map[key]float64{}
	members := map[key][]int{}
	for i, tk := range tasks {
		if tk.Demand <= 0 {
			continue
		}
		node := tk.MemNode
		if node < 0 {
			node = spec.CPUs[tk.CPU].Node
		}
		for _, k := range []key{{"llc", spec.CPUs[tk.CPU].LLC}, {"node", node}} {
			members[k] = append(members[k], i)
		}
		caps[key{"llc", spec.CPUs[tk.CPU].LLC}] = float64(tab.LLCBandwidth)
		caps[key{"node", node}] = float64(tab.NodeBandwidth)
	}
	used := map[key]float64{}
	for k, ms := range members {
		for _, i := range ms {
			used[k] += f[i] * float64(tasks[i].Demand)
		}
		if used[k] > caps[k]*(1+1e-9)+1e-6 {
			t.Fatalf("%s %d: %v granted of %v", k.kind, k.id, used[k], caps[k])
		}
	}
	for i, tk := range tasks {
		if tk.Demand <= 0 {
			if f[i] != 1 {
				t.Fatalf("task %d asks nothing and gets %v", i, f[i])
			}
			continue
		}
		own := math.Min(1, float64(tab.CoreBandwidth)/float64(tk.Demand))
		if f[i] > own*(1+1e-9) {
			t.Fatalf("task %d: %v over its own limit %v", i, f[i], own)
		}
		if f[i] >= own*(1-1e-9) {
			continue
		}
		bottleneck := false
		for k, ms := range members {
			in := false
			for _, j := range ms {
				in = in || j == i
			}
			if !in || used[k] < caps[k]*(1-1e-6) {
				continue
			}
			top := true
			for _, j := range ms {
				top = top && f[j] <= f[i]*(1+1e-9)
			}
			bottleneck = bottleneck || top
		}
		if !bottleneck {
			t.Fatalf("task %d (%+v) at %v is below its limit %v with no full limit holding it back", i, tk, f[i], own)
		}
	}
}
