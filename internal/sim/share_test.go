package sim

import (
	"bytes"
	"encoding/binary"
	"hash/fnv"
	"path/filepath"
	"strings"
	"testing"

	"github.com/schedlab/schedlab/internal/cpumask"
	"github.com/schedlab/schedlab/internal/sched"
)

// TestShareSgStatsExact: the load balancer's shared group statistics
// (model_share_sg_stats, internal/sched/balance_share.go) change nothing a
// run produces. Each run is made with sharing off (0), for every group (1:
// the small machines' groups, the asymmetric ones' misfit sums) and as
// the baselines have it (8), on the presets and machine files, the three
// baselines and a few variants (the blocked load ones walk the paths that
// do not share), with cgroups and with the noise settings; the records
// (output, metrics, schedstat, balance counters, events) must be byte for
// byte the same, and so must a hash of every context switch, wakeup and
// migration with its time. Sharing every group must have reused
// statistics, and no sharing never, so that the comparison compares
// something. Under -tags invariants every reuse is also checked against a
// fresh sum (sgShareCheck).
func TestShareSgStatsExact(t *testing.T) {
	machines := filepath.Join("..", "topology", "testdata", "machines")
	hb := []string{"-p", "-T", "-l", "100", "-g", "2"}
	cases := []struct {
		name string
		cfg  Config
	}{
		{name: "zen3 v6.19 hackbench", cfg: Config{Machine: "zen3-2s-nps1", Kernel: "v6.19", Tool: "hackbench", Args: hb}},
		{name: "zen3-nps4 v6.0 hackbench sockets", cfg: Config{Machine: "zen3-2s-nps4", Kernel: "v6.0", Tool: "hackbench", Args: []string{"-l", "50", "-g", "2"}}},
		{name: "kunpeng v5.12 hackbench", cfg: Config{Machine: "kunpeng920-96", Kernel: "v5.12", Tool: "hackbench", Args: hb}},
		{name: "kunpeng file v6.19 tbench", cfg: Config{Machine: filepath.Join(machines, "kunpeng920-96.yaml"), Kernel: "v6.19", Tool: "tbench", Args: []string{"-t", "1", "8"}}},
		{name: "hikey960 v6.19 schbench (asymmetric)", cfg: Config{Machine: filepath.Join(machines, "hikey960.yaml"), Kernel: "v6.19", Tool: "schbench", Args: []string{"-m", "2", "-t", "4", "-r", "1"}}},
		{name: "chromebook v6.0 schbench (asymmetric)", cfg: Config{Machine: filepath.Join(machines, "chromebook-7c.yaml"), Kernel: "v6.0", Tool: "schbench", Args: []string{"-m", "2", "-t", "4", "-r", "1"}}},
		{name: "odd v5.12 tbench", cfg: Config{Machine: filepath.Join(machines, "odd.yaml"), Kernel: "v5.12", Tool: "tbench", Args: []string{"-t", "1", "8"}}},
		{name: "hikey v6.19 rt-app (a cgroup)", cfg: Config{Machine: "hikey", Kernel: "v6.19", Tool: "rt-app", Args: []string{"testdata/example.json"}}},
		{name: "zen3 v6.19 hackbench, background cgroups, noise", cfg: Config{Machine: "zen3-2s-nps1", Kernel: "v6.19", Tool: "hackbench", Args: hb,
			BackgroundCgroups: 8, Sysctls: []string{"model_kthreads=1", "model_skew_tick=1"}}},
		{name: "zen3 short-task-v3 hackbench", cfg: Config{Machine: "zen3-2s-nps1", Variants: []string{"short-task-v3"}, Tool: "hackbench", Args: hb}},
		{name: "zen3-nps4 sis-util-v1 schbench", cfg: Config{Machine: "zen3-2s-nps4", Variants: []string{"sis-util-v1"}, Tool: "schbench", Args: []string{"-m", "2", "-t", "16", "-r", "1"}}},
		{name: "kunpeng blocked-load-outside-newidle hackbench", cfg: Config{Machine: "kunpeng920-96", Variants: []string{"blocked-load-outside-newidle"}, Tool: "hackbench", Args: hb}},
		{name: "hikey960 no-tg-propagate rt-app", cfg: Config{Machine: filepath.Join(machines, "hikey960.yaml"), Variants: []string{"no-tg-propagate"}, Tool: "rt-app", Args: []string{"testdata/example.json"}}},
	}
	if testing.Short() {
		cases = cases[:4]
	}
	for _, c := range cases {
		t.Run(strings.ReplaceAll(c.name, " ", "_"), func(t *testing.T) {
			shares := []string{"0", "1", ""} // "": the baseline's
			var recs [3][]byte
			var traces [3]uint64
			var reuses [3]uint64
			for i, share := range shares {
				cfg := c.cfg
				cfg.Seed = 7
				cfg.Sysctls = append([]string(nil), c.cfg.Sysctls...)
				if share != "" {
					cfg.Sysctls = append(cfg.Sysctls, "model_share_sg_stats="+share)
				}
				var k *sched.Kernel
				var h traceHash
				res, err := Run(cfg, Options{Observers: []Observer{func(kk *sched.Kernel) (func() error, error) {
					k = kk
					h.attach(kk)
					return nil, nil
				}}})
				if err != nil {
					t.Fatal(err)
				}
				res.Options = nil // the one difference: the sysctl given
				recs[i], traces[i], reuses[i] = res.Deterministic(), h.sum(), k.SgSharedReuses()
			}
			for i := 1; i < len(shares); i++ {
				if !bytes.Equal(recs[0], recs[i]) {
					t.Errorf("records differ with model_share_sg_stats=%q and 0:\n%.2000s\n%.2000s", shares[i], recs[i], recs[0])
				}
				if traces[0] != traces[i] {
					t.Errorf("the switches, wakeups and migrations differ with model_share_sg_stats=%q and 0", shares[i])
				}
			}
			if reuses[0] != 0 {
				t.Errorf("sharing off reused group statistics %d times", reuses[0])
			}
			if reuses[1] == 0 {
				t.Errorf("sharing every group never reused statistics: nothing was compared")
			}
			t.Logf("reuses: %d sharing every group, %d as the baseline", reuses[1], reuses[2])
		})
	}
}

