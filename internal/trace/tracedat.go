package trace

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
)

// This file writes trace-cmd's trace.dat, file format version 6
// (trace-cmd.dat.v6(5)), little-endian, for a 64-bit kernel with 4 KiB
// ring-buffer pages. The layout, in file order:
//
//	magic "\x17\x08\x44tracing", "6\0", endianness, long size, page size
//	"header_page\0" + u64 size + the ring buffer page header format
//	"header_event\0" + u64 size + the compressed event header format
//	u32 0                          (no ftrace-internal event formats)
//	u32 1, "sched\0", u32 n, n × (u64 size + events/sched/<event>/format)
//	u32 0                          (kallsyms)
//	u32 0                          (printk formats)
//	u64 size + saved cmdlines ("<pid> <comm>\n" each)
//	u32 number of CPUs
//	"options  \0", u16 0           (no options)
//	"flyrecord\0", per CPU u64 offset + u64 size
//	zero padding to a page boundary, then each CPU's ring-buffer pages.
//
// A ring-buffer page is u64 timestamp, u64 commit (bytes of data used),
// then records, each a u32 header {type_len:5, time_delta:27} and
// type_len × 4 bytes of payload. The first record's time_delta is relative
// to the page timestamp, the others to the previous record. A delta that
// does not fit 27 bits is carried by a TIME_EXTEND record (type_len 30,
// array[0] = delta >> 27) just before the event, as the kernel's
// rb_add_time_stamp does.

const (
	datPageSize      = 4096
	datPageHeader    = 16 // u64 time_stamp + local_t commit (64-bit kernel)
	datPageData      = datPageSize - datPageHeader
	rbTypeDataMax    = 28 // RINGBUF_TYPE_DATA_TYPE_LEN_MAX
	rbTypePadding    = 29
	rbTypeTimeExtend = 30
	rbTSShift        = 27
	rbTSMask         = 1<<rbTSShift - 1
)

// Event IDs written into the format files and records. A kernel assigns
// them at boot; these are schedlab's fixed choice.
var eventIDs = [numEventTypes]uint16{
	SchedProcessExit: 312,
	SchedProcessFork: 311,
	SchedMigrateTask: 314,
	SchedWakeupNew:   315,
	SchedSwitch:      316,
	SchedWakeup:      317,
	SchedWaking:      318,
}

// EventID is the ID schedlab's trace.dat gives t (the ID: line of its format).
func EventID(t EventType) uint16 { return eventIDs[t] }

// field is one line of an event format file.
type field struct {
	decl   string // "char prev_comm[16]", "__data_loc char[] comm"
	offset int
	size   int
	signed bool
}

type eventFormat struct {
	typ      EventType
	fields   []field
	printFmt string
}

var commonFields = []field{
	{"unsigned short common_type", 0, 2, false},
	{"unsigned char common_flags", 2, 1, false},
	{"unsigned char common_preempt_count", 3, 1, false},
	{"int common_pid", 4, 4, true},
}

// The v6.19 layouts of include/trace/events/sched.h on x86-64 (char is
// unsigned since v6.2, hence signed:0 for comm arrays). sched_migrate_task
// and sched_process_fork store comms as __string (dynamic, __data_loc).
var wakeupFields = []field{
	{"char comm[16]", 8, 16, false},
	{"pid_t pid", 24, 4, true},
	{"int prio", 28, 4, true},
	{"int target_cpu", 32, 4, true},
}

const wakeupPrintFmt = `"comm=%s pid=%d prio=%d target_cpu=%03d", REC->comm, REC->pid, REC->prio, REC->target_cpu`

const taskReportMask = "(0x00000000 | 0x00000001 | 0x00000002 | 0x00000004 | 0x00000008 | 0x00000010 | 0x00000020 | 0x00000040)"

