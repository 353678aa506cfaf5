package trace

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/klauspost/compress/zstd"
)

// This file reads trace.dat files as trace-cmd records them: file format
// version 6 (trace-cmd.dat.v6(5), what DatWriter writes and what trace-cmd
// before 3.0 records) and version 7 (trace-cmd.dat.v7(5): sections found
// through options, optionally zstd-compressed, the default of trace-cmd 3.x),
// little-endian. It decodes the seven sched events of event.go, using the
// field offsets of the file's own format files, so layouts of older kernels
// (a "success" field, __data_loc comms) read too, and power:cpu_frequency
// for the CPUs' frequencies; records of every other event (irq, softirq,
// kernel stacks, ...) are counted and skipped.
//
// Not read: big-endian files, the latency ("latency  ") data of v6, zlib
// compression, trace instances other than the top one, and the clock
// offsets of the OFFSET/TSC2NSEC options (timestamps are the ring buffer's
// own).

// DatError is a malformed trace.dat: the byte offset in the file where the
// problem is (for data inside a compressed section, the section's or chunk's
// offset) and what is wrong.
type DatError struct {
	Offset int64
	Msg    string
}

func (e *DatError) Error() string { return fmt.Sprintf("byte %d: %s", e.Offset, e.Msg) }

// DatTrace is what ReadDat found in a file.
type DatTrace struct {
	// Version is the file format version, 6 or 7.
	Version int
	// NrCPUs is the number of per-CPU buffers.
	NrCPUs int
	// Events are the sched events in time order (ties by CPU, then by
	// position in the CPU's buffer).
	Events []Event
	// Frequencies are the power:cpu_frequency records, in time order.
	Frequencies []Frequency
	// Skipped counts the records of other events, by event name.
	Skipped map[string]uint64
}

// Frequency is one power:cpu_frequency record: from TS on, CPU runs at
// KHz (the event's state field).
type Frequency struct {
	TS  uint64
	CPU int32
	KHz uint32
}

// maxDecompressed bounds one decompressed section or chunk, so that a
// corrupt size field cannot make the reader allocate without limit.
const maxDecompressed = 1 << 30

// datFormat is one event's format file, as far as the decoder needs it.
type datFormat struct {
	system, name string
	fields       map[string]datField
	typ          EventType // 0: not one of ours
}

type datField struct {
	offset, size int
	dataLoc      bool
}

type datParser struct {
	data      []byte
	version   int
	pageSize  int
	compress  string
	commitOff int
	commitLen int
	dataOff   int
	formats   map[uint16]*datFormat
	cmdlines  map[int32]Comm
	pidField  datField
	dec       *zstd.Decoder
}

// bail aborts parsing with a DatError; ReadDat recovers it.
type bail struct{ err *DatError }

func (p *datParser) fail(off int64, format string, args ...any) {
	panic(bail{&DatError{Offset: off, Msg: fmt.Sprintf(format, args...)}})
}

// cursor reads a byte slice; base is the file offset errors report.
type cursor struct {
	p    *datParser
	b    []byte
	pos  int
	base int64 // file offset of b[0], or of the compressed section
	flat bool  // b is the file itself: offsets are base+pos
	what string
}

func (c *cursor) off() int64 {
	if c.flat {
		return c.base + int64(c.pos)
	}
	return c.base
}

func (c *cursor) failf(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if !c.flat {
		msg = fmt.Sprintf("%s (at byte %d of the decompressed %s)", msg, c.pos, c.what)
	}
	c.p.fail(c.off(), "%s", msg)
}

func (c *cursor) need(n int, what string) []byte {
	if n < 0 || n > len(c.b)-c.pos {
		c.failf("truncated: %s needs %d bytes, %d left", what, n, len(c.b)-c.pos)
	}
	b := c.b[c.pos : c.pos+n]
	c.pos += n
	return b
}

