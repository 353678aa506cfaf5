package sim

import (
	"syscall"
	"time"
	"unsafe"
)

// clockThreadCPUTime is CLOCK_THREAD_CPUTIME_ID (include/uapi/linux/time.h).
const clockThreadCPUTime = 3

// threadCPUTime is the CPU time the calling thread has used
// (clock_gettime(CLOCK_THREAD_CPUTIME_ID)); ok is false if the clock
// cannot be read. The caller locks its goroutine to the thread.
func threadCPUTime() (d time.Duration, ok bool) {
	var ts syscall.Timespec
	if _, _, errno := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clockThreadCPUTime, uintptr(unsafe.Pointer(&ts)), 0); errno != 0 {
		return 0, false
	}
	return time.Duration(ts.Nano()), true
}
