package costmodel

import (
	"math"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/schedlab/schedlab/internal/cpumask"
	"github.com/schedlab/schedlab/internal/engine"
	"github.com/schedlab/schedlab/internal/topology"
)

// The integer tables are checked against the floating-point formulas
// (oracle.go's Params methods) over every preset, CPU pairs at every
// distance, and random parameters: the integer form is what runs, the
// float form is what docs/costs.md writes down.

// samplePairs returns up to limit pairs of CPUs of spec, covering every
// distance the machine has, deterministically.
func samplePairs(spec *topology.MachineSpec, limit int) [][2]cpumask.CPU {
	n := len(spec.CPUs)
	var out [][2]cpumask.CPU
	step := max(1, n*n/limit)
	for i := 0; i < n*n; i += step {
		out = append(out, [2]cpumask.CPU{cpumask.CPU(i / n), cpumask.CPU(i % n)})
	}
	// Make sure of one pair per distance from CPU 0.
	seen := map[Distance]bool{}
	for b := range n {
		d := DistanceOf(spec, 0, cpumask.CPU(b))
		if !seen[d] {
			seen[d] = true
			out = append(out, [2]cpumask.CPU{0, cpumask.CPU(b)})
		}
	}
	return out
}

// randomParams draws every parameter inside its range (log-uniformly for
// wide ranges), the way a costs file may set them.
func randomParams(r *rand.Rand, base *Params) *Params {
	p := base.Clone()
	for _, q := range All() {
		lo, hi := q.Min, q.Max
		// Keep the draws to magnitudes a machine has: the ranges are
		// generous bounds, not plausible values.
		hi = math.Min(hi, math.Max(lo, 10*base.Get(q.Key)+10))
		var v float64
		if lo > 0 {
			v = math.Exp(math.Log(lo) + r.Float64()*(math.Log(hi)-math.Log(lo)))
		} else {
			v = r.Float64() * hi
		}
		if q.Integer {
			v = math.Round(v)
		}
		v = math.Max(lo, math.Min(hi, v))
		if err := p.Set(q.Key, v, "random"); err != nil {
			panic(err)
		}
	}
	return p
}

func TestTableMatchesOracle(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, mp := range topology.Presets() {
		spec := preset(t, mp.Name)
		def := mustFor(t, spec)
		for trial := range 4 {
			p := def
			if trial > 0 {
				p = randomParams(r, def)
			}
			tab := Compile(p, spec)
			for _, pr := range samplePairs(spec, 400) {
				a, b := pr[0], pr[1]
				if got, want := tab.Distance(a, b), DistanceOf(spec, a, b); got != want {
					t.Fatalf("%s: Distance(%d, %d) = %v, want %v", mp.Name, a, b, got, want)
				}
				if got, want := tab.IPILatency(a, b), p.IPILatency(spec, a, b); got != want {
					t.Errorf("%s trial %d: IPILatency(%d, %d) = %v, oracle %v", mp.Name, trial, a, b, got, want)
				}
				if got, want := tab.LLCLineRead(a, b), p.LLCLineRead(spec, a, b); got != want {
					t.Errorf("%s trial %d: LLCLineRead(%d, %d) = %v, oracle %v", mp.Name, trial, a, b, got, want)
				}
				memNode := r.IntN(spec.NrNodes()+1) - 1
				for range 3 {
					fp := int64(math.Exp(r.Float64() * math.Log(256<<20)))
					away := engine.Time(math.Exp(r.Float64() * math.Log(float64(engine.Second))))
					got, want := tab.CacheRefill(a, b, fp, away, memNode), p.CacheRefill(spec, a, b, fp, away, memNode)
					if d := math.Abs(float64(got - want)); d > refillTolerance(tab, fp, want) {
						t.Errorf("%s trial %d: CacheRefill(%d→%d, %d B, %v, mem %d) = %v, oracle %v", mp.Name, trial, a, b, fp, away, memNode, got, want)
					}
				}
				if mn := spec.CPUs[b].Node; trial == 0 {
					const s = 1 << 20
					want := s / p.RemoteMemFactorFor(spec, a, mn)
					if got := tab.RemoteMemSpeed(s, spec.CPUs[a].Node, mn); math.Abs(float64(got)-want) > 0.001*want+1 {
						t.Errorf("%s: RemoteMemSpeed(cpu %d, mem node %d) = %d, oracle %.0f", mp.Name, a, mn, got, want)
					}
				}
			}
			const s = 1 << 20
			if got, want := tab.SMTSpeed(s, true), s*p.SMTSpeed(true); math.Abs(float64(got)-want) > s/2048+1 {
				t.Errorf("%s: SMTSpeed %d, oracle %.0f", mp.Name, got, want)
			}
			if got := tab.SMTSpeed(s, false); got != s {
				t.Errorf("%s: SMTSpeed alone %d", mp.Name, got)
			}
			sc := &tab.Syscalls
			for _, n := range []int{0, 1, 100, 999, 1 << 16} {
				// The copy is kept in whole ns per 1000 bytes.
				tol := float64(n)/2000 + 1
				for _, c := range []struct {
					name      string
					got, want engine.Time
				}{
					{"PipeWriteCost", sc.PipeWriteCost(n), p.PipeWriteCost(n)},
					{"PipeReadCost", sc.PipeReadCost(n), p.PipeReadCost(n)},
					{"UnixSendCost", sc.UnixSendCost(n), p.UnixSendCost(n)},
					{"UnixRecvCost", sc.UnixRecvCost(n), p.UnixRecvCost(n)},
					{"TCPSendCost", sc.TCPSendCost(n), p.TCPSendCost(n)},
					{"TCPRecvCost", sc.TCPRecvCost(n), p.TCPRecvCost(n)},
				} {
					if math.Abs(float64(c.got-c.want)) > tol {
						t.Errorf("%s trial %d: %s(%d) = %v, oracle %v", mp.Name, trial, c.name, n, c.got, c.want)
					}
				}
			}
			for _, c := range []struct {
				got  engine.Time
				want engine.Time
			}{{sc.Poll, p.Poll}, {sc.Futex, p.Futex}, {sc.Clock, p.Clock}, {sc.Fork, p.Fork}, {sc.ThreadCreate, p.ThreadCreate},
				{sc.ExitProcess, p.ExitProcess}, {sc.ExitThread, p.ExitThread}, {sc.Reap, p.Reap}} {
				if c.got != c.want {
					t.Errorf("%s trial %d: a system call costs %v, its parameter %v", mp.Name, trial, c.got, c.want)
				}
			}
			b := &tab.Balance
			for _, n := range []int{0, 1, 7, 100} {
				if got, want := b.BlockedAverages(uint64(n)), p.BlockedAverages(n); got != want {
					t.Errorf("%s: BlockedAverages(%d) = %v, oracle %v", mp.Name, n, got, want)
				}
				if got, want := b.CpufreqUpdate(n), p.CpufreqUpdateCost(n); got != want {
					t.Errorf("%s: CpufreqUpdate(%d) = %v, oracle %v", mp.Name, n, got, want)
				}
				if got, want := b.SgStats(n), p.LoadBalanceStats(1, n); got != want {
					t.Errorf("%s: SgStats(%d) = %v, oracle %v", mp.Name, n, got, want)
				}
			}
		}
	}
}

