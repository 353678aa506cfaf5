package sched

import (
	"strings"
	"testing"

	"github.com/schedlab/schedlab/internal/engine"
	"github.com/schedlab/schedlab/internal/kernels"
	"github.com/schedlab/schedlab/internal/topology"
)

// timerWakeDelay runs a task on CPU 2 of an otherwise idle machine that
// works 1 ms and sleeps 3 ms, and returns how long after its sleep timer
// expired it woke (sched_waking): the wake-up time of the idle state its
// CPU was in. The governor starts from a long idle average, so without
// limits it picks the deepest state.
func timerWakeDelay(t *testing.T, spec *topology.MachineSpec, edit func(*Settings)) engine.Time {
	t.Helper()
	topo, err := topology.Build(spec, topology.Options{Kernel: kernels.V619})
	if err != nil {
		t.Fatal(err)
	}
	s := MustBaseline(kernels.V619)
	if edit != nil {
		edit(&s)
	}
	k, err := New(engine.New(1), topo, s)
	if err != nil {
		t.Fatal(err)
	}
	withCosts(t, k)
	p := forkNapper(t, k)
	w := recordWakeTimes(k, p)
	k.Eng.RunUntil(msAt(3))
	if w.switchOut == 0 {
		t.Fatal("napper did not sleep")
	}
	k.Eng.RunUntil(w.switchOut + 4*engine.Millisecond)
	if w.waking == 0 {
		t.Fatal("napper did not wake")
	}
	return w.waking - (w.switchOut + 3*engine.Millisecond)
}

func zen3Spec(t *testing.T) *topology.MachineSpec {
	t.Helper()
	spec, err := topology.Load("zen3-2s-nps1")
	if err != nil {
		t.Fatal(err)
	}
	return spec
}

// TestIdleWakeActual: on zen3-2s-nps1 the firmware advertises 400 µs for
// C2 and the preset's measured wake-up is 18 µs (topology's zen3 preset).
// A CPU idle in C2 wakes 18 µs after its timer with IdleWakeActual (the
// default) and 400 µs after it without; the governor picks C2 either way,
// since it decides with the advertised figures.
func TestIdleWakeActual(t *testing.T) {
	us := engine.Microsecond
	if d := timerWakeDelay(t, zen3Spec(t), nil); d != 18*us {
		t.Errorf("actual wake from C2: %v after the timer, want 18µs", d)
	}
	if d := timerWakeDelay(t, zen3Spec(t), func(s *Settings) { s.IdleWakeActual = false }); d != 400*us {
		t.Errorf("advertised wake from C2: %v after the timer, want 400µs", d)
	}
}

// TestIdleDisable: with C2 switched off (cpupower idle-set -d, by the
// setting or the machine file's idle_disable) the governor takes the
// deepest enabled state, C1, whose wake-up is its 1 µs exit latency;
// disabling C1 too leaves POLL (0). A name the machine lacks is refused.
// Reference: drivers/cpuidle/governors/menu.c:menu_select (v6.19) skips
// states with states_usage[i].disable set.
func TestIdleDisable(t *testing.T) {
	us := engine.Microsecond
	if d := timerWakeDelay(t, zen3Spec(t), func(s *Settings) { s.IdleDisable = "C2" }); d != 1*us {
		t.Errorf("C2 disabled: woke %v after the timer, want C1's 1µs", d)
	}
	if d := timerWakeDelay(t, zen3Spec(t), func(s *Settings) { s.IdleDisable = "C2,C1" }); d != 0 {
		t.Errorf("C1 and C2 disabled: woke %v after the timer, want POLL's 0", d)
	}
	spec := zen3Spec(t)
	spec.IdleDisable = []string{"C2"}
	if d := timerWakeDelay(t, spec, nil); d != 1*us {
		t.Errorf("machine file idle_disable [C2]: woke %v after the timer, want C1's 1µs", d)
	}
	topo, err := topology.Build(zen3Spec(t), topology.Options{Kernel: kernels.V619})
	if err != nil {
		t.Fatal(err)
	}
	s := MustBaseline(kernels.V619)
	s.IdleDisable = "C6"
	if _, err := New(engine.New(1), topo, s); err == nil || !strings.Contains(err.Error(), `no idle state "C6" (its states: POLL, C1, C2)`) {
		t.Errorf("unknown state: %v", err)
	}
}

// TestIdleLatencyLimit: a PM QoS request is held against the advertised
// exit latency (C2: 400 µs), not the 18 µs wake-up: a 10 µs request rules
// C2 out (C1, 1 µs), a 400 µs one allows it, and a 0 µs request leaves
// only POLL. With the machine file's latency_limit_us the smaller request
// holds (cpu_latency_qos keeps the minimum).
// Reference: menu_select (v6.19): a state with exit_latency_ns above
// latency_req ends the search; kernel/power/qos.c:cpu_latency_qos_limit.
func TestIdleLatencyLimit(t *testing.T) {
	us := engine.Microsecond
	for _, tc := range []struct {
		limit int
		want  engine.Time
	}{{10, 1 * us}, {399, 1 * us}, {400, 18 * us}, {0, 0}} {
		if d := timerWakeDelay(t, zen3Spec(t), func(s *Settings) { s.IdleLatencyLimitUs = tc.limit }); d != tc.want {
			t.Errorf("latency limit %d µs: woke %v after the timer, want %v", tc.limit, d, tc.want)
		}
	}
	spec := zen3Spec(t)
	ten := int64(10 * us)
	spec.LatencyLimitNs = &ten
	if d := timerWakeDelay(t, spec, nil); d != 1*us {
		t.Errorf("machine file latency_limit_us 10: woke %v, want C1's 1µs", d)
	}
	if d := timerWakeDelay(t, spec, func(s *Settings) { s.IdleLatencyLimitUs = 500 }); d != 1*us {
		t.Errorf("machine 10 µs and setting 500 µs: woke %v, want the smaller request's C1 (1µs)", d)
	}
}
