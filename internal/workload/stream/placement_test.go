package stream

import (
	"fmt"
	"sort"
	"testing"

	"github.com/schedlab/schedlab/internal/cpumask"
	"github.com/schedlab/schedlab/internal/engine"
	"github.com/schedlab/schedlab/internal/kernels"
	"github.com/schedlab/schedlab/internal/sched"
	"github.com/schedlab/schedlab/internal/topology"
)

// forkPlacement runs STREAM with OMP_NUM_THREADS=16 on an idle
// zen3-2s-nps1 under the baseline and returns the CPU wake_up_new_task
// chose for the master and for each of the 15 team threads, in fork order.
func forkPlacement(t *testing.T, kernel string) []cpumask.CPU {
	t.Helper()
	spec, err := topology.Load("zen3-2s-nps1")
	if err != nil {
		t.Fatal(err)
	}
	topo, err := topology.Build(spec, topology.Options{Kernel: kernel})
	if err != nil {
		t.Fatal(err)
	}
	k, err := sched.New(engine.New(1), topo, sched.MustBaseline(kernel))
	if err != nil {
		t.Fatal(err)
	}
	var cpus []cpumask.CPU
	k.Hooks.WakeupNew = func(p *sched.Task, cpu cpumask.CPU) { cpus = append(cpus, cpu) }
	b := New(Config{ArraySize: 1 << 20, NTimes: 2, Threads: 16})
	if err := b.Start(k); err != nil {
		t.Fatal(err)
	}
	// The team is complete long before the first thread stops spinning
	// (libgomp's spin count is ~3 ms); no balancing moves a thread in
	// the meantime that this test would miss, as placement is read at
	// fork.
	k.Eng.RunUntil(engine.Millisecond)
	if len(cpus) != 16 {
		t.Fatalf("%d tasks forked by 1 ms, want the master and 15 threads", len(cpus))
	}
	return cpus
}

// llcOf and socketOf are zen3-2s-nps1's: LLC = (cpu mod 128) / 8,
// socket 0 = LLC 0-7.
func llcOf(c cpumask.CPU) int    { return int(c) % 128 / 8 }
func socketOf(c cpumask.CPU) int { return llcOf(c) / 8 }

// TestStreamForkPlacement derives where 16 STREAM threads forked on an
// idle zen3-2s-nps1 land, from each baseline's find_idlest_group, and
// checks the simulation (docs/kernels.md §10).
//
// Reference: fair.c:select_task_rq_fair (WF_FORK takes the slow path from
// the highest SD_BALANCE_FORK domain, NUMA(256): distance 32 is not above
// Zen's node_reclaim_distance 32), find_idlest_cpu, find_idlest_group,
// update_sg_wakeup_stats, update_pick_idlest, find_idlest_group_cpu, in
// v5.12 and v6.0 (v6.19's sched_balance_find_dst_* are v6.0's here).
//
// The master starts on CPU 0 and forks the team one thread at a time;
// every thread spins at once, so when thread k is forked the master and
// threads 1..k-1 each keep one CPU busy. r0 and r1 count them on sockets 0
// and 1. At each level the local group is kept when its idle-CPU count is
// at least the idlest group's (update_pick_idlest: more idle CPUs, ties to
// the lower group_util, then the first group from the local one); at the
// CPU level find_idlest_group_cpu takes the first idle CPU, all idle
// CPUs being in the same state and never run.
//
// v5.12 (allow_numa_imbalance: keep the node while r0 < 256 >> 2 = 64):
// every thread stays on socket 0. At DIE(0) threads 1-7 take the empty
// LLC1..LLC7 (CPU 8k); thread 8 finds every LLC at 15 idle CPUs and stays
// in LLC0, on the free core {1,129}: CPU 1; threads 9-15 go to LLC1..LLC7
// again, onto each LLC's second core (8k+1). Which of LLC1-7 a thread
// 9-15 takes depends on group_util ties among threads that were forked
// microseconds apart, so the test pins the per-LLC counts (two threads on
// each socket-0 LLC, on distinct cores, none on socket 1) and the set of
// CPUs of threads 9-15, not their order.
//
// v6.0 (adjust_numa_imbalance with imb_numa_nr = 8 and
// NUMA_IMBALANCE_MIN = 2 on the idle-CPU difference |r1 − r0|: keep
// socket 0 while r0 + 1 <= 8 and the difference is at most 2, or when
// there is none): threads alternate between the sockets, one per LLC —
// 8, 16, 64, 24, 72, 32, 80, 40, 88, 48, 96, 56, 104, 112, 120 (the table
// of docs/kernels.md §10.5). Every choice there is between an empty LLC
// and one with a busy CPU, or between idle counts, never a util tie, so
// the exact CPUs are robust. v6.19 decides the same.
func TestStreamForkPlacement(t *testing.T) {
	v6 := []cpumask.CPU{0, 8, 16, 64, 24, 72, 32, 80, 40, 88, 48, 96, 56, 104, 112, 120}
	for _, kern := range []string{kernels.V512, kernels.V60, kernels.V619} {
		t.Run(kern, func(t *testing.T) {
			got := forkPlacement(t, kern)
			if got[0] != 0 {
				t.Fatalf("master on cpu%d, want 0", got[0])
			}
			if kern != kernels.V512 {
				if fmt.Sprint(got) != fmt.Sprint(v6) {
					t.Fatalf("placement %v, want %v", got, v6)
				}
				perLLC := map[int]int{}
				for _, c := range got {
					perLLC[llcOf(c)]++
				}
				if len(perLLC) != 16 {
					t.Errorf("LLCs used %v, want one thread on each of the 16", perLLC)
				}
				return
			}
			// v5.12.
			for i := 1; i <= 7; i++ {
				if got[i] != cpumask.CPU(8*i) {
					t.Errorf("thread %d on cpu%d, want %d (the empty LLC%d)", i, got[i], 8*i, i)
				}
			}
			if got[8] != 1 {
				t.Errorf("thread 8 on cpu%d, want 1 (LLC0's free core)", got[8])
			}
			rest := append([]cpumask.CPU(nil), got[9:]...)
			sort.Slice(rest, func(i, j int) bool { return rest[i] < rest[j] })
			if want := []cpumask.CPU{9, 17, 25, 33, 41, 49, 57}; fmt.Sprint(rest) != fmt.Sprint(want) {
				t.Errorf("threads 9-15 on %v, want the second core of LLC1-7 %v", rest, want)
			}
			perLLC := map[int]int{}
			cores := map[int]bool{}
			for _, c := range got {
				if socketOf(c) != 0 {
					t.Errorf("a thread on cpu%d, socket 1", c)
				}
				perLLC[llcOf(c)]++
				cores[int(c)%128] = true
			}
			for l := 0; l < 8; l++ {
				if perLLC[l] != 2 {
					t.Errorf("LLC%d holds %d threads, want 2 (all counts %v)", l, perLLC[l], perLLC)
				}
			}
			if len(cores) != 16 {
				t.Errorf("threads share cores: %v", got)
			}
		})
	}
}
