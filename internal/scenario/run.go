package scenario

import (
	"fmt"
	"github.com/schedlab/schedlab/internal/fileerr"
	"github.com/schedlab/schedlab/internal/kernels"
	"hash/fnv"
	"sort"
	"strconv"
	"strings"

	"github.com/schedlab/schedlab/internal/cpumask"
	"github.com/schedlab/schedlab/internal/engine"
	"github.com/schedlab/schedlab/internal/sched"
	"github.com/schedlab/schedlab/internal/topology"
)

// Runner executes scenario commands against one simulated kernel.
type Runner struct {
	// LoadMachine resolves a machine name or file (topology.Load by
	// default); tests may replace it.
	LoadMachine func(name string) (*topology.MachineSpec, error)

	k      *sched.Kernel
	tasks  map[string]*sched.Task
	names  []string
	events []string
	hash   uint64
	nev    uint64
}

// NewRunner returns a runner with no machine yet.
func NewRunner() *Runner {
	return &Runner{LoadMachine: topology.Load, tasks: map[string]*sched.Task{}, hash: fnvOffset}
}

const fnvOffset = 14695981039346656037

// Kernel returns the simulated kernel (nil before the machine command).
func (r *Runner) Kernel() *sched.Kernel { return r.k }

// RunFile parses and runs a whole scenario, returning each command's output.
func RunFile(file, text string) ([]*Command, []string, error) {
	cmds, err := Parse(file, text)
	if err != nil {
		return nil, nil, err
	}
	r := NewRunner()
	outs := make([]string, len(cmds))
	for i, c := range cmds {
		out, err := r.Exec(c)
		if err != nil {
			return cmds, outs, err
		}
		outs[i] = out
	}
	return cmds, outs, nil
}

// Exec runs one command and returns its output.
func (r *Runner) Exec(c *Command) (string, error) {
	h, ok := handlers[c.Name]
	if !ok {
		return "", c.errf("unknown command %q (see docs/scenarios.md)", c.Name)
	}
	if c.Name != "machine" && r.k == nil {
		return "", c.errf("%q before the machine command", c.Name)
	}
	if err := c.checkArgs(h.args); err != nil {
		return "", err
	}
	var b strings.Builder
	if err := h.fn(r, c, &b); err != nil {
		return "", err
	}
	return b.String(), nil
}

type handler struct {
	args []string // accepted argument keys
	fn   func(r *Runner, c *Command, b *strings.Builder) error
}

var handlers map[string]handler

func init() {
	handlers = map[string]handler{
		"machine":        {[]string{"name", "kernel", "hz", "seed", "variant"}, (*Runner).cmdMachine},
		"feature":        {nil, (*Runner).cmdFeature},
		"sysctl":         {nil, (*Runner).cmdSysctl},
		"cgroup":         {[]string{"path", "weight"}, (*Runner).cmdCgroup},
		"task":           {[]string{"name", "cpu", "affinity", "nice", "policy", "cgroup"}, (*Runner).cmdTask},
		"wake":           {[]string{"task", "from", "sync"}, (*Runner).cmdWake},
		"advance":        {[]string{"by", "to"}, (*Runner).cmdAdvance},
		"migrate":        {[]string{"task", "cpu"}, (*Runner).cmdMigrate},
		"move":           {[]string{"task", "cgroup"}, (*Runner).cmdMove},
		"rq":             {[]string{"cpu"}, (*Runner).cmdRq},
		"pelt":           {[]string{"task", "cpu", "cgroup"}, (*Runner).cmdPelt},
		"task-stats":     {[]string{"task"}, (*Runner).cmdTaskStats},
		"schedstat":      {[]string{"cpu"}, (*Runner).cmdSchedstat},
		"tasks":          {nil, (*Runner).cmdTasks},
		"update-blocked": {[]string{"cpu"}, (*Runner).cmdUpdateBlocked},
		"trace":          {nil, (*Runner).cmdTrace},
		"hash":           {nil, (*Runner).cmdHash},
		"time":           {nil, (*Runner).cmdTime},
	}
}

