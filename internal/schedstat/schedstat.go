// Package schedstat holds /proc/schedstat snapshots: the per-runqueue and
// per-sched-domain counters of kernel/sched/stats.c, printed byte for byte as
// the kernel's show_schedstat prints them in schedstat versions 15, 16 and
// 17, read back from any of the three, subtracted (Diff), and compared
// across runs in the layout scheduler developers post (sched-scoreboard's
// comparator and `perf sched stats diff`).
//
// The simulator fills Snapshot values; this package only knows the format.
// Field names are the kernel's, in Go case: yld_count is YldCount,
// lb_nobusyq is LbNobusyq.
//
// Versions (kernel/sched/stats.c, Documentation/scheduler/sched-stats.rst):
//
//	15 (up to v6.9):   domain<N> <cpumask>, 8 load-balance fields per idle
//	                   type in the order CPU_IDLE, CPU_NOT_IDLE,
//	                   CPU_NEWLY_IDLE, then 12 more: 36 numbers.
//	16 (v6.10-v6.13):  the same 36 numbers, idle types in the new enum
//	                   order busy (__CPU_NOT_IDLE), idle, newly idle.
//	17 (v6.14 on):     domain<N> <name> <cpumask>, 11 fields per idle type
//	                   (lb_imbalance split into load/util/task/misfit),
//	                   busy, idle, newly idle, then the 12: 45 numbers.
//
// The CPU line is the same in all three: cpu<N> yld_count array_exp
// sched_count sched_goidle ttwu_count ttwu_local rq_cpu_time run_delay
// pcount.
package schedstat

import (
	"bufio"
	"fmt"
	"io"
	"strconv"

	"github.com/schedlab/schedlab/internal/cpumask"
)

// IdleType indexes the load-balance counters by the idle state of the CPU
// balancing (enum cpu_idle_type, v6.10 and later order).
type IdleType int

const (
	// CPUNotIdle is __CPU_NOT_IDLE: the periodic balance of a busy CPU.
	CPUNotIdle IdleType = iota
	// CPUIdle is CPU_IDLE: periodic or nohz balance of an idle CPU.
	CPUIdle
	// CPUNewlyIdle is CPU_NEWLY_IDLE: balance of a CPU about to go idle.
	CPUNewlyIdle
	// NumIdleTypes is CPU_MAX_IDLE_TYPES.
	NumIdleTypes
)

// String names the idle type as perf sched stats does (busy, idle, newidle).
func (t IdleType) String() string {
	switch t {
	case CPUNotIdle:
		return "busy"
	case CPUIdle:
		return "idle"
	case CPUNewlyIdle:
		return "newidle"
	}
	return "idletype(" + strconv.Itoa(int(t)) + ")"
}

// LBStats are one idle type's load-balance counters of a domain.
type LBStats struct {
	LbCount    uint64 // lb_count: sched_balance_rq calls
	LbBalanced uint64 // lb_balanced: found balanced (or all pinned)
	LbFailed   uint64 // lb_failed: busiest found but nothing moved
	// LbImbalance is the undivided lb_imbalance of versions 15 and 16; only
	// Parse of such a file sets it. Version 15/16 output prints it plus the
	// four split counters, as the old kernels summed every migration type.
	LbImbalance       uint64
	LbImbalanceLoad   uint64 // lb_imbalance_load (v17)
	LbImbalanceUtil   uint64 // lb_imbalance_util (v17)
	LbImbalanceTask   uint64 // lb_imbalance_task (v17)
	LbImbalanceMisfit uint64 // lb_imbalance_misfit (v17)
	LbGained          uint64 // lb_gained: tasks pulled
	LbHotGained       uint64 // lb_hot_gained: pulled though cache-hot
	LbNobusyq         uint64 // lb_nobusyq: no busiest queue
	LbNobusyg         uint64 // lb_nobusyg: no busiest group
}

// ImbalanceSum is lb_imbalance as versions 15 and 16 print it.
func (l *LBStats) ImbalanceSum() uint64 {
	return l.LbImbalance + l.LbImbalanceLoad + l.LbImbalanceUtil + l.LbImbalanceTask + l.LbImbalanceMisfit
}

// DomainStats are one sched domain's counters as seen from one CPU.
type DomainStats struct {
	// Level is N of domain<N>: the index among the CPU's surviving
	// domains, bottom-up from 0.
	Level int
	// Name is the level's name (SMT, CLS, MC, PKG, NODE, NUMA); printed
	// from version 17.
	Name string
	// Span is the domain's cpumask; its Size is nr_cpu_ids.
	Span cpumask.Mask
	// LB holds the load-balance counters per idle type.
	LB [NumIdleTypes]LBStats

	AlbCount, AlbFailed, AlbPushed   uint64 // active_load_balance_cpu_stop
	SbeCount, SbeBalanced, SbePushed uint64 // sched_balance_exec (unused, 0)
	SbfCount, SbfBalanced, SbfPushed uint64 // sched_balance_fork (unused, 0)
	TtwuWakeRemote                   uint64 // ttwu_wake_remote
	TtwuMoveAffine                   uint64 // ttwu_move_affine
	TtwuMoveBalance                  uint64 // ttwu_move_balance (unused, 0)
}

// CPUStats are one runqueue's counters and its domains, bottom-up.
type CPUStats struct {
	CPU         cpumask.CPU
	YldCount    uint64 // yld_count: sched_yield calls
	ArrayExp    uint64 // the legacy O(1) expired-array count: the kernel prints 0
	SchedCount  uint64 // sched_count: __schedule calls
	SchedGoidle uint64 // sched_goidle: times the idle task was picked
	TtwuCount   uint64 // ttwu_count: wakeups done by this CPU
	TtwuLocal   uint64 // ttwu_local: ... of a task onto this CPU
	RqCPUTime   uint64 // rq_cpu_time: ns tasks ran here
	RunDelay    uint64 // run_delay: ns tasks waited here
	Pcount      uint64 // pcount: timeslices run here
	Domains     []DomainStats
}

