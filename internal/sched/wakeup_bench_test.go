package sched

import (
	"github.com/schedlab/schedlab/internal/kernels"
	"testing"

	"github.com/schedlab/schedlab/internal/cpumask"
	"github.com/schedlab/schedlab/internal/engine"
)

// BenchmarkWakeupPath simulates a pipe-like workload on zen3-2s-nps1: 96
// pairs of tasks that each compute 10 µs, wake their partner with WF_SYNC
// and block, beside 64 CPU-bound tasks, so wakeups go through
// select_task_rq_fair, wake_affine and select_idle_sibling with a partly
// busy machine. It reports simulated wakeups per second of wall time.
func BenchmarkWakeupPath(b *testing.B) {
	for _, kern := range kernels.Names() {
		b.Run(kern, func(b *testing.B) {
			k := newTestKernel(b, "zen3-2s-nps1", kern)
			var wakeups uint64
			k.Hooks.Wakeup = func(*Task, cpumask.CPU) { wakeups++ }
			n := k.NrCPUs()
			for i := 0; i < 64; i++ {
				if _, err := k.Fork(TaskSpec{Comm: "hog", CPU: cpumask.CPU(4 * i % n), Prog: loop(engine.Second, 0)}); err != nil {
					b.Fatal(err)
				}
			}
			for i := 0; i < 96; i++ {
				var a, c *Task
				ping := func(partner **Task) Program {
					ran := false
					return ProgramFunc(func(k *Kernel, t *Task) Op {
						if !ran {
							ran = true
							return Run(10 * engine.Microsecond)
						}
						ran = false
						if *partner != nil {
							k.WakeUp(*partner, WFSync)
						}
						return Block()
					})
				}
				var err error
				if a, err = k.Fork(TaskSpec{Comm: "ping", CPU: cpumask.CPU(i), Prog: ping(&c)}); err != nil {
					b.Fatal(err)
				}
				if c, err = k.Fork(TaskSpec{Comm: "pong", CPU: cpumask.CPU(i), Prog: ping(&a)}); err != nil {
					b.Fatal(err)
				}
			}
			k.Eng.RunUntil(10 * engine.Millisecond)
			wakeups = 0
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				k.Eng.RunUntil(k.Now() + engine.Millisecond)
			}
			b.ReportMetric(float64(wakeups)/b.Elapsed().Seconds(), "wakeups/s")
			b.ReportMetric(float64(wakeups)/float64(b.N), "wakeups/op")
		})
	}
}

// BenchmarkSelectTaskRqFair times one placement decision on zen3-2s-nps1
// with LLC0's SMT siblings busy and nr_idle_scan 3, the state of
// TestShortTaskVariants: wake_affine at PKG, then an LLC scan.
func BenchmarkSelectTaskRqFair(b *testing.B) {
	r := newRig(b, "zen3-2s-nps1", kernels.V619)
	for c := 128; c <= 135; c++ {
		r.hog(c)
	}
	r.hog(8)
	waker := r.hog(0)
	p := r.sleeper(8, 100*engine.Microsecond)
	r.run(20 * engine.Millisecond)
	r.unpin(p)
	r.setIdleScan(0, 768)
	r.setIdleScan(8, 768)
	k := r.on(0)
	if k.Current() != waker {
		b.Fatal("waker not current")
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		k.selectTaskRqFair(p, 8, WFTTWU)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "selections/s")
}
