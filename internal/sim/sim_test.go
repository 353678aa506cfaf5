package sim

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/schedlab/schedlab/internal/engine"
	"github.com/schedlab/schedlab/internal/kernels"
)

// Every run option reaches the kernel through Build: the variant's base,
// a feature, a sysctl, the affinity and the background cgroups.
func TestBuildAppliesOptions(t *testing.T) {
	b, err := Build(Config{Machine: "kunpeng920-96", Variants: []string{"base:idle-cores-nosmt"},
		Features: []string{"NO_TTWU_QUEUE"}, Sysctls: []string{"migration_cost_ns=250000", "model_sis_scan_cost_ns=7"},
		CPUs: "0-23", BackgroundCgroups: 4, Seed: 1, Tool: "hackbench", Args: []string{"-l", "1", "-g", "1"}})
	if err != nil {
		t.Fatal(err)
	}
	k := b.Kernel
	if k.S.Kernel != kernels.V512 {
		t.Errorf("kernel %s: the variant's baseline is %s", k.S.Kernel, kernels.V512)
	}
	if !k.S.SISIdleCoresV512 || k.S.TestIdleCoresSMTCheck {
		t.Errorf("base:idle-cores-nosmt must be v5.12 (select_idle_cpu's test_idle_cores %v) without the patch (smt check %v)",
			k.S.SISIdleCoresV512, k.S.TestIdleCoresSMTCheck)
	}
	if k.S.TTWUQueue {
		t.Error("NO_TTWU_QUEUE not applied")
	}
	if k.S.MigrationCost != 250000 {
		t.Errorf("migration_cost_ns %d", k.S.MigrationCost)
	}
	// The cost model sets the scan cost; the sysctl is applied after it.
	if k.S.SISScanCost != 7 {
		t.Errorf("model_sis_scan_cost_ns %d: a --sysctl must beat the cost model's default", k.S.SISScanCost)
	}
	if got := k.DefaultAllowed.String(); got != "0-23" {
		t.Errorf("affinity %s", got)
	}
	// Four background cgroups, each with one task, exist before the
	// workload forks anything.
	if n := len(k.Tasks); n != 4 {
		t.Errorf("%d tasks before the workload, want the 4 background tasks", n)
	}
}

func TestResolveErrors(t *testing.T) {
	for _, c := range []struct {
		cfg  Config
		want string
	}{
		{Config{Tool: "hackbench", Variants: []string{"nope"}}, `--variant: unknown variant "nope"`},
		{Config{Tool: "hackbench", Kernel: "v6.19", Variants: []string{"short-task-v3"}}, "--kernel: variant short-task-v3 applies to kernel v6.0, not v6.19"},
		{Config{Tool: "hackbench", Variants: []string{"short-task-v3", "blocked-avg-ratelimit"}}, "--variant: blocked-avg-ratelimit applies to kernel v5.12, the other variants to v6.0"},
		{Config{Tool: "hackbench", Sysctls: []string{"migration_cost_ns"}}, "--sysctl migration_cost_ns: write NAME=VALUE"},
		{Config{Tool: "hackbench", Sysctls: []string{"hz=7"}}, "--sysctl hz=7: hz must be 100, 250, 300 or 1000, not 7"},
		{Config{Tool: "hackbench", Features: []string{"NO_SUCH"}}, `--feature NO_SUCH: unknown sched feature "NO_SUCH"`},
		{Config{Tool: "hackbench", Kernel: "v9"}, "--kernel: unknown kernel"},
		{Config{Tool: "nope"}, `unknown workload "nope"`},
		{Config{Tool: "tbench", Args: []string{"1"}, Warmup: engine.Second}, "--warmup: tbench cannot run back to back"},
		{Config{Tool: "hackbench", Warmup: -1}, "--warmup: -0.000000001s is negative"},
	} {
		err := c.cfg.Resolve()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.cfg, err, c.want)
		}
	}
	c := Config{Tool: "hackbench", Variants: []string{"base:short-task-v3"}}
	if err := c.Resolve(); err != nil || c.Kernel != kernels.V60 || c.Machine != DefaultMachine {
		t.Errorf("base:short-task-v3 resolves to %s on %s: %v", c.Kernel, c.Machine, err)
	}
	// no-tg-propagate applies to any baseline: alone it takes its default,
	// with another variant that variant's kernel, and any --kernel.
	for _, tc := range []struct {
		kernel   string
		variants []string
		want     string
	}{
		{"", []string{"no-tg-propagate"}, kernels.V619},
		{"", []string{"short-task-v3", "no-tg-propagate"}, kernels.V60},
		{"", []string{"no-tg-propagate", "blocked-avg-ratelimit"}, kernels.V512},
		{kernels.V512, []string{"no-tg-propagate"}, kernels.V512},
	} {
		c := Config{Tool: "hackbench", Kernel: tc.kernel, Variants: tc.variants}
		if err := c.Resolve(); err != nil || c.Kernel != tc.want {
			t.Errorf("--kernel %q %v resolves to %s (%v), want %s", tc.kernel, tc.variants, c.Kernel, err, tc.want)
		}
	}
}

