package experiment

import (
	"github.com/schedlab/schedlab/internal/engine"
	"reflect"
	"strings"
	"testing"

	"github.com/schedlab/schedlab/internal/fileerr"
	"github.com/schedlab/schedlab/internal/sched"
	"github.com/schedlab/schedlab/internal/sim"
)

func TestParseCommand(t *testing.T) {
	for _, tc := range []struct {
		cmd    string
		name   string
		flag   string
		values []string
		args   []string // for the first value
	}{
		{"hackbench -p -T -l 2000 -g 1,2,4", "groups", "-g", []string{"1", "2", "4"}, []string{"-p", "-T", "-l", "2000", "-g", "1"}},
		{"hackbench -p -g1,2", "groups", "-g", []string{"1", "2"}, []string{"-p", "-g1"}},
		{"hackbench --groups=3,5", "groups", "--groups", []string{"3", "5"}, []string{"--groups=3"}},
		{"schbench -m 2 -t 1,4,16 -r 1", "workers", "-t", []string{"1", "4", "16"}, []string{"-m", "2", "-t", "1", "-r", "1"}},
		{"tbench -t 2 1,8,64", "clients", "", []string{"1", "8", "64"}, []string{"-t", "2", "1"}},
		{"stream OMP_NUM_THREADS=4,16 NTIMES=5", "threads", "OMP_NUM_THREADS", []string{"4", "16"}, []string{"OMP_NUM_THREADS=4", "NTIMES=5"}},
		{"hackbench -l 10", "", "", []string{"-"}, []string{"-l", "10"}},
		{"rt-app x,y", "arg", "", []string{"x", "y"}, []string{"x"}},
	} {
		cmd, err := SplitCommand(tc.cmd)
		if err != nil {
			t.Fatal(err)
		}
		tool, args, p, err := ParseCommand(cmd)
		if err != nil {
			t.Errorf("%s: %v", tc.cmd, err)
			continue
		}
		if tool != cmd[0] || p.Name != tc.name || p.Flag != tc.flag || !reflect.DeepEqual(p.Values, tc.values) {
			t.Errorf("%s: tool %q param %+v", tc.cmd, tool, p)
		}
		if got := p.ArgsFor(args, p.Values[0]); !reflect.DeepEqual(got, tc.args) {
			t.Errorf("%s: args for %s = %q, want %q", tc.cmd, p.Values[0], got, tc.args)
		}
	}
	for _, bad := range []string{"hackbench -g 1,2 -l 1,2", "hackbench -g 1,,2", "hackbench -g 1,1", "hackbench --groups 1,2,x=,", ""} {
		cmd, _ := SplitCommand(bad)
		if _, _, _, err := ParseCommand(cmd); err == nil && bad != "hackbench --groups 1,2,x=," {
			t.Errorf("%q: no error", bad)
		}
	}
	if got, err := SplitCommand(`rt-app "a b.json" 'c'`); err != nil || !reflect.DeepEqual(got, []string{"rt-app", "a b.json", "c"}) {
		t.Errorf("SplitCommand quotes: %q %v", got, err)
	}
	if _, err := SplitCommand(`x "y`); err == nil {
		t.Error("unterminated quote accepted")
	}
}

// Errors in experiment files name the file and the line.
func TestSpecErrors(t *testing.T) {
	for _, tc := range []struct{ file, want string }{
		{"machines: [hikey]\nworkloads: [hackbench -g 1]\nbogus: 1\n", "e.yaml:3: unknown key \"bogus\""},
		{"machines: [hikey]\n", "e.yaml:1: no workloads"},
		{"workloads: [hackbench]\n", "e.yaml:1: no machines"},
		{"machines: [hikey]\nruns: 0\nworkloads: [hackbench]\n", "e.yaml:2: runs must be 1..100000"},
		{"machines: [hikey]\nseed: -1\nworkloads: [hackbench]\n", "e.yaml:2: seed must be a non-negative integer"},
		{"machines: [hikey]\nworkloads:\n  - run: hackbench -g 1,2 -l 3,4\n", "e.yaml:3: more than one ranged argument"},
		{"machines: [hikey]\nworkloads:\n  - hackbench -g 1\n  - hackbench -g 2\n", "e.yaml:4: workload name \"hackbench\" is used twice (first at line 3)"},
		{"machines: [hikey]\nworkloads:\n  - {name: x}\n", "e.yaml:3: workload has no run:"},
		{"machines: [hikey]\nworkloads: [hackbench]\nprofiles:\n  paper:\n    workloads: {nope: hackbench}\n", "e.yaml:5: profile paper: no workload named \"nope\""},
		{"machines: [hikey\n", "e.yaml:2: did not find expected ',' or ']'"},
		{"machines: [hikey]\nmachine: hikey\nworkloads: [hackbench]\n", "e.yaml:2: give machine or machines, not both"},
		{"machines: [hikey]\ncpus: 3-1\nworkloads: [hackbench]\n", "e.yaml:2: cpus: bad CPU range"},
		{"machines: [hikey]\nwarmup: 2\nworkloads: [hackbench]\n", "e.yaml:2: warmup must be a duration such as 1s or 500ms"},
		{"machines: [hikey]\nwarmup: -1s\nworkloads: [hackbench]\n", "e.yaml:2: warmup must be a duration"},
	} {
		_, err := Parse("e.yaml", []byte(tc.file))
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%q:\n got %v\nwant %s...", tc.file, err, tc.want)
		}
	}
}

