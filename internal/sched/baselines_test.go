package sched

import (
	"testing"

	"github.com/schedlab/schedlab/internal/kernels"
	"github.com/schedlab/schedlab/internal/topology"
)

// Tests of the differences between the kernel baselines (kernels.Baseline
// Differences). Each runs the same situation on the baseline and on the
// kernel it differs from and asserts the outcome the baseline's code
// gives, derived in the comment, so that it fails when the baseline's
// rule flips.

// TestCalculateImbalanceNumaV512: the task imbalance between two NUMA
// groups with spare capacity.
//
// Reference: fair.c:calculate_imbalance, adjust_numa_imbalance,
// allow_numa_imbalance, v5.12 and v6.0.
//
// The NUMA domain of zen3-2s-nps1 (256 CPUs, imb_numa_nr 8 in v6.0, none
// in v5.12) with prefer_sibling (its child DIE has SD_PREFER_SIBLING), so
// the raw imbalance is busiest.sum_nr_running − local.sum_nr_running.
//
//	v6.0: imb = adjust(raw, local + 1, 8) >> 1, where adjust returns 0 if
//	      local + 1 <= 8 and raw <= 2, else raw.
//	v5.12: imb = adjust(raw >> 1, busiest, 128), where adjust returns 0 if
//	      busiest < 128 >> 2 = 32 and raw >> 1 <= 2, else raw >> 1.
//
//	busiest local raw   v6.0            v5.12
//	   4      0    4    4 >> 1 = 2      2 <= 2, 4 < 32 -> 0
//	   3      0    3    3 >> 1 = 1      1 -> 0
//	   6      2    4    2               0
//	  40      0   40    20              20 (40 >= 32: no allowance)
//	  12     10    2    local + 1 > 8: 2 >> 1 = 1    1 -> 0
//	   2      0    2    0 (2 <= 2)      1 -> 0
func TestCalculateImbalanceNumaV512(t *testing.T) {
	cases := []struct {
		busiest, local int
		v60, v512      int64
	}{
		{4, 0, 2, 0}, {3, 0, 1, 0}, {6, 2, 2, 0}, {40, 0, 20, 20}, {12, 10, 1, 0}, {2, 0, 0, 0},
	}
	for _, kern := range []string{kernels.V60, kernels.V512} {
		k := newTestKernel(t, "zen3-2s-nps1", kern)
		numa := k.Domains(0)[3]
		if numa.T.Flags&topology.SDNuma == 0 {
			t.Fatalf("%s: CPU 0's top domain is %s", kern, numa.T.Name)
		}
		for _, tc := range cases {
			env := &lbEnv{sd: numa, idle: CPUIdle}
			sds := &sdLbStats{preferSibling: true}
			sds.busiestStat = SgLbStats{SumNrRunning: tc.busiest, SumHNrRunning: tc.busiest, GroupWeight: 128,
				IdleCPUs: 128 - tc.busiest, GroupType: GroupHasSpare, GroupCapacity: 128 * 1024}
			sds.localStat = SgLbStats{SumNrRunning: tc.local, SumHNrRunning: tc.local, GroupWeight: 128,
				IdleCPUs: 128 - tc.local, GroupType: GroupHasSpare, GroupCapacity: 128 * 1024}
			k.calculateImbalance(env, sds)
			want := tc.v60
			if kern == kernels.V512 {
				want = tc.v512
			}
			if env.imbalance != want || env.migrationType != migrateTask {
				t.Errorf("%s busiest %d local %d: imbalance %d (%v), want %d tasks", kern, tc.busiest, tc.local, env.imbalance, env.migrationType, want)
			}
		}
	}
}
