package hackbench

import (
	"bytes"
	"errors"
	"github.com/schedlab/schedlab/internal/golden"
	"github.com/schedlab/schedlab/internal/kernels"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/schedlab/schedlab/internal/costmodel"
	"github.com/schedlab/schedlab/internal/cpumask"
	"github.com/schedlab/schedlab/internal/engine"
	"github.com/schedlab/schedlab/internal/sched"
	"github.com/schedlab/schedlab/internal/topology"
	"github.com/schedlab/schedlab/internal/workload"
)

func kernel(t testing.TB, machine string, seed uint64) *sched.Kernel {
	spec, err := topology.Load(machine)
	if err != nil {
		t.Fatal(err)
	}
	topo, err := topology.Build(spec, topology.Options{})
	if err != nil {
		t.Fatal(err)
	}
	k, err := sched.New(engine.New(seed), topo, sched.MustBaseline(kernels.V619))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func runBench(t testing.TB, machine string, cfg Config) (*Bench, *sched.Kernel, string) {
	k := kernel(t, machine, 1)
	b := New(cfg)
	if err := b.Start(k); err != nil {
		t.Fatal(err)
	}
	for !b.Done() {
		if k.Eng.Pending() == 0 {
			t.Fatalf("deadlock at %v", k.Now())
		}
		k.Eng.RunUntil(k.Now() + engine.Millisecond)
	}
	var out bytes.Buffer
	b.Report(&out)
	return b, k, out.String()
}

var timeRE = regexp.MustCompile(`\d+\.\d\d\d`)

// The output is the real tools' output with the measured time replaced.
// testdata/real holds output captured from Debian 12's rt-tests 2.4
// hackbench and perf 6.1 with the arguments in the file name.
func TestFormatMatchesRealTools(t *testing.T) {
	files, _ := filepath.Glob("testdata/real/*.txt")
	if len(files) == 0 {
		t.Fatal("no captured outputs")
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".txt")
		var cfg Config
		var err error
		switch {
		case strings.HasPrefix(name, "rt-tests-2.4-hackbench-"):
			cfg, err = ParseRTTests(argsOf(strings.TrimPrefix(name, "rt-tests-2.4-hackbench-")))
		case strings.HasPrefix(name, "perf-6.1-messaging-simple-"):
			cfg, err = ParsePerfCommand(append([]string{"bench", "--format=simple", "sched", "messaging"}, argsOf(strings.TrimPrefix(name, "perf-6.1-messaging-simple-"))...))
		case strings.HasPrefix(name, "perf-6.1-messaging-"):
			cfg, err = ParsePerf(argsOf(strings.TrimPrefix(name, "perf-6.1-messaging-")))
		default:
			t.Fatalf("%s: unknown capture", f)
		}
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		real, _ := os.ReadFile(f)
		_, _, got := runBench(t, "hikey", cfg)
		want := timeRE.ReplaceAllString(string(real), "N.NNN")
		if g := timeRE.ReplaceAllString(got, "N.NNN"); g != want {
			t.Errorf("%s:\n--- real\n%s--- schedlab\n%s", f, want, g)
		}
	}
}

// argsOf turns "p-T-l200-g2" into ["-p", "-T", "-l200", "-g2"].
func argsOf(s string) []string {
	var out []string
	for _, a := range strings.Split(s, "-") {
		out = append(out, "-"+a)
	}
	return out
}

// Golden outputs of simulated runs: the numbers change only when the model
// does (go test -rewrite rewrites them).
func TestGolden(t *testing.T) {
	for _, c := range []struct {
		file string
		args []string
		perf bool
	}{
		{"hikey-p-T-l50-g2.golden", []string{"-p", "-T", "-l", "50", "-g", "2"}, false},
		{"hikey-l20-g2-f5-s1000.golden", []string{"-l", "20", "-g", "2", "-f", "5", "-s", "1000"}, false},
		{"hikey-perf-g1-l20.golden", []string{"-g", "1", "-l", "20"}, true},
	} {
		var cfg Config
		var err error
		if c.perf {
			cfg, err = ParsePerf(c.args)
		} else {
			cfg, err = ParseRTTests(c.args)
		}
		if err != nil {
			t.Fatal(err)
		}
		_, _, got := runBench(t, "hikey", cfg)
		golden.Check(t, filepath.Join("testdata", c.file), []byte(got))
	}
}

