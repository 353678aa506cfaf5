package explain

import (
	"fmt"
	"math"

	"github.com/schedlab/schedlab/internal/sched"
	"github.com/schedlab/schedlab/internal/workload"
)

// MetricSpec is the metric whose change is attributed.
type MetricSpec struct {
	Name   string `json:"name"`
	Unit   string `json:"unit"`
	Better string `json:"better"` // "lower" or "higher"
	// Harmonic is set for rates, whose runs are summarised by their
	// harmonic mean (compare's statistic); others by the mean.
	Harmonic bool `json:"harmonic_mean"`
	// Decimals is how many decimals the metric is printed with.
	Decimals int `json:"decimals"`
}

func (m MetricSpec) higher() bool { return m.Better == workload.HigherIsBetter.String() }

// Side is one kernel's runs, pooled: the window's length T and work W
// summed over the runs, the workload tasks' active time A (run + wait)
// in it, k = A/T the mean number of active tasks and τ = T/W the time
// per unit of work.
type Side struct {
	Label    string    `json:"label"`
	Metrics  []float64 `json:"metric_values"`
	Metric   float64   `json:"metric"`
	TNs      float64   `json:"window_ns"`
	Work     float64   `json:"work"`
	Unit     string    `json:"work_unit"`
	Measured bool      `json:"window_measured"`
	ANs      float64   `json:"active_ns"`
	K        float64   `json:"active_tasks"`
	TauNs    float64   `json:"tau_ns"`
	Tasks    int       `json:"tasks"`
	// CPUs is the number of CPUs the workload may use, CPUNs their time
	// in the windows (CPUs × T), RunNs the workload's run time, OthersNs
	// the other tasks' (kernel threads, background cgroups) and IdleNs
	// their idle time: with a workload task waiting for the idle CPU,
	// with tasks waiting for other CPUs only, with none waiting.
	CPUs     int        `json:"cpus"`
	CPUNs    float64    `json:"cpu_ns"`
	RunNs    float64    `json:"run_ns"`
	OthersNs float64    `json:"others_run_ns"`
	IdleNs   [3]float64 `json:"idle_ns"`
	parts    []float64  // task-time by part, ns
}

// Part is one part of the active task-time and what its change did to
// the metric.
type Part struct {
	Name  string `json:"name"`
	Group string `json:"group"` // "run" or "wait"
	// TipNs and OtherNs are the part's task-time per unit of work.
	TipNs   float64 `json:"tip_ns_per_unit"`
	OtherNs float64 `json:"variant_ns_per_unit"`
	// TauNs is its term of Δτ, (OtherNs − TipNs)/k_tip.
	TauNs float64 `json:"tau_ns"`
	// Pct is the metric's change it accounts for (percent, positive =
	// better), Metric the same in the metric's unit, Share Pct over the
	// simulated change.
	Pct    float64 `json:"pct"`
	Metric float64 `json:"metric_delta"`
	Share  float64 `json:"share"`
}

// Attribution is the metric's change taken apart:
//
//	Simulated = Σ Parts[i].Pct + Remainder
//	Remainder = Concurrency + Window
//
// exactly (to floating point).
type Attribution struct {
	Metric MetricSpec `json:"metric"`
	Tip    Side       `json:"tip"`
	Other  Side       `json:"variant"`
	// Simulated is the metric's change from tip (percent, positive =
	// better), SimulatedMetric the same in the metric's unit.
	Simulated       float64 `json:"simulated_pct"`
	SimulatedMetric float64 `json:"simulated_delta"`
	// TauPct is the change of τ as the metric's percent.
	TauPct float64 `json:"tau_pct"`
	Parts  []Part  `json:"parts"`
	// Concurrency is the term of the change of k (percent), TauNs its
	// term of Δτ; Window what the metric's change has beyond τ's (the
	// metric is not exactly T/W: a steady-state estimate, bytes rather
	// than operations, a percentile).
	Concurrency      float64 `json:"concurrency_pct"`
	ConcurrencyTauNs float64 `json:"concurrency_tau_ns"`
	Window           float64 `json:"window_pct"`
	Remainder        float64 `json:"remainder_pct"`
	// CPU is the same change seen from the CPUs.
	CPU *CPUView `json:"cpu_view,omitempty"`
	// Note says, when the attribution could not be made, why.
	Note string `json:"note,omitempty"`
}

