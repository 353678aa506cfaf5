package replay_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/schedlab/schedlab/internal/replay"
	"github.com/schedlab/schedlab/internal/trace"
)

// The real trace as ftrace text (as `cat /sys/kernel/tracing/trace_pipe >
// FILE` leaves it), cut at several bytes as a full disk cuts it: the replay
// reads the complete lines, exactly their events, and leaves out the cut
// line even where what is left of it parses (next_prio=12 of 120, the whole
// line but its newline), with one warning naming the file and the cut
// line's number; the reconstruction and the replay are those of the
// complete part. A cut right after a newline cuts no line and warns of
// nothing.
func TestCutTextTrace(t *testing.T) {
	in, err := replay.Read(realTracePath(t))
	if err != nil {
		t.Fatal(err)
	}
	var text []byte
	for i := range in.Events {
		text = trace.AppendLine(text, &in.Events[i])
	}
	full, err := replay.Parse("full.txt", text)
	if err != nil || len(full) != len(in.Events) {
		t.Fatalf("the text reads back %d events of %d: %v", len(full), len(in.Events), err)
	}
	// lineStart is the byte where line n (from 1) begins.
	lineStart := func(n int) int {
		at := 0
		for i := 1; i < n; i++ {
			at += bytes.IndexByte(text[at:], '\n') + 1
		}
		return at
	}
	l1000 := lineStart(1000)
	line1000 := text[l1000 : l1000+bytes.IndexByte(text[l1000:], '\n')]
	prio := bytes.LastIndex(line1000, []byte("=120"))
	if prio < 0 {
		t.Fatalf("line 1000 does not end in a prio of 120: %q", line1000)
	}
	cuts := []struct {
		name  string
		at    int
		parse bool // what is left of the cut line parses
	}{
		{"in the timestamp", l1000 + bytes.Index(line1000, []byte(": ")) - 3, false},
		{"in the last number", l1000 + prio + 3, true},
		{"before the newline", l1000 + len(line1000), true},
		{"in the comm's padding", l1000 + 2, false},
		{"after a newline", l1000, false},
		{"in the last line", len(text) - 5, false},
	}
	dir := t.TempDir()
	for i, c := range cuts {
		part := text[:c.at]
		lines := bytes.Count(part, []byte("\n")) // complete lines, one event each
		path := filepath.Join(dir, fmt.Sprintf("cut%d.txt", i))
		if err := os.WriteFile(path, part, 0o644); err != nil {
			t.Fatal(err)
		}
		last := part[bytes.LastIndexByte(part, '\n')+1:]
		if _, err := trace.ParseLine(last); (err == nil) != c.parse {
			t.Fatalf("%s: the cut line %q parses: %v, want %v", c.name, last, err == nil, c.parse)
		}
		got, err := replay.Read(path)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if len(got.Events) != lines || fmt.Sprint(got.Events) != fmt.Sprint(full[:lines]) {
			t.Errorf("%s: %d events, want the %d of the complete lines", c.name, len(got.Events), lines)
		}
		var want []string
		if c.at != l1000 {
			want = []string{fmt.Sprintf("%s:%d: the trace ends inside this line (no newline after it: cut short, as a full disk leaves a trace); the line is left out, the %d lines before it are read", path, lines+1, lines)}
		}
		if fmt.Sprint(got.Warnings) != fmt.Sprint(want) {
			t.Errorf("%s: warnings %q, want %q", c.name, got.Warnings, want)
		}
		if i > 2 && c.at != l1000 {
			continue // the replay of three cuts is enough
		}
		b, res := bench(t, "hikey", "--pids", path)
		if b.Progress() != 1 {
			t.Errorf("%s: replay ended at progress %v", c.name, b.Progress())
		}
		tr, err := replay.Reconstruct(full[:lines], replay.Options{NrCPUs: in.NrCPUs})
		if err != nil {
			t.Fatal(err)
		}
		if b.Trace().Stats != tr.Stats {
			t.Errorf("%s: reconstructed %s\nwant the complete part's %s", c.name, b.Trace().Stats.Summary(), tr.Stats.Summary())
		}
		if fmt.Sprint(res.Warnings) != fmt.Sprint(want) || !strings.HasPrefix(res.Output, "replay of "+path+": "+tr.Stats.Summary()+"\n") {
			t.Errorf("%s: warnings %q, output %.200q", c.name, res.Warnings, res.Output)
		}
	}
	// A malformed line before the cut is still an error, at its line.
	bad := append(append([]byte(nil), text[:l1000]...), "garbage\n  x"...)
	if _, err := replay.Parse("bad.txt", bad); err == nil || !strings.HasPrefix(err.Error(), "bad.txt:1000: ") {
		t.Errorf("a malformed line before the cut: %v", err)
	}
	// A trace that is only a cut line has nothing to replay.
	if _, err := replay.Parse("one.txt", text[:100]); err == nil || !strings.HasPrefix(err.Error(), "one.txt:1: no sched events before this line, which is cut short") {
		t.Errorf("a single cut line: %v", err)
	}
}