// refillTolerance bounds the difference between CacheRefill and its
// oracle: the decay interpolates linearly between steps of 1/32 of a
// halving (within 6·10^−5 of exp, for the private and the LLC part, each
// byte at the dearest refill rate); rates are kept in whole fs per byte
// (half a fs per byte at most) and the fill rate in whole bytes per µs
// (which moves x·e^−x ≤ 1/e of a part by 0.5/fill).
func refillTolerance(tab *Table, fp int64, want engine.Time) float64 {
	dearest := float64(max(tab.RefillLLCFs, tab.RefillMemFs))
	for _, row := range tab.RefillFarFs {
		for _, f := range row {
			dearest = math.Max(dearest, float64(f))
		}
	}
	remote := 1.0
	for _, row := range tab.RemoteMem1024 {
		for _, r := range row {
			remote = math.Max(remote, float64(r)/1024)
		}
	}
	P, L := float64(min(fp, tab.PrivateBytes)), float64(min(fp, tab.LLCBytes))
	fill := (P + L) * 0.5 / math.E / float64(max(1, tab.FillBytesPerUs))
	return ((1e-4*(P+L)+fill+2)*dearest+(P+L)*0.5)*remote/1e6 + 1e-4*float64(want) + 2
}

// Decay32 is 2^(−n/32) to within the 32-bit table's rounding.
func TestDecay32(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 10000 {
		v := r.Uint64N(1 << 40)
		n := r.Uint64N(decaySteps * 70)
		got := Decay32(v, n)
		want := float64(v) * math.Exp2(-float64(n)/decaySteps)
		if n > decaySteps*63 {
			want = 0
		}
		// The shift by whole halvings truncates first, and the table
		// holds (2^32−1)·y^i: a few units of error at most.
		if math.Abs(float64(got)-want) > want*1e-9+float64(uint64(1)<<(n/decaySteps))+2 {
			t.Fatalf("Decay32(%d, %d) = %d, want %.1f", v, n, got, want)
		}
	}
}

// None charges nothing.
func TestNoneChargesNothing(t *testing.T) {
	spec := preset(t, "zen3-2s-nps4")
	tab := None(spec)
	for _, pr := range samplePairs(spec, 200) {
		a, b := pr[0], pr[1]
		if tab.IPILatency(a, b) != 0 || tab.LLCLineRead(a, b) != 0 || tab.CacheRefill(a, b, 1<<30, engine.Second, 3) != 0 {
			t.Fatalf("None charges for %d→%d", a, b)
		}
	}
	if tab.SMTSpeed(1000, true) != 1000 || tab.RemoteMemSpeed(1000, 0, 7) != 1000 {
		t.Error("None slows work down")
	}
}

// notCharged are the parameters no cost of a run depends on, and why.
var notCharged = map[string]string{
	"syscall_ns": "calibration measures it as the reference null call; no workload makes one",
}

// Every parameter reaches the compiled table (so a costs file that sets
// it changes what a run charges), except those notCharged lists.
func TestEveryParameterReachesTheTable(t *testing.T) {
	spec := preset(t, "zen3-2s-nps1")
	p := mustFor(t, spec)
	base := Compile(p, spec)
	for _, q := range All() {
		c := p.Clone()
		v := p.Get(q.Key)
		nv := math.Min(q.Max, v*2+1)
		if nv == v {
			nv = math.Max(q.Min, v/2)
		}
		if err := c.Set(q.Key, nv, "test"); err != nil {
			t.Fatal(err)
		}
		changed := !reflect.DeepEqual(Compile(c, spec), base)
		if _, exempt := notCharged[q.Key]; changed == exempt {
			t.Errorf("%s from %v to %v: table changed %v, exempt %v", q.Key, v, nv, changed, exempt)
		}
	}
}
