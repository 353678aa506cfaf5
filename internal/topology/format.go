package topology

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"strings"

	"github.com/schedlab/schedlab/internal/cpumask"
)

// FormatText prints the machine and every CPU's domain tree; see
// FormatTextCPUs.
func FormatText(w io.Writer, t *Topology) error {
	return FormatTextCPUs(w, t, cpumask.Full(t.NrCPUs))
}

// FormatTextCPUs prints the machine summary, the CPU table and the domain
// trees of the CPUs in cpus. Each tree is printed the way the kernel's
// sched_domain_debug does at boot ("CPU0 attaching sched-domain(s):",
// "domain-0: span=0,128 level=SMT", "groups: 0:{ span=0 }, 128:{ span=128 }"
// with " mask=" and " cap=" as there), followed by a flags line and a line
// of sd_init parameters for each domain.
func FormatTextCPUs(w io.Writer, t *Topology, cpus cpumask.Mask) error {
	bw := bufio.NewWriter(w)
	s := t.Spec
	fmt.Fprintf(bw, "machine %s: %s\n", s.Name, s.Description)
	fmt.Fprintf(bw, "source %s, arch %s, kernel %s\n", s.Source, s.Arch, t.Kernel)
	fmt.Fprintf(bw, "%d CPUs, %d cores, %d clusters, %d LLCs, %d packages, %d nodes; smt_present=%v asym_cpucapacity=%v cluster_active=%v\n",
		t.NrCPUs, countIDs(s, func(c CPUSpec) int { return c.Core }), countIDs(s, func(c CPUSpec) int { return c.Cluster }),
		countIDs(s, func(c CPUSpec) int { return c.LLC }), countIDs(s, func(c CPUSpec) int { return c.Package }),
		len(s.Distance), t.SMTPresent, t.AsymCPUCapacity, t.ClusterActive)

	fmt.Fprintf(bw, "\nnode distances:\n    ")
	for b := range s.Distance {
		fmt.Fprintf(bw, " %4d", b)
	}
	fmt.Fprintln(bw)
	for a, row := range s.Distance {
		fmt.Fprintf(bw, "%4d:", a)
		for _, d := range row {
			fmt.Fprintf(bw, " %4d", d)
		}
		fmt.Fprintf(bw, "   cpus %s\n", t.NodeMask[a])
	}
	fmt.Fprintf(bw, "sched_domains_numa_distance: %s\n", joinInts(t.NumaDistances, " "))
	var lv []string
	for _, l := range t.Levels {
		name := l.Name
		if l.NumaLevel >= 0 {
			name = fmt.Sprintf("%s(%d)", l.Name, l.Distance)
		}
		lv = append(lv, name)
	}
	fmt.Fprintf(bw, "topology levels: %s\n", strings.Join(lv, " "))

	fmt.Fprintf(bw, "\nidle states:\n")
	for _, set := range idleSets(s, cpus) {
		fmt.Fprintf(bw, "  cpus %s:", set.cpus)
		if len(set.states) == 0 {
			fmt.Fprintf(bw, " none")
		}
		for _, st := range set.states {
			cl := ""
			if st.Cluster {
				cl = ", cluster"
				if st.GateDelayNs > 0 {
					cl += " after " + fmtNs(st.GateDelayNs) + " quiet"
				}
			}
			wake := ""
			if st.WakeNs > 0 {
				wake = ", wake " + fmtNs(st.WakeNs)
			}
			fmt.Fprintf(bw, " %s(exit %s, residency %s%s%s)", st.Name, fmtNs(st.ExitLatencyNs), fmtNs(st.TargetResidencyNs), wake, cl)
		}
		fmt.Fprintln(bw)
	}

	fmt.Fprintf(bw, "\n%5s %5s %7s %5s %7s %4s %8s %8s %12s %9s %11s %11s\n",
		"cpu", "core", "cluster", "llc", "package", "node", "capacity", "freq_dom", "max_freq_khz", "sd_llc_id", "sd_llc_size", "sd_share_id")
	cpus.ForEach(func(c cpumask.CPU) bool {
		cs := s.CPUs[c]
		fmt.Fprintf(bw, "%5d %5d %7d %5d %7d %4d %8d %8d %12d %9d %11d %11d\n",
			c, cs.Core, cs.Cluster, cs.LLC, cs.Package, cs.Node, cs.Capacity, cs.FreqDomain, cs.MaxFreqKHz,
			t.SdLLCID[c], t.SdLLCSize[c], t.SdShareID[c])
		return true
	})

	cpus.ForEach(func(c cpumask.CPU) bool {
		fmt.Fprintln(bw)
		writeDomainTree(bw, t, c)
		return true
	})
	return bw.Flush()
}

