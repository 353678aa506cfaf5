package calibrate

import (
	"bytes"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/schedlab/schedlab/internal/costmodel"
	"github.com/schedlab/schedlab/internal/topology"
)

func preset(t *testing.T, name string) *topology.MachineSpec {
	t.Helper()
	s, ok := topology.Preset(name)
	if !ok {
		t.Fatalf("no preset %s", name)
	}
	return s
}

func mustFor(t *testing.T, s *topology.MachineSpec) *costmodel.Params {
	t.Helper()
	p, err := costmodel.For(s)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func fakeMeasurements() *Measurements {
	return &Measurements{
		Host: "testhost", Kernel: "6.1.0", Date: "2025-01-02", CPUModel: "Test CPU",
		Syscall: 95,
		Pipe:    map[int]IOCost{100: {Write: 600, Read: 620}, 1000: {Write: 900, Read: 1100}},
		Unix:    map[int]IOCost{100: {Write: 1500, Read: 1400}},
		TCP:     map[int]IOCost{100: {Write: 2400, Read: 700}, 1000: {Write: 2580, Read: 1060}},
		// the shared table's fdget: 30 ns more a write, 40 a read
		PipeShared: IOCost{Write: 630, Read: 660},
		PingPong: []PingPong{
			{Dist: costmodel.SameCPU, A: 0, B: 0, RoundTrip: 4000},
			{Dist: costmodel.SameLLC, A: 0, B: 1, RoundTrip: 9000},
		},
		RingThreads: 5000, RingProcs: 6900,
		Lines:           []LineBounce{{Dist: costmodel.SameLLC, A: 0, B: 1, OneWay: 42.4}},
		MemBW:           []MemPoint{{"llc", 1, 20.5}, {"llc", 2, 33.3}},
		PrivateCacheKiB: 512, LLCKiB: 32768,
	}
}

// Reference: the rules on Derive.
func TestDerive(t *testing.T) {
	spec := preset(t, "chromebook-7c") // one LLC, one node, idle states
	got := map[string]float64{}
	for _, s := range Derive(fakeMeasurements(), spec) {
		got[s.Key] = s.Value
		if !strings.HasPrefix(s.Source, "calibration on testhost (2025-01-02): ") {
			t.Errorf("%s: source %q", s.Key, s.Source)
		}
	}
	perByte := ((900 - 600) + (1100 - 620)) / 2 / 900.0
	want := map[string]float64{
		"syscall_ns":       95,
		"pipe_ns_per_byte": costmodel.RoundSig3(perByte),
		"pipe_write_ns":    math.Round(600 - 100*perByte),
		"pipe_read_ns":     math.Round(620 - 100*perByte),
		"unix_send_ns":     1500,
		"unix_recv_ns":     1400,
		// (180 + 360)/2/900 = 0.3 ns a byte; 100 B's copy off each call
		"tcp_ns_per_byte": 0.3,
		"tcp_send_ns":     2400 - 30,
		"tcp_recv_ns":     700 - 30,
		"fget_shared_ns":  (30 + 40) / 2,
		// the ping-pong's threads pay the shared table's write and read
		"context_switch_ns": 2000 - 1290,
		// the process ring's hop less the thread ring's
		"context_switch_mm_ns": 6900 - 5000,
		// 4500 − 1290 − 710 − WFI's 1 µs exit (the governor's pick for
		// 4.5 µs) − the pipe's lines a hop between two cores waits for
		// in the model: the 3 the write pays before its wakeup, the
		// read's 4 and 100 B's 2 data lines, at the measured 42.4 ns
		// bounce
		"ipi_same_llc_ns":   math.Round(4500 - 1290 - 710 - 1000 - 9*42.4),
		"line_same_llc_ns":  42,
		"mem_bw_core_gbps":  20.5,
		"mem_bw_llc_gbps":   33.3,
		"mem_bw_node_gbps":  33.3,
		"private_cache_kib": 512,
		"llc_kib":           32768,
	}
	for k, v := range want {
		if g, ok := got[k]; !ok || math.Abs(g-v) > 1e-9 {
			t.Errorf("%s = %v (present %v), want %v", k, g, ok, v)
		}
	}
	if _, ok := got["unix_ns_per_byte"]; ok {
		t.Error("unix_ns_per_byte derived without a second message size")
	}
	m := fakeMeasurements()
	m.RingProcs = 0
	for _, s := range Derive(m, spec) {
		if s.Key == "context_switch_mm_ns" {
			t.Error("context_switch_mm_ns derived without the process ring")
		}
	}
	m = fakeMeasurements()
	m.PipeShared = IOCost{}
	for _, s := range Derive(m, spec) {
		switch {
		case s.Key == "fget_shared_ns":
			t.Error("fget_shared_ns derived without the shared-table loop")
		case s.Key == "context_switch_ns" && s.Value != 2000-1220:
			t.Errorf("without the shared-table loop context_switch_ns = %v, want the private loop's 2000 − 1220", s.Value)
		}
	}
	if _, ok := got["smt_factor"]; ok {
		t.Error("smt_factor derived without an SMT measurement")
	}
}

// On a host whose clusters are smaller than its LLC (the Kunpeng 920's
// clusters of 4 cores), a ping-pong inside a cluster gives
// ipi_same_cluster_ns and one across the LLC's clusters ipi_same_llc_ns,
// each by the rule on Derive with its own line bounce; without a pair
// across clusters, ipi_same_llc_ns is the cluster's figure.
func TestDeriveClusterIPI(t *testing.T) {
	spec := preset(t, "kunpeng920-96")
	m := fakeMeasurements()
	m.PingPong = []PingPong{
		{Dist: costmodel.SameCPU, A: 0, B: 0, RoundTrip: 4000},
		{Dist: costmodel.SameLLC, A: 0, B: 4, RoundTrip: 11000},
		{Dist: costmodel.SameCluster, A: 0, B: 1, RoundTrip: 9000},
	}
	m.Lines = []LineBounce{{Dist: costmodel.SameCluster, A: 0, B: 1, OneWay: 30}, {Dist: costmodel.SameLLC, A: 0, B: 4, OneWay: 40}}
	derive := func(m *Measurements) map[string]float64 {
		got := map[string]float64{}
		for _, s := range Derive(m, spec) {
			got[s.Key] = s.Value
		}
		return got
	}
	// half the round trip − the shared table's write and read (1290) −
	// the context switch (2000 − 1290) − WFI's wake time (the preset's
	// only state) − 9 lines a hop at the bounce measured at that distance
	wfi := float64(spec.IdleStatesOf(1)[0].Wake())
	cluster := math.Round(4500 - 1290 - 710 - wfi - 9*30)
	llc := math.Round(5500 - 1290 - 710 - wfi - 9*40)
	got := derive(m)
	if got["ipi_same_cluster_ns"] != cluster || got["ipi_same_llc_ns"] != llc {
		t.Errorf("ipi_same_cluster_ns %v, ipi_same_llc_ns %v; want %v and %v", got["ipi_same_cluster_ns"], got["ipi_same_llc_ns"], cluster, llc)
	}
	m.PingPong = m.PingPong[:1:1]
	m.PingPong = append(m.PingPong, PingPong{Dist: costmodel.SameCluster, A: 0, B: 1, RoundTrip: 9000})
	got = derive(m)
	if got["ipi_same_cluster_ns"] != cluster || got["ipi_same_llc_ns"] != cluster {
		t.Errorf("no pair across clusters: ipi_same_cluster_ns %v, ipi_same_llc_ns %v; want both %v", got["ipi_same_cluster_ns"], got["ipi_same_llc_ns"], cluster)
	}
}

// The calibrated machine file reads back as the same machine with the
// measured costs.
func TestWriteMachineRoundTrip(t *testing.T) {
	for _, name := range []string{"chromebook-7c", "zen3-2s-nps4"} {
		spec := preset(t, name)
		spec.Name, spec.Description = "cal-"+name, `a "quoted" description`
		settings := Derive(fakeMeasurements(), spec)
		var b bytes.Buffer
		if err := WriteMachine(&b, spec, settings, []string{"test file"}); err != nil {
			t.Fatal(err)
		}
		back, err := topology.ParseYAML("cal.yaml", b.Bytes())
		if err != nil {
			t.Fatalf("%s: %v\n%s", name, err, b.String())
		}
		if back.Name != spec.Name || back.Description != spec.Description || !reflect.DeepEqual(back.CPUs, spec.CPUs) ||
			!reflect.DeepEqual(back.Distance, spec.Distance) || !reflect.DeepEqual(back.IdleStates, spec.IdleStates) ||
			back.ReclaimDistance != spec.ReclaimDistance {
			t.Errorf("%s: the machine does not read back the same", name)
		}
		p := mustFor(t, back)
		if p.Name != costmodel.GenericName {
			t.Errorf("calibrated file based on %s", p.Name)
		}
		for _, s := range settings {
			if p.Get(s.Key) != s.Value || !strings.HasPrefix(p.Source(s.Key), s.Source+" (cal.yaml:") {
				t.Errorf("%s = %v from %q, want %v from %q", s.Key, p.Get(s.Key), p.Source(s.Key), s.Value, s.Source)
			}
		}
	}
}

func TestParseHackbenchTime(t *testing.T) {
	out := "Running in threaded mode with 2 groups using 40 file descriptors each (== 80 tasks)\n" +
		"Each sender will pass 200 messages of 100 bytes\nTime: 0.123\n"
	if v, err := ParseHackbenchTime([]byte(out)); err != nil || v != 0.123 {
		t.Errorf("got %v, %v", v, err)
	}
	if _, err := ParseHackbenchTime([]byte("No measurements available\n")); err == nil {
		t.Error("no Time: line accepted")
	}
}

// Golden: the validation table's layout; the simulated column is the mean
// over the seeds, the real one the median, and the summary counts the rows
// within the tolerance (0.92 is, 1.25 is not, a failed simulation is not
// counted).
func TestValidationTableFormat(t *testing.T) {
	res := []HackbenchResult{
		{HackbenchCase: HackbenchCase{"-T", 1, 200}, Real: []float64{0.05, 0.04, 0.06}, Sim: []float64{0.045, 0.047}},
		{HackbenchCase: HackbenchCase{"-T", 2, 200}, Real: []float64{0.1}, Sim: []float64{0.12, 0.13}},
		{HackbenchCase: HackbenchCase{"-P", 4, 200}, Real: []float64{0.2, 0.3}, SimErr: errors.New("x")},
	}
	var b bytes.Buffer
	if err := WriteValidationTable(&b, res, 15); err != nil {
		t.Fatal(err)
	}
	want := "  hackbench  groups  loops  real (s)   real range  simulated (s)    sim range  sim/real  within ±15%\n" +
		"      -p -T       1    200     0.050  0.040-0.060          0.046  0.045-0.047      0.92          yes\n" +
		"      -p -T       2    200     0.100  0.100-0.100          0.125  0.120-0.130      1.25           no\n" +
		"      -p -P       4    200     0.250  0.200-0.300              -            -         -            -\n" +
		"\n1 of 2 cases within ±15% of real\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
	// The tolerance's edge counts as within.
	edge := HackbenchResult{Real: []float64{1}, Sim: []float64{0.85}}
	if !edge.Within(15) || edge.Within(14.9) {
		t.Errorf("ratio 0.85: within 15%% %v, within 14.9%% %v", edge.Within(15), edge.Within(14.9))
	}
	if got := (HackbenchCase{"-P", 2, 10}).Args(); strings.Join(got, " ") != "-p -P -g 2 -l 10" {
		t.Errorf("args %v", got)
	}
}
