package trace

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"testing"
)

// readCut reads text with a TextReader: its events, the line Cut names and
// the error.
func readCut(text []byte) ([]Event, int, error) {
	tr := NewTextReader(bytes.NewReader(text))
	var evs []Event
	for {
		ev, err := tr.Next()
		if err == io.EOF {
			return evs, tr.Cut(), nil
		}
		if err != nil {
			return evs, tr.Cut(), err
		}
		evs = append(evs, ev)
	}
}

// A text cut at any byte reads as its complete lines: the events of the
// lines that end in a newline, the cut line left out even where what is
// left of it parses (a prio cut from 120 to 12, a timestamp missing its
// last digits), and Cut names that line; a cut right after a newline cuts
// no line.
func TestTextReaderCut(t *testing.T) {
	evs := synthEvents(200, 3, 4)
	text := textOf(t, evs, TextOptions{NrCPUs: 4})
	full, cut, err := readCut(text)
	if err != nil || cut != 0 || len(full) != len(evs) {
		t.Fatalf("whole text: %d events of %d, cut %d, %v", len(full), len(evs), cut, err)
	}
	header := bytes.Count(text, []byte("\n")) - len(evs) // comment lines before the events
	parsedWhole := 0
	for n := len(text) - 1; n > len(text)-2000; n-- {
		part := text[:n]
		lines := bytes.Count(part, []byte("\n")) // complete lines
		want := max(lines-header, 0)
		got, cut, err := readCut(part)
		if err != nil {
			t.Fatalf("cut at byte %d: %v", n, err)
		}
		if len(got) != want {
			t.Fatalf("cut at byte %d: %d events, want the %d of the complete lines", n, len(got), want)
		}
		for i := range got {
			if got[i] != full[i] {
				t.Fatalf("cut at byte %d: event %d differs", n, i)
			}
		}
		wantCut := lines + 1
		if part[n-1] == '\n' {
			wantCut = 0
		}
		if cut != wantCut {
			t.Fatalf("cut at byte %d: Cut %d, want %d", n, cut, wantCut)
		}
		if wantCut != 0 {
			last := part[bytes.LastIndexByte(part, '\n')+1:]
			if _, err := ParseLine(last); err == nil {
				parsedWhole++
			}
		}
	}
	// The rule is tested where it matters: cut lines that would parse.
	if parsedWhole == 0 {
		t.Error("no cut line parsed: the test does not cover a cut inside the last number")
	}
	if w := CutWarning("t.txt", 12); !strings.HasPrefix(w, "t.txt:12: ") || !strings.Contains(w, "the 11 lines before it") || strings.Contains(w, "\n") {
		t.Errorf("warning %q", w)
	}
	// A malformed line before the cut is still an error, at its line.
	bad := append(append([]byte(nil), text[:bytes.Index(text, []byte("sched_"))]...), "nope\n  x"...)
	if _, _, err := readCut(bad); err == nil || !strings.HasPrefix(err.Error(), fmt.Sprintf("line %d: ", header+1)) {
		t.Errorf("malformed line before a cut: %v", err)
	}
}

// FuzzTextReader: any text reads as the text up to its last newline does,
// events and error alike, and Cut names the line after it when anything
// follows that newline.
func FuzzTextReader(f *testing.F) {
	f.Add([]byte("          <idle>-0       [002] d..2.     7.157935: sched_waking: comm=a pid=1 prio=120 target_cpu=001\n          <idle>-0       [002] d..2.     7.157935: sched_waking: comm=a pid=1 prio=12"))
	f.Add([]byte("# tracer: nop\n#\n"))
	f.Add([]byte("   \n  "))
	f.Fuzz(func(t *testing.T, data []byte) {
		evs, cut, err := readCut(data)
		i := bytes.LastIndexByte(data, '\n')
		whole, wcut, werr := readCut(data[:i+1])
		if wcut != 0 {
			t.Fatalf("text ending in a newline cut at line %d", wcut)
		}
		if fmt.Sprint(err) != fmt.Sprint(werr) || fmt.Sprint(evs) != fmt.Sprint(whole) {
			t.Fatalf("%q: %v %v, up to its last newline %v %v", data, len(evs), err, len(whole), werr)
		}
		wantCut := 0
		if err == nil && i+1 < len(data) {
			wantCut = bytes.Count(data, []byte("\n")) + 1
		}
		if cut != wantCut {
			t.Fatalf("%q: Cut %d, want %d", data, cut, wantCut)
		}
	})
}