// Snapshot is one reading of /proc/schedstat.
type Snapshot struct {
	// Version is the version Parse read (0 for a snapshot built in code);
	// Format takes the version to print separately.
	Version int
	// Timestamp is jiffies at the reading.
	Timestamp uint64
	// CPUs are the online CPUs in increasing order.
	CPUs []CPUStats
}

// UnsupportedVersionError is returned for a schedstat version other than
// 15, 16 or 17.
type UnsupportedVersionError struct{ Version int }

func (e *UnsupportedVersionError) Error() string {
	return fmt.Sprintf("schedstat version %d not supported (15, 16 or 17)", e.Version)
}

// AppendBitmap appends m as the kernel's "%*pb" over m.Size() bits
// (lib/vsprintf.c:bitmap_string): lower-case hex, most significant 32-bit
// chunk first, chunks separated by commas, every chunk 8 digits wide except
// the first, which is only as wide as the leftover bits need.
func AppendBitmap(b []byte, m cpumask.Mask) []byte {
	const hex = "0123456789abcdef"
	n := m.Size()
	chunk := n % 32
	if chunk == 0 {
		chunk = 32
	}
	first := true
	for lo := (n+31)/32*32 - 32; lo >= 0; lo -= 32 {
		var v uint32
		for i := 0; i < chunk; i++ {
			if m.Test(cpumask.CPU(lo + i)) {
				v |= 1 << i
			}
		}
		if !first {
			b = append(b, ',')
		}
		first = false
		for d := (chunk+3)/4 - 1; d >= 0; d-- {
			b = append(b, hex[v>>(4*d)&15])
		}
		chunk = 32
	}
	return b
}

// lbFieldsV15 are the eight per-idle-type fields of versions 15 and 16.
func appendLBV15(b []byte, l *LBStats) []byte {
	for _, v := range [...]uint64{l.LbCount, l.LbBalanced, l.LbFailed, l.ImbalanceSum(),
		l.LbGained, l.LbHotGained, l.LbNobusyq, l.LbNobusyg} {
		b = append(b, ' ')
		b = strconv.AppendUint(b, v, 10)
	}
	return b
}

func appendLBV17(b []byte, l *LBStats) []byte {
	for _, v := range [...]uint64{l.LbCount, l.LbBalanced, l.LbFailed, l.LbImbalanceLoad,
		l.LbImbalanceUtil, l.LbImbalanceTask, l.LbImbalanceMisfit, l.LbGained,
		l.LbHotGained, l.LbNobusyq, l.LbNobusyg} {
		b = append(b, ' ')
		b = strconv.AppendUint(b, v, 10)
	}
	return b
}

// idleOrder is the order show_schedstat prints the idle types in.
func idleOrder(version int) [NumIdleTypes]IdleType {
	if version == 15 {
		return [NumIdleTypes]IdleType{CPUIdle, CPUNotIdle, CPUNewlyIdle}
	}
	return [NumIdleTypes]IdleType{CPUNotIdle, CPUIdle, CPUNewlyIdle}
}

// Format writes s as /proc/schedstat of the given version (15, 16 or 17)
// prints it. Mirrors stats.c:show_schedstat of v6.9 (15), v6.10 (16) and
// v6.14+ (17).
func Format(w io.Writer, s *Snapshot, version int) error {
	if version < 15 || version > 17 {
		return &UnsupportedVersionError{version}
	}
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "version %d\ntimestamp %d\n", version, s.Timestamp)
	order := idleOrder(version)
	var b []byte
	for ci := range s.CPUs {
		c := &s.CPUs[ci]
		b = append(b[:0], "cpu"...)
		b = strconv.AppendInt(b, int64(c.CPU), 10)
		for _, v := range [...]uint64{c.YldCount, c.ArrayExp, c.SchedCount, c.SchedGoidle,
			c.TtwuCount, c.TtwuLocal, c.RqCPUTime, c.RunDelay, c.Pcount} {
			b = append(b, ' ')
			b = strconv.AppendUint(b, v, 10)
		}
		b = append(b, '\n')
		for di := range c.Domains {
			d := &c.Domains[di]
			b = append(b, "domain"...)
			b = strconv.AppendInt(b, int64(d.Level), 10)
			b = append(b, ' ')
			if version == 17 {
				if d.Name == "" {
					return fmt.Errorf("schedstat: cpu%d domain%d has no name, which version 17 prints", c.CPU, d.Level)
				}
				b = append(b, d.Name...)
				b = append(b, ' ')
			}
			b = AppendBitmap(b, d.Span)
			for _, t := range order {
				if version == 17 {
					if d.LB[t].LbImbalance != 0 {
						return fmt.Errorf("schedstat: cpu%d domain%d has an undivided lb_imbalance (from a version 15/16 file), which version 17 cannot print", c.CPU, d.Level)
					}
					b = appendLBV17(b, &d.LB[t])
				} else {
					b = appendLBV15(b, &d.LB[t])
				}
			}
			for _, v := range [...]uint64{d.AlbCount, d.AlbFailed, d.AlbPushed,
				d.SbeCount, d.SbeBalanced, d.SbePushed, d.SbfCount, d.SbfBalanced, d.SbfPushed,
				d.TtwuWakeRemote, d.TtwuMoveAffine, d.TtwuMoveBalance} {
				b = append(b, ' ')
				b = strconv.AppendUint(b, v, 10)
			}
			b = append(b, '\n')
		}
		if _, err := bw.Write(b); err != nil {
			return err
		}
	}
	return bw.Flush()
}
