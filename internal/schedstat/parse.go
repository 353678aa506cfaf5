package schedstat

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/schedlab/schedlab/internal/cpumask"
)

// hexMask is a cpumask as read, before nr_cpu_ids is known.
type hexMask struct {
	line   int
	chunks []uint32 // most significant first
	digits int      // digits of the first chunk
}

func parseHexMask(s string) (hexMask, error) {
	parts := strings.Split(s, ",")
	m := hexMask{chunks: make([]uint32, len(parts)), digits: len(parts[0])}
	for i, p := range parts {
		if len(p) == 0 || len(p) > 8 || i > 0 && len(p) != 8 {
			return m, fmt.Errorf("bad cpumask %q", s)
		}
		for _, c := range p {
			if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
				return m, fmt.Errorf("bad cpumask %q", s)
			}
		}
		v, err := strconv.ParseUint(p, 16, 32)
		if err != nil {
			return m, fmt.Errorf("bad cpumask %q", s)
		}
		m.chunks[i] = uint32(v)
	}
	return m, nil
}

// width is the number of bits the text covers.
func (h *hexMask) width() int { return (len(h.chunks)-1)*32 + h.digits*4 }

// topBit is the highest CPU set, -1 if none.
func (h *hexMask) topBit() int {
	for i, v := range h.chunks {
		if v != 0 {
			hi := 31
			for v&(1<<hi) == 0 {
				hi--
			}
			return (len(h.chunks)-1-i)*32 + hi
		}
	}
	return -1
}

// toMask builds a mask of n bits (n within the text's width).
func (h *hexMask) toMask(n int) (cpumask.Mask, error) {
	m := cpumask.New(n)
	for i, v := range h.chunks {
		lo := (len(h.chunks) - 1 - i) * 32
		for bit := 0; bit < 32; bit++ {
			if v&(1<<bit) == 0 {
				continue
			}
			if lo+bit >= n {
				return m, fmt.Errorf("cpumask has CPU %d set, beyond nr_cpu_ids %d", lo+bit, n)
			}
			m.Set(cpumask.CPU(lo + bit))
		}
	}
	return m, nil
}

