package explain

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strings"

	"github.com/schedlab/schedlab/internal/engine"
	"github.com/schedlab/schedlab/internal/sched"
)

// SchemaVersion is the version of `schedlab explain --json`'s document
// (docs/explain.md).
const SchemaVersion = 1

// Report is what `schedlab explain` prints and writes as JSON.
type Report struct {
	SchemaVersion int      `json:"schema_version"`
	Tool          string   `json:"workload"`
	Args          []string `json:"args"`
	Machine       string   `json:"machine"`
	NrCPUs        int      `json:"nr_cpus"`
	Kernel        string   `json:"kernel"`
	// Tip and Variant label the two kernels ("base:NAME" and NAME).
	Tip     string   `json:"tip"`
	Variant string   `json:"variant"`
	Seeds   []uint64 `json:"seeds"`
	// Divergence is where run 0's decisions part.
	Divergence *DivergenceReport `json:"divergence"`
	// Decisions are the decision tables over all runs.
	Decisions []Section `json:"decisions"`
	// Attribution takes the metric's change apart.
	Attribution *Attribution `json:"attribution"`
}

// DivergenceReport is Divergence as the JSON has it.
type DivergenceReport struct {
	Seed     uint64 `json:"seed"`
	Compared int    `json:"matching_decisions"`
	// First says which came first: "time" (a decision at a different
	// time before any with a different CPU or reason), "decision", or
	// "none" when the runs never part.
	First    string      `json:"first"`
	Time     *PairJSON   `json:"first_different_time,omitempty"`
	Decision *PairJSON   `json:"first_different_decision,omitempty"`
	Before   []PairJSON  `json:"before,omitempty"`
	raw      *Divergence // for the text
	labels   [2]string   // tip's, the variant's
}

// PairJSON is a decision of both runs.
type PairJSON struct {
	Index   int      `json:"index"`
	Tip     *RecJSON `json:"tip"`
	Variant *RecJSON `json:"variant"`
}

// RecJSON is one decision.
type RecJSON struct {
	TimeNs int64  `json:"time_ns"`
	Kind   string `json:"kind"`
	Task   string `json:"task"`
	PID    int    `json:"pid"`
	Path   string `json:"path"`
	CPU    int    `json:"cpu"`
	Prev   int    `json:"prev"`
	Chosen int    `json:"chosen"`
	Reason string `json:"reason"`
	Affine string `json:"wake_affine,omitempty"`
	Domain string `json:"domain,omitempty"`
}

func recJSON(r *Rec) *RecJSON {
	if r == nil {
		return nil
	}
	j := &RecJSON{TimeNs: int64(r.T), Kind: r.Kind.String(), Task: r.Comm, PID: int(r.PID), Path: Path(r),
		CPU: int(r.CPU), Prev: int(r.Prev), Chosen: int(r.Chosen), Reason: r.Reason.String(), Domain: r.Domain}
	if r.Kind == sched.DecisionWakeup && r.Affine != sched.AffineNotTried {
		j.Affine = r.Affine.String()
	}
	return j
}

func pairJSON(p *Pair) *PairJSON {
	if p == nil {
		return nil
	}
	return &PairJSON{Index: p.Index, Tip: recJSON(p.Tip), Variant: recJSON(p.Other)}
}

// NewDivergenceReport is d of the runs with seed, tip and variant named
// by labels.
func NewDivergenceReport(d Divergence, seed uint64, tip, variant string) *DivergenceReport {
	r := &DivergenceReport{Seed: seed, Compared: d.Compared, Time: pairJSON(d.Time), Decision: pairJSON(d.Decision), raw: &d, labels: [2]string{tip, variant}}
	for i := range d.Before {
		r.Before = append(r.Before, *pairJSON(&d.Before[i]))
	}
	switch {
	case d.Time != nil:
		r.First = "time"
	case d.Decision != nil:
		r.First = "decision"
	default:
		r.First = "none"
	}
	return r
}

