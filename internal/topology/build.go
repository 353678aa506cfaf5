package topology

import (
	"fmt"

	"github.com/schedlab/schedlab/internal/cpumask"
	"github.com/schedlab/schedlab/internal/kernels"
)

// Options selects what Build models.
type Options struct {
	// Kernel is the baseline (package kernels; "" is kernels.Default).
	Kernel string
	// ClusterFlag gives the CLS level SD_CLUSTER (and so sd_share_id and
	// an active sched_cluster_active) on a baseline that has the level but
	// not yet the flag (v6.0): what the sis-cluster variant ports
	// (sched.TopologyOptions sets it from the kernel's settings).
	ClusterFlag bool
	// ClusterLevel builds a CLS level (cpu_clustergroup_mask, with
	// cpu_core_flags(): SD_SHARE_PKG_RESOURCES) on a baseline without one
	// (v5.12): what the cluster-level variant ports, Barry Song's RFC v2
	// "scheduler: add scheduler level for clusters" (Dec 2020), which
	// names the level CL (schedlab keeps v6.0's CLS). The level is built
	// as v6.0 builds it, with v6.0's later corrections to the masks (a
	// CLS that would span the coregroup falls back to the SMT mask; an
	// arm64 coregroup inside a cluster widens to it), which change
	// nothing where a cluster is smaller than its LLC (Kunpeng 920) and
	// are a simplification elsewhere.
	ClusterLevel bool
}

// RECLAIM_DISTANCE: NUMA levels farther than this lose SD_BALANCE_EXEC,
// SD_BALANCE_FORK and SD_WAKE_AFFINE (node_reclaim_distance default).
const reclaimDistance = 30

// reclaimDist is node_reclaim_distance for the spec's machine.
func (s *MachineSpec) reclaimDist() int {
	if s.ReclaimDistance > 0 {
		return s.ReclaimDistance
	}
	return reclaimDistance
}

// Topology is a built machine: the spec plus Linux's sched domains and groups
// for it, and the per-CPU shortcuts the fair class reads. It is read-only
// after Build, masks included; the scheduler keeps its mutable per-domain,
// per-group and per-shared state in its own arrays indexed by Domain.ID,
// Group.ID and Domain.SharedID.
type Topology struct {
	Spec *MachineSpec
	// Kernel is the baseline's name, Baseline its facts.
	Kernel   string
	Baseline *kernels.Baseline
	NrCPUs   int

	// Domains[cpu] is the CPU's domain chain after degeneration, bottom-up
	// (rq->sd, rq->sd->parent, ...). Empty on a one-CPU machine.
	Domains [][]*Domain
	// AllDomains holds every domain; AllDomains[d.ID] == d. Ordered by CPU,
	// then bottom-up.
	AllDomains []*Domain
	// Groups holds every distinct sched_group; Groups[g.ID] == g.
	Groups []*Group
	// Shared holds every sched_domain_shared; Shared[d.SharedID] describes it.
	Shared   []*SharedInfo
	NrShared int

	// Per-CPU shortcuts (update_top_cache_domain). Nil entries mean "none".
	SdLLC             []*Domain
	SdLLCSize         []int
	SdLLCID           []cpumask.CPU
	SdLLCShared       []int // sd_llc_shared as a Shared index, -1 if none
	SdShareID         []cpumask.CPU
	SdNUMA            []*Domain
	SdAsymPacking     []*Domain
	SdAsymCPUCapacity []*Domain

	// SMTMask[cpu] is cpu_smt_mask(cpu); SMTPresent is sched_smt_present
	// (some core has more than one thread).
	SMTMask    []cpumask.Mask
	SMTPresent bool
	// ClusterMask[cpu] is topology_cluster_cpumask(cpu), the CPUs of
	// cpu's cluster, whether or not a CLS domain was built.
	ClusterMask []cpumask.Mask
	// AsymCPUCapacity is the sched_asym_cpucapacity static key: some
	// domain has SD_ASYM_CPUCAPACITY. ClusterActive is
	// sched_cluster_active: some CPU has an SD_CLUSTER domain.
	AsymCPUCapacity bool
	ClusterActive   bool

	// CPUCapacity[cpu] is arch_scale_cpu_capacity(cpu).
	CPUCapacity []int
	// CPUNode[cpu] is cpu_to_node(cpu); NodeMask[node] is cpumask_of_node.
	CPUNode  []int
	NodeMask []cpumask.Mask
	// NumaDistances is sched_domains_numa_distance: the distinct values
	// of the distance matrix, ascending (the first is 10).
	NumaDistances []int
	// Levels is the topology table Build used, bottom-up; Domain.Level
	// indexes it.
	Levels []Level
}

// Level is one entry of the topology table (struct
// sched_domain_topology_level).
type Level struct {
	Name string
	// Flags are the level's sd_flags (topology flags, before sd_init adds
	// behaviour flags).
	Flags Flags
	// NumaLevel is tl->numa_level for NODE (0) and NUMA (1..) levels, -1
	// for the others. Distance is sched_domains_numa_distance[NumaLevel].
	NumaLevel int
	Distance  int
}

