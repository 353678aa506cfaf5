package sched

import (
	"github.com/schedlab/schedlab/internal/cpumask"
	"github.com/schedlab/schedlab/internal/engine"
)

// CPU frequency scaling: the schedutil governor (kernel/sched/
// cpufreq_schedutil.c) driven by the fair class's cpufreq_update_util
// calls, or the performance governor. Part of the cost model: without it
// (ApplyCosts not called) every CPU runs at its maximum frequency.
//
// A frequency domain (cpufreq policy) is the set of CPUs with one
// FreqDomain id in the machine spec. The frequency is kept as
// arch_scale_freq_capacity (Rq.FreqScale, 1024 = maximum): it scales the
// PELT clock (update_rq_clock_pelt) and the speed of running work.
//
// Simplifications: frequencies are continuous (no OPP table; the
// driver's resolve_freq rounding is not modelled), a change takes effect
// at the end of the event that asked for it (fast switch, no transition
// latency), the minimum frequency is MinFreqPct of the maximum, and
// iowait boosting, uclamp and the "don't lower the frequency of a busy
// CPU" hold of single-CPU policies are not modelled.

// Governors.
const (
	GovernorAuto        = ""            // the machine's cpufreq_governor, else performance on x86, schedutil on arm64
	GovernorPerformance = "performance" // always the maximum frequency
	GovernorSchedutil   = "schedutil"
)

// MinFreqPct is policy->min as a percentage of the maximum frequency.
const MinFreqPct = 20

// freqDomain is one cpufreq policy.
type freqDomain struct {
	cpus       []cpumask.CPU
	scale      uint64 // current frequency, 1024 = max
	next       uint64 // frequency to apply when timer fires
	lastUpdate engine.Time
	updated    bool
	timer      *engine.Timer
}

// governor is the effective governor for this machine.
func (k *Kernel) governor() string {
	g := k.S.CpufreqGovernor
	if g == GovernorAuto {
		if mg := k.Topo.Spec.CpufreqGovernor; mg != "" {
			return mg
		}
		if k.Topo.Spec.Arch == "arm64" {
			return GovernorSchedutil
		}
		return GovernorPerformance
	}
	return g
}

// initCpufreq builds the frequency domains (cpufreq policies).
func (k *Kernel) initCpufreq() {
	byID := map[int]*freqDomain{}
	k.freqDomOf = make([]*freqDomain, k.NrCPUs())
	for cpu, c := range k.Topo.Spec.CPUs {
		fd := byID[c.FreqDomain]
		if fd == nil {
			fd = &freqDomain{scale: SchedCapacityScale}
			byID[c.FreqDomain] = fd
			k.freqDoms = append(k.freqDoms, fd)
			fd.timer = engine.NewTimer("cpufreq", func() { k.applyFreq(fd) })
		}
		fd.cpus = append(fd.cpus, cpumask.CPU(cpu))
		k.freqDomOf[cpu] = fd
	}
}

// cpufreqUpdateUtil mirrors cpufreq_update_util → sugov_update_shared
// (and _single, the same with one CPU; cpufreq_schedutil.c, v6.19, and
// v6.0 and v5.12 without runnable boosting): rate-limited, it takes the
// highest utilisation of the policy's CPUs, adds 25% headroom
// (map_util_perf) and sets the frequency that would run it at
// max(util)·1.25 of the capacity (get_next_freq), between the policy's
// limits.
func (k *Kernel) cpufreqUpdateUtil(rq *Rq) {
	if !k.costsOn || k.governor() != GovernorSchedutil || k.freqDomOf == nil {
		return
	}
	fd := k.freqDomOf[rq.CPU]
	now := k.Eng.Now()
	// sugov_should_update_freq: at most once per rate_limit_us.
	if fd.updated && now-fd.lastUpdate < engine.Time(k.S.CpufreqRateLimit) {
		return
	}
	fd.updated, fd.lastUpdate = true, now
	var next uint64
	for _, c := range fd.cpus {
		// sugov_get_util: cpu_util_cfs_boost (v6.5+; cpu_util_cfs in
		// v6.0 and v5.12), util_est included; no RT, DL or IRQ
		// utilisation to add.
		util := k.cpuUtil(c, nil, cpumask.None, k.S.LBUtilBoost)
		capOrig := k.Rqs[c].CPUCapacityOrig
		util += util >> 2 // map_util_perf
		f := util * SchedCapacityScale / capOrig
		if f > next {
			next = f
		}
	}
	next = min(max(next, SchedCapacityScale*MinFreqPct/100), SchedCapacityScale)
	if next == fd.scale && !fd.timer.Armed() {
		return
	}
	fd.next = next
	k.Eng.Schedule(fd.timer, now)
}

// applyFreq switches a policy's CPUs to the chosen frequency: their clocks
// are brought up to date at the old frequency first, and running work is
// re-timed at the new speed.
func (k *Kernel) applyFreq(fd *freqDomain) {
	if fd.next == fd.scale {
		return
	}
	fd.scale = fd.next
	for _, c := range fd.cpus {
		rq := k.Rqs[c]
		k.updateRqClock(rq)
		rq.FreqScale = fd.scale
		k.retime(rq)
		if h := k.Hooks.Frequency; h != nil {
			h(c, fd.scale)
		}
	}
	k.FreqChanges++
}

// startCpufreq puts every policy at its starting frequency when the cost
// model is installed: the maximum for the performance governor, the
// minimum for schedutil on an idle machine.
func (k *Kernel) startCpufreq() {
	if k.freqDomOf == nil {
		k.initCpufreq()
	}
	start := uint64(SchedCapacityScale)
	if k.governor() == GovernorSchedutil {
		start = SchedCapacityScale * MinFreqPct / 100
	}
	for _, fd := range k.freqDoms {
		fd.scale, fd.next = start, start
		for _, c := range fd.cpus {
			k.Rqs[c].FreqScale = start
		}
	}
}