// Section is one table of decision counts; a row's share is of the
// section's total.
type Section struct {
	Title string `json:"title"`
	Rows  []Row  `json:"rows"`
}

// Row is one line of a section: counts of tip and the variant.
type Row struct {
	Label   string `json:"label"`
	Tip     uint64 `json:"tip"`
	Variant uint64 `json:"variant"`
}

// Path names a decision's path as a kernel developer looks for it.
func Path(r *Rec) string {
	switch r.Kind {
	case sched.DecisionWakeup:
		switch {
		case r.Reason == sched.ReasonRunning || r.Reason == sched.ReasonQueued:
			return "try_to_wake_up (no select_task_rq)"
		case r.Reason == sched.ReasonPinned || r.Reason == sched.ReasonFallbackRq:
			return "select_task_rq"
		case r.Slow:
			return "select_task_rq_fair wakeup slow path (sched_balance_find_dst_cpu)"
		}
		return "select_task_rq_fair wakeup fast path"
	case sched.DecisionFork, sched.DecisionExec:
		what := "wake_up_new_task (fork)"
		if r.Kind == sched.DecisionExec {
			what = "sched_exec (exec)"
		}
		if r.Reason == sched.ReasonFindDst {
			return what + ": slow path sched_balance_find_dst_cpu"
		}
		return what
	}
	return fmt.Sprintf("load balance: %s, %s level", r.Reason, r.Domain)
}

// Why is a decision's reason with wake_affine's outcome.
func Why(r *Rec) string {
	s := r.Reason.String()
	if r.Kind == sched.DecisionBalance {
		return s + " balance"
	}
	if r.Kind == sched.DecisionWakeup && r.Affine != sched.AffineNotTried {
		at := ""
		if r.Domain != "" {
			at = " at " + r.Domain
		}
		s += "; wake_affine" + at + ": " + r.Affine.String()
	}
	return s
}

// Tables builds the decision tables of tip's and the variant's counts.
func Tables(tip, other *Counts) []Section {
	names := NewCounts()
	names.Add(tip)
	names.Add(other)
	var out []Section
	// Paths, by kind.
	for kind := sched.DecisionKind(0); kind < sched.NrDecisionKinds; kind++ {
		var keys []PathKey
		for k := range names.Paths {
			if k.Kind == kind {
				keys = append(keys, k)
			}
		}
		if len(keys) == 0 {
			continue
		}
		sort.Slice(keys, func(i, j int) bool {
			a, b := keys[i], keys[j]
			if a.Slow != b.Slow {
				return !a.Slow
			}
			return a.Reason < b.Reason
		})
		sec := Section{Title: kindTitle(kind) + " by path and reason"}
		for _, k := range keys {
			r := Rec{Kind: k.Kind, Slow: k.Slow, Reason: k.Reason, Domain: "…"}
			label := shortPath(&r) + ": " + k.Reason.String()
			if kind == sched.DecisionBalance {
				label = k.Reason.String()
			}
			sec.Rows = append(sec.Rows, Row{label, tip.Paths[k], other.Paths[k]})
		}
		out = append(out, sec)
	}
	// wake_affine.
	if len(names.Affine) > 0 {
		sec := Section{Title: "wakeups by wake_affine's outcome"}
		for a := sched.Affine(0); a < sched.NrAffines; a++ {
			if _, ok := names.Affine[a]; ok {
				sec.Rows = append(sec.Rows, Row{a.String(), tip.Affine[a], other.Affine[a]})
			}
		}
		out = append(out, sec)
	}
	if len(names.MoveAffine) > 0 {
		sec := Section{Title: "wakeups wake_affine counted as affine, by domain (ttwu_move_affine: pulled to the waking CPU; v6.0 and v5.12 also count a prev that wake_affine_idle chose)"}
		for _, d := range sortedKeys(names.MoveAffine) {
			sec.Rows = append(sec.Rows, Row{d, tip.MoveAffine[d], other.MoveAffine[d]})
		}
		out = append(out, sec)
	}
	if len(names.Waker) > 0 {
		sec := Section{Title: "wakeups by distance, waking CPU -> chosen (ttwu_local, ttwu_wake_remote by domain)"}
		for _, l := range sortedLevels(names.Waker) {
			label := names.LevelLabel(l)
			if l == LevelSame {
				label += " (ttwu_local)"
			}
			sec.Rows = append(sec.Rows, Row{label, tip.Waker[l], other.Waker[l]})
		}
		out = append(out, sec)
	}
	for kind := sched.DecisionKind(0); kind < sched.DecisionBalance; kind++ {
		m := map[Level]uint64{}
		for k, v := range names.Prev {
			if k.Kind == kind {
				m[k.Level] += v
			}
		}
		if len(m) == 0 {
			continue
		}
		sec := Section{Title: kindTitle(kind) + " by distance, prev -> chosen (a migration's distance)"}
		for _, l := range sortedLevels(m) {
			sec.Rows = append(sec.Rows, Row{names.LevelLabel(l), tip.Prev[KindLevel{kind, l}], other.Prev[KindLevel{kind, l}]})
		}
		out = append(out, sec)
	}
	if len(names.Balance) > 0 {
		var keys []BalanceKey
		for k := range names.Balance {
			keys = append(keys, k)
		}
		sort.Slice(keys, func(i, j int) bool {
			if keys[i].Type != keys[j].Type {
				return keys[i].Type < keys[j].Type
			}
			return keys[i].Level < keys[j].Level
		})
		sec := Section{Title: "balance migrations by type and level (balance.migrations)"}
		for _, k := range keys {
			sec.Rows = append(sec.Rows, Row{k.Type.String() + ", " + names.LevelLabel(k.Level), tip.Balance[k], other.Balance[k]})
		}
		out = append(out, sec)
	}
	return out
}

