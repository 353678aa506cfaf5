package sched

import (
	"github.com/schedlab/schedlab/internal/kernels"
	"testing"
	"time"

	"github.com/schedlab/schedlab/internal/cpumask"
	"github.com/schedlab/schedlab/internal/engine"
)

// BenchmarkPeriodicBalance simulates zen3-2s-nps1 with 320 tasks that
// compute 3 ms and sleep 1 ms, all started on the 64 cores of one socket's
// first half and free to run anywhere, with the documented balancing
// costs: periodic balance at every level from SMT to NUMA, NOHZ idle
// balancing by kicked idle CPUs, newly idle pulls and active balances all
// run. Each iteration simulates 50 ms; the benchmark reports simulated
// events per second of wall time, and the balancing passes per iteration.
func BenchmarkPeriodicBalance(b *testing.B) {
	for _, kern := range kernels.Names() {
		b.Run(kern, func(b *testing.B) {
			k := lbKernel(b, "zen3-2s-nps1", MustBaseline(kern), true)
			n := k.NrCPUs()
			for i := 0; i < 320; i++ {
				lbFork(b, k, "task", i%64, cpumask.Full(n), loop(3*engine.Millisecond, engine.Millisecond))
			}
			k.Eng.RunUntil(100 * engine.Millisecond) // spread the tasks first
			ev0, pb0 := k.Eng.Events(), k.BalanceStats.PeriodicBalance.Calls
			b.ResetTimer()
			start := time.Now()
			for i := 0; i < b.N; i++ {
				k.Eng.RunUntil(k.Now() + 50*engine.Millisecond)
			}
			el := time.Since(start).Seconds()
			b.StopTimer()
			if el > 0 {
				b.ReportMetric(float64(k.Eng.Events()-ev0)/el, "events/s")
			}
			b.ReportMetric(float64(k.BalanceStats.PeriodicBalance.Calls-pb0)/float64(b.N), "softirqs/op")
		})
	}
}