// Domain is one CPU's struct sched_domain. Field names follow the kernel's.
type Domain struct {
	ID  int         // index into Topology.AllDomains
	CPU cpumask.CPU // the CPU whose chain this is
	// Level is sd->level: the topology-table index it was built from.
	// Depth is its position in the CPU's chain after degeneration (the N
	// of "domain-N" in the kernel's debug output and /proc/schedstat).
	Level int
	Depth int
	Name  string
	// Span is sched_domain_span(sd); SpanWeight its weight.
	Span       cpumask.Mask
	SpanWeight int
	Flags      Flags
	Parent     *Domain
	Child      *Domain
	// Groups is the circular sd->groups list flattened, starting at the
	// group that contains CPU (the local group).
	Groups []*Group

	MinInterval     int // ms
	MaxInterval     int // ms
	BalanceInterval int // ms, initial value
	BusyFactor      int
	ImbalancePct    int
	CacheNiceTries  int
	ImbNumaNr       int
	// SharedID indexes Topology.Shared for SD_SHARE_LLC domains, else -1.
	SharedID int
	// NumaDistance is the level's node distance for NODE and NUMA levels,
	// else 0.
	NumaDistance int
	// v6.19 newidle balancing ratio seeds (0 for v6.0).
	NewidleCall, NewidleSuccess, NewidleRatio int
}

// Group is a struct sched_group together with its sched_group_capacity.
// Groups of non-NUMA levels partition their domain's span and are shared by
// every CPU whose domain has that span; NUMA groups may overlap.
type Group struct {
	ID int
	// Level is the topology level of the domains the group was built for
	// (for NUMA groups: the level whose sgc it shares, see Build).
	Level int
	// Span is sched_group_span; BalanceMask is group_balance_mask, the CPUs
	// for which this is the canonical group (equal to Span off NUMA).
	Span        cpumask.Mask
	BalanceMask cpumask.Mask
	Weight      int // group_weight
	Cores       int // distinct SMT cores
	// Flags are the flags of the child domain the group stands for.
	Flags Flags
	// AsymPreferCPU is asym_prefer_cpu (only with SD_ASYM_PACKING, else
	// cpumask.None).
	AsymPreferCPU cpumask.CPU
	// SgcID is the kernel's sgc->id (the first CPU of the balance mask),
	// printed by the sched_domain debug output.
	SgcID cpumask.CPU
	// Capacity, MinCapacity and MaxCapacity are the sgc values
	// update_group_capacity converges to with no RT/DL/IRQ pressure: the
	// sum, min and max of arch_scale_cpu_capacity over the span.
	Capacity, MinCapacity, MaxCapacity int
}

// SharedInfo describes one struct sched_domain_shared.
type SharedInfo struct {
	ID int
	// Span is the span of the domains using it; NrBusyCPUs its initial
	// nr_busy_cpus (the span weight).
	Span       cpumask.Mask
	NrBusyCPUs int
}

// rawDomain is a domain as build_sched_domains makes it, before
// cpu_attach_domain removes degenerate ones.
type rawDomain struct {
	tl       int
	cpu      cpumask.CPU
	span     cpumask.Mask
	weight   int // sd_weight: weight of the level mask
	flags    Flags
	child    *rawDomain
	parent   *rawDomain
	groups   []*rawGroup
	imb      int
	shared   int // first CPU of the span for SD_SHARE_LLC, else -1
	removed  bool
	distance int
}

type rawGroup struct {
	tl      int // level of the sd_data the sgc comes from
	key     cpumask.CPU
	span    cpumask.Mask
	balance cpumask.Mask
	out     *Group
}

type level struct {
	Level
	mask func(cpumask.CPU) cpumask.Mask
}

// builder carries Build's working state.
type builder struct {
	spec   *MachineSpec
	kernel *kernels.Baseline
	n      int
	all    cpumask.Mask
	levels []level
	raw    [][]*rawDomain // [tl][cpu]
	groups [][]*rawGroup  // [tl][key cpu]
	caps   []int
	nCaps  int // distinct capacity values
	core   []int
	smt    []cpumask.Mask
	// cluster is topology_cluster_cpumask per CPU.
	cluster []cpumask.Mask
	// balance memoises buildBalanceMask.
	balance map[balanceKey][]balanceEntry
	// tlAsym is v5.12's asym_cpu_capacity_level (-1: none), used when
	// the baseline does not classify each domain.
	tlAsym int
}

