package sched

import (
	"testing"

	"github.com/schedlab/schedlab/internal/cpumask"
	"github.com/schedlab/schedlab/internal/engine"
	"github.com/schedlab/schedlab/internal/kernels"
)

// TestCPUUtilCfs: cpuUtilCfs, spelled out for the balancer, is cpuUtil
// without a task or a boost (fair.c:cpu_util_cfs is cpu_util(cpu, NULL, -1,
// 0), v6.19) on every CPU after every event, on a machine with two
// capacities, on every baseline (util_est on and off).
func TestCPUUtilCfs(t *testing.T) {
	for _, kern := range kernels.Names() {
		t.Run(kern, func(t *testing.T) {
			r := newRig(t, "hikey960", kern)
			for c := 0; c < r.k.NrCPUs(); c++ {
				r.spawn("hog", c, 0, SchedNormal, loop(engine.Time(c+1)*300*engine.Microsecond, engine.Time(8-c)*200*engine.Microsecond))
			}
			checked, busy := 0, 0
			r.k.Hooks.AfterEvent = func(k *Kernel) {
				for c := range k.Rqs {
					cpu := cpumask.CPU(c)
					if got, want := k.cpuUtilCfs(cpu), k.cpuUtil(cpu, nil, cpumask.None, false); got != want {
						t.Fatalf("at %v: cpuUtilCfs(%d) = %d, cpuUtil = %d", k.Now(), c, got, want)
					}
					checked++
					if k.cpuUtilCfs(cpu) > k.Rqs[c].CPUCapacityOrig/2 {
						busy++
					}
				}
			}
			r.run(200 * engine.Millisecond)
			if busy == 0 {
				t.Fatalf("%d checks, none of a CPU past half its capacity: the run does not exercise cpuUtilCfs", checked)
			}
		})
	}
}