// writeDomainTree mirrors topology.c:sched_domain_debug_one's layout (v6.19;
// the level names and flags are the baseline's).
func writeDomainTree(w io.Writer, t *Topology, c cpumask.CPU) {
	chain := t.Domains[c]
	if len(chain) == 0 {
		fmt.Fprintf(w, "CPU%d attaching NULL sched-domain.\n", c)
		return
	}
	fmt.Fprintf(w, "CPU%d attaching sched-domain(s):\n", c)
	for lvl, d := range chain {
		pad := strings.Repeat(" ", lvl)
		fmt.Fprintf(w, "%s domain-%d: span=%s level=%s\n", pad, lvl, d.Span, d.Name)
		fmt.Fprintf(w, "%s  groups:", pad)
		for i, g := range d.Groups {
			fmt.Fprintf(w, " %d:{ span=%s", g.SgcID, g.Span)
			if d.Flags&SDNuma != 0 && !g.BalanceMask.Equal(g.Span) {
				fmt.Fprintf(w, " mask=%s", g.BalanceMask)
			}
			if g.Capacity != 1024 {
				fmt.Fprintf(w, " cap=%d", g.Capacity)
			}
			fmt.Fprintf(w, " }")
			if i < len(d.Groups)-1 {
				fmt.Fprintf(w, ",")
			}
		}
		fmt.Fprintln(w)
		fmt.Fprintf(w, "%s  flags: %s (%s)\n", pad, FlagsString(d.Flags, t.Kernel), flagsHex(d.Flags, t.Kernel))
		fmt.Fprintf(w, "%s  imbalance_pct=%d cache_nice_tries=%d min_interval=%d max_interval=%d balance_interval=%d busy_factor=%d",
			pad, d.ImbalancePct, d.CacheNiceTries, d.MinInterval, d.MaxInterval, d.BalanceInterval, d.BusyFactor)
		if d.ImbNumaNr != 0 {
			fmt.Fprintf(w, " imb_numa_nr=%d", d.ImbNumaNr)
		}
		if d.NumaDistance != 0 {
			fmt.Fprintf(w, " numa_distance=%d", d.NumaDistance)
		}
		if d.SharedID >= 0 {
			fmt.Fprintf(w, " shared=%d", d.SharedID)
		}
		fmt.Fprintln(w)
	}
}

func countIDs(s *MachineSpec, f func(CPUSpec) int) int {
	seen := map[int]bool{}
	for _, c := range s.CPUs {
		seen[f(c)] = true
	}
	return len(seen)
}

func joinInts(v []int, sep string) string {
	parts := make([]string, len(v))
	for i, x := range v {
		parts[i] = fmt.Sprint(x)
	}
	return strings.Join(parts, sep)
}

func fmtNs(ns int64) string {
	if ns%1000 == 0 {
		return fmt.Sprintf("%dus", ns/1000)
	}
	return fmt.Sprintf("%dns", ns)
}

type idleSet struct {
	cpus   cpumask.Mask
	states []IdleState
}

