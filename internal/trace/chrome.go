package trace

import (
	"bufio"
	"io"
	"strconv"
)

// ChromeOptions configures the Chrome/Perfetto JSON writer.
type ChromeOptions struct {
	// NrCPUs is the number of CPU tracks.
	NrCPUs int
	// Filter selects the events used.
	Filter Filter
	// CPUsPid is the pid of the synthetic "CPUs" process holding one thread
	// (track) per CPU; tid N is CPU N.
	CPUsPid int
}

// ChromeWriter writes the Trace Event Format (the JSON that chrome://tracing,
// Catapult and Perfetto's JSON importer read): one synthetic process "CPUs"
// with one track per CPU, an "X" (complete) slice for each interval a task
// ran on that CPU, delimited by the sched_switch that put it on and the one
// that took it off (idle intervals are not drawn), and an instant ("i",
// thread scope) for each sched_waking, sched_wakeup and sched_wakeup_new,
// on the track of the CPU the event fired on. Slices still open at Close end
// at the last timestamp seen, with end_state "unfinished". Other events are
// not drawn. Times are microseconds with nanosecond decimals; fields are
// always written in the same order.
type ChromeWriter struct {
	bw      *bufio.Writer
	opts    ChromeOptions
	running []chromeSlice
	lastTS  uint64
	buf     []byte
	n       int
	closed  bool
}

type chromeSlice struct {
	open  bool
	start uint64
	task  Task
}

// NewChromeWriter returns a JSON trace writer to w. It writes the metadata
// (process and thread names) at once.
func NewChromeWriter(w io.Writer, opts ChromeOptions) *ChromeWriter {
	c := &ChromeWriter{bw: bufio.NewWriterSize(w, 256<<10), opts: opts,
		running: make([]chromeSlice, opts.NrCPUs), buf: make([]byte, 0, 512)}
	c.bw.WriteString("{\"traceEvents\":[\n")
	b := c.buf[:0]
	b = c.meta(b, "process_name", 0, "name", "CPUs", -1)
	b = c.meta(b, "process_sort_index", 0, "sort_index", "", 0)
	for cpu := 0; cpu < opts.NrCPUs; cpu++ {
		b = c.meta(b, "thread_name", cpu, "name", "CPU "+strconv.Itoa(cpu), -1)
		b = c.meta(b, "thread_sort_index", cpu, "sort_index", "", cpu)
	}
	c.bw.Write(b)
	c.buf = b[:0]
	return c
}

// sep starts a new array element.
func (c *ChromeWriter) sep(b []byte) []byte {
	if c.n > 0 {
		b = append(b, ",\n"...)
	}
	c.n++
	return b
}

// meta appends an "M" event with one argument, a string (sval) or, when ival
// >= 0, an integer.
func (c *ChromeWriter) meta(b []byte, name string, tid int, key, sval string, ival int) []byte {
	b = c.sep(b)
	b = append(b, `{"name":"`...)
	b = append(b, name...)
	b = append(b, `","ph":"M","pid":`...)
	b = strconv.AppendInt(b, int64(c.opts.CPUsPid), 10)
	b = append(b, `,"tid":`...)
	b = strconv.AppendInt(b, int64(tid), 10)
	b = append(b, `,"args":{"`...)
	b = append(b, key...)
	b = append(b, `":`...)
	if ival >= 0 {
		b = strconv.AppendInt(b, int64(ival), 10)
	} else {
		b = appendJSONString(b, []byte(sval))
	}
	return append(b, "}}"...)
}

// appendMicros writes ns as microseconds with three decimals.
func appendMicros(b []byte, ns uint64) []byte {
	b = strconv.AppendUint(b, ns/1000, 10)
	b = append(b, '.')
	f := ns % 1000
	b = append(b, byte('0'+f/100), byte('0'+f/10%10), byte('0'+f%10))
	return b
}

