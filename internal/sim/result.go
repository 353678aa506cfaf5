package sim

import (
	"encoding/json"

	"github.com/schedlab/schedlab/internal/sched"
	"github.com/schedlab/schedlab/internal/schedstat"
	"github.com/schedlab/schedlab/internal/workload"
)

// SchemaVersion is the version of the result record: the document
// `schedlab run --json` writes and the part of every sweep record
// (runs/KEY.json) that describes the run. Version 3 gives each metric its
// direction: "metrics": {"time_s": {"value": 0.52, "better": "lower"}}.
const SchemaVersion = 3

// Result is one finished run: the one result schema of schedlab. Every
// field but Sim.WallNs and Sim.CPUNs is a function of the Config.
type Result struct {
	SchemaVersion int    `json:"schema_version"`
	Machine       string `json:"machine"`
	NrCPUs        int    `json:"nr_cpus"`
	Kernel        string `json:"kernel"`
	// Variant is the kernel's variants joined with "+" ("" for the
	// plain baseline); an experiment writes its column name ("tip").
	Variant  string `json:"variant"`
	Seed     uint64 `json:"seed"`
	Workload struct {
		Name string   `json:"name"`
		Tool string   `json:"tool"`
		Args []string `json:"args"`
	} `json:"workload"`
	// Options are the run options that changed the kernel or the
	// machine beyond the baseline and variant (omitted when unset).
	Options *RunOptions      `json:"options,omitempty"`
	Metrics workload.Metrics `json:"metrics"`
	// Histograms are the distributions behind the workload's percentile
	// metrics, in the tool's own buckets, for a workload that keeps them
	// (workload.Histogrammer: schbench); omitted for the others.
	Histograms []workload.Histogram `json:"histograms,omitempty"`
	Schedstat  *schedstat.Totals    `json:"schedstat"`
	// Balance is what the load balancer did: calls and time of
	// update_blocked_averages, newidle, periodic and NOHZ balance.
	Balance *Balance `json:"balance,omitempty"`
	// VariantBranches are, for each variant the kernel applies (not a
	// "base:" one), the counters of the branches its patch changes: did
	// the patch's code run, and did it decide otherwise (omitted for the
	// plain baseline).
	VariantBranches []VariantBranches `json:"variant_branches,omitempty"`
	// Output is what the tool printed.
	Output string `json:"output"`
	// Warnings are what the workload read around rather than refused
	// (workload.Warner: a replayed text trace cut short), each a line
	// naming the file and line (omitted when none).
	Warnings []string `json:"warnings,omitempty"`
	Sim      struct {
		// Events and SimulatedNs are the measured run's; a warm-up
		// (Config.Warmup) made WarmupRuns runs in WarmupNs before it.
		Events      uint64 `json:"events"`
		SimulatedNs int64  `json:"simulated_ns"`
		WarmupRuns  int    `json:"warmup_runs,omitempty"`
		WarmupNs    int64  `json:"warmup_ns,omitempty"`
		// WallNs and CPUNs are the fields that differ between
		// identical runs; both include a warm-up, as SimulatedNs does
		// not. CPUNs is the CPU time of the thread that ran the
		// simulation (Linux; 0 and left out elsewhere): unlike the wall
		// time it does not count time the process was stopped, the
		// machine slept or the run waited for a core.
		WallNs int64 `json:"wall_ns"`
		CPUNs  int64 `json:"cpu_ns,omitempty"`
	} `json:"sim"`
}

// RunOptions are a Config's options besides machine, kernel, variant,
// seed and workload.
type RunOptions struct {
	Features          []string `json:"features,omitempty"`
	Sysctls           []string `json:"sysctls,omitempty"`
	CPUs              string   `json:"cpus,omitempty"`
	BackgroundCgroups int      `json:"background_cgroups,omitempty"`
	CostsFile         string   `json:"costs,omitempty"`
	NoCosts           bool     `json:"no_costs,omitempty"`
	FullLength        bool     `json:"full_length,omitempty"`
	WarmupNs          int64    `json:"warmup_ns,omitempty"`
}

