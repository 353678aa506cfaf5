package experiment

import (
	"reflect"
	"strings"
	"testing"

	"github.com/schedlab/schedlab/internal/sched"
	"github.com/schedlab/schedlab/internal/sim"
)

func TestParseColumn(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Column
	}{
		{"nowaw=--feature NO_WA_WEIGHT", Column{Name: "nowaw", Features: []string{"NO_WA_WEIGHT"}}},
		{"cost=--sysctl migration_cost_ns=250000", Column{Name: "cost", Sysctls: []string{"migration_cost_ns=250000"}}},
		{" mix = --variant=short-task-v3 --feature 'NO_TTWU_QUEUE' --sysctl=a=1 --variant short-task-v4 --kernel v6.0",
			Column{Name: "mix", Kernel: "v6.0", Variants: []string{"short-task-v3", "short-task-v4"}, Features: []string{"NO_TTWU_QUEUE"}, Sysctls: []string{"a=1"}}},
		{"cfs=--kernel v6.0", Column{Name: "cfs", Kernel: "v6.0"}},
	} {
		got, err := ParseColumn(tc.in)
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%q: %+v, %v; want %+v", tc.in, got, err, tc.want)
		}
	}
	for _, tc := range []struct{ in, want string }{
		{"nowaw", "write NAME=FLAGS"},
		{"=--feature X", "a column needs a name"},
		{"tip=--feature X", "tip is the first column already"},
		{"a b=--feature X", `column name "a b"`},
		{"a__b=--feature X", `column name "a__b"`},
		{"x=", "column x sets nothing"},
		{"x=--featur NO_WA_WEIGHT", "column x: unknown flag --featur (a column takes --variant, --feature, --sysctl and --kernel)"},
		{"x=-f NO_WA_WEIGHT", "column x: unknown flag -f"},
		{"x=NO_WA_WEIGHT", `column x: "NO_WA_WEIGHT" is not a flag`},
		{"x=--feature", "column x: --feature needs a value"},
		{"x=--feature --sysctl a=1", "column x: --feature needs a value"},
		{"x=--feature=", "column x: --feature needs a value"},
		{"x=--kernel v6.0 --kernel v6.19", "column x: --kernel is given twice"},
		{"x=--sysctl migration_cost_ns", "column x: --sysctl migration_cost_ns: write NAME=VALUE"},
		{"x=--variant tip", "column x: --variant tip: tip is the baseline"},
		{"x=--feature 'A", "unterminated ' quote"},
	} {
		_, err := ParseColumn(tc.in)
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: error %v, want %q", tc.in, err, tc.want)
		}
	}
}

// A column parsed from its flags is the column: Flags writes back what
// ParseColumn reads.
func FuzzParseColumn(f *testing.F) {
	f.Add("nowaw=--feature NO_WA_WEIGHT")
	f.Add("x=--variant=short-task-v3 --sysctl a=1 --kernel v6.0")
	f.Add("x=--feature 'A B'")
	f.Fuzz(func(t *testing.T, s string) {
		c, err := ParseColumn(s)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error of more than one line: %q", err)
			}
			return
		}
		pc := PlanColumn{Name: c.Name, Kernel: c.Kernel, Variants: c.Variants, Features: c.Features, Sysctls: c.Sysctls}
		flags := pc.Flags()
		for _, v := range append(append(append([]string{c.Kernel}, c.Variants...), c.Features...), c.Sysctls...) {
			if strings.ContainsAny(v, " \t\r\n'\"") || strings.HasPrefix(v, "--") {
				return // Flags does not quote
			}
		}
		back, err := ParseColumn(c.Name + "=" + flags)
		if err != nil || !reflect.DeepEqual(back, c) {
			t.Fatalf("%q → %+v → %q → %+v, %v", s, c, flags, back, err)
		}
	})
}

// resolveColumns resolves an experiment of hackbench on the HiKey with the
// given lines.
func resolveColumns(t *testing.T, lines string) (*Plan, error) {
	t.Helper()
	s, err := Parse("e.yaml", []byte("machines: [hikey]\n"+lines+"runs: 2\nworkloads: [hackbench -l 5 -g 1]\n"))
	if err != nil {
		t.Fatal(err)
	}
	return Resolve(s, ResolveOptions{})
}

// configs is each column's run configuration at run r, by column name.
func configs(p *Plan, r int) map[string]sim.Config {
	out := map[string]sim.Config{}
	for _, pt := range p.Points() {
		if pt.Run == r {
			out[pt.Variant] = p.RunConfig(&pt, "")
		}
	}
	return out
}

func settingsOf(t *testing.T, cfg sim.Config) sched.Settings {
	t.Helper()
	s, err := cfg.Settings()
	if err != nil {
		t.Fatalf("%+v: %v", cfg, err)
	}
	return s
}

