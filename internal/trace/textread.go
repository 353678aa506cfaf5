package trace

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// TextReader reads events back from ftrace text as TextWriter writes it
// (and as the kernel prints it for these seven events with irq-info on and
// record-tgid off). Header and comment lines ('#') and blank lines are
// skipped. A last line without its newline is a line cut short (a trace
// stopped by a full disk or a killed writer): it is left out, even when
// what is left of it parses, since it may end inside a number, and Cut
// says which line it was.
type TextReader struct {
	r    *bufio.Reader
	line int
	cut  int
}

// NewTextReader reads ftrace text from r.
func NewTextReader(r io.Reader) *TextReader {
	return &TextReader{r: bufio.NewReaderSize(r, 64<<10)}
}

// Next returns the next event, or io.EOF after the last. Errors name the
// line ("line 14: ...").
func (t *TextReader) Next() (Event, error) {
	for {
		line, err := t.r.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			// A line longer than the buffer: gather it whole.
			long := append([]byte(nil), line...)
			for err == bufio.ErrBufferFull {
				line, err = t.r.ReadSlice('\n')
				long = append(long, line...)
			}
			line = long
		}
		if err != nil && err != io.EOF {
			return Event{}, err
		}
		if len(line) == 0 && err == io.EOF {
			return Event{}, io.EOF
		}
		t.line++
		if err == io.EOF {
			// No newline after it: the line was cut short, maybe
			// within the spaces that pad a comm.
			t.cut = t.line
			return Event{}, io.EOF
		}
		line = bytes.TrimSuffix(line, []byte{'\n'})
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		ev, perr := ParseLine(line)
		if perr != nil {
			return Event{}, fmt.Errorf("line %d: %w", t.line, perr)
		}
		return ev, nil
	}
}

// Cut is the number of the last line when it had no newline and was left
// out (after Next returned io.EOF), or 0.
func (t *TextReader) Cut() int { return t.cut }

// CutWarning is the one warning of a text trace whose last line, number
// line, had no newline and was left out: the file, the line and what was
// read instead, as every reader of text traces words it.
func CutWarning(file string, line int) string {
	return fmt.Sprintf("%s:%d: the trace ends inside this line (no newline after it: cut short, as a full disk leaves a trace); the line is left out, the %d lines before it are read", file, line, line-1)
}

// ReadText reads every event of an ftrace text; a last line without its
// newline is left out (TextReader.Cut).
func ReadText(r io.Reader) ([]Event, error) {
	tr := NewTextReader(r)
	var evs []Event
	for {
		ev, err := tr.Next()
		if err == io.EOF {
			return evs, nil
		}
		if err != nil {
			return evs, err
		}
		evs = append(evs, ev)
	}
}

var errShort = errors.New("line too short for an ftrace event")

// ParseLine parses one event line (without its newline). The comm of pid 0
// comes back as "swapper/N", the name the kernel gives CPU N's idle task,
// since ftrace prints it as <idle>; a comm printed as <...> comes back
// empty. Timestamps keep the text's microsecond precision.
func ParseLine(line []byte) (Event, error) {
	var ev Event
	if bytes.IndexByte(line, '\n') >= 0 {
		return ev, errors.New("newline inside a line")
	}
	// "%16s-%-7d ": comms are at most 15 bytes, so the dash is column 16.
	if len(line) < 17 || line[16] != '-' {
		return ev, errShort
	}
	commText := bytes.TrimLeft(line[:16], " ")
	rest := line[17:]
	i := 0
	for i < len(rest) && rest[i] != ' ' {
		i++
	}
	pid, err := parseInt32(rest[:i])
	if err != nil {
		return ev, fmt.Errorf("bad pid: %w", err)
	}
	rest = bytes.TrimLeft(rest[i:], " ")
	if len(rest) == 0 || rest[0] != '[' {
		return ev, errors.New("missing [cpu]")
	}
	end := bytes.IndexByte(rest, ']')
	if end < 0 {
		return ev, errors.New("missing ]")
	}
	cpu, err := parseInt32(rest[1:end])
	if err != nil || cpu < 0 {
		return ev, fmt.Errorf("bad cpu %q", rest[1:end])
	}
	rest = rest[end+1:]
	if len(rest) < 7 || rest[0] != ' ' {
		return ev, errShort
	}
	flags, pc, err := parseLatFlags(rest[1:6])
	if err != nil {
		return ev, err
	}
	rest = bytes.TrimLeft(rest[6:], " ")
	colon := bytes.Index(rest, []byte(": "))
	if colon < 0 {
		return ev, errors.New("missing timestamp")
	}
	ts, err := parseTimestamp(rest[:colon])
	if err != nil {
		return ev, err
	}
	rest = rest[colon+2:]
	colon = bytes.Index(rest, []byte(": "))
	if colon < 0 {
		return ev, errors.New("missing event name")
	}
	typ, ok := EventTypeByName(string(rest[:colon]))
	if !ok {
		return ev, fmt.Errorf("unknown event %q", rest[:colon])
	}
	ev.TS, ev.CPU, ev.Type, ev.Flags, ev.PreemptCount = ts, cpu, typ, flags, pc
	ev.Cur.Pid = pid
	switch {
	case pid == 0:
		ev.Cur.Comm = MakeComm("swapper/" + strconv.Itoa(int(cpu)))
	case string(commText) == "<...>":
	default:
		if err := setComm(&ev.Cur.Comm, commText); err != nil {
			return ev, err
		}
	}
	if err := parsePayload(&ev, rest[colon+2:]); err != nil {
		return ev, fmt.Errorf("%s: %w", typ, err)
	}
	return ev, nil
}

