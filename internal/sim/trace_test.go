package sim

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/schedlab/schedlab/internal/observe"
	"github.com/schedlab/schedlab/internal/sched"
	"github.com/schedlab/schedlab/internal/trace"
)

// tracedHackbench runs a simulated hackbench on zen3-2s-nps1 with the
// tracer writing to w (nil: untraced) and returns the run's event count.
func tracedHackbench(t testing.TB, args []string, mk func(k *sched.Kernel) trace.Writer) *Result {
	cfg := Config{Machine: "zen3-2s-nps1", Seed: 1, Tool: "hackbench", Args: args}
	var opt Options
	if mk != nil {
		opt.Observers = []Observer{func(k *sched.Kernel) (func() error, error) {
			tr := observe.AttachTracer(k, mk(k))
			return tr.Close, nil
		}}
	}
	res, err := Run(cfg, opt)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestHackbenchTraceDatMatchesText traces a simulated hackbench into a
// trace.dat and an ftrace text file at once and checks that trace-cmd
// report prints the same events: the same count, and for a sample of lines
// the same timestamp, CPU, task, event and fields.
func TestHackbenchTraceDatMatchesText(t *testing.T) {
	dir := t.TempDir()
	datPath := filepath.Join(dir, "trace.dat")
	var text bytes.Buffer
	tracedHackbench(t, []string{"-p", "-T", "-l", "20", "-g", "2"}, func(k *sched.Kernel) trace.Writer {
		tw, err := trace.NewTextWriter(&text, trace.TextOptions{NrCPUs: k.NrCPUs(), TempDir: dir})
		if err != nil {
			t.Fatal(err)
		}
		f, err := os.Create(datPath)
		if err != nil {
			t.Fatal(err)
		}
		dw, err := trace.NewDatWriter(f, trace.DatOptions{NrCPUs: k.NrCPUs(), TempDir: dir})
		if err != nil {
			t.Fatal(err)
		}
		return observe.Multi{tw, dw, closer{f}}
	})
	evs, err := trace.ReadText(bytes.NewReader(text.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) < 1000 {
		t.Fatalf("only %d events", len(evs))
	}
	if _, err := exec.LookPath("trace-cmd"); err != nil {
		t.Skip("trace-cmd not installed")
	}
	cmd := exec.Command("trace-cmd", "report", "-i", datPath)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("trace-cmd report: %v\n%s", err, stderr.String())
	}
	if strings.TrimSpace(stderr.String()) != "" {
		t.Errorf("trace-cmd report warns: %s", stderr.String())
	}
	var lines []string
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if strings.Contains(sc.Text(), ": sched_") {
			lines = append(lines, sc.Text())
		}
	}
	if len(lines) != len(evs) {
		t.Fatalf("trace-cmd report shows %d events, the text trace %d", len(lines), len(evs))
	}
	// A sample: every 97th event. trace-cmd prints "comm-pid [cpu]
	// seconds: event: fields"; compare pid, CPU, microsecond timestamp
	// and event name with the text trace's.
	for i := 0; i < len(evs); i += 97 {
		e := evs[i]
		l := lines[i]
		ts := e.TS / 1000
		want := []string{
			fmt.Sprintf("-%d ", e.Cur.Pid),
			fmt.Sprintf("[%03d]", e.CPU),
			fmt.Sprintf("%d.%06d:", ts/1000000, ts%1000000),
			": " + e.Type.String() + ":",
		}
		for _, w := range want {
			if !strings.Contains(l, w) {
				t.Errorf("event %d: trace-cmd line %q lacks %q", i, l, w)
				break
			}
		}
	}
	// Every task here is nice 0: the sched plugin prints p->prio, 120, as
	// "comm:pid [120]" (twice on a switch), the print fmts as prio=120.
	for i, l := range lines {
		want := 1
		switch {
		case strings.Contains(l, ": sched_switch:"):
			want = 2
		case strings.Contains(l, ": sched_process_fork:"):
			want = 0 // no prio field
		}
		_, payload, _ := strings.Cut(l, ": sched_")
		if got := strings.Count(payload, " [120]") + strings.Count(payload, " prio=120 "); got != want {
			t.Fatalf("event %d: trace-cmd line %q shows prio 120 %d times, want %d", i, l, got, want)
		}
	}
}

type closer struct{ f *os.File }

func (c closer) Write(trace.Event) error { return nil }
func (c closer) Close() error            { return c.f.Close() }

// BenchmarkHackbenchTracing measures a 256-CPU hackbench with and without
// a trace.dat being written: the tracing overhead users feel (the issue's
// target is under 2× the untraced wall time).
func BenchmarkHackbenchTracing(b *testing.B) {
	args := []string{"-p", "-T", "-l", "500", "-g", "4"}
	b.Run("untraced", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			res := tracedHackbench(b, args, nil)
			b.ReportMetric(float64(res.Sim.Events), "events/op")
		}
	})
	b.Run("trace.dat", func(b *testing.B) {
		dir := b.TempDir()
		for i := 0; i < b.N; i++ {
			tracedHackbench(b, args, func(k *sched.Kernel) trace.Writer {
				dw, err := trace.NewDatWriter(io.Discard, trace.DatOptions{NrCPUs: k.NrCPUs(), TempDir: dir})
				if err != nil {
					b.Fatal(err)
				}
				return dw
			})
		}
	})
	b.Run("ftrace-text", func(b *testing.B) {
		dir := b.TempDir()
		for i := 0; i < b.N; i++ {
			tracedHackbench(b, args, func(k *sched.Kernel) trace.Writer {
				tw, err := trace.NewTextWriter(io.Discard, trace.TextOptions{NrCPUs: k.NrCPUs(), TempDir: dir})
				if err != nil {
					b.Fatal(err)
				}
				return tw
			})
		}
	})
}