// idleSets groups the CPUs of cpus by identical idle-state lists, in order
// of their first CPU.
func idleSets(s *MachineSpec, cpus cpumask.Mask) []idleSet {
	var out []idleSet
	cpus.ForEach(func(c cpumask.CPU) bool {
		st := s.IdleStatesOf(c)
		for i := range out {
			if reflect.DeepEqual(out[i].states, st) {
				out[i].cpus.Set(c)
				return true
			}
		}
		out = append(out, idleSet{cpus: cpumask.Of(len(s.CPUs), c), states: st})
		return true
	})
	return out
}

// The JSON form. Field order is fixed by the structs; there are no maps.
type jsonTopology struct {
	Machine       string      `json:"machine"`
	Description   string      `json:"description"`
	Source        string      `json:"source"`
	Arch          string      `json:"arch"`
	Kernel        string      `json:"kernel"`
	NrCPUs        int         `json:"nr_cpus"`
	SMTPresent    bool        `json:"smt_present"`
	AsymCapacity  bool        `json:"asym_cpucapacity"`
	ClusterActive bool        `json:"cluster_active"`
	Distance      [][]int     `json:"distance"`
	NumaDistances []int       `json:"numa_distances"`
	Levels        []jsonLevel `json:"levels"`
	Nodes         []jsonNode  `json:"nodes"`
	CPUs          []jsonCPU   `json:"cpus"`
	IdleDisable   []string    `json:"idle_disable,omitempty"`
	Governor      string      `json:"cpufreq_governor,omitempty"`
	LatencyLimit  *int64      `json:"latency_limit_ns,omitempty"`
}

type jsonLevel struct {
	Name     string `json:"name"`
	Distance int    `json:"distance,omitempty"`
}

type jsonNode struct {
	Node int    `json:"node"`
	CPUs string `json:"cpus"`
}

type jsonIdle struct {
	Name              string `json:"name"`
	ExitLatencyNs     int64  `json:"exit_latency_ns"`
	TargetResidencyNs int64  `json:"target_residency_ns"`
	Cluster           bool   `json:"cluster,omitempty"`
	GateDelayNs       int64  `json:"gate_delay_ns,omitempty"`
	WakeNs            int64  `json:"wake_ns,omitempty"`
}

type jsonCPU struct {
	CPU        int          `json:"cpu"`
	Core       int          `json:"core"`
	Cluster    int          `json:"cluster"`
	LLC        int          `json:"llc"`
	Package    int          `json:"package"`
	Node       int          `json:"node"`
	Capacity   int          `json:"capacity"`
	FreqDomain int          `json:"freq_domain"`
	MaxFreqKHz int          `json:"max_freq_khz"`
	IdleStates []jsonIdle   `json:"idle_states"`
	SMTMask    string       `json:"smt_mask"`
	SdLLCID    int          `json:"sd_llc_id"`
	SdLLCSize  int          `json:"sd_llc_size"`
	SdShareID  int          `json:"sd_share_id"`
	Domains    []jsonDomain `json:"domains"`
}

type jsonDomain struct {
	Domain          int      `json:"domain"`
	ID              int      `json:"id"`
	Level           int      `json:"level"`
	Name            string   `json:"name"`
	Span            string   `json:"span"`
	SpanWeight      int      `json:"span_weight"`
	Flags           []string `json:"flags"`
	FlagsValue      string   `json:"flags_value"`
	Groups          []string `json:"groups"`
	GroupIDs        []int    `json:"group_ids"`
	GroupCapacity   []int    `json:"group_capacity"`
	ImbalancePct    int      `json:"imbalance_pct"`
	CacheNiceTries  int      `json:"cache_nice_tries"`
	MinInterval     int      `json:"min_interval"`
	MaxInterval     int      `json:"max_interval"`
	BalanceInterval int      `json:"balance_interval"`
	BusyFactor      int      `json:"busy_factor"`
	ImbNumaNr       int      `json:"imb_numa_nr,omitempty"`
	NumaDistance    int      `json:"numa_distance,omitempty"`
	Shared          *int     `json:"shared,omitempty"`
}