func (c *cursor) u16(what string) uint16 { return binary.LittleEndian.Uint16(c.need(2, what)) }
func (c *cursor) u32(what string) uint32 { return binary.LittleEndian.Uint32(c.need(4, what)) }
func (c *cursor) u64(what string) uint64 { return binary.LittleEndian.Uint64(c.need(8, what)) }

func (c *cursor) lit(s, what string) {
	start := c.pos
	if !bytes.Equal(c.need(len(s), what), []byte(s)) {
		c.pos = start
		c.failf("%s: want %q", what, strings.TrimRight(s, "\x00"))
	}
}

func (c *cursor) cstr(what string) string {
	i := bytes.IndexByte(c.b[c.pos:], 0)
	if i < 0 {
		c.failf("truncated: %s has no terminating NUL", what)
	}
	s := string(c.b[c.pos : c.pos+i])
	c.pos += i + 1
	return s
}

// sized reads a size of width 4 or 8 bytes and that many bytes.
func (c *cursor) sized(width int, what string) []byte {
	var n uint64
	if width == 4 {
		n = uint64(c.u32(what + " size"))
	} else {
		n = c.u64(what + " size")
	}
	if n > uint64(len(c.b)-c.pos) {
		c.failf("truncated: %s of %d bytes, %d left", what, n, len(c.b)-c.pos)
	}
	return c.need(int(n), what)
}

// ReadDat parses a trace.dat held in data. Errors are *DatError.
func ReadDat(data []byte) (tr *DatTrace, err error) {
	p := &datParser{data: data, formats: map[uint16]*datFormat{}, cmdlines: map[int32]Comm{},
		commitOff: 8, commitLen: 8, dataOff: 16}
	defer func() {
		if p.dec != nil {
			p.dec.Close()
		}
		if r := recover(); r != nil {
			b, ok := r.(bail)
			if !ok {
				panic(r)
			}
			tr, err = nil, b.err
		}
	}()
	return p.parse(), nil
}

func (p *datParser) file(off int64) *cursor {
	c := &cursor{p: p, b: p.data, flat: true}
	if off < 0 || off > int64(len(p.data)) {
		p.fail(off, "offset %d is outside the %d-byte file", off, len(p.data))
	}
	c.pos = int(off)
	return c
}

func (p *datParser) parse() *DatTrace {
	c := p.file(0)
	c.lit("\x17\x08\x44tracing", "magic")
	v := c.cstr("version")
	switch v {
	case "6":
		p.version = 6
	case "7":
		p.version = 7
	default:
		c.pos -= len(v) + 1
		c.failf("file format version %q: schedlab reads versions 6 and 7", v)
	}
	if e := c.need(1, "endianness")[0]; e != 0 {
		c.pos--
		c.failf("big-endian trace.dat is not supported")
	}
	if l := c.need(1, "long size")[0]; l != 4 && l != 8 {
		c.pos--
		c.failf("long size %d: want 4 or 8", l)
	}
	p.pageSize = int(c.u32("page size"))
	if p.pageSize < 64 || p.pageSize > 1<<20 || p.pageSize&(p.pageSize-1) != 0 {
		c.pos -= 4
		c.failf("page size %d is not a power of two between 64 and 1 MiB", p.pageSize)
	}
	tr := &DatTrace{Version: p.version, Skipped: map[string]uint64{}}
	var cpus []cpuData
	if p.version == 6 {
		cpus = p.parseV6(c)
	} else {
		cpus = p.parseV7(c)
	}
	tr.NrCPUs = len(cpus)
	for _, cd := range cpus {
		p.readCPU(tr, cd)
	}
	sort.SliceStable(tr.Events, func(i, j int) bool {
		a, b := &tr.Events[i], &tr.Events[j]
		if a.TS != b.TS {
			return a.TS < b.TS
		}
		return a.CPU < b.CPU
	})
	sort.SliceStable(tr.Frequencies, func(i, j int) bool { return tr.Frequencies[i].TS < tr.Frequencies[j].TS })
	return tr
}

// cpuData locates one CPU's ring-buffer pages.
type cpuData struct {
	cpu        int32
	off, size  uint64
	compressed bool
}