var eventFormats = []eventFormat{
	{SchedProcessExit, []field{
		{"char comm[16]", 8, 16, false},
		{"pid_t pid", 24, 4, true},
		{"int prio", 28, 4, true},
		{"bool group_dead", 32, 1, false},
	}, `"comm=%s pid=%d prio=%d group_dead=%s", REC->comm, REC->pid, REC->prio, REC->group_dead ? "true" : "false"`},
	{SchedProcessFork, []field{
		{"__data_loc char[] parent_comm", 8, 4, false},
		{"pid_t parent_pid", 12, 4, true},
		{"__data_loc char[] child_comm", 16, 4, false},
		{"pid_t child_pid", 20, 4, true},
	}, `"comm=%s pid=%d child_comm=%s child_pid=%d", __get_str(parent_comm), REC->parent_pid, __get_str(child_comm), REC->child_pid`},
	{SchedMigrateTask, []field{
		{"__data_loc char[] comm", 8, 4, false},
		{"pid_t pid", 12, 4, true},
		{"int prio", 16, 4, true},
		{"int orig_cpu", 20, 4, true},
		{"int dest_cpu", 24, 4, true},
	}, `"comm=%s pid=%d prio=%d orig_cpu=%d dest_cpu=%d", __get_str(comm), REC->pid, REC->prio, REC->orig_cpu, REC->dest_cpu`},
	{SchedWakeupNew, wakeupFields, wakeupPrintFmt},
	{SchedSwitch, []field{
		{"char prev_comm[16]", 8, 16, false},
		{"pid_t prev_pid", 24, 4, true},
		{"int prev_prio", 28, 4, true},
		{"long prev_state", 32, 8, true},
		{"char next_comm[16]", 40, 16, false},
		{"pid_t next_pid", 56, 4, true},
		{"int next_prio", 60, 4, true},
	}, `"prev_comm=%s prev_pid=%d prev_prio=%d prev_state=%s%s ==> next_comm=%s next_pid=%d next_prio=%d", REC->prev_comm, REC->prev_pid, REC->prev_prio, (REC->prev_state & (((` + taskReportMask + ` + 1) << 1) - 1)) ? __print_flags(REC->prev_state & (((` + taskReportMask + ` + 1) << 1) - 1), "|", { 0x00000001, "S" }, { 0x00000002, "D" }, { 0x00000004, "T" }, { 0x00000008, "t" }, { 0x00000010, "X" }, { 0x00000020, "Z" }, { 0x00000040, "P" }, { 0x00000080, "I" }) : "R", REC->prev_state & ((` + taskReportMask + ` + 1) << 1) ? "+" : "", REC->next_comm, REC->next_pid, REC->next_prio`},
	{SchedWakeup, wakeupFields, wakeupPrintFmt},
	{SchedWaking, wakeupFields, wakeupPrintFmt},
}

func appendField(b []byte, f field) []byte {
	b = append(b, "\tfield:"...)
	b = append(b, f.decl...)
	b = append(b, ";\toffset:"...)
	b = strconv.AppendInt(b, int64(f.offset), 10)
	b = append(b, ";\tsize:"...)
	b = strconv.AppendInt(b, int64(f.size), 10)
	b = append(b, ";\tsigned:"...)
	if f.signed {
		b = append(b, '1')
	} else {
		b = append(b, '0')
	}
	return append(b, ";\n"...)
}

// FormatFile is the text of /sys/kernel/tracing/events/sched/<t>/format as
// schedlab writes it into trace.dat.
func FormatFile(t EventType) string {
	for _, e := range eventFormats {
		if e.typ == t {
			return string(e.appendText(nil))
		}
	}
	return ""
}

func (e *eventFormat) appendText(b []byte) []byte {
	b = append(b, "name: "...)
	b = append(b, e.typ.String()...)
	b = append(b, "\nID: "...)
	b = strconv.AppendInt(b, int64(eventIDs[e.typ]), 10)
	b = append(b, "\nformat:\n"...)
	for _, f := range commonFields {
		b = appendField(b, f)
	}
	b = append(b, '\n')
	for _, f := range e.fields {
		b = appendField(b, f)
	}
	b = append(b, "\nprint fmt: "...)
	b = append(b, e.printFmt...)
	return append(b, '\n')
}

