// Package cpumask provides the CPU identifier and the CPU set type used by every
// layer of schedlab, in the spirit of the kernel's struct cpumask: a fixed-size
// bitmap with the iteration helpers the scheduler uses (for_each_cpu,
// for_each_cpu_wrap, cpumask_first, cpumask_weight) and the kernel's "cpulist"
// text form ("0-15,128-143") for printing and parsing.
package cpumask

import (
	"fmt"
	"iter"
	"math/bits"
	"strconv"
	"strings"
)

// CPU is a logical CPU number, as Linux numbers them.
type CPU int

// None is the "no CPU" value (the kernel's nr_cpumask_bits / -1 results).
const None CPU = -1

// String prints the CPU as the kernel's debug output does ("cpu7").
func (c CPU) String() string {
	if c < 0 {
		return "cpu-"
	}
	return "cpu" + strconv.Itoa(int(c))
}

// Mask is a set of CPUs of a machine with a fixed number of CPUs. The zero
// Mask is an empty set of size 0; use New to size it. Masks of different sizes
// must not be combined.
type Mask struct {
	n     int
	words []uint64
}

// New returns an empty mask for a machine of n CPUs.
func New(n int) Mask {
	return Mask{n: n, words: make([]uint64, (n+63)/64)}
}

// Of returns a mask of size n holding the given CPUs.
func Of(n int, cpus ...CPU) Mask {
	m := New(n)
	for _, c := range cpus {
		m.Set(c)
	}
	return m
}

// Range returns a mask of size n holding CPUs lo..hi inclusive.
func Range(n int, lo, hi CPU) Mask {
	m := New(n)
	for c := lo; c <= hi; c++ {
		m.Set(c)
	}
	return m
}

// Full returns a mask of size n holding every CPU.
func Full(n int) Mask { return Range(n, 0, CPU(n-1)) }

// Size is the number of CPUs of the machine the mask belongs to.
func (m Mask) Size() int { return m.n }

// Clone returns an independent copy.
func (m Mask) Clone() Mask {
	w := make([]uint64, len(m.words))
	copy(w, m.words)
	return Mask{n: m.n, words: w}
}

// Set adds c.
func (m Mask) Set(c CPU) { m.words[c>>6] |= 1 << (uint(c) & 63) }

// ClearAll empties m in place.
func (m Mask) ClearAll() { clear(m.words) }

// Clear removes c.
func (m Mask) Clear(c CPU) { m.words[c>>6] &^= 1 << (uint(c) & 63) }

// Test reports whether c is in the set (cpumask_test_cpu).
func (m Mask) Test(c CPU) bool {
	if c < 0 || int(c) >= m.n {
		return false
	}
	return m.words[c>>6]&(1<<(uint(c)&63)) != 0
}

// Weight is the number of CPUs in the set (cpumask_weight).
func (m Mask) Weight() int {
	n := 0
	for _, w := range m.words {
		n += bits.OnesCount64(w)
	}
	return n
}

// Empty reports whether the set is empty.
func (m Mask) Empty() bool {
	for _, w := range m.words {
		if w != 0 {
			return false
		}
	}
	return true
}

// First returns the lowest CPU in the set, or None (cpumask_first).
func (m Mask) First() CPU { return m.Next(-1) }

// Next returns the lowest CPU in the set above c, or None (cpumask_next).
func (m Mask) Next(c CPU) CPU {
	i := int(c) + 1
	if i >= m.n {
		return None
	}
	wi := i >> 6
	w := m.words[wi] &^ ((1 << (uint(i) & 63)) - 1)
	for {
		if w != 0 {
			r := CPU(wi<<6 + bits.TrailingZeros64(w))
			if int(r) >= m.n {
				return None
			}
			return r
		}
		wi++
		if wi >= len(m.words) {
			return None
		}
		w = m.words[wi]
	}
}

// AndCPUs yields the CPUs in both m and o in ascending order, for the
// kernel's for_each_cpu_and: a range over it compiles to a loop over the
// words, with no call per CPU.
func (m Mask) AndCPUs(o Mask) iter.Seq[CPU] {
	return func(yield func(CPU) bool) {
		for wi, w := range m.words {
			w &= o.words[wi]
			for w != 0 {
				c := CPU(wi<<6 + bits.TrailingZeros64(w))
				if int(c) >= m.n || !yield(c) {
					return
				}
				w &= w - 1
			}
		}
	}
}

// ForEach calls f for each CPU in ascending order until f returns false.
func (m Mask) ForEach(f func(CPU) bool) {
	for c := m.First(); c != None; c = m.Next(c) {
		if !f(c) {
			return
		}
	}
}