// traceHash hashes a run's context switches, wakeups and migrations,
// with their times.
type traceHash struct {
	k *sched.Kernel
	h uint64
	b []byte
}

func (t *traceHash) attach(k *sched.Kernel) {
	t.k = k
	t.h = fnv.New64a().Sum64()
	pid := func(p *sched.Task) int64 {
		if p == nil {
			return -1
		}
		return int64(p.PID)
	}
	hooks := &k.Hooks
	prevSwitch, prevWakeup, prevMigrate := hooks.Switch, hooks.Wakeup, hooks.Migrate
	hooks.Switch = func(cpu cpumask.CPU, prev *sched.Task, st sched.TaskState, next *sched.Task) {
		t.add(1, int64(cpu), pid(prev), int64(st), pid(next))
		if prevSwitch != nil {
			prevSwitch(cpu, prev, st, next)
		}
	}
	hooks.Wakeup = func(p *sched.Task, cpu cpumask.CPU) {
		t.add(2, pid(p), int64(cpu), 0, 0)
		if prevWakeup != nil {
			prevWakeup(p, cpu)
		}
	}
	hooks.Migrate = func(p *sched.Task, orig, dest cpumask.CPU) {
		t.add(3, pid(p), int64(orig), int64(dest), 0)
		if prevMigrate != nil {
			prevMigrate(p, orig, dest)
		}
	}
}

func (t *traceHash) add(kind int64, a, b, c, d int64) {
	t.b = t.b[:0]
	for _, v := range []int64{int64(t.k.Eng.Now()), kind, a, b, c, d} {
		t.b = binary.LittleEndian.AppendUint64(t.b, uint64(v))
	}
	h := fnv.New64a()
	h.Write(binary.LittleEndian.AppendUint64(nil, t.h))
	h.Write(t.b)
	t.h = h.Sum64()
}

func (t *traceHash) sum() uint64 { return t.h }