// headerPage is events/header_page of a 64-bit kernel with 4 KiB pages.
const headerPage = "\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n" +
	"\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n" +
	"\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n" +
	"\tfield: char data;\toffset:16;\tsize:4080;\tsigned:0;\n"

// headerEvent is events/header_event (ring_buffer_print_entry_header).
const headerEvent = "# compressed entry header\n" +
	"\ttype_len    :    5 bits\n" +
	"\ttime_delta  :   27 bits\n" +
	"\tarray       :   32 bits\n" +
	"\n" +
	"\tpadding     : type == 29\n" +
	"\ttime_extend : type == 30\n" +
	"\ttime_stamp : type == 31\n" +
	"\tdata max type_len  == 28\n"

// DatOptions configures the trace.dat writer.
type DatOptions struct {
	// NrCPUs is the number of per-CPU buffers; events must have CPU below it.
	NrCPUs int
	// Filter selects the events written.
	Filter Filter
	// TempDir is where per-CPU pages are spooled until Close; "" means
	// os.TempDir().
	TempDir string
}

// cpuBuffer builds one CPU's ring-buffer pages.
type cpuBuffer struct {
	f       *os.File
	bw      *bufio.Writer
	page    [datPageSize]byte
	used    int // data bytes used on the current page
	open    bool
	lastTS  uint64
	started bool
	pages   int64
}

func (c *cpuBuffer) newPage(ts uint64) {
	c.page = [datPageSize]byte{}
	binary.LittleEndian.PutUint64(c.page[0:8], ts)
	c.used = 0
	c.open = true
	c.lastTS = ts
}

func (c *cpuBuffer) flushPage() error {
	if !c.open {
		return nil
	}
	binary.LittleEndian.PutUint64(c.page[8:16], uint64(c.used))
	c.open = false
	c.pages++
	_, err := c.bw.Write(c.page[:])
	return err
}

func (c *cpuBuffer) put32(v uint32) {
	binary.LittleEndian.PutUint32(c.page[datPageHeader+c.used:], v)
	c.used += 4
}

// add appends one record whose payload (a multiple of 4 bytes, at most 112)
// is p.
func (c *cpuBuffer) add(ts uint64, p []byte) error {
	if c.started && ts < c.lastTS {
		return fmt.Errorf("timestamp %d before the previous one (%d)", ts, c.lastTS)
	}
	c.started = true
	if !c.open {
		c.newPage(ts)
	}
	delta := ts - c.lastTS
	need := 4 + len(p)
	if delta > rbTSMask {
		need += 8
	}
	if c.used+need > datPageData {
		if err := c.flushPage(); err != nil {
			return err
		}
		c.newPage(ts)
		delta = 0
	}
	if delta > rbTSMask {
		c.put32(rbTypeTimeExtend | uint32(delta&rbTSMask)<<5)
		c.put32(uint32(delta >> rbTSShift))
		delta = 0
	}
	c.put32(uint32(len(p)/4) | uint32(delta)<<5)
	copy(c.page[datPageHeader+c.used:], p)
	c.used += len(p)
	c.lastTS = ts
	return nil
}

// DatWriter writes trace.dat (format version 6).
type DatWriter struct {
	w        io.Writer
	opts     DatOptions
	cpus     []cpuBuffer
	cmdlines map[int32]Comm
	rec      [128]byte
	closed   bool
}

