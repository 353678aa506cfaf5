package kernels

import (
	"strings"
	"testing"
)

func TestLookup(t *testing.T) {
	for _, name := range Names() {
		b, err := Lookup(name)
		if err != nil || b.Name != name {
			t.Fatalf("Lookup(%q) = %v, %v", name, b, err)
		}
		if b.Class != "EEVDF" && b.Class != "CFS" {
			t.Errorf("%s: class %q", name, b.Class)
		}
		if b.PkgLevel != "PKG" && b.PkgLevel != "DIE" {
			t.Errorf("%s: package level %q", name, b.PkgLevel)
		}
	}
	if b, err := Lookup(""); err != nil || b.Name != Default {
		t.Errorf("Lookup(\"\") = %v, %v; want the default %s", b, err, Default)
	}
	if Names()[0] != Default {
		t.Errorf("Names()[0] = %s, want the default first", Names()[0])
	}
	_, err := Lookup("v4.4")
	if err == nil || err.Error() != `unknown kernel "v4.4" (known: v6.19, v6.0, v5.12)` {
		t.Errorf("Lookup(v4.4) error = %v", err)
	}
}

// A returned baseline is a copy: changing it changes no other lookup.
func TestLookupCopies(t *testing.T) {
	b := Must(V619)
	b.SchedstatVersion = 1
	if Must(V619).SchedstatVersion == 1 {
		t.Fatal("Lookup returned the table's own entry")
	}
}

// TestFacts pins each baseline's cross-layer facts.
//
// Reference: kernel/sched/stats.c SCHEDSTAT_VERSION (15 in v5.12 and
// v6.0, 17 in v6.19); include/linux/sched/sd_flags.h and
// kernel/sched/topology.c default_topology (DIE until "sched/topology:
// Rename 'DIE' domain to 'PKG'", v6.7); arch/x86/kernel/smpboot.c and
// arch/arm64's topology tables (CLS from v5.16); struct sched_domain
// (imb_numa_nr from v5.18; newidle_call/success/ratio in v6.19).
func TestFacts(t *testing.T) {
	for _, tc := range []struct{ name, want string }{
		{V619, "Class=EEVDF SchedstatVersion=17 PkgLevel=PKG Flags=FlagsV619 ClusterFlag=true HighestFlagPastGaps=true NewidleRatio=true ClusterLevel=true ImbNumaNr=true AsymCapacityPerDomain=true"},
		{V60, "Class=CFS SchedstatVersion=15 PkgLevel=DIE Flags=FlagsV60 ClusterFlag=false HighestFlagPastGaps=false NewidleRatio=false ClusterLevel=true ImbNumaNr=true AsymCapacityPerDomain=true"},
		{V512, "Class=CFS SchedstatVersion=15 PkgLevel=DIE Flags=FlagsV512 ClusterFlag=false HighestFlagPastGaps=false NewidleRatio=false ClusterLevel=false ImbNumaNr=false AsymCapacityPerDomain=false"},
	} {
		var parts []string
		for _, f := range Must(tc.name).Facts() {
			parts = append(parts, f.Name+"="+f.Value)
		}
		if got := strings.Join(parts, " "); got != tc.want {
			t.Errorf("%s facts:\n got %s\nwant %s", tc.name, got, tc.want)
		}
	}
}
