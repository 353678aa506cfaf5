package kobj

import (
	"testing"

	"github.com/schedlab/schedlab/internal/engine"
	"github.com/schedlab/schedlab/internal/sched"
)

// Reference: a section is the last hold before its commit, and begins no
// earlier than the previous section's end; the wait is how much later it
// begins than that.
func TestKMutexEnter(t *testing.T) {
	steps := []struct {
		now, hold, wait engine.Time
	}{
		{1000, 300, 0},   // free: section [700, 1000]
		{1100, 300, 200}, // would be [800, 1100]; begins at 1000, ends 1300
		{1200, 100, 200}, // would be [1100, 1200]; [1300, 1400]
		{1400, 100, 100}, // would be [1300, 1400]; [1400, 1500]
		{2000, 300, 0},   // [1700, 2000]: after 1500
		{2000, 0, 0},     // an empty section at 2000, right after
	}
	var m KMutex
	var waited engine.Time
	for i, s := range steps {
		if got := m.Enter(s.now, s.hold); got != s.wait {
			t.Errorf("step %d: Enter(%d, %d) = %d, want %d", i, s.now, s.hold, got, s.wait)
		}
		waited += s.wait
	}
	if m.Taken != 6 || m.Contended != 3 || m.Waited != waited {
		t.Errorf("stats %+v, want 6 taken, 3 contended, %d waited", m, waited)
	}
}

// Four writers on four CPUs of one LLC each make a call of 1 µs that holds
// the pipe's mutex for its last 600 ns, then spin as Lock says before the
// write commits. With model_kobj_locks the commits are at least 600 ns
// apart (no two sections overlap) and the 400 writes take at least 400 ×
// 600 ns; without it the writers run side by side (about 100 × 1 µs) and
// commits come closer together.
func TestPipeLockSerialises(t *testing.T) {
	const (
		msgs        = 100
		cost        = 1000
		hold        = 600
		writers     = 4
		wantMinimum = writers * msgs * hold
	)
	for _, locks := range []bool{true, false} {
		k := zen3Kernel(t)
		k.S.KobjLocks = locks
		p := NewPipe()
		p.Locks = true
		var commits []engine.Time
		var last engine.Time
		for w := range writers {
			var io IO
			n, paid := 0, false
			fork(t, k, "w", w, func(k *sched.Kernel, task *sched.Task) sched.Op {
				for n < msgs {
					if !paid {
						paid = true
						io.Reset(100)
						return sched.Run(cost)
					}
					if d := p.Lock(k, &io, hold); d > 0 {
						return sched.Run(d)
					}
					if p.Lock(k, &io, hold) != 0 {
						t.Error("a second Lock for one attempt asked for another spin")
					}
					if !p.Write(k, task, &io) {
						t.Fatal("the pipe filled up")
					}
					commits = append(commits, k.Now())
					last = max(last, k.Now())
					paid = false
					n++
				}
				return sched.Exit()
			})
		}
		k.Eng.RunUntil(engine.Second)
		if len(commits) != writers*msgs {
			t.Fatalf("locks %v: %d writes, want %d", locks, len(commits), writers*msgs)
		}
		closest := engine.Time(1 << 62)
		for i := 1; i < len(commits); i++ {
			closest = min(closest, commits[i]-commits[i-1])
		}
		switch {
		case locks && (closest < hold || last < wantMinimum || p.Mutex.Contended == 0):
			t.Errorf("with locks: commits %v apart at the closest, last at %v, %d contended; want >= %d apart, last >= %d",
				closest, last, p.Mutex.Contended, hold, wantMinimum)
		case !locks && (closest >= hold || last >= wantMinimum || p.Mutex.Taken != 0):
			t.Errorf("without locks: commits %v apart at the closest, last at %v, mutex taken %d times; want closer than %d, last before %d, untouched",
				closest, last, p.Mutex.Taken, hold, wantMinimum)
		}
	}
}
