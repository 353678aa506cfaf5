// Package background adds the background cgroups of a desktop or phone to
// a run (schedlab run --background-cgroups N): N cgroups, each holding one
// task that wakes briefly now and then, so that the blocked-load paths
// (update_blocked_averages walking every leaf cfs_rq with undecayed load)
// have the work they have on such machines (patches.md §3).
package background

import (
	"fmt"

	"github.com/schedlab/schedlab/internal/cpumask"
	"github.com/schedlab/schedlab/internal/engine"
	"github.com/schedlab/schedlab/internal/sched"
)

// Run and sleep times of a background task: it sleeps 50 to 250 ms
// (uniformly, from the run's "background" random stream) and runs 300 µs.
const (
	MinSleep = 50 * engine.Millisecond
	MaxSleep = 250 * engine.Millisecond
	RunTime  = 300 * engine.Microsecond
)

// Add creates n cgroups /bg000.. under the root, each with one task forked
// on CPU i mod NrCPUs (from where the wakeup path places it).
func Add(k *sched.Kernel, n int) error {
	if n < 0 {
		return fmt.Errorf("background cgroups: %d is negative", n)
	}
	rnd := k.Eng.Rand("background")
	for i := 0; i < n; i++ {
		tg, err := k.CreateGroup(nil, fmt.Sprintf("bg%03d", i), 100)
		if err != nil {
			return err
		}
		phase := 0
		prog := sched.ProgramFunc(func(k *sched.Kernel, p *sched.Task) sched.Op {
			phase++
			if phase%2 == 1 {
				return sched.Sleep(MinSleep + engine.Time(rnd.Int64N(int64(MaxSleep-MinSleep))))
			}
			return sched.Run(RunTime)
		})
		// The machine's other processes: not confined by --cpus.
		all := cpumask.Full(k.NrCPUs())
		if _, err := k.Fork(sched.TaskSpec{Comm: "bg", Group: tg, CPU: cpumask.CPU(i % k.NrCPUs()), Allowed: all, Prog: prog}); err != nil {
			return err
		}
	}
	return nil
}