// CPUView is the change seen from the CPUs the workload may use: their
// time is the workload's run time, other tasks' and idle time, so
//
//	τ = T/W = (R + O + I_waited + I_empty)/(C·W)
//
// exactly, and Δτ is the sum of each part's change per unit of work over
// C, with no concurrency term. Parts' TipNs and OtherNs are CPU-ns per
// unit of work, TauNs their term of Δτ.
type CPUView struct {
	Parts []Part `json:"parts"`
	// Remainder is the simulated change less the parts: the metric vs
	// the window (Attribution.Window), to floating point.
	Remainder float64 `json:"remainder_pct"`
}

// partNames lists the parts: the run time's (the kernel's cost
// categories, then slower execution) and the wait's.
func partNames() (names, groups []string) {
	for c := sched.Cost(0); c < sched.NrCosts; c++ {
		names, groups = append(names, "run: "+c.String()), append(groups, "run")
	}
	names, groups = append(names, "run: slower execution (CPU capacity, frequency, SMT sibling, memory bandwidth)"), append(groups, "run")
	for w := Wait(0); w < NrWaits; w++ {
		names, groups = append(names, "wait: "+w.String()), append(groups, "wait")
	}
	return names, groups
}

// side pools runs.
func side(label string, runs []*RunData, metrics []float64, m MetricSpec) Side {
	names, _ := partNames()
	s := Side{Label: label, Metrics: metrics, parts: make([]float64, len(names))}
	s.Measured = len(runs) > 0
	for _, r := range runs {
		s.CPUs = r.CPUs
		s.CPUNs += float64(r.CPUs) * float64(r.Window.T())
		for j, d := range r.Idle {
			s.IdleNs[j] += float64(d)
		}
		s.TNs += float64(r.Window.T())
		s.Work += r.Window.Work
		s.Unit = r.Window.Unit
		s.Measured = s.Measured && r.Window.Measured
		s.Tasks += len(r.Tasks)
		for i := range r.Tasks {
			t := &r.Tasks[i]
			var costs float64
			for c, d := range t.Costs {
				s.parts[c] += float64(d)
				costs += float64(d)
			}
			s.parts[sched.NrCosts] += float64(t.Run) - costs
			for w, d := range t.Wait {
				s.parts[int(sched.NrCosts)+1+w] += float64(d)
			}
			s.ANs += float64(t.Run + t.WaitSum())
			s.RunNs += float64(t.Run)
		}
	}
	s.OthersNs = s.CPUNs - s.RunNs - s.IdleNs[IdleWaited] - s.IdleNs[IdleElsewhere] - s.IdleNs[IdleEmpty]
	if s.TNs > 0 {
		s.K = s.ANs / s.TNs
	}
	if s.Work > 0 {
		s.TauNs = s.TNs / s.Work
	}
	s.Metric = summary(metrics, m.Harmonic)
	return s
}

// summary is the runs' mean, or harmonic mean for rates.
func summary(x []float64, harmonic bool) float64 {
	if len(x) == 0 {
		return math.NaN()
	}
	var s float64
	for _, v := range x {
		if harmonic {
			s += 1 / v
		} else {
			s += v
		}
	}
	if harmonic {
		return float64(len(x)) / s
	}
	return s / float64(len(x))
}