// Every message sent is received, every child exits, and the parent's
// barrier releases all children at once (one wakeup each from the wake
// channel) only after all have checked in.
func TestStructure(t *testing.T) {
	for _, pipe := range []bool{true, false} {
		cfg := DefaultConfig()
		cfg.Groups, cfg.Fds, cfg.Loops, cfg.Pipe, cfg.Threads = 2, 4, 30, pipe, true
		b, k, _ := runBench(t, "hikey", cfg)
		if b.received != b.total || b.total != 2*4*4*30 {
			t.Fatalf("pipe=%v: received %d of %d", pipe, b.received, b.total)
		}
		if len(k.Tasks) != 1+2*2*4 {
			t.Fatalf("%d tasks", len(k.Tasks))
		}
		for _, task := range k.Tasks {
			if task.State != sched.TaskDead {
				t.Fatalf("pipe=%v: %s[%d] did not exit (%v)", pipe, task.Comm, task.PID, task.State)
			}
			if task != b.parent.t && task.Created > b.t0 {
				t.Fatal("child created after t0")
			}
		}
		if b.t1 <= b.t0 {
			t.Fatal("no time measured")
		}
	}
}

// Partial messages: a datasize larger than a pipe forces partial writes
// and short reads; everything still arrives.
func TestLargeMessages(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Groups, cfg.Fds, cfg.Loops, cfg.DataSize, cfg.Pipe = 1, 2, 3, 100000, true
	b, _, _ := runBench(t, "hikey", cfg)
	if b.received != 12 {
		t.Fatalf("received %d", b.received)
	}
}

func TestDeterministic(t *testing.T) {
	cfg, _ := ParseRTTests([]string{"-T", "-l", "30", "-g", "3"})
	_, k1, out1 := runBench(t, "zen3-2s-nps1", cfg)
	_, k2, out2 := runBench(t, "zen3-2s-nps1", cfg)
	if out1 != out2 || k1.Eng.Events() != k2.Eng.Events() || k1.Now() != k2.Now() {
		t.Fatalf("two runs differ:\n%s%d events\n%s%d events", out1, k1.Eng.Events(), out2, k2.Eng.Events())
	}
}

func TestParse(t *testing.T) {
	cfg, err := ParseRTTests([]string{"-p", "-T", "-l", "20000", "-g", "4"})
	if err != nil || !cfg.Pipe || !cfg.Threads || cfg.Loops != 20000 || cfg.Groups != 4 || cfg.Fds != 20 || cfg.DataSize != 100 {
		t.Fatalf("%+v %v", cfg, err)
	}
	cfg, err = ParseRTTests([]string{"--fds=5", "-s", "64", "-TP", "-l5x"})
	if err != nil || cfg.Fds != 5 || cfg.DataSize != 64 || cfg.Threads || cfg.Loops != 5 {
		t.Fatalf("%+v %v", cfg, err)
	}
	cfg, err = ParsePerf([]string{"-p", "-t", "-g", "8", "--nr_loops=100000"})
	if err != nil || !cfg.Pipe || !cfg.Threads || cfg.Groups != 8 || cfg.Loops != 100000 || cfg.Fds != 20 {
		t.Fatalf("%+v %v", cfg, err)
	}
	for _, c := range []struct {
		perf bool
		args []string
		want string
	}{
		{false, []string{"-l", "0"}, "hackbench: --loops|-l requires an integer > 0"},
		{false, []string{"-f", "abc"}, "hackbench: --fds|-f requires an integer > 0"},
		{false, []string{"-x"}, "hackbench: invalid option -- 'x'"},
		{false, []string{"--bogus"}, "hackbench: unrecognized option '--bogus'"},
		{false, []string{"-p", "-i"}, "hackbench: --pipe|-p and --inet|-i cannot be used together"},
		{true, []string{"-x"}, "perf bench sched messaging: unknown switch `x'"},
		{true, []string{"-g"}, "perf bench sched messaging: switch `g' requires a value"},
		{true, []string{"--fds=3"}, "perf bench sched messaging: unknown option `fds=3'"},
		{true, []string{"-g", "x"}, "perf bench sched messaging: switch `g' expects a numerical value"},
	} {
		var err error
		if c.perf {
			_, err = ParsePerf(c.args)
		} else {
			_, err = ParseRTTests(c.args)
		}
		if err == nil || err.Error() != c.want {
			t.Errorf("%v: %v, want %q", c.args, err, c.want)
		}
	}
	if _, err := ParseRTTests([]string{"-h"}); !errors.Is(err, workload.ErrHelp) {
		t.Fatal(err)
	}
}

