//go:build linux

package calibrate

import (
	"testing"
)

// The calibration's microbenchmarks, as Go benchmarks (go test -bench .
// ./internal/costmodel): timing code runs here and in schedlab calibrate,
// never in the unit tests.

func BenchmarkGetppid(b *testing.B) {
	ns, err := onCPU(0, func() (float64, error) { return benchSyscall(b.N), nil })
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(ns, "ns/call")
}

func BenchmarkPipeWriteRead100B(b *testing.B) {
	c, err := onCPU2(0, func() (IOCost, error) { return benchIO(false, smallMsg, max(b.N, 800)) })
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
