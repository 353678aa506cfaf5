package schedstat

// Totals is a run's /proc/schedstat counters summed over all CPUs, and
// per domain level over the CPUs that have that level. The field names are
// the kernel's. It is the one sum of a run's counters: `schedlab run
// --json`, sweep records and the comparison tables all use it.
type Totals struct {
	Version int    `json:"version"`
	NrCPUs  int    `json:"nr_cpus"`
	Jiffies uint64 `json:"jiffies"`
	CPU     struct {
		YldCount    uint64 `json:"yld_count"`
		SchedCount  uint64 `json:"sched_count"`
		SchedGoidle uint64 `json:"sched_goidle"`
		TtwuCount   uint64 `json:"ttwu_count"`
		TtwuLocal   uint64 `json:"ttwu_local"`
		RqCPUTime   uint64 `json:"rq_cpu_time"`
		RunDelay    uint64 `json:"run_delay"`
		Pcount      uint64 `json:"pcount"`
	} `json:"cpu"`
	Domains []DomainCounters `json:"domains"`
}

// DomainCounters are one domain level's counters.
type DomainCounters struct {
	Name string `json:"name"`
	CPUs int    `json:"cpus"` // how many CPUs have this level
	LB   struct {
		Busy    LBCounters `json:"busy"`
		Idle    LBCounters `json:"idle"`
		NewIdle LBCounters `json:"newidle"`
	} `json:"lb"`
	AlbCount        uint64 `json:"alb_count"`
	AlbFailed       uint64 `json:"alb_failed"`
	AlbPushed       uint64 `json:"alb_pushed"`
	SbeCount        uint64 `json:"sbe_count"`
	SbeBalanced     uint64 `json:"sbe_balanced"`
	SbePushed       uint64 `json:"sbe_pushed"`
	SbfCount        uint64 `json:"sbf_count"`
	SbfBalanced     uint64 `json:"sbf_balanced"`
	SbfPushed       uint64 `json:"sbf_pushed"`
	TtwuWakeRemote  uint64 `json:"ttwu_wake_remote"`
	TtwuMoveAffine  uint64 `json:"ttwu_move_affine"`
	TtwuMoveBalance uint64 `json:"ttwu_move_balance"`
}

// LBCounters are sched_balance_rq's counters for one idle type.
type LBCounters struct {
	LbCount           uint64 `json:"lb_count"`
	LbBalanced        uint64 `json:"lb_balanced"`
	LbFailed          uint64 `json:"lb_failed"`
	LbImbalance       uint64 `json:"lb_imbalance,omitempty"`
	LbImbalanceLoad   uint64 `json:"lb_imbalance_load,omitempty"`
	LbImbalanceUtil   uint64 `json:"lb_imbalance_util,omitempty"`
	LbImbalanceTask   uint64 `json:"lb_imbalance_task,omitempty"`
	LbImbalanceMisfit uint64 `json:"lb_imbalance_misfit,omitempty"`
	LbGained          uint64 `json:"lb_gained"`
	LbHotGained       uint64 `json:"lb_hot_gained"`
	LbNobusyq         uint64 `json:"lb_nobusyq"`
	LbNobusyg         uint64 `json:"lb_nobusyg"`
}

func (l *LBCounters) pairs(o *LBStats, f func(a *uint64, b *uint64)) {
	f(&l.LbCount, &o.LbCount)
	f(&l.LbBalanced, &o.LbBalanced)
	f(&l.LbFailed, &o.LbFailed)
	f(&l.LbImbalance, &o.LbImbalance)
	f(&l.LbImbalanceLoad, &o.LbImbalanceLoad)
	f(&l.LbImbalanceUtil, &o.LbImbalanceUtil)
	f(&l.LbImbalanceTask, &o.LbImbalanceTask)
	f(&l.LbImbalanceMisfit, &o.LbImbalanceMisfit)
	f(&l.LbGained, &o.LbGained)
	f(&l.LbHotGained, &o.LbHotGained)
	f(&l.LbNobusyq, &o.LbNobusyq)
	f(&l.LbNobusyg, &o.LbNobusyg)
}

func (d *DomainCounters) lb(t IdleType) *LBCounters {
	switch t {
	case CPUIdle:
		return &d.LB.Idle
	case CPUNewlyIdle:
		return &d.LB.NewIdle
	}
	return &d.LB.Busy
}

