package engine

import "testing"

// BenchmarkEngine measures the bare event loop: 1024 periodic timers with
// different periods (a busy machine's ticks and run segments), reporting
// events per second of wall time.
func BenchmarkEngine(b *testing.B) {
	e := New(1)
	const n = 1024
	for i := 0; i < n; i++ {
		period := Time(1000 + 37*i)
		var t *Timer
		t = NewTimer("periodic", func() { e.After(t, period) })
		e.Schedule(t, Time(i))
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		e.Step()
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
}
