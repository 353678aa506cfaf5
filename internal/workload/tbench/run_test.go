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
// (With --full-length: by default the run stops at steady state,
// TestSteadyStateStop.)
func TestTimeLimits(t *testing.T) {
	for _, limit := range []int{1, 2, 3, 5, 6} {
		res, err := sim.Run(sim.Config{Machine: "hikey", Seed: 1, Tool: "tbench", Args: []string{"-t", strconv.Itoa(limit), "2"}, FullLength: true}, sim.Options{})
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
		// The line prints %7.2f, the result %g, the metric in full: the
		// line is within 0.005 of the metric and the %g result within
		// 0.0005 (six digits of a three-digit figure), so they may differ
		// by 0.0055.
		if (limit == 1) != (tput == 0) || math.Abs(tput-lastLine) > 0.0055 || strconv.FormatFloat(metric, 'g', 6, 64) != m[1] {
			t.Errorf("-t %d: Throughput %s, last execute line %s, metric %v", limit, m[1], last, metric)
		}
		// The run lasts the warmup and the time limit, and stops at
		// the cleanup report.
		if sim := engine.Time(res.Sim.SimulatedNs); sim < engine.Time(warmup+limit)*engine.Second || sim > engine.Time(warmup+limit+1)*engine.Second {
			t.Errorf("-t %d: %v simulated", limit, sim)
		}
	}
}

var steadyRE = regexp.MustCompile(`\nschedlab: stopped at steady state after ([\d.]+) s of the -t (\d+) run: (\d+) batches of 50 ms from ([\d.]+) s, throughput ±([\d.]+)% \(95%\)(?: \(Throughput: the execute phase's ([\d.]+) s so far and ([\d.]+) s more at that rate\))?; --full-length runs all of it\n$`)

// By default tbench stops once its throughput is steady (workload.SteadyState):
// earlier than the time limit, with a note saying when and how tight, a
// Throughput within the interval's reach of the full-length run's, and a
// throughput_ci_pct metric; --full-length prints no note and runs it all.
// The batches it counts are the execute phase's: none starts before the
// warmup (1 s at -t 5) is over, so the earliest stop is 1 s + 8 batches,
// whereas a rule counting from the release could stop at 0.5 s.
func TestSteadyStateStop(t *testing.T) {
	for _, tc := range []struct {
		machine string
		clients string
	}{{"hikey", "2"}, {"zen3-2s-nps1", "4"}} {
		// -t 5 has a warmup (1 s), as the posted -t 60 runs do.
		args := []string{"-t", "5", tc.clients}
		seq, err := sim.Run(sim.Config{Machine: tc.machine, Seed: 1, Tool: "tbench", Args: args}, sim.Options{})
		if err != nil {
			t.Fatal(err)
		}
		full, err := sim.Run(sim.Config{Machine: tc.machine, Seed: 1, Tool: "tbench", Args: args, FullLength: true}, sim.Options{})
		if err != nil {
			t.Fatal(err)
		}
		m := steadyRE.FindStringSubmatch(seq.Output)
		if m == nil {
			t.Fatalf("%s: no steady-state note at the end:\n%s", tc.machine, seq.Output)
		}
		if strings.Contains(full.Output, "schedlab:") {
			t.Errorf("%s: --full-length printed a note:\n%s", tc.machine, full.Output)
		}
		after, _ := strconv.ParseFloat(m[1], 64)
		batches, _ := strconv.Atoi(m[3])
		from, _ := strconv.ParseFloat(m[4], 64)
		ci, _ := strconv.ParseFloat(m[5], 64)
		if after >= 5 || batches < 8 || from < 1 || math.Abs(from+0.05*float64(batches)-after) > 0.006 || ci > 1 {
			t.Errorf("%s: stopped after %v s, %d batches from %v s, ±%v%%", tc.machine, after, batches, from, ci)
		}
		// The figure stands for the execute window (4 s at -t 5): what
		// was counted since the warmup's end and the rest at that rate.
		soFar, _ := strconv.ParseFloat(m[6], 64)
		more, _ := strconv.ParseFloat(m[7], 64)
		if m[6] == "" || math.Abs(soFar+more-4) > 0.006 || math.Abs(soFar-(after-1)) > 0.051 {
			t.Errorf("%s: window clause %q %q after %v s", tc.machine, m[6], m[7], after)
		}
		if engine.Time(seq.Sim.SimulatedNs) >= engine.Time(full.Sim.SimulatedNs)/2 {
			t.Errorf("%s: steady-state run simulated %d ns, full %d ns", tc.machine, seq.Sim.SimulatedNs, full.Sim.SimulatedNs)
		}
		got, _ := seq.Metric("throughput_mb_s")
		want, _ := full.Metric("throughput_mb_s")
		if math.Abs(got/want-1) > 0.03 {
			t.Errorf("%s: steady-state throughput %v, full-length %v", tc.machine, got, want)
		}
		if v, ok := seq.Metric("throughput_ci_pct"); !ok || math.Abs(v-ci) > 0.005 {
			t.Errorf("%s: throughput_ci_pct %v (%v), the note ±%v%%", tc.machine, v, ok, ci)
		}
		if _, ok := full.Metric("throughput_ci_pct"); ok {
			t.Errorf("%s: full-length run has throughput_ci_pct", tc.machine)
		}
	}
}