// appendJSONString writes s as a JSON string, escaping what JSON requires.
func appendJSONString(b []byte, s []byte) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for _, ch := range s {
		switch {
		case ch == '"' || ch == '\\':
			b = append(b, '\\', ch)
		case ch < 0x20 || ch >= 0x7f:
			// Control bytes, and non-ASCII bytes (comms need not be UTF-8),
			// as \u00XX.
			b = append(b, '\\', 'u', '0', '0', hex[ch>>4], hex[ch&15])
		default:
			b = append(b, ch)
		}
	}
	return append(b, '"')
}

func (c *ChromeWriter) slice(b []byte, cpu int32, s *chromeSlice, end uint64, state []byte) []byte {
	comm := s.task.Comm[:s.task.Comm.Len()]
	b = c.sep(b)
	b = append(b, `{"name":`...)
	b = appendJSONString(b, comm)
	b = append(b, `,"cat":"sched","ph":"X","ts":`...)
	b = appendMicros(b, s.start)
	b = append(b, `,"dur":`...)
	b = appendMicros(b, end-s.start)
	b = append(b, `,"pid":`...)
	b = strconv.AppendInt(b, int64(c.opts.CPUsPid), 10)
	b = append(b, `,"tid":`...)
	b = strconv.AppendInt(b, int64(cpu), 10)
	b = append(b, `,"args":{"comm":`...)
	b = appendJSONString(b, comm)
	b = append(b, `,"pid":`...)
	b = strconv.AppendInt(b, int64(s.task.Pid), 10)
	b = append(b, `,"prio":`...)
	b = strconv.AppendInt(b, int64(s.task.Prio), 10)
	b = append(b, `,"end_state":"`...)
	b = append(b, state...)
	return append(b, `"}}`...)
}

// Write consumes one event.
func (c *ChromeWriter) Write(ev Event) error {
	if !c.opts.Filter.Match(&ev) {
		return nil
	}
	if ev.TS > c.lastTS {
		c.lastTS = ev.TS
	}
	b := c.buf[:0]
	cpu := ev.CPU
	switch ev.Type {
	case SchedSwitch:
		if cpu < 0 || int(cpu) >= len(c.running) {
			break
		}
		s := &c.running[cpu]
		if s.open && s.task.Pid == ev.Task.Pid {
			var st [24]byte
			b = c.slice(b, cpu, s, ev.TS, ev.PrevState.AppendText(st[:0]))
		}
		s.open = ev.Next.Pid != 0
		s.start = ev.TS
		s.task = ev.Next
	case SchedWaking, SchedWakeup, SchedWakeupNew:
		b = c.sep(b)
		b = append(b, `{"name":"`...)
		b = append(b, ev.Type.String()...)
		b = append(b, `","cat":"sched","ph":"i","s":"t","ts":`...)
		b = appendMicros(b, ev.TS)
		b = append(b, `,"pid":`...)
		b = strconv.AppendInt(b, int64(c.opts.CPUsPid), 10)
		b = append(b, `,"tid":`...)
		b = strconv.AppendInt(b, int64(cpu), 10)
		b = append(b, `,"args":{"comm":`...)
		b = appendJSONString(b, ev.Task.Comm[:ev.Task.Comm.Len()])
		b = append(b, `,"pid":`...)
		b = strconv.AppendInt(b, int64(ev.Task.Pid), 10)
		b = append(b, `,"prio":`...)
		b = strconv.AppendInt(b, int64(ev.Task.Prio), 10)
		b = append(b, `,"target_cpu":`...)
		b = strconv.AppendInt(b, int64(ev.TargetCPU), 10)
		b = append(b, "}}"...)
	}
	c.buf = b
	_, err := c.bw.Write(b)
	return err
}

// Close ends open slices and the JSON document.
func (c *ChromeWriter) Close() error {
	if c.closed {
		return nil
	}
	c.closed = true
	b := c.buf[:0]
	for cpu := range c.running {
		if s := &c.running[cpu]; s.open {
			b = c.slice(b, int32(cpu), s, c.lastTS, []byte("unfinished"))
			s.open = false
		}
	}
	b = append(b, "\n],\n\"displayTimeUnit\":\"ns\"}\n"...)
	if _, err := c.bw.Write(b); err != nil {
		return err
	}
	return c.bw.Flush()
}