// NewDatWriter returns a trace.dat writer to w.
func NewDatWriter(w io.Writer, opts DatOptions) (*DatWriter, error) {
	if opts.NrCPUs <= 0 {
		return nil, fmt.Errorf("trace.dat: NrCPUs must be positive, got %d", opts.NrCPUs)
	}
	d := &DatWriter{w: w, opts: opts, cpus: make([]cpuBuffer, opts.NrCPUs),
		cmdlines: make(map[int32]Comm)}
	for i := range d.cpus {
		f, err := os.CreateTemp(opts.TempDir, "schedlab-trace-cpu*.dat")
		if err != nil {
			d.cleanup()
			return nil, fmt.Errorf("trace.dat: spool: %w", err)
		}
		d.cpus[i].f = f
		d.cpus[i].bw = bufio.NewWriterSize(f, 64<<10)
	}
	return d, nil
}

func (d *DatWriter) cleanup() {
	for i := range d.cpus {
		if f := d.cpus[i].f; f != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}
}

func (d *DatWriter) remember(t *Task) {
	if t.Pid <= 0 || t.Comm.Len() == 0 {
		return
	}
	if old, ok := d.cmdlines[t.Pid]; !ok || old != t.Comm {
		d.cmdlines[t.Pid] = t.Comm
	}
}

// Write adds one record to its CPU's buffer.
func (d *DatWriter) Write(ev Event) error {
	if !d.opts.Filter.Match(&ev) {
		return nil
	}
	if ev.CPU < 0 || int(ev.CPU) >= len(d.cpus) {
		return fmt.Errorf("trace.dat: event on CPU %d, writer has %d CPUs", ev.CPU, len(d.cpus))
	}
	if !ev.Type.Valid() {
		return fmt.Errorf("trace.dat: invalid event type %d", ev.Type)
	}
	d.remember(&ev.Cur)
	n := encodeRecord(d.rec[:], &ev)
	if err := d.cpus[ev.CPU].add(ev.TS, d.rec[:n]); err != nil {
		return fmt.Errorf("trace.dat: CPU %d: %w", ev.CPU, err)
	}
	return nil
}

// encodeRecord writes the binary record of ev into b (at least 128 bytes,
// zeroed here) and returns its length, padded to 4 bytes.
func encodeRecord(b []byte, ev *Event) int {
	le := binary.LittleEndian
	clear(b[:128])
	le.PutUint16(b[0:], eventIDs[ev.Type])
	b[2] = ev.Flags
	b[3] = ev.PreemptCount
	le.PutUint32(b[4:], uint32(ev.Cur.Pid))
	n := 0
	switch ev.Type {
	case SchedSwitch:
		copy(b[8:24], ev.Task.Comm[:])
		le.PutUint32(b[24:], uint32(ev.Task.Pid))
		le.PutUint32(b[28:], uint32(ev.Task.Prio))
		le.PutUint64(b[32:], uint64(ev.PrevState))
		copy(b[40:56], ev.Next.Comm[:])
		le.PutUint32(b[56:], uint32(ev.Next.Pid))
		le.PutUint32(b[60:], uint32(ev.Next.Prio))
		n = 64
	case SchedWaking, SchedWakeup, SchedWakeupNew:
		copy(b[8:24], ev.Task.Comm[:])
		le.PutUint32(b[24:], uint32(ev.Task.Pid))
		le.PutUint32(b[28:], uint32(ev.Task.Prio))
		le.PutUint32(b[32:], uint32(ev.TargetCPU))
		n = 36
	case SchedMigrateTask:
		le.PutUint32(b[12:], uint32(ev.Task.Pid))
		le.PutUint32(b[16:], uint32(ev.Task.Prio))
		le.PutUint32(b[20:], uint32(ev.TargetCPU))
		le.PutUint32(b[24:], uint32(ev.DestCPU))
		n = putDataLoc(b, 8, 28, &ev.Task.Comm)
	case SchedProcessFork:
		le.PutUint32(b[12:], uint32(ev.Task.Pid))
		le.PutUint32(b[20:], uint32(ev.Next.Pid))
		n = putDataLoc(b, 8, 24, &ev.Task.Comm)
		n = putDataLoc(b, 16, n, &ev.Next.Comm)
	case SchedProcessExit:
		copy(b[8:24], ev.Task.Comm[:])
		le.PutUint32(b[24:], uint32(ev.Task.Pid))
		le.PutUint32(b[28:], uint32(ev.Task.Prio))
		if ev.GroupDead {
			b[32] = 1
		}
		n = 33
	}
	return (n + 3) &^ 3
}