func (p *datParser) parseV6(c *cursor) []cpuData {
	c.lit("header_page\x00", "header_page")
	p.headerPage(c, c.sized(8, "header_page"))
	c.lit("header_event\x00", "header_event")
	c.sized(8, "header_event")
	p.formatFiles(c, "ftrace")
	p.eventFormats(c)
	c.sized(4, "kallsyms")
	c.sized(4, "printk formats")
	p.parseCmdlines(c.sized(8, "saved cmdlines"))
	ncpu := int(c.u32("CPU count"))
	if ncpu <= 0 || ncpu > 4096 {
		c.pos -= 4
		c.failf("CPU count %d out of range 1..4096", ncpu)
	}
	var cpus []cpuData
	for {
		at := c.pos
		tag := string(c.need(10, "section tag"))
		switch tag {
		case "options  \x00":
			for {
				id := c.u16("option id")
				if id == 0 {
					break
				}
				c.sized(4, "option")
			}
		case "latency  \x00":
			c.pos = at
			c.failf("latency trace data is not supported (record with trace-cmd record, not a latency tracer)")
		case "flyrecord\x00":
			for i := 0; i < ncpu; i++ {
				cpus = append(cpus, cpuData{cpu: int32(i), off: c.u64("CPU data offset"), size: c.u64("CPU data size")})
			}
			return cpus
		default:
			c.pos = at
			c.failf("unknown section %q: want options, latency or flyrecord", strings.TrimRight(tag, "\x00 "))
		}
	}
}

// section reads the v7 section at off, which must have the given id, and
// returns its content, decompressed.
func (p *datParser) section(off uint64, id uint16, what string) *cursor {
	if off > uint64(len(p.data)) {
		p.fail(int64(len(p.data)), "%s section offset %d is past the end of the %d-byte file", what, off, len(p.data))
	}
	c := p.file(int64(off))
	got := c.u16(what + " section id")
	if got != id {
		c.pos -= 2
		c.failf("section id %d where the %s section (id %d) should be", got, what, id)
	}
	flags := c.u16(what + " section flags")
	c.u32(what + " section description")
	body := c.sized(8, what+" section")
	if flags&1 == 0 {
		return &cursor{p: p, b: body, base: int64(off) + 16, flat: true}
	}
	return &cursor{p: p, b: p.decompress(int64(off)+16, body, what+" section"), base: int64(off), what: what + " section"}
}

// decompress reads a compression header (u32 compressed size, u32
// uncompressed size) and the compressed data from b.
func (p *datParser) decompress(off int64, b []byte, what string) []byte {
	c := &cursor{p: p, b: b, base: off, flat: true}
	csize := c.u32(what + " compressed size")
	usize := c.u32(what + " uncompressed size")
	comp := c.need(int(csize), what+" compressed data")
	return p.unzstd(off, comp, usize, nil, func() string { return what })
}

// unzstd decompresses comp, whose header says usize bytes, and appends
// them to dst. what names the data in an error; it is called only then,
// so that a caller decoding thousands of chunks formats no label.
func (p *datParser) unzstd(off int64, comp []byte, usize uint32, dst []byte, what func() string) []byte {
	if p.compress != "zstd" {
		p.fail(off, "%s is compressed with %q: schedlab reads only zstd", what(), p.compress)
	}
	if usize > maxDecompressed {
		p.fail(off, "%s claims %d bytes uncompressed, more than the %d schedlab accepts", what(), usize, maxDecompressed)
	}
	if p.dec == nil {
		d, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(64<<20))
		if err != nil {
			panic("trace: zstd decoder: " + err.Error())
		}
		p.dec = d
	}
	if dst == nil {
		// Preallocate no more than a plausible ratio allows: the
		// header's size is not trusted until the data agrees.
		dst = make([]byte, 0, min(uint64(usize), plausibleSize(len(comp))))
	}
	n := len(dst)
	out, err := p.dec.DecodeAll(comp, dst)
	if err != nil {
		p.fail(off, "%s: zstd: %v", what(), err)
	}
	if len(out)-n != int(usize) {
		p.fail(off, "%s decompresses to %d bytes, its header says %d", what(), len(out)-n, usize)
	}
	return out
}