// Build constructs the sched domains Linux would build for spec, following
// kernel/sched/topology.c: the topology table (SMT, CLS, MC, PKG/DIE, then
// NODE and NUMA levels from sched_init_numa), sd_init per domain, groups
// (build_sched_groups / build_overlap_sched_groups), imb_numa_nr, group
// capacities, then cpu_attach_domain's degeneration and
// update_top_cache_domain's per-CPU shortcuts.
func Build(spec *MachineSpec, opt Options) (*Topology, error) {
	kernel, err := kernels.Lookup(opt.Kernel)
	if err != nil {
		return nil, err
	}
	if err := spec.Validate(); err != nil {
		return nil, fmt.Errorf("machine %s: %w", spec.Name, err)
	}
	if opt.ClusterLevel && !kernel.ClusterLevel {
		k := *kernel
		k.ClusterLevel = true
		kernel = &k
	}
	if opt.ClusterFlag && !kernel.ClusterFlag {
		if !kernel.ClusterLevel {
			return nil, fmt.Errorf("kernel %s has no CLS level to give SD_CLUSTER", kernel.Name)
		}
		k := *kernel
		k.ClusterFlag = true
		kernel = &k
	}
	b := &builder{spec: spec, kernel: kernel, n: len(spec.CPUs), balance: map[balanceKey][]balanceEntry{}}
	b.all = cpumask.Full(b.n)
	b.prepareMasks()
	if err := b.buildDomains(); err != nil {
		return nil, fmt.Errorf("machine %s: %w", spec.Name, err)
	}
	b.buildGroups()
	b.computeImbNumaNr()
	for c := range b.n {
		b.attach(cpumask.CPU(c))
	}
	return b.finish(), nil
}

// idMasks returns, for each CPU, the mask of CPUs with the same id; CPUs
// with equal ids share one Mask value.
func idMasks(n int, id func(int) int) []cpumask.Mask {
	byID := map[int]cpumask.Mask{}
	out := make([]cpumask.Mask, n)
	for c := range n {
		m, ok := byID[id(c)]
		if !ok {
			m = cpumask.New(n)
			byID[id(c)] = m
		}
		m.Set(cpumask.CPU(c))
		out[c] = m
	}
	return out
}

// sharedMasks maps each CPU to a canonical Mask per distinct value of f(c),
// so that CPUs with equal masks share one Mask value.
func sharedMasks(n int, f func(c cpumask.CPU) cpumask.Mask) []cpumask.Mask {
	out := make([]cpumask.Mask, n)
	byFirst := map[cpumask.CPU][]cpumask.Mask{}
	for c := range n {
		m := f(cpumask.CPU(c))
		reuse := false
		for _, o := range byFirst[m.First()] {
			if o.Equal(m) {
				out[c], reuse = o, true
				break
			}
		}
		if !reuse {
			byFirst[m.First()] = append(byFirst[m.First()], m)
			out[c] = m
		}
	}
	return out
}

// prepareMasks computes the topology table and its masks.
func (b *builder) prepareMasks() {
	s, n := b.spec, b.n
	b.caps = make([]int, n)
	b.core = make([]int, n)
	for i, c := range s.CPUs {
		b.caps[i] = c.Capacity
		b.core[i] = c.Core
	}
	b.nCaps = len(s.Capacities())
	b.smt = idMasks(n, func(c int) int { return s.CPUs[c].Core })
	cluster := idMasks(n, func(c int) int { return s.CPUs[c].Cluster })
	b.cluster = cluster
	llc := idMasks(n, func(c int) int { return s.CPUs[c].LLC })
	pkg := idMasks(n, func(c int) int { return s.CPUs[c].Package })
	node := idMasks(n, func(c int) int { return s.CPUs[c].Node })

	// MC: cpu_coregroup_mask. x86: the LLC, restricted to the node
	// (match_llc requires topology_same_node). arm64: the smallest of
	// node, package and LLC, widened to the cluster when no cache is
	// shared beyond the cluster.
	mc := sharedMasks(n, func(c cpumask.CPU) cpumask.Mask {
		if s.Arch == ArchX86 {
			return llc[c].And(node[c])
		}
		m := node[c]
		if pkg[c].SubsetOf(m) {
			m = pkg[c]
		}
		if llc[c].SubsetOf(m) {
			m = llc[c]
		}
		if b.kernel.ClusterLevel && m.SubsetOf(cluster[c]) {
			m = cluster[c]
		}
		return m
	})
	// CLS: cpu_clustergroup_mask never spans as much as the coregroup;
	// where it would, it falls back to the SMT mask (and degenerates).
	cls := make([]cpumask.Mask, n)
	for c := range n {
		if mc[c].SubsetOf(cluster[c]) {
			cls[c] = b.smt[c]
		} else {
			cls[c] = cluster[c]
		}
	}

	clsFlags := SDCluster | SDShareLLC
	if !b.kernel.ClusterFlag {
		clsFlags = SDShareLLC // cpu_cluster_flags() was cpu_core_flags() then
	}
	pkgName := b.kernel.PkgLevel
	b.levels = []level{
		{Level{"SMT", SDShareCPUCapacity | SDShareLLC, -1, 0}, func(c cpumask.CPU) cpumask.Mask { return b.smt[c] }},
	}
	if b.kernel.ClusterLevel {
		b.levels = append(b.levels, level{Level{"CLS", clsFlags, -1, 0}, func(c cpumask.CPU) cpumask.Mask { return cls[c] }})
	}
	b.levels = append(b.levels, level{Level{"MC", SDShareLLC, -1, 0}, func(c cpumask.CPU) cpumask.Mask { return mc[c] }})
	// PKG/DIE is cpu_cpu_mask, the node. x86 drops it when a package holds
	// several nodes: the NUMA levels then build the package span.
	numaInPackage := false
	for c := range n {
		if !pkg[c].And(node[c]).Equal(pkg[c]) {
			numaInPackage = true
			break
		}
	}
	if s.Arch != ArchX86 || !numaInPackage {
		b.levels = append(b.levels, level{Level{pkgName, 0, -1, 0}, func(c cpumask.CPU) cpumask.Mask { return node[c] }})
	}

	// sched_init_numa: one level per distinct distance; level i spans, for
	// each node, the nodes at distance <= d_i.
	dists := numaDistances(s.Distance)
	nodes := len(s.Distance)
	nodeMask := make([]cpumask.Mask, nodes)
	for c := range n {
		nodeMask[s.CPUs[c].Node] = node[c]
	}
	for i, d := range dists {
		masks := make([]cpumask.Mask, nodes)
		for a := range nodes {
			m := cpumask.New(n)
			for bnode := range nodes {
				if s.Distance[a][bnode] <= d {
					m.OrInPlace(nodeMask[bnode])
				}
			}
			masks[a] = m
		}
		l := Level{"NODE", 0, i, d}
		if i > 0 {
			l = Level{"NUMA", SDNuma, i, d}
		}
		b.levels = append(b.levels, level{l, func(c cpumask.CPU) cpumask.Mask { return masks[s.CPUs[c].Node] }})
	}
}

