package kernels

import (
	"fmt"
	"reflect"
)

// Commit names a kernel change that one of a baseline's differences from
// v6.19 comes from.
type Commit struct {
	// ID is the commit's 12-digit abbreviated hash; "" when the commit
	// is not identified.
	ID string
	// Title is its subject line, or what the change is when ID is "".
	Title string
	// Release is the first release that has the change: "v5.13"; when
	// the commit is not identified, the range that comparing release
	// trees gives ("v6.10–v6.19").
	Release string
	// Verified: the ID and its release were checked against a record of
	// the commit (the tip tree's commit notification or the merged
	// patch); the titles of some members of a series are as recalled.
	// Otherwise the ID and title are from memory.
	Verified bool
	// Trees is the release-tree evidence for Release, when that is how
	// it was found: "absent in 6.9, present in 6.19".
	Trees string
}

// Difference is one way a baseline differs from v6.19 in the paths
// schedlab models, and what selects and checks it.
type Difference struct {
	// Name is a short handle: "sis-prop".
	Name string
	// What says what the baseline does and what v6.19 does instead.
	What string
	// Commits are the changes between the baseline and v6.19 that make
	// the difference.
	Commits []Commit
	// Settings name what gives the baseline its behaviour: a
	// sched_feature ("SIS_PROP"), a sysctl or model switch
	// ("model_sis_prop_v512"), a field of sched.Settings without a tag
	// ("EEVDF"), or a fact of Baseline ("kernels.ClusterLevel"). Each
	// has a different value on v6.19.
	Settings []string
	// Tests fail if the baseline lost the behaviour: "sched.TestX" (a
	// package under internal/ and a test function) or
	// "scenario:FILE" (internal/scenario/testdata/scenarios/FILE).
	Tests []string
	// Note says why a difference has no test, or what it leaves out.
	Note string
}

// Differences returns the baseline's differences from v6.19 (none for
// v6.19 itself).
func (b *Baseline) Differences() []Difference {
	var out []Difference
	switch b.Name {
	case V60:
		out = append(out, diffsV60...)
		out = append(out, diffsAfterV60...)
	case V512:
		own := map[string]bool{}
		for _, d := range diffsV512 {
			own[d.Name] = true
		}
		out = append(out, diffsV512...)
		for _, d := range diffsAfterV60 {
			if !own[d.Name] {
				out = append(out, d)
			}
		}
	}
	return out
}

// NotModelled lists the baseline's known differences from v6.19 in the
// modelled paths that schedlab does not model, with the reason.
func (b *Baseline) NotModelled() []string {
	switch b.Name {
	case V60:
		return append([]string(nil), notModelledV60...)
	case V512:
		return append(append([]string(nil), notModelledV512...), notModelledV60...)
	}
	return nil
}

// Fact is one field of a Baseline and its value.
type Fact struct {
	Name, Value string
}

// Facts lists the baseline's fields other than Name, Summary and
// Definition, as
// "kernels.NAME" settings of a Difference name them.
func (b *Baseline) Facts() []Fact {
	v := reflect.ValueOf(b).Elem()
	t := v.Type()
	var out []Fact
	for i := 0; i < t.NumField(); i++ {
		n := t.Field(i).Name
		if n == "Name" || n == "Summary" || n == "Definition" {
			continue
		}
		val := fmt.Sprint(v.Field(i).Interface())
		if f, ok := v.Field(i).Interface().(FlagLayout); ok {
			val = f.String()
		}
		out = append(out, Fact{n, val})
	}
	return out
}

// String names the layout by its constant.
func (f FlagLayout) String() string {
	switch f {
	case FlagsV619:
		return "FlagsV619"
	case FlagsV60:
		return "FlagsV60"
	case FlagsV512:
		return "FlagsV512"
	}
	return fmt.Sprintf("FlagLayout(%d)", int(f))
}

// afterV69 and in619 are the release range of a change found in 6.19 and
// not in 6.9, the last tree read before it.
const (
	afterV69 = "v6.10–v6.19"
	in619    = "absent in 6.9, present in 6.19"
)