// plausibleSize bounds what n compressed bytes may decompress to when
// memory is set aside before decoding.
func plausibleSize(n int) uint64 { return 64*uint64(n) + 4096 }

const (
	optDone       = 0
	optBuffer     = 3
	optHeaderInfo = 16
	optFtrace     = 17
	optEvents     = 18
	optCmdlines   = 21
	optBufferText = 22
)

func (p *datParser) parseV7(c *cursor) []cpuData {
	p.compress = c.cstr("compression name")
	c.cstr("compression version")
	if p.compress == "none" {
		p.compress = ""
	}
	next := c.u64("options offset")
	offs := map[uint16]uint64{}
	type buffer struct {
		off  uint64
		cpus []cpuData
	}
	var top *buffer
	seen := map[uint64]bool{}
	for next != 0 {
		if seen[next] {
			p.fail(int64(next), "options sections form a loop")
		}
		seen[next] = true
		oc := p.section(next, 0, "options")
		next = 0
		for done := false; !done; {
			id := oc.u16("option id")
			body := oc.sized(4, "option")
			bc := &cursor{p: p, b: body, base: oc.base + int64(oc.pos-len(body)), flat: oc.flat, what: oc.what}
			if !oc.flat {
				bc.base = oc.base
			}
			switch id {
			case optDone:
				next = bc.u64("next options offset")
				done = true
			case optHeaderInfo, optFtrace, optEvents, optCmdlines:
				offs[id] = bc.u64("section offset")
			case optBufferText:
				bc.failf("latency trace data is not supported (record with trace-cmd record, not a latency tracer)")
			case optBuffer:
				b := &buffer{off: bc.u64("buffer section offset")}
				name := bc.cstr("buffer instance name")
				bc.cstr("buffer clock")
				if ps := int(bc.u32("buffer page size")); ps != p.pageSize {
					bc.failf("buffer page size %d differs from the file's %d", ps, p.pageSize)
				}
				n := int(bc.u32("buffer CPU count"))
				if n < 0 || n > 4096 {
					bc.failf("buffer CPU count %d out of range 0..4096", n)
				}
				for i := 0; i < n; i++ {
					cd := cpuData{cpu: int32(bc.u32("CPU id"))}
					cd.off, cd.size = bc.u64("CPU data offset"), bc.u64("CPU data size")
					b.cpus = append(b.cpus, cd)
				}
				if name == "" && top == nil {
					top = b
				}
			}
		}
	}
	for _, need := range []struct {
		id   uint16
		what string
	}{{optHeaderInfo, "header info"}, {optEvents, "event formats"}} {
		if _, ok := offs[need.id]; !ok {
			p.fail(int64(len(p.data)), "no %s section (option %d missing)", need.what, need.id)
		}
	}
	hc := p.section(offs[optHeaderInfo], optHeaderInfo, "header info")
	hc.lit("header_page\x00", "header_page")
	p.headerPage(hc, hc.sized(8, "header_page"))
	hc.lit("header_event\x00", "header_event")
	hc.sized(8, "header_event")
	if off, ok := offs[optFtrace]; ok {
		p.formatFiles(p.section(off, optFtrace, "ftrace event formats"), "ftrace")
	}
	p.eventFormats(p.section(offs[optEvents], optEvents, "event formats"))
	if off, ok := offs[optCmdlines]; ok {
		cc := p.section(off, optCmdlines, "saved cmdlines")
		p.parseCmdlines(cc.sized(8, "saved cmdlines"))
	}
	if top == nil {
		p.fail(int64(len(p.data)), "no flyrecord buffer of the top trace instance (option 3 missing)")
	}
	// The buffer section's header says whether its data is compressed.
	fc := p.file(int64(top.off))
	if id := fc.u16("buffer section id"); id != optBuffer {
		fc.pos -= 2
		fc.failf("section id %d where the flyrecord buffer section (id %d) should be", id, optBuffer)
	}
	compressed := fc.u16("buffer section flags")&1 != 0
	for i := range top.cpus {
		top.cpus[i].compressed = compressed
	}
	return top.cpus
}

