package sched

import "github.com/schedlab/schedlab/internal/kernels"

// The variants of patches.md §3 and §4, appended to the variants table of
// variants.go after the wakeup-path ones.
//
// Both blocked-load patches were written against kernels whose newly idle
// balance still refreshed other idle CPUs' blocked load (LBF_NOHZ_STATS,
// removed in v5.13 by the very fix listed here), which the v5.12 baseline
// has (Settings.NewidleNohzStats). blocked-avg-ratelimit adds Joel
// Fernandes' rate limit to it; blocked-load-outside-newidle is exactly
// what Vincent Guittot's v5.13 series changed, applied on v5.12 (the rest
// of v5.12 — its newly idle gate, NOHZ without NOHZ_NEXT_KICK — stays).
var balanceVariants = []variant{
	{
		info: VariantInfo{Name: "blocked-avg-ratelimit", Baseline: kernels.V512,
			Touches:     []string{"update_nohz_stats"},
			Branches:    []Branch{BranchBlockedRatelimit},
			Description: "update_nohz_stats refreshes an idle CPU's blocked load at most once per HZ/20 jiffies (20/s) unless forced (Joel Fernandes, Jan 2021, not merged)"},
		apply: func(s *Settings) { s.BlockedAvgRatelimit = true },
	},
	{
		info: VariantInfo{Name: "blocked-load-outside-newidle", Baseline: kernels.V512,
			Touches:     []string{"update_sd_lb_stats", "update_sg_lb_stats", "update_nohz_stats", "_nohz_idle_balance", "nohz_newidle_balance", "nohz_run_idle_balance"},
			Branches:    []Branch{BranchNewidleNoStats, BranchRunIdleBalance},
			Description: "newly idle balance no longer refreshes other CPUs' blocked load; a CPU about to idle refreshes the idle CPUs' itself (Vincent Guittot, merged for v5.13)"},
		apply: func(s *Settings) { s.NewidleNohzStats = false },
	},
}

// tgVariants is patches.md §4: before v4.10 a sched_entity's attach or
// detach reached its task group's entity (and the root cfs_rq) only
// through PELT convergence. Every baseline has the propagation, so the
// variant applies to any of them (v6.19 by default). Its base, on both
// sides of a comparison, takes group shares from the queue's load.weight
// as the v4.9–v4.14 kernels did (Settings.GroupSharesWeight).
// Simplified: v4.9's reweight_entity set the entity's weight only, its
// PELT sums carrying the weight of each past period; the model's PELT is
// the v5.x form, whose reweight rescales load_avg at once.
var tgVariants = []variant{
	{
		info: VariantInfo{Name: "no-tg-propagate", Baseline: kernels.V619, AnyBaseline: true,
			Touches:     []string{"add_tg_cfs_propagate", "propagate_entity_load_avg", "update_tg_cfs_util", "update_tg_cfs_runnable", "update_tg_cfs_load"},
			Branches:    []Branch{BranchNoTgPropagate},
			Description: "turns off the propagation of an entity's attach/detach into its task group's entity (Vincent Guittot's v4.10 series, reverted): the root cfs_rq follows a migration only through PELT",
			Base:        "group shares from the queue's load.weight (calc_cfs_shares of v4.9–v4.14), on both sides"},
		base:  func(s *Settings) { s.GroupSharesWeight = true },
		apply: func(s *Settings) { s.TgPropagate = false },
	},
}

func init() {
	variants = append(variants, balanceVariants...)
	variants = append(variants, tgVariants...)
}
