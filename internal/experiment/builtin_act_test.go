package experiment

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/schedlab/schedlab/internal/explain"
	"github.com/schedlab/schedlab/internal/sched"
	"github.com/schedlab/schedlab/internal/sim"
)

// shortened is a built-in workload's command line cut down for a test:
// fewer loops, a shorter duration, a smaller array, the ranged load as
// it is. A tool without a rule here fails the test, so that a new
// built-in's workload gets one.
func shortened(t *testing.T, tool string, args []string) []string {
	t.Helper()
	out := append([]string(nil), args...)
	set := func(flag, v string) {
		for i := 0; i+1 < len(out); i++ {
			if out[i] == flag {
				out[i+1] = v
				return
			}
		}
		t.Fatalf("%s %v: no %s to shorten", tool, args, flag)
	}
	switch tool {
	case "hackbench":
		set("-l", "40")
	case "schbench":
		set("-r", "1")
	case "tbench":
		set("-t", "1")
	case "frames":
		set("-d", "2")
	case "stream":
		for i, a := range out {
			switch {
			case strings.HasPrefix(a, "STREAM_ARRAY_SIZE="):
				out[i] = "STREAM_ARRAY_SIZE=100000"
			case strings.HasPrefix(a, "NTIMES="):
				out[i] = "NTIMES=2"
			}
		}
	default:
		t.Fatalf("no shortening for %s: add one", tool)
	}
	return out
}

// pairOutcome is a shortened point run on tip and on a variant.
type pairOutcome struct {
	label          string
	taken, changed uint64
	div            explain.Divergence
}

// runPair runs the point on tip and on its variant at once, each with an
// explain recorder streaming its decisions into one comparer (as
// `schedlab explain` does), and sums the variant's branch counters.
func runPair(t *testing.T, p *Plan, pt Point) pairOutcome {
	t.Helper()
	w := &p.Workloads[pt.Workload]
	tip := pt
	tip.Variant = Tip
	cfgs := [2]sim.Config{p.RunConfig(&tip, ""), p.RunConfig(&pt, "")}
	for i := range cfgs {
		cfgs[i].Args = shortened(t, w.Tool, cfgs[i].Args)
	}
	cmp := explain.NewComparer(0)
	var res [2]*sim.Result
	var errs [2]error
	var wg sync.WaitGroup
	for side := range cfgs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer cmp.Done(side)()
			rec := &explain.Recorder{Stream: cmp.Sink(side), Close: cmp.Done(side)}
			res[side], errs[side] = sim.Run(cfgs[side], sim.Options{Observers: []sim.Observer{rec.Attach}, Watch: rec.Watch})
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	o := pairOutcome{label: fmt.Sprintf("%s %s", w.Tool, strings.Join(cfgs[1].Args, " ")), div: cmp.Result()}
	for _, vb := range res[1].VariantBranches {
		for _, b := range vb.Branches {
			o.taken += b.Taken
			if b.Changed != nil {
				o.changed += *b.Changed
			}
		}
	}
	return o
}

// TestBuiltinVariantsAct: each built-in experiment's variants change at
// least one decision in the experiment's own workloads (issue 40: a
// built-in whose patch never acts reports 0.00% as a result). Each
// workload and load of the experiment, on its first machine and kernel,
// with run 0's seed, shortened (fewer loops, 1-2 s instead of 5), runs on
// tip and on the variant, until one shows the variant acting: a branch
// of the patch changed a decision (sched.Branch's changed counter), or
// the two runs' decision streams part at a different CPU or reason
// (explain's comparer, for branches that count only "taken"). A patch
// that changes only what the kernel's work costs (VariantInfo.CostOnly:
// idle-cores-nosmt) must have its branch taken, never changed — without
// SMT nothing sets has_idle_cores, so the read it skips always answers
// false — and its runs must differ in time.
func TestBuiltinVariantsAct(t *testing.T) {
	for _, s := range Builtins() {
		p, err := Resolve(s, ResolveOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range p.Variants[1:] {
			t.Run(s.Name+"/"+v, func(t *testing.T) {
				info, ok := sched.LookupVariant(v)
				if !ok {
					t.Fatalf("no variant %s", v)
				}
				var tried []string
				for wi, w := range p.Workloads {
					for _, load := range w.Param.Values {
						pt := Point{Machine: 0, Kernel: p.Kernels[0], Variant: v, Workload: wi, Load: load, Seed: DeriveSeed(p.Seed, 0)}
						o := runPair(t, p, pt)
						tried = append(tried, fmt.Sprintf("%s: taken %d, changed %d, decisions part: %v", o.label, o.taken, o.changed, o.div.Decision != nil))
						if info.CostOnly {
							if o.changed != 0 {
								t.Errorf("%s changed %d decisions; it changes only costs", o.label, o.changed)
							}
							if o.taken > 0 && (o.div.Decision != nil || o.div.Time != nil) {
								t.Logf("%s: taken %d, changed 0, the runs part in time after %d decisions", o.label, o.taken, o.div.Compared)
								return
							}
							continue
						}
						if o.changed > 0 || o.div.Decision != nil {
							t.Logf("%s: taken %d, changed %d; the decision streams part after %d decisions: %v", o.label, o.taken, o.changed, o.div.Compared, o.div.Decision != nil)
							return
						}
					}
				}
				t.Errorf("%s changes no decision in %s's workloads on %s:\n  %s", v, s.Name, p.Machines[0].Label, strings.Join(tried, "\n  "))
			})
		}
	}
}