// headerPage reads the ring-buffer page header format: where the commit
// field and the data are.
func (p *datParser) headerPage(c *cursor, text []byte) {
	fields := parseFields(string(text))
	if f, ok := fields["commit"]; ok {
		p.commitOff, p.commitLen = f.offset, f.size
	}
	if f, ok := fields["data"]; ok {
		p.dataOff = f.offset
	}
	if p.commitLen != 4 && p.commitLen != 8 || p.commitOff < 0 || p.commitOff+p.commitLen > p.dataOff || p.dataOff >= p.pageSize {
		c.failf("header_page: commit at %d size %d, data at %d do not fit a %d-byte page", p.commitOff, p.commitLen, p.dataOff, p.pageSize)
	}
}

// parseFields reads the "field:" lines of a format file.
func parseFields(text string) map[string]datField {
	out := map[string]datField{}
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "field:") {
			continue
		}
		parts := strings.Split(line, ";")
		if len(parts) < 3 {
			continue
		}
		decl := strings.TrimSpace(strings.TrimPrefix(parts[0], "field:"))
		var f datField
		ok1, ok2 := false, false
		for _, kv := range parts[1:] {
			k, v, _ := strings.Cut(strings.TrimSpace(kv), ":")
			n, err := strconv.Atoi(v)
			switch {
			case k == "offset" && err == nil:
				f.offset, ok1 = n, true
			case k == "size" && err == nil:
				f.size, ok2 = n, true
			}
		}
		if !ok1 || !ok2 {
			continue
		}
		f.dataLoc = strings.HasPrefix(decl, "__data_loc") || strings.HasPrefix(decl, "__rel_loc")
		// "char prev_comm[16]", "__data_loc char[] comm", "pid_t pid":
		// the name is the last word, without its array size.
		name := decl
		if i := strings.LastIndexAny(name, " *"); i >= 0 {
			name = name[i+1:]
		}
		if i := strings.IndexByte(name, '['); i >= 0 {
			name = name[:i]
		}
		out[name] = f
	}
	return out
}

// formatFiles reads a u32 count and that many u64-sized format files.
func (p *datParser) formatFiles(c *cursor, system string) {
	n := c.u32(system + " format count")
	for i := uint32(0); i < n; i++ {
		at := c.pos
		text := c.sized(8, system+" format file")
		p.addFormat(c, at, system, string(text))
	}
}

func (p *datParser) eventFormats(c *cursor) {
	nsys := c.u32("event system count")
	for i := uint32(0); i < nsys; i++ {
		sys := c.cstr("event system name")
		p.formatFiles(c, sys)
	}
}

func (p *datParser) addFormat(c *cursor, at int, system, text string) {
	f := &datFormat{system: system, fields: parseFields(text)}
	id := -1
	for _, line := range strings.Split(text, "\n") {
		if v, ok := strings.CutPrefix(line, "name: "); ok {
			f.name = strings.TrimSpace(v)
		}
		if v, ok := strings.CutPrefix(line, "ID: "); ok {
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil || n < 0 || n > 0xffff {
				c.pos = at
				c.failf("%s format: bad ID %q", system, strings.TrimSpace(v))
			}
			id = n
		}
	}
	if f.name == "" || id < 0 {
		c.pos = at
		c.failf("%s format file without a name or an ID", system)
	}
	if system == "sched" {
		if t, ok := EventTypeByName(f.name); ok {
			f.typ = t
		}
	}
	if pf, ok := f.fields["common_pid"]; ok {
		p.pidField = pf
	}
	p.formats[uint16(id)] = f
}