func (d *DomainCounters) pairs(o *DomainStats, f func(a *uint64, b *uint64)) {
	for t := IdleType(0); t < NumIdleTypes; t++ {
		d.lb(t).pairs(&o.LB[t], f)
	}
	for _, x := range []struct{ a, b *uint64 }{
		{&d.AlbCount, &o.AlbCount}, {&d.AlbFailed, &o.AlbFailed}, {&d.AlbPushed, &o.AlbPushed},
		{&d.SbeCount, &o.SbeCount}, {&d.SbeBalanced, &o.SbeBalanced}, {&d.SbePushed, &o.SbePushed},
		{&d.SbfCount, &o.SbfCount}, {&d.SbfBalanced, &o.SbfBalanced}, {&d.SbfPushed, &o.SbfPushed},
		{&d.TtwuWakeRemote, &o.TtwuWakeRemote}, {&d.TtwuMoveAffine, &o.TtwuMoveAffine}, {&d.TtwuMoveBalance, &o.TtwuMoveBalance},
	} {
		f(x.a, x.b)
	}
}

// Sum sums a snapshot's counters (a kernel's counters start at 0,
// so the snapshot at the end of a run is the run's delta).
func Sum(s *Snapshot, version int) *Totals {
	out := &Totals{Version: version, NrCPUs: len(s.CPUs), Jiffies: s.Timestamp}
	for i := range s.CPUs {
		c := &s.CPUs[i]
		o := &out.CPU
		o.YldCount += c.YldCount
		o.SchedCount += c.SchedCount
		o.SchedGoidle += c.SchedGoidle
		o.TtwuCount += c.TtwuCount
		o.TtwuLocal += c.TtwuLocal
		o.RqCPUTime += c.RqCPUTime
		o.RunDelay += c.RunDelay
		o.Pcount += c.Pcount
		for j := range c.Domains {
			for len(out.Domains) <= j {
				out.Domains = append(out.Domains, DomainCounters{})
			}
			d := &out.Domains[j]
			if d.Name == "" {
				d.Name = c.Domains[j].Name
			}
			d.CPUs++
			d.pairs(&c.Domains[j], func(a, b *uint64) { *a += *b })
		}
	}
	return out
}

// Add adds o's counters to s (runs of one configuration summed).
func (s *Totals) Add(o *Totals) {
	if s.NrCPUs == 0 {
		s.Version, s.NrCPUs = o.Version, o.NrCPUs
	}
	s.combine(o, func(a *uint64, b uint64) { *a += b })
}

// Sub takes o's counters, a snapshot's sum taken earlier in the same run,
// from s, leaving what happened in between (a run after a warm-up).
func (s *Totals) Sub(o *Totals) {
	s.combine(o, func(a *uint64, b uint64) { *a -= b })
}

// combine applies f to each counter of s and the same counter of o.
func (s *Totals) combine(o *Totals, f func(a *uint64, b uint64)) {
	f(&s.Jiffies, o.Jiffies)
	f(&s.CPU.YldCount, o.CPU.YldCount)
	f(&s.CPU.SchedCount, o.CPU.SchedCount)
	f(&s.CPU.SchedGoidle, o.CPU.SchedGoidle)
	f(&s.CPU.TtwuCount, o.CPU.TtwuCount)
	f(&s.CPU.TtwuLocal, o.CPU.TtwuLocal)
	f(&s.CPU.RqCPUTime, o.CPU.RqCPUTime)
	f(&s.CPU.RunDelay, o.CPU.RunDelay)
	f(&s.CPU.Pcount, o.CPU.Pcount)
	for j := range o.Domains {
		for len(s.Domains) <= j {
			s.Domains = append(s.Domains, DomainCounters{Name: o.Domains[j].Name, CPUs: o.Domains[j].CPUs})
		}
		var tmp DomainStats
		od := o.Domains[j]
		od.pairs(&tmp, func(a, b *uint64) { *b = *a })
		s.Domains[j].pairs(&tmp, func(a, b *uint64) { f(a, *b) })
	}
}

// Delta is s as a schedstat delta of one CPU holding the per-CPU average
// (integer division, as perf does), which FormatComparison
// summarises to the same figures as the full per-CPU delta.
func (s *Totals) Delta() Delta {
	n := uint64(s.NrCPUs)
	if n == 0 {
		n = 1
	}
	c := CPUStats{
		YldCount: s.CPU.YldCount / n, SchedCount: s.CPU.SchedCount / n, SchedGoidle: s.CPU.SchedGoidle / n,
		TtwuCount: s.CPU.TtwuCount / n, TtwuLocal: s.CPU.TtwuLocal / n, RqCPUTime: s.CPU.RqCPUTime / n,
		RunDelay: s.CPU.RunDelay / n, Pcount: s.CPU.Pcount / n,
	}
	for j := range s.Domains {
		d := s.Domains[j]
		k := uint64(d.CPUs)
		if k == 0 {
			k = 1
		}
		ds := DomainStats{Level: j, Name: d.Name}
		d.pairs(&ds, func(a, b *uint64) { *b = *a / k })
		c.Domains = append(c.Domains, ds)
	}
	return Delta{Elapsed: s.Jiffies, CPUs: []CPUStats{c}}
}
