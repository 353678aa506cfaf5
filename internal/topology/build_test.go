package topology

import (
	"fmt"
	"github.com/schedlab/schedlab/internal/kernels"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/schedlab/schedlab/internal/cpumask"
)

func mustPreset(t testing.TB, name string) *MachineSpec {
	t.Helper()
	s, ok := Preset(name)
	if !ok {
		t.Fatalf("no preset %q", name)
	}
	return s
}

func mustBuild(t testing.TB, s *MachineSpec, kernel string) *Topology {
	t.Helper()
	topo, err := Build(s, Options{Kernel: kernel})
	if err != nil {
		t.Fatalf("Build(%s, %s): %v", s.Name, kernel, err)
	}
	checkInvariants(t, topo)
	return topo
}

// chainSummary renders a CPU's chain as "SMT:0,128 MC:0-7,128-135 ...".
func chainSummary(topo *Topology, cpu cpumask.CPU) string {
	var parts []string
	for _, d := range topo.Domains[cpu] {
		parts = append(parts, d.Name+":"+d.Span.String())
	}
	return strings.Join(parts, " ")
}

// checkInvariants checks what the kernel's sched_domain_debug_one checks,
// plus the ID bookkeeping the scheduler relies on.
func checkInvariants(t testing.TB, topo *Topology) {
	t.Helper()
	for i, d := range topo.AllDomains {
		if d.ID != i {
			t.Fatalf("AllDomains[%d].ID = %d", i, d.ID)
		}
	}
	for i, g := range topo.Groups {
		if g.ID != i {
			t.Fatalf("Groups[%d].ID = %d", i, g.ID)
		}
		if !g.BalanceMask.SubsetOf(g.Span) || g.BalanceMask.Empty() {
			t.Fatalf("group %d: balance mask %s not a non-empty subset of span %s", i, g.BalanceMask, g.Span)
		}
		if g.Weight != g.Span.Weight() || g.SgcID != g.BalanceMask.First() {
			t.Fatalf("group %d: weight %d / sgc id %d inconsistent with span %s mask %s", i, g.Weight, g.SgcID, g.Span, g.BalanceMask)
		}
	}
	for c := range topo.NrCPUs {
		cpu := cpumask.CPU(c)
		var prev *Domain
		for depth, d := range topo.Domains[c] {
			where := fmt.Sprintf("cpu%d domain-%d (%s)", c, depth, d.Name)
			if d.CPU != cpu || d.Depth != depth || d.Child != prev || (prev != nil && prev.Parent != d) {
				t.Fatalf("%s: bad links", where)
			}
			if !d.Span.Test(cpu) {
				t.Fatalf("%s: span %s does not contain the CPU", where, d.Span)
			}
			if prev != nil && !prev.Span.SubsetOf(d.Span) {
				t.Fatalf("%s: child span %s not in %s", where, prev.Span, d.Span)
			}
			if len(d.Groups) == 0 || !d.Groups[0].Span.Test(cpu) {
				t.Fatalf("%s: the first group does not contain the CPU", where)
			}
			if prev != nil && !d.Groups[0].Span.Equal(prev.Span) {
				t.Fatalf("%s: domain->groups %s does not match domain->child %s", where, d.Groups[0].Span, prev.Span)
			}
			union := cpumask.New(topo.NrCPUs)
			for _, g := range d.Groups {
				if d.Flags&SDNuma == 0 && union.Intersects(g.Span) {
					t.Fatalf("%s: repeated CPUs in groups", where)
				}
				union.OrInPlace(g.Span)
			}
			if !union.Equal(d.Span) {
				t.Fatalf("%s: groups span %s, domain %s", where, union, d.Span)
			}
			if (d.Flags&SDShareLLC != 0) != (d.SharedID >= 0) {
				t.Fatalf("%s: shared %d with flags %s", where, d.SharedID, d.Flags)
			}
			prev = d
		}
	}
}

// imbNumaNr is section 1.5's rule, applied to a chain given as span weights
// and flags, bottom-up, before degeneration. Reference: topology.c:
// build_sched_domains (imb_numa_nr loop), v6.19.
func imbNumaNr(weights []int, llc, numa []bool) []int {
	out := make([]int, len(weights))
	imb, imbSpan := 0, 1
	for i, w := range weights {
		if !llc[i] && i > 0 && llc[i-1] {
			nr := w / weights[i-1]
			imb = nr
			if nr == 1 {
				imb = w / 8
			}
			imb = max(1, imb)
			out[i] = imb
			imbSpan = w
			for j := i + 1; j < len(weights); j++ {
				if numa[j] {
					imbSpan = weights[j]
					break
				}
			}
			continue
		}
		out[i] = imb * max(1, w/imbSpan)
	}
	return out
}

const (
	fBase    = SDBalanceNewidle | SDBalanceExec | SDBalanceFork | SDWakeAffine
	fSMT     = fBase | SDShareCPUCapacity | SDShareLLC | SDPreferSibling
	fMC      = fBase | SDShareLLC | SDPreferSibling
	fCLS     = fBase | SDCluster | SDShareLLC | SDPreferSibling
	fPKG     = fBase | SDPreferSibling
	fNUMA    = fBase | SDSerialize | SDNuma // distance <= RECLAIM_DISTANCE
	fNUMAFar = SDBalanceNewidle | SDSerialize | SDNuma
)

type wantDomain struct {
	name  string
	span  string
	flags Flags
	imb   int
}

