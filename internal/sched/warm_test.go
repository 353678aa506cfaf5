package sched

import (
	"fmt"
	"testing"

	"github.com/schedlab/schedlab/internal/cpumask"
	"github.com/schedlab/schedlab/internal/engine"
	"github.com/schedlab/schedlab/internal/kernels"
)

// idleLLCScan is what fair.c:update_idle_cpu_scan (v6.0, v6.19) stores for
// an LLC of llcWeight CPUs whose summed cpu_util_cfs is sumUtil, in the
// kernel's unsigned arithmetic, written out here from the kernel's steps
// (not through the model's function):
//
//	x = sum_util / llc_weight
//	tmp = min(x² × pct² / (10000 × 1024), 1024)
//	y = (1024 − tmp) × llc_weight / 1024
func idleLLCScan(llcWeight, sumUtil, pct uint64) int {
	x := sumUtil / llcWeight
	tmp := x * x * pct * pct / (10000 * 1024)
	if tmp > 1024 {
		tmp = 1024
	}
	return int((1024 - tmp) * llcWeight / 1024)
}

// TestWarmLLCShared: Settings.WarmLLCShared starts every sd_llc_shared's
// nr_idle_scan where the last periodic balance of an idle LLC leaves it
// (update_idle_cpu_scan with sum_util = 0: the whole LLC), and without it
// at the zero of a fresh allocation. What that decides, alone: the run's
// first wakeup onto a busy target, before any balance, finds the LLC's
// first idle CPU after target with the warm value (SIS_UTIL's nr =
// nr_idle_scan + 1 leaves a budget) and nothing with the boot value
// (nr == 1: "an overloaded LLC is unlikely to have an idle CPU"), so the
// wakee would stack on target.
//
// has_idle_cores starts set on a machine with SMT when warm (every core
// idle), clear otherwise (until the first CPU that goes idle sets it, as
// P's does here before the probe).
//
// The state: a hog on CPU 0, nothing else; P (pinned elsewhere, then
// unpinned) is the wakee; select_idle_cpu(P, sd_llc(0), false, 0) is
// asked from the hog's CPU at 1 ms, before the first tick's balance.
//
// Reference: fair.c:update_idle_cpu_scan, select_idle_cpu (v6.0, v6.19);
// topology.c:sd_init's kzalloc'd sched_domain_shared.
func TestWarmLLCShared(t *testing.T) {
	for _, kern := range []string{kernels.V60, kernels.V619} {
		for _, m := range []struct {
			name   string
			weight int
			pcpu   int // where P starts: another CPU of CPU 0's LLC, not CPU 1
		}{{"zen3-2s-nps1", 16, 5}, {"kunpeng920-128", 32, 9}} {
			for _, warm := range []bool{true, false} {
				t.Run(fmt.Sprintf("%s/%s/warm=%v", kern, m.name, warm), func(t *testing.T) {
					s := MustBaseline(kern)
					if !s.SISUtil {
						t.Fatalf("%s: SIS_UTIL off in the baseline", kern)
					}
					s.WarmLLCShared = warm
					s.BalancePhase = false
					r := newRigAsIs(t, m.name, s)
					k := r.k
					sd := r.llc(0)
					if w := sd.T.SpanWeight; w != m.weight {
						t.Fatalf("span_weight(sd_llc(0)) = %d, want %d", w, m.weight)
					}
					want := 0
					if warm {
						want = idleLLCScan(uint64(m.weight), 0, uint64(sd.T.ImbalancePct))
						if want != m.weight {
							t.Fatalf("derivation: an idle LLC's nr_idle_scan %d, want llc_weight %d", want, m.weight)
						}
					}
					// has_idle_cores: set by the idle machine's CPUs
					// only where a core has siblings.
					wantIdleCores := warm && k.Topo.SMTPresent
					for cpu := range k.NrCPUs() {
						if sds := k.SdLLCShared(cpu); sds != nil && (sds.NrIdleScan != want || sds.HasIdleCores != wantIdleCores) {
							t.Fatalf("cpu%d: nr_idle_scan %d, has_idle_cores %v at boot, want %d and %v", cpu, sds.NrIdleScan, sds.HasIdleCores, want, wantIdleCores)
						}
					}
					p := r.spawn("p", m.pcpu, 0, SchedNormal, runThenBlock(10*engine.Microsecond))
					probed := false
					var got cpumask.CPU
					r.spawn("hog", 0, 0, SchedNormal, ProgramFunc(func(k *Kernel, h *Task) Op {
						if !probed && k.Now() >= engine.Millisecond {
							probed = true
							if p.OnRq != 0 || k.Rqs[1].Curr != k.Rqs[1].Idle {
								t.Fatalf("probe state: p on_rq %d, cpu1 runs %s", p.OnRq, k.Rqs[1].Curr.Comm)
							}
							if n := k.SdLLCShared(0).NrIdleScan; n != want {
								t.Fatalf("nr_idle_scan %d at the probe, want %d (a balance ran first)", n, want)
							}
							r.unpin(p)
							got = k.selectIdleCPU(p, sd, false, 0)
						}
						return Run(100 * engine.Microsecond)
					}))
					r.run(2 * engine.Millisecond)
					if !probed {
						t.Fatal("the hog never ran past 1 ms")
					}
					wantCPU := cpumask.CPU(1) // the first idle CPU after target
					if !warm {
						wantCPU = cpumask.None
					}
					if got != wantCPU {
						t.Errorf("select_idle_cpu at the first wakeup = %v, want %v", got, wantCPU)
					}
				})
			}
		}
	}
}