// diffsAfterV60 are the changes v6.19 has and v6.0 lacks; v5.12 lacks
// them too (diffsV512 replaces those v5.12 has in a form of its own).
var diffsAfterV60 = []Difference{
	{
		Name: "cfs",
		What: "CFS instead of EEVDF: the leftmost vruntime runs (NEXT/LAST buddies aside), slices come from sched_latency and min_granularity " +
			"(scaled by the CPU count), wakeup preemption needs a vruntime lead of wakeup_granularity, and a waking or new entity is placed " +
			"with GENTLE_FAIR_SLEEPERS and START_DEBIT. v6.19 runs EEVDF: lag-preserving placement, virtual deadlines from base_slice, " +
			"RUN_TO_PARITY, PREEMPT_SHORT, and delayed dequeue.",
		Commits: []Commit{
			{"147f3efaa241", "sched/fair: Implement an EEVDF-like scheduling policy", "v6.6", true, ""},
			{"152e11f6df29", "sched/fair: Implement delayed dequeue", "v6.12", true, ""},
			{"", "sysctl_sched_child_runs_first removed", "v6.6–v6.8", false, "present in 6.5, absent in 6.8.1"},
		},
		Settings: []string{"kernels.Class", "EEVDF", "GENTLE_FAIR_SLEEPERS", "START_DEBIT", "LAST_BUDDY",
			"PLACE_LAG", "PLACE_DEADLINE_INITIAL", "PLACE_REL_DEADLINE", "RUN_TO_PARITY", "PREEMPT_SHORT", "PICK_BUDDY", "DELAY_DEQUEUE", "DELAY_ZERO",
			"base_slice_ns", "latency_ns", "min_granularity_ns", "wakeup_granularity_ns", "sched_nr_latency", "child_runs_first"},
		Tests: []string{"scenario:cfs_v60.txt", "sched.TestBaselineFeatures", "sched.TestBaselineSysctls", "sched.TestNewidleBalancePullsColdKeepsHot",
			"sched.TestSliceMaxNeedsCompetition", "sched.TestSetPreemptBuddy"},
	},
	{
		Name: "util-est",
		What: "util_est has two fields, {enqueued, ewma}, with UTIL_AVG_UNCHANGED in bit 31; the estimate is max(ewma, enqueued); UTIL_EST_FASTUP " +
			"raises the EWMA at once; an update is skipped when the EWMA is within 1% (unless enqueued moved by 1%) or util exceeds the CPU's " +
			"original capacity. v6.19 keeps one word, the EWMA, and also keeps it when within 1% of the dequeued util or when the task waited " +
			"for the CPU (runnable above util).",
		Commits: []Commit{
			{"11137d384996", "sched/fair: Simplify util_est", "v6.8", true, ""},
			{"50181c0cff31", "sched/fair: Avoid underestimation of task utilization", "v6.8", true, ""},
		},
		Settings: []string{"model_util_est_form", "UTIL_EST_FASTUP"},
		Tests:    []string{"sched.TestUtilEstForms"},
	},
	{
		Name: "recent-used-cpu",
		What: "select_idle_sibling overwrites p->recent_used_cpu with prev before testing the candidate against p->cpus_ptr, so it tests prev: " +
			"a task with a restricted mask can be placed on a recent CPU outside it. v6.19 tests the saved candidate.",
		Commits: []Commit{
			{"", "recent_used_cpu's affinity test made on the candidate", "v6.2–v6.5", false, "absent in 6.1-rc7, present in 6.5"},
		},
		Settings: []string{"model_recent_used_cpu"},
		Tests:    []string{"sched.TestRecentUsedCPUForms"},
	},
	{
		Name: "runnable-boost",
		What: "find_busiest_queue's migrate_util and schedutil read cpu_util_cfs. v6.19 reads cpu_util_cfs_boost, the utilisation raised to " +
			"the runnable average.",
		Commits:  []Commit{{"7d0583cf9ec7", "sched/fair, cpufreq: Introduce 'runnable boosting'", "v6.5", true, ""}},
		Settings: []string{"model_lb_util_boost"},
		Tests:    []string{"sched.TestSchedutilRunnableBoost"},
	},
	{
		Name: "lb-smt",
		What: "The balancer knows no SMT balance: should_we_balance lets the first idle CPU of the group balance, busy sibling or not; there is " +
			"no group_smt_balance type and no SMT preference in update_sd_pick_busiest; the sibling imbalance is a task-count difference and " +
			"prefer_sibling comes from the child domain. v6.19 prefers an idle CPU on an idle core and has the SMT rules.",
		Commits: []Commit{
			{"", "Tim Chen's SMT balancing series, among them sched/fair: Implement prefer sibling imbalance calculation between asymmetric groups",
				"v6.6–v6.8", false, "absent in 6.5, present in 6.8.1"},
		},
		Settings: []string{"model_lb_smt_aware"},
		Tests:    []string{"sched.TestShouldWeBalanceIdleCore"},
	},
	{
		Name: "lb-local-above-avg",
		What: "calculate_imbalance pulls load into a local group that is above the domain's average load but below the busiest group's. " +
			"v6.19 computes no imbalance then.",
		Commits:  []Commit{{"", "calculate_imbalance gives up when local is above the domain average", "v6.2–v6.5", false, "absent in 6.1-rc7, present in 6.5"}},
		Settings: []string{"model_lb_local_above_avg"},
		Tests:    []string{"sched.TestLocalAboveAverage"},
	},
	{
		Name: "lb-serialize",
		What: "rebalance_domains takes the SD_SERIALIZE token of a NUMA level before the interval test and skips the level while another CPU " +
			"holds it. v6.19 takes it in sched_balance_rq after should_we_balance and counts a busy token as balanced.",
		Commits:  []Commit{{"", "SD_SERIALIZE taken in sched_balance_rq", afterV69, false, in619}},
		Settings: []string{"model_lb_serialize_in_balance_rq"},
		Tests:    []string{"sched.TestSerializeToken"},
	},
	{
		Name: "lb-misfit-fail",
		What: "A misfit migration that moves nothing counts in nr_balance_failed and backs the balance interval off. v6.19 does neither for " +
			"migrate_misfit.",
		Commits:  []Commit{{"", "misfit balance failures not counted", afterV69, false, in619}},
		Settings: []string{"model_lb_misfit_no_fail_count"},
		Tests:    []string{"sched.TestMisfitFailCount"},
	},
	{
		Name: "misfit-max-allowed",
		What: "update_misfit_status marks a task misfit whenever it does not fit its CPU's capacity, even on the biggest CPU its affinity " +
			"allows, so the balancer keeps trying to move it. v6.19 exempts a task already on a CPU of its max_allowed_capacity.",
		Commits:  []Commit{{"", "sched/fair: Check if a task has a fitting CPU when updating misfit", "v6.10", false, "not in v6.0; in v6.19"}},
		Settings: []string{"model_misfit_max_allowed"},
		Tests:    []string{"sched.TestMisfitMaxAllowed"},
	},
	{
		Name: "newidle-stop",
		What: "newidle_balance stops walking up when a task was pulled or one arrived (nr_running, ttwu_pending). v6.19 stops when a task was " +
			"pulled or should_we_balance cleared continue_balancing.",
		Commits:  []Commit{{"", "sched_balance_newidle stops on !continue_balancing", afterV69, false, in619}},
		Settings: []string{"model_newidle_stop_on_no_continue"},
		Note: "No observable difference in the model: should_we_balance clears continue_balancing for a newly idle pass only when a task " +
			"or a wakeup arrived, which v6.0 tests too, and a balance pass is atomic here, so none arrives during it.",
	},
	{
		Name: "newidle-ratio",
		What: "Newly idle balance balances every domain its cost budget allows. v6.19 has NI_RANDOM and sched_domain's newidle_call, " +
			"newidle_success and newidle_ratio: a domain is balanced with probability (1 + newidle_ratio)/1024.",
		Commits:  []Commit{{"", "newidle balance rate control (newidle_ratio, NI_RANDOM)", afterV69, false, in619}},
		Settings: []string{"NI_RANDOM", "kernels.NewidleRatio"},
		Tests:    []string{"sched.TestNIRandom", "topology.TestBaselineNaming"},
	},
	{
		Name: "util-shr-bound",
		What: "detach_tasks compares a task's util_est with the whole imbalance for migrate_util. v6.19 shifts it by nr_balance_failed " +
			"first, as for load.",
		Commits:  []Commit{{"", "shr_bound(util, nr_balance_failed) in detach_tasks", "v6.6–v6.8", false, "absent in 6.5, present in 6.8.1"}},
		Settings: []string{"model_lb_util_shr_bound"},
		Tests:    []string{"sched.TestDetachUtilShrBound"},
	},
	{
		Name: "hot-accounting",
		What: "can_migrate_task counts lb_hot_gained and nr_forced_migrations when it accepts a cache-hot task, and detach_tasks counts " +
			"nothing when it then skips it. v6.19 marks the task (sched_task_hot), counts at detach_task, and counts a skip as " +
			"nr_failed_migrations_hot. Only schedstats differ.",
		Commits:  []Commit{{"", "p->sched_task_hot accounting", afterV69, false, in619}},
		Settings: []string{"model_lb_hot_in_detach"},
		Tests:    []string{"sched.TestHotAccounting"},
	},
	{
		Name: "sg-wakeup-stats",
		What: "update_sg_wakeup_stats (find_idlest_group) sums every CPU of the group, including busy CPUs outside the task's mask, and " +
			"tests misfit against the group's max_capacity. v6.19 sums only the allowed CPUs and tests task_fits_cpu per CPU.",
		Commits:  []Commit{{"", "update_sg_wakeup_stats over p->cpus_ptr", afterV69, false, in619}},
		Settings: []string{"model_sg_wakeup_stats_allowed_only"},
		Tests:    []string{"sched.TestSgWakeupStatsAffinity"},
	},
	{
		Name: "tg-load-ratelimit",
		What: "update_tg_load_avg publishes a cfs_rq's load into tg->load_avg whenever it moved by more than 1/64. v6.19 also waits 1 ms " +
			"between publications.",
		Commits:  []Commit{{"1528c661c24b", "sched/fair: Ratelimit update to tg->load_avg", "v6.7", true, ""}},
		Settings: []string{"model_tg_load_avg_ratelimit"},
		Tests:    []string{"sched.TestTgLoadAvgRatelimit"},
	},
	{
		Name: "topology-names",
		What: "The package level is DIE; the LLC flag is SD_SHARE_PKG_RESOURCES, NUMA levels carry SD_OVERLAP, and the bits are those of " +
			"v6.0's sd_flags.h; there is no SD_CLUSTER (a CLS level has cpu_core_flags); highest_flag_domain stops at the first level " +
			"without the flag. v6.19: PKG, SD_SHARE_LLC, no SD_OVERLAP, SD_CLUSTER, and highest_flag_domain looks past gaps for flags " +
			"that are not SDF_SHARED_CHILD.",
		Commits: []Commit{
			{"f577cd57bfaa", "sched/topology: Rename 'DIE' domain to 'PKG'", "v6.7", true, ""},
			{"", "SD_CLUSTER", "v6.6–v6.8", false, "absent in 6.5, present in 6.8.1"},
			{"", "SD_SHARE_PKG_RESOURCES renamed SD_SHARE_LLC", "v6.9", false, "absent in 6.8.1, present in 6.9"},
			{"", "SD_OVERLAP removed", afterV69, false, "still in 6.9, gone in 6.19"},
			{"", "highest_flag_domain looks past levels without a non-SDF_SHARED_CHILD flag", "v6.2–v6.5", false, "absent in 6.1-rc7, present in 6.5"},
		},
		Settings: []string{"kernels.PkgLevel", "kernels.Flags", "kernels.ClusterFlag", "kernels.HighestFlagPastGaps"},
		Tests:    []string{"topology.TestBaselineNaming", "topology.TestFormatGolden"},
	},
	{
		Name:     "schedstat",
		What:     "/proc/schedstat is version 15. v6.19 prints version 17 (domain names, the imbalance split by migration type).",
		Commits:  []Commit{{"", "schedstat versions 16 and 17", afterV69, false, in619}},
		Settings: []string{"kernels.SchedstatVersion"},
		Tests:    []string{"kernels.TestFacts", "schedstat.TestFormatGolden"},
	},
	{
		Name: "rd-flags",
		What: "update_sd_lb_stats at the root domain stores rd->overload and rd->overutilized whether they changed or not, and below the " +
			"root stores overutilized when a CPU of the domain is overutilized; every wakeup's enqueue and every busy tick load overutilized " +
			"(update_overutilized_status) and set it when their CPU is overutilized. v6.19 stores overloaded only when it changes " +
			"(set_rd_overloaded) and touches overutilized only with an energy model. Without one the flags decide the same; what " +
			"differs is the traffic on the root domain's cache line (model_nohz_rd_lines).",
		Commits: []Commit{
			{"be3a51e68f2f", "sched/fair: Add EAS checks before updating root_domain::overutilized", "v6.10", true,
				"tip sched/core 2024-03-26 (tip-bot2 notification), in the v6.10 scheduler pull"},
			{"c628db0a6831", "sched/fair: Check root_domain::overload value before update", "v6.10", true,
				"the same series and pull"},
		},
		Settings: []string{"model_rd_flags_v60"},
		Tests:    []string{"sched.TestRdFlagsLine"},
	},
	{
		Name: "pipe-wake-writer",
		What: "pipe_read wakes a writer waiting for room whenever the pipe was full when the read began (was_full), also when the read " +
			"empties no pipe_buffer and so frees no slot: the writer's wait_event finds the pipe still full and it sleeps again. v6.19 " +
			"wakes the writer only from a read that empties a buffer of a full pipe. A file-system change, not the scheduler's, but it " +
			"sets how often hackbench's and perf bench messaging's writers are woken (fs/pipe.c, internal/workload/kobj).",
		Commits: []Commit{
			{"aaec5a95d596", "pipe_read: don't wake up the writer if the pipe is still full", "v6.14", true,
				"in the vfs-6.14 merge's commit list; mainline fs/pipe.c has the wake_writer form"},
		},
		Settings: []string{"model_pipe_wake_writer_v60"},
		Tests:    []string{"kobj.TestPipeWakeWriter"},
	},
}