func checkChain(t *testing.T, topo *Topology, cpu cpumask.CPU, want []wantDomain) {
	t.Helper()
	got := topo.Domains[cpu]
	if len(got) != len(want) {
		t.Fatalf("cpu%d: %d domains (%s), want %d", cpu, len(got), chainSummary(topo, cpu), len(want))
	}
	for i, w := range want {
		d := got[i]
		if d.Name != w.name || d.Span.String() != w.span {
			t.Errorf("cpu%d domain-%d: %s span=%s, want %s span=%s", cpu, i, d.Name, d.Span, w.name, w.span)
		}
		if d.Flags != w.flags {
			t.Errorf("cpu%d domain-%d (%s): flags %s, want %s", cpu, i, d.Name, d.Flags, w.flags)
		}
		if d.ImbNumaNr != w.imb {
			t.Errorf("cpu%d domain-%d (%s): imb_numa_nr %d, want %d", cpu, i, d.Name, d.ImbNumaNr, w.imb)
		}
	}
}

// Reference: topology.c:build_sched_domains, sd_init, cpu_attach_domain,
// v6.19; x86 topology table (smpboot.c). Expected chain from patches.md:
// SMT(2) -> MC(16) -> PKG(128) -> NUMA(256).
func TestZen3NPS1(t *testing.T) {
	topo := mustBuild(t, mustPreset(t, "zen3-2s-nps1"), kernels.V619)
	// Raw chain before degeneration: SMT 2, CLS 2, MC 16, PKG 128,
	// NODE 128, NUMA 256; LLC flags on the first three.
	imb := imbNumaNr([]int{2, 2, 16, 128, 128, 256},
		[]bool{true, true, true, false, false, false},
		[]bool{false, false, false, false, false, true})
	pkgImb, numaImb := imb[3], imb[5]
	if pkgImb != 8 || numaImb != 8 {
		t.Fatalf("rule gives PKG %d NUMA %d; 128/16 = 8 LLCs per node", pkgImb, numaImb)
	}
	tests := []struct {
		cpu                     cpumask.CPU
		smt, mc, pkg            string
		wantSdLLCID, wantCoreID cpumask.CPU
	}{
		{0, "0,128", "0-7,128-135", "0-63,128-191", 0, 0},
		{127, "127,255", "120-127,248-255", "64-127,192-255", 120, 127},
		{128, "0,128", "0-7,128-135", "0-63,128-191", 0, 0},
		{255, "127,255", "120-127,248-255", "64-127,192-255", 120, 127},
		{70, "70,198", "64-71,192-199", "64-127,192-255", 64, 70},
	}
	for _, tc := range tests {
		checkChain(t, topo, tc.cpu, []wantDomain{
			{"SMT", tc.smt, fSMT, 0},
			{"MC", tc.mc, fMC, 0},
			{"PKG", tc.pkg, fPKG, pkgImb},
			{"NUMA", "0-255", fNUMA, numaImb}, // 32 <= Zen's node_reclaim_distance
		})
		if topo.SdLLCSize[tc.cpu] != 16 || topo.SdLLCID[tc.cpu] != tc.wantSdLLCID {
			t.Errorf("cpu%d: sd_llc_size %d sd_llc_id %d, want 16, %d", tc.cpu, topo.SdLLCSize[tc.cpu], topo.SdLLCID[tc.cpu], tc.wantSdLLCID)
		}
		if topo.SdLLC[tc.cpu] != topo.Domain(tc.cpu, "MC") || topo.SdNUMA[tc.cpu] != topo.Domain(tc.cpu, "NUMA") {
			t.Errorf("cpu%d: sd_llc / sd_numa are not MC / NUMA", tc.cpu)
		}
		if topo.SdShareID[tc.cpu] != tc.wantSdLLCID {
			t.Errorf("cpu%d: sd_share_id %d, want the LLC id (no clusters)", tc.cpu, topo.SdShareID[tc.cpu])
		}
		if topo.SdAsymCPUCapacity[tc.cpu] != nil || topo.SdAsymPacking[tc.cpu] != nil {
			t.Errorf("cpu%d: unexpected asym domains", tc.cpu)
		}
	}
	// MC groups of CPU 0: the 8 SMT cores starting with {0,128}, each an
	// SMT group (flags of the SMT child). Reference: topology.c:
	// build_sched_groups / get_group.
	mc := topo.Domain(0, "MC")
	var got []string
	for _, g := range mc.Groups {
		got = append(got, g.Span.String())
		if g.Flags&SDShareCPUCapacity == 0 || g.Cores != 1 || g.Weight != 2 || g.Capacity != 2048 {
			t.Errorf("MC group %s: flags %s cores %d weight %d cap %d", g.Span, g.Flags, g.Cores, g.Weight, g.Capacity)
		}
	}
	if want := "0,128 1,129 2,130 3,131 4,132 5,133 6,134 7,135"; strings.Join(got, " ") != want {
		t.Errorf("MC groups of cpu0: %s, want %s", strings.Join(got, " "), want)
	}
	// The MC groups of CPU 3 are the same objects, starting at CPU 3's own.
	mc3 := topo.Domain(3, "MC")
	if mc3.Groups[0].Span.String() != "3,131" || mc3.Groups[0] != mc.Groups[3] || mc3.Groups[5] != mc.Groups[0] {
		t.Errorf("MC groups of cpu3 are not the shared groups of cpu0 rotated")
	}
	// PKG groups: the 8 LLCs of the socket, cores = 8 each.
	pkg := topo.Domain(0, "PKG")
	if len(pkg.Groups) != 8 || pkg.Groups[1].Span.String() != "8-15,136-143" || pkg.Groups[1].Cores != 8 {
		t.Errorf("PKG groups of cpu0: %d, second %s cores %d", len(pkg.Groups), pkg.Groups[1].Span, pkg.Groups[1].Cores)
	}
	// sd_init parameters. Reference: topology.c:sd_init.
	for _, tc := range []struct {
		name                  string
		pct, tries, min, maxI int
	}{{"SMT", 110, 0, 2, 4}, {"MC", 117, 1, 16, 32}, {"PKG", 117, 1, 128, 256}, {"NUMA", 117, 2, 256, 512}} {
		d := topo.Domain(0, tc.name)
		if d.ImbalancePct != tc.pct || d.CacheNiceTries != tc.tries || d.MinInterval != tc.min || d.MaxInterval != tc.maxI ||
			d.BalanceInterval != tc.min || d.BusyFactor != 16 {
			t.Errorf("%s: pct %d tries %d intervals %d/%d/%d busy %d", tc.name, d.ImbalancePct, d.CacheNiceTries,
				d.MinInterval, d.MaxInterval, d.BalanceInterval, d.BusyFactor)
		}
	}
	if !topo.SMTPresent || topo.SMTMask[5].String() != "5,133" || topo.CPUNode[200] != 1 || topo.NodeMask[1].String() != "64-127,192-255" {
		t.Errorf("smt/node shortcuts wrong: %v %s %d %s", topo.SMTPresent, topo.SMTMask[5], topo.CPUNode[200], topo.NodeMask[1])
	}
	// sched_domain_shared: one per LLC (MC) and one per core (SMT), keyed
	// by the span's first CPU; shared by all CPUs of the span.
	if topo.NrShared != 16+128 || topo.SdLLCShared[0] != topo.SdLLCShared[135] || topo.SdLLCShared[0] == topo.SdLLCShared[8] {
		t.Errorf("shared: %d, llc shared of 0/135/8 = %d/%d/%d", topo.NrShared, topo.SdLLCShared[0], topo.SdLLCShared[135], topo.SdLLCShared[8])
	}
	if sh := topo.Shared[topo.SdLLCShared[0]]; sh.NrBusyCPUs != 16 || sh.Span.String() != "0-7,128-135" {
		t.Errorf("llc shared of cpu0: %s busy %d", sh.Span, sh.NrBusyCPUs)
	}
}

