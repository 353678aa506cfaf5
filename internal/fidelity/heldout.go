package fidelity

import "strings"

// heldOutThreads are the four threads that ../shared/reference/patches.md
// describes: schedlab's held-out test set (fidelity/README.md, "Held
// out"). A case whose source title names one (a reply's "Re:" title
// included) is rejected, so their tables cannot enter the corpus by
// mistake. The short-task RFC's titles are every version's: the RFC and
// its v2–v4 (the cover letters name the first patch "Introduce short
// duration task check"), then SIS_SHORT and SIS_CURRENT (v5–v8).
var heldOutThreads = []struct{ title, what string }{
	{"Choose the CPU where short task is running during wake up", "the short-task wakeup RFC (Chen Yu, 2022)"},
	{"Introduce short duration task check", "the short-task wakeup RFC (Chen Yu, 2022)"},
	{"Introduce SIS_SHORT", "the short-task wakeup RFC's follow-up (SIS_SHORT)"},
	{"Introduce SIS_CURRENT", "the short-task wakeup RFC's follow-up (SIS_CURRENT)"},
	{"wake up short task on current CPU", "the short-task wakeup RFC's follow-up (SIS_CURRENT)"},
	{"Optimize test_idle_cores() for !SMT", "test_idle_cores() for !SMT (Barry Song, 2021)"},
	{"Rate limit calls to update_blocked_averages() for NOHZ", "the update_blocked_averages() rate limit (Joel Fernandes, 2021)"},
	{"reflect sched_entity move into task_group's load", "the task-group propagation series (Vincent Guittot, v4.10)"},
}

// heldOutMessageIDs are posts of the held-out threads, and posts outside
// them that repeat a held-out report's numbers, by Message-ID: a case
// citing one, as its source or anywhere in its text, is rejected.
var heldOutMessageIDs = []struct{ id, what string }{
	{"20220915165407.1776363-1-yu.c.chen@intel.com", "the short-task wakeup RFC (v1)"},
	{"cover.1666531576.git.yu.c.chen@intel.com", "the short-task wakeup RFC (v2)"},
	{"cover.1669862147.git.yu.c.chen@intel.com", "the short-task wakeup RFC (v3)"},
	{"cover.1671158588.git.yu.c.chen@intel.com", "the short-task wakeup RFC (v4)"},
	{"cover.1682060436.git.yu.c.chen@intel.com", "SIS_CURRENT (v7)"},
	{"cover.1682661027.git.yu.c.chen@intel.com", "SIS_CURRENT (v8)"},
	// K Prateek Nayak's netdev report (2022-10-13) sets the tbench tip
	// of 7e9518baed4c, a held-out report's, beside another.
	{"684c6220-9288-3838-a938-0792b57c5968@amd.com", "a report that repeats the held-out tip run 7e9518baed4c"},
}

// heldOutTips are the tip commits of the held-out threads' test reports.
// AMD runs one tip for the reports of the same weeks, so a report on
// another patch with one of these tips repeats a held-out run: a case
// naming one, in kernel.published or anywhere in its text, is rejected.
var heldOutTips = []struct{ commit, what string }{
	{"7e9518baed4c", "the tip run of a short-task RFC test report"},
	{"fdf756f71271", "the tip run of a short-task RFC test report"},
	{"d6962c4fe8f9", "the tip run of a short-task RFC test report"},
	{"7c4a5b89a0b5", "the tip run of the short-task series' v6 test report"},
}

// heldOutVariants are schedlab's variants of the held-out patches: a delta
// of one of them is a held-out result.
var heldOutVariants = []string{"short-task-", "idle-cores-nosmt", "blocked-avg-ratelimit", "no-tg-propagate"}

// heldOut reports why the case is held out: a title of a held-out
// thread, a held-out post's Message-ID, or a held-out report's tip
// commit, in its source, kernel or notes.
func heldOut(c *Case) (string, bool) {
	title := strings.ToLower(c.Source.Title)
	for _, h := range heldOutThreads {
		if strings.Contains(title, strings.ToLower(h.title)) {
			return h.what, true
		}
	}
	text := strings.ToLower(strings.Join([]string{c.Source.Title, c.Source.MessageID, c.Source.URL, c.Kernel.Published, c.Notes, c.Command, c.Machine.Config}, "\n"))
	for _, h := range heldOutMessageIDs {
		if strings.Contains(text, strings.ToLower(h.id)) {
			return h.what + " <" + h.id + ">", true
		}
	}
	for _, h := range heldOutTips {
		if strings.Contains(text, h.commit) {
			return h.what + " (tip " + h.commit + ")", true
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