// Resolve checks names against schedlab and reports at the key's line.
func TestResolveErrors(t *testing.T) {
	for _, tc := range []struct{ file, want string }{
		{"machines: [nosuch]\nworkloads: [hackbench]\n", "e.yaml:1: unknown machine \"nosuch\""},
		{"machines: [hikey]\nvariants: [nosuch]\nworkloads: [hackbench]\n", "e.yaml:2: unknown variant \"nosuch\""},
		{"machines: [hikey]\nvariants: [tip]\nworkloads: [hackbench]\n", "e.yaml:2: \"tip\" is the baseline"},
		{"machines: [hikey]\nkernel: v6.19\nvariants: [short-task-v3]\nworkloads: [hackbench]\n", "e.yaml:3: columns run on different kernels: tip v6.19; short-task-v3 v6.0 (its variant's baseline): compare across kernels with --mixed-kernels"},
		{"machines: [hikey]\nkernel: v9\nworkloads: [hackbench]\n", "e.yaml:2: unknown kernel"},
		{"machines: [hikey]\nworkloads:\n  - nosuchtool 1,2\n", "e.yaml:3: unknown workload \"nosuchtool\""},
		{"machines: [hikey]\nworkloads:\n  - hackbench -g 1,x -l 5\n", "e.yaml:3: hackbench with groups=x:"},
		{"machines: [hikey]\nfeatures: [NO_SUCH_FEATURE]\nworkloads: [hackbench]\n", "e.yaml:2:"},
		{"machines: [missing.yaml]\nworkloads: [hackbench]\n", "e.yaml:1: machine file missing.yaml"},
	} {
		s, err := Parse("e.yaml", []byte(tc.file))
		if err != nil {
			t.Errorf("%q: parse: %v", tc.file, err)
			continue
		}
		s.Dir = t.TempDir()
		_, err = Resolve(s, ResolveOptions{})
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%q:\n got %v\nwant %s...", tc.file, err, tc.want)
		}
	}
}

// A variant that applies to any baseline (no-tg-propagate) runs on its
// default kernel alone, on the other variants' kernel with them, and on
// any kernel the experiment names.
func TestResolveAnyBaselineVariant(t *testing.T) {
	for _, tc := range []struct{ file, want string }{
		{"machines: [hikey]\nvariants: [no-tg-propagate]\nworkloads: [hackbench]\n", "v6.19"},
		{"machines: [hikey]\nvariants: [no-tg-propagate, short-task-v3]\nworkloads: [hackbench]\n", "v6.0"},
		{"machines: [hikey]\nkernel: v5.12\nvariants: [no-tg-propagate]\nworkloads: [hackbench]\n", "v5.12"},
	} {
		s, err := Parse("e.yaml", []byte(tc.file))
		if err != nil {
			t.Fatalf("%q: parse: %v", tc.file, err)
		}
		s.Dir = t.TempDir()
		p, err := Resolve(s, ResolveOptions{})
		if err != nil {
			t.Errorf("%q: %v", tc.file, err)
		} else if len(p.Kernels) != 1 || p.Kernels[0] != tc.want {
			t.Errorf("%q: kernels %v, want [%s]", tc.file, p.Kernels, tc.want)
		}
	}
}

// Every built-in experiment parses, resolves, has a paper profile, and
// skips only what this schedlab lacks.
func TestBuiltins(t *testing.T) {
	want := []string{"blocked-avg-ratelimit", "idle-cores-nosmt", "short-task", "tg-propagate"}
	var names []string
	variants := map[string]bool{}
	for _, v := range sched.VariantNames() {
		variants[v] = true
	}
	for _, s := range Builtins() {
		names = append(names, s.Name)
		for _, profile := range []string{"", "paper"} {
			p, err := Resolve(s, ResolveOptions{AllowMissing: true, Profile: profile})
			if err != nil {
				t.Fatalf("%s %s: %v", s.Name, profile, err)
			}
			for _, sk := range p.Skipped {
				name := sk[strings.IndexByte(sk, ' ')+1:]
				if strings.HasPrefix(sk, "variant ") && variants[name] {
					t.Errorf("%s skips %s, which exists", s.Name, sk)
				}
				if strings.HasPrefix(sk, "workload ") {
					for _, w := range s.Workloads {
						if _, ok := sim.Lookup(w.Command[0]); w.Name == name && ok {
							t.Errorf("%s skips %s, which exists", s.Name, sk)
						}
					}
				}
			}
			if len(p.Points()) == 0 {
				t.Errorf("%s: no points", s.Name)
			}
		}
	}
	if !reflect.DeepEqual(names, want) {
		t.Errorf("built-ins %q, want %q", names, want)
	}
	if _, err := Load("no-such-experiment", ""); err == nil || !strings.Contains(err.Error(), "built in: blocked-avg-ratelimit") {
		t.Errorf("unknown experiment: %v", err)
	}
}

