package hackbench

import (
	"testing"
	"unsafe"
)

// TestChildLayout pins the field order that keeps what every send or
// receive call reads of its child in the child's first cache line, and the
// child inside the allocator's 128-byte size class, whose objects start on
// a line (docs/performance.md, "Instructions and L1 misses per event").
// Layout only: moving fields changes no result, but it does change speed.
func TestChildLayout(t *testing.T) {
	var c child
	if s := unsafe.Sizeof(c); s <= 112 || s > 128 {
		t.Errorf("child is %d bytes, want 113 to 128 (the 128-byte size class)", s)
	}
	for name, off := range map[string]uintptr{
		"state": unsafe.Offsetof(c.state), "paid": unsafe.Offsetof(c.paid),
		"sender": unsafe.Offsetof(c.sender), "io": unsafe.Offsetof(c.io),
		"left": unsafe.Offsetof(c.left), "b": unsafe.Offsetof(c.b),
		"in": unsafe.Offsetof(c.in), "n": unsafe.Offsetof(c.n),
	} {
		if off >= 64 {
			t.Errorf("child.%s at byte %d, not in the first 64-byte line", name, off)
		}
	}
}