func parseInt32(b []byte) (int32, error) {
	v, err := strconv.ParseInt(string(b), 10, 32)
	return int32(v), err
}

func setComm(c *Comm, b []byte) error {
	if len(b) > TaskCommLen-1 {
		return fmt.Errorf("comm %q longer than 15 bytes", b)
	}
	if bytes.IndexByte(b, 0) >= 0 {
		return errors.New("NUL in comm")
	}
	*c = Comm{}
	copy(c[:], b)
	return nil
}

// parseLatFlags inverts appendLatFlags.
func parseLatFlags(f []byte) (flags, pc uint8, err error) {
	switch f[0] {
	case 'D':
		flags = FlagIrqsOff | FlagBHOff
	case 'd':
		flags = FlagIrqsOff
	case 'b':
		flags = FlagBHOff
	case '.':
	default:
		return 0, 0, fmt.Errorf("bad irqs-off flag %q", f[0])
	}
	switch f[1] {
	case 'B':
		flags |= FlagNeedResched | FlagNeedReschedLazy | FlagPreemptResched
	case 'N':
		flags |= FlagNeedResched | FlagPreemptResched
	case 'L':
		flags |= FlagNeedReschedLazy | FlagPreemptResched
	case 'b':
		flags |= FlagNeedResched | FlagNeedReschedLazy
	case 'n':
		flags |= FlagNeedResched
	case 'p':
		flags |= FlagPreemptResched
	case 'l':
		flags |= FlagNeedReschedLazy
	case '.':
	default:
		return 0, 0, fmt.Errorf("bad need-resched flag %q", f[1])
	}
	switch f[2] {
	case 'Z':
		flags |= FlagNMI | FlagHardirq
	case 'z':
		flags |= FlagNMI
	case 'H':
		flags |= FlagHardirq | FlagSoftirq
	case 'h':
		flags |= FlagHardirq
	case 's':
		flags |= FlagSoftirq
	case '.':
	default:
		return 0, 0, fmt.Errorf("bad hardirq/softirq flag %q", f[2])
	}
	d, err := parseDepth(f[3])
	if err != nil {
		return 0, 0, err
	}
	m, err := parseDepth(f[4])
	if err != nil {
		return 0, 0, err
	}
	return flags, d | m<<migrateDisableShift, nil
}

func parseDepth(c byte) (uint8, error) {
	switch {
	case c == '.':
		return 0, nil
	case c >= '1' && c <= '9':
		return c - '0', nil
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, nil
	}
	return 0, fmt.Errorf("bad depth flag %q", c)
}

