package rtapp

import (
	"fmt"
	"strings"

	"github.com/schedlab/schedlab/internal/sched"
)

// EventKind is one rt-app event type.
type EventKind int

const (
	EvRun     EventKind = iota // run: fixed work (usec at full capacity)
	EvRuntime                  // runtime: busy for wall time
	EvSleep                    // sleep
	EvTimer                    // timer: sleep to the next period boundary
	EvLock                     // lock a mutex
	EvUnlock                   // unlock it
	EvBarrier                  // rendezvous of every thread using the name
	EvFork                     // create an instance of a task
	EvYield                    // sched_yield
)

// eventPrefixes maps rt-app's event key prefixes (a key is an event if it
// starts with one; "run1", "sleep2" are distinct events) to kinds; -1
// marks events rt-app has and schedlab does not model. Longer prefixes
// come first so that "runtime" is not read as "run".
var eventPrefixes = []struct {
	prefix string
	kind   EventKind
}{
	{"runtime", EvRuntime}, {"memrun", -1}, {"iorun", -1}, {"run", EvRun},
	{"unlock", EvUnlock}, {"lock", EvLock}, {"sleep", EvSleep}, {"timer", EvTimer},
	{"barrier", EvBarrier}, {"fork", EvFork}, {"yield", EvYield},
	{"wait", -1}, {"signal", -1}, {"broad", -1}, {"sync", -1}, {"suspend", -1},
	{"resume", -1}, {"mem", -1}, {"sem_post", -1}, {"sem_wait", -1},
}

// Event is one event of a phase.
type Event struct {
	Kind   EventKind
	Key    string // as written ("run1")
	Usec   int64  // run, runtime, sleep; timer period
	Ref    string // timer, lock/unlock, barrier, fork target
	Unique bool   // timer ref starting with "unique": one timer per thread
	Abs    bool   // timer mode absolute
}

// Phase is a named list of events run Loop times.
type Phase struct {
	Name   string
	Loop   int64
	Events []Event
}

// Task is one task of the file.
type Task struct {
	Name      string
	Instances int
	Delay     int64 // usec before the first phase
	Loop      int64 // -1 = until the run's duration ends
	Nice      int
	Policy    sched.Policy
	PolicyStr string
	CPUs      []int
	Taskgroup string
	Phases    []Phase
}

// Spec is a parsed rt-app file.
type Spec struct {
	Duration    int64 // seconds; -1 = until every task finishes
	Calibration int64 // ns per loop (pLoad); 0 when calibrated on a CPU
	Tasks       []*Task
	// Barriers maps each barrier to the number of threads that use it.
	Barriers map[string]int
}

// SpecError is a mistake in the file, located by JSON path.
type SpecError struct {
	Path, Msg string
}

func (e *SpecError) Error() string { return e.Path + ": " + e.Msg }

func errAt(path, format string, a ...any) error {
	return &SpecError{path, fmt.Sprintf(format, a...)}
}

var globalKeys = map[string]bool{
	"duration": true, "calibration": true, "default_policy": true, "pi_enabled": true,
	"lock_pages": true, "logdir": true, "log_basename": true, "log_size": true, "ftrace": true,
	"gnuplot": true, "io_device": true, "mem_buffer_size": true, "cumulative_slack": true,
}

// ParseSpec parses an rt-app JSON file.
func ParseSpec(data []byte) (*Spec, error) {
	root, err := parseJSON(data)
	if err != nil {
		return nil, err
	}
	if root.kind != 'o' {
		return nil, errAt("$", "the file must be a JSON object")
	}
	s := &Spec{Duration: -1, Calibration: 0, Barriers: map[string]int{}}
	var tasks *value
	defaultPolicy := "SCHED_OTHER"
	for i := range root.obj {
		m := &root.obj[i]
		switch m.key {
		case "tasks":
			tasks = &m.val
		case "resources":
			// legacy, ignored by rt-app
		case "global":
			if m.val.kind != 'o' {
				return nil, errAt("global", "must be an object")
			}
			for _, g := range m.val.obj {
				path := "global." + g.key
				if !globalKeys[g.key] {
					return nil, errAt(path, "unsupported key %q", g.key)
				}
				switch g.key {
				case "duration":
					n, err := g.val.int(path)
					if err != nil {
						return nil, errAt(path, "%v", err)
					}
					if n == 0 || n < -1 || n > 1<<24 {
						return nil, errAt(path, "must be -1 or a positive number of seconds")
					}
					s.Duration = n
				case "calibration":
					if g.val.kind == 's' {
						if !strings.HasPrefix(g.val.str, "CPU") {
							return nil, errAt(path, "must be a CPU name (\"CPU0\") or ns per loop")
						}
						continue
					}
					n, err := g.val.int(path)
					if err != nil || n <= 0 {
						return nil, errAt(path, "must be a CPU name (\"CPU0\") or a positive ns per loop")
					}
					s.Calibration = n
				case "default_policy":
					p, err := g.val.string(path)
					if err != nil {
						return nil, errAt(path, "%v", err)
					}
					if _, err := policy(p); err != nil {
						return nil, errAt(path, "%v", err)
					}
					defaultPolicy = p
				}
			}
		default:
			return nil, errAt(m.key, "unsupported key %q (an rt-app file has tasks, global and resources)", m.key)
		}
	}
	if tasks == nil {
		return nil, errAt("$", "no \"tasks\" object")
	}
	if tasks.kind != 'o' || len(tasks.obj) == 0 {
		return nil, errAt("tasks", "must be an object with at least one task")
	}
	for _, m := range tasks.obj {
		t, err := parseTask(m.key, m.val, defaultPolicy)
		if err != nil {
			return nil, err
		}
		s.Tasks = append(s.Tasks, t)
	}
	return s, s.validate()
}

