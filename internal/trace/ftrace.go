package trace

import (
	"bufio"
	"fmt"
	"io"
	"os"
)

const spaces = "                                                                "

// appendSpaces appends n spaces (n <= 0 appends nothing).
func appendSpaces(b []byte, n int) []byte {
	for n > len(spaces) {
		b = append(b, spaces...)
		n -= len(spaces)
	}
	if n > 0 {
		b = append(b, spaces[:n]...)
	}
	return b
}

// formatUint writes v's decimal digits at the end of buf and returns them.
func formatUint(buf *[20]byte, v uint64) []byte {
	i := len(buf)
	for v >= 10 {
		i--
		q := v / 10
		buf[i] = byte('0' + v - q*10)
		v = q
	}
	i--
	buf[i] = byte('0' + v)
	return buf[i:]
}

// appendInt is strconv.AppendInt(b, v, 10) for the small numbers traces hold.
func appendInt(b []byte, v int64) []byte {
	var tmp [20]byte
	if v < 0 {
		b = append(b, '-')
		return append(b, formatUint(&tmp, uint64(-v))...)
	}
	return append(b, formatUint(&tmp, uint64(v))...)
}

// appendIntRight is C's "%*d": v right-justified in width.
func appendIntRight(b []byte, v int64, width int) []byte {
	var tmp [24]byte
	s := appendInt(tmp[:0], v)
	b = appendSpaces(b, width-len(s))
	return append(b, s...)
}

// appendUintRight is C's "%*lu".
func appendUintRight(b []byte, v uint64, width int) []byte {
	var tmp [20]byte
	s := formatUint(&tmp, v)
	b = appendSpaces(b, width-len(s))
	return append(b, s...)
}

// appendIntLeft is C's "%-*d".
func appendIntLeft(b []byte, v int64, width int) []byte {
	n := len(b)
	b = appendInt(b, v)
	return appendSpaces(b, width-(len(b)-n))
}

// appendIntZero is C's "%0*d": zero-padded to width, the sign counting
// towards the width ("%03d" of -1 is "-01").
func appendIntZero(b []byte, v int64, width int) []byte {
	var tmp [20]byte
	neg := v < 0
	u := uint64(v)
	if neg {
		u = uint64(-v)
		width--
		b = append(b, '-')
	}
	s := formatUint(&tmp, u)
	for i := len(s); i < width; i++ {
		b = append(b, '0')
	}
	return append(b, s...)
}

// appendStrRight is C's "%*s".
func appendStrRight(b []byte, s []byte, width int) []byte {
	b = appendSpaces(b, width-len(s))
	return append(b, s...)
}

// appendLatFlags appends the five latency characters of
// trace_output.c:trace_print_lat_fmt (v6.19): irqs-off, need-resched,
// hardirq/softirq, preempt depth, migrate-disable depth.
func appendLatFlags(b []byte, flags, pc uint8) []byte {
	var irqsOff byte
	switch {
	case flags&FlagIrqsOff != 0 && flags&FlagBHOff != 0:
		irqsOff = 'D'
	case flags&FlagIrqsOff != 0:
		irqsOff = 'd'
	case flags&FlagBHOff != 0:
		irqsOff = 'b'
	default:
		irqsOff = '.'
	}
	var nr byte
	switch flags & (FlagNeedResched | FlagNeedReschedLazy | FlagPreemptResched) {
	case FlagNeedResched | FlagNeedReschedLazy | FlagPreemptResched:
		nr = 'B'
	case FlagNeedResched | FlagPreemptResched:
		nr = 'N'
	case FlagNeedReschedLazy | FlagPreemptResched:
		nr = 'L'
	case FlagNeedResched | FlagNeedReschedLazy:
		nr = 'b'
	case FlagNeedResched:
		nr = 'n'
	case FlagPreemptResched:
		nr = 'p'
	case FlagNeedReschedLazy:
		nr = 'l'
	default:
		nr = '.'
	}
	nmi := flags&FlagNMI != 0
	hard := flags&FlagHardirq != 0
	soft := flags&FlagSoftirq != 0
	var hs byte
	switch {
	case nmi && hard:
		hs = 'Z'
	case nmi:
		hs = 'z'
	case hard && soft:
		hs = 'H'
	case hard:
		hs = 'h'
	case soft:
		hs = 's'
	default:
		hs = '.'
	}
	b = append(b, irqsOff, nr, hs)
	const hex = "0123456789abcdef"
	if d := pc & preemptDepthMask; d != 0 {
		b = append(b, hex[d])
	} else {
		b = append(b, '.')
	}
	if m := pc >> migrateDisableShift; m != 0 {
		b = append(b, hex[m])
	} else {
		b = append(b, '.')
	}
	return b
}

