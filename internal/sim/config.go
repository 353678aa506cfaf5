package sim

import (
	"fmt"
	"github.com/schedlab/schedlab/internal/engine"
	"github.com/schedlab/schedlab/internal/kernels"
	"strings"

	"github.com/schedlab/schedlab/internal/sched"
)

// DefaultMachine is the machine used when none is given: the two-socket
// AMD EPYC 7763 (Zen3, 256 CPUs, NPS1) on which the project's reference
// results (patches.md) were taken.
const DefaultMachine = "zen3-2s-nps1"

// BasePrefix marks a variant's comparison kernel: "base:NAME" runs the
// kernel NAME is measured against (sched.ApplyVariantBase), which is the
// plain baseline for most variants.
const BasePrefix = "base:"

// Config is everything that decides a run. It is plain data: experiment
// plans store it, and two equal Configs give byte-identical results.
type Config struct {
	// Machine is a preset name, "host" or a machine YAML file; "" is
	// DefaultMachine.
	Machine string `json:"machine"`
	// Kernel is the baseline; "" is the variants' baseline, or the
	// default baseline (kernels.V619) when there is no variant.
	Kernel string `json:"kernel"`
	// Variants are applied to the baseline's settings in order: a
	// variant's name applies the patch, "base:NAME" the kernel the patch
	// is compared with. All must share one baseline.
	Variants []string `json:"variants,omitempty"`
	// Features are sched_features as written to the debugfs file
	// ("NO_TTWU_QUEUE"), applied after the variants.
	Features []string `json:"features,omitempty"`
	// Sysctls are NAME=VALUE settings of sched.Settings' sysctl names
	// (migration_cost_ns=250000, model_cost_jitter_pct=0), applied after
	// the features and again after the cost model.
	Sysctls []string `json:"sysctls,omitempty"`
	// CPUs, a cpulist, confines the workload as `taskset -c CPUs` does:
	// its first tasks get that affinity and their children inherit it.
	CPUs string `json:"cpus,omitempty"`
	// BackgroundCgroups adds that many cgroups with a briefly waking task
	// each (package background) before the workload starts.
	BackgroundCgroups int `json:"background_cgroups,omitempty"`
	// CostsFile is a cost-model file applied over the machine's costs;
	// NoCosts runs without the cost model.
	CostsFile string `json:"costs,omitempty"`
	NoCosts   bool   `json:"no_costs,omitempty"`
	// FullLength makes a benchmark that stops at steady state by default
	// (workload.FullLengther: tbench) simulate the whole duration its
	// command line asks for (--full-length).
	FullLength bool `json:"full_length,omitempty"`
	// Warmup runs the benchmark back to back on the same kernel, each
	// time from a new instance of the same command line, until this much
	// simulated time has passed, before the measured run (--warmup):
	// the kernel then starts the measured run with the idle and cpufreq
	// governors' history, avg_idle, PELT's blocked load, SIS_UTIL's scan
	// depth and the balancer's intervals of a machine that has been
	// running it, as a benchmark's later iterations on a real machine do.
	// Only tools whose tasks all exit at their end can be repeated so
	// (Tool.Repeatable: hackbench, perf bench sched messaging and pipe,
	// lat_pipe).
	Warmup engine.Time `json:"warmup_ns,omitempty"`
	Seed   uint64      `json:"seed"`
	// Tool is the workload (Tools lists them) and Args its own arguments.
	Tool string   `json:"tool"`
	Args []string `json:"args"`
}

// VariantLabel names the kernel the Config runs: "" for the plain
// baseline, else its variants joined with "+".
func (c *Config) VariantLabel() string { return strings.Join(c.Variants, "+") }

// Resolve checks the Config's names and fills in its defaults: the
// machine, and the kernel its variants need. It builds nothing, so a
// command can check every Config before the first run starts.
func (c *Config) Resolve() error {
	if c.Machine == "" {
		c.Machine = DefaultMachine
	}
	if c.Seed == 0 {
		// Seed 0 is allowed (engine.New accepts it); nothing to fill.
	}
	if _, ok := Lookup(c.Tool); !ok {
		return &UnknownToolError{c.Tool}
	}
	// want is the kernel the variants need; a variant that applies to
	// any baseline (no-tg-propagate) only offers its default.
	want, anyDefault, wantBy := "", "", ""
	for _, v := range c.Variants {
		name := strings.TrimPrefix(v, BasePrefix)
		info, ok := sched.LookupVariant(name)
		if !ok {
			return fmt.Errorf("--variant: unknown variant %q (known: %s)", name, strings.Join(sched.VariantNames(), ", "))
		}
		switch {
		case info.AnyBaseline:
			if anyDefault == "" {
				anyDefault = info.Baseline
			}
		case want == "":
			want, wantBy = info.Baseline, name
		case want != info.Baseline:
			return fmt.Errorf("--variant: %s applies to kernel %s, the other variants to %s", name, info.Baseline, want)
		}
	}
	switch {
	case c.Kernel == "" && want != "":
		c.Kernel = want
	case c.Kernel == "" && anyDefault != "":
		c.Kernel = anyDefault
	case c.Kernel == "":
		c.Kernel = kernels.V619
	case want != "" && c.Kernel != want:
		return fmt.Errorf("--kernel: variant %s applies to kernel %s, not %s", wantBy, want, c.Kernel)
	}
	if _, err := c.Settings(); err != nil {
		return err
	}
	if c.BackgroundCgroups < 0 {
		return fmt.Errorf("--background-cgroups: %d is negative", c.BackgroundCgroups)
	}
	if c.Warmup < 0 {
		return fmt.Errorf("--warmup: %v is negative", c.Warmup)
	}
	if t, _ := Lookup(c.Tool); c.Warmup > 0 && !t.Repeatable {
		return fmt.Errorf("--warmup: %s cannot run back to back (its tasks do not all exit at its end); --warmup repeats %s", c.Tool, strings.Join(RepeatableTools(), ", "))
	}
	return nil
}

// Settings builds the kernel settings: the baseline, the variants, the
// features and the sysctls, in that order.
func (c *Config) Settings() (sched.Settings, error) {
	kernel := c.Kernel
	if kernel == "" {
		kernel = kernels.V619
	}
	s, err := sched.Baseline(kernel)
	if err != nil {
		return s, fmt.Errorf("--kernel: %v", err)
	}
	for _, v := range c.Variants {
		if name, ok := strings.CutPrefix(v, BasePrefix); ok {
			err = sched.ApplyVariantBase(&s, name)
		} else {
			err = sched.ApplyVariant(&s, v)
		}
		if err != nil {
			return s, fmt.Errorf("--variant: %v", err)
		}
	}
	for _, f := range c.Features {
		if err := s.SetFeature(f); err != nil {
			return s, fmt.Errorf("--feature %s: %v", f, err)
		}
	}
	if err := applySysctls(&s, c.Sysctls); err != nil {
		return s, err
	}
	return s, nil
}

func applySysctls(s *sched.Settings, sysctls []string) error {
	for _, kv := range sysctls {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || name == "" {
			return fmt.Errorf("--sysctl %s: write NAME=VALUE, e.g. migration_cost_ns=250000", kv)
		}
		if err := s.SetSysctl(name, value); err != nil {
			return fmt.Errorf("--sysctl %s: %v", kv, err)
		}
	}
	return nil
}