// Reference: topology.c:sched_init_numa and sd_init (NUMA levels),
// smpboot.c:build_sched_topology (no PKG with NUMA in package), v6.19.
// Expected chain from patches.md: SMT(2) -> MC(16) -> NODE(32) -> NUMA(128)
// -> NUMA(256).
func TestZen3NPS4(t *testing.T) {
	topo := mustBuild(t, mustPreset(t, "zen3-2s-nps4"), kernels.V619)
	// Raw chain: SMT 2, CLS 2, MC 16, NODE 32, NUMA(12) 128, NUMA(32) 256.
	imb := imbNumaNr([]int{2, 2, 16, 32, 128, 256},
		[]bool{true, true, true, false, false, false},
		[]bool{false, false, false, false, true, true})
	for _, tc := range []struct {
		cpu                       cpumask.CPU
		smt, mc, node, numaSocket string
	}{
		{0, "0,128", "0-7,128-135", "0-15,128-143", "0-63,128-191"},
		{128, "0,128", "0-7,128-135", "0-15,128-143", "0-63,128-191"},
		{40, "40,168", "40-47,168-175", "32-47,160-175", "0-63,128-191"},
		{255, "127,255", "120-127,248-255", "112-127,240-255", "64-127,192-255"},
	} {
		checkChain(t, topo, tc.cpu, []wantDomain{
			{"SMT", tc.smt, fSMT, imb[0]},
			{"MC", tc.mc, fMC, imb[2]},
			{"NODE", tc.node, fPKG, imb[3]},
			{"NUMA", tc.numaSocket, fNUMA, imb[4]},
			{"NUMA", "0-255", fNUMA, imb[5]}, // 32 <= Zen's node_reclaim_distance
		})
	}
	if imb[3] != 2 || imb[4] != 2 || imb[5] != 4 {
		t.Errorf("rule gives %v", imb)
	}
	if d := topo.Domains[0][3]; d.NumaDistance != 12 || topo.Domains[0][4].NumaDistance != 32 {
		t.Errorf("numa distances %d %d", d.NumaDistance, topo.Domains[0][4].NumaDistance)
	}
	if fmt.Sprint(topo.NumaDistances) != "[10 12 32]" {
		t.Errorf("sched_domains_numa_distance = %v", topo.NumaDistances)
	}
	// NUMA(128) groups of CPU 0: the four nodes of socket 0, local first.
	var got []string
	for _, g := range topo.Domains[0][3].Groups {
		got = append(got, g.Span.String())
	}
	if want := "0-15,128-143 16-31,144-159 32-47,160-175 48-63,176-191"; strings.Join(got, " ") != want {
		t.Errorf("NUMA(12) groups: %s", strings.Join(got, " "))
	}
}