// diffsV60 are v6.0's own: what it has that v6.19 and v5.12 lack.
var diffsV60 = []Difference{
	wakeAffineTally,
	{
		Name: "sis-prop",
		What: "SIS_PROP exists, off by default: turned on, select_idle_cpu limits its scan to a budget from the aged wake_avg_idle and " +
			"avg_scan_cost, alongside SIS_UTIL. v6.19 has no SIS_PROP.",
		Commits:  []Commit{{"984ffb6a4366", "sched/fair: Remove SIS_PROP", "v6.7", true, ""}},
		Settings: []string{"SIS_PROP"},
		Tests:    []string{"sched.TestBaselineFeatures", "sched.TestSISPropBudgetV512"},
	},
	{
		Name: "cfs-slice",
		What: "sched_slice counts the runnable tasks of the whole hierarchy (ALT_PERIOD) and is at least min_granularity (BASE_SLICE), " +
			"idle_min_granularity for a SCHED_IDLE entity; a waking SCHED_IDLE entity's sleeper credit is the scaled min_granularity, not " +
			"sched_latency. v6.19 has neither feature nor the tunable (EEVDF's slice is base_slice).",
		Commits: []Commit{
			{"0c2de3f054a5", "sched,fair: Alternative sched_slice()", "v5.13", true, ""},
			{"", "SCHED_IDLE entities' slice floor and placement (idle_min_granularity)", "v5.16–v5.17", false, "absent in 5.15.55, present in 5.17-rc5"},
		},
		Settings: []string{"ALT_PERIOD", "BASE_SLICE", "idle_min_granularity_ns", "model_cfs_idle_placement"},
		Tests:    []string{"sched.TestBaselineFeatures", "sched.TestBaselineSysctls", "sched.TestCFSIdleSleeperCredit"},
	},
}