// ns2usecs rounds to the nearest microsecond, as kernel/trace/trace.h does.
func ns2usecs(ns uint64) uint64 { return (ns + 500) / 1000 }

// appendTimestamp is trace_print_time for a nanosecond clock:
// " %5lu.%06lu" of the rounded microseconds.
func appendTimestamp(b []byte, ns uint64) []byte {
	us := ns2usecs(ns)
	b = append(b, ' ')
	b = appendUintRight(b, us/1000000, 5)
	b = append(b, '.')
	rem := us % 1000000
	return append(b, byte('0'+rem/100000), byte('0'+rem/10000%10), byte('0'+rem/1000%10),
		byte('0'+rem/100%10), byte('0'+rem/10%10), byte('0'+rem%10))
}

var (
	idleComm    = []byte("<idle>")
	unknownComm = []byte("<...>")
)

// appendContext appends trace_print_context's prefix:
// "%16s-%-7d [%03d] FLAGS %5lu.%06lu: ". Pid 0 prints as <idle> (ftrace's
// cmdline lookup), a task with no comm as <...>.
func appendContext(b []byte, ev *Event) []byte {
	comm := idleComm
	if ev.Cur.Pid != 0 {
		n := ev.Cur.Comm.Len()
		if n == 0 {
			comm = unknownComm
		} else {
			comm = ev.Cur.Comm[:n]
		}
	}
	b = appendStrRight(b, comm, 16)
	b = append(b, '-')
	b = appendIntLeft(b, int64(ev.Cur.Pid), 7)
	b = append(b, " ["...)
	b = appendIntZero(b, int64(ev.CPU), 3)
	b = append(b, "] "...)
	b = appendLatFlags(b, ev.Flags, ev.PreemptCount)
	b = appendTimestamp(b, ev.TS)
	return append(b, ": "...)
}

func appendComm(b []byte, c *Comm) []byte { return append(b, c[:c.Len()]...) }

// AppendPayload appends the event's TP_printk text (v6.19), without the
// event name.
func AppendPayload(b []byte, ev *Event) []byte {
	switch ev.Type {
	case SchedSwitch:
		b = append(b, "prev_comm="...)
		b = appendComm(b, &ev.Task.Comm)
		b = append(b, " prev_pid="...)
		b = appendInt(b, int64(ev.Task.Pid))
		b = append(b, " prev_prio="...)
		b = appendInt(b, int64(ev.Task.Prio))
		b = append(b, " prev_state="...)
		b = ev.PrevState.AppendText(b)
		b = append(b, " ==> next_comm="...)
		b = appendComm(b, &ev.Next.Comm)
		b = append(b, " next_pid="...)
		b = appendInt(b, int64(ev.Next.Pid))
		b = append(b, " next_prio="...)
		b = appendInt(b, int64(ev.Next.Prio))
	case SchedWaking, SchedWakeup, SchedWakeupNew:
		b = appendCommPidPrio(b, &ev.Task)
		b = append(b, " target_cpu="...)
		b = appendIntZero(b, int64(ev.TargetCPU), 3)
	case SchedMigrateTask:
		b = appendCommPidPrio(b, &ev.Task)
		b = append(b, " orig_cpu="...)
		b = appendInt(b, int64(ev.TargetCPU))
		b = append(b, " dest_cpu="...)
		b = appendInt(b, int64(ev.DestCPU))
	case SchedProcessFork:
		b = append(b, "comm="...)
		b = appendComm(b, &ev.Task.Comm)
		b = append(b, " pid="...)
		b = appendInt(b, int64(ev.Task.Pid))
		b = append(b, " child_comm="...)
		b = appendComm(b, &ev.Next.Comm)
		b = append(b, " child_pid="...)
		b = appendInt(b, int64(ev.Next.Pid))
	case SchedProcessExit:
		b = appendCommPidPrio(b, &ev.Task)
		if ev.GroupDead {
			b = append(b, " group_dead=true"...)
		} else {
			b = append(b, " group_dead=false"...)
		}
	}
	return b
}

