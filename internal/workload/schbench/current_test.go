package schbench

import (
	"bytes"
	"strings"
	"testing"
)

func TestParseCurrent(t *testing.T) {
	def := DefaultCurrentConfig()
	for _, c := range []struct {
		args string
		want func(c *CurrentConfig)
	}{
		{"", func(c *CurrentConfig) {}},
		{"-m 2 -t 8 -r 5", func(c *CurrentConfig) { c.MessageThreads, c.Workers, c.Runtime = 2, 8, 5 }},
		{"--message-threads=3 --threads 4 --runtime=60", func(c *CurrentConfig) { c.MessageThreads, c.Workers, c.Runtime = 3, 4, 60 }},
		{"-F 512 -n 2 -s 50", func(c *CurrentConfig) { c.FootprintKB, c.Operations, c.SleepUsec = 512, 2, 50 }},
		{"--operations 7 --sleep_usec 0", func(c *CurrentConfig) { c.Operations, c.SleepUsec = 7, 0 }},
		// the long footprint option is broken in the tool: ignored
		{"--cache_footprint 1024", func(c *CurrentConfig) {}},
		{"-R 1000 -m 2", func(c *CurrentConfig) { c.RPS, c.MessageThreads = 1000, 2 }},
		{"-L", func(c *CurrentConfig) { c.NoLocking = true }},
		{"-C", func(c *CurrentConfig) { c.Calibrate, c.NoLocking = true, true }},
		{"-r 60 -w 5 -i 15 -z 15", func(c *CurrentConfig) { c.Runtime, c.Warmup, c.Interval, c.ZeroTime = 60, 5, 15, 15 }},
		// warmup is forced to 0 when the runtime is under 30 s
		{"-r 10 -w 5", func(c *CurrentConfig) { c.Runtime = 10 }},
		{"-Lm2", func(c *CurrentConfig) { c.NoLocking, c.MessageThreads = true, 2 }},
	} {
		want := def
		c.want(&want)
		got, err := ParseCurrent(strings.Fields(c.args))
		if err != nil || got != want {
			t.Errorf("%q: %+v %v, want %+v", c.args, got, err, want)
		}
	}
	for _, c := range []struct{ args, msg string }{
		{"-p 100", "-p is not modelled"},
		{"-A 80", "-A is not modelled"},
		{"--auto-rps 80", "--auto-rps is not modelled"},
		{"-M auto", "-M is not modelled"},
		{"--worker-cpus 1-3", "--worker-cpus is not modelled"},
		{"--split 50", "--split is not modelled"},
		{"-j -", "-j is not modelled"},
		{"-J job", "-J is not modelled"},
		{"-c 100", "invalid option"},
		{"-x", "invalid option"},
		{"extra", "Extra arguments 'extra'"},
		{"-m 0", "-m 0"},
		{"-t -1", "-t -1"},
		{"-r 0", "-r 0"},
		{"-n -1", "-n -1"},
		{"-s -5", "-s -5"},
		{"-R 1 -m 2", "-R 1"},
		{"-i 0", "-i 0"},
	} {
		_, err := ParseCurrent(strings.Fields(c.args))
		if err == nil || !strings.HasPrefix(err.Error(), "schbench: ") || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%q: %v, want %q", c.args, err, c.msg)
		}
	}
	if _, err := ParseCurrent([]string{"--help"}); err == nil {
		t.Error("--help accepted")
	}
}

func FuzzParseCurrent(f *testing.F) {
	f.Add("-m 1 -t 2 -r 1")
	f.Add("-R 100 -L -C -F 64 -n 3 -s 0 --zerotime=4")
	f.Fuzz(func(t *testing.T, s string) {
		c, err := ParseCurrent(strings.Fields(s))
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("multi-line error %q", err)
			}
			return
		}
		if c.MessageThreads <= 0 || c.Workers < 0 || c.Runtime <= 0 || c.FootprintKB < 0 || c.Operations < 0 ||
			c.SleepUsec < 0 || c.RPS < 0 || c.Interval <= 0 || c.Warmup < 0 || c.ZeroTime < 0 ||
			(c.Calibrate && !c.NoLocking) || (c.Runtime < 30 && c.Warmup != 0) {
			t.Fatalf("accepted %+v", c)
		}
		if c.MathTime() < 0 {
			t.Fatalf("negative math time for %+v", c)
		}
	})
}

// F=256 gives n=104 (workloads-and-formats.md 2.2).
func TestMatrixSize(t *testing.T) {
	c := DefaultCurrentConfig()
	if n := c.MatrixSize(); n != 104 {
		t.Fatalf("n = %d", n)
	}
	if d := c.MathTime(); d != 5*104*104*104*NsPerMAC {
		t.Fatalf("math time %d", d)
	}
}

// calc_percentiles' counts are the samples between a percentile and the
// previous one; add_lat keeps the real minimum; combine_stats lets an
// empty histogram zero the minimum.
func TestPercentileCounts(t *testing.T) {
	var s Stats
	for v := uint32(1); v <= 100; v++ {
		s.AddLat(v)
	}
	v, c := s.PercentileCounts(curPlist)
	if v[0] != 20 || v[1] != 50 || v[2] != 90 || v[3] != 99 || v[4] != 100 {
		t.Fatalf("values %v", v)
	}
	if c[0] != 20 || c[1] != 30 || c[2] != 40 || c[3] != 9 || c[4] != 1 {
		t.Fatalf("counts %v", c)
	}
	if s.Min != 1 || s.Max != 100 {
		t.Fatalf("min %d max %d", s.Min, s.Max)
	}
	var d Stats
	d.Combine(&s)
	if d.Min != 1 || d.Samples != 100 {
		t.Fatalf("combined %d %d", d.Min, d.Samples)
	}
	d.Combine(&Stats{})
	if d.Min != 0 {
		t.Fatalf("combining an empty histogram left min %d", d.Min)
	}
}

// Above 511 the buckets are two wide (990..991 reports 991), and
// 99.9/100×1000 is a hair over 999 in doubles, as in C.
func TestShowLatenciesLayout(t *testing.T) {
	var s Stats
	for v := uint32(1); v <= 1000; v++ {
		s.AddLat(v)
	}
	var b bytes.Buffer
	showLatencies(&b, &s, "Wakeup Latencies", "usec", 90, latMask, 3)
	want := "Wakeup Latencies percentiles (usec) runtime 90 (s) (1000 total samples)\n" +
		"\t  50.0th: 500        (300 samples)\n" +
		"\t  90.0th: 901        (401 samples)\n" +
		"\t* 99.0th: 991        (90 samples)\n" +
		"\t  99.9th: 1001       (9 samples)\n" +
		"\t  min=1, max=1000\n"
	if b.String() != want {
		t.Fatalf("got\n%s\nwant\n%s", b.String(), want)
	}
}