// numaDistances returns the distinct distances, ascending.
func numaDistances(d [][]int) []int {
	var seen [256]bool
	for _, row := range d {
		for _, v := range row {
			if v >= 0 && v < 256 {
				seen[v] = true
			}
		}
	}
	var out []int
	for v, ok := range seen {
		if ok {
			out = append(out, v)
		}
	}
	return out
}

// spanSane mirrors topology.c:topology_span_sane (v6.19; the same in v6.0 and
// v5.12): masks of a non-NUMA level must be equal or disjoint. Each CPU's
// mask is compared with the mask of its first CPU, and each mask with the
// masks of all its members once.
func (b *builder) spanSane(l level) error {
	if l.Flags&SDNuma != 0 {
		return nil
	}
	bad := func(c, o cpumask.CPU) error {
		return fmt.Errorf("topology level %s: masks of cpu%d (%s) and cpu%d (%s) overlap", l.Name, c, l.mask(c), o, l.mask(o))
	}
	for c := range b.n {
		cpu := cpumask.CPU(c)
		m := l.mask(cpu)
		f := m.First()
		if f != cpu {
			if !l.mask(f).Equal(m) {
				return bad(cpu, f)
			}
			continue
		}
		for o := m.Next(cpu); o != cpumask.None; o = m.Next(o) {
			if !l.mask(o).Equal(m) {
				return bad(cpu, o)
			}
		}
	}
	return nil
}

// sdInit mirrors topology.c:sd_init (v6.19; the older baselines' flags
// per kernels.Baseline: no SD_CLUSTER, v5.12's one asym level).
func (b *builder) sdInit(tl int, child *rawDomain, cpu cpumask.CPU) *rawDomain {
	l := b.levels[tl]
	mask := l.mask(cpu)
	sd := &rawDomain{
		tl:       tl,
		cpu:      cpu,
		span:     mask, // cpu_map is every CPU
		weight:   mask.Weight(),
		flags:    SDBalanceNewidle | SDBalanceExec | SDBalanceFork | SDWakeAffine | SDPreferSibling | l.Flags,
		child:    child,
		shared:   -1,
		distance: l.Distance,
	}
	if b.kernel.AsymCapacityPerDomain {
		sd.flags |= b.asymCPUCapacityClassify(sd.span)
	} else if tl == b.tlAsym {
		// v5.12: SD_ASYM_CPUCAPACITY on asym_cpu_capacity_level's level
		// only. The internal _FULL bit marks it too, so that
		// sd_asym_cpucapacity (the lowest _FULL domain) is that level;
		// the v5.12 flag layout does not print _FULL.
		sd.flags |= SDAsymCPUCapacity | SDAsymCPUCapacityFull
	}
	if sd.flags&SDAsymCPUCapacity != 0 && child != nil {
		child.flags &^= SDPreferSibling
	}
	if sd.flags&SDShareLLC != 0 {
		sd.shared = int(sd.span.First())
	}
	if sd.flags&SDNuma != 0 {
		sd.flags &^= SDPreferSibling
		sd.flags |= SDSerialize
		if l.Distance > b.spec.reclaimDist() {
			sd.flags &^= SDBalanceExec | SDBalanceFork | SDWakeAffine
		}
	}
	return sd
}