// A column is tip plus its flags: tip's kernel, the experiment's
// features and sysctls, then its own; run i of every column has one seed.
func TestColumnsAreTipPlusFlags(t *testing.T) {
	p, err := resolveColumns(t, "features: [NO_TTWU_QUEUE]\ncolumns:\n  - nowaw=--feature NO_WA_WEIGHT\n  - {name: cost, sysctls: [migration_cost_ns=250000]}\n")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{Tip, "nowaw", "cost"}; !reflect.DeepEqual(p.Variants, want) || !reflect.DeepEqual(p.Kernels, []string{"v6.19"}) {
		t.Fatalf("columns %v kernels %v", p.Variants, p.Kernels)
	}
	for r := 0; r < 2; r++ {
		cfgs := configs(p, r)
		tip := cfgs[Tip]
		for name, cfg := range cfgs {
			if cfg.Seed != DeriveSeed(p.Seed, r) || cfg.Kernel != "v6.19" {
				t.Errorf("run %d of %s: seed %d kernel %s", r, name, cfg.Seed, cfg.Kernel)
			}
		}
		want := settingsOf(t, tip)
		if err := want.SetFeature("NO_WA_WEIGHT"); err != nil {
			t.Fatal(err)
		}
		if got := settingsOf(t, cfgs["nowaw"]); got != want {
			t.Errorf("nowaw's settings are not tip's with NO_WA_WEIGHT")
		}
		want = settingsOf(t, tip)
		if err := want.SetSysctl("migration_cost_ns", "250000"); err != nil {
			t.Fatal(err)
		}
		if got := settingsOf(t, cfgs["cost"]); got != want {
			t.Errorf("cost's settings are not tip's with migration_cost_ns=250000")
		}
		if f := cfgs["nowaw"].Features; !reflect.DeepEqual(f, []string{"NO_TTWU_QUEUE", "NO_WA_WEIGHT"}) {
			t.Errorf("nowaw's features %q: the experiment's first, then the column's", f)
		}
	}
	// The plan keeps the columns' flags, and reads back as it was.
	back, err := parsePlan("experiment.json", p.JSON())
	if err != nil || string(back.JSON()) != string(p.JSON()) {
		t.Fatalf("plan does not read back: %v", err)
	}
	if c, _ := p.Column("cost"); c.Flags() != "--sysctl migration_cost_ns=250000" {
		t.Errorf("cost's flags %q", c.Flags())
	}
}

// A plan without columns writes the experiment.json it wrote before
// columns existed, so a results directory of an older schedlab resumes.
func TestPlanWithoutColumnsUnchanged(t *testing.T) {
	p, err := resolveColumns(t, "variants: [short-task-v3]\n")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(p.JSON()), "columns") || len(p.Columns) != 0 {
		t.Errorf("a plan of variants has columns:\n%s", p.JSON())
	}
}

// A column's variants replace tip's variant bases; a column of settings
// alone keeps them, being tip plus its settings.
func TestColumnsAndTipBases(t *testing.T) {
	p, err := resolveColumns(t, "columns:\n  - u1=--variant sis-util-v1\n  - ttwu=--feature NO_TTWU_QUEUE\n")
	if err != nil {
		t.Fatal(err)
	}
	cfgs := configs(p, 0)
	base := []string{sim.BasePrefix + "sis-util-v1"}
	if p.Kernels[0] != "v6.0" || !reflect.DeepEqual(cfgs[Tip].Variants, base) || !reflect.DeepEqual(cfgs["ttwu"].Variants, base) ||
		!reflect.DeepEqual(cfgs["u1"].Variants, []string{"sis-util-v1"}) {
		t.Errorf("kernel %v; variants: tip %v, ttwu %v, u1 %v", p.Kernels, cfgs[Tip].Variants, cfgs["ttwu"].Variants, cfgs["u1"].Variants)
	}
}

// Columns on another kernel than tip's are refused unless asked for; when
// asked, each runs its kernel, the key keeps tip's, and the record says
// the column's.
func TestColumnsMixedKernels(t *testing.T) {
	_, err := resolveColumns(t, "columns:\n  - cfs=--kernel v6.0\n")
	if err == nil || !strings.HasPrefix(err.Error(), "e.yaml:3: columns run on different kernels: tip v6.19; cfs v6.0 (--kernel): compare across kernels with --mixed-kernels (mixed_kernels: true") {
		t.Fatalf("error %v", err)
	}
	_, err = resolveColumns(t, "kernel: v6.19\nvariants: [short-task-v3]\ncolumns: [\"eevdf=--feature NO_WA_WEIGHT\"]\n")
	if err == nil || !strings.Contains(err.Error(), "tip v6.19; short-task-v3 v6.0 (its variant's baseline)") {
		t.Fatalf("error %v", err)
	}
	p, err := resolveColumns(t, "mixed_kernels: true\nkernel: v6.19\nvariants: [short-task-v3]\ncolumns: [\"cfs=--kernel v6.0\", \"nowaw=--feature NO_WA_WEIGHT\"]\n")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{Tip: "v6.19", "short-task-v3": "v6.0", "cfs": "v6.0", "nowaw": "v6.19"}
	for _, pt := range p.Points() {
		cfg := p.RunConfig(&pt, "")
		if cfg.Kernel != want[pt.Variant] || p.ColumnKernel(pt.Variant, pt.Kernel) != want[pt.Variant] || !strings.Contains(pt.Key, "__v6.19__") {
			t.Errorf("%s runs %s, want %s", pt.Key, cfg.Kernel, want[pt.Variant])
		}
		r := &Record{Key: pt.Key}
		r.Variant, r.Kernel = pt.Variant, cfg.Kernel
		if k := p.TableKernel(r); k != "v6.19" {
			t.Errorf("%s belongs to a table of %s", pt.Key, k)
		}
	}
	if !p.MixedKernels() {
		t.Error("MixedKernels false")
	}
	// With several tip kernels a column cannot have its own.
	_, err = resolveColumns(t, "mixed_kernels: true\nkernels: [v6.0, v6.19]\ncolumns: [\"cfs=--kernel v5.12\"]\n")
	if err == nil || !strings.Contains(err.Error(), "column cfs runs kernel v5.12, and the experiment compares kernels v6.0, v6.19") {
		t.Errorf("error %v", err)
	}
}