// Parse reads /proc/schedstat text of version 15, 16 or 17. Errors name the
// line ("line 4: ..."). The masks' size (nr_cpu_ids) is the smallest that
// covers every CPU line and prints with the same width as the file, so
// Format of the result reproduces the input.
func Parse(r io.Reader) (*Snapshot, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	s := &Snapshot{}
	lineNo := 0
	fail := func(format string, args ...any) error {
		return fmt.Errorf("line %d: %s", lineNo, fmt.Sprintf(format, args...))
	}
	var masks []hexMask
	var maskOf [][2]int // (cpu index, domain index) per mask
	sawTimestamp := false
	for sc.Scan() {
		lineNo++
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			return nil, fail("empty line")
		}
		switch {
		case lineNo == 1:
			if len(f) != 2 || f[0] != "version" {
				return nil, fail("expected \"version N\"")
			}
			v, err := strconv.Atoi(f[1])
			if err != nil {
				return nil, fail("bad version %q", f[1])
			}
			if v < 15 || v > 17 {
				return nil, fail("%v", &UnsupportedVersionError{v})
			}
			s.Version = v
		case lineNo == 2:
			if len(f) != 2 || f[0] != "timestamp" {
				return nil, fail("expected \"timestamp N\"")
			}
			ts, err := strconv.ParseUint(f[1], 10, 64)
			if err != nil {
				return nil, fail("bad timestamp %q", f[1])
			}
			s.Timestamp = ts
			sawTimestamp = true
		case strings.HasPrefix(f[0], "cpu"):
			cpu, err := strconv.Atoi(f[0][3:])
			if err != nil || cpu < 0 || cpu > 1<<20 || strconv.Itoa(cpu) != f[0][3:] {
				return nil, fail("bad cpu %q", f[0])
			}
			if n := len(s.CPUs); n > 0 && int(s.CPUs[n-1].CPU) >= cpu {
				return nil, fail("cpu%d after cpu%d", cpu, s.CPUs[n-1].CPU)
			}
			v, err := numbers(f[1:], 9)
			if err != nil {
				return nil, fail("%v", err)
			}
			s.CPUs = append(s.CPUs, CPUStats{CPU: cpumask.CPU(cpu), YldCount: v[0], ArrayExp: v[1],
				SchedCount: v[2], SchedGoidle: v[3], TtwuCount: v[4], TtwuLocal: v[5],
				RqCPUTime: v[6], RunDelay: v[7], Pcount: v[8]})
		case strings.HasPrefix(f[0], "domain"):
			if len(s.CPUs) == 0 {
				return nil, fail("domain line before any cpu line")
			}
			c := &s.CPUs[len(s.CPUs)-1]
			level, err := strconv.Atoi(f[0][6:])
			if err != nil || level != len(c.Domains) || strconv.Itoa(level) != f[0][6:] {
				return nil, fail("bad domain %q (expected domain%d)", f[0], len(c.Domains))
			}
			d := DomainStats{Level: level}
			rest := f[1:]
			if s.Version == 17 {
				if len(rest) == 0 {
					return nil, fail("missing domain name")
				}
				d.Name = rest[0]
				rest = rest[1:]
			}
			if len(rest) == 0 {
				return nil, fail("missing cpumask")
			}
			hm, err := parseHexMask(rest[0])
			if err != nil {
				return nil, fail("%v", err)
			}
			hm.line = lineNo
			want := 36
			if s.Version == 17 {
				want = 45
			}
			v, err := numbers(rest[1:], want)
			if err != nil {
				return nil, fail("%v", err)
			}
			order := idleOrder(s.Version)
			per := 8
			if s.Version == 17 {
				per = 11
			}
			for i, t := range order {
				x := v[i*per : (i+1)*per]
				l := &d.LB[t]
				if s.Version == 17 {
					*l = LBStats{LbCount: x[0], LbBalanced: x[1], LbFailed: x[2],
						LbImbalanceLoad: x[3], LbImbalanceUtil: x[4], LbImbalanceTask: x[5],
						LbImbalanceMisfit: x[6], LbGained: x[7], LbHotGained: x[8],
						LbNobusyq: x[9], LbNobusyg: x[10]}
				} else {
					*l = LBStats{LbCount: x[0], LbBalanced: x[1], LbFailed: x[2],
						LbImbalance: x[3], LbGained: x[4], LbHotGained: x[5],
						LbNobusyq: x[6], LbNobusyg: x[7]}
				}
			}
			x := v[int(NumIdleTypes)*per:]
			d.AlbCount, d.AlbFailed, d.AlbPushed = x[0], x[1], x[2]
			d.SbeCount, d.SbeBalanced, d.SbePushed = x[3], x[4], x[5]
			d.SbfCount, d.SbfBalanced, d.SbfPushed = x[6], x[7], x[8]
			d.TtwuWakeRemote, d.TtwuMoveAffine, d.TtwuMoveBalance = x[9], x[10], x[11]
			masks = append(masks, hm)
			maskOf = append(maskOf, [2]int{len(s.CPUs) - 1, len(c.Domains)})
			c.Domains = append(c.Domains, d)
		default:
			return nil, fail("unexpected %q", f[0])
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if lineNo == 0 {
		return nil, errors.New("empty schedstat")
	}
	if !sawTimestamp {
		return nil, fmt.Errorf("line %d: missing timestamp line", lineNo)
	}
	if len(masks) == 0 {
		return s, nil
	}
	// nr_cpu_ids: every mask prints with the same width; the smallest bit
	// count of that width that covers the CPUs listed.
	w := masks[0].width()
	n := w - 3 // the first chunk's top digit has at least one bit in use
	if len(s.CPUs) > 0 && int(s.CPUs[len(s.CPUs)-1].CPU)+1 > n {
		n = int(s.CPUs[len(s.CPUs)-1].CPU) + 1
	}
	for i := range masks {
		if top := masks[i].topBit(); top+1 > n {
			n = top + 1
		}
	}
	if n > w {
		return nil, fmt.Errorf("line %d: cpumask %d bits wide but cpu%d exists", masks[0].line, w, n-1)
	}
	for i := range masks {
		if masks[i].width() != w {
			return nil, fmt.Errorf("line %d: cpumask width differs from line %d", masks[i].line, masks[0].line)
		}
		m, err := masks[i].toMask(n)
		if err != nil {
			return nil, fmt.Errorf("line %d: %v", masks[i].line, err)
		}
		s.CPUs[maskOf[i][0]].Domains[maskOf[i][1]].Span = m
	}
	return s, nil
}

func numbers(f []string, want int) ([]uint64, error) {
	if len(f) != want {
		return nil, fmt.Errorf("%d numbers, expected %d", len(f), want)
	}
	v := make([]uint64, want)
	for i, s := range f {
		x, err := strconv.ParseUint(s, 10, 64)
		if err != nil || strconv.FormatUint(x, 10) != s {
			return nil, fmt.Errorf("bad number %q", s)
		}
		v[i] = x
	}
	return v, nil
}
