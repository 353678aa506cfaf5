package cli

import (
	"fmt"
	"github.com/schedlab/schedlab/internal/kernels"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/schedlab/schedlab/internal/engine"

	"github.com/schedlab/schedlab/internal/experiment"
	"github.com/schedlab/schedlab/internal/sim"
)

// runFlags are the run options every command that runs simulations takes
// (run, compare, sweep, validate, fidelity): each maps to one field of
// sim.Config, and to the experiment-file key of the same name.
type runFlags struct {
	machine, kernel       string
	variants              []string
	features, sysctls     []string
	idleDisable           []string
	latencyLimit          int
	cpus, costsFile       string
	noCosts, fullLength   bool
	backgroundCgroups     int
	warmupArg             string
	warmup                time.Duration
	seed                  uint64
	seedSet, multiVariant bool
	// columns are --column NAME=FLAGS (compare, sweep), parsed by check.
	columns       []string
	parsedColumns []experiment.Column
	mixedKernels  bool
}

// add registers the flags. multi makes --variant repeatable (compare,
// sweep); run takes one.
func (r *runFlags) add(f *pflag.FlagSet, multi bool) {
	r.multiVariant = multi
	f.StringVar(&r.machine, "machine", "", "machine: a preset (see 'schedlab machines'), host, or a YAML file (default "+sim.DefaultMachine+")")
	f.StringVar(&r.kernel, "kernel", "", "kernel baseline: "+strings.Join(kernels.Names(), " or ")+" (default v6.19, or the variants' baseline)")
	if multi {
		f.StringArrayVar(&r.variants, "variant", nil, "a kernel variant to compare with tip (repeatable; see 'schedlab variants'); base:NAME makes tip the kernel NAME is compared with, without a column of NAME's")
		f.StringArrayVar(&r.columns, "column", nil, "a column NAME=FLAGS: tip plus any of --variant V, --feature F, --sysctl NAME=VALUE, --kernel K, e.g. 'nowaw=--feature NO_WA_WEIGHT' (repeatable; after the --variant columns)")
		f.BoolVar(&r.mixedKernels, "mixed-kernels", false, "allow columns on other kernels than tip's (a column's --kernel, or a variant of another baseline); the table then says each column's kernel")
	} else {
		f.StringArrayVar(&r.variants, "variant", nil, "kernel variant (see 'schedlab variants'); base:NAME runs the kernel NAME is compared with")
	}
	f.StringArrayVar(&r.features, "feature", nil, "set a sched_feature, e.g. NO_TTWU_QUEUE (repeatable)")
	f.StringArrayVar(&r.sysctls, "sysctl", nil, "set a sysctl or model setting, NAME=VALUE, e.g. migration_cost_ns=250000 (repeatable; docs/scenarios.md lists them)")
	f.StringArrayVar(&r.idleDisable, "idle-disable", nil, "switch an idle state off on every CPU, as 'cpupower idle-set -d' does, by name (e.g. C2; repeatable; sysctl model_idle_disable)")
	f.IntVar(&r.latencyLimit, "latency-limit", -1, "hold a PM QoS CPU latency request of US microseconds, as an open /dev/cpu_dma_latency does: no idle state with a longer advertised exit latency (sysctl model_idle_latency_limit_us)")
	f.StringVar(&r.cpus, "cpus", "", "run the workload confined to these CPUs, as 'taskset -c LIST' does (children inherit the affinity)")
	f.IntVar(&r.backgroundCgroups, "background-cgroups", 0, "add N cgroups, each with a task that runs 300 µs every 50-250 ms (blocked-load work of a desktop or phone)")
	f.StringVar(&r.costsFile, "costs", "", "cost-model file applied over the machine's costs (see 'schedlab costs')")
	f.BoolVar(&r.noCosts, "no-costs", false, "run without the cost model (no context-switch, refill, IPI-distance or idle-exit costs)")
	f.BoolVar(&r.fullLength, "full-length", false, "simulate the whole duration the benchmark's command line asks for; by default tbench stops once its throughput is at steady state with a ±1% interval (docs/performance.md)")
	f.StringVar(&r.warmupArg, "warmup", "", "run the benchmark back to back on the same kernel for this much simulated time (e.g. 1s) before the measured run, as later iterations on a real machine start warm (hackbench; not counted in the results)")
	f.Uint64Var(&r.seed, "seed", 1, "seed of every random stream of the run")
}