func FuzzParseRTTests(f *testing.F) {
	f.Add("-p -T -l 20000 -g 4")
	f.Add("--datasize=0 -i")
	f.Fuzz(func(t *testing.T, s string) {
		cfg, err := ParseRTTests(strings.Fields(s))
		if err != nil {
			if strings.Contains(err.Error(), "\n") || !strings.HasPrefix(err.Error(), "hackbench: ") && !errors.Is(err, workload.ErrHelp) {
				t.Fatalf("bad error %q", err)
			}
			return
		}
		if cfg.Groups <= 0 || cfg.Fds <= 0 || cfg.Loops <= 0 || cfg.DataSize <= 0 {
			t.Fatalf("accepted %+v", cfg)
		}
	})
}

// FuzzParsePerf: perf bench sched messaging takes -g and -l as
// OPT_UINTEGER with no lower bound (tools/perf/bench/sched-messaging.c
// checks neither; -g 0 runs nothing and prints "0 groups == 0 processes
// run"), unlike rt-tests' hackbench, which wants integers > 0. So an
// accepted command has non-negative groups and loops, perf's fixed 20 fds
// and 100-byte messages, and parses back to the same configuration when
// written out again.
func FuzzParsePerf(f *testing.F) {
	f.Add("bench sched messaging -p -t -g 4 -l 100")
	f.Add("bench --format=simple sched messaging")
	f.Add("bench sched messaging -g 0 -l 0")
	f.Fuzz(func(t *testing.T, s string) {
		cfg, err := ParsePerfCommand(strings.Fields(s))
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("bad error %q", err)
			}
			return
		}
		if cfg.Flavour != PerfBench || cfg.Groups < 0 || cfg.Loops < 0 || cfg.Fds != 20 || cfg.DataSize != 100 {
			t.Fatalf("accepted %+v", cfg)
		}
		args := []string{"bench"}
		if cfg.Simple {
			args = append(args, "--format=simple")
		}
		args = append(args, "sched", "messaging", "-g", strconv.Itoa(cfg.Groups), "-l", strconv.Itoa(cfg.Loops))
		if cfg.Pipe {
			args = append(args, "-p")
		}
		if cfg.Threads {
			args = append(args, "-t")
		}
		again, err := ParsePerfCommand(args)
		if err != nil || !reflect.DeepEqual(again, cfg) {
			t.Fatalf("%q parsed to %+v; written out as %q it parses to %+v (%v)", s, cfg, args, again, err)
		}
	})
}

// TestParseZeroGroupsAndLoops pins the difference FuzzParsePerf relies on:
// rt-tests rejects -g 0 and -l 0, perf accepts both.
// Reference: rt-tests src/hackbench/hackbench.c (process_options);
// tools/perf/bench/sched-messaging.c (options: OPT_UINTEGER).
func TestParseZeroGroupsAndLoops(t *testing.T) {
	for _, a := range [][]string{{"-g", "0"}, {"-l", "0"}} {
		if _, err := ParseRTTests(a); err == nil {
			t.Errorf("hackbench %v accepted", a)
		}
		cfg, err := ParsePerf(a)
		if err != nil {
			t.Errorf("perf bench sched messaging %v: %v", a, err)
		}
		if (a[0] == "-g" && cfg.Groups != 0) || (a[0] == "-l" && cfg.Loops != 0) {
			t.Errorf("perf bench sched messaging %v: %+v", a, cfg)
		}
	}
}

