// Package kernels is the one list of the kernel baselines schedlab models,
// with the facts about each release that more than one layer needs: the
// fair class it runs (EEVDF or CFS), how topology.c names and flags its
// sched domains, and the /proc/schedstat version it prints. Adding a
// baseline is one entry here plus its sched_features and sysctl defaults
// in package sched (sched.Baseline).
//
// It imports nothing of schedlab, so every layer (topology, sched,
// observers, CLI) can ask it.
package kernels

import (
	"fmt"
	"strings"
)

// The baselines' names, as --kernel takes them.
const (
	V619 = "v6.19"
	V60  = "v6.0"
	V512 = "v5.12"
)

// Default is the baseline used when none is named.
const Default = V619

// FlagLayout names the include/linux/sched/sd_flags.h a release has: the
// names and bit values of the SD_* flags.
type FlagLayout int

const (
	// FlagsV619: SD_CLUSTER at 0x100, SD_SHARE_LLC at 0x200, no
	// SD_OVERLAP, as in v6.19.
	FlagsV619 FlagLayout = iota
	// FlagsV60: no SD_CLUSTER, SD_SHARE_PKG_RESOURCES at 0x100, and
	// SD_OVERLAP (0x1000) on the NUMA levels, as from v5.14 until SD_CLUSTER
	// (absent in 6.5, present in 6.8.1).
	FlagsV60
	// FlagsV512: as FlagsV60 without SD_ASYM_CPUCAPACITY_FULL (v5.14),
	// so every later bit is one lower: SD_SHARE_PKG_RESOURCES at 0x80,
	// SD_OVERLAP at 0x800, SD_NUMA at 0x1000.
	FlagsV512
)

// Baseline is one kernel release schedlab models.
type Baseline struct {
	// Name is the --kernel name ("v6.19").
	Name string
	// Class is the fair class's pick: "EEVDF" (v6.6+) or "CFS".
	Class string
	// Summary is one line for listings.
	Summary string
	// Definition says which kernel the baseline is: the release, the
	// tree read, and what of neighbouring trees it leaves out.
	Definition string
	// SchedstatVersion is the version line of its /proc/schedstat.
	SchedstatVersion int
	// PkgLevel is the name of the package level of the default
	// topology table: "PKG" in v6.19, "DIE" before the rename.
	PkgLevel string
	// Flags is its sd_flags.h.
	Flags FlagLayout
	// ClusterFlag: cpu_cluster_flags() returns SD_CLUSTER|SD_SHARE_LLC,
	// as in v6.19; v6.0's CLS level had cpu_core_flags().
	ClusterFlag bool
	// HighestFlagPastGaps: highest_flag_domain() looks past a level
	// without the flag for flags that are not SDF_SHARED_CHILD, as in
	// v6.19 (and 6.5; not 6.1-rc7); v6.0's stopped at the first level
	// without it.
	HighestFlagPastGaps bool
	// NewidleRatio: sched_domain carries newidle_call, newidle_success
	// and newidle_ratio (v6.19's newidle balance rate control).
	NewidleRatio bool
	// ClusterLevel: the default topology tables of x86 and arm64 have a
	// CLS level between SMT and MC (v5.16, "sched: Add cluster scheduler
	// level for x86" and "... in core and related Kconfig for ARM64"),
	// and arm64's cpu_coregroup_mask widens MC to the cluster when no
	// cache is shared beyond it. v5.12 has neither.
	ClusterLevel bool
	// ImbNumaNr: sched_domain has imb_numa_nr, computed in
	// build_sched_domains (v5.18); v5.12 has no such field.
	ImbNumaNr bool
	// AsymCapacityPerDomain: each domain is classified by the capacities
	// its span holds (asym_cpu_capacity_classify, v5.14: SD_ASYM_CPUCAPACITY
	// where it holds two or more, _FULL where it holds all).
	// v5.12 sets SD_ASYM_CPUCAPACITY on the one level
	// asym_cpu_capacity_level finds (the lowest at which every CPU sees a
	// CPU of the largest capacity), and sd_asym_cpucapacity is that level.
	AsymCapacityPerDomain bool
}

