package compare

import (
	"strconv"
	"strings"

	"github.com/schedlab/schedlab/internal/workload"
)

// Stat is the statistic a metric is summarised with over runs.
type Stat int

const (
	// AMean is the arithmetic mean: times and latencies (mmtests'
	// Amean, AMD's AMean).
	AMean Stat = iota
	// HMean is the harmonic mean n/Σ(1/x): rates such as MB/s, whose
	// mean over runs of equal work is the harmonic one (mmtests' Hmean).
	HMean
	// Median is used instead of either with the Mann-Whitney U test.
	Median
)

func (s Stat) String() string {
	switch s {
	case HMean:
		return "HMean"
	case Median:
		return "Median"
	}
	return "AMean"
}

// MetricInfo says how a workload metric is read: its unit, which way is
// better, the statistic over runs and how it is printed.
type MetricInfo struct {
	Name  string // the workload's metric name ("time_s")
	Label string // for table headers ("time")
	Unit  string // for humans ("s", "usec", "MB/s")
	// BenchUnit is the unit in the Go benchmark format: no blanks, and
	// distinct per metric of one benchmark ("s", "p99-us", "copy-MB/s").
	BenchUnit string
	// Better is the direction the workload gave the metric (never
	// guessed from its name: Describe sets it, Metric leaves it unset).
	Better   workload.Better
	Stat     Stat
	Decimals int
	// Percentile is set for latency percentiles (50 for p50, 0 for
	// the minimum, 100 for the maximum); LatencyGroup names the
	// distribution it belongs to ("latency_us"), so a CDF can be drawn
	// from the percentiles of one group.
	Percentile   float64
	LatencyGroup string
}

// HigherBetter reports whether the metric improves upwards; a counter's
// change is shown as more (+) or fewer (−), so it reads upwards too.
func (m MetricInfo) HigherBetter() bool {
	return m.Better == workload.HigherIsBetter || m.Better == workload.Counter
}

// known are the metrics of the workloads of internal/workload (the names
// `schedlab run --json` writes).
var known = map[string]MetricInfo{
	"time_s":          {Label: "time", Unit: "s", BenchUnit: "s", Stat: AMean, Decimals: 4},
	"throughput_mb_s": {Label: "throughput", Unit: "MB/s", BenchUnit: "MB/s", Stat: HMean, Decimals: 2},
	"copy_mb_s":       {Label: "Copy", Unit: "MB/s", BenchUnit: "copy-MB/s", Stat: HMean, Decimals: 2},
	"scale_mb_s":      {Label: "Scale", Unit: "MB/s", BenchUnit: "scale-MB/s", Stat: HMean, Decimals: 2},
	"add_mb_s":        {Label: "Add", Unit: "MB/s", BenchUnit: "add-MB/s", Stat: HMean, Decimals: 2},
	"triad_mb_s":      {Label: "Triad", Unit: "MB/s", BenchUnit: "triad-MB/s", Stat: HMean, Decimals: 2},
	"messages":        {Label: "messages", Unit: "messages", BenchUnit: "messages", Stat: AMean, Decimals: 0},
	"bytes":           {Label: "bytes", Unit: "bytes", BenchUnit: "bytes", Stat: AMean, Decimals: 0},
	"samples":         {Label: "samples", Unit: "samples", BenchUnit: "samples", Stat: AMean, Decimals: 0},
	"loops":           {Label: "loops", Unit: "loops", BenchUnit: "loops", Stat: AMean, Decimals: 0},
}

// Describe is how a run's metric is read: Metric's label, unit and
// statistic, and the direction the workload gave it.
func Describe(m workload.Metric) MetricInfo {
	info := Metric(m.Name)
	info.Better = m.Better
	return info
}

// Metric describes a metric by name, but for its direction (left unset:
// only the workload knows it, see Describe). Names it does not know are
// read by their suffix: a percentile "X.pNN" or "X.pNN_N" (mean over
// runs), "_s", "_ms", "_us", "_ns" times (mean), "_per_s", "_mb_s", "rps"
// rates (harmonic mean); anything else has an arithmetic mean.
func Metric(name string) MetricInfo {
	if m, ok := known[name]; ok {
		m.Name = name
		return m
	}
	m := MetricInfo{Name: name, Label: name, Unit: "", BenchUnit: benchUnitName(name), Stat: AMean, Decimals: 2}
	if dot := strings.LastIndexByte(name, '.'); dot > 0 {
		group, q := name[:dot], name[dot+1:]
		unit := unitOf(group)
		if p, ok := percentileOf(q); ok {
			m.Percentile, m.LatencyGroup = p, group
			m.Label = q + " " + strings.TrimSuffix(strings.TrimSuffix(group, "_"+unitSuffix(group)), "_us")
			m.Label = strings.ReplaceAll(m.Label, "_", " ")
			m.Unit = unit
			m.BenchUnit = q + "-" + benchUnitName(unitSuffix(group))
			return m
		}
	}
	switch {
	case strings.HasSuffix(name, "_mb_s"):
		m.Unit, m.Stat = "MB/s", HMean
	case strings.HasSuffix(name, "_per_s") || strings.HasSuffix(name, "rps"):
		m.Unit, m.Stat = "1/s", HMean
	default:
		m.Unit = unitOf(name)
	}
	return m
}

func unitSuffix(name string) string {
	if i := strings.LastIndexByte(name, '_'); i >= 0 {
		return name[i+1:]
	}
	return ""
}

func unitOf(name string) string {
	switch unitSuffix(name) {
	case "s":
		return "s"
	case "ms":
		return "ms"
	case "us":
		return "usec"
	case "ns":
		return "ns"
	}
	return ""
}

func benchUnitName(s string) string {
	s = strings.ReplaceAll(s, ".", "-")
	s = strings.ReplaceAll(s, " ", "-")
	if s == "" {
		return "value"
	}
	return s
}

// percentileOf reads "p99", "p99_9", "min" (0) and "max" (100).
func percentileOf(q string) (float64, bool) {
	switch q {
	case "min":
		return 0, true
	case "max":
		return 100, true
	}
	if len(q) < 2 || q[0] != 'p' {
		return 0, false
	}
	v, err := strconv.ParseFloat(strings.Replace(q[1:], "_", ".", 1), 64)
	if err != nil || v < 0 || v > 100 {
		return 0, false
	}
	return v, true
}