// kunpengNUMAChain derives, from the distance table alone, the NUMA spans a
// CPU of node n keeps after degeneration: one mask per distinct distance,
// duplicates dropped, up to the first that covers every node.
// Reference: topology.c:sched_init_numa, sd_parent_degenerate, v6.19.
func kunpengNUMAChain(dist [][]int, n, dieCPUs int) []string {
	var ds []int
	for d := 11; d < 256; d++ {
		for _, row := range dist {
			for _, v := range row {
				if v == d {
					ds = append(ds, d)
					goto next
				}
			}
		}
	next:
	}
	var out []string
	prev := ""
	for _, d := range ds {
		m := cpumask.New(len(dist) * dieCPUs)
		nodes := 0
		for o := range dist {
			if dist[n][o] <= d {
				for c := o * dieCPUs; c < (o+1)*dieCPUs; c++ {
					m.Set(cpumask.CPU(c))
				}
				nodes++
			}
		}
		if m.String() != prev {
			out = append(out, m.String())
			prev = m.String()
		}
		if nodes == len(dist) {
			break
		}
	}
	return out
}

// Reference: topology.c (generic default_topology), arch_topology.c
// cpu_coregroup_mask / cpu_clustergroup_mask, v6.19.
func TestKunpeng920(t *testing.T) {
	for _, tc := range []struct {
		name     string
		die      int
		clusters int
	}{{"kunpeng920-96", 24, 6}, {"kunpeng920-128", 32, 8}} {
		t.Run(tc.name, func(t *testing.T) {
			spec := mustPreset(t, tc.name)
			topo := mustBuild(t, spec, kernels.V619)
			if topo.NrCPUs != 4*tc.die {
				t.Fatalf("%d CPUs", topo.NrCPUs)
			}
			for _, cpu := range []int{0, 5, tc.die, 2*tc.die + 7, 4*tc.die - 1} {
				node := cpu / tc.die
				cl := cpu / 4 * 4
				var parts []string
				parts = append(parts, fmt.Sprintf("CLS:%d-%d", cl, cl+3))
				parts = append(parts, fmt.Sprintf("MC:%d-%d", node*tc.die, node*tc.die+tc.die-1))
				for _, span := range kunpengNUMAChain(spec.Distance, node, tc.die) {
					parts = append(parts, "NUMA:"+span)
				}
				if got, want := chainSummary(topo, cpumask.CPU(cpu)), strings.Join(parts, " "); got != want {
					t.Errorf("cpu%d:\n got %s\nwant %s", cpu, got, want)
				}
				d0 := topo.Domains[cpu][0]
				if d0.Flags != fCLS || len(d0.Groups) != 4 {
					t.Errorf("cpu%d CLS: flags %s, %d groups", cpu, d0.Flags, len(d0.Groups))
				}
				if len(topo.Domain(cpumask.CPU(cpu), "MC").Groups) != tc.clusters {
					t.Errorf("cpu%d MC groups: want %d clusters", cpu, tc.clusters)
				}
				if topo.SdLLCSize[cpu] != tc.die || topo.SdShareID[cpu] != cpumask.CPU(cl) || topo.SdLLCID[cpu] != cpumask.CPU(node*tc.die) {
					t.Errorf("cpu%d: llc size %d share id %d llc id %d", cpu, topo.SdLLCSize[cpu], topo.SdShareID[cpu], topo.SdLLCID[cpu])
				}
			}
			if topo.SMTPresent || !topo.ClusterActive {
				t.Errorf("smt_present %v cluster_active %v", topo.SMTPresent, topo.ClusterActive)
			}
			// imb_numa_nr: PKG (24 or 32, one LLC) is the first non-LLC
			// level above MC: imb = span>>3; then scaled by span over the
			// first NUMA span. Raw chain of node 0: SMT 1, CLS 4, MC d,
			// PKG d, NODE d, NUMA 2d, NUMA 3d, NUMA 4d.
			d := tc.die
			imb := imbNumaNr([]int{1, 4, d, d, d, 2 * d, 3 * d, 4 * d},
				[]bool{true, true, true, false, false, false, false, false},
				[]bool{false, false, false, false, false, true, true, true})
			for i, dom := range topo.Domains[0][2:] {
				if dom.ImbNumaNr != imb[5+i] {
					t.Errorf("cpu0 %s span %s imb_numa_nr %d, want %d", dom.Name, dom.Span, dom.ImbNumaNr, imb[5+i])
				}
			}
		})
	}
}

// The overlapping NUMA groups of the Kunpeng's asymmetric distance table,
// worked by hand from topology.c:build_overlap_sched_groups,
// find_descended_sibling and build_balance_mask (v6.19).
func TestKunpengOverlapGroups(t *testing.T) {
	topo := mustBuild(t, mustPreset(t, "kunpeng920-96"), kernels.V619)
	groups := func(d *Domain) string {
		var s []string
		for _, g := range d.Groups {
			x := g.Span.String()
			if !g.BalanceMask.Equal(g.Span) {
				x += " mask=" + g.BalanceMask.String()
			}
			s = append(s, "{"+x+"}")
		}
		return strings.Join(s, " ")
	}
	for _, tc := range []struct {
		cpu, depth int
		want       string
	}{
		{0, 4, "{0-71 mask=0-23} {48-95 mask=72-95}"},
		// Node 1's NUMA(22) spans nodes 0-2; node 2's own child there
		// reaches node 3, so the group descends to node 2 alone.
		{24, 3, "{0-47 mask=24-47} {48-71}"},
		{24, 4, "{0-71 mask=24-47} {0-23,48-95 mask=72-95}"},
		{48, 4, "{0-23,48-95 mask=48-71} {0-47 mask=24-47}"},
	} {
		if got := groups(topo.Domains[tc.cpu][tc.depth]); got != tc.want {
			t.Errorf("cpu%d domain-%d groups %s, want %s", tc.cpu, tc.depth, got, tc.want)
		}
	}
	// Shared sgc: CPU 24's NUMA(22) local group is the group CPU 48 sees
	// for node 1.
	if topo.Domains[24][3].Groups[0] != topo.Domains[48][4].Groups[1] {
		t.Errorf("overlap groups with the same sgc are not shared")
	}
}