// FormatJSON prints the same content as FormatText as one JSON document.
func FormatJSON(w io.Writer, t *Topology) error {
	return FormatJSONCPUs(w, t, cpumask.Full(t.NrCPUs))
}

// FormatJSONCPUs is FormatJSON limited to the CPUs in cpus.
func FormatJSONCPUs(w io.Writer, t *Topology, cpus cpumask.Mask) error {
	s := t.Spec
	j := jsonTopology{
		IdleDisable:   s.IdleDisable,
		Governor:      s.CpufreqGovernor,
		LatencyLimit:  s.LatencyLimitNs,
		Machine:       s.Name,
		Description:   s.Description,
		Source:        s.Source,
		Arch:          string(s.Arch),
		Kernel:        t.Kernel,
		NrCPUs:        t.NrCPUs,
		SMTPresent:    t.SMTPresent,
		AsymCapacity:  t.AsymCPUCapacity,
		ClusterActive: t.ClusterActive,
		Distance:      s.Distance,
		NumaDistances: t.NumaDistances,
		Levels:        []jsonLevel{},
		Nodes:         []jsonNode{},
		CPUs:          []jsonCPU{},
	}
	for _, l := range t.Levels {
		jl := jsonLevel{Name: l.Name}
		if l.NumaLevel >= 0 {
			jl.Distance = l.Distance
		}
		j.Levels = append(j.Levels, jl)
	}
	for i, m := range t.NodeMask {
		j.Nodes = append(j.Nodes, jsonNode{Node: i, CPUs: m.String()})
	}
	cpus.ForEach(func(c cpumask.CPU) bool {
		cs := s.CPUs[c]
		jc := jsonCPU{
			CPU: int(c), Core: cs.Core, Cluster: cs.Cluster, LLC: cs.LLC, Package: cs.Package, Node: cs.Node,
			Capacity: cs.Capacity, FreqDomain: cs.FreqDomain, MaxFreqKHz: cs.MaxFreqKHz,
			IdleStates: []jsonIdle{},
			SMTMask:    t.SMTMask[c].String(),
			SdLLCID:    int(t.SdLLCID[c]), SdLLCSize: t.SdLLCSize[c], SdShareID: int(t.SdShareID[c]),
			Domains: []jsonDomain{},
		}
		for _, st := range s.IdleStatesOf(c) {
			jc.IdleStates = append(jc.IdleStates, jsonIdle(st))
		}
		for lvl, d := range t.Domains[c] {
			jd := jsonDomain{
				Domain: lvl, ID: d.ID, Level: d.Level, Name: d.Name,
				Span: d.Span.String(), SpanWeight: d.SpanWeight,
				Flags:      FlagNames(d.Flags, t.Kernel),
				FlagsValue: flagsHex(d.Flags, t.Kernel),
				Groups:     []string{}, GroupIDs: []int{}, GroupCapacity: []int{},
				ImbalancePct: d.ImbalancePct, CacheNiceTries: d.CacheNiceTries,
				MinInterval: d.MinInterval, MaxInterval: d.MaxInterval,
				BalanceInterval: d.BalanceInterval, BusyFactor: d.BusyFactor,
				ImbNumaNr: d.ImbNumaNr, NumaDistance: d.NumaDistance,
			}
			if jd.Flags == nil {
				jd.Flags = []string{}
			}
			if d.SharedID >= 0 {
				id := d.SharedID
				jd.Shared = &id
			}
			for _, g := range d.Groups {
				jd.Groups = append(jd.Groups, g.Span.String())
				jd.GroupIDs = append(jd.GroupIDs, g.ID)
				jd.GroupCapacity = append(jd.GroupCapacity, g.Capacity)
			}
			jc.Domains = append(jc.Domains, jd)
		}
		j.CPUs = append(j.CPUs, jc)
		return true
	})
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(j)
}