// Seeds depend on the master seed and the run index only: every variant,
// load and machine gets the same seed at the same run index.
func TestSeedsPaired(t *testing.T) {
	s, err := Parse("e.yaml", []byte("machines: [hikey, chromebook-7c]\nvariants: [short-task-v3, short-task-v4]\nruns: 4\nseed: 7\nworkloads:\n  - hackbench -l 5 -g 1,2\n  - schbench -m 1 -t 1,2 -r 1\n"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := Resolve(s, ResolveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(p.Points()); n != 2*3*2*2*4 {
		t.Fatalf("%d points", n)
	}
	keys := map[string]bool{}
	seeds := map[uint64]int{}
	for _, pt := range p.Points() {
		if pt.Seed != DeriveSeed(7, pt.Run) {
			t.Fatalf("%s: seed %d", pt.Key, pt.Seed)
		}
		keys[pt.Key] = true
		seeds[pt.Seed] = pt.Run
	}
	if len(keys) != len(p.Points()) || len(seeds) != 4 {
		t.Errorf("%d keys, %d distinct seeds", len(keys), len(seeds))
	}
	if DeriveSeed(7, 0) == DeriveSeed(8, 0) || DeriveSeed(7, 0) == DeriveSeed(7, 1) {
		t.Error("seeds collide")
	}
	if got := p.Points()[0].Key; got != "hikey__v6.0__hackbench__groups=1__tip__run000" {
		t.Errorf("first key %s", got)
	}
	// Shards partition the points.
	seen := 0
	for i := 0; i < 5; i++ {
		seen += len(p.Shard(i, 5))
	}
	if seen != len(p.Points()) {
		t.Errorf("shards cover %d of %d points", seen, len(p.Points()))
	}
}

func FuzzParseSpec(f *testing.F) {
	for _, s := range Builtins() {
		data, _ := BuiltinSource(s.Name)
		f.Add(string(data))
	}
	f.Add("machines: [hikey]\nworkloads: [hackbench -g 1,2]\n")
	f.Add("machines: [hikey]\nmixed_kernels: true\ncolumns:\n  - nowaw=--feature NO_WA_WEIGHT\n  - {name: cfs, kernel: v6.0, sysctls: [a=1]}\nworkloads: [hackbench]\n")
	f.Add("name: \"x\r") // an open quote at the end: once reported past the last line
	f.Fuzz(func(t *testing.T, text string) {
		s, err := Parse("f.yaml", []byte(text))
		if err != nil {
			fe, ok := err.(*fileerr.Error)
			if !ok {
				t.Fatalf("error %T %v is not a *fileerr.Error", err, err)
			}
			if lines := fileerr.LineCount([]byte(text)); fe.Line < 1 || fe.Line > lines {
				t.Fatalf("line %d of a %d-line input: %v", fe.Line, lines, err)
			}
			return
		}
		for _, w := range s.Workloads {
			if len(w.Command) == 0 || w.Name == "" {
				t.Fatalf("workload %+v", w)
			}
		}
	})
}

func FuzzParseCommand(f *testing.F) {
	f.Add("hackbench -p -T -l 2000 -g 1,2,4")
	f.Add("stream OMP_NUM_THREADS=4,16")
	f.Add("tbench --x=1,2")
	f.Fuzz(func(t *testing.T, text string) {
		cmd, err := SplitCommand(text)
		if err != nil || len(cmd) == 0 {
			return
		}
		_, args, p, err := ParseCommand(cmd)
		if err != nil {
			return
		}
		for _, v := range p.Values {
			if len(p.ArgsFor(args, v)) != len(args) {
				t.Fatal("ArgsFor changed the argument count")
			}
		}
	})
}

// cpus: confines every run as taskset -c does (run.Config.CPUs).
func TestSpecCPUs(t *testing.T) {
	s, err := Parse("e.yaml", []byte("machines: [hikey]\ncpus: 4-7\nworkloads: [hackbench -p -T -l 5 -g 1]\n"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := Resolve(s, ResolveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pt := p.Points()[0]
	if cfg := p.RunConfig(&pt, ""); cfg.CPUs != "4-7" {
		t.Fatalf("run config cpus %q", cfg.CPUs)
	}
}

// warmup: reaches the run configuration of the workloads that can run back
// to back, and only theirs.
func TestSpecWarmup(t *testing.T) {
	s, err := Parse("e.yaml", []byte("machines: [hikey]\nwarmup: 500ms\nworkloads: [hackbench -l 5 -g 1, tbench 1]\n"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := Resolve(s, ResolveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]engine.Time{}
	for _, pt := range p.Points() {
		cfg := p.RunConfig(&pt, "")
		got[cfg.Tool] = cfg.Warmup
	}
	if got["hackbench"] != 500*engine.Millisecond || got["tbench"] != 0 {
		t.Errorf("warm-ups by tool %v, want hackbench 500ms, tbench none", got)
	}
}