// asymCPUCapacityClassify mirrors topology.c:asym_cpu_capacity_classify
// (v5.14+: v6.0, v6.19; v5.12 uses asymCPUCapacityLevel): SD_ASYM_CPUCAPACITY
// when the span holds two or more capacity values, plus _FULL when it holds
// all of them.
func (b *builder) asymCPUCapacityClassify(span cpumask.Mask) Flags {
	if b.nCaps < 2 {
		return 0
	}
	seen := map[int]bool{}
	for c := span.First(); c != cpumask.None; c = span.Next(c) {
		seen[b.caps[c]] = true
		if len(seen) == b.nCaps {
			break
		}
	}
	switch {
	case len(seen) < 2:
		return 0
	case len(seen) < b.nCaps:
		return SDAsymCPUCapacity
	}
	return SDAsymCPUCapacity | SDAsymCPUCapacityFull
}

// asymCPUCapacityLevel mirrors topology.c:asym_cpu_capacity_level
// (v5.12): the lowest topology level at which every CPU sees a CPU of the
// largest capacity above its own, or -1 on a machine with one capacity.
func (b *builder) asymCPUCapacityLevel() int {
	if b.nCaps < 2 {
		return -1
	}
	asymLevel, asymTL := 0, -1
	for i := range b.n {
		maxCap := b.caps[i]
		for tl := asymLevel; tl < len(b.levels); tl++ {
			m := b.levels[tl].mask(cpumask.CPU(i))
			for j := m.First(); j != cpumask.None; j = m.Next(j) {
				if b.caps[j] <= maxCap {
					continue
				}
				maxCap = b.caps[j]
				asymLevel, asymTL = tl, tl
			}
		}
	}
	return asymTL
}

// buildDomains mirrors the first loop of build_sched_domains (v6.19, v6.0,
// v5.12): each CPU's chain, bottom-up, stopping at the first level spanning
// the machine.
func (b *builder) buildDomains() error {
	b.tlAsym = b.asymCPUCapacityLevel()
	b.raw = make([][]*rawDomain, len(b.levels))
	for tl, l := range b.levels {
		if err := b.spanSane(l); err != nil {
			return err
		}
		b.raw[tl] = make([]*rawDomain, b.n)
	}
	for c := range b.n {
		cpu := cpumask.CPU(c)
		var child *rawDomain
		for tl := range b.levels {
			sd := b.sdInit(tl, child, cpu)
			if child != nil {
				child.parent = sd
				if !child.span.SubsetOf(sd.span) {
					// build_sched_domain's "arch topology borken"
					// fixup: the parent always covers the child.
					sd.span = sd.span.Or(child.span)
				}
			}
			b.raw[tl][c] = sd
			child = sd
			if sd.span.Equal(b.all) {
				break
			}
		}
	}
	return nil
}

// buildGroups builds every raw domain's group list.
func (b *builder) buildGroups() {
	b.groups = make([][]*rawGroup, len(b.levels))
	for tl := range b.levels {
		b.groups[tl] = make([]*rawGroup, b.n)
	}
	for c := range b.n {
		for sd := b.raw[0][c]; sd != nil; sd = sd.parent {
			if sd.flags&SDNuma != 0 {
				b.buildOverlapSchedGroups(sd)
			} else {
				b.buildSchedGroups(sd)
			}
		}
	}
}

// getGroup mirrors topology.c:get_group (every baseline): the group of CPU i
// at level tl is its child domain's span, identified by that span's first
// CPU.
func (b *builder) getGroup(tl int, i cpumask.CPU) *rawGroup {
	sd := b.raw[tl][i]
	key, span := i, cpumask.Of(b.n, i)
	if sd.child != nil {
		key, span = sd.child.span.First(), sd.child.span
	}
	g := b.groups[tl][key]
	if g == nil {
		g = &rawGroup{tl: tl, key: key, span: span, balance: span}
		b.groups[tl][key] = g
	}
	return g
}

// forEachUncoveredWrap walks span as for_each_cpu_wrap(i, span, start)
// does, skipping CPUs covered by the spans f returns; it steps from group to
// group instead of testing every CPU.
func forEachUncoveredWrap(span cpumask.Mask, start cpumask.CPU, f func(i cpumask.CPU) (covered cpumask.Mask, ok bool)) {
	rem := span.Clone()
	i := rem.Next(start - 1)
	wrapped := false
	for {
		if i == cpumask.None {
			if wrapped {
				return
			}
			wrapped = true
			if i = rem.First(); i == cpumask.None {
				return
			}
		}
		if g, ok := f(i); ok {
			rem.AndNotInPlace(g)
		}
		rem.Clear(i)
		i = rem.Next(i)
	}
}

// buildSchedGroups mirrors topology.c:build_sched_groups (every baseline):
// walk the span from the CPU, wrapping, taking each uncovered CPU's group.
func (b *builder) buildSchedGroups(sd *rawDomain) {
	forEachUncoveredWrap(sd.span, sd.cpu, func(i cpumask.CPU) (cpumask.Mask, bool) {
		g := b.getGroup(sd.tl, i)
		sd.groups = append(sd.groups, g)
		return g.span, true
	})
}