func policy(p string) (sched.Policy, error) {
	switch p {
	case "SCHED_OTHER":
		return sched.SchedNormal, nil
	case "SCHED_BATCH":
		return sched.SchedBatch, nil
	case "SCHED_IDLE":
		return sched.SchedIdle, nil
	case "SCHED_FIFO", "SCHED_RR", "SCHED_DEADLINE":
		return 0, fmt.Errorf("policy %s is not modelled: schedlab simulates the fair class only", p)
	}
	return 0, fmt.Errorf("unknown policy %q", p)
}

func parseTask(name string, v value, defaultPolicy string) (*Task, error) {
	path := "tasks." + name
	if v.kind != 'o' {
		return nil, errAt(path, "must be an object")
	}
	t := &Task{Name: name, Instances: 1, Loop: -1, PolicyStr: defaultPolicy}
	t.Policy, _ = policy(defaultPolicy)
	var phases *value
	var direct []member
	for _, m := range v.obj {
		p := path + "." + m.key
		switch m.key {
		case "instance":
			n, err := m.val.int(p)
			if err != nil || n < 0 || n > 1<<16 {
				return nil, errAt(p, "must be an integer 0..65536")
			}
			t.Instances = int(n)
		case "delay":
			n, err := m.val.int(p)
			if err != nil || n < 0 {
				return nil, errAt(p, "must be a non-negative number of usec")
			}
			t.Delay = n
		case "loop":
			n, err := m.val.int(p)
			if err != nil || n == 0 || n < -1 {
				return nil, errAt(p, "must be -1 or a positive count")
			}
			t.Loop = n
		case "priority":
			n, err := m.val.int(p)
			if err != nil || n < -20 || n > 19 {
				return nil, errAt(p, "must be a nice value -20..19")
			}
			t.Nice = int(n)
		case "policy":
			s, err := m.val.string(p)
			if err != nil {
				return nil, errAt(p, "%v", err)
			}
			if t.Policy, err = policy(s); err != nil {
				return nil, errAt(p, "%v", err)
			}
			t.PolicyStr = s
		case "cpus":
			if m.val.kind != 'a' || len(m.val.arr) == 0 {
				return nil, errAt(p, "must be a non-empty array of CPU numbers")
			}
			for _, c := range m.val.arr {
				n, err := c.int(p)
				if err != nil || n < 0 || n > 1<<16 {
					return nil, errAt(p, "must be an array of CPU numbers")
				}
				t.CPUs = append(t.CPUs, int(n))
			}
		case "taskgroup":
			s, err := m.val.string(p)
			if err != nil || !strings.HasPrefix(s, "/") {
				return nil, errAt(p, "must be a cgroup path starting with /")
			}
			t.Taskgroup = s
		case "phases":
			phases = &m.val
		default:
			if _, ok := eventKind(m.key); ok {
				direct = append(direct, m)
				continue
			}
			return nil, errAt(p, "unsupported key %q", m.key)
		}
	}
	if phases != nil {
		if len(direct) > 0 {
			return nil, errAt(path+"."+direct[0].key, "events must be inside the phases when the task has phases")
		}
		if phases.kind != 'o' || len(phases.obj) == 0 {
			return nil, errAt(path+".phases", "must be an object with at least one phase")
		}
		for _, m := range phases.obj {
			ph, err := parsePhase(path+".phases."+m.key, m.key, m.val.obj, m.val.kind == 'o', true)
			if err != nil {
				return nil, err
			}
			t.Phases = append(t.Phases, ph)
		}
	} else {
		ph, err := parsePhase(path, "", direct, true, false)
		if err != nil {
			return nil, err
		}
		t.Phases = []Phase{ph}
	}
	return t, nil
}

