package scenario

import (
	"strconv"
	"strings"

	"github.com/schedlab/schedlab/internal/engine"
	"github.com/schedlab/schedlab/internal/fileerr"
	"github.com/schedlab/schedlab/internal/sched"
)

// A task program in a scenario is a list of steps, one per input line or
// separated by ";":
//
//	run 8ms        compute for 8 ms of CPU time (at capacity 1024)
//	sleep 8ms      sleep for 8 ms
//	block          sleep until woken (by a wake step or command)
//	yield          sched_yield()
//	wake NAME      wake task NAME (add "sync" for WF_SYNC); takes no time
//	exit           exit
//	loop           start again from the first step (forever)
//	loop N         run the steps N times in all, then exit
//
// A program that reaches its end without loop exits.

type stepKind int

const (
	stepRun stepKind = iota
	stepSleep
	stepBlock
	stepYield
	stepWake
	stepExit
	stepLoop
)

type step struct {
	kind  stepKind
	d     engine.Time
	name  string
	sync  bool
	count int // loop N; 0 = forever
}

type program struct {
	r     *Runner
	steps []step
	pc    int
	iter  int
}

func (r *Runner) parseProgram(c *Command) (*program, error) {
	p := &program{r: r}
	for li, line := range c.Input {
		for _, part := range strings.Split(line, ";") {
			f := strings.Fields(part)
			if len(f) == 0 {
				continue
			}
			lineNo := c.InputLine + li
			bad := func(format string, args ...any) error {
				return fileerr.Errorf(c.File, lineNo, format, args...)
			}
			switch f[0] {
			case "run", "sleep":
				if len(f) != 2 {
					return nil, bad("%s takes one duration", f[0])
				}
				d, err := ParseDuration(f[1])
				if err != nil {
					return nil, bad("%s: %v", f[0], err)
				}
				k := stepRun
				if f[0] == "sleep" {
					k = stepSleep
				}
				p.steps = append(p.steps, step{kind: k, d: d})
			case "block", "yield", "exit":
				if len(f) != 1 {
					return nil, bad("%s takes no argument", f[0])
				}
				k := map[string]stepKind{"block": stepBlock, "yield": stepYield, "exit": stepExit}[f[0]]
				p.steps = append(p.steps, step{kind: k})
			case "wake":
				if len(f) < 2 || len(f) > 3 || (len(f) == 3 && f[2] != "sync") {
					return nil, bad("wake NAME [sync]")
				}
				p.steps = append(p.steps, step{kind: stepWake, name: f[1], sync: len(f) == 3})
			case "loop":
				n := 0
				if len(f) == 2 {
					var err error
					n, err = strconv.Atoi(f[1])
					if err != nil || n < 1 {
						return nil, bad("loop N needs a positive count")
					}
				} else if len(f) > 2 {
					return nil, bad("loop [N]")
				}
				p.steps = append(p.steps, step{kind: stepLoop, count: n})
			default:
				return nil, bad("unknown program step %q (run, sleep, block, yield, wake, exit, loop)", f[0])
			}
		}
	}
	if len(p.steps) == 0 {
		return nil, c.errf("task: the program is empty (give steps on the lines after the command)")
	}
	acts := false
	for i, s := range p.steps {
		if s.kind == stepLoop && i != len(p.steps)-1 {
			return nil, c.errf("task: loop must be the last step")
		}
		if s.kind != stepLoop && s.kind != stepWake {
			acts = true
		}
	}
	if !acts {
		return nil, c.errf("task: the program must run, sleep, block, yield or exit")
	}
	return p, nil
}

// Next implements sched.Program.
func (p *program) Next(k *sched.Kernel, t *sched.Task) sched.Op {
	for guard := 0; guard < 1000; guard++ {
		if p.pc >= len(p.steps) {
			return sched.Exit()
		}
		s := p.steps[p.pc]
		p.pc++
		switch s.kind {
		case stepRun:
			return sched.Run(s.d)
		case stepSleep:
			return sched.Sleep(s.d)
		case stepBlock:
			return sched.Block()
		case stepYield:
			return sched.Yield()
		case stepExit:
			return sched.Exit()
		case stepWake:
			target, ok := p.r.tasks[s.name]
			if !ok {
				p.r.record("cpu%d %s: wake of unknown task %q", k.ThisCPU(), taskName(t), s.name)
			} else {
				flags := 0
				if s.sync {
					flags = sched.WFSync
				}
				k.WakeUp(target, flags)
			}
		case stepLoop:
			p.iter++
			if s.count > 0 && p.iter >= s.count {
				return sched.Exit()
			}
			p.pc = 0
		}
	}
	panic("scenario: program loops without running, sleeping or blocking")
}
