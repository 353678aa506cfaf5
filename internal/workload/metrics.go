package workload

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
)

// Metric is one named figure of a run and the way it improves.
type Metric struct {
	Name  string
	Value float64
	// Better is set by the workload for every metric: the tables of
	// compare, sweep and report take the direction from it.
	Better Better
}

// Better says which way a metric improves.
type Better int8

const (
	// LowerIsBetter: times and latencies.
	LowerIsBetter Better = iota + 1
	// HigherIsBetter: rates, and counts of work done in a given time.
	HigherIsBetter
	// Counter: a count or ratio of the kernel's or the simulation's
	// (schedstat, the balancer), neither better nor worse when it
	// grows; tables show its change as more (+) or fewer (−). Workloads
	// never give it; sim.Result.Lookup does, for counters.
	Counter
)

// String is "lower" or "higher", as the Go benchmark format's
// "better=lower" has it; "unset" for the zero value.
func (b Better) String() string {
	switch b {
	case LowerIsBetter:
		return "lower"
	case HigherIsBetter:
		return "higher"
	case Counter:
		return "none"
	}
	return "unset"
}

// MarshalText writes "lower" or "higher"; an unset direction is an error.
func (b Better) MarshalText() ([]byte, error) {
	if b != LowerIsBetter && b != HigherIsBetter && b != Counter {
		return nil, fmt.Errorf("metric direction %d is neither lower nor higher", int(b))
	}
	return []byte(b.String()), nil
}

// UnmarshalText reads "lower" or "higher".
func (b *Better) UnmarshalText(text []byte) error {
	switch string(text) {
	case "lower":
		*b = LowerIsBetter
	case "higher":
		*b = HigherIsBetter
	case "none":
		*b = Counter
	default:
		return fmt.Errorf("better must be \"lower\" or \"higher\", not %q", text)
	}
	return nil
}

// Metrics are a run's figures in the workload's order. They are the one
// encoding of metrics in schedlab: `schedlab run --json`, sweep records and
// fidelity results all write them through MarshalJSON.
type Metrics []Metric

// Get returns the value of the named metric.
func (m Metrics) Get(name string) (float64, bool) {
	x, ok := m.Lookup(name)
	return x.Value, ok
}

// Lookup returns the named metric.
func (m Metrics) Lookup(name string) (Metric, bool) {
	for _, x := range m {
		if x.Name == name {
			return x, true
		}
	}
	return Metric{}, false
}

// MarshalJSON writes {"name": {"value": v, "better": "lower"}, ...} with
// the keys in order. Integral values are written without a fraction or
// exponent; NaN and ±Inf, which JSON cannot hold, are written as null (a
// metric a run could not measure, e.g. a percentile of no samples). A
// metric without a direction, or a name given twice, is an error.
func (m Metrics) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, x := range m {
		if i > 0 {
			b.WriteByte(',')
		}
		for _, y := range m[:i] {
			if y.Name == x.Name {
				return nil, fmt.Errorf("metric %s given twice", x.Name)
			}
		}
		k, err := json.Marshal(x.Name)
		if err != nil {
			return nil, err
		}
		better, err := x.Better.MarshalText()
		if err != nil {
			return nil, fmt.Errorf("metric %s: %v", x.Name, err)
		}
		b.Write(k)
		b.WriteString(`:{"value":`)
		writeNumber(&b, x.Value)
		b.WriteString(`,"better":"`)
		b.Write(better)
		b.WriteString(`"}`)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

func writeNumber(b *bytes.Buffer, v float64) {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		b.WriteString("null")
	case v == math.Trunc(v) && v > -1e15 && v < 1e15:
		b.WriteString(strconv.FormatInt(int64(v), 10))
	default:
		b.WriteString(strconv.FormatFloat(v, 'g', -1, 64))
	}
}

// UnmarshalJSON reads the object back in order; a null value reads as NaN.
// Every metric needs its value and direction, and nothing else.
func (m *Metrics) UnmarshalJSON(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return fmt.Errorf("metrics must be an object")
	}
	*m = (*m)[:0]
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		name, _ := tok.(string)
		if _, dup := m.Lookup(name); dup {
			return fmt.Errorf("metric %s given twice", name)
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return fmt.Errorf("metric %s: %v", name, err)
		}
		var x struct {
			Value  json.RawMessage `json:"value"`
			Better *Better         `json:"better"`
		}
		vd := json.NewDecoder(bytes.NewReader(raw))
		vd.DisallowUnknownFields()
		if err := vd.Decode(&x); err != nil {
			return fmt.Errorf("metric %s: want {\"value\": N, \"better\": \"lower\"|\"higher\"}: %v", name, err)
		}
		if x.Value == nil || x.Better == nil {
			return fmt.Errorf("metric %s: want {\"value\": N, \"better\": \"lower\"|\"higher\"}", name)
		}
		val := math.NaN()
		if string(x.Value) != "null" {
			if err := json.Unmarshal(x.Value, &val); err != nil {
				return fmt.Errorf("metric %s: value %s is not a number", name, x.Value)
			}
		}
		*m = append(*m, Metric{Name: name, Value: val, Better: *x.Better})
	}
	_, err = dec.Token()
	return err
}
