package cli

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/schedlab/schedlab/internal/engine"
	"github.com/schedlab/schedlab/internal/observe"
	"github.com/schedlab/schedlab/internal/scenario"
	"github.com/schedlab/schedlab/internal/sched"
	"github.com/schedlab/schedlab/internal/schedstat"
	"github.com/schedlab/schedlab/internal/sim"
	"github.com/schedlab/schedlab/internal/trace"
)

// runObservers writes a run's trace and schedstat snapshots
// (schedlab run --trace, --schedstat, --schedstat-every).
type runObservers struct {
	traceFile    string
	filter       trace.Filter
	schedstatDir string

	// every is --schedstat-every: snapshot N is written at the end of the
	// first 1 ms slice of the run that reaches N × every of simulated
	// time from the workload's start (tick).
	every       engine.Time
	k           *sched.Kernel
	start, next engine.Time
	version     int
	err         error
}

func newRunObservers(traceFile string, events []string, from, to, schedstatDir, every string) (*runObservers, error) {
	o := &runObservers{traceFile: traceFile, schedstatDir: schedstatDir}
	if every != "" {
		if schedstatDir == "" {
			return nil, fmt.Errorf("--schedstat-every needs --schedstat DIR")
		}
		d, err := scenario.ParseDuration(every)
		if err != nil {
			return nil, fmt.Errorf("--schedstat-every: %v", err)
		}
		if d < engine.Millisecond {
			return nil, fmt.Errorf("--schedstat-every %s: the period must be at least 1ms (the run advances in 1 ms slices)", every)
		}
		o.every = d
	}
	if err := sim.CheckOutputFile("--trace", traceFile); err != nil {
		return nil, err
	}
	if err := sim.CheckOutputDir("--schedstat", schedstatDir); err != nil {
		return nil, err
	}
	if traceFile != "" {
		switch filepath.Ext(traceFile) {
		case ".txt", ".dat", ".json":
		default:
			return nil, fmt.Errorf("--trace %s: the file name must end in .txt (ftrace text), .dat (trace.dat) or .json (Chrome/Perfetto)", traceFile)
		}
		f, t, err := parseTraceWindow(from, to)
		if err != nil {
			return nil, err
		}
		filter, err := trace.ParseFilter(strings.Join(events, ","), f, t)
		if err != nil {
			return nil, err
		}
		o.filter = filter
	} else if len(events) > 0 || from != "" || to != "" {
		return nil, fmt.Errorf("--trace-events, --trace-from and --trace-to need --trace FILE")
	}
	return o, nil
}

// parseTraceWindow reads --trace-from and --trace-to, simulated times such
// as 10ms, into the trace clock's window [f, t) (t = 0: open at the end).
func parseTraceWindow(from, to string) (f, t uint64, err error) {
	var fd, td engine.Time
	if from != "" {
		if fd, err = scenario.ParseDuration(from); err != nil {
			return 0, 0, fmt.Errorf("--trace-from: %v", err)
		}
		f = uint64(fd) + sched.ClockBase
	}
	if to != "" {
		if td, err = scenario.ParseDuration(to); err != nil {
			return 0, 0, fmt.Errorf("--trace-to: %v", err)
		}
		if td <= fd {
			if from == "" {
				from = "0"
			}
			return 0, 0, fmt.Errorf("--trace-to %s: the window must end after it starts (--trace-from %s)", to, from)
		}
		t = uint64(td) + sched.ClockBase
	}
	return f, t, nil
}

// attach is the run's Attach hook.
func (o *runObservers) attach(k *sched.Kernel) (func() error, error) {
	var finishers []func() error
	if o.schedstatDir != "" {
		if err := os.MkdirAll(o.schedstatDir, 0o755); err != nil {
			return nil, fmt.Errorf("--schedstat %s: %v", o.schedstatDir, unwrapPathError(err))
		}
		version := observe.SchedstatVersion(k.S.Kernel)
		if err := writeSnapshot(filepath.Join(o.schedstatDir, SchedstatBefore), observe.Snapshot(k), version); err != nil {
			return nil, err
		}
		finishers = append(finishers, func() error {
			if o.err != nil {
				return o.err
			}
			return writeSnapshot(filepath.Join(o.schedstatDir, SchedstatAfter), observe.Snapshot(k), version)
		})
		if o.every > 0 {
			o.k, o.version, o.start, o.next = k, version, k.Now(), k.Now()+o.every
		}
	}
	if o.traceFile != "" {
		f, err := os.Create(o.traceFile)
		if err != nil {
			return nil, fmt.Errorf("--trace %s: %v", o.traceFile, unwrapPathError(err))
		}
		bw := bufio.NewWriterSize(f, 1<<20)
		dir := filepath.Dir(o.traceFile)
		var w trace.Writer
		switch filepath.Ext(o.traceFile) {
		case ".txt":
			w, err = trace.NewTextWriter(bw, trace.TextOptions{NrCPUs: k.NrCPUs(), Filter: o.filter, TempDir: dir})
		case ".dat":
			w, err = trace.NewDatWriter(bw, trace.DatOptions{NrCPUs: k.NrCPUs(), Filter: o.filter, TempDir: dir})
		case ".json":
			w = trace.NewChromeWriter(bw, trace.ChromeOptions{NrCPUs: k.NrCPUs(), Filter: o.filter})
		}
		if err != nil {
			f.Close()
			return nil, err
		}
		tr := observe.AttachTracer(k, w)
		finishers = append(finishers, func() error {
			err := tr.Close()
			if ferr := bw.Flush(); err == nil {
				err = ferr
			}
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return fmt.Errorf("--trace %s: %v", o.traceFile, err)
			}
			return nil
		})
	}
	return func() error {
		for _, f := range finishers {
			if err := f(); err != nil {
				return err
			}
		}
		return nil
	}, nil
}

// tick writes the periodic snapshot due by now (--schedstat-every); it
// runs after each slice of the run. The period is at least one slice, so
// no slice reaches two periods and every period gets its own snapshot,
// numbered by the periods reached. The first error stops the snapshots
// and is returned when the run finishes.
func (o *runObservers) tick() {
	if o.k == nil || o.err != nil || o.k.Now() < o.next {
		return
	}
	n := (o.k.Now() - o.start) / o.every
	o.next = o.start + (n+1)*o.every
	o.err = writeSnapshot(filepath.Join(o.schedstatDir, PeriodicSnapshot(int(n))), observe.Snapshot(o.k), o.version)
}

// PeriodicSnapshot is the file name of --schedstat-every's n-th snapshot.
func PeriodicSnapshot(n int) string { return fmt.Sprintf("schedstat-%04d.txt", n) }

func writeSnapshot(path string, s *schedstat.Snapshot, version int) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("%s: %v", path, unwrapPathError(err))
	}
	if err := schedstat.Format(f, s, version); err != nil {
		f.Close()
		return fmt.Errorf("%s: %v", path, err)
	}
	return f.Close()
}