// -i charges loopback TCP's call costs, also after the run installs the
// machine's costs (SetCosts replaces the whole table; the parser used to
// copy TCP's figures into the socket fields, which that overwrote).
func TestInetChargesTCP(t *testing.T) {
	cfg, err := ParseRTTests([]string{"-i", "-g", "1"})
	if err != nil {
		t.Fatal(err)
	}
	b := New(cfg)
	c := costmodel.DefaultSyscalls()
	c.TCPSend, c.TCPRecv, c.UnixSend, c.UnixRecv = 7000, 5000, 11, 13
	b.SetCosts(c)
	ch := b.newChan()
	if got, want := ch.writeCost(&b.cfg.Costs, 100), c.TCPSendCost(100); got != want {
		t.Errorf("-i write of 100 B costs %v, want TCP's %v", got, want)
	}
	if got, want := ch.readCost(&b.cfg.Costs, 100), c.TCPRecvCost(100); got != want {
		t.Errorf("-i read of 100 B costs %v, want TCP's %v", got, want)
	}
	cfg, _ = ParseRTTests([]string{"-g", "1"})
	b = New(cfg)
	b.SetCosts(c)
	if got, want := b.newChan().writeCost(&b.cfg.Costs, 100), c.UnixSendCost(100); got != want {
		t.Errorf("AF_UNIX write of 100 B costs %v, want %v", got, want)
	}
}

// With model_kobj_locks a pipe hackbench's calls wait for their pipe's
// mutex (the twenty writers of one receiver's pipe, on a machine with CPUs
// to spare, meet there often), and the run reports how often and for how
// long, no more in total than its 80 tasks spinning all along. Without it the
// metrics are absent. Sockets have no modelled lock. (The run's time is
// not checked: the waits also shift the tasks' wakeups and placement, and
// without the cost model this run is shorter with them.)
func TestPipeMutexMetrics(t *testing.T) {
	run := func(locks bool, args ...string) map[string]float64 {
		cfg, err := ParseRTTests(args)
		if err != nil {
			t.Fatal(err)
		}
		k := kernel(t, "zen3-2s-nps1", 1)
		k.S.KobjLocks = locks
		b := New(cfg)
		if err := b.Start(k); err != nil {
			t.Fatal(err)
		}
		for !b.Done() {
			k.Eng.RunUntil(k.Now() + engine.Millisecond)
		}
		m := map[string]float64{}
		for _, x := range b.Metrics() {
			m[x.Name] = x.Value
		}
		return m
	}
	on, off := run(true, "-p", "-T", "-g", "2", "-l", "100"), run(false, "-p", "-T", "-g", "2", "-l", "100")
	if _, ok := off["pipe_mutex_waits"]; ok {
		t.Errorf("without locks the run reports pipe_mutex_waits: %v", off)
	}
	if on["pipe_mutex_waits"] <= 0 || on["pipe_mutex_wait_s"] <= 0 || on["pipe_mutex_wait_s"] > on["time_s"]*80 {
		t.Errorf("with locks %v: want waits, no more than the 80 tasks spinning all along", on)
	}
	if sock := run(true, "-T", "-g", "2", "-l", "100"); sock["pipe_mutex_waits"] != 0 {
		t.Errorf("socket hackbench reports pipe mutex waits: %v", sock)
	}
}

