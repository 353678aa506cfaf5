package sched

import (
	"testing"

	"github.com/schedlab/schedlab/internal/cpumask"
	"github.com/schedlab/schedlab/internal/engine"
	"github.com/schedlab/schedlab/internal/kernels"
)

// A wakeup onto another CPU moves RemoteEnqueueTaskLines of the wakee's
// lines from the CPU it last ran on and RemoteEnqueueRqLines of the target
// runqueue's from the target, each at the distance it crosses
// (Settings.RemoteEnqueueLines); off, none is charged. Kunpeng 920-128:
// CPUs 0-3 are one cluster, 0-31 one die (LLC and node), 32 the next die.
func TestRemoteEnqueueLinesByDistance(t *testing.T) {
	const cl, llc, far = 10, 40, 200
	mk := func(on bool) *Kernel {
		s := MustBaseline(kernels.V60)
		s.RemoteEnqueueLines = on
		k := newRigSettings(t, "kunpeng920-128", s).k
		k.Costs.LineSameCluster, k.Costs.LineSameLLC = cl, llc
		k.Costs.LineOther = [][]engine.Time{{far, far, far, far}, {far, far, far, far}, {far, far, far, far}, {far, far, far, far}}
		return k
	}
	k := mk(true)
	for _, c := range []struct {
		waker, last, target cpumask.CPU
		want                engine.Time
	}{
		{0, 1, 1, 2*cl + 2*cl},     // within the cluster
		{0, 4, 4, 2*llc + 2*llc},   // another cluster of the die
		{0, 0, 4, 0 + 2*llc},       // the task last ran on the waker's CPU
		{0, 4, 1, 2*llc + 2*cl},    // moved from another cluster into the waker's
		{0, 32, 32, 2*far + 2*far}, // the next die
	} {
		if got := k.remoteEnqueueLines(c.waker, c.last, c.target); got != c.want {
			t.Errorf("waker %d, last %d, target %d: %d ns, want %d", c.waker, c.last, c.target, got, c.want)
		}
	}
	if got := mk(false).remoteEnqueueLines(0, 32, 32); got != 0 {
		t.Errorf("model_remote_enqueue_lines=0: %d ns, want 0", got)
	}
}
