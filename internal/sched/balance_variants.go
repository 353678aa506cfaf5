package sched

import "github.com/schedlab/schedlab/internal/kernels"

// The variants of patches.md §3 and §4, appended to the variants table of
// variants.go after the wakeup-path ones.
//
// Both patches changed code the v6.0 and v6.19 baselines no longer have
// (the blocked-load refresh done by newly idle balancing, removed in v5.13
// by the very fix listed here), so both compare against that older code:
// their base turns NewidleNohzStats on. blocked-load-outside-newidle's
// patched kernel is then the baseline itself.
var balanceVariants = []variant{
	{
		info: VariantInfo{Name: "blocked-avg-ratelimit", Baseline: kernels.V60,
			Touches:     []string{"update_nohz_stats"},
			Description: "update_nohz_stats refreshes an idle CPU's blocked load at most once per HZ/20 jiffies (20/s) unless forced (Joel Fernandes, Jan 2021, not merged)",
			Base:        "pre-v5.13 blocked-load paths: newly idle balance refreshes idle CPUs' blocked load (LBF_NOHZ_STATS, nohz_newidle_balance), the ILB forces its updates (NewidleNohzStats)"},
		base:  func(s *Settings) { s.NewidleNohzStats = true },
		apply: func(s *Settings) { s.BlockedAvgRatelimit = true },
	},
	{
		info: VariantInfo{Name: "blocked-load-outside-newidle", Baseline: kernels.V60,
			Touches:     []string{"update_sd_lb_stats", "update_sg_lb_stats", "update_nohz_stats", "_nohz_idle_balance", "nohz_newidle_balance", "nohz_run_idle_balance"},
			Description: "newly idle balance no longer refreshes other CPUs' blocked load; a CPU about to idle refreshes the idle CPUs' itself (Vincent Guittot, merged for v5.13; the baselines' own code)",
			Base:        "pre-v5.13 blocked-load paths (NewidleNohzStats)"},
		base:  func(s *Settings) { s.NewidleNohzStats = true },
		apply: func(s *Settings) { s.NewidleNohzStats = false },
	},
}

// tgVariants is patches.md §4: before v4.10 a sched_entity's attach or
// detach reached its task group's entity (and the root cfs_rq) only
// through PELT convergence.
var tgVariants = []variant{
	{
		info: VariantInfo{Name: "no-tg-propagate", Baseline: kernels.V619,
			Touches:     []string{"add_tg_cfs_propagate", "propagate_entity_load_avg", "update_tg_cfs_util", "update_tg_cfs_runnable", "update_tg_cfs_load"},
			Description: "turns off the propagation of an entity's attach/detach into its task group's entity (Vincent Guittot's v4.10 series, reverted): the root cfs_rq follows a migration only through PELT"},
		apply: func(s *Settings) { s.TgPropagate = false },
	},
}

func init() {
	variants = append(variants, balanceVariants...)
	variants = append(variants, tgVariants...)
}

// applyBalanceVariant applies one of balanceVariants (base, then patch;
// only the base with patched false) until the table carries them.
func applyBalanceVariant(s *Settings, name string, patched bool) bool {
	for _, v := range balanceVariants {
		if v.info.Name != name {
			continue
		}
		v.base(s)
		if patched {
			v.apply(s)
		}
		return true
	}
	return false
}