// putDataLoc stores c as a __string at offset at, with its __data_loc word
// (length << 16 | offset) at loc, and returns the end offset.
func putDataLoc(b []byte, loc, at int, c *Comm) int {
	l := c.Len()
	copy(b[at:], c[:l])
	b[at+l] = 0
	binary.LittleEndian.PutUint32(b[loc:], uint32(l+1)<<16|uint32(at))
	return at + l + 1
}

// header builds everything before the flyrecord section.
func (d *DatWriter) header() []byte {
	le := binary.LittleEndian
	var b []byte
	b = append(b, 0x17, 0x08, 0x44)
	b = append(b, "tracing6\x00"...)
	b = append(b, 0) // little endian
	b = append(b, 8) // userspace long size
	b = le.AppendUint32(b, datPageSize)

	b = append(b, "header_page\x00"...)
	b = le.AppendUint64(b, uint64(len(headerPage)))
	b = append(b, headerPage...)
	b = append(b, "header_event\x00"...)
	b = le.AppendUint64(b, uint64(len(headerEvent)))
	b = append(b, headerEvent...)

	b = le.AppendUint32(b, 0) // ftrace event formats

	b = le.AppendUint32(b, 1)
	b = append(b, "sched\x00"...)
	b = le.AppendUint32(b, uint32(len(eventFormats)))
	for i := range eventFormats {
		text := eventFormats[i].appendText(nil)
		b = le.AppendUint64(b, uint64(len(text)))
		b = append(b, text...)
	}

	b = le.AppendUint32(b, 0) // kallsyms
	b = le.AppendUint32(b, 0) // printk formats

	pids := make([]int32, 0, len(d.cmdlines))
	for pid := range d.cmdlines {
		pids = append(pids, pid)
	}
	sort.Slice(pids, func(i, j int) bool { return pids[i] < pids[j] })
	var cmd bytes.Buffer
	for _, pid := range pids {
		c := d.cmdlines[pid]
		fmt.Fprintf(&cmd, "%d %s\n", pid, c.String())
	}
	b = le.AppendUint64(b, uint64(cmd.Len()))
	b = append(b, cmd.Bytes()...)

	b = le.AppendUint32(b, uint32(len(d.cpus)))
	b = append(b, "options  \x00"...)
	b = le.AppendUint16(b, 0)
	return b
}

// Close assembles the file: headers, the flyrecord table, then each CPU's
// pages.
func (d *DatWriter) Close() error {
	if d.closed {
		return nil
	}
	d.closed = true
	defer d.cleanup()
	for i := range d.cpus {
		if err := d.cpus[i].flushPage(); err != nil {
			return err
		}
		if err := d.cpus[i].bw.Flush(); err != nil {
			return err
		}
	}
	le := binary.LittleEndian
	b := d.header()
	b = append(b, "flyrecord\x00"...)
	start := len(b) + 16*len(d.cpus)
	start = (start + datPageSize - 1) &^ (datPageSize - 1)
	off := uint64(start)
	for i := range d.cpus {
		size := uint64(d.cpus[i].pages) * datPageSize
		b = le.AppendUint64(b, off)
		b = le.AppendUint64(b, size)
		off += size
	}
	for len(b) < start {
		b = append(b, 0)
	}
	if _, err := d.w.Write(b); err != nil {
		return err
	}
	for i := range d.cpus {
		f := d.cpus[i].f
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return err
		}
		if _, err := io.Copy(d.w, f); err != nil {
			return err
		}
	}
	return nil
}
