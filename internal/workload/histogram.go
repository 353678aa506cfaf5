package workload

import (
	"encoding/json"
	"fmt"
)

// Histogram is the whole distribution behind a group of percentile
// metrics, in the buckets the tool itself keeps: schbench's latencies in
// its plat buckets, from which it computes the percentiles it prints. It
// lets a report draw the distribution (a CDF) rather than the few
// percentiles the tool prints.
type Histogram struct {
	// Name is the metric group the histogram details: "latency_us" for
	// the metrics latency_us.p50 … latency_us.p99_9.
	Name string `json:"name"`
	// Scheme names the tool's bucket scheme ("schbench_plat"); the
	// workload's documentation describes it.
	Scheme string `json:"scheme"`
	// Buckets are the buckets that hold samples, in ascending order.
	Buckets []Bucket
}

// Bucket is one bucket of a Histogram: the samples from Lo to Hi
// (inclusive, in the group's unit) and Value, the value the tool reports
// for a percentile that falls in the bucket.
type Bucket struct {
	Lo    uint64 `json:"lo"`
	Hi    uint64 `json:"hi"`
	Value uint64 `json:"value"`
	Count uint64 `json:"count"`
}

// Samples is the number of samples in h.
func (h *Histogram) Samples() uint64 {
	var n uint64
	for _, b := range h.Buckets {
		n += b.Count
	}
	return n
}

// Histogrammer is an Instance that keeps the distributions behind its
// percentile metrics; a run records them (sim.Result.Histograms).
type Histogrammer interface {
	// Histograms are the run's histograms, in a fixed order.
	Histograms() []Histogram
}

// histogramJSON is a Histogram in JSON: the buckets' fields as four
// arrays, which a run record (one line per number) holds in a quarter of
// the lines an object per bucket takes.
type histogramJSON struct {
	Name   string   `json:"name"`
	Scheme string   `json:"scheme"`
	Lo     []uint64 `json:"lo"`
	Hi     []uint64 `json:"hi"`
	Value  []uint64 `json:"value"`
	Count  []uint64 `json:"count"`
}

// MarshalJSON writes {"name", "scheme", "lo": [...], "hi": [...],
// "value": [...], "count": [...]}, bucket i at index i of each array.
func (h Histogram) MarshalJSON() ([]byte, error) {
	j := histogramJSON{Name: h.Name, Scheme: h.Scheme, Lo: []uint64{}, Hi: []uint64{}, Value: []uint64{}, Count: []uint64{}}
	for _, b := range h.Buckets {
		j.Lo, j.Hi, j.Value, j.Count = append(j.Lo, b.Lo), append(j.Hi, b.Hi), append(j.Value, b.Value), append(j.Count, b.Count)
	}
	return json.Marshal(j)
}

// UnmarshalJSON reads what MarshalJSON writes: four arrays of one length,
// each bucket's lo ≤ value ≤ hi, the buckets in ascending order.
func (h *Histogram) UnmarshalJSON(data []byte) error {
	var j histogramJSON
	if err := json.Unmarshal(data, &j); err != nil {
		return err
	}
	n := len(j.Count)
	if len(j.Lo) != n || len(j.Hi) != n || len(j.Value) != n {
		return fmt.Errorf("histogram %s: lo, hi, value and count have %d, %d, %d and %d buckets", j.Name, len(j.Lo), len(j.Hi), len(j.Value), n)
	}
	*h = Histogram{Name: j.Name, Scheme: j.Scheme, Buckets: make([]Bucket, n)}
	for i := range n {
		b := Bucket{Lo: j.Lo[i], Hi: j.Hi[i], Value: j.Value[i], Count: j.Count[i]}
		if b.Lo > b.Value || b.Value > b.Hi || i > 0 && b.Lo <= h.Buckets[i-1].Hi {
			return fmt.Errorf("histogram %s: bucket %d (lo %d, value %d, hi %d) is not above the one before, or its value is outside it", j.Name, i, b.Lo, b.Value, b.Hi)
		}
		h.Buckets[i] = b
	}
	return nil
}
