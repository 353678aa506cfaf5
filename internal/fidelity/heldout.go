package fidelity

import "strings"

// heldOutThreads are the four threads that ../shared/reference/patches.md
// describes: schedlab's held-out test set (fidelity/README.md, "Held
// out"). A case whose source title names one (a reply's "Re:" title
// included) is rejected, so their tables cannot enter the corpus by
// mistake. The later versions of the short-task RFC, renamed SIS_SHORT and
// SIS_CURRENT, are the same thread's follow-ups.
var heldOutThreads = []struct{ title, what string }{
	{"Choose the CPU where short task is running during wake up", "the short-task wakeup RFC (Chen Yu, 2022)"},
	{"Introduce SIS_SHORT", "the short-task wakeup RFC's follow-up (SIS_SHORT)"},
	{"Introduce SIS_CURRENT", "the short-task wakeup RFC's follow-up (SIS_CURRENT)"},
	{"Optimize test_idle_cores() for !SMT", "test_idle_cores() for !SMT (Barry Song, 2021)"},
	{"Rate limit calls to update_blocked_averages() for NOHZ", "the update_blocked_averages() rate limit (Joel Fernandes, 2021)"},
	{"reflect sched_entity move into task_group's load", "the task-group propagation series (Vincent Guittot, v4.10)"},
}

// heldOutVariants are schedlab's variants of the held-out patches: a delta
// of one of them is a held-out result.
var heldOutVariants = []string{"short-task-", "idle-cores-nosmt", "blocked-avg-ratelimit", "no-tg-propagate"}

func heldOut(c *Case) (string, bool) {
	title := strings.ToLower(c.Source.Title)
	for _, h := range heldOutThreads {
		if strings.Contains(title, strings.ToLower(h.title)) {
			return h.what, true
		}
	}
	return "", false
}

func heldOutVariant(v string) bool {
	for _, h := range heldOutVariants {
		if v == h || strings.HasSuffix(h, "-") && strings.HasPrefix(v, h) {
			return true
		}
	}
	return false
}