// ForEachWrap calls f for each CPU in the set starting at start (inclusive)
// and wrapping around, as the kernel's for_each_cpu_wrap, until f returns false.
func (m Mask) ForEachWrap(start CPU, f func(CPU) bool) {
	if start < 0 || int(start) >= m.n {
		start = 0
	}
	for c := m.Next(start - 1); c != None; c = m.Next(c) {
		if !f(c) {
			return
		}
	}
	for c := m.First(); c != None && c < start; c = m.Next(c) {
		if !f(c) {
			return
		}
	}
}

// CPUs returns the members in ascending order.
func (m Mask) CPUs() []CPU {
	out := make([]CPU, 0, m.Weight())
	for c := m.First(); c != None; c = m.Next(c) {
		out = append(out, c)
	}
	return out
}

// And returns m ∩ o.
func (m Mask) And(o Mask) Mask {
	r := m.Clone()
	for i := range r.words {
		r.words[i] &= o.words[i]
	}
	return r
}

// Or returns m ∪ o.
func (m Mask) Or(o Mask) Mask {
	r := m.Clone()
	for i := range r.words {
		r.words[i] |= o.words[i]
	}
	return r
}

// AndNot returns m \ o.
func (m Mask) AndNot(o Mask) Mask {
	r := m.Clone()
	for i := range r.words {
		r.words[i] &^= o.words[i]
	}
	return r
}

// AndInto sets dst = a ∩ b without allocating (cpumask_and).
func AndInto(dst, a, b Mask) {
	for i := range dst.words {
		dst.words[i] = a.words[i] & b.words[i]
	}
}

// CopyInto sets dst = src without allocating (cpumask_copy).
func CopyInto(dst, src Mask) { copy(dst.words, src.words) }

// AndNotInPlace removes the CPUs of o from m (cpumask_andnot(m, m, o)).
func (m Mask) AndNotInPlace(o Mask) {
	for i := range m.words {
		m.words[i] &^= o.words[i]
	}
}

// OrInPlace adds the CPUs of o to m.
func (m Mask) OrInPlace(o Mask) {
	for i := range m.words {
		m.words[i] |= o.words[i]
	}
}

// Equal reports whether both sets hold the same CPUs.
func (m Mask) Equal(o Mask) bool {
	if m.n != o.n {
		return false
	}
	for i := range m.words {
		if m.words[i] != o.words[i] {
			return false
		}
	}
	return true
}

// Intersects reports whether m ∩ o is non-empty.
func (m Mask) Intersects(o Mask) bool {
	for i := range m.words {
		if m.words[i]&o.words[i] != 0 {
			return true
		}
	}
	return false
}

// SubsetOf reports whether every CPU of m is in o.
func (m Mask) SubsetOf(o Mask) bool {
	for i := range m.words {
		if m.words[i]&^o.words[i] != 0 {
			return false
		}
	}
	return true
}

// String prints the kernel's cpulist form, e.g. "0-15,128-143"; "" when empty.
func (m Mask) String() string {
	var b strings.Builder
	c := m.First()
	for c != None {
		lo := c
		hi := c
		for n := m.Next(hi); n == hi+1; n = m.Next(hi) {
			hi = n
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(int(lo)))
		if hi != lo {
			b.WriteByte('-')
			b.WriteString(strconv.Itoa(int(hi)))
		}
		c = m.Next(hi)
	}
	return b.String()
}

// Hex prints the mask as the kernel's %*pb bitmap form, as in
// /proc/schedstat domain lines: 32-bit chunks, most significant first,
// separated by commas; the first chunk is as wide as the bits it holds
// ("ff" for 8 CPUs, "3,ffffffff" for 34).
func (m Mask) Hex() string {
	n := m.n
	if n == 0 {
		return ""
	}
	chunks := (n + 31) / 32
	var b strings.Builder
	for g := chunks - 1; g >= 0; g-- {
		v := uint32(m.words[g/2] >> (uint(g%2) * 32))
		width := 8
		if g == chunks-1 {
			bitsHere := n - 32*g
			width = (bitsHere + 3) / 4
		}
		if g != chunks-1 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "%0*x", width, v)
	}
	return b.String()
}

// Parse reads a cpulist ("0-3,8,10-11") for a machine of n CPUs.
func Parse(n int, s string) (Mask, error) {
	m := New(n)
	s = strings.TrimSpace(s)
	if s == "" {
		return m, nil
	}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil {
			return Mask{}, fmt.Errorf("bad CPU number %q in cpu list %q", lo, s)
		}
		b := a
		if isRange {
			b, err = strconv.Atoi(hi)
			if err != nil {
				return Mask{}, fmt.Errorf("bad CPU number %q in cpu list %q", hi, s)
			}
		}
		if a < 0 || b < a {
			return Mask{}, fmt.Errorf("bad CPU range %q in cpu list %q", part, s)
		}
		if b >= n {
			return Mask{}, fmt.Errorf("CPU %d out of range in cpu list %q (machine has %d CPUs)", b, s, n)
		}
		for c := a; c <= b; c++ {
			m.Set(CPU(c))
		}
	}
	return m, nil
}