// One swept run of each column: the record says the kernel and the
// options its column ran with.
func TestColumnsRecords(t *testing.T) {
	p, err := resolveColumns(t, "mixed_kernels: true\ncolumns: [\"cfs=--kernel v6.0 --feature NO_WA_WEIGHT\", \"cost=--sysctl migration_cost_ns=250000\"]\n")
	if err != nil {
		t.Fatal(err)
	}
	p.Runs = 1
	if err := p.expand(); err != nil {
		t.Fatal(err)
	}
	recs, err := Sweep(p, SweepOptions{Jobs: 2})
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range recs {
		pt := p.Points()[i]
		if err := p.Check(&pt, r); err != nil {
			t.Errorf("%s: %v", pt.Key, err)
		}
		var features, sysctls []string
		if r.Options != nil {
			features, sysctls = r.Options.Features, r.Options.Sysctls
		}
		switch r.Variant {
		case "cfs":
			if r.Kernel != "v6.0" || !reflect.DeepEqual(features, []string{"NO_WA_WEIGHT"}) {
				t.Errorf("cfs: kernel %s features %v", r.Kernel, features)
			}
		case "cost":
			if r.Kernel != "v6.19" || !reflect.DeepEqual(sysctls, []string{"migration_cost_ns=250000"}) {
				t.Errorf("cost: kernel %s sysctls %v", r.Kernel, sysctls)
			}
		}
	}
}

// Mistakes in columns name the line of the column.
func TestColumnErrors(t *testing.T) {
	for _, tc := range []struct{ lines, want string }{
		{"columns:\n  - nowaw=--featur X\n", "e.yaml:3: columns: column nowaw: unknown flag --featur"},
		{"columns:\n  - {name: tip, features: [X]}\n", "e.yaml:3: columns: column tip: tip is the first column"},
		{"columns:\n  - {name: a}\n", "e.yaml:3: columns: column a sets nothing"},
		{"columns:\n  - a=--feature X\n  - a=--feature Y\n", "e.yaml:4: column a is defined twice (first at line 3)"},
		{"columns:\n  - {name: a, sysctls: [x]}\n", "e.yaml:3: columns: column a: --sysctl x: write NAME=VALUE"},
		{"columns:\n  - {name: a, variant: x, variants: [y]}\n", "e.yaml:3: give variant or variants, not both"},
		{"columns: x\n", "e.yaml:2: columns must be a list"},
		{"mixed_kernels: 1\n", "e.yaml:2: mixed_kernels must be true or false"},
	} {
		_, err := Parse("e.yaml", []byte("machines: [hikey]\n"+tc.lines+"workloads: [hackbench]\n"))
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%q:\n got %v\nwant %s...", tc.lines, err, tc.want)
		}
	}
	for _, tc := range []struct{ lines, want string }{
		{"columns:\n  - a=--feature NO_WA_WEIGHT\n  - b=--variant nosuch\n", "e.yaml:4: column b: unknown variant \"nosuch\""},
		{"columns:\n  - a=--feature NO_SUCH_FEATURE\n", "e.yaml:3: column a: --feature NO_SUCH_FEATURE:"},
		{"columns:\n  - a=--sysctl migration_cost_ns=x\n", "e.yaml:3: column a: --sysctl migration_cost_ns=x:"},
		{"columns:\n  - a=--kernel v9\n", "e.yaml:3: column a: --kernel: "},
		{"columns:\n  - short-task-v3=--feature NO_WA_WEIGHT\n", "e.yaml:3: column short-task-v3: that is a variant's name"},
		{"variants: [short-task-v3]\ncolumns:\n  - x=--variant short-task-v3 --variant blocked-avg-ratelimit\n", "e.yaml:4: column x: variant blocked-avg-ratelimit applies to kernel v5.12, variant short-task-v3 to v6.0"},
		{"columns:\n  - x=--variant short-task-v3 --kernel v6.19\n", "e.yaml:3: column x: variant short-task-v3 applies to kernel v6.0, not v6.19"},
	} {
		_, err := resolveColumns(t, tc.lines)
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%q:\n got %v\nwant %s...", tc.lines, err, tc.want)
		}
	}
}
