package sched

import (
	"fmt"
	"github.com/schedlab/schedlab/internal/kernels"
	"strings"
)

// A variant is a named difference from a kernel baseline's Settings: one of
// the patches schedlab was built to evaluate (shared/reference/patches.md).
// ApplyVariant turns baseline settings into the patched kernel's;
// ApplyVariantBase gives the kernel the patch is measured against, which is
// the baseline itself except where the baseline no longer has the code the
// patch changed (idle-cores-nosmt).

// VariantInfo describes one variant.
type VariantInfo struct {
	Name string
	// Baseline is the kernel baseline the variant applies to: the kernel
	// its patch was written against. With AnyBaseline it is only the
	// default, and the variant applies to every baseline.
	Baseline    string
	AnyBaseline bool
	// Description says in one line what the patch changes.
	Description string
	// Touches lists the kernel functions the patch changes.
	Touches []string
	// Base, if not empty, says how the comparison kernel differs from the
	// plain baseline (applied by ApplyVariantBase).
	Base string
	// Branches are the branches of the kernel model the patch changes,
	// whose counters a run with the variant reports (branches.go).
	Branches []Branch
	// CostOnly marks a patch that changes what the kernel's work costs
	// and no decision: its branches are taken, never changed, and its
	// runs differ from tip's only through time.
	CostOnly bool
}

type variant struct {
	info  VariantInfo
	base  func(s *Settings) // the comparison kernel; nil: the baseline
	apply func(s *Settings) // the patch, applied after base
}

// shortTask sets the short-task hunks and is_short_task's metric: the
// RFC's lifetime average for the RFC and the follow-ups measured in its
// thread, the RFC v2 posting's own dur_avg for short-task-rfc2.
func shortTask(affine ShortAffineMode, scan ShortScanMode, metric ShortTaskMetric) func(*Settings) {
	return func(s *Settings) {
		s.ShortTaskAffine = affine
		s.ShortTaskScan = scan
		s.ShortTaskMetric = metric
	}
}

var (
	shortAffineFns = []string{"wake_affine_idle", "is_short_task"}
	shortBothFns   = []string{"wake_affine_idle", "select_idle_cpu", "is_short_task"}

	shortAffineBranches = []Branch{BranchShortAffine}
	shortBothBranches   = []Branch{BranchShortAffine, BranchShortScan}
)

