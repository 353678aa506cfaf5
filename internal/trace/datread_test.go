package trace

import (
	"encoding/binary"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/schedlab/schedlab/internal/testutil"
)

// realDat is the trace recorded on a real 4-CPU kernel (../shared/traces,
// README.md there); tests read it in place and skip where it is absent.
func realDat(t testing.TB) []byte {
	t.Helper()
	path := filepath.Join("..", "..", "..", "shared", "traces", "real-4cpu-sched.dat")
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		path = filepath.Join("..", "..", "..", "..", "shared", "traces", "real-4cpu-sched.dat")
		data, err = os.ReadFile(path)
	}
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI must have ../shared/traces: %v", err)
		}
		t.Skipf("no real trace: %v", err)
	}
	return data
}

// ReadDat reads back exactly what DatWriter wrote (v6), nanoseconds and
// all, across pages and TIME_EXTEND records.
func TestReadDatRoundTrip(t *testing.T) {
	evs := synthEvents(10000, 42, 4)
	data := datOf(t, evs, DatOptions{NrCPUs: 4})
	tr, err := ReadDat(data)
	if err != nil {
		t.Fatal(err)
	}
	if tr.Version != 6 || tr.NrCPUs != 4 {
		t.Errorf("version %d, %d CPUs", tr.Version, tr.NrCPUs)
	}
	if len(tr.Events) != len(evs) {
		t.Fatalf("read %d events, wrote %d", len(tr.Events), len(evs))
	}
	for i := range evs {
		if tr.Events[i] != evs[i] {
			t.Fatalf("event %d:\n got %+v\nwant %+v", i, tr.Events[i], evs[i])
		}
	}
}

// The real trace is trace-cmd 3.1's v7 with zstd-compressed sections and
// CPU data, from a 5.15 kernel. Its README gives the counts: 2,255
// sched_switch and 1,126 sched_waking, nothing else of sched; the other
// records (irq, softirq, kernel stacks) are skipped, not errors.
func TestReadDatReal(t *testing.T) {
	tr, err := ReadDat(realDat(t))
	if err != nil {
		t.Fatal(err)
	}
	if tr.Version != 7 || tr.NrCPUs != 4 {
		t.Errorf("version %d, %d CPUs; want 7, 4", tr.Version, tr.NrCPUs)
	}
	n := map[EventType]int{}
	for i, ev := range tr.Events {
		n[ev.Type]++
		if i > 0 && ev.TS < tr.Events[i-1].TS {
			t.Fatalf("event %d out of time order", i)
		}
		if ev.CPU < 0 || ev.CPU >= 4 {
			t.Fatalf("event %d on CPU %d", i, ev.CPU)
		}
	}
	if n[SchedSwitch] != 2255 || n[SchedWaking] != 1126 || len(tr.Events) != 2255+1126 {
		t.Errorf("events by type %v", n)
	}
	if tr.Skipped["ftrace:kernel_stack"] == 0 || tr.Skipped["irq:softirq_entry"] == 0 {
		t.Errorf("skipped %v", tr.Skipped)
	}
	// The first record, as trace-cmd report prints it.
	want := "       trace-cmd-86689   [003] d.... 11370.816169: sched_waking: comm=smbd-notifyd pid=2965 prio=120 target_cpu=000\n"
	if got := string(AppendLine(nil, &tr.Events[0])); got != want {
		t.Errorf("first event\n got %q\nwant %q", got, want)
	}
	// sched_switch pairs line up per CPU: each prev is the last next.
	cur := map[int32]int32{}
	bad := 0
	for _, ev := range tr.Events {
		if ev.Type != SchedSwitch {
			continue
		}
		if p, ok := cur[ev.CPU]; ok && p != ev.Task.Pid {
			bad++
		}
		cur[ev.CPU] = ev.Next.Pid
	}
	if bad != 0 {
		t.Errorf("%d sched_switch records whose prev is not the CPU's last next", bad)
	}
}