// buildOverlapSchedGroups mirrors topology.c:build_overlap_sched_groups
// (v6.19; the same in v6.0 and v5.12) for NUMA levels: each uncovered CPU
// contributes its own domain's child span at this level (descending first
// when that child reaches outside the span, as find_descended_sibling does).
// Simplified: the kernel allocates a private sched_group per domain and
// shares only the sched_group_capacity (keyed by level and first balance-mask
// CPU); here the group itself is shared under that same key, since span,
// balance mask and sgc are all determined by it.
func (b *builder) buildOverlapSchedGroups(sd *rawDomain) {
	forEachUncoveredWrap(sd.span, sd.cpu, func(i cpumask.CPU) (cpumask.Mask, bool) {
		sib := b.raw[sd.tl][i]
		// A CPU whose chain stopped below this level has no domain here.
		if sib == nil || !sib.span.Test(i) {
			return cpumask.Mask{}, false
		}
		if sib.child != nil && !sib.child.span.SubsetOf(sd.span) {
			sib = findDescendedSibling(sd, sib)
		}
		span := sib.span
		if sib.child != nil {
			span = sib.child.span
		}
		mask := b.buildBalanceMask(sib.tl, span)
		key := mask.First()
		if key == cpumask.None {
			key = span.First()
			mask = span
		}
		g := b.groups[sib.tl][key]
		if g == nil {
			g = &rawGroup{tl: sib.tl, key: key, span: span, balance: mask}
			b.groups[sib.tl][key] = g
		}
		sd.groups = append(sd.groups, g)
		return span, true
	})
}

// findDescendedSibling mirrors topology.c:find_descended_sibling (every
// baseline).
func findDescendedSibling(sd, sib *rawDomain) *rawDomain {
	for sib.child != nil && !sib.child.span.SubsetOf(sd.span) {
		sib = sib.child
	}
	for sib.child != nil && sib.child.span.Equal(sib.span) {
		sib = sib.child
	}
	return sib
}

// buildBalanceMask mirrors topology.c:build_balance_mask (every baseline):
// the CPUs of the group whose own domain at level tl has exactly the group as
// its child. Results are memoised per level and span.
func (b *builder) buildBalanceMask(tl int, span cpumask.Mask) cpumask.Mask {
	key := balanceKey{tl, span.First()}
	for _, e := range b.balance[key] {
		if e.span.Equal(span) {
			return e.mask
		}
	}
	mask := cpumask.New(b.n)
	for j := span.First(); j != cpumask.None; j = span.Next(j) {
		s := b.raw[tl][j]
		if s == nil || s.child == nil {
			continue
		}
		if s.child.span.Equal(span) {
			mask.Set(j)
		}
	}
	b.balance[key] = append(b.balance[key], balanceEntry{span, mask})
	return mask
}

type balanceKey struct {
	tl    int
	first cpumask.CPU
}

type balanceEntry struct{ span, mask cpumask.Mask }

// computeImbNumaNr mirrors the imb_numa_nr loop of build_sched_domains
// (v6.0 and v6.19; v5.12 has no imb_numa_nr), which runs on the chain
// before degeneration.
func (b *builder) computeImbNumaNr() {
	if !b.kernel.ImbNumaNr {
		return
	}
	for c := range b.n {
		imb, imbSpan := 0, 1
		for sd := b.raw[0][c]; sd != nil; sd = sd.parent {
			child := sd.child
			if sd.flags&SDShareLLC == 0 && child != nil && child.flags&SDShareLLC != 0 {
				sw, cw := sd.span.Weight(), child.span.Weight()
				nrLLCs := sw / cw
				if nrLLCs == 1 {
					imb = sw >> 3
				} else {
					imb = nrLLCs
				}
				imb = max(1, imb)
				sd.imb = imb
				top := sd.parent
				for top != nil && top.flags&SDNuma == 0 {
					top = top.parent
				}
				if top != nil {
					imbSpan = top.span.Weight()
				} else {
					imbSpan = sw
				}
			} else {
				sd.imb = imb * max(1, sd.span.Weight()/imbSpan)
			}
		}
	}
}

// sdDegenerate mirrors topology.c:sd_degenerate (v6.19; the same in v6.0
// and v5.12).
func sdDegenerate(sd *rawDomain) bool {
	if sd.span.Weight() == 1 {
		return true
	}
	if sd.flags&sdDegenerateGroupsMask != 0 && len(sd.groups) > 1 {
		return false
	}
	return sd.flags&SDWakeAffine == 0
}

// sdParentDegenerate mirrors topology.c:sd_parent_degenerate (v6.19; the
// same in v6.0 and v5.12).
func sdParentDegenerate(sd, parent *rawDomain) bool {
	if sdDegenerate(parent) {
		return true
	}
	if !sd.span.Equal(parent.span) {
		return false
	}
	pflags := parent.flags
	if len(parent.groups) == 1 {
		pflags &^= sdDegenerateGroupsMask
	}
	return ^sd.flags&pflags == 0
}