var variants = []variant{
	{
		info: VariantInfo{Name: "short-task-rfc", Baseline: kernels.V60, Touches: shortBothFns, Branches: shortBothBranches,
			Description: "short-task RFC (Chen Yu, Sep 2022): wake on this_cpu if curr(this_cpu) is short, before the prev_cpu-idle check; skip the LLC scan when SIS_UTIL sees it >50% busy and wakee and curr(target) are short"},
		apply: shortTask(ShortAffineSyncOr, ShortScanWakee, ShortLifetime),
	},
	{
		info: VariantInfo{Name: "short-task-v1", Baseline: kernels.V60, Touches: shortBothFns, Branches: shortBothBranches,
			Description: "short-task follow-up 1: the this_cpu check moves after the prev_cpu-idle check, no nr_running condition; scan skip kept"},
		apply: shortTask(ShortAffineEnd, ShortScanWakee, ShortLifetime),
	},
	{
		info: VariantInfo{Name: "short-task-v2", Baseline: kernels.V60, Touches: shortAffineFns, Branches: shortAffineBranches,
			Description: "short-task follow-up 2: as v1 without the scan skip"},
		apply: shortTask(ShortAffineEnd, ShortScanOff, ShortLifetime),
	},
	{
		info: VariantInfo{Name: "short-task-v3", Baseline: kernels.V60, Touches: shortBothFns, Branches: shortBothBranches,
			Description: "short-task follow-up 3: this_cpu check at the end needs nr_running(this_cpu)==1 and a short curr; scan skip kept"},
		apply: shortTask(ShortAffineEndSingle, ShortScanWakee, ShortLifetime),
	},
	{
		info: VariantInfo{Name: "short-task-v4", Baseline: kernels.V60, Touches: shortAffineFns, Branches: shortAffineBranches,
			Description: "short-task follow-up 4: as v3 without the scan skip"},
		apply: shortTask(ShortAffineEndSingle, ShortScanOff, ShortLifetime),
	},
	{
		info: VariantInfo{Name: "short-task-rfc2", Baseline: kernels.V60, Touches: shortBothFns, Branches: shortBothBranches,
			Description: "short-task RFC v2 (Oct 2022): v3's this_cpu check; the scan skip needs nr_running(target)==1 and a short curr(target), not a short wakee; is_short_task by the posting's dur_avg <= min_granularity"},
		apply: shortTask(ShortAffineEndSingle, ShortScanSingle, ShortDurAvgRFC2),
	},
	{
		info: VariantInfo{Name: "idle-cores-nosmt", Baseline: kernels.V512, Touches: []string{"test_idle_cores"}, Branches: []Branch{BranchIdleCoresNoSMT}, CostOnly: true,
			Description: "test_idle_cores() returns without reading sd_llc_shared on machines without SMT (Barry Song, v5.13); changes no decision, only LLC-shared reads"},
		apply: func(s *Settings) { s.TestIdleCoresSMTCheck = true },
	},
	{
		info: VariantInfo{Name: "sis-node", Baseline: kernels.V60, Touches: []string{"select_idle_sibling", "select_idle_node"}, Branches: []Branch{BranchSISNode},
			Description: "SIS_NODE (Peter Zijlstra, tip sched/core c7dfd6b9122d, 2023; reverted before v6.5): when the LLC has no idle CPU, scan the other LLCs of its parent domain, unless that is a NUMA level, each with its own SIS_UTIL budget"},
		apply: func(s *Settings) { s.SISNode = true },
	},
	{
		info: VariantInfo{Name: "sis-cluster", Baseline: kernels.V60, Touches: []string{"select_idle_sibling", "select_idle_cpu", "cpus_share_resources"}, Branches: []Branch{BranchClusterPrev, BranchClusterScan},
			Description: "scan the target's cluster before the rest of the LLC (Yicong Yang, v9 Jul 2023, merged for v6.6): SD_CLUSTER and sd_share_id on the CLS level; prev and recent_used_cpu taken at once only inside target's cluster, else kept as the fallback"},
		apply: func(s *Settings) { s.SISCluster = true },
	},
	{
		info: VariantInfo{Name: "cluster-level", Baseline: kernels.V512, Touches: []string{"sched_init_domains", "select_idle_sibling", "select_idle_cluster", "sched_balance_rq"}, Branches: []Branch{BranchClusterLevel, BranchSelectIdleCluster},
			Description: "a scheduler level for clusters (Barry Song, RFC v2 Dec 2020, on v5.10-rc): a CLS sched domain of cpu_clustergroup_mask between SMT and MC with cpu_core_flags(), and select_idle_cluster, a scan of target's cluster before the LLC's; the LLC stays MC's"},
		apply: func(s *Settings) { s.ClusterLevel = true },
	},
	{
		info: VariantInfo{Name: "sis-node-limit", Baseline: kernels.V60, Touches: []string{"select_idle_sibling", "select_idle_node"}, Branches: []Branch{BranchSISNode, BranchSISNodeLimit},
			Description: "SIS_NODE with Peter Zijlstra's limit (<20230601111326.GV4253@hirez.programming.kicks-ass.net>, Jun 2023, on the v6.4-rc tip; never merged): select_idle_node gives up after 4 other LLCs scanned without success"},
		apply: func(s *Settings) { s.SISNode, s.SISNodeLimit = true, true },
	},
	{
		info: VariantInfo{Name: "no-sync-irq", Baseline: kernels.V60, Touches: []string{"select_task_rq_fair"}, Branches: []Branch{BranchSyncInTask},
			Description: "no sync wakeup from interrupt context (Libo Chen, <20220711224704.1672831-1-libo.chen@oracle.com>, Jul 2022; tip 14b3f2d9ee8d, reverted): select_task_rq_fair takes WF_SYNC only when in_task(), so loopback TCP's wakeups from the network softirq are not sync"},
		apply: func(s *Settings) { s.SyncInTaskOnly = true },
	},
	{
		info: VariantInfo{Name: "sis-util-v1", Baseline: kernels.V60, Touches: []string{"select_idle_cpu", "update_sd_lb_stats"}, Branches: []Branch{BranchLLCOverloaded},
			Description: "SIS_UTIL RFC v1 (Chen Yu, <20220207034013.599214-1-yu.c.chen@intel.com>, Feb 2022, on v5.17-rc): periodic LLC balancing marks sd_llc_shared overloaded when total_capacity*100 < sum_util*imbalance_pct (85%), and select_idle_cpu then scans nothing",
			Base:        sisPropTip},
		base:  sisPropTipSettings,
		apply: func(s *Settings) { s.SISUtilV1 = true },
	},
	{
		info: VariantInfo{Name: "sis-util-v2", Baseline: kernels.V60, Touches: []string{"select_idle_cpu", "update_sd_lb_stats", "update_nr_idle_scan"}, Branches: []Branch{BranchNrIdleScan},
			Description: "SIS_UTIL RFC v2 (Chen Yu, <20220310005228.11737-1-yu.c.chen@intel.com>, Mar 2022, on v5.17-rc): SIS_PROP's budget becomes nr_idle_scan = max(4, llc_size - (llc_size-4)*2*sum_util/total_capacity) from periodic LLC balancing, without the wake_avg_idle/avg_scan_cost bookkeeping",
			Base:        sisPropTip},
		base:  sisPropTipSettings,
		apply: func(s *Settings) { s.SISUtilV2 = true },
	},
}