// diffsV512 are v5.12's own: what changed between v5.12 and v6.0, and
// v5.12's forms of the changes after v6.0.
// wakeAffineTally is v6.0's and v5.12's wake_affine schedstat tally.
var wakeAffineTally = Difference{
	Name: "wake-affine-tally",
	What: "wake_affine returns prev_cpu only when neither wake_affine_idle nor wake_affine_weight had an opinion, so a prev_cpu that " +
		"wake_affine_idle chose is counted in ttwu_move_affine and nr_wakeups_affine (and returned). v6.19 counts only a move to the " +
		"waking CPU. The CPU chosen is the same; only the counters differ.",
	Commits:  []Commit{{"39afe5d6fc59", "sched/fair: Fix inaccurate tally of ttwu_move_affine", "v6.1", true, ""}},
	Settings: []string{"model_wake_affine_tally_prev"},
	Tests:    []string{"sched.TestWakeAffineTally"},
}

var diffsV512 = []Difference{
	wakeAffineTally,
	{
		Name: "sis-prop",
		What: "SIS_PROP is on and SIS_UTIL absent: select_idle_cpu scans at most span_weight × (this_rq()->avg_idle / 512) / " +
			"(avg_scan_cost + 1) CPUs, at least 4, from the waking CPU's avg_idle itself (not aged, not spent). v6.19 has SIS_UTIL (a " +
			"budget from the LLC's utilisation) and no SIS_PROP.",
		Commits: []Commit{
			{"94aafc3ee31d", "sched/fair: Age the average idle time", "v5.13", true, ""},
			{"70fb5ccf2ebb", "sched/fair: Introduce SIS_UTIL to search idle CPU based on sum of util_avg", "v6.0", true, ""},
			{"984ffb6a4366", "sched/fair: Remove SIS_PROP", "v6.7", true, ""},
		},
		Settings: []string{"SIS_PROP", "SIS_UTIL", "model_sis_prop_v512"},
		Tests:    []string{"sched.TestBaselineFeatures", "sched.TestSISPropBudgetV512"},
	},
	{
		Name: "sis-idle-core",
		What: "select_idle_cpu asks test_idle_cores on every call, SMT or not, and scans for an idle core when it says yes; " +
			"select_idle_sibling has no select_idle_smt step; a failed idle-core scan clears has_idle_cores of the waking CPU's LLC. " +
			"v6.19 tests idle cores in select_idle_sibling under sched_smt_active, tries prev's SMT siblings, and clears target's flag.",
		Commits: []Commit{
			{"c722f35b513f", "sched/fair: Bring back select_idle_smt(), but differently", "v5.13", true, ""},
			{"02dbb7246c5b", "sched/fair: Fix clearing of has_idle_cores flag in select_idle_cpu()", "v5.13", true, ""},
		},
		Settings: []string{"model_sis_idle_cores_v512"},
		Tests:    []string{"sched.TestIdleCoreSearchV512"},
	},
	{
		Name:     "sis-scan-start",
		What:     "select_idle_cpu's scan starts at target itself. v6.19 starts at target + 1.",
		Commits:  []Commit{{"56498cfb045d", "sched/fair: Avoid a second scan of target in select_idle_cpu", "v5.15", true, ""}},
		Settings: []string{"model_sis_scan_from_target"},
		Tests:    []string{"sched.TestSISScanStartV512"},
	},
	{
		Name: "recent-used-cpu",
		What: "p->recent_used_cpu becomes prev only when the candidate is used, and after an affine wakeup's fast path the waker's " +
			"recent_used_cpu becomes the waking CPU. v6.19 sets it to prev on every fast-path wakeup and tests the saved candidate " +
			"against p->cpus_ptr.",
		Commits: []Commit{
			{"89aafd67f28c", "sched/fair: Use prev instead of new target as recent_used_cpu", "v5.15", true, ""},
			{"", "recent_used_cpu's affinity test made on the candidate", "v6.2–v6.5", false, "absent in 6.1-rc7, present in 6.5"},
		},
		Settings: []string{"model_recent_used_cpu"},
		Tests:    []string{"sched.TestRecentUsedCPUForms"},
	},
	{
		Name: "ttwu-queue",
		What: "ttwu_queue_cond queues a wakeup on the target's wake list only across LLCs (or for a task still switching out, WF_ON_CPU). " +
			"v6.19 also queues on an idle CPU of the waker's LLC, never outside p->cpus_ptr.",
		Commits: []Commit{
			{"f3dd3f674555", "sched: Remove the limitation of WF_ON_CPU on wakelist if wakee cpu is idle", "v6.0", true, ""},
			{"28156108fecb", "sched: Fix the check of nr_running at queue wakelist", "v6.0", true, ""},
		},
		Settings: []string{"model_ttwu_queue_idle_target"},
		Tests:    []string{"sched.TestTTWUQueueCondV512"},
		Note:     "The WF_ON_CPU case is not modelled: a context switch is atomic here, so no task is still switching out.",
	},
	{
		Name: "numa-imbalance",
		What: "allow_numa_imbalance: find_idlest_group keeps a forked or woken task on the local node while it runs fewer tasks than a " +
			"quarter of the NUMA domain's CPUs, and calculate_imbalance halves the task imbalance and then ignores up to " +
			"NUMA_IMBALANCE_MIN tasks while the busiest group runs fewer than a quarter of its CPUs; no imb_numa_nr. v6.19 compares idle " +
			"CPUs and allows an imbalance of imb_numa_nr tasks (the LLCs below the first level above the LLC: 8 on Zen3 NPS1).",
		Commits: []Commit{
			{"e496132ebedd", "sched/fair: Adjust the allowed NUMA imbalance when SD_NUMA spans multiple LLCs", "v5.18", true, ""},
			{"cb29a5c19d2d", "sched/numa: Apply imbalance limitations consistently", "v6.0", true, ""},
			{"026b98a93bbd", "sched/numa: Adjust imb_numa_nr to a better approximation of memory channels", "v6.0", true, ""},
		},
		Settings: []string{"model_numa_imbalance_v512", "kernels.ImbNumaNr"},
		Tests:    []string{"stream.TestStreamForkPlacement", "sched.TestCalculateImbalanceNumaV512", "topology.TestV512Domains"},
	},
	{
		Name: "newidle-cost",
		What: "newidle_balance runs while avg_idle ≥ sysctl_sched_migration_cost (not the lowest domain's max_newidle_lb_cost); the " +
			"blocked-load update is not part of the first domain's cost; a domain's cost only raises max_newidle_lb_cost, which decays by " +
			"253/256 once a second regardless. v6.19: the max_newidle_lb_cost gate, the update timed, update_newidle_cost's decay a second " +
			"after the last raise.",
		Commits: []Commit{
			{"9e9af819db5d", "sched/fair: Account update_blocked_averages in newidle_balance cost", "v5.16", true, ""},
			{"e60b56e46b38", "sched/fair: Wait before decaying max_newidle_lb_cost", "v5.16", true, ""},
			{"c5b0a7eefc70", "sched/fair: Remove sysctl_sched_migration_cost condition", "v5.16", true, ""},
			{"8ea9183db4ad", "sched/fair: Cleanup newidle_balance", "v5.16", true, ""},
		},
		Settings: []string{"model_newidle_v512"},
		Tests:    []string{"sched.TestNewidleGateV512", "sched.TestMaxNewidleLbCostDecayV512", "sched.TestNewidleCostExcludesBlockedUpdateV512"},
	},
	{
		Name:     "newidle-ttwu-pending",
		What:     "newidle_balance goes ahead with a wakeup pending on the CPU. v6.19 returns at once.",
		Commits:  []Commit{{"e5e678e4fea2", "sched,fair: Skip newidle_balance if a wakeup is pending", "v5.14", true, ""}},
		Settings: []string{"model_newidle_ttwu_pending_exit"},
		Tests:    []string{"sched.TestNewidleTTWUPendingV512"},
	},
	{
		Name:     "newidle-bail",
		What:     "should_we_balance always lets a newly idle CPU balance. v6.19 refuses once it has a task or a wakeup pending.",
		Commits:  []Commit{{"792b9f65a568", "sched: Allow newidle balancing to bail out of load_balance", "v6.0", true, ""}},
		Settings: []string{"model_should_we_balance_newidle_bail"},
		Tests:    []string{"sched.TestShouldWeBalanceNewidleV512"},
	},
	{
		Name: "blocked-load-newidle",
		What: "A newly idle balance refreshes the blocked load of every idle CPU it reads (LBF_NOHZ_STATS, update_nohz_stats), or all of " +
			"them at once when its gate is shut (nohz_newidle_balance running _nohz_idle_balance); the ILB forces its updates and refreshes " +
			"itself last; the idle loop has no nohz_run_idle_balance. v6.19 never refreshes other CPUs from newly idle balance and defers " +
			"the refresh to the idle loop.",
		Commits: []Commit{
			{"0826530de3cb", "sched/fair: Remove update of blocked load from newidle_balance", "v5.13", true, ""},
			{"c6f886546cb8", "sched/fair: Trigger the update of blocked load on newly idle cpu", "v5.13", true, ""},
		},
		Settings: []string{"model_newidle_nohz_stats"},
		Tests:    []string{"sched.TestBlockedAveragesBackgroundCgroups", "sched.TestBalanceVariants"},
	},
	{
		Name: "nohz-next-kick",
		What: "No NOHZ_NEXT_KICK or nohz.needs_update: rebalance_domains run for an idle CPU pulls nohz.next_balance to that CPU's next " +
			"balance. v6.19 sets needs_update when a CPU enters NOHZ and recomputes nohz.next_balance in a NOHZ_NEXT_KICK pass.",
		Commits:  []Commit{{"efd984c481ab", "sched/fair: Add NOHZ balancer flag for nohz.next_balance updates", "v5.16", true, ""}},
		Settings: []string{"model_nohz_next_kick"},
		Tests:    []string{"sched.TestNohzNextKickV512"},
	},
	{
		Name: "detach-one-task",
		What: "detach_tasks has no early return for a source with at most one task: a busy pass looks at the running task, which " +
			"can_migrate_task refuses, and the pass counts as all pinned. v6.19 returns at once, clearing LBF_ALL_PINNED.",
		Commits:  []Commit{{"", "detach_tasks returns early when the source has one task", "v5.13–v5.14", false, "absent in 5.12.9, present in 5.14-rc5"}},
		Settings: []string{"model_detach_tasks_early_exit"},
		Tests:    []string{"sched.TestDetachTasksOneTaskV512"},
	},
	{
		Name: "active-balance",
		What: "No LBF_ACTIVE_LB: after starting the stopper load_balance sets nr_balance_failed to cache_nice_tries + 1, so the stopper's " +
			"can_migrate_task runs the hot test and the next passes accept hot tasks. v6.19 keeps counting and lets the stopper move the " +
			"task without the hot test.",
		Commits:  []Commit{{"23fb06d9602b", "sched/fair: Clean up active balance nr_balance_failed trickery", "v5.13", true, ""}},
		Settings: []string{"model_lb_active_balance_v512"},
		Tests:    []string{"sched.TestActiveBalanceV512"},
	},
	{
		Name: "cfs-buddies",
		What: "CFS's pick_next_entity clears the picked entity's buddies, so picking prev again clears them. Later kernels clear them " +
			"in set_next_entity, which a re-pick of prev skips (v6.0); v6.19 (EEVDF) has only the next buddy, cleared there too.",
		Commits:  []Commit{{"", "clear_buddies moved from pick_next_entity to set_next_entity", "v5.13–v5.14", false, "5.12.9: in pick_next_entity; 5.14-rc5: in set_next_entity"}},
		Settings: []string{"model_cfs_clear_buddies_in_pick"},
		Tests:    []string{"sched.TestCFSRepickKeepsBuddies"},
	},
	{
		Name: "migrate-pelt-lag",
		What: "A waking task that leaves an idle CPU keeps its PELT averages as of its last update. v6.19 decays them to an estimate of the " +
			"idle CPU's current PELT time (migrate_se_pelt_lag).",
		Commits:  []Commit{{"e2f3e35f1f5a", "sched/fair: Decay task PELT values during wakeup migration", "v6.0", true, ""}},
		Settings: []string{"model_migrate_se_pelt_lag"},
		Tests:    []string{"sched.TestMigrateSEPeltLagV512"},
	},
	{
		Name: "util-est",
		What: "util_est has two fields with UTIL_AVG_UNCHANGED in bit 0 of the stored value, which the estimate includes; UTIL_EST_FASTUP; " +
			"an update is skipped, storing nothing, when the EWMA is within 1% of util, or util exceeds the CPU's original capacity. " +
			"v6.19 keeps one word (see v6.0's util-est).",
		Commits: []Commit{
			{"68d7a190682a", "sched/fair: Fix util_est UTIL_AVG_UNCHANGED handling", "v5.13", true, ""},
			{"b89997aa88f0", "sched/pelt: Fix task util_est update filtering", "v5.13", true, ""},
			{"11137d384996", "sched/fair: Simplify util_est", "v6.8", true, ""},
		},
		Settings: []string{"model_util_est_form", "UTIL_EST_FASTUP"},
		Tests:    []string{"sched.TestUtilEstForms", "sched.TestUtilEstFilterV512"},
		Note: "Simplified: v5.12's util_est_dequeue subtracts the task's estimate from the cfs_rq at the end of dequeue_task_fair; " +
			"schedlab subtracts it first, as v5.13 does, which only a cpufreq update during that dequeue could see.",
	},
	{
		Name: "topology-cls",
		What: "No CLS level in the x86 and arm64 topology tables, and arm64's MC is not widened to the cluster; SD_ASYM_CPUCAPACITY is set " +
			"only on the level asym_cpu_capacity_level finds, there is no SD_ASYM_CPUCAPACITY_FULL, so every later SD_* bit is one lower. " +
			"v6.19 has CLS (with SD_CLUSTER) and classifies every level by the capacities its span holds.",
		Commits: []Commit{
			{"66558b730f25", "sched: Add cluster scheduler level for x86", "v5.16", true, ""},
			{"778c558f49a2", "sched: Add cluster scheduler level in core and related Kconfig for ARM64", "v5.16", true, ""},
			{"c744dc4ab58d", "sched/topology: Rework CPU capacity asymmetry detection", "v5.14", true, ""},
		},
		Settings: []string{"kernels.ClusterLevel", "kernels.AsymCapacityPerDomain", "kernels.Flags"},
		Tests:    []string{"topology.TestV512Domains", "topology.TestBaselineNaming", "topology.TestFormatGolden"},
	},
}

var notModelledV60 = []string{
	"tip/sched/core of late September 2022 (\"detach at least one movable task\", in v6.1–v6.9): v6.0 is the release, which lacks it.",
	"The RT, deadline, IRQ and thermal/HW pressure PELT signals beyond the RT/DL decay that makes update_blocked_averages ask cpufreq " +
		"(there are no other classes or interrupts).",
	"The idle governors' predictors (menu's and teo's correction factors and intervals): a CPU keeps its tick when its avg_idle is " +
		"below a tick or a timer is due within one.",
}

var notModelledV512 = []string{
	"The group entities' PELT sum sync of v5.12 (sum = avg × divider) instead of v5.15's PELT_MIN_DIVIDER floors: a small numeric " +
		"difference in group load sums.",
	"__update_blocked_fair updates group entities without UPDATE_TG (v5.13, 02da26ad5ed6, not verified): matters only with cgroups.",
}
