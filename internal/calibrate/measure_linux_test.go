//go:build linux

package calibrate

import (
	"os"
	"testing"
)

// The calibration's microbenchmarks, as Go benchmarks (go test -bench .
// ./internal/calibrate): timings are taken here and in schedlab calibrate;
// the unit tests check only that a benchmark runs.

func BenchmarkGetppid(b *testing.B) {
	ns, err := onCPU(0, func() (float64, error) { return benchSyscall(b.N), nil })
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(ns, "ns/call")
}

func BenchmarkPipeWriteRead100B(b *testing.B) {
	c, err := onCPU2(0, func() (IOCost, error) { return benchIO(ioPipe, smallMsg, max(b.N, 800), false) })
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(c.Write, "ns/write")
	b.ReportMetric(c.Read, "ns/read")
}

func BenchmarkTCPWriteRead100B(b *testing.B) {
	c, err := onCPU2(0, func() (IOCost, error) { return benchIO(ioTCP, smallMsg, max(b.N, 20), false) })
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(c.Write, "ns/write")
	b.ReportMetric(c.Read, "ns/read")
}

// The loopback TCP loop connects, moves whole 1000-byte messages in both
// of its batches' directions and times both calls.
func TestTCPLoop(t *testing.T) {
	c, err := onCPU2(0, func() (IOCost, error) { return benchIO(ioTCP, largeMsg, 40, false) })
	if err != nil {
		t.Fatal(err)
	}
	if c.Write <= 0 || c.Read <= 0 {
		t.Errorf("write %v ns, read %v ns: want both positive", c.Write, c.Read)
	}
}

func BenchmarkPipePingPongSameCPU(b *testing.B) {
	rtt, err := pingPong(0, 0, b.N)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(rtt, "ns/roundtrip")
}

// The rings' processes are new instances of the test binary.
func TestMain(m *testing.M) {
	MaybeRunPeer()
	os.Exit(m.Run())
}

// Both rings pass their tokens all the way round and end (the process
// ring's members are new instances of this test binary, which TestMain
// turns into ring members); what a hop takes is the benchmarks' business.
func TestRings(t *testing.T) {
	for _, procs := range []bool{false, true} {
		hop, err := ring(0, 3, 50, procs)
		if err != nil || hop <= 0 {
			t.Errorf("ring of processes %v: hop %v, %v", procs, hop, err)
		}
	}
}

func BenchmarkRingThreads(b *testing.B) {
	hop, err := ring(0, RingSize, max(b.N, 10), false)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(hop, "ns/hop")
}

func BenchmarkRingProcesses(b *testing.B) {
	hop, err := ring(0, RingSize, max(b.N, 10), true)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(hop, "ns/hop")
}

// pipePrivateShared runs both loops in interleaved rounds and returns each
// one's medians: every figure is a measured positive time per call.
func TestPipePrivateShared(t *testing.T) {
	priv, shared, err := pipePrivateShared(smallMsg, 5*800)
	if err != nil {
		t.Fatal(err)
	}
	for name, v := range map[string]float64{"private write": priv.Write, "private read": priv.Read, "shared write": shared.Write, "shared read": shared.Read} {
		if !(v > 0 && v < 1e7) {
			t.Errorf("%s = %v ns, want a time per call", name, v)
		}
	}
}

func TestMedian5(t *testing.T) {
	for _, tc := range []struct {
		in   []float64
		want float64
	}{
		{[]float64{5, 1, 4, 2, 3}, 3},
		{[]float64{9, 9, 1, 1, 2}, 2},
		{[]float64{7, 7, 7, 7, 7}, 7},
	} {
		if got := median5(append([]float64(nil), tc.in...)); got != tc.want {
			t.Errorf("median5(%v) = %v, want %v", tc.in, got, tc.want)
		}
	}
}
