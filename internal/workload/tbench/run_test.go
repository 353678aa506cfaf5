package tbench_test

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/schedlab/schedlab/internal/engine"
	"github.com/schedlab/schedlab/internal/sim"
)

var (
	lineRE = regexp.MustCompile(`^ +(\d+) +\d+ +([\d.]+) MB/sec  (warmup|execute) +(\d+) sec  latency [\d.]+ ms$`)
	tputRE = regexp.MustCompile(`\nThroughput (\S+) MB/sec  2 clients  2 procs  max_latency=[\d.]+ ms\n$`)
)

// A simulated tbench -t T runs as dbench 4.00 does (dbench.c:sig_alarm):
// warmup W = T/5 seconds (the report at W ends it and prints nothing, so
// W-1 warmup lines), then T-1 execute lines, a report each second, and the
// cleanup at T seconds of execute. The result is the last execute line's
// MB/sec: none at -t 1, which therefore reports 0 MB/sec, as dbench does.
func TestTimeLimits(t *testing.T) {
	for _, limit := range []int{1, 2, 3, 5, 6} {
		res, err := sim.Run(sim.Config{Machine: "hikey", Seed: 1, Tool: "tbench", Args: []string{"-t", strconv.Itoa(limit), "2"}}, sim.Options{})
		if err != nil {
			t.Fatal(err)
		}
		warmup := limit / 5
		var phases []string
		var secs []int
		last := "0"
		for _, l := range strings.Split(res.Output, "\n") {
			m := lineRE.FindStringSubmatch(l)
			if m == nil {
				continue
			}
			n, _ := strconv.Atoi(m[4])
			phases, secs = append(phases, m[3]), append(secs, n)
			if m[3] == "execute" {
				last = m[2]
			}
		}
		var want []string
		var wantSecs []int
		for s := 1; s < warmup; s++ {
			want, wantSecs = append(want, "warmup"), append(wantSecs, s)
		}
		for s := 1; s < limit; s++ {
			want, wantSecs = append(want, "execute"), append(wantSecs, s)
		}
		if strings.Join(phases, ",") != strings.Join(want, ",") || len(secs) != len(wantSecs) {
			t.Errorf("-t %d: lines %v at %v s, want %v at %v s\n%s", limit, phases, secs, want, wantSecs, res.Output)
			continue
		}
		for i := range secs {
			if secs[i] != wantSecs[i] {
				t.Errorf("-t %d: line %d at %d s, want %d", limit, i, secs[i], wantSecs[i])
			}
		}
		if !strings.Contains(res.Output, fmt.Sprintf("\n   2  cleanup %3d sec\n   0  cleanup ", limit)) {
			t.Errorf("-t %d: no cleanup at %d s:\n%s", limit, limit, res.Output)
		}
		m := tputRE.FindStringSubmatch(res.Output)
		if m == nil {
			t.Fatalf("-t %d: no Throughput line:\n%s", limit, res.Output)
		}
		tput, _ := strconv.ParseFloat(m[1], 64)
		lastLine, _ := strconv.ParseFloat(last, 64)
		metric, _ := res.Metric("throughput_mb_s")
		// The line prints %7.2f, the result %g, the metric in full.
		if (limit == 1) != (tput == 0) || math.Abs(tput-lastLine) > 0.005 || strconv.FormatFloat(metric, 'g', 6, 64) != m[1] {
			t.Errorf("-t %d: Throughput %s, last execute line %s, metric %v", limit, m[1], last, metric)
		}
		// The run lasts the warmup and the time limit, and stops at
		// the cleanup report.
		if sim := engine.Time(res.Sim.SimulatedNs); sim < engine.Time(warmup+limit)*engine.Second || sim > engine.Time(warmup+limit+1)*engine.Second {
			t.Errorf("-t %d: %v simulated", limit, sim)
		}
	}
}
