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
	c, err := onCPU2(0, func() (IOCost, error) { return benchIO(false, smallMsg, max(b.N, 800), false) })
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(c.Write, "ns/write")
	b.ReportMetric(c.Read, "ns/read")
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
