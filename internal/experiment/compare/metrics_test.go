package compare

import (
	"testing"

	"github.com/schedlab/schedlab/internal/workload"
)

// Metric reads a name's unit, statistic and percentile, never its
// direction: that is the workload's (Describe).
func TestMetricInfo(t *testing.T) {
	for _, tc := range []struct {
		name         string
		stat         Stat
		pct          float64
		group, bunit string
	}{
		{"time_s", AMean, 0, "", "s"},
		{"throughput_mb_s", HMean, 0, "", "MB/s"},
		{"triad_mb_s", HMean, 0, "", "triad-MB/s"},
		{"latency_us.p99", AMean, 99, "latency_us", "p99-us"},
		{"latency_us.p99_9", AMean, 99.9, "latency_us", "p99_9-us"},
		{"latency_us.max", AMean, 100, "latency_us", "max-us"},
		{"requests_per_s", HMean, 0, "", "requests_per_s"},
		{"max_latency_ms", AMean, 0, "", "max_latency_ms"},
	} {
		m := Metric(tc.name)
		if m.Better != 0 || m.Stat != tc.stat || m.Percentile != tc.pct || m.LatencyGroup != tc.group || m.BenchUnit != tc.bunit {
			t.Errorf("%s: %+v", tc.name, m)
		}
		for _, b := range []workload.Better{workload.LowerIsBetter, workload.HigherIsBetter} {
			if d := Describe(workload.Metric{Name: tc.name, Better: b}); d.Better != b || d.HigherBetter() != (b == workload.HigherIsBetter) || d.Stat != m.Stat {
				t.Errorf("%s %v: %+v", tc.name, b, d)
			}
		}
	}
}