func (p *datParser) parseCmdlines(b []byte) {
	for _, line := range strings.Split(string(b), "\n") {
		pid, comm, ok := strings.Cut(line, " ")
		if !ok {
			continue
		}
		n, err := strconv.ParseInt(pid, 10, 32)
		if err != nil {
			continue
		}
		p.cmdlines[int32(n)] = MakeComm(comm)
	}
}

// cpuPages returns one CPU's pages, decompressed.
func (p *datParser) cpuPages(cd cpuData) ([]byte, int64) {
	if cd.off > uint64(len(p.data)) || cd.size > uint64(len(p.data))-cd.off {
		p.fail(int64(min(cd.off, uint64(len(p.data)))), "CPU %d data (%d bytes at %d) runs past the end of the %d-byte file", cd.cpu, cd.size, cd.off, len(p.data))
	}
	if !cd.compressed {
		return p.data[cd.off : cd.off+cd.size], int64(cd.off)
	}
	// The size trace-cmd records for compressed data leaves out the chunk
	// count, so the chunks are read up to the file's end at most.
	c := &cursor{p: p, b: p.data, pos: int(cd.off), flat: true}
	n := c.u32("chunk count")
	out := make([]byte, 0, p.chunksSize(c.pos, n))
	for i := uint32(0); i < n; i++ {
		at := c.off()
		csize := c.u32("chunk compressed size")
		usize := c.u32("chunk uncompressed size")
		if uint64(len(out))+uint64(usize) > maxDecompressed {
			p.fail(at, "CPU %d data decompresses to more than %d bytes", cd.cpu, maxDecompressed)
		}
		out = p.unzstd(at, c.need(int(csize), "chunk data"), usize, out, func() string { return fmt.Sprintf("CPU %d chunk %d", cd.cpu, i) })
	}
	return out, -1
}

// chunksSize is what n compressed chunks from pos decompress to by their
// headers, so that their pages take one array instead of growing chunk
// by chunk. The sum is trusted no further than the compressed bytes the
// file really holds make plausible (plausibleSize, the bound of one
// chunk's preallocation) and than maxDecompressed; the chunks themselves
// are checked as they are decoded, so a truncated or lying header here
// only sizes the array.
func (p *datParser) chunksSize(pos int, n uint32) uint64 {
	var total, comp uint64
	for i := uint32(0); i < n && pos+8 <= len(p.data); i++ {
		csize := min(uint64(binary.LittleEndian.Uint32(p.data[pos:])), uint64(len(p.data)-pos-8))
		total += uint64(binary.LittleEndian.Uint32(p.data[pos+4:]))
		comp += csize
		pos += 8 + int(csize)
	}
	return min(total, plausibleSize(int(comp)), maxDecompressed)
}

