package workload

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
)

// Metrics carry their direction through JSON, in order; NaN is null.
func TestMetricsJSON(t *testing.T) {
	in := Metrics{
		{Name: "time_s", Value: 0.52, Better: LowerIsBetter},
		{Name: "phase_loops", Value: 303, Better: HigherIsBetter},
		{Name: "latency_us.p99", Value: math.NaN(), Better: LowerIsBetter},
	}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"time_s":{"value":0.52,"better":"lower"},"phase_loops":{"value":303,"better":"higher"},"latency_us.p99":{"value":null,"better":"lower"}}`
	if string(b) != want {
		t.Fatalf("got  %s\nwant %s", b, want)
	}
	var back Metrics
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if len(back) != len(in) {
		t.Fatalf("%d metrics back", len(back))
	}
	for i := range in {
		a, b := in[i], back[i]
		if a.Name != b.Name || a.Better != b.Better || a.Value != b.Value && !(math.IsNaN(a.Value) && math.IsNaN(b.Value)) {
			t.Errorf("metric %d: %+v back as %+v", i, a, b)
		}
	}
	if v, ok := back.Get("phase_loops"); !ok || v != 303 {
		t.Errorf("Get: %v %v", v, ok)
	}
}

func TestMetricsJSONErrors(t *testing.T) {
	if _, err := json.Marshal(Metrics{{Name: "x", Value: 1}}); err == nil || !strings.Contains(err.Error(), "metric x: metric direction 0 is neither lower nor higher") {
		t.Errorf("unset direction: %v", err)
	}
	if _, err := json.Marshal(Metrics{{Name: "x", Value: 1, Better: LowerIsBetter}, {Name: "x", Value: 2, Better: LowerIsBetter}}); err == nil || !strings.Contains(err.Error(), "metric x given twice") {
		t.Errorf("duplicate: %v", err)
	}
	for _, tc := range []struct{ in, want string }{
		{`[]`, "metrics must be an object"},
		{`{"x": 1}`, `metric x: want {"value": N, "better": "lower"|"higher"}`},
		{`{"x": {"value": 1}}`, `metric x: want {"value": N, "better": "lower"|"higher"}`},
		{`{"x": {"better": "lower"}}`, `metric x: want {"value": N, "better": "lower"|"higher"}`},
		{`{"x": {"value": 1, "better": "up"}}`, `better must be "lower" or "higher", not "up"`},
		{`{"x": {"value": "1", "better": "lower"}}`, `metric x: value "1" is not a number`},
		{`{"x": {"value": 1, "better": "lower", "unit": "s"}}`, `unknown field "unit"`},
		{`{"x": {"value": 1, "better": "lower"}, "x": {"value": 2, "better": "lower"}}`, "metric x given twice"},
	} {
		var m Metrics
		if err := json.Unmarshal([]byte(tc.in), &m); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.in, err, tc.want)
		}
	}
}