// attach mirrors the degeneration part of topology.c:cpu_attach_domain
// (every baseline).
func (b *builder) attach(cpu cpumask.CPU) {
	sd := b.raw[0][cpu]
	for tmp := sd; tmp != nil; {
		parent := tmp.parent
		if parent == nil {
			break
		}
		if sdParentDegenerate(tmp, parent) {
			tmp.parent = parent.parent
			if parent.parent != nil {
				parent.parent.child = tmp
			}
			// The spans match, so the property transfers down.
			if parent.flags&SDPreferSibling != 0 {
				tmp.flags |= SDPreferSibling
			}
			parent.removed = true
		} else {
			tmp = tmp.parent
		}
	}
	if sd != nil && sdDegenerate(sd) {
		sd.removed = true
		if sd.parent != nil {
			sd.parent.child = nil
		}
	}
}

// finish assigns IDs and computes the per-CPU shortcuts.
func (b *builder) finish() *Topology {
	s, n := b.spec, b.n
	t := &Topology{
		Spec:              s,
		Kernel:            b.kernel.Name,
		Baseline:          b.kernel,
		NrCPUs:            n,
		Domains:           make([][]*Domain, n),
		SdLLC:             make([]*Domain, n),
		SdLLCSize:         make([]int, n),
		SdLLCID:           make([]cpumask.CPU, n),
		SdLLCShared:       make([]int, n),
		SdShareID:         make([]cpumask.CPU, n),
		SdNUMA:            make([]*Domain, n),
		SdAsymPacking:     make([]*Domain, n),
		SdAsymCPUCapacity: make([]*Domain, n),
		SMTMask:           b.smt,
		ClusterMask:       b.cluster,
		CPUCapacity:       b.caps,
		CPUNode:           make([]int, n),
		NodeMask:          make([]cpumask.Mask, len(s.Distance)),
		NumaDistances:     numaDistances(s.Distance),
	}
	for _, l := range b.levels {
		t.Levels = append(t.Levels, l.Level)
	}
	for i := range t.NodeMask {
		t.NodeMask[i] = cpumask.New(n)
	}
	for c, cs := range s.CPUs {
		t.CPUNode[c] = cs.Node
		t.NodeMask[cs.Node].Set(cpumask.CPU(c))
		if b.smt[c].Weight() > 1 {
			t.SMTPresent = true
		}
	}
	sharedID := map[int]map[int]int{} // tl -> first CPU -> id
	for c := range n {
		var prev *Domain
		for sd := b.raw[0][c]; sd != nil; sd = sd.parent {
			if sd.removed {
				continue
			}
			d := &Domain{
				ID:              len(t.AllDomains),
				CPU:             cpumask.CPU(c),
				Level:           sd.tl,
				Depth:           len(t.Domains[c]),
				Name:            b.levels[sd.tl].Name,
				Span:            sd.span,
				SpanWeight:      sd.span.Weight(),
				Flags:           sd.flags,
				Child:           prev,
				MinInterval:     sd.weight,
				MaxInterval:     2 * sd.weight,
				BalanceInterval: sd.weight,
				BusyFactor:      16,
				ImbalancePct:    117,
				ImbNumaNr:       sd.imb,
				SharedID:        -1,
			}
			switch {
			case d.Flags&SDShareCPUCapacity != 0:
				d.ImbalancePct = 110
			case d.Flags&SDShareLLC != 0:
				d.CacheNiceTries = 1
			case d.Flags&SDNuma != 0:
				d.CacheNiceTries = 2
			default:
				d.CacheNiceTries = 1
			}
			if b.levels[sd.tl].NumaLevel >= 0 {
				d.NumaDistance = b.levels[sd.tl].Distance
			}
			if b.kernel.NewidleRatio {
				d.NewidleCall, d.NewidleSuccess, d.NewidleRatio = 512, 256, 512
			}
			if sd.shared >= 0 {
				m := sharedID[sd.tl]
				if m == nil {
					m = map[int]int{}
					sharedID[sd.tl] = m
				}
				id, ok := m[sd.shared]
				if !ok {
					id = len(t.Shared)
					m[sd.shared] = id
					t.Shared = append(t.Shared, &SharedInfo{ID: id, Span: sd.span, NrBusyCPUs: sd.weight})
				}
				d.SharedID = id
			}
			if prev != nil {
				prev.Parent = d
			}
			for _, g := range sd.groups {
				d.Groups = append(d.Groups, b.group(t, g))
			}
			t.AllDomains = append(t.AllDomains, d)
			t.Domains[c] = append(t.Domains[c], d)
			prev = d
		}
	}
	t.NrShared = len(t.Shared)
	for _, g := range t.Groups {
		g.Flags = b.groupFlags(t, g)
	}
	for c := range n {
		t.updateTopCacheDomain(cpumask.CPU(c))
		for _, d := range t.Domains[c] {
			if d.Flags&SDAsymCPUCapacity != 0 {
				t.AsymCPUCapacity = true
			}
		}
		if lowestFlagDomain(t.Domains[c], SDCluster) != nil {
			t.ClusterActive = true
		}
	}
	return t
}

