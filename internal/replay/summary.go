package replay

import (
	"bufio"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/schedlab/schedlab/internal/trace"
)

// WriteSideBySide prints the perf sched latency rows of the recording and
// of the replay next to each other: per task (or comm), runtime, switch
// count ("Count"), average and maximum delay, recorded then replayed. Rows
// follow the recording's perf order; tasks only one side has come last,
// with "-" on the other.
func WriteSideBySide(w io.Writer, orig, rep *trace.LatencySummary) error {
	bw := bufio.NewWriter(w)
	key := func(r *trace.LatencyRow) string {
		if r.Merged > 1 {
			return r.Comm
		}
		return fmt.Sprintf("%s:%d", r.Comm, r.Pid)
	}
	// Merged rows pair by comm; a comm with one task on one side and
	// several on the other pairs too.
	repByKey := map[string]*trace.LatencyRow{}
	repByComm := map[string]*trace.LatencyRow{}
	for i := range rep.Rows {
		r := &rep.Rows[i]
		repByKey[key(r)] = r
		if r.Merged > 1 || repByComm[r.Comm] == nil {
			repByComm[r.Comm] = r
		}
	}
	used := map[*trace.LatencyRow]bool{}
	// Four groups of two columns, recorded and replayed, each group
	// " %Ns | %Ms |" wide.
	groups := []struct {
		title string
		w1    int
		w2    int
	}{{"Runtime ms", 10, 11}, {"Count", 8, 8}, {"Avg delay ms", 10, 11}, {"Max delay ms", 10, 11}}
	width := 26
	for _, g := range groups {
		width += g.w1 + g.w2 + 6
	}
	rule := " " + strings.Repeat("-", width-1) + "\n"
	bw.WriteString(rule)
	fmt.Fprintf(bw, "%-25s|", "")
	for _, g := range groups {
		n := g.w1 + g.w2 + 5
		left := (n - len(g.title)) / 2
		fmt.Fprintf(bw, "%*s%-*s|", left, "", n-left, g.title)
	}
	fmt.Fprintf(bw, "\n%-25s|", "  Task")
	for _, g := range groups {
		fmt.Fprintf(bw, " %*s | %*s |", g.w1, "recorded", g.w2, "replayed")
	}
	bw.WriteString("\n")
	bw.WriteString(rule)
	line := func(name string, a, b *trace.LatencyRow) {
		fmt.Fprintf(bw, "%-25s|", name)
		ms := func(r *trace.LatencyRow, f func(*trace.LatencyRow) uint64) string {
			if r == nil {
				return "-"
			}
			return fmt.Sprintf("%.3f", float64(f(r))/1e6)
		}
		cnt := func(r *trace.LatencyRow) string {
			if r == nil {
				return "-"
			}
			return fmt.Sprint(r.Count)
		}
		runtime := func(r *trace.LatencyRow) uint64 { return r.Runtime }
		avg := func(r *trace.LatencyRow) uint64 { return r.AvgDelay() }
		mx := func(r *trace.LatencyRow) uint64 { return r.MaxDelay }
		fmt.Fprintf(bw, " %10s | %11s | %8s | %8s | %10s | %11s | %10s | %11s |\n",
			ms(a, runtime), ms(b, runtime), cnt(a), cnt(b), ms(a, avg), ms(b, avg), ms(a, mx), ms(b, mx))
	}
	for i := range orig.Rows {
		a := &orig.Rows[i]
		b := repByKey[key(a)]
		if b == nil {
			b = repByComm[a.Comm]
		}
		if used[b] {
			b = nil
		}
		if b != nil {
			used[b] = true
		}
		line(a.Name(), a, b)
	}
	var rest []*trace.LatencyRow
	for i := range rep.Rows {
		if r := &rep.Rows[i]; !used[r] {
			rest = append(rest, r)
		}
	}
	sort.SliceStable(rest, func(i, j int) bool { return key(rest[i]) < key(rest[j]) })
	for _, r := range rest {
		line(r.Name(), nil, r)
	}
	bw.WriteString(rule)
	ta, tb := totals(orig), totals(rep)
	fmt.Fprintf(bw, "%-25s| %10.3f | %11.3f | %8d | %8d | %10.3f | %11.3f | %10.3f | %11.3f |\n", "  TOTAL:",
		float64(ta.runtime)/1e6, float64(tb.runtime)/1e6, ta.count, tb.count,
		ta.avg()/1e6, tb.avg()/1e6, float64(ta.max)/1e6, float64(tb.max)/1e6)
	bw.WriteString(rule)
	return bw.Flush()
}

type total struct {
	runtime, count, delay, max uint64
}

func (t total) avg() float64 {
	if t.count == 0 {
		return 0
	}
	return float64(t.delay) / float64(t.count)
}

func totals(s *trace.LatencySummary) total {
	var t total
	for _, r := range s.Rows {
		t.runtime += r.Runtime
		t.count += r.Count
		t.delay += r.TotalDelay
		t.max = max(t.max, r.MaxDelay)
	}
	return t
}