// Reference: topology.c:sd_init (asym_cpu_capacity_classify), v6.19;
// arch_topology.c:cpu_coregroup_mask (the L2 is the LLC on these boards).
func TestArmBoards(t *testing.T) {
	t.Run("hikey", func(t *testing.T) {
		topo := mustBuild(t, mustPreset(t, "hikey"), kernels.V619)
		for _, cpu := range []cpumask.CPU{0, 5} {
			lo := cpu / 4 * 4
			checkChain(t, topo, cpu, []wantDomain{
				{"MC", fmt.Sprintf("%d-%d", lo, lo+3), fMC, 0},
				{"PKG", "0-7", fPKG, 2}, // 8/4 = 2 LLCs, no NUMA above
			})
		}
		v5 := mustBuild(t, mustPreset(t, "hikey"), kernels.V60)
		if chainSummary(v5, 0) != "MC:0-3 DIE:0-7" {
			t.Errorf("v6.0: %s", chainSummary(v5, 0))
		}
		if topo.SMTPresent || topo.AsymCPUCapacity || topo.SdLLCSize[0] != 4 {
			t.Errorf("hikey shortcuts")
		}
	})
	t.Run("hikey960", func(t *testing.T) {
		topo := mustBuild(t, mustPreset(t, "hikey960"), kernels.V619)
		for _, cpu := range []cpumask.CPU{0, 7} {
			lo := cpu / 4 * 4
			// The top level sees both capacities: ASYM|FULL; its child
			// loses SD_PREFER_SIBLING.
			checkChain(t, topo, cpu, []wantDomain{
				{"MC", fmt.Sprintf("%d-%d", lo, lo+3), fMC &^ SDPreferSibling, 0},
				{"PKG", "0-7", fPKG | SDAsymCPUCapacity | SDAsymCPUCapacityFull, 2},
			})
			if topo.SdAsymCPUCapacity[cpu] != topo.Domain(cpu, "PKG") {
				t.Errorf("cpu%d: sd_asym_cpucapacity is not PKG", cpu)
			}
		}
		pkg := topo.Domain(0, "PKG")
		if pkg.Groups[0].Capacity != 4*592 || pkg.Groups[1].Capacity != 4*1024 || pkg.Groups[0].MaxCapacity != 592 {
			t.Errorf("group capacities %d %d", pkg.Groups[0].Capacity, pkg.Groups[1].Capacity)
		}
		if !topo.AsymCPUCapacity {
			t.Errorf("sched_asym_cpucapacity not set")
		}
	})
	t.Run("chromebook-7c", func(t *testing.T) {
		spec := mustPreset(t, "chromebook-7c")
		topo := mustBuild(t, spec, kernels.V619)
		// One cluster and one L3 for all 8 CPUs: CLS falls back to the
		// SMT mask and degenerates; MC spans the machine, so the build
		// stops there, with both capacities inside it.
		for _, cpu := range []cpumask.CPU{0, 6} {
			checkChain(t, topo, cpu, []wantDomain{
				{"MC", "0-7", fMC | SDAsymCPUCapacity | SDAsymCPUCapacityFull, 0},
			})
			if topo.SdAsymCPUCapacity[cpu] != topo.Domains[cpu][0] || topo.SdLLCSize[cpu] != 8 {
				t.Errorf("cpu%d shortcuts", cpu)
			}
		}
		if spec.CPUs[0].FreqDomain == spec.CPUs[6].FreqDomain || spec.CPUs[0].FreqDomain != spec.CPUs[5].FreqDomain {
			t.Errorf("frequency domains: want cpu0-5 and cpu6-7")
		}
	})
}