// all lists the baselines, default first.
var all = []Baseline{
	{
		Name: V619, Class: "EEVDF", Summary: "Linux 6.19: EEVDF with delayed dequeue, SIS_UTIL, the current balancer (the default)",
		Definition: "The v6.19 release, read from a 6.19 tree (matankalina/linux-6.19.10-fork). The default baseline, and the one " +
			"every other baseline's differences are stated against. 6.19.10 is a stable release whose fair class carries four " +
			"EEVDF fixes that 6.19.7 backported from v7.0-rc2 and the v6.19.0 tag lacks, and so does this baseline: \"sched/fair: " +
			"Fix lag clamp\" (6e3c0a4e1ad1: update_entity_lag clamps at cfs_rq_max_slice + TICK_NSEC, v6.19.0 at max(2 x slice, " +
			"TICK_NSEC)), \"Fix zero_vruntime tracking\" (b3d99f43c72b; V is unchanged), \"Only set slice protection at pick " +
			"time\" (bcd74b2ffdd0) and \"Update se->vprot in reweight_entity()\" (ff38424030f9). Where v6.19.0 keeps vlag and " +
			"vprot in one union (whether 6.19.10 does was not checked), this baseline keeps two fields (v7.0's form), so writing " +
			"the running entity's lag does not cancel its slice protection here.",
		SchedstatVersion: 17, PkgLevel: "PKG", Flags: FlagsV619,
		ClusterFlag: true, HighestFlagPastGaps: true, NewidleRatio: true,
		ClusterLevel: true, ImbNumaNr: true, AsymCapacityPerDomain: true,
	},
	{
		Name: V60, Class: "CFS", Summary: "Linux 6.0: CFS (vruntime, latency and granularities, buddies), SIS_UTIL, the v6.0 balancer",
		Definition: "The v6.0 release (6.0.0; its fair class is identical to 6.0-rc1's), read from Dima-diep/linux-6.0: CFS, SIS_UTIL " +
			"on and SIS_PROP off. Without tip/sched/core of late September 2022, whose \"detach at least one movable task\" rule " +
			"is in v6.1–v6.9. The base of the short-task-* variants.",
		SchedstatVersion: 15, PkgLevel: "DIE", Flags: FlagsV60,
		ClusterLevel: true, ImbNumaNr: true, AsymCapacityPerDomain: true,
	},
	{
		Name: V512, Class: "CFS", Summary: "Linux 5.12: CFS, SIS_PROP, blocked load refreshed by newly idle balance (LBF_NOHZ_STATS), no CLS level",
		Definition: "The v5.12 release (25 April 2021), reconstructed from the 5.12.9 tree (zhangyinjun/linux-5.12.9) without " +
			"its stable backports of v5.13 changes (ALT_PERIOD and BASE_SLICE, the util_est filter fix, select_idle_smt and " +
			"the has_idle_cores fix). Not tip/sched/core of March 2021, which already had parts of v5.13's blocked-load " +
			"series: the patches measured on that tip run here on the release. The base of idle-cores-nosmt and " +
			"blocked-avg-ratelimit; blocked-load-outside-newidle is what v5.13 changed, applied to v5.12.",
		SchedstatVersion: 15, PkgLevel: "DIE", Flags: FlagsV512,
	},
}

// All returns the baselines, default first.
func All() []Baseline { return append([]Baseline(nil), all...) }

// Names returns the baselines' names, default first.
func Names() []string {
	out := make([]string, len(all))
	for i, b := range all {
		out[i] = b.Name
	}
	return out
}

// UnknownError is returned for a name that is not a baseline.
type UnknownError struct{ Name string }

func (e *UnknownError) Error() string {
	return fmt.Sprintf("unknown kernel %q (known: %s)", e.Name, strings.Join(Names(), ", "))
}

// Lookup returns the named baseline; "" is Default.
func Lookup(name string) (*Baseline, error) {
	if name == "" {
		name = Default
	}
	for i := range all {
		if all[i].Name == name {
			b := all[i]
			return &b, nil
		}
	}
	return nil, &UnknownError{name}
}

// Must is Lookup for names known to be good; it panics otherwise.
func Must(name string) *Baseline {
	b, err := Lookup(name)
	if err != nil {
		panic("kernels: " + err.Error())
	}
	return b
}