// parseTimestamp reads "SECS.USECS" (six digits) into nanoseconds.
func parseTimestamp(b []byte) (uint64, error) {
	dot := bytes.IndexByte(b, '.')
	if dot < 1 || len(b)-dot-1 != 6 {
		return 0, fmt.Errorf("bad timestamp %q", b)
	}
	secs, err := strconv.ParseUint(string(b[:dot]), 10, 64)
	if err != nil || b[0] == '+' {
		return 0, fmt.Errorf("bad timestamp %q", b)
	}
	us, err := strconv.ParseUint(string(b[dot+1:]), 10, 64)
	if err != nil || b[dot+1] == '+' {
		return 0, fmt.Errorf("bad timestamp %q", b)
	}
	const maxSecs = (1<<64 - 1) / 1000000000
	if secs >= maxSecs {
		return 0, fmt.Errorf("timestamp %q out of range", b)
	}
	return (secs*1000000 + us) * 1000, nil
}

// payloadParser walks a TP_printk text field by field.
type payloadParser struct {
	b   []byte
	err error
}

// expect consumes a literal.
func (p *payloadParser) expect(lit string) {
	if p.err != nil {
		return
	}
	if !bytes.HasPrefix(p.b, []byte(lit)) {
		p.err = fmt.Errorf("expected %q", lit)
		return
	}
	p.b = p.b[len(lit):]
}

// until returns the text before the next occurrence of lit (consumed), or
// the rest of the text when lit is "".
func (p *payloadParser) until(lit string) []byte {
	if p.err != nil {
		return nil
	}
	if lit == "" {
		v := p.b
		p.b = nil
		return v
	}
	i := bytes.Index(p.b, []byte(lit))
	if i < 0 {
		p.err = fmt.Errorf("missing %q", lit)
		return nil
	}
	v := p.b[:i]
	p.b = p.b[i+len(lit):]
	return v
}

func (p *payloadParser) comm(c *Comm, next string) {
	v := p.until(next)
	if p.err == nil {
		p.err = setComm(c, v)
	}
}

func (p *payloadParser) int32(x *int32, next string) {
	v := p.until(next)
	if p.err == nil {
		var err error
		*x, err = parseInt32(v)
		if err != nil {
			p.err = err
		}
	}
}

func parsePayload(ev *Event, b []byte) error {
	p := &payloadParser{b: b}
	switch ev.Type {
	case SchedSwitch:
		p.expect("prev_comm=")
		p.comm(&ev.Task.Comm, " prev_pid=")
		p.int32(&ev.Task.Pid, " prev_prio=")
		p.int32(&ev.Task.Prio, " prev_state=")
		st := p.until(" ==> next_comm=")
		if p.err == nil {
			ev.PrevState, p.err = ParseTaskState(string(st))
		}
		p.comm(&ev.Next.Comm, " next_pid=")
		p.int32(&ev.Next.Pid, " next_prio=")
		p.int32(&ev.Next.Prio, "")
	case SchedWaking, SchedWakeup, SchedWakeupNew:
		p.expect("comm=")
		p.comm(&ev.Task.Comm, " pid=")
		p.int32(&ev.Task.Pid, " prio=")
		p.int32(&ev.Task.Prio, " target_cpu=")
		p.int32(&ev.TargetCPU, "")
	case SchedMigrateTask:
		p.expect("comm=")
		p.comm(&ev.Task.Comm, " pid=")
		p.int32(&ev.Task.Pid, " prio=")
		p.int32(&ev.Task.Prio, " orig_cpu=")
		p.int32(&ev.TargetCPU, " dest_cpu=")
		p.int32(&ev.DestCPU, "")
	case SchedProcessFork:
		p.expect("comm=")
		p.comm(&ev.Task.Comm, " pid=")
		p.int32(&ev.Task.Pid, " child_comm=")
		p.comm(&ev.Next.Comm, " child_pid=")
		p.int32(&ev.Next.Pid, "")
	case SchedProcessExit:
		p.expect("comm=")
		p.comm(&ev.Task.Comm, " pid=")
		p.int32(&ev.Task.Pid, " prio=")
		if p.err == nil && bytes.Contains(p.b, []byte(" group_dead=")) {
			p.int32(&ev.Task.Prio, " group_dead=")
			switch v := p.until(""); string(v) {
			case "true":
				ev.GroupDead = true
			case "false":
			default:
				if p.err == nil {
					p.err = fmt.Errorf("bad group_dead %q", v)
				}
			}
		} else {
			// Before v6.19 (no group_dead).
			p.int32(&ev.Task.Prio, "")
		}
	}
	return p.err
}