// readCPU decodes one CPU's pages into tr.
func (p *datParser) readCPU(tr *DatTrace, cd cpuData) {
	pages, base := p.cpuPages(cd)
	at := func(pos int) int64 {
		if base >= 0 {
			return base + int64(pos)
		}
		return int64(cd.off)
	}
	where := func(pos int) string {
		if base >= 0 {
			return ""
		}
		return fmt.Sprintf(" (at byte %d of CPU %d's decompressed data)", pos, cd.cpu)
	}
	if len(pages)%p.pageSize != 0 {
		p.fail(at(len(pages)-len(pages)%p.pageSize), "CPU %d data is %d bytes, not a whole number of %d-byte pages%s", cd.cpu, len(pages), p.pageSize, where(len(pages)-len(pages)%p.pageSize))
	}
	le := binary.LittleEndian
	for pg := 0; pg < len(pages); pg += p.pageSize {
		page := pages[pg : pg+p.pageSize]
		ts := le.Uint64(page)
		var commit uint64
		if p.commitLen == 8 {
			commit = le.Uint64(page[p.commitOff:])
		} else {
			commit = uint64(le.Uint32(page[p.commitOff:]))
		}
		commit &= 1<<27 - 1 // the high bits flag missed events
		if commit > uint64(p.pageSize-p.dataOff) {
			p.fail(at(pg+p.commitOff), "page commit %d exceeds the page's %d data bytes%s", commit, p.pageSize-p.dataOff, where(pg+p.commitOff))
		}
		d := page[p.dataOff : p.dataOff+int(commit)]
		for pos := 0; pos < len(d); {
			rat := pg + p.dataOff + pos
			if len(d)-pos < 4 {
				p.fail(at(rat), "record header truncated by the page's end%s", where(rat))
			}
			h := le.Uint32(d[pos:])
			typeLen, delta := h&31, uint64(h>>5)
			var rec []byte
			switch {
			case typeLen == rbTypePadding:
				if delta == 0 {
					pos = len(d) // the rest of the page is padding
					continue
				}
				if len(d)-pos < 8 {
					p.fail(at(rat), "padding record truncated%s", where(rat))
				}
				n := int(le.Uint32(d[pos+4:]))
				if n < 4 || n > len(d)-pos-4 {
					p.fail(at(rat), "padding of %d bytes runs past the page's commit%s", n, where(rat))
				}
				ts += delta
				pos += 4 + n
				continue
			case typeLen == rbTypeTimeExtend || typeLen == rbTypeTimeExtend+1:
				if len(d)-pos < 8 {
					p.fail(at(rat), "time record truncated%s", where(rat))
				}
				v := uint64(le.Uint32(d[pos+4:]))<<rbTSShift + delta
				if typeLen == rbTypeTimeExtend {
					ts += v
				} else {
					ts = ts&^(1<<59-1) | v // an absolute time stamp
				}
				pos += 8
				continue
			case typeLen == 0:
				if len(d)-pos < 8 {
					p.fail(at(rat), "long record truncated%s", where(rat))
				}
				n := int64(le.Uint32(d[pos+4:])) - 4
				n = (n + 3) &^ 3
				if n < 0 || n > int64(len(d)-pos-8) {
					p.fail(at(rat), "record of %d bytes runs past the page's commit%s", n, where(rat))
				}
				rec = d[pos+8 : pos+8+int(n)]
				pos += 8 + int(n)
			default:
				n := int(typeLen) * 4
				if n > len(d)-pos-4 {
					p.fail(at(rat), "record of %d bytes runs past the page's commit%s", n, where(rat))
				}
				rec = d[pos+4 : pos+4+n]
				pos += 4 + n
			}
			ts += delta
			p.record(tr, rec, ts, cd.cpu, at(rat), where(rat))
		}
	}
}

