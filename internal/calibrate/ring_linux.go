//go:build linux

package calibrate

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unsafe"
)

// RingSize is how many members pass the token in the context-switch rings:
// more address spaces than Linux keeps TLB contexts for on one CPU
// (TLB_NR_DYN_ASIDS is 6 on x86; arm64's ASIDs are not a per-CPU cache, so
// any size above 2 behaves alike), so that every switch between processes
// in the process ring finds the next address space's translations gone, as
// it does among hackbench -P's 40 processes.
const RingSize = 8

// peerEnv marks a process started by processRing: the value is "COUNT CPU"
// (tokens to pass, the CPU to stay on).
const peerEnv = "SCHEDLAB_CALIBRATE_PEER"

// MaybeRunPeer turns this process into a member of a calibration process
// ring when processRing started it (the environment says so): it passes
// tokens from fd 3 to fd 4 and exits. Otherwise it returns at once. The
// schedlab binary calls it first thing, and so does this package's test
// binary, since processRing starts os.Executable().
func MaybeRunPeer() {
	v, ok := os.LookupEnv(peerEnv)
	if !ok {
		return
	}
	err := runPeer(v)
	if err != nil {
		fmt.Fprintf(os.Stderr, "schedlab calibrate peer: %v\n", err)
		os.Exit(1)
	}
	os.Exit(0)
}

func runPeer(v string) error {
	f := strings.Fields(v)
	if len(f) != 2 {
		return fmt.Errorf("%s=%q: want COUNT CPU", peerEnv, v)
	}
	count, err1 := strconv.Atoi(f[0])
	cpu, err2 := strconv.Atoi(f[1])
	if err := errors.Join(err1, err2); err != nil {
		return err
	}
	if err := pin(cpu); err != nil {
		return err
	}
	return passTokensRaw(3, 4, count)
}

// passTokens reads a 100-byte token from in and writes it to out, count
// times (a thread of the ring: its blocking calls give its P back to the
// Go runtime).
func passTokens(in, out, count int) error {
	buf := make([]byte, smallMsg)
	for range count {
		if err := fullRead(in, buf); err != nil {
			return err
		}
		if _, err := syscall.Write(out, buf); err != nil {
			return err
		}
	}
	return nil
}

// passTokensRaw is passTokens for a ring process, with raw system calls: a
// read that blocks in the Go runtime's syscall wrapper lets the runtime's
// monitor thread wake to take its P back, and in a ring of processes pinned
// to one CPU those wakeups of every member would be part of each hop
// (measured: 40-50 µs a hop instead of the 17 µs of the same ring in C).
// It holds the process's only P while it blocks, which a ring process,
// running nothing else, can afford and a thread of the ring cannot.
func passTokensRaw(in, out, count int) error {
	buf := make([]byte, smallMsg)
	p := uintptr(unsafe.Pointer(&buf[0]))
	for range count {
		for off := uintptr(0); off < smallMsg; {
			n, _, e := syscall.RawSyscall(syscall.SYS_READ, uintptr(in), p+off, smallMsg-off)
			switch {
			case e == syscall.EINTR:
				continue
			case e != 0:
				return e
			case n == 0:
				return errors.New("unexpected end of pipe")
			}
			off += n
		}
		if _, _, e := syscall.RawSyscall(syscall.SYS_WRITE, uintptr(out), p, smallMsg); e != 0 {
			return e
		}
	}
	runtime.KeepAlive(buf)
	return nil
}

// ring measures one hop of a 100-byte token around a ring of n members
// pinned to cpu, each reading from its pipe and writing to the next
// member's: a write, a read and a context switch. The members are threads
// of this process, or (procs) processes, each a new instance of this
// executable (MaybeRunPeer). The figure is the time of iters trips around
// the ring, after 100 trips not counted, divided by iters·n.
func ring(cpu, n, iters int, procs bool) (float64, error) {
	pipes := make([][2]int, n)
	for i := range pipes {
		p, err := pipeFds()
		if err != nil {
			return 0, err
		}
		pipes[i] = p
	}
	defer func() {
		for _, p := range pipes {
			for _, fd := range p {
				if fd >= 0 {
					syscall.Close(fd)
				}
			}
		}
	}()
	const warm = 100
	total := warm + iters
	return onCPU(cpu, func() (float64, error) {
		// Members 1..n-1 start from this pinned thread, so a process
		// inherits its CPU mask before it pins itself.
		var wait []func() error
		for i := 1; i < n; i++ {
			in, out := pipes[i][0], pipes[(i+1)%n][1]
			if procs {
				cmd, err := startPeer(in, out, total, cpu)
				if err != nil {
					return 0, err
				}
				wait = append(wait, cmd.Wait)
				continue
			}
			done := make(chan error, 1)
			go func() {
				if err := pin(cpu); err != nil {
					done <- err
					return
				}
				done <- passTokens(in, out, total)
			}()
			wait = append(wait, func() error { return <-done })
		}
		buf := make([]byte, smallMsg)
		var start time.Time
		var err error
		for i := range total {
			if i == warm {
				start = time.Now()
			}
			if _, err = syscall.Write(pipes[1%n][1], buf); err != nil {
				break
			}
			if err = fullRead(pipes[0][0], buf); err != nil {
				break
			}
		}
		hop := float64(time.Since(start).Nanoseconds()) / float64(iters*n)
		if err != nil {
			// Unblock the members: closing the ring's write ends ends
			// their reads.
			for i := range pipes {
				syscall.Close(pipes[i][1])
				pipes[i][1] = -1
			}
		}
		for _, w := range wait {
			if e := w(); e != nil && err == nil {
				err = fmt.Errorf("ring member: %w", e)
			}
		}
		return hop, err
	})
}

// startPeer starts a ring member process reading fd in and writing fd out
// (its fds 3 and 4).
func startPeer(in, out, count, cpu int) (*exec.Cmd, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	// The child gets copies: the ring's own descriptors stay the
	// caller's to close.
	var files []*os.File
	for _, fd := range []int{in, out} {
		d, err := syscall.Dup(fd)
		if err != nil {
			return nil, err
		}
		files = append(files, os.NewFile(uintptr(d), "ring"))
	}
	defer func() {
		for _, f := range files {
			f.Close()
		}
	}()
	cmd := exec.Command(exe)
	// One P, no collector and no preemption signals: the member's
	// runtime stays out of the ring.
	cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%d %d", peerEnv, count, cpu), "GOMAXPROCS=1", "GOGC=off", "GODEBUG=asyncpreemptoff=1")
	cmd.ExtraFiles = files
	cmd.Stderr = os.Stderr
	return cmd, cmd.Start()
}
