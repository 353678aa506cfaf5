package sched

import "testing"

// mmSwitch follows core.c:context_switch (v6.x): between two user tasks
// the mm changes when theirs differ; after the idle task it changes when
// next's mm is not the CPU's active_mm (lazy TLB), or always when the
// model does not follow active_mm.
func TestMMSwitch(t *testing.T) {
	idle := &Task{PID: 0}
	a1 := &Task{PID: 10, MM: -10}
	a2 := &Task{PID: 11, MM: -10} // a thread of a1's process
	b := &Task{PID: 12, MM: -12}
	for _, c := range []struct {
		name       string
		lazy       bool
		activeMM   int64
		prev, next *Task
		want       bool
	}{
		{"task to task, other mm", true, -10, a1, b, true},
		{"task to task, same mm", true, -10, a1, a2, false},
		{"task to task ignores active_mm", true, -12, a1, a2, false},
		{"idle, active_mm is next's", true, -10, idle, a1, false},
		{"idle, active_mm is a thread's of next's process", true, -10, idle, a2, false},
		{"idle, active_mm is another's", true, -12, idle, a1, true},
		{"idle, nothing ran yet", true, 0, idle, a1, true},
		{"idle, not lazy", false, -10, idle, a1, true},
		{"not lazy, task to task, same mm", false, -10, a1, a2, false},
	} {
		if got := mmSwitch(c.lazy, c.activeMM, c.prev, c.next); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}
