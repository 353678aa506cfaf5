package sim

import (
	"runtime"
	"testing"
	"time"
)

// The run's CPU clock is its thread's: it advances while the thread
// computes and not while it sleeps (as a stopped or suspended run does
// not).
func TestThreadCPUTime(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	c0, ok := threadCPUTime()
	if !ok {
		t.Fatal("CLOCK_THREAD_CPUTIME_ID unreadable")
	}
	time.Sleep(50 * time.Millisecond)
	c1, _ := threadCPUTime()
	if d := c1 - c0; d < 0 || d >= 50*time.Millisecond {
		t.Errorf("a 50 ms sleep used %v of CPU time", d)
	}
	x := uint64(1)
	for i := 0; ; i++ {
		x = x*6364136223846793005 + 1442695040888963407
		if i%1000 != 0 {
			continue
		}
		if c, _ := threadCPUTime(); c-c1 >= time.Millisecond {
			break
		}
		if i > 1e10 {
			t.Fatalf("the CPU clock did not advance while computing (%d)", x)
		}
	}
}
