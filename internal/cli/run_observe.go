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
// (schedlab run --trace, --schedstat).
type runObservers struct {
	traceFile    string
	filter       trace.Filter
	schedstatDir string
}

func newRunObservers(traceFile string, events []string, from, to, schedstatDir string) (*runObservers, error) {
	o := &runObservers{traceFile: traceFile, schedstatDir: schedstatDir}
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
			return writeSnapshot(filepath.Join(o.schedstatDir, SchedstatAfter), observe.Snapshot(k), version)
		})
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