// Commands lists the scenario commands.
func Commands() []string {
	var out []string
	for n := range handlers {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

func (c *Command) errf(format string, args ...any) error {
	return fileerr.Errorf(c.File, c.Line, format, args...)
}

func (c *Command) checkArgs(allowed []string) error {
	if allowed == nil {
		return nil
	}
	for i, a := range c.Args {
		ok := false
		for _, k := range allowed {
			if a.Key == k {
				ok = true
			}
		}
		// A bare first argument is a positional value for some commands.
		if !ok && !(i == 0 && len(a.Vals) == 0) {
			return c.errf("%s: unknown argument %q (accepted: %s)", c.Name, a.Key, strings.Join(allowed, ", "))
		}
	}
	return nil
}

func (c *Command) arg(key string) (string, bool) {
	for _, a := range c.Args {
		if a.Key == key {
			return strings.Join(a.Vals, ","), true
		}
	}
	return "", false
}

func (c *Command) has(key string) bool {
	_, ok := c.arg(key)
	return ok
}

// positional returns a bare first argument ("advance 10ms").
func (c *Command) positional() (string, bool) {
	if len(c.Args) > 0 && len(c.Args[0].Vals) == 0 {
		return c.Args[0].Key, true
	}
	return "", false
}

func (c *Command) intArg(key string, def int) (int, error) {
	v, ok := c.arg(key)
	if !ok {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, c.errf("%s=%q is not an integer", key, v)
	}
	return n, nil
}

// MaxDuration is the longest duration ParseDuration reads: 10^18 ns,
// about 31.7 years, far from engine.Time's limit.
const MaxDuration = engine.Time(1e18)

// ParseDuration reads a decimal number and a unit, "8ms", "1.5s", ".25ms",
// "250us" (or "250µs"), "100ns", or a bare whole number of ns. The value is
// exact (no floating point) and rounded to the nearest ns, halves up.
func ParseDuration(s string) (engine.Time, error) {
	bad := func() (engine.Time, error) {
		return 0, fmt.Errorf("bad duration %q (a number and a unit: ns, us, ms, s; e.g. 1.5ms)", s)
	}
	num, digits := s, 0 // digits: the unit's ns as a power of ten
	for _, u := range []struct {
		suf    string
		digits int
	}{{"ns", 0}, {"us", 3}, {"µs", 3}, {"ms", 6}, {"s", 9}} {
		if strings.HasSuffix(s, u.suf) {
			num, digits = strings.TrimSuffix(s, u.suf), u.digits
			break
		}
	}
	whole, frac, dot := strings.Cut(num, ".")
	if whole == "" && frac == "" || dot && num == s || !allDigits(whole) || !allDigits(frac) {
		return bad()
	}
	// whole and the first digits of frac are ns; the next digit rounds.
	frac += strings.Repeat("0", digits+1)
	ns := whole + frac[:digits]
	ns = strings.TrimLeft(ns, "0")
	if len(ns) > 19 {
		return bad()
	}
	v, err := strconv.ParseInt("0"+ns, 10, 64)
	if err != nil {
		return bad()
	}
	if frac[digits] >= '5' {
		v++
	}
	if engine.Time(v) > MaxDuration {
		return 0, fmt.Errorf("bad duration %q: more than %d s", s, MaxDuration/engine.Second)
	}
	return engine.Time(v), nil
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func (r *Runner) cmdMachine(c *Command, b *strings.Builder) error {
	if r.k != nil {
		return c.errf("machine given twice")
	}
	name, ok := c.arg("name")
	if !ok {
		if name, ok = c.positional(); !ok {
			return c.errf("machine: name=NAME is required")
		}
	}
	kernel, _ := c.arg("kernel")
	if kernel == "" {
		kernel = kernels.V619
	}
	s, err := sched.Baseline(kernel)
	if err != nil {
		return c.errf("%v", err)
	}
	if hz, ok := c.arg("hz"); ok {
		if err := s.SetSysctl("hz", hz); err != nil {
			return c.errf("%v", err)
		}
	}
	if v, ok := c.arg("variant"); ok {
		if err := applyVariant(&s, v); err != nil {
			return c.errf("%v", err)
		}
	}
	seed, err := c.intArg("seed", 1)
	if err != nil {
		return err
	}
	spec, err := r.LoadMachine(name)
	if err != nil {
		return c.errf("%v", err)
	}
	topo, err := topology.Build(spec, sched.TopologyOptions(s))
	if err != nil {
		return c.errf("%v", err)
	}
	k, err := sched.New(engine.New(uint64(seed)), topo, s)
	if err != nil {
		return c.errf("%v", err)
	}
	r.k = k
	r.installHooks()
	fmt.Fprintf(b, "machine %s: %d CPUs, kernel %s, HZ=%d, seed %d\n", spec.Name, topo.NrCPUs, kernel, s.HZ, seed)
	return nil
}

// applyVariant is set by the variants support when present.
var applyVariant = func(s *sched.Settings, name string) error {
	return fmt.Errorf("unknown variant %q", name)
}

func (r *Runner) cmdFeature(c *Command, b *strings.Builder) error {
	if len(c.Args) == 0 {
		for _, f := range r.k.S.Features() {
			if f.Enabled {
				fmt.Fprintf(b, "%s ", f.Name)
			} else {
				fmt.Fprintf(b, "NO_%s ", f.Name)
			}
		}
		b.WriteString("\n")
		return nil
	}
	for _, a := range c.Args {
		if len(a.Vals) != 0 {
			return c.errf("feature: write NAME or NO_NAME, not %s=...", a.Key)
		}
		if err := r.k.S.SetFeature(a.Key); err != nil {
			return c.errf("%v", err)
		}
	}
	return nil
}

func (r *Runner) cmdSysctl(c *Command, b *strings.Builder) error {
	for _, a := range c.Args {
		if len(a.Vals) != 1 {
			return c.errf("sysctl: write name=value")
		}
		if a.Key == "hz" {
			return c.errf("sysctl: hz can only be set on the machine command")
		}
		if err := r.k.S.SetSysctl(a.Key, a.Vals[0]); err != nil {
			return c.errf("%v", err)
		}
	}
	if err := r.k.ApplySettings(); err != nil {
		return c.errf("%v", err)
	}
	return nil
}

func (r *Runner) cmdCgroup(c *Command, b *strings.Builder) error {
	path, ok := c.arg("path")
	if !ok {
		if path, ok = c.positional(); !ok {
			return c.errf("cgroup: path=/NAME is required")
		}
	}
	if !strings.HasPrefix(path, "/") || path == "/" || strings.HasSuffix(path, "/") {
		return c.errf("cgroup: path %q must look like /a or /a/b", path)
	}
	weight, err := c.intArg("weight", 100)
	if err != nil {
		return err
	}
	if g := r.k.Group(path); g != nil {
		if err := r.k.SetGroupWeight(g, weight); err != nil {
			return c.errf("%v", err)
		}
		return nil
	}
	i := strings.LastIndex(path, "/")
	parentPath := path[:i]
	if parentPath == "" {
		parentPath = "/"
	}
	parent := r.k.Group(parentPath)
	if parent == nil {
		return c.errf("cgroup: parent %s does not exist", parentPath)
	}
	if _, err := r.k.CreateGroup(parent, path[i+1:], weight); err != nil {
		return c.errf("%v", err)
	}
	return nil
}

func (r *Runner) cpuArg(c *Command, key string) (cpumask.CPU, bool, error) {
	v, ok := c.arg(key)
	if !ok {
		return 0, false, nil
	}
	v = strings.TrimPrefix(v, "cpu")
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 || n >= r.k.NrCPUs() {
		return 0, false, c.errf("%s=%s: not a CPU of this %d-CPU machine", key, v, r.k.NrCPUs())
	}
	return cpumask.CPU(n), true, nil
}

func (r *Runner) cmdTask(c *Command, b *strings.Builder) error {
	name, ok := c.arg("name")
	if !ok {
		return c.errf("task: name=NAME is required")
	}
	if _, dup := r.tasks[name]; dup {
		return c.errf("task %q exists", name)
	}
	cpu, _, err := r.cpuArg(c, "cpu")
	if err != nil {
		return err
	}
	spec := sched.TaskSpec{Comm: name, CPU: cpu}
	if aff, ok := c.arg("affinity"); ok {
		m, err := cpumask.Parse(r.k.NrCPUs(), aff)
		if err != nil {
			return c.errf("affinity: %v", err)
		}
		spec.Allowed = m
	}
	if spec.Nice, err = c.intArg("nice", 0); err != nil {
		return err
	}
	switch pol, _ := c.arg("policy"); pol {
	case "", "normal", "other":
	case "batch":
		spec.Policy = sched.SchedBatch
	case "idle":
		spec.Policy = sched.SchedIdle
	default:
		return c.errf("policy %q: use normal, batch or idle", pol)
	}
	if path, ok := c.arg("cgroup"); ok {
		if spec.Group = r.k.Group(path); spec.Group == nil {
			return c.errf("cgroup %s does not exist", path)
		}
	}
	prog, err := r.parseProgram(c)
	if err != nil {
		return err
	}
	spec.Prog = prog
	t, err := r.k.Fork(spec)
	if err != nil {
		return c.errf("%v", err)
	}
	r.tasks[name] = t
	r.names = append(r.names, name)
	fmt.Fprintf(b, "task %s pid=%d cpu=%d\n", name, t.PID, t.CPU())
	return nil
}

func (r *Runner) task(c *Command) (*sched.Task, error) {
	name, ok := c.arg("task")
	if !ok {
		if name, ok = c.positional(); !ok {
			return nil, c.errf("%s: task=NAME is required", c.Name)
		}
	}
	t, ok := r.tasks[name]
	if !ok {
		return nil, c.errf("no task named %q", name)
	}
	return t, nil
}

func (r *Runner) cmdWake(c *Command, b *strings.Builder) error {
	t, err := r.task(c)
	if err != nil {
		return err
	}
	from, _, err := r.cpuArg(c, "from")
	if err != nil {
		return err
	}
	flags := 0
	if c.has("sync") {
		flags |= sched.WFSync
	}
	r.k.SetThisCPU(from)
	if !r.k.WakeUp(t, flags) {
		fmt.Fprintf(b, "%s was not sleeping\n", t.Comm)
		return nil
	}
	fmt.Fprintf(b, "%s woken on cpu%d\n", t.Comm, t.CPU())
	return nil
}

func (r *Runner) cmdAdvance(c *Command, b *strings.Builder) error {
	now := r.k.Now()
	if v, ok := c.arg("to"); ok {
		d, err := ParseDuration(v)
		if err != nil {
			return c.errf("advance: %v", err)
		}
		if d < now {
			return c.errf("advance to=%s: that is before now (%s)", v, fmtTime(now))
		}
		r.k.Eng.RunUntil(d)
	} else {
		v, ok := c.arg("by")
		if !ok {
			if v, ok = c.positional(); !ok {
				return c.errf("advance: by=DURATION or to=TIME is required")
			}
		}
		d, err := ParseDuration(v)
		if err != nil {
			return c.errf("advance: %v", err)
		}
		r.k.Eng.RunUntil(now + d)
	}
	fmt.Fprintf(b, "time %s\n", fmtTime(r.k.Now()))
	return nil
}

func (r *Runner) cmdMigrate(c *Command, b *strings.Builder) error {
	t, err := r.task(c)
	if err != nil {
		return err
	}
	cpu, ok, err := r.cpuArg(c, "cpu")
	if err != nil {
		return err
	}
	if !ok {
		return c.errf("migrate: cpu=N is required")
	}
	from := t.CPU()
	if err := r.k.MigrateTask(t, cpu); err != nil {
		return c.errf("%v", err)
	}
	fmt.Fprintf(b, "%s cpu%d -> cpu%d\n", t.Comm, from, t.CPU())
	return nil
}

func (r *Runner) cmdMove(c *Command, b *strings.Builder) error {
	t, err := r.task(c)
	if err != nil {
		return err
	}
	path, ok := c.arg("cgroup")
	if !ok {
		return c.errf("move: cgroup=PATH is required")
	}
	g := r.k.Group(path)
	if g == nil {
		return c.errf("cgroup %s does not exist", path)
	}
	from := t.TG.Name
	r.k.MoveTask(t, g)
	fmt.Fprintf(b, "%s %s -> %s\n", t.Comm, from, g.Name)
	return nil
}

func (r *Runner) cpus(c *Command) ([]cpumask.CPU, error) {
	v, ok := c.arg("cpu")
	if !ok {
		var all []cpumask.CPU
		for i := 0; i < r.k.NrCPUs(); i++ {
			all = append(all, cpumask.CPU(i))
		}
		return all, nil
	}
	m, err := cpumask.Parse(r.k.NrCPUs(), v)
	if err != nil {
		return nil, c.errf("cpu=%s: %v", v, err)
	}
	return m.CPUs(), nil
}

func (r *Runner) cmdUpdateBlocked(c *Command, b *strings.Builder) error {
	cpus, err := r.cpus(c)
	if err != nil {
		return err
	}
	for _, cpu := range cpus {
		r.k.SchedBalanceUpdateBlockedAverages(cpu)
	}
	return nil
}

func (r *Runner) cmdTime(c *Command, b *strings.Builder) error {
	fmt.Fprintf(b, "time %s jiffies=%d\n", fmtTime(r.k.Now()), r.k.Jiffies())
	return nil
}

func (r *Runner) cmdTrace(c *Command, b *strings.Builder) error {
	for _, e := range r.events {
		b.WriteString(e)
		b.WriteByte('\n')
	}
	r.events = r.events[:0]
	return nil
}

func (r *Runner) cmdHash(c *Command, b *strings.Builder) error {
	fmt.Fprintf(b, "events=%d hash=%016x\n", r.nev, r.hash)
	return nil
}

// fmtTime prints a time as ftrace does: seconds with microseconds.
func fmtTime(t engine.Time) string {
	return fmt.Sprintf("%d.%06d", int64(t/engine.Second), int64(t%engine.Second)/1000)
}

func taskName(t *sched.Task) string {
	if t == nil {
		return "-"
	}
	if t.IsIdleTask() {
		return "<idle>"
	}
	return fmt.Sprintf("%s/%d", t.Comm, t.PID)
}

func (r *Runner) record(format string, args ...any) {
	line := fmt.Sprintf("%s ", fmtTime(r.k.Now())) + fmt.Sprintf(format, args...)
	r.events = append(r.events, line)
	h := fnv.New64a()
	var buf [8]byte
	for i := range buf {
		buf[i] = byte(r.hash >> (8 * i))
	}
	h.Write(buf[:])
	h.Write([]byte(line))
	r.hash = h.Sum64()
	r.nev++
}

func (r *Runner) installHooks() {
	h := &r.k.Hooks
	h.Switch = func(cpu cpumask.CPU, prev *sched.Task, st sched.TaskState, next *sched.Task) {
		r.record("cpu%d switch %s [%s] -> %s", cpu, taskName(prev), st, taskName(next))
	}
	h.Waking = func(p *sched.Task) { r.record("cpu%d waking %s", r.k.ThisCPU(), taskName(p)) }
	h.Wakeup = func(p *sched.Task, cpu cpumask.CPU) {
		r.record("cpu%d wakeup %s target=cpu%d", r.k.ThisCPU(), taskName(p), cpu)
	}
	h.WakeupNew = func(p *sched.Task, cpu cpumask.CPU) {
		r.record("cpu%d wakeup_new %s target=cpu%d", r.k.ThisCPU(), taskName(p), cpu)
	}
	h.Migrate = func(p *sched.Task, from, to cpumask.CPU) {
		r.record("migrate %s cpu%d -> cpu%d", taskName(p), from, to)
	}
	h.Fork = func(parent, child *sched.Task) {
		r.record("cpu%d fork %s -> %s", r.k.ThisCPU(), taskName(parent), taskName(child))
	}
	h.Exit = func(p *sched.Task) { r.record("cpu%d exit %s", r.k.ThisCPU(), taskName(p)) }
}