// Every truncation of a file and a set of corruptions give a DatError,
// never a panic.
func TestReadDatMalformed(t *testing.T) {
	data := datOf(t, synthEvents(300, 7, 2), DatOptions{NrCPUs: 2})
	for n := 0; n < len(data); n += 1 + n/50 {
		if _, err := ReadDat(data[:n]); err == nil {
			// A cut inside the zero padding of the last page is a whole
			// file minus nothing it needs only if n is a page boundary.
			if n%datPageSize != 0 {
				t.Fatalf("truncated to %d of %d bytes: no error", n, len(data))
			}
		} else {
			var de *DatError
			if !errors.As(err, &de) {
				t.Fatalf("truncated to %d: error %T %v", n, err, err)
			}
		}
	}
	le := binary.LittleEndian
	corrupt := func(name string, f func(b []byte), want string) {
		b := append([]byte(nil), data...)
		f(b)
		_, err := ReadDat(b)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", name, err, want)
		}
	}
	corrupt("magic", func(b []byte) { b[1] = 0 }, "byte 0: magic")
	corrupt("version", func(b []byte) { b[10] = '5' }, `byte 10: file format version "5"`)
	corrupt("endian", func(b []byte) { b[12] = 1 }, "byte 12: big-endian")
	corrupt("page size", func(b []byte) { le.PutUint32(b[14:], 1000) }, "byte 14: page size 1000")
	// The first page of CPU 0: a commit larger than the page.
	off := flyOffset(t, data)
	corrupt("commit", func(b []byte) { le.PutUint64(b[off+8:], 5000) }, "page commit 5000 exceeds")
	corrupt("event id", func(b []byte) { le.PutUint16(b[off+16+4:], 9999) }, "event id 9999, which no format file describes")
}

// flyOffset finds CPU 0's first page in a v6 file DatWriter wrote.
func flyOffset(t testing.TB, data []byte) int {
	i := strings.Index(string(data), "flyrecord\x00")
	if i < 0 {
		t.Fatal("no flyrecord")
	}
	return int(binary.LittleEndian.Uint64(data[i+10:]))
}

// FuzzReadDat: any input gives events or a DatError, never a panic, and
// the events are in time order.
func FuzzReadDat(f *testing.F) {
	f.Add(datOf(f, synthEvents(200, 3, 2), DatOptions{NrCPUs: 2}))
	f.Add([]byte("\x17\x08\x44tracing7\x00\x00\x08\x00\x10\x00\x00zstd\x001.4.8\x00\x00\x00\x00\x00\x00\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, data []byte) {
		tr, err := ReadDat(data)
		if err != nil {
			var de *DatError
			if !errors.As(err, &de) {
				t.Fatalf("error %T %v", err, err)
			}
			return
		}
		for i := 1; i < len(tr.Events); i++ {
			if tr.Events[i].TS < tr.Events[i-1].TS {
				t.Fatal("events out of order")
			}
		}
	})
}

// trace-cmd convert rewrites a v6 file as v7, uncompressed and with zstd:
// ReadDat reads the same events from all three.
func TestReadDatConverted(t *testing.T) {
	bin := testutil.NeedTool(t, "trace-cmd")
	evs := synthEvents(3000, 11, 4)
	dir := t.TempDir()
	v6 := filepath.Join(dir, "v6.dat")
	if err := os.WriteFile(v6, datOf(t, evs, DatOptions{NrCPUs: 4}), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, comp := range []string{"none", "zstd"} {
		out := filepath.Join(dir, "v7-"+comp+".dat")
		cmd := exec.Command(bin, "convert", "-i", v6, "-o", out, "--file-version", "7", "--compression", comp)
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("trace-cmd convert --compression %s: %v\n%s", comp, err, b)
		}
		data, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		tr, err := ReadDat(data)
		if err != nil {
			t.Fatalf("%s: %v", comp, err)
		}
		if tr.Version != 7 || tr.NrCPUs != 4 || len(tr.Events) != len(evs) {
			t.Fatalf("%s: version %d, %d CPUs, %d events of %d", comp, tr.Version, tr.NrCPUs, len(tr.Events), len(evs))
		}
		for i := range evs {
			if tr.Events[i] != evs[i] {
				t.Fatalf("%s: event %d:\n got %+v\nwant %+v", comp, i, tr.Events[i], evs[i])
			}
		}
	}
}