func kindTitle(k sched.DecisionKind) string {
	return [...]string{"wakeups", "forks", "execs", "balance migrations"}[k]
}

func shortPath(r *Rec) string {
	switch r.Kind {
	case sched.DecisionWakeup:
		switch {
		case r.Reason == sched.ReasonRunning || r.Reason == sched.ReasonQueued:
			return "no choice"
		case r.Reason == sched.ReasonPinned || r.Reason == sched.ReasonFallbackRq:
			return "select_task_rq"
		case r.Slow:
			return "slow path"
		}
		return "fast path"
	case sched.DecisionFork, sched.DecisionExec:
		if r.Reason == sched.ReasonFindDst {
			return "slow path"
		}
		return "select_task_rq"
	}
	return "balance"
}

func sortedKeys(m map[string]uint64) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func sortedLevels(m map[Level]uint64) []Level {
	out := make([]Level, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// --- text ----------------------------------------------------------------

// Format writes the report as `schedlab explain` prints it.
func (r *Report) Format(w io.Writer) error {
	b := &strings.Builder{}
	// tip is labelled by its variant bases (base:V); a plain tip (against
	// a column of flags) by its name alone.
	tip := "tip (" + r.Tip + ")"
	if r.Tip == "tip" {
		tip = "tip"
	}
	fmt.Fprintf(b, "schedlab explain: %s %s on %s (%d CPUs), kernel %s: %s against %s, %d run%s\n",
		r.Tool, strings.Join(r.Args, " "), r.Machine, r.NrCPUs, r.Kernel, tip, r.Variant, len(r.Seeds), plural(len(r.Seeds)))
	b.WriteString("\n1. First divergence\n")
	formatDivergence(b, r.Divergence)
	fmt.Fprintf(b, "\n2. Decisions over %d run%s (counts; share of the section's total)\n", len(r.Seeds), plural(len(r.Seeds)))
	formatTables(b, r.Decisions, r.Tip, r.Variant)
	b.WriteString("\n3. Attribution\n")
	formatAttribution(b, r.Attribution)
	_, err := io.WriteString(w, b.String())
	return err
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func ms(t engine.Time) string { return fmt.Sprintf("%.6f ms", float64(t)/1e6) }

func decisionLine(r *Rec) string {
	who, prev := "waking CPU", "prev"
	switch r.Kind {
	case sched.DecisionFork:
		who = "forking CPU"
	case sched.DecisionExec:
		who = "exec'ing CPU"
	case sched.DecisionBalance:
		who, prev = "balancing CPU", "from"
	}
	return fmt.Sprintf("%-7s %s[%d]  %s\n        %s %d, %s %d -> CPU %d: %s", r.Kind, r.Comm, r.PID, Path(r), who, r.CPU, prev, r.Prev, r.Chosen, Why(r))
}

func formatDivergence(b *strings.Builder, d *DivergenceReport) {
	if d == nil || d.raw == nil {
		b.WriteString("  (not compared)\n")
		return
	}
	raw, tip, other := d.raw, d.labels[0], d.labels[1]
	wid := max(len(tip), len(other))
	fmt.Fprintf(b, "  run 0 (seed %d): %d decisions (wakeups, forks, execs, balance migrations) the same in both before the first with a different CPU or reason\n", d.Seed, d.Compared)
	if raw.Decision == nil {
		fmt.Fprintf(b, "  The runs never part: every decision is the same, with the same CPU and reason.\n")
	}
	if raw.Time != nil {
		p := raw.Time
		fmt.Fprintf(b, "  First decision at a different time: #%d, %s in %s, %s in %s\n    %s\n",
			p.Index, ms(p.Tip.T), tip, ms(p.Other.T), other, decisionLine(p.Tip))
	} else if raw.Decision != nil {
		b.WriteString("  Every decision before it was taken at the same time in both runs.\n")
	} else {
		b.WriteString("  Every decision was taken at the same time in both runs.\n")
	}
	if raw.Decision == nil {
		return
	}
	p := raw.Decision
	fmt.Fprintf(b, "  First decision with a different CPU or reason: #%d\n", p.Index)
	for i, x := range []*Rec{p.Tip, p.Other} {
		label := []string{tip, other}[i]
		if x == nil {
			fmt.Fprintf(b, "    %-*s  (no more decisions: the run ended)\n", wid, label)
			continue
		}
		fmt.Fprintf(b, "    %-*s  %s  %s\n", wid, label, ms(x.T), strings.ReplaceAll(decisionLine(x), "\n", "\n"+strings.Repeat(" ", wid+4)))
	}
	if raw.Time != nil {
		fmt.Fprintf(b, "  The time drifted first: %d decisions before the first different CPU or reason.\n", p.Index-raw.Time.Index)
	} else {
		b.WriteString("  The CPU or reason changed first.\n")
	}
	if len(raw.Before) > 0 {
		fmt.Fprintf(b, "  The decisions before it, the same in both (times %s / %s):\n", tip, other)
		for _, q := range raw.Before {
			t := ms(q.Tip.T)
			if q.Other.T != q.Tip.T {
				t += " / " + ms(q.Other.T)
			}
			fmt.Fprintf(b, "    #%d  %s  %s\n", q.Index, t, strings.ReplaceAll(decisionLine(q.Tip), "\n", "\n    "))
		}
	}
}

func formatTables(b *strings.Builder, secs []Section, tip, other string) {
	const lw = 56
	fmt.Fprintf(b, "    %-*s %21s %21s\n", lw, "", clip(tip, 21), clip(other, 21))
	for _, s := range secs {
		var tt, to uint64
		for _, r := range s.Rows {
			tt += r.Tip
			to += r.Variant
		}
		fmt.Fprintf(b, "  %s\n", s.Title)
		fmt.Fprintf(b, "    %-*s %12d %8s %12d\n", lw, "all", tt, "", to)
		for _, r := range s.Rows {
			fmt.Fprintf(b, "    %-*s %12d %7.1f%% %12d %7.1f%%\n", lw, clip(r.Label, lw), r.Tip, share(r.Tip, tt), r.Variant, share(r.Variant, to))
		}
	}
}

func clip(s string, n int) string {
	if len([]rune(s)) <= n {
		return s
	}
	return string([]rune(s)[:n-1]) + "…"
}

func share(n, total uint64) float64 {
	if total == 0 {
		return 0
	}
	return 100 * float64(n) / float64(total)
}

// round is x rounded to dec decimals, as an integer count of 10^-dec.
func round(x float64, dec int) int64 { return int64(math.Round(x * math.Pow10(dec))) }

func fixed(n int64, dec int) string {
	neg := n < 0
	if neg {
		n = -n
	}
	p := int64(math.Pow10(dec))
	s := fmt.Sprintf("%d", n/p)
	if dec > 0 {
		s += fmt.Sprintf(".%0*d", dec, n%p)
	}
	if neg {
		return "-" + s
	}
	return "+" + s
}

func formatAttribution(b *strings.Builder, a *Attribution) {
	if a == nil {
		b.WriteString("  (none)\n")
		return
	}
	m := a.Metric
	t, o := &a.Tip, &a.Other
	unit := m.Unit
	if unit != "" {
		unit = " " + unit
	}
	fmt.Fprintf(b, "  %s: %.*f%s in %s, %.*f%s in %s: %s%% (positive = better; %s is better)\n",
		m.Name, m.Decimals, t.Metric, unit, t.Label, m.Decimals, o.Metric, unit, o.Label, fixed(round(a.Simulated, 2), 2), m.Better)
	lw := max(len(t.Label), len(o.Label))
	for _, s := range []*Side{t, o} {
		how := "the workload's measured window"
		if !s.Measured {
			how = "the whole run (the workload marks no window of its metric)"
		}
		fmt.Fprintf(b, "  %-*s %s: T = %.6f s, W = %.6g %s%s; A = %.6f s of task-time (run + wait), k = A/T = %.2f active tasks, τ = T/W = %.4f µs per %s\n",
			lw, s.Label, how, s.TNs/1e9, s.Work, s.Unit, unitPlural(s.Unit, s.Work), s.ANs/1e9, s.K, s.TauNs/1e3, s.Unit)
	}
	if a.Note != "" {
		fmt.Fprintf(b, "  %s\n", a.Note)
		return
	}
	b.WriteString("\n  The workload's tasks' active time: τ = A/(k·W) and Δτ = Σ_part Δ(A_part/W)/k_tip + concurrency, exactly.\n")
	fmt.Fprintf(b, "  Each part: its task-time in µs per %s in both, its term of Δτ, and that term's part of the metric's change.\n", t.Unit)
	md := m.Decimals + 2
	remPct, remMetric := partTable(b, a, a.Parts, md, unit)
	rest := remPct - round(a.Concurrency, 2) - round(a.Window, 2)
	fmt.Fprintf(b, "  The remainder, %s%%: concurrency %s%% (k = %.2f → %.2f active tasks: %s), metric vs window %s%% (%s), rounding %s%%.\n",
		fixed(remPct, 2), fixed(round(a.Concurrency, 2), 2), t.K, o.K, concurrencyWords(t.K, o.K), fixed(round(a.Window, 2), 2), windowWhy(a), fixed(rest, 2))
	_ = remMetric
	if a.CPU == nil {
		return
	}
	fmt.Fprintf(b, "\n  The same change seen from the %d CPUs the workload may use: C·τ = (run + other tasks' run + idle)/W, exactly;\n", t.CPUs)
	fmt.Fprintf(b, "  their busy share %.1f%% → %.1f%%. Each part: its CPU time in µs per %s in both, its term of Δτ (over C), its part of the change.\n",
		100*(1-sum3(t.IdleNs)/t.CPUNs), 100*(1-sum3(o.IdleNs)/o.CPUNs), t.Unit)
	remPct, _ = partTable(b, a, a.CPU.Parts, md, unit)
	fmt.Fprintf(b, "  The remainder, %s%%: metric vs window %s%% (%s), rounding %s%%.\n",
		fixed(remPct, 2), fixed(round(a.Window, 2), 2), windowWhy(a), fixed(remPct-round(a.Window, 2), 2))
}

// partTable prints parts, the remainder and the simulated change, each
// rounded so that the printed parts and remainder add up to the printed
// change; it returns the printed remainder (in 0.01% and in the metric's
// unit at md decimals).
func partTable(b *strings.Builder, a *Attribution, parts []Part, md int, unit string) (remPct, remMetric int64) {
	t, o := &a.Tip, &a.Other
	fmt.Fprintf(b, "  %-64s %13s %13s %11s %14s %9s %7s\n", "part", "tip", "variant", "Δτ µs", "Δ "+strings.TrimSpace(unit), "Δ %", "share")
	var sumPct, sumMetric int64
	var sumTau float64
	for _, p := range parts {
		pct, met := round(p.Pct, 2), round(p.Metric, md)
		sumPct += pct
		sumMetric += met
		sumTau += p.TauNs
		fmt.Fprintf(b, "  %-64s %13.4f %13.4f %+11.4f %14s %9s %6.1f%%\n", clip(p.Name, 64), p.TipNs/1e3, p.OtherNs/1e3, p.TauNs/1e3, fixed(met, md), fixed(pct, 2), 100*p.Share)
	}
	simPct, simMetric := round(a.Simulated, 2), round(a.SimulatedMetric, md)
	remPct, remMetric = simPct-sumPct, simMetric-sumMetric
	dTau := o.TauNs - t.TauNs
	remShare := 0.0
	if a.Simulated != 0 {
		remShare = 100 * (a.Simulated - sumFloat(parts)) / a.Simulated
	}
	fmt.Fprintf(b, "  %-64s %13s %13s %+11.4f %14s %9s %6.1f%%\n", "remainder", "", "", (dTau-sumTau)/1e3, fixed(remMetric, md), fixed(remPct, 2), remShare)
	fmt.Fprintf(b, "  %-64s %13s %13s %+11.4f %14s %9s %6.1f%%\n", "= simulated change", "", "", dTau/1e3, fixed(simMetric, md), fixed(simPct, 2), 100.0)
	return remPct, remMetric
}

func sum3(x [3]float64) float64 { return x[0] + x[1] + x[2] }

func sumFloat(parts []Part) float64 {
	var s float64
	for _, p := range parts {
		s += p.Pct
	}
	return s
}

// concurrencyWords says how k changed.
func concurrencyWords(t, o float64) string {
	switch {
	case math.Abs(o-t) < 0.0005*t:
		return "unchanged"
	case o > t:
		return "the same active task-time spread over more tasks at once"
	}
	return "the same active task-time spread over fewer tasks at once"
}

// unitPlural is "s" for a plural of a unit of work written in lower case
// ("messages"), "" for one or for a symbol ("MB").
func unitPlural(unit string, n float64) string {
	if n == 1 || unit == "" || strings.ToLower(unit) != unit {
		return ""
	}
	return "s"
}

// windowWhy says why the metric's change differs from τ's.
func windowWhy(a *Attribution) string {
	switch {
	case !a.Tip.Measured || !a.Other.Measured:
		return a.Metric.Name + " is not a time per unit of work of the run"
	case math.Abs(a.Window) < 0.005:
		return a.Metric.Name + " is the window's work over its time"
	case a.Metric.higher():
		return a.Metric.Name + " is the benchmark's own estimate (bytes, batch means), the window counts " + a.Tip.Unit + "s"
	}
	return a.Metric.Name + " is not exactly the window's length"
}