// check validates what the flags say alone.
func (r *runFlags) check(f *pflag.FlagSet) error {
	r.seedSet = f.Changed("seed")
	if !r.multiVariant && len(r.variants) > 1 {
		return fmt.Errorf("--variant: give one variant (compare takes several)")
	}
	r.parsedColumns = nil
	for _, c := range r.columns {
		col, err := experiment.ParseColumn(c)
		if err != nil {
			return fmt.Errorf("--column %q: %v", c, err)
		}
		for _, seen := range r.parsedColumns {
			if seen.Name == col.Name {
				return fmt.Errorf("--column %q: a column named %s is given already", c, col.Name)
			}
		}
		r.parsedColumns = append(r.parsedColumns, col)
	}
	if r.noCosts && r.costsFile != "" {
		return fmt.Errorf("--costs and --no-costs: give one")
	}
	if r.backgroundCgroups < 0 {
		return fmt.Errorf("--background-cgroups: %d is negative", r.backgroundCgroups)
	}
	if r.warmupArg != "" {
		d, err := time.ParseDuration(r.warmupArg)
		if err != nil || d < 0 {
			return fmt.Errorf("--warmup %s: give a simulated duration such as 1s or 500ms", r.warmupArg)
		}
		r.warmup = d
	}
	for _, kv := range r.sysctls {
		if name, _, ok := strings.Cut(kv, "="); !ok || name == "" {
			return fmt.Errorf("--sysctl %s: write NAME=VALUE, e.g. migration_cost_ns=250000", kv)
		}
	}
	// --idle-disable and --latency-limit are sysctls of the model, so
	// that experiment files (sysctls:) and every command carry them alike.
	for _, n := range r.idleDisable {
		if n == "" || strings.Contains(n, ",") {
			return fmt.Errorf("--idle-disable %q: give one idle state name per flag, e.g. --idle-disable C2", n)
		}
	}
	if len(r.idleDisable) > 0 {
		r.sysctls = append(r.sysctls, "model_idle_disable="+strings.Join(r.idleDisable, ","))
	}
	if f.Changed("latency-limit") {
		if r.latencyLimit < 0 || r.latencyLimit > 1e9 {
			return fmt.Errorf("--latency-limit %d: give microseconds, 0 to 1000000000 (0 allows only exit-latency-0 states such as POLL)", r.latencyLimit)
		}
		r.sysctls = append(r.sysctls, fmt.Sprintf("model_idle_latency_limit_us=%d", r.latencyLimit))
	}
	return nil
}

// config is the sim.Config of one run of tool.
func (r *runFlags) config(tool string, args []string) sim.Config {
	return sim.Config{
		Machine: r.machine, Kernel: r.kernel, Variants: r.variants,
		Features: r.features, Sysctls: r.sysctls, CPUs: r.cpus,
		BackgroundCgroups: r.backgroundCgroups, CostsFile: r.costsFile, NoCosts: r.noCosts,
		FullLength: r.fullLength, Warmup: engine.Time(r.warmup), Seed: r.seed, Tool: tool, Args: args,
	}
}

// spec sets the run options of an experiment spec built from flags
// (compare).
func (r *runFlags) spec(s *experiment.Spec) {
	machine := r.machine
	if machine == "" {
		machine = sim.DefaultMachine
	}
	s.Machines = []string{machine}
	if r.kernel != "" {
		s.Kernels = []string{r.kernel}
	}
	s.Variants = r.variants
	s.Columns, s.MixedKernels = r.parsedColumns, r.mixedKernels
	s.Features, s.Sysctls = r.features, r.sysctls
	s.CPUs, s.BackgroundCgroups = r.cpus, r.backgroundCgroups
	s.Costs, s.NoCosts = r.costsFile, r.noCosts
	s.FullLength = r.fullLength
	s.Warmup = r.warmup
	s.Seed = r.seed
}

// override lays the flags that were given over an experiment file's keys
// (sweep): lists are appended, single values replace.
func (r *runFlags) override(f *pflag.FlagSet, s *experiment.Spec) {
	if f.Changed("machine") {
		s.Machines = []string{r.machine}
	}
	if f.Changed("kernel") {
		s.Kernels = []string{r.kernel}
	}
	if f.Changed("variant") {
		s.Variants = r.variants
	}
	s.Columns = append(s.Columns, r.parsedColumns...)
	s.MixedKernels = s.MixedKernels || r.mixedKernels
	s.Features = append(s.Features, r.features...)
	s.Sysctls = append(s.Sysctls, r.sysctls...)
	if f.Changed("cpus") {
		s.CPUs = r.cpus
	}
	if f.Changed("background-cgroups") {
		s.BackgroundCgroups = r.backgroundCgroups
	}
	if f.Changed("costs") {
		s.Costs, s.NoCosts = r.costsFile, false
	}
	if f.Changed("no-costs") {
		s.NoCosts, s.Costs = r.noCosts, ""
	}
	if f.Changed("full-length") {
		s.FullLength = r.fullLength
	}
	if f.Changed("warmup") {
		s.Warmup = r.warmup
	}
	if f.Changed("seed") {
		s.Seed = r.seed
	}
}