// Attribute takes the change of the metric from tip's runs to the
// other's apart (doc.go, "The attribution"). Runs i of both sides share
// a seed; the metric values are per run, in the same order.
func Attribute(m MetricSpec, tipLabel, otherLabel string, tip, other []*RunData, tipMetric, otherMetric []float64) *Attribution {
	a := &Attribution{Metric: m, Tip: side(tipLabel, tip, tipMetric, m), Other: side(otherLabel, other, otherMetric, m)}
	t, o := &a.Tip, &a.Other
	if m.higher() {
		a.Simulated = (o.Metric - t.Metric) / t.Metric * 100
	} else {
		a.Simulated = (t.Metric - o.Metric) / t.Metric * 100
	}
	a.SimulatedMetric = o.Metric - t.Metric
	switch {
	case t.TauNs <= 0 || o.TauNs <= 0 || t.K <= 0:
		a.Note = "no work or no active task in a window: nothing to attribute"
		return a
	case math.IsNaN(a.Simulated) || math.IsInf(a.Simulated, 0):
		a.Note = fmt.Sprintf("the metric %s has no value in a run (or is 0 in tip): its change is not defined", m.Name)
		return a
	}
	// d% = f·Δτ: the metric's percent change per ns of τ's change, to
	// first order (the metric ∝ τ when lower is better, ∝ 1/τ when
	// higher is: (τ_tip/τ_v − 1) = −Δτ/τ_v exactly).
	f := -100 / t.TauNs
	if m.higher() {
		f = -100 / o.TauNs
	}
	toMetric := func(pct float64) float64 {
		if m.higher() {
			return pct / 100 * t.Metric
		}
		return -pct / 100 * t.Metric
	}
	names, groups := partNames()
	var sum float64
	for i, name := range names {
		tp, op := t.parts[i]/t.Work, o.parts[i]/o.Work
		if t.parts[i] == 0 && o.parts[i] == 0 {
			continue
		}
		p := Part{Name: name, Group: groups[i], TipNs: tp, OtherNs: op, TauNs: (op - tp) / t.K}
		p.Pct = f * p.TauNs
		p.Metric = toMetric(p.Pct)
		sum += p.Pct
		a.Parts = append(a.Parts, p)
	}
	// The concurrency term, α_v·(1/k_v − 1/k_tip) = τ_v − α_v/k_tip, is
	// what Δτ has beyond the parts; computed as that difference it is
	// exactly 0 when nothing changed.
	a.TauPct = f * (o.TauNs - t.TauNs)
	var sumTau float64
	for _, p := range a.Parts {
		sumTau += p.TauNs
	}
	a.ConcurrencyTauNs = (o.TauNs - t.TauNs) - sumTau
	a.Concurrency = a.TauPct - sum
	a.Window = a.Simulated - a.TauPct
	a.Remainder = a.Simulated - sum
	for i := range a.Parts {
		if a.Simulated != 0 {
			a.Parts[i].Share = a.Parts[i].Pct / a.Simulated
		}
	}
	a.CPU = cpuView(a, f, toMetric)
	return a
}

// cpuView is the CPUs' identity (CPUView).
func cpuView(a *Attribution, f float64, toMetric func(float64) float64) *CPUView {
	t, o := &a.Tip, &a.Other
	if t.CPUs == 0 || o.CPUs == 0 {
		return nil
	}
	v := &CPUView{}
	names, groups := partNames()
	add := func(name, group string, x, y float64) {
		if x == 0 && y == 0 {
			return
		}
		p := Part{Name: name, Group: group, TipNs: x / t.Work, OtherNs: y / o.Work}
		p.TauNs = p.OtherNs/float64(o.CPUs) - p.TipNs/float64(t.CPUs)
		p.Pct = f * p.TauNs
		p.Metric = toMetric(p.Pct)
		if a.Simulated != 0 {
			p.Share = p.Pct / a.Simulated
		}
		v.Parts = append(v.Parts, p)
	}
	for i, name := range names {
		if groups[i] == "run" {
			add(name, "run", t.parts[i], o.parts[i])
		}
	}
	add("others: other tasks' run time (kernel threads, background)", "others", t.OthersNs, o.OthersNs)
	add("idle: a workload task waiting for this CPU (IPI, idle exit, balancing)", "idle", t.IdleNs[IdleWaited], o.IdleNs[IdleWaited])
	add("idle: workload tasks waiting only for other CPUs (imbalance)", "idle", t.IdleNs[IdleElsewhere], o.IdleNs[IdleElsewhere])
	add("idle: no workload task waiting (all running or asleep)", "idle", t.IdleNs[IdleEmpty], o.IdleNs[IdleEmpty])
	var sum float64
	for _, p := range v.Parts {
		sum += p.Pct
	}
	v.Remainder = a.Simulated - sum
	return v
}