// group returns the public Group for a raw one, creating it on first use.
func (b *builder) group(t *Topology, g *rawGroup) *Group {
	if g.out != nil {
		return g.out
	}
	out := &Group{
		ID:            len(t.Groups),
		Level:         g.tl,
		Span:          g.span,
		BalanceMask:   g.balance,
		Weight:        g.span.Weight(),
		AsymPreferCPU: cpumask.None,
		SgcID:         g.key,
		MinCapacity:   1 << 30,
	}
	// init_sched_groups_capacity: cores = distinct SMT cores.
	cores := map[int]bool{}
	for c := g.span.First(); c != cpumask.None; c = g.span.Next(c) {
		cores[b.core[c]] = true
		cp := b.caps[c]
		out.Capacity += cp
		out.MinCapacity = min(out.MinCapacity, cp)
		out.MaxCapacity = max(out.MaxCapacity, cp)
	}
	out.Cores = len(cores)
	g.out = out
	t.Groups = append(t.Groups, out)
	return out
}

// groupFlags gives a group the flags of the domain it stands for: the
// highest surviving domain below the group's level, on the group's balance
// CPU, whose span is the group's span. The kernel copies child->flags at
// group build time and patches the local group when cpu_attach_domain
// removes that child; this is the same result for every group that is
// some CPU's local group, and a simplification for remote NUMA groups.
func (b *builder) groupFlags(t *Topology, g *Group) Flags {
	var f Flags
	for _, d := range t.Domains[g.SgcID] {
		if d.Level >= g.Level {
			break
		}
		if d.Span.Equal(g.Span) {
			f = d.Flags
		}
	}
	return f
}

// highestFlagDomain mirrors sched.h:highest_flag_domain. For v6.19 the
// search stops at the first domain without the flag only for flags shared
// with children (SDF_SHARED_CHILD); v6.0 always stopped there.
func highestFlagDomain(chain []*Domain, flag Flags, kernel *kernels.Baseline) *Domain {
	var h *Domain
	for _, d := range chain {
		if d.Flags&flag != 0 {
			h = d
			continue
		}
		if !kernel.HighestFlagPastGaps || flag&sdSharedChildMask != 0 {
			break
		}
	}
	return h
}

// lowestFlagDomain mirrors sched.h:lowest_flag_domain (every baseline).
func lowestFlagDomain(chain []*Domain, flag Flags) *Domain {
	for _, d := range chain {
		if d.Flags&flag != 0 {
			return d
		}
	}
	return nil
}

// updateTopCacheDomain mirrors topology.c:update_top_cache_domain (v6.19;
// v6.0 and v5.12 through kernels.Baseline: no SD_CLUSTER, so sd_share_id
// is the LLC id, and highest_flag_domain stops at a gap).
func (t *Topology) updateTopCacheDomain(cpu cpumask.CPU) {
	chain := t.Domains[cpu]
	id, size, shared := cpu, 1, -1
	sd := highestFlagDomain(chain, SDShareLLC, t.Baseline)
	if sd != nil {
		id, size, shared = sd.Span.First(), sd.SpanWeight, sd.SharedID
	}
	t.SdLLC[cpu], t.SdLLCSize[cpu], t.SdLLCID[cpu], t.SdLLCShared[cpu] = sd, size, id, shared
	// sd_share_id: the cluster's first CPU where there is an SD_CLUSTER
	// domain, else the LLC id (v6.0 has no SD_CLUSTER, so always the LLC).
	if cl := lowestFlagDomain(chain, SDCluster); cl != nil {
		id = cl.Span.First()
	}
	t.SdShareID[cpu] = id
	t.SdNUMA[cpu] = lowestFlagDomain(chain, SDNuma)
	t.SdAsymPacking[cpu] = highestFlagDomain(chain, SDAsymPacking, t.Baseline)
	t.SdAsymCPUCapacity[cpu] = lowestFlagDomain(chain, SDAsymCPUCapacityFull)
}

// CPUsShareCache is cpus_share_cache.
func (t *Topology) CPUsShareCache(a, b cpumask.CPU) bool {
	return a == b || t.SdLLCID[a] == t.SdLLCID[b]
}

// CPUsShareResources is cpus_share_resources.
func (t *Topology) CPUsShareResources(a, b cpumask.CPU) bool {
	return a == b || t.SdShareID[a] == t.SdShareID[b]
}

// Domain returns the lowest domain of cpu with the given level name ("MC",
// "NUMA", ...), or nil.
func (t *Topology) Domain(cpu cpumask.CPU, name string) *Domain {
	for _, d := range t.Domains[cpu] {
		if d.Name == name {
			return d
		}
	}
	return nil
}
