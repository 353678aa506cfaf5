// Package sim is schedlab's one run pipeline: it builds a kernel for a
// machine, a kernel baseline, its variants, features, sysctls and a seed;
// gives the workload the cost model's system-call costs; attaches the
// caller's observers; drives the engine until the benchmark is done; and
// returns one Result record. `schedlab run`, `compare`, `sweep`, `validate`
// and `fidelity` all call Run, so a run option is added here once and works
// in every command (STYLE.md, "One path from inputs to a result").
//
// The steps, in order (Run):
//
//  1. Resolve: the Config's names are checked and defaults filled in (the
//     machine, the kernel baseline a variant needs), without building
//     anything.
//  2. Settings: the baseline's sched.Settings, then each variant (or a
//     variant's base, "base:NAME"), then --feature, then --sysctl.
//  3. Kernel: topology.Build for that baseline, sched.New on an engine
//     seeded with Seed, the cost model (costmodel.Resolve with the
//     Config's costs file, always checked; compiled once with
//     costmodel.Compile and installed unless NoCosts), the --sysctl values
//     again (so a sysctl beats a cost-model default), and the --cpus
//     affinity.
//  4. Workload: the tool's own arguments are parsed into an instance; it
//     gets the cost model's system-call costs; background cgroups are added.
//  5. Warm-up (Config.Warmup): the benchmark runs back to back on the same
//     kernel, each time a new instance, until the warm-up's time has passed;
//     the result counts only what follows. Then observers attach (traces,
//     schedstat snapshots, occupancy, explain's decisions and time
//     accounting) and Options.Watch sees the workload instance.
//  6. Drive: the engine runs in slices of simulated time until the
//     workload is done, reporting progress after each slice.
//  7. Result: the tool's output, its metrics (workload.Metrics, the one
//     metrics encoding), the schedstat totals (schedstat.Sum, the one
//     sum), the balance counters, the variants' branch counters
//     (sched.Branch) and the simulation's size.
//
// A run is deterministic: the same Config gives a byte-identical Result
// apart from Sim.WallNs and Sim.CPUNs.
package sim