// A child's own start (thread_start_ns) decides where fork balancing puts
// the next: with none, each child has written "ready" and gone to sleep by
// the time the parent forks the next one, so the next finds the same idle
// CPUs and the same idlest group as the previous did
// (sched_balance_find_dst_group, _group_cpu) and the children pile up on
// the first CPU of a few LLCs; with a start longer than the parent's
// thread_create_ns the previous children are still running, so their LLCs
// count fewer idle CPUs and the next go elsewhere. Counted where the 160
// children wait at the start barrier: the most crowded CPU.
func TestChildStartSpreadsForks(t *testing.T) {
	crowd := func(start engine.Time) (most, cpus int) {
		cfg, err := ParseRTTests([]string{"-p", "-T", "-g", "4", "-l", "1"})
		if err != nil {
			t.Fatal(err)
		}
		cfg.Costs.ThreadStart = start
		k := kernel(t, "zen3-2s-nps1", 1)
		b := New(cfg)
		if err := b.Start(k); err != nil {
			t.Fatal(err)
		}
		for !b.started {
			if k.Eng.Pending() == 0 {
				t.Fatalf("deadlock at %v", k.Now())
			}
			k.Eng.RunUntil(k.Now() + 10*engine.Microsecond)
		}
		on := map[cpumask.CPU]int{}
		for _, ch := range b.children {
			on[ch.t.CPU()]++
			most = max(most, on[ch.t.CPU()])
		}
		return most, len(on)
	}
	start := 3 * costmodel.DefaultSyscalls().ThreadCreate
	mostNone, cpusNone := crowd(0)
	mostLong, cpusLong := crowd(start)
	t.Logf("without a start: %d CPUs, at most %d children on one; with %v: %d CPUs, at most %d", cpusNone, mostNone, start, cpusLong, mostLong)
	if mostNone < 30 || 4*mostLong > 3*mostNone {
		t.Errorf("the most crowded CPU holds %d children without a start and %d with one: want many without and at most three quarters as many with", mostNone, mostLong)
	}
}

// With -T every read, write and poll takes a reference on its struct file
// (model_shared_fdtable, kobj.File): 2 × groups × fds² × loops messages,
// each a write and a read of 100 bytes that never comes back short; each
// of the 2 × fds × groups children writes "ready" and polls the wake
// pipe, the parent reads each child's byte and writes the wake byte once:
// 2M + 3C + 1 references, each costing at least fget_shared_ns (more when
// the f_count line was on another CPU). With -P the children have their
// own tables: no reference, and the run is the same to the nanosecond with
// the setting on or off.
func TestSharedFdTableOnlyThreads(t *testing.T) {
	run := func(shared bool, args ...string) (*Bench, float64) {
		cfg, err := ParseRTTests(args)
		if err != nil {
			t.Fatal(err)
		}
		k := kernel(t, "zen3-2s-nps1", 1)
		k.S.SharedFdTable = shared
		p, err := costmodel.For(k.Topo.Spec)
		if err != nil {
			t.Fatal(err)
		}
		tab := costmodel.Compile(p, k.Topo.Spec)
		k.ApplyCosts(tab)
		cfg.Costs = tab.Syscalls
		b := New(cfg)
		if err := b.Start(k); err != nil {
			t.Fatal(err)
		}
		for !b.Done() {
			k.Eng.RunUntil(k.Now() + engine.Millisecond)
		}
		for _, x := range b.Metrics() {
			if x.Name == "time_s" {
				return b, x.Value
			}
		}
		t.Fatal("no time_s")
		return nil, 0
	}
	const groups, fds, loops = 2, 20, 50
	msgs, children := uint64(groups*fds*fds*loops), uint64(2*fds*groups)
	for _, ch := range [][]string{{"-p"}, {}} {
		for _, mode := range []string{"-T", "-P"} {
			args := append(append([]string{}, ch...), mode, "-g", "2", "-l", "50")
			b, on := run(true, args...)
			_, off := run(false, args...)
			fget := b.cfg.Costs.FgetShared
			if mode == "-P" {
				if b.fgets != 0 || on != off {
					t.Errorf("%v: %d references, %.6f s with model_shared_fdtable and %.6f s without: processes have private tables", args, b.fgets, on, off)
				}
				continue
			}
			if want := 2*msgs + 3*children + 1; b.fgets != want {
				t.Errorf("%v: %d references, want 2M + 3C + 1 = %d", args, b.fgets, want)
			}
			if fget <= 0 || b.fgetTime <= engine.Time(b.fgets)*fget {
				t.Errorf("%v: references cost %d ns, want more than %d × fget_shared_ns %d (some lines moved)", args, b.fgetTime, b.fgets, fget)
			}
		}
	}
}