// record decodes one event record.
func (p *datParser) record(tr *DatTrace, rec []byte, ts uint64, cpu int32, off int64, where string) {
	if len(rec) < 2 {
		p.fail(off, "record of %d bytes has no event id%s", len(rec), where)
	}
	le := binary.LittleEndian
	id := le.Uint16(rec)
	f, ok := p.formats[id]
	if !ok {
		p.fail(off, "record of event id %d, which no format file describes%s", id, where)
	}
	if f.typ == 0 {
		if f.system == "power" && f.name == "cpu_frequency" {
			if fr, ok := p.frequency(f, rec, ts); ok {
				tr.Frequencies = append(tr.Frequencies, fr)
				return
			}
		}
		tr.Skipped[f.system+":"+f.name]++
		return
	}
	fieldOf := func(name string, sizes ...int) (datField, bool) {
		fl, ok := f.fields[name]
		if !ok {
			return fl, false
		}
		if fl.offset < 0 || fl.size < 0 || fl.offset+fl.size > len(rec) {
			p.fail(off, "%s field %s (%d bytes at %d) lies outside the %d-byte record%s", f.name, name, fl.size, fl.offset, len(rec), where)
		}
		good := len(sizes) == 0
		for _, s := range sizes {
			good = good || s == fl.size
		}
		if !good {
			p.fail(off, "%s field %s has size %d%s", f.name, name, fl.size, where)
		}
		return fl, true
	}
	num := func(name string, def int64) int64 {
		fl, ok := fieldOf(name, 1, 2, 4, 8)
		if !ok {
			if def == missing {
				p.fail(off, "%s format has no field %s%s", f.name, name, where)
			}
			return def
		}
		b := rec[fl.offset:]
		switch fl.size {
		case 1:
			return int64(b[0])
		case 2:
			return int64(int16(le.Uint16(b)))
		case 4:
			return int64(int32(le.Uint32(b)))
		}
		return int64(le.Uint64(b))
	}
	str := func(name string) Comm {
		var c Comm
		fl, ok := fieldOf(name)
		if !ok {
			p.fail(off, "%s format has no field %s%s", f.name, name, where)
		}
		b := rec[fl.offset : fl.offset+fl.size]
		if fl.dataLoc {
			if fl.size != 4 {
				p.fail(off, "%s field %s: a __data_loc of %d bytes%s", f.name, name, fl.size, where)
			}
			loc := le.Uint32(b)
			o, n := int(loc&0xffff), int(loc>>16)
			if o+n > len(rec) {
				p.fail(off, "%s field %s: string of %d bytes at %d lies outside the record%s", f.name, name, n, o, where)
			}
			b = rec[o : o+n]
		}
		if i := bytes.IndexByte(b, 0); i >= 0 {
			b = b[:i]
		}
		copy(c[:TaskCommLen-1], b)
		return c
	}
	ev := Event{TS: ts, CPU: cpu, Type: f.typ}
	if len(rec) >= 4 {
		ev.Flags, ev.PreemptCount = rec[2], rec[3]
	}
	ev.Cur.Pid = int32(num("common_pid", missing))
	if ev.Cur.Pid == 0 {
		ev.Cur.Comm = MakeComm("swapper/" + strconv.Itoa(int(cpu)))
	} else if c, ok := p.cmdlines[ev.Cur.Pid]; ok {
		ev.Cur.Comm = c
	} else {
		ev.Cur.Comm = MakeComm("<...>")
	}
	task := func(comm, pid, prio string) Task {
		return Task{Comm: str(comm), Pid: int32(num(pid, missing)), Prio: int32(num(prio, DefaultPrio))}
	}
	switch f.typ {
	case SchedSwitch:
		ev.Task = task("prev_comm", "prev_pid", "prev_prio")
		ev.PrevState = TaskState(num("prev_state", missing))
		ev.Next = task("next_comm", "next_pid", "next_prio")
	case SchedWaking, SchedWakeup, SchedWakeupNew:
		ev.Task = task("comm", "pid", "prio")
		ev.TargetCPU = int32(num("target_cpu", -1))
	case SchedMigrateTask:
		ev.Task = task("comm", "pid", "prio")
		ev.TargetCPU = int32(num("orig_cpu", -1))
		ev.DestCPU = int32(num("dest_cpu", -1))
	case SchedProcessFork:
		ev.Task = Task{Comm: str("parent_comm"), Pid: int32(num("parent_pid", missing))}
		ev.Next = Task{Comm: str("child_comm"), Pid: int32(num("child_pid", missing))}
	case SchedProcessExit:
		ev.Task = task("comm", "pid", "prio")
		ev.GroupDead = num("group_dead", 0) != 0
	}
	tr.Events = append(tr.Events, ev)
}

// frequency decodes cpu_frequency's state (kHz) and cpu_id; a layout
// other than two u32 fields is skipped.
func (p *datParser) frequency(f *datFormat, rec []byte, ts uint64) (Frequency, bool) {
	st, ok1 := f.fields["state"]
	id, ok2 := f.fields["cpu_id"]
	if !ok1 || !ok2 || st.size != 4 || id.size != 4 || st.offset+4 > len(rec) || id.offset+4 > len(rec) || st.offset < 0 || id.offset < 0 {
		return Frequency{}, false
	}
	le := binary.LittleEndian
	return Frequency{TS: ts, CPU: int32(le.Uint32(rec[id.offset:])), KHz: le.Uint32(rec[st.offset:])}, true
}

// missing as a default marks a field an event cannot do without.
const missing = -1 << 62

// DefaultPrio is a nice-0 task's prio, assumed where a format has no prio.
const DefaultPrio = 120