func eventKind(key string) (EventKind, bool) {
	for _, p := range eventPrefixes {
		if strings.HasPrefix(key, p.prefix) {
			return p.kind, true
		}
	}
	return 0, false
}

func parsePhase(path, name string, members []member, isObj, own bool) (Phase, error) {
	ph := Phase{Name: name, Loop: 1}
	if !isObj {
		return ph, errAt(path, "a phase must be an object")
	}
	for _, m := range members {
		p := path + "." + m.key
		if own && m.key == "loop" {
			n, err := m.val.int(p)
			if err != nil || n < 1 {
				return ph, errAt(p, "must be a positive count")
			}
			ph.Loop = n
			continue
		}
		kind, ok := eventKind(m.key)
		if !ok {
			if own {
				switch m.key {
				case "cpus", "priority", "policy", "taskgroup", "util_min", "util_max", "dl-runtime", "dl-period", "dl-deadline", "nodes_membind":
					return ph, errAt(p, "unsupported key %q (schedlab takes scheduling settings at task level only)", m.key)
				}
			}
			return ph, errAt(p, "unsupported key %q", m.key)
		}
		if kind < 0 {
			return ph, errAt(p, "unsupported event %q (schedlab models run, runtime, sleep, timer, lock, unlock, barrier, fork, yield)", m.key)
		}
		ev := Event{Kind: kind, Key: m.key}
		var err error
		switch kind {
		case EvRun, EvRuntime, EvSleep:
			ev.Usec, err = m.val.int(p)
			if err == nil && (ev.Usec < 0 || ev.Usec > 1<<40) {
				err = fmt.Errorf("must be a non-negative number of usec")
			}
		case EvLock, EvUnlock, EvBarrier, EvFork, EvYield:
			ev.Ref, err = m.val.string(p)
		case EvTimer:
			if m.val.kind != 'o' {
				err = fmt.Errorf("must be an object with ref, period and mode")
				break
			}
			for _, x := range m.val.obj {
				xp := p + "." + x.key
				switch x.key {
				case "ref":
					ev.Ref, err = x.val.string(xp)
				case "period":
					ev.Usec, err = x.val.int(xp)
					if err == nil && (ev.Usec <= 0 || ev.Usec > 1<<40) {
						err = fmt.Errorf("period must be a positive number of usec")
					}
				case "mode":
					var mode string
					mode, err = x.val.string(xp)
					if err == nil && mode != "relative" && mode != "absolute" {
						err = fmt.Errorf("mode must be relative or absolute")
					}
					ev.Abs = mode == "absolute"
				default:
					return ph, errAt(xp, "unsupported key %q", x.key)
				}
				if err != nil {
					return ph, errAt(xp, "%v", err)
				}
			}
			if ev.Ref == "" || ev.Usec == 0 {
				err = fmt.Errorf("a timer needs ref and period")
			}
			ev.Unique = strings.HasPrefix(ev.Ref, "unique")
		}
		if err != nil {
			return ph, errAt(p, "%v", err)
		}
		ph.Events = append(ph.Events, ev)
	}
	if len(ph.Events) == 0 {
		return ph, errAt(path, "no events")
	}
	return ph, nil
}

// validate checks references between tasks and counts barrier users.
func (s *Spec) validate() error {
	byName := map[string]*Task{}
	for _, t := range s.Tasks {
		byName[t.Name] = t
	}
	forever := false
	for _, t := range s.Tasks {
		if t.Loop == -1 {
			forever = true
		}
		used := map[string]bool{}
		for _, ph := range t.Phases {
			for _, ev := range ph.Events {
				path := "tasks." + t.Name + "." + ev.Key
				switch ev.Kind {
				case EvFork:
					if byName[ev.Ref] == nil {
						return errAt(path, "fork of unknown task %q", ev.Ref)
					}
				case EvBarrier:
					if t.Instances == 0 {
						return errAt(path, "a barrier cannot be used by a task started by fork (instance 0)")
					}
					if !used[ev.Ref] {
						used[ev.Ref] = true
						s.Barriers[ev.Ref] += t.Instances
					}
				}
			}
		}
	}
	if forever && s.Duration < 0 {
		return errAt("global.duration", "a task loops forever (loop -1, the default): set a duration")
	}
	return nil
}