// Reference: flag values and names of include/linux/sched/sd_flags.h in
// v6.19 and v6.0 (SD_SHARE_PKG_RESOURCES, SD_OVERLAP; level DIE).
func TestBaselineNaming(t *testing.T) {
	s := mustPreset(t, "zen3-2s-nps1")
	v6 := mustBuild(t, s, kernels.V619)
	v5 := mustBuild(t, s, kernels.V60)
	if got := chainSummary(v5, 0); got != "SMT:0,128 MC:0-7,128-135 DIE:0-63,128-191 NUMA:0-255" {
		t.Errorf("v6.0 chain %s", got)
	}
	for _, tc := range []struct {
		topo  *Topology
		depth int
		names string
		value uint32
	}{
		{v6, 0, "SD_BALANCE_NEWIDLE|SD_BALANCE_EXEC|SD_BALANCE_FORK|SD_WAKE_AFFINE|SD_SHARE_CPUCAPACITY|SD_SHARE_LLC|SD_PREFER_SIBLING", 0x1297},
		{v5, 0, "SD_BALANCE_NEWIDLE|SD_BALANCE_EXEC|SD_BALANCE_FORK|SD_WAKE_AFFINE|SD_SHARE_CPUCAPACITY|SD_SHARE_PKG_RESOURCES|SD_PREFER_SIBLING", 0x997},
		{v6, 3, "SD_BALANCE_NEWIDLE|SD_BALANCE_EXEC|SD_BALANCE_FORK|SD_WAKE_AFFINE|SD_SERIALIZE|SD_NUMA", 0x2417},
		{v5, 3, "SD_BALANCE_NEWIDLE|SD_BALANCE_EXEC|SD_BALANCE_FORK|SD_WAKE_AFFINE|SD_SERIALIZE|SD_OVERLAP|SD_NUMA", 0x3217},
	} {
		d := tc.topo.Domains[0][tc.depth]
		if got := FlagsString(d.Flags, tc.topo.Kernel); got != tc.names {
			t.Errorf("%s %s: %s, want %s", tc.topo.Kernel, d.Name, got, tc.names)
		}
		if got := FlagsValue(d.Flags, tc.topo.Kernel); got != tc.value {
			t.Errorf("%s %s: 0x%x, want 0x%x", tc.topo.Kernel, d.Name, got, tc.value)
		}
	}
	// v6.0 has no SD_CLUSTER: the Kunpeng's CLS level carries only
	// SD_SHARE_PKG_RESOURCES, and sd_share_id is the LLC id.
	k5 := mustBuild(t, mustPreset(t, "kunpeng920-96"), kernels.V60)
	if d := k5.Domains[5][0]; d.Name != "CLS" || d.Flags != fCLS&^SDCluster {
		t.Errorf("v6.0 CLS: %s %s", d.Name, d.Flags)
	}
	if k5.SdShareID[5] != 0 || k5.ClusterActive || k5.Domains[5][0].NewidleCall != 0 {
		t.Errorf("v6.0 sd_share_id %d cluster_active %v", k5.SdShareID[5], k5.ClusterActive)
	}
	// v5.12: the same names, no SD_ASYM_CPUCAPACITY_FULL (v5.14), so the
	// later bits sit one lower: SMT 0x1|0x2|0x4|0x10|0x40|0x80|0x400 and
	// NUMA 0x1|0x2|0x4|0x10|0x100 (SERIALIZE)|0x800 (OVERLAP)|0x1000.
	v512 := mustBuild(t, s, kernels.V512)
	for _, tc := range []struct {
		depth int
		value uint32
	}{{0, 0x4d7}, {3, 0x1917}} {
		d := v512.Domains[0][tc.depth]
		if got, want := FlagsString(d.Flags, kernels.V512), FlagsString(v5.Domains[0][tc.depth].Flags, kernels.V60); got != want {
			t.Errorf("v5.12 %s: %s, want v6.0's %s", d.Name, got, want)
		}
		if got := FlagsValue(d.Flags, kernels.V512); got != tc.value {
			t.Errorf("v5.12 %s: 0x%x, want 0x%x", d.Name, got, tc.value)
		}
	}
	if _, err := Build(s, Options{Kernel: "v4.4"}); err == nil || !strings.Contains(err.Error(), `unknown kernel "v4.4"`) {
		t.Errorf("bad kernel: %v", err)
	}
}

