package rtapp

import (
	"strings"
	"testing"
)

func TestParseSpec(t *testing.T) {
	s, err := ParseSpec([]byte(`{"tasks": {
		"p": {"loop": 2, "cpus": [0, 1], "priority": 5, "taskgroup": "/a/b",
		      "phases": {"x": {"loop": 3, "run": 100, "timer": {"ref": "unique", "period": 1000, "mode": "absolute"}},
		                 "y": {"runtime1": 50, "sleep": 10, "run2": 7, "barrier": "B"}}},
		"q": {"loop": 1, "lock": "m", "run": 1, "unlock": "m", "barrier": "B", "instance": 3, "fork": "r"},
		"r": {"instance": 0, "loop": 1, "yield": "", "run": 5}},
		"global": {"duration": -1, "calibration": 250}}`))
	if err != nil {
		t.Fatal(err)
	}
	p := s.Tasks[0]
	if p.Loop != 2 || len(p.CPUs) != 2 || p.Nice != 5 || p.Taskgroup != "/a/b" || len(p.Phases) != 2 || p.Phases[0].Loop != 3 {
		t.Fatalf("%+v", p)
	}
	ev := p.Phases[1].Events
	if ev[0].Kind != EvRuntime || ev[1].Kind != EvSleep || ev[2].Kind != EvRun || ev[2].Key != "run2" || ev[3].Kind != EvBarrier {
		t.Fatalf("events in file order: %+v", ev)
	}
	if tm := p.Phases[0].Events[1]; !tm.Unique || !tm.Abs || tm.Usec != 1000 {
		t.Fatalf("timer %+v", tm)
	}
	if s.Barriers["B"] != 4 || s.Calibration != 250 {
		t.Fatalf("barrier users %d calibration %d", s.Barriers["B"], s.Calibration)
	}
}

// Unsupported keys are errors that name the key and where it is.
func TestParseErrors(t *testing.T) {
	for _, c := range []struct{ json, want string }{
		{`{"tasks": {"a": {"run": 1, "util_min": 5, "loop": 1}}}`, `tasks.a.util_min: unsupported key "util_min"`},
		{`{"tasks": {"a": {"loop": 1, "memrun": 5}}}`, `tasks.a.memrun: unsupported event "memrun"`},
		{`{"tasks": {"a": {"loop": 1, "run": 1}}, "global": {"frequency": 1}}`, `global.frequency: unsupported key "frequency"`},
		{`{"tasks": {"a": {"loop": 1, "run": 1, "policy": "SCHED_FIFO"}}}`, `policy SCHED_FIFO is not modelled`},
		{`{"tasks": {"a": {"run": 1}}}`, `global.duration: a task loops forever`},
		{`{"tasks": {"a": {"loop": 1, "run": 1, "run": 2}}}`, `duplicate key "run"`},
		{`{"tasks": {"a": {"loop": 1, "fork": "zz"}}}`, `fork of unknown task "zz"`},
		{`{"tasks": {"a": {"loop": 1, "timer": {"ref": "t"}}}}`, `a timer needs ref and period`},
		{`{"tasks": {}}`, `tasks: must be an object with at least one task`},
		{`{"tasks": {"a": {"loop": 1, "run": 1}}, "x": 1}`, `x: unsupported key "x"`},
		{`[1]`, `the file must be a JSON object`},
	} {
		_, err := ParseSpec([]byte(c.json))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.json, err, c.want)
		}
	}
}

func FuzzParseSpec(f *testing.F) {
	f.Add(`{"tasks": {"a": {"loop": 2, "run": 100, "sleep": 50, "timer": {"ref": "t", "period": 10}}}}`)
	f.Add(`{"tasks": {"a": {"instance": 2, "loop": -1, "phases": {"p": {"lock": "m", "unlock": "m", "barrier": "b"}}}}, "global": {"duration": 1}}`)
	f.Fuzz(func(t *testing.T, s string) {
		spec, err := ParseSpec([]byte(s))
		if err != nil {
			return
		}
		for _, task := range spec.Tasks {
			if len(task.Phases) == 0 || task.Instances < 0 {
				t.Fatalf("accepted %+v", task)
			}
			for _, ph := range task.Phases {
				if len(ph.Events) == 0 || ph.Loop < 1 {
					t.Fatalf("accepted phase %+v", ph)
				}
			}
		}
	})
}