// sisPropTip is the comparison kernel of the SIS_UTIL RFCs: the v5.17-rc
// tip they were written on scanned with SIS_PROP and had no SIS_UTIL
// (added for v6.0), as the sis-util-v4 fidelity cases' tip does.
const sisPropTip = "SIS_PROP on, SIS_UTIL off (the v5.17-rc tip)"

func sisPropTipSettings(s *Settings) { s.SISProp, s.SISUtil = true, false }

// Variants lists every variant in a fixed order.
func Variants() []VariantInfo {
	out := make([]VariantInfo, len(variants))
	for i, v := range variants {
		out[i] = v.info
		out[i].Touches = append([]string(nil), v.info.Touches...)
		out[i].Branches = append([]Branch(nil), v.info.Branches...)
	}
	return out
}

// VariantNames lists the variant names.
func VariantNames() []string {
	out := make([]string, len(variants))
	for i, v := range variants {
		out[i] = v.info.Name
	}
	return out
}

func findVariant(name string) (*variant, error) {
	for i := range variants {
		if variants[i].info.Name == name {
			return &variants[i], nil
		}
	}
	return nil, fmt.Errorf("unknown variant %q (known: %s)", name, strings.Join(VariantNames(), ", "))
}

// ApplyVariant changes s, a baseline's settings, into the variant's.
func ApplyVariant(s *Settings, name string) error {
	v, err := findVariant(name)
	if err != nil {
		return err
	}
	if v.base != nil {
		v.base(s)
	}
	v.apply(s)
	return s.Validate()
}

// ApplyVariantBase changes s into the kernel the variant is compared with:
// s itself for most variants.
func ApplyVariantBase(s *Settings, name string) error {
	v, err := findVariant(name)
	if err != nil {
		return err
	}
	if v.base != nil {
		v.base(s)
	}
	return s.Validate()
}

// AppliesTo reports whether the variant can be applied to the baseline.
func (v VariantInfo) AppliesTo(kernel string) bool { return v.AnyBaseline || v.Baseline == kernel }

// BaselineText is the variant's baseline as listings print it: "v6.0",
// or "any (default v6.19)".
func (v VariantInfo) BaselineText() string {
	if v.AnyBaseline {
		return "any (default " + v.Baseline + ")"
	}
	return v.Baseline
}

// LookupVariant returns the named variant's description.
func LookupVariant(name string) (VariantInfo, bool) {
	v, err := findVariant(name)
	if err != nil {
		return VariantInfo{}, false
	}
	info := v.info
	info.Touches = append([]string(nil), info.Touches...)
	info.Branches = append([]Branch(nil), info.Branches...)
	return info, true
}
