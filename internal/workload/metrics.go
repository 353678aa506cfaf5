package workload

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
)

// Metrics are a run's figures in the workload's order. They are the one
// encoding of metrics in schedlab: `schedlab run --json`, sweep records and
// fidelity results all write them through MarshalJSON.
type Metrics []Metric

// Get returns the value of the named metric.
func (m Metrics) Get(name string) (float64, bool) {
	for _, x := range m {
		if x.Name == name {
			return x.Value, true
		}
	}
	return 0, false
}

// MarshalJSON writes {"name": value, ...} with the keys in order. Integral
// values are written without a fraction or exponent; NaN and ±Inf, which
// JSON cannot hold, are written as null (a metric a run could not measure,
// e.g. a percentile of no samples).
func (m Metrics) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, x := range m {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := json.Marshal(x.Name)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		writeNumber(&b, x.Value)
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

// UnmarshalJSON reads the object back in order; null reads as NaN.
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
		var v *float64
		if err := dec.Decode(&v); err != nil {
			return fmt.Errorf("metric %s: %v", name, err)
		}
		val := math.NaN()
		if v != nil {
			val = *v
		}
		*m = append(*m, Metric{Name: name, Value: val})
	}
	_, err = dec.Token()
	return err
}
