package trace

import (
	"io"
	"testing"
)

// benchEvents is a long consistent stream; streamAt replays it as if it
// went on forever, shifting each lap later in time so that per-CPU time
// never goes backwards.
var benchEvents = synthEvents(100000, 1, 8)

func streamAt(i int) Event {
	n := len(benchEvents)
	ev := benchEvents[i%n]
	span := benchEvents[n-1].TS - benchEvents[0].TS + 1
	ev.TS += uint64(i/n) * span
	return ev
}

func benchWriter(b *testing.B, w Writer) {
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := w.Write(streamAt(i)); err != nil {
			b.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
}

// BenchmarkTextWriter measures the ftrace text writer, spooling included.
func BenchmarkTextWriter(b *testing.B) {
	w, err := NewTextWriter(io.Discard, TextOptions{NrCPUs: 8, TempDir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	benchWriter(b, w)
}

// BenchmarkDatWriter measures the trace.dat writer, spooling included.
func BenchmarkDatWriter(b *testing.B) {
	w, err := NewDatWriter(io.Discard, DatOptions{NrCPUs: 8, TempDir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	benchWriter(b, w)
}

// BenchmarkChromeWriter measures the JSON writer.
func BenchmarkChromeWriter(b *testing.B) {
	benchWriter(b, NewChromeWriter(io.Discard, ChromeOptions{NrCPUs: 8}))
}

// BenchmarkFilteredOut is the cost of an event a filter drops.
func BenchmarkFilteredOut(b *testing.B) {
	w, err := NewDatWriter(io.Discard, DatOptions{NrCPUs: 8, TempDir: b.TempDir(),
		Filter: Filter{Events: []EventType{SchedProcessExit}}})
	if err != nil {
		b.Fatal(err)
	}
	benchWriter(b, w)
}

// TestWriteAllocs: writing an event allocates nothing.
func TestWriteAllocs(t *testing.T) {
	text, err := NewTextWriter(io.Discard, TextOptions{NrCPUs: 8, TempDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	dat, err := NewDatWriter(io.Discard, DatOptions{NrCPUs: 8, TempDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	chrome := NewChromeWriter(io.Discard, ChromeOptions{NrCPUs: 8})
	for _, w := range []Writer{text, dat, chrome} {
		i := 0
		// Warm up buffers and the cmdline table.
		for ; i < 20000; i++ {
			w.Write(streamAt(i))
		}
		allocs := testing.AllocsPerRun(5000, func() {
			w.Write(streamAt(i))
			i++
		})
		if allocs > 0.01 {
			t.Errorf("%T: %.3f allocations per event", w, allocs)
		}
		w.Close()
	}
}

// BenchmarkAppendLine is the ftrace text formatting alone, without I/O.
func BenchmarkAppendLine(b *testing.B) {
	buf := make([]byte, 0, 512)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		ev := streamAt(i)
		buf = AppendLine(buf[:0], &ev)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
}