func appendCommPidPrio(b []byte, t *Task) []byte {
	b = append(b, "comm="...)
	b = appendComm(b, &t.Comm)
	b = append(b, " pid="...)
	b = appendInt(b, int64(t.Pid))
	b = append(b, " prio="...)
	return appendInt(b, int64(t.Prio))
}

// AppendLine appends the event as one line of /sys/kernel/tracing/trace,
// newline included.
func AppendLine(b []byte, ev *Event) []byte {
	b = appendContext(b, ev)
	b = append(b, ev.Type.String()...)
	b = append(b, ": "...)
	b = AppendPayload(b, ev)
	return append(b, '\n')
}

// TextHeader is the block /sys/kernel/tracing/trace starts with for the nop
// tracer with the irq-info option on (trace.c:print_func_help_header_irq,
// v6.19): entries is the number of entries in the buffer, written the number
// ever written (equal unless the ring buffer overwrote some), cpus the number
// of online CPUs.
func TextHeader(entries, written uint64, cpus int) string {
	return "# tracer: nop\n" +
		"#\n" +
		fmt.Sprintf("# entries-in-buffer/entries-written: %d/%d   #P:%d\n", entries, written, cpus) +
		"#\n" +
		"#                                _-----=> irqs-off/BH-disabled\n" +
		"#                               / _----=> need-resched\n" +
		"#                              | / _---=> hardirq/softirq\n" +
		"#                              || / _--=> preempt-depth\n" +
		"#                              ||| / _-=> migrate-disable\n" +
		"#                              |||| /     delay\n" +
		"#           TASK-PID     CPU#  |||||  TIMESTAMP  FUNCTION\n" +
		"#              | |         |   |||||     |         |\n"
}

// TextOptions configures the ftrace text writer.
type TextOptions struct {
	// NrCPUs is the #P: of the header (online CPUs).
	NrCPUs int
	// Filter selects the events written.
	Filter Filter
	// TempDir is where the body is spooled until Close knows the entry
	// count; "" means os.TempDir().
	TempDir string
}

// TextWriter writes the ftrace text format.
type TextWriter struct {
	w      io.Writer
	opts   TextOptions
	spool  *os.File
	bw     *bufio.Writer
	buf    []byte
	n      uint64
	closed bool
}

// NewTextWriter returns a writer of /sys/kernel/tracing/trace text to w.
func NewTextWriter(w io.Writer, opts TextOptions) (*TextWriter, error) {
	f, err := os.CreateTemp(opts.TempDir, "schedlab-trace-*.txt")
	if err != nil {
		return nil, fmt.Errorf("trace: spool for ftrace text: %w", err)
	}
	return &TextWriter{w: w, opts: opts, spool: f, bw: bufio.NewWriterSize(f, 256<<10),
		buf: make([]byte, 0, 512)}, nil
}

// Write appends one line.
func (t *TextWriter) Write(ev Event) error {
	if !t.opts.Filter.Match(&ev) {
		return nil
	}
	t.buf = AppendLine(t.buf[:0], &ev)
	t.n++
	_, err := t.bw.Write(t.buf)
	return err
}

// Close writes the header and the spooled lines to the destination.
func (t *TextWriter) Close() error {
	if t.closed {
		return nil
	}
	t.closed = true
	defer os.Remove(t.spool.Name())
	defer t.spool.Close()
	if err := t.bw.Flush(); err != nil {
		return err
	}
	if _, err := io.WriteString(t.w, TextHeader(t.n, t.n, t.opts.NrCPUs)); err != nil {
		return err
	}
	if _, err := t.spool.Seek(0, io.SeekStart); err != nil {
		return err
	}
	_, err := io.Copy(t.w, t.spool)
	return err
}