// Output paths are checked before a run and leave nothing behind.
func TestCheckOutput(t *testing.T) {
	dir := t.TempDir()
	if err := CheckOutputFile("--json", "/proc/x.json"); err == nil || !strings.HasPrefix(err.Error(), "--json /proc/x.json: ") {
		t.Errorf("/proc: %v", err)
	}
	if err := CheckOutputFile("--json", filepath.Join(dir, "no", "x.json")); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("missing dir: %v", err)
	}
	if err := CheckOutputFile("--json", dir); err == nil || !strings.Contains(err.Error(), "is a directory") {
		t.Errorf("a directory: %v", err)
	}
	if err := CheckOutputFile("--json", filepath.Join(dir, "x.json")); err != nil {
		t.Errorf("writable: %v", err)
	}
	if err := CheckOutputDir("--schedstat", filepath.Join(dir, "a", "b")); err != nil {
		t.Errorf("a new directory under a writable one: %v", err)
	}
	if err := CheckOutputDir("--schedstat", "/proc/self/x"); err == nil {
		t.Error("/proc/self/x accepted")
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("the checks left %v behind", ents)
	}
}

// A changed cost-model parameter changes the simulated result through the
// run pipeline: a costs file that makes a pipe write cost 20 µs instead of
// hikey's 2.3 µs makes hackbench, 400 pipe writes per sender, slower.
func TestCostsFileChangesResult(t *testing.T) {
	dir := t.TempDir()
	costs := filepath.Join(dir, "costs.yaml")
	if err := os.WriteFile(costs, []byte("base: hikey\npipe_write_ns: 20000\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := Config{Machine: "hikey", Seed: 1, Tool: "hackbench", Args: []string{"-p", "-T", "-l", "20", "-g", "1"}}
	base, err := Run(cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	cfg.CostsFile = costs
	slow, err := Run(cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	a, _ := base.Metric("time_s")
	b, _ := slow.Metric("time_s")
	if !(b > a) {
		t.Errorf("time %v with 20 µs pipe writes, %v without: the costs file did not reach the kernel", b, a)
	}
	if slow.Options == nil || slow.Options.CostsFile != costs {
		t.Errorf("options %+v", slow.Options)
	}
}

// TestRqLockWaits: on the Chromebook with 200 background cgroups,
// update_blocked_averages walks hundreds of leaf cfs_rqs with the rq lock
// held, so some wakeups (and task starts) wait for it; the result's
// balance section counts them. Each wait is the rest of one balancing pass
// holding the target's lock, so none is longer than the longest pass.
// Without background cgroups the passes are short and waits rarer and
// shorter in total.
func TestRqLockWaits(t *testing.T) {
	run := func(bg int) *Balance {
		t.Helper()
		res, err := Run(Config{Machine: "chromebook-7c", BackgroundCgroups: bg, Seed: 1, Tool: "schbench", Args: []string{"-m", "1", "-t", "2", "-r", "2"}}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		return res.Balance
	}
	b := run(200)
	w := b.RqLockWaits
	if w.Calls == 0 || w.TotalNs <= 0 || w.MaxNs <= 0 || w.MaxNs > w.TotalNs {
		t.Fatalf("200 cgroups: rq lock waits %+v, want some", w)
	}
	longest := max(b.UpdateBlockedAverages.MaxNs, b.NewidleBalance.MaxNs, b.PeriodicBalance.MaxNs, b.NohzIdleBalance.MaxNs, b.ActiveBalance.MaxNs)
	if w.MaxNs > longest {
		t.Errorf("a wait of %d ns is longer than the longest balancing pass, %d ns", w.MaxNs, longest)
	}
	if q := run(0).RqLockWaits; q.TotalNs >= w.TotalNs {
		t.Errorf("rq lock waits without background cgroups %+v, with 200 %+v: want less waiting without", q, w)
	}
}
