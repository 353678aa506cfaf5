package workload

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// A histogram is written as four arrays, bucket i at index i of each, and
// reads back the same; arrays of different lengths, a value outside its
// bucket or buckets out of order are refused.
func TestHistogramJSON(t *testing.T) {
	h := Histogram{Name: "latency_us", Scheme: "schbench_plat", Buckets: []Bucket{
		{Lo: 3, Hi: 3, Value: 3, Count: 2}, {Lo: 600, Hi: 601, Value: 601, Count: 5},
	}}
	b, err := json.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"name":"latency_us","scheme":"schbench_plat","lo":[3,600],"hi":[3,601],"value":[3,601],"count":[2,5]}`
	if string(b) != want {
		t.Fatalf("got %s\nwant %s", b, want)
	}
	var back Histogram
	if err := json.Unmarshal(b, &back); err != nil || !reflect.DeepEqual(back, h) {
		t.Fatalf("read back %+v, %v", back, err)
	}
	if b, _ := json.Marshal(Histogram{Name: "x"}); !strings.Contains(string(b), `"lo":[]`) {
		t.Errorf("no buckets: %s", b)
	}
	for _, bad := range []string{
		`{"name":"x","lo":[1],"hi":[1],"value":[1],"count":[]}`,
		`{"name":"x","lo":[1],"hi":[2],"value":[3],"count":[1]}`,
		`{"name":"x","lo":[5,4],"hi":[5,4],"value":[5,4],"count":[1,1]}`,
		`{"name":"x","lo":[5,5],"hi":[5,5],"value":[5,5],"count":[1,1]}`,
	} {
		if err := json.Unmarshal([]byte(bad), &back); err == nil || !strings.HasPrefix(err.Error(), "histogram x: ") {
			t.Errorf("%s: %v", bad, err)
		}
	}
}
