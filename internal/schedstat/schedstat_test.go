package schedstat

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/schedlab/schedlab/internal/cpumask"
	"github.com/schedlab/schedlab/internal/golden"
)

// testSnapshot is a 4-CPU machine (two SMT pairs in one MC domain) whose
// counters encode where they belong, so that a misplaced column shows:
// load-balance field k (1..11, in v17 order) of idle type t (1 busy, 2 idle,
// 3 newly idle) on domain level l of cpu c is c*10000 + l*1000 + t*100 + k;
// the last twelve are alb 91 92 93, sbe/sbf 0, ttwu_wake_remote 94,
// ttwu_move_affine 95, ttwu_move_balance 0 (each plus c*10000 + l*1000).
func testSnapshot(ts uint64, scale uint64) *Snapshot {
	s := &Snapshot{Timestamp: ts}
	for c := 0; c < 4; c++ {
		cu := uint64(c)
		cs := CPUStats{CPU: cpumask.CPU(c), YldCount: 1 * scale, SchedCount: (5000 + cu) * scale,
			SchedGoidle: (2000 + cu) * scale, TtwuCount: (3000 + cu) * scale, TtwuLocal: (1000 + cu) * scale,
			RqCPUTime: (123456789012 + cu) * scale, RunDelay: (23456789 + cu) * scale, Pcount: (4000 + cu) * scale}
		for l, name := range []string{"SMT", "MC"} {
			span := cpumask.Of(4, cpumask.CPU(c&^1), cpumask.CPU(c|1))
			if l == 1 {
				span = cpumask.Full(4)
			}
			base := cu*10000 + uint64(l)*1000
			d := DomainStats{Level: l, Name: name, Span: span}
			for t, it := range []IdleType{CPUNotIdle, CPUIdle, CPUNewlyIdle} {
				v := func(k uint64) uint64 { return (base + uint64(t+1)*100 + k) * scale }
				d.LB[it] = LBStats{LbCount: v(1), LbBalanced: v(2), LbFailed: v(3),
					LbImbalanceLoad: v(4), LbImbalanceUtil: v(5), LbImbalanceTask: v(6),
					LbImbalanceMisfit: v(7), LbGained: v(8), LbHotGained: v(9),
					LbNobusyq: v(10), LbNobusyg: v(11)}
			}
			d.AlbCount, d.AlbFailed, d.AlbPushed = (base+91)*scale, (base+92)*scale, (base+93)*scale
			d.TtwuWakeRemote, d.TtwuMoveAffine = (base+94)*scale, (base+95)*scale
			cs.Domains = append(cs.Domains, d)
		}
		s.CPUs = append(s.CPUs, cs)
	}
	return s
}

func formatted(t *testing.T, s *Snapshot, v int) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := Format(&buf, s, v); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestFormatGolden pins the three versions byte for byte.
//
// Reference: kernel/sched/stats.c:show_schedstat (v6.9 for 15, v6.10 for
// 16, v6.14 for 17) and workloads-and-formats.md 6.1 / kernel-fair.md 7.2.
// How each golden line was checked by hand:
//   - "version N" and "timestamp J" come first.
//   - cpu lines, all versions: cpuN yld_count 0 sched_count sched_goidle
//     ttwu_count ttwu_local rq_cpu_time run_delay pcount, e.g.
//     "cpu1 1 0 5001 2001 3001 1001 123456789013 23456790 4001".
//   - v15 domain line: "domain0 3" (span CPUs 0-1 over nr_cpu_ids 4: one
//     hex digit), then the CPU_IDLE group 201 202 203, lb_imbalance =
//     204+205+206+207 = 822, 208 209 210 211; then the busy group 101 102
//     103 422 (104+105+106+107) 108 109 110 111; then newly idle 301 302
//     303 1222 308..311;
//     then 91 92 93 0 0 0 0 0 0 94 95 0: 36 numbers.
//   - v16: the same numbers with the busy and idle groups swapped (101...
//     first, then 201...).
//   - v17: "domain0 SMT 3", eleven per group with the four imbalance
//     counters split (101..111, 201..211, 301..311), then the twelve: 45
//     numbers. cpu2's SMT span is "c", the MC span "f".
func TestFormatGolden(t *testing.T) {
	s := testSnapshot(4295011225, 1)
	for _, v := range []int{15, 16, 17} {
		golden.Check(t, filepath.Join("testdata", "schedstat-v"+string(rune('0'+v/10))+string(rune('0'+v%10))+".txt"), formatted(t, s, v))
	}
}