func optionsOf(c *Config) *RunOptions {
	o := &RunOptions{Features: c.Features, Sysctls: c.Sysctls, CPUs: c.CPUs,
		BackgroundCgroups: c.BackgroundCgroups, CostsFile: c.CostsFile, NoCosts: c.NoCosts, FullLength: c.FullLength,
		WarmupNs: int64(c.Warmup)}
	if len(o.Features) == 0 && len(o.Sysctls) == 0 && o.CPUs == "" && o.BackgroundCgroups == 0 && o.CostsFile == "" && !o.NoCosts && !o.FullLength && o.WarmupNs == 0 {
		return nil
	}
	return o
}

// Deterministic returns r's JSON without the wall and CPU times: equal
// for equal Configs, whatever ran them.
func (r *Result) Deterministic() []byte {
	c := *r
	c.Sim.WallNs, c.Sim.CPUNs = 0, 0
	b, err := json.Marshal(&c)
	if err != nil {
		panic("sim: " + err.Error())
	}
	return b
}

// Balance is the result's "balance" section: how often the balancing
// paths ran and how long they took (simulated ns).
type Balance struct {
	UpdateBlockedAverages BalanceCounter `json:"update_blocked_averages"`
	NewidleBalance        BalanceCounter `json:"newidle_balance"`
	PeriodicBalance       BalanceCounter `json:"periodic_balance"`
	NohzIdleBalance       BalanceCounter `json:"nohz_idle_balance"`
	ActiveBalance         BalanceCounter `json:"active_balance"`
	// RqLockWaits are the reschedules (a wakeup's IPI, a preemption) and
	// task starts that waited for balancing work holding the target
	// CPU's rq lock or occupying it, with the time each wait added.
	RqLockWaits BalanceCounter `json:"rq_lock_waits"`
	Migrations  uint64         `json:"migrations"`
}

// VariantBranches are one variant's branch counters.
type VariantBranches struct {
	Name     string          `json:"name"`
	Branches []BranchCounter `json:"branches"`
}

// BranchCounter is one branch a variant changes (sched.Branch): its name
// ("function:tag"), what it counts, how often it was taken and how often
// that changed the decision from the comparison kernel's. Changed is
// omitted for a branch where the comparison kernel's decision cannot be
// had at the branch (its description says why).
type BranchCounter struct {
	Name        string  `json:"name"`
	Description string  `json:"description"`
	Taken       uint64  `json:"taken"`
	Changed     *uint64 `json:"changed,omitempty"`
}

// variantBranchesOf is the report of the branch counters c for the
// variants of cfg.
func variantBranchesOf(variants []string, c *sched.BranchCounters) []VariantBranches {
	var out []VariantBranches
	for _, v := range variants {
		info, ok := sched.LookupVariant(v)
		if !ok {
			continue // "base:NAME": the comparison kernel, no patch
		}
		vb := VariantBranches{Name: v, Branches: make([]BranchCounter, 0, len(info.Branches))}
		for _, b := range info.Branches {
			bi := b.Info()
			bc := BranchCounter{Name: bi.Name, Description: bi.Description, Taken: c[b].Taken}
			if bi.CountsChanged {
				changed := c[b].Changed
				bc.Changed = &changed
			}
			vb.Branches = append(vb.Branches, bc)
		}
		out = append(out, vb)
	}
	return out
}

// BalanceCounter is one balancing path's calls and simulated time.
type BalanceCounter struct {
	Calls   uint64 `json:"calls"`
	TotalNs int64  `json:"total_ns"`
	MaxNs   int64  `json:"max_ns"`
}

func counterOf(c sched.BalanceCounter) BalanceCounter {
	return BalanceCounter{Calls: c.Calls, TotalNs: int64(c.Total), MaxNs: int64(c.Max)}
}

func balanceOf(b sched.BalanceStats) *Balance {
	return &Balance{
		UpdateBlockedAverages: counterOf(b.UpdateBlockedAverages),
		NewidleBalance:        counterOf(b.NewidleBalance),
		PeriodicBalance:       counterOf(b.PeriodicBalance),
		NohzIdleBalance:       counterOf(b.NohzIdleBalance),
		ActiveBalance:         counterOf(b.ActiveBalance),
		RqLockWaits:           counterOf(b.RqLockWaits),
		Migrations:            b.Migrations,
	}
}