// Degeneration rules on small synthetic machines. Reference: topology.c:
// sd_degenerate, sd_parent_degenerate, cpu_attach_domain, v6.19.
func TestDegenerate(t *testing.T) {
	for _, tc := range []struct {
		name string
		r    Regular
		cpu  cpumask.CPU
		want string
	}{
		{"uniprocessor", Regular{Sockets: 1, NodesPerSocket: 1, LLCsPerNode: 1, CoresPerLLC: 1, ThreadsPerCore: 1}, 0, ""},
		{"one LLC, no SMT", Regular{Sockets: 1, NodesPerSocket: 1, LLCsPerNode: 1, CoresPerLLC: 8, ThreadsPerCore: 1}, 3, "MC:0-7"},
		{"one core, SMT4", Regular{Sockets: 1, NodesPerSocket: 1, LLCsPerNode: 1, CoresPerLLC: 1, ThreadsPerCore: 4}, 2, "SMT:0-3"},
		{"worked example 1.6", Regular{Sockets: 2, NodesPerSocket: 1, LLCsPerNode: 1, CoresPerLLC: 8, ThreadsPerCore: 2,
			Distance: [][]int{{10, 21}, {21, 10}}}, 0, "SMT:0,16 MC:0-7,16-23 NUMA:0-31"},
		{"sequential SMT2", Regular{Sockets: 1, NodesPerSocket: 1, LLCsPerNode: 2, CoresPerLLC: 2, ThreadsPerCore: 2,
			Numbering: NumberingSequential}, 5, "SMT:4-5 MC:4-7 PKG:0-7"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := tc.r.Spec()
			if err != nil {
				t.Fatal(err)
			}
			s.Name = tc.name
			topo := mustBuild(t, s, kernels.V619)
			if got := chainSummary(topo, tc.cpu); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
	// Worked example 1.6: NUMA keeps FORK/EXEC/WAKE_AFFINE (21 <= 30) and
	// imb_numa_nr = 32/16 = 2.
	s, _ := (&Regular{Sockets: 2, NodesPerSocket: 1, LLCsPerNode: 1, CoresPerLLC: 8, ThreadsPerCore: 2,
		Distance: [][]int{{10, 21}, {21, 10}}}).Spec()
	topo := mustBuild(t, s, kernels.V619)
	if d := topo.Domains[0][2]; d.Flags != fNUMA || d.ImbNumaNr != 2 {
		t.Errorf("worked example NUMA: %s imb %d", d.Flags, d.ImbNumaNr)
	}
}

func TestPresetsBuild(t *testing.T) {
	for _, p := range Presets() {
		for _, k := range kernels.Names() {
			topo := mustBuild(t, mustPreset(t, p.Name), k)
			if topo.NrCPUs != p.NrCPUs {
				t.Errorf("%s: %d CPUs, list says %d", p.Name, topo.NrCPUs, p.NrCPUs)
			}
			for c := range topo.NrCPUs {
				top := topo.Domains[c][len(topo.Domains[c])-1]
				if top.SpanWeight != topo.NrCPUs {
					t.Errorf("%s cpu%d: top domain spans %s", p.Name, c, top.Span)
				}
			}
		}
	}
}

// Build must not modify its spec, and must be deterministic.
func TestBuildDeterministic(t *testing.T) {
	s := mustPreset(t, "kunpeng920-96")
	before := s.Clone()
	var outs []string
	for range 2 {
		var b strings.Builder
		if err := FormatText(&b, mustBuild(t, s, kernels.V619)); err != nil {
			t.Fatal(err)
		}
		outs = append(outs, b.String())
	}
	if outs[0] != outs[1] {
		t.Errorf("two builds print differently")
	}
	var b1, b2 strings.Builder
	FormatJSON(&b1, mustBuild(t, before, kernels.V619))
	FormatJSON(&b2, mustBuild(t, s, kernels.V619))
	if b1.String() != b2.String() {
		t.Errorf("Build modified its spec")
	}
}

func load1024(t testing.TB) *MachineSpec {
	t.Helper()
	s, err := LoadFile(filepath.Join("testdata", "machines", "big1024.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// Reference: topology.c:build_sched_domains on a 4-socket, 1024-CPU box.
func TestBuild1024(t *testing.T) {
	s := load1024(t)
	start := time.Now()
	topo := mustBuild(t, s, kernels.V619)
	if el := time.Since(start); el > 5*time.Second {
		t.Errorf("Build took %v", el)
	}
	if topo.NrCPUs != 1024 {
		t.Fatalf("%d CPUs", topo.NrCPUs)
	}
	for _, tc := range []struct {
		cpu  cpumask.CPU
		want string
	}{
		{0, "SMT:0,512 MC:0-15,512-527 PKG:0-127,512-639 NUMA:0-1023"},
		{700, "SMT:188,700 MC:176-191,688-703 PKG:128-255,640-767 NUMA:0-1023"},
		{1023, "SMT:511,1023 MC:496-511,1008-1023 PKG:384-511,896-1023 NUMA:0-1023"},
	} {
		if got := chainSummary(topo, tc.cpu); got != tc.want {
			t.Errorf("cpu%d: %s, want %s", tc.cpu, got, tc.want)
		}
	}
	if d := topo.Domain(0, "NUMA"); len(d.Groups) != 4 || d.ImbNumaNr != 8 || d.Flags != fNUMA {
		t.Errorf("NUMA: %d groups imb %d flags %s", len(d.Groups), d.ImbNumaNr, d.Flags)
	}
}

func BenchmarkBuildZen3NPS1(b *testing.B) {
	s := mustPreset(b, "zen3-2s-nps1")
	for b.Loop() {
		if _, err := Build(s, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkBuild1024(b *testing.B) {
	s := load1024(b)
	for b.Loop() {
		if _, err := Build(s, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

// TestReclaimDistance: NUMA levels beyond node_reclaim_distance lose
// SD_BALANCE_EXEC, SD_BALANCE_FORK and SD_WAKE_AFFINE. The kernel default
// is RECLAIM_DISTANCE = 30; AMD Zen sets 32 (arch/x86/kernel/cpu/amd.c), so
// the zen3 presets keep them at SLIT 32, and the same machine with the
// default loses them.
// Reference: topology.c:sd_init (v6.19).
func TestReclaimDistance(t *testing.T) {
	zen := mustPreset(t, "zen3-2s-nps1")
	if zen.ReclaimDistance != 32 {
		t.Fatalf("zen3 preset reclaim distance %d", zen.ReclaimDistance)
	}
	generic := zen.Clone()
	generic.ReclaimDistance = 0
	for _, tc := range []struct {
		spec  *MachineSpec
		flags Flags
	}{{zen, fNUMA}, {generic, fNUMAFar}} {
		topo := mustBuild(t, tc.spec, kernels.V619)
		d := topo.Domains[0][len(topo.Domains[0])-1]
		if d.Name != "NUMA" || d.Flags != tc.flags {
			t.Errorf("reclaim distance %d: %s flags %s, want %s", tc.spec.ReclaimDistance, d.Name, d.Flags, tc.flags)
		}
	}
	// YAML: reclaim_distance is read, and range-checked.
	if _, err := ParseYAML("r.yaml", []byte("name: r\nsockets: 2\ncores_per_llc: 2\ndistance: [[10, 32], [32, 10]]\nreclaim_distance: 5\n")); err == nil || !strings.Contains(err.Error(), "reclaim_distance") {
		t.Errorf("reclaim_distance 5 accepted: %v", err)
	}
}

// TestV512Domains: what v5.12 builds differently.
//
// Reference: topology.c of v5.12 (default_topology / x86_topology have no
// CLS level: "sched: Add cluster scheduler level for x86" and the arm64
// cluster support are v5.16; build_sched_domains computes no imb_numa_nr,
// v5.18; asym_cpu_capacity_level sets SD_ASYM_CPUCAPACITY on one level,
// v5.14 classified every domain).
//
//   - Kunpeng 920: v6.0 builds CLS(4) → MC(24) on each die; v5.12 starts
//     at MC(24), whose groups are single CPUs (the child level is gone).
//   - zen3-2s-nps1: the same chain as v6.0 (its CLS degenerates anyway),
//     but every imb_numa_nr is 0.
//   - hikey960: the one level at which every CPU sees a 1024 CPU is DIE;
//     it carries SD_ASYM_CPUCAPACITY (and is sd_asym_cpucapacity), as in
//     v6.0, whose per-domain rule gives the same on a two-capacity machine.
func TestV512Domains(t *testing.T) {
	kp := mustBuild(t, mustPreset(t, "kunpeng920-96"), kernels.V512)
	d := kp.Domains[5][0]
	if d.Name != "MC" || d.SpanWeight != 24 || len(d.Groups) != 24 {
		t.Errorf("v5.12 Kunpeng cpu5 lowest domain %s span %d groups %d, want MC 24 24", d.Name, d.SpanWeight, len(d.Groups))
	}
	for _, l := range kp.Levels {
		if l.Name == "CLS" {
			t.Errorf("v5.12 has a CLS level")
		}
	}
	kp6 := mustBuild(t, mustPreset(t, "kunpeng920-96"), kernels.V60)
	if d := kp6.Domains[5][0]; d.Name != "CLS" || d.SpanWeight != 4 {
		t.Errorf("v6.0 Kunpeng cpu5 lowest domain %s %d, want CLS 4", d.Name, d.SpanWeight)
	}

	zen := mustBuild(t, mustPreset(t, "zen3-2s-nps1"), kernels.V512)
	zen6 := mustBuild(t, mustPreset(t, "zen3-2s-nps1"), kernels.V60)
	if chainSummary(zen, 0) != chainSummary(zen6, 0) {
		t.Errorf("v5.12 zen chain %s, v6.0 %s", chainSummary(zen, 0), chainSummary(zen6, 0))
	}
	for _, d := range zen.Domains[0] {
		if d.ImbNumaNr != 0 {
			t.Errorf("v5.12 %s imb_numa_nr %d, want 0 (no such field)", d.Name, d.ImbNumaNr)
		}
	}
	if nr := zen6.Domains[0][3].ImbNumaNr; nr != 8 {
		t.Errorf("v6.0 NUMA imb_numa_nr %d, want 8", nr)
	}

	hk := mustBuild(t, mustPreset(t, "hikey960"), kernels.V512)
	for _, cpu := range []cpumask.CPU{0, 7} {
		top := hk.Domain(cpu, "DIE")
		if top == nil || top.Flags&SDAsymCPUCapacity == 0 || hk.Domains[cpu][0].Flags&SDAsymCPUCapacity != 0 {
			t.Errorf("v5.12 hikey960 cpu%d: %s", cpu, chainSummary(hk, cpu))
		}
		if hk.SdAsymCPUCapacity[cpu] != top {
			t.Errorf("v5.12 hikey960 cpu%d: sd_asym_cpucapacity is not DIE", cpu)
		}
		if n := FlagsString(top.Flags, kernels.V512); strings.Contains(n, "FULL") {
			t.Errorf("v5.12 prints %s", n)
		}
	}
}

// The cluster-level variant's option builds on v5.12 the CLS level Barry
// Song's RFC v2 added: on Kunpeng 920 (6 clusters of 4 per 24-core die)
// CPU 5's lowest domain spans its cluster (4-7) with cpu_core_flags()'s
// SD_SHARE_PKG_RESOURCES and no SD_CLUSTER, its parent is the die's MC,
// and sd_llc stays the die (24 CPUs); on HiKey, whose clusters are its
// LLCs, the level degenerates and the chain is v5.12's own. Without the
// option v5.12 has no CLS level (TestV512Domains). ClusterMask is the
// cluster either way.
func TestClusterLevelOption(t *testing.T) {
	kp, err := Build(mustPreset(t, "kunpeng920-96"), Options{Kernel: kernels.V512, ClusterLevel: true})
	if err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, kp)
	d := kp.Domains[5]
	if d[0].Name != "CLS" || d[0].Span.String() != "4-7" || d[1].Name != "MC" || d[1].SpanWeight != 24 {
		t.Errorf("cpu5's chain %s, want CLS:4-7 then MC over 24", chainSummary(kp, 5))
	}
	if d[0].Flags&SDShareLLC == 0 || d[0].Flags&SDCluster != 0 {
		t.Errorf("CLS flags %v: want SD_SHARE_PKG_RESOURCES without SD_CLUSTER", d[0].Flags)
	}
	if kp.SdLLCSize[5] != 24 || kp.SdLLC[5].Name != "MC" {
		t.Errorf("sd_llc of cpu5 %s over %d, want MC over 24", kp.SdLLC[5].Name, kp.SdLLCSize[5])
	}
	plain := mustBuild(t, mustPreset(t, "kunpeng920-96"), kernels.V512)
	if chainSummary(kp, 5) == chainSummary(plain, 5) {
		t.Errorf("the option changed nothing: %s", chainSummary(kp, 5))
	}
	for _, topo := range []*Topology{kp, plain} {
		if got := topo.ClusterMask[5].String(); got != "4-7" {
			t.Errorf("ClusterMask[5] = %s, want 4-7", got)
		}
	}
	hk, err := Build(mustPreset(t, "hikey"), Options{Kernel: kernels.V512, ClusterLevel: true})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := chainSummary(hk, 0), chainSummary(mustBuild(t, mustPreset(t, "hikey"), kernels.V512), 0); got != want {
		t.Errorf("hikey cpu0 with the option %s, without %s: want the same (CLS degenerates)", got, want)
	}
}