func TestParseRoundTrip(t *testing.T) {
	s := testSnapshot(4295011225, 1)
	for _, v := range []int{15, 16, 17} {
		text := formatted(t, s, v)
		back, err := Parse(bytes.NewReader(text))
		if err != nil {
			t.Fatalf("v%d: %v", v, err)
		}
		if back.Version != v {
			t.Errorf("v%d: parsed version %d", v, back.Version)
		}
		if again := formatted(t, back, v); !bytes.Equal(again, text) {
			t.Errorf("v%d: Format(Parse(x)) != x", v)
		}
		if v == 17 {
			back.Version = 0
			if !reflect.DeepEqual(back, s) {
				t.Errorf("v17 parse differs from the snapshot")
			}
		}
	}
	// A v15 file printed as v17 has no split imbalance to print.
	back, _ := Parse(bytes.NewReader(formatted(t, s, 15)))
	if err := Format(&bytes.Buffer{}, back, 17); err == nil {
		t.Error("v15 snapshot printed as v17")
	}
	if err := Format(&bytes.Buffer{}, s, 14); err == nil {
		t.Error("version 14 accepted")
	}
}

// TestBitmap checks "%*pb" against the examples of kernel-fair.md 7.2.
func TestBitmap(t *testing.T) {
	for _, c := range []struct {
		m    cpumask.Mask
		want string
	}{
		{cpumask.Full(4), "f"},
		{cpumask.Range(12, 0, 7), "0ff"},
		{cpumask.Range(64, 0, 7), "00000000,000000ff"},
		{cpumask.Of(33, 32), "1,00000000"},
		{cpumask.Range(32, 0, 31), "ffffffff"},
		{cpumask.Of(40, 1, 35), "08,00000002"},
	} {
		if got := string(AppendBitmap(nil, c.m)); got != c.want {
			t.Errorf("%v over %d bits: %q, want %q", c.m, c.m.Size(), got, c.want)
		}
	}
}

func TestParseErrors(t *testing.T) {
	good := string(formatted(t, testSnapshot(1, 1), 17))
	lines := strings.Split(good, "\n")
	for _, c := range []struct {
		text, want string
	}{
		{"version 14\ntimestamp 1\n", "line 1: schedstat version 14 not supported"},
		{"timestamp 1\n", "line 1: expected"},
		{"version 17\ncpu0 1 2 3\n", "line 2: expected \"timestamp N\""},
		{"version 17\ntimestamp 1\ndomain0 SMT 3" + strings.Repeat(" 0", 45) + "\n", "line 3: domain line before any cpu line"},
		{strings.Join(lines[:3], "\n") + "\ndomain1 SMT 3" + strings.Repeat(" 0", 45) + "\n", "line 4: bad domain"},
		{strings.Join(lines[:3], "\n") + "\ndomain0 SMT 3" + strings.Repeat(" 0", 44) + "\n", "line 4: 44 numbers, expected 45"},
		{strings.Join(lines[:3], "\n") + "\ndomain0 SMT 3g" + strings.Repeat(" 0", 45) + "\n", "line 4: bad cpumask"},
		{strings.Join(lines[:3], "\n") + "\ndomain0 SMT 3" + strings.Repeat(" -1", 45) + "\n", "line 4: bad number"},
	} {
		_, err := Parse(strings.NewReader(c.text))
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("Parse(%.40q...) error %v, want %q", c.text, err, c.want)
		}
	}
}

// FuzzParse: Parse never panics, and what it accepts prints in its own
// version to text that parses to the same snapshot.
func FuzzParse(f *testing.F) {
	for _, v := range []string{"15", "16", "17"} {
		data, err := os.ReadFile(filepath.Join("testdata", "schedstat-v"+v+".txt"))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte("version 17\ntimestamp 5\ncpu3 1 0 2 3 4 5 6 7 8\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Parse(bytes.NewReader(data))
		if err != nil {
			return
		}
		var buf bytes.Buffer
		if err := Format(&buf, s, s.Version); err != nil {
			t.Fatalf("Format of a parsed snapshot: %v", err)
		}
		back, err := Parse(bytes.NewReader(buf.Bytes()))
		if err != nil {
			t.Fatalf("reparse: %v\n%s", err, buf.Bytes())
		}
		var again bytes.Buffer
		Format(&again, back, back.Version)
		if !bytes.Equal(again.Bytes(), buf.Bytes()) {
			t.Fatalf("not stable:\n%s\n%s", buf.Bytes(), again.Bytes())
		}
	})
}
