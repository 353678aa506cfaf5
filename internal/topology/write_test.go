package topology

import (
	"bytes"
	"fmt"
	"gopkg.in/yaml.v3"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/schedlab/schedlab/internal/fileerr"
	"github.com/schedlab/schedlab/internal/golden"
)

// specForCompare is s without what a file cannot carry over: where it was
// read from, and the lines of its costs settings.
func specForCompare(s *MachineSpec) *MachineSpec {
	c := s.Clone()
	c.Source = ""
	if c.Costs != nil {
		c.Costs.File = ""
		stripPositions(c.Costs.Node)
	}
	return c
}

// stripPositions clears what a written file does not carry over of a costs
// section: lines, columns, the quoting style of scalars and comments.
func stripPositions(n *yaml.Node) {
	if n == nil {
		return
	}
	n.Line, n.Column = 0, 0
	n.HeadComment, n.LineComment, n.FootComment = "", "", ""
	if n.Kind == yaml.ScalarNode {
		n.Style = 0
	}
	for _, k := range n.Content {
		stripPositions(k)
	}
}

// costsNode is text parsed as a costs section.
func costsNode(t *testing.T, text string) *CostsSection {
	t.Helper()
	n, err := fileerr.ReadYAML("box.yaml", []byte(text), "machine files")
	if err != nil {
		t.Fatal(err)
	}
	if n == nil {
		n = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	}
	return &CostsSection{File: "box.yaml", Node: n}
}

// roundTrip writes s, parses the result as file and fails unless the spec
// is the same.
func roundTrip(t *testing.T, s *MachineSpec, file string) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := WriteYAML(&b, s); err != nil {
		t.Fatalf("WriteYAML: %v", err)
	}
	got, err := ParseYAML(file, b.Bytes())
	if err != nil {
		t.Fatalf("the written file does not load: %v\n%s", err, b.String())
	}
	if g, w := specForCompare(got), specForCompare(s); !reflect.DeepEqual(g, w) {
		t.Fatalf("the written file loads as another spec:\n%s\nfile:\n%s", specDiff(g, w), b.String())
	}
	return b.Bytes()
}

func specDiff(got, want *MachineSpec) string {
	if len(got.CPUs) != len(want.CPUs) {
		return fmt.Sprintf("%d CPUs, want %d", len(got.CPUs), len(want.CPUs))
	}
	for i := range got.CPUs {
		if !reflect.DeepEqual(got.CPUs[i], want.CPUs[i]) {
			return fmt.Sprintf("cpu %d:\n got %+v\nwant %+v", i, got.CPUs[i], want.CPUs[i])
		}
	}
	g, w := *got, *want
	g.CPUs, w.CPUs = nil, nil
	return fmt.Sprintf(" got %+v\nwant %+v", g, w)
}

// Every preset written as a machine file loads as the same spec, in the
// regular form (they are all made of identical parts), and builds the same
// domains in both baselines.
func TestWriteYAMLPresets(t *testing.T) {
	for _, p := range Presets() {
		t.Run(p.Name, func(t *testing.T) {
			s := mustPreset(t, p.Name)
			out := roundTrip(t, s, p.Name+".yaml")
			if !bytes.Contains(out, []byte("\nsockets: ")) || bytes.Contains(out, []byte("\ncpus:")) {
				t.Errorf("not written in the regular form:\n%s", out)
			}
			f, _ := ParseYAML(p.Name+".yaml", out)
			if got, want := jsonOf(t, f), jsonOf(t, s); got != want {
				t.Errorf("domains differ:\n%s", firstDiff(got, want))
			}
		})
	}
}

// The format is pinned on two presets: a big.LITTLE board with per-range
// values and idle states, and an x86 server with reclaim_distance.
func TestWriteYAMLGolden(t *testing.T) {
	for _, name := range []string{"hikey960", "zen3-2s-nps4"} {
		t.Run(name, func(t *testing.T) {
			var b bytes.Buffer
			if err := WriteYAML(&b, mustPreset(t, name)); err != nil {
				t.Fatal(err)
			}
			golden.Check(t, filepath.Join("testdata", "golden", name+".yaml"), b.Bytes())
		})
	}
}

// The machine files of testdata, per-CPU and regular, round-trip; one that
// cannot be written regularly (a core with two threads beside single-thread
// cores) is written per CPU.
func TestWriteYAMLFiles(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "machines", "*.yaml"))
	if len(files) < 5 {
		t.Fatalf("only %d machine files in testdata", len(files))
	}
	for _, name := range files {
		t.Run(filepath.Base(name), func(t *testing.T) {
			s, err := LoadFile(name)
			if err != nil {
				t.Fatal(err)
			}
			out := roundTrip(t, s, name)
			if filepath.Base(name) == "odd.yaml" && !bytes.Contains(out, []byte("\ncpus:\n")) {
				t.Errorf("odd.yaml is not written per CPU:\n%s", out)
			}
		})
	}
}

// Specs the regular form cannot state are written per CPU and still
// round-trip: ids with gaps, frequency domains that follow no scope and are
// not numbered 0..k-1, machine-wide idle states with a per-CPU exception,
// an empty per-CPU list, costs with and without sources.
func TestWriteYAMLPerCPUCases(t *testing.T) {
	base := func() *MachineSpec {
		r := Regular{Arch: ArchX86, Sockets: 1, NodesPerSocket: 1, LLCsPerNode: 2, CoresPerLLC: 2, ThreadsPerCore: 2}
		s, err := r.Spec()
		if err != nil {
			t.Fatal(err)
		}
		s.Name = "box"
		return s
	}
	for _, tc := range []struct {
		name    string
		edit    func(s *MachineSpec)
		regular bool
	}{
		{"plain", func(s *MachineSpec) {}, true},
		{"core ids with gaps", func(s *MachineSpec) {
			for i := range s.CPUs {
				s.CPUs[i].Core *= 10
				s.CPUs[i].Cluster *= 10
			}
		}, false},
		{"freq domains numbered 5 and 9", func(s *MachineSpec) {
			for i := range s.CPUs {
				s.CPUs[i].FreqDomain = 5 + 4*s.CPUs[i].LLC
			}
		}, false},
		{"freq domains as a list", func(s *MachineSpec) {
			for i := range s.CPUs {
				s.CPUs[i].FreqDomain = 1 - s.CPUs[i].LLC
			}
		}, true},
		{"idle exception", func(s *MachineSpec) {
			s.IdleStates = []IdleState{{Name: "C1", ExitLatencyNs: 1000, TargetResidencyNs: 2000}}
			s.CPUs[3].IdleStates = []IdleState{}
		}, false},
		{"idle per range", func(s *MachineSpec) {
			s.CPUs[3].IdleStates = []IdleState{}
			s.CPUs[1].IdleStates = []IdleState{{Name: "C1", ExitLatencyNs: 1000, TargetResidencyNs: 2000}, {Name: "CL", ExitLatencyNs: 9000, TargetResidencyNs: 20000, Cluster: true}}
		}, true},
		{"descriptions and costs", func(s *MachineSpec) {
			s.Description = "a \"quoted\"\tdescription: with # and \u00e9"
			s.ReclaimDistance = 40
			s.Costs = costsNode(t, "base: hikey\ncontext_switch_ns: 1500\n"+
				"smt_factor: {value: 0.625, source: \"a: source, with {braces}\"}\ntiny: 1.25e-7\nhuge: 3e20\n")
		}, true},
		{"empty costs", func(s *MachineSpec) { s.Costs = costsNode(t, "{}") }, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := base()
			tc.edit(s)
			if err := s.Validate(); err != nil {
				t.Fatalf("test spec is invalid: %v", err)
			}
			out := roundTrip(t, s, "box.yaml")
			if regular := !bytes.Contains(out, []byte("\ncpus:\n")); regular != tc.regular {
				t.Errorf("regular form %v, want %v:\n%s", regular, tc.regular, out)
			}
		})
	}
}

func TestWriteYAMLUnwritable(t *testing.T) {
	s := mustPreset(t, "hikey")
	s.IdleStates[1].ExitLatencyNs = 250500
	var b bytes.Buffer
	err := WriteYAML(&b, s)
	if err == nil || !strings.Contains(err.Error(), `idle state "cpu-sleep": exit latency 250500 ns, target residency 1000000 ns and gate delay 0 ns must be whole microseconds`) || b.Len() != 0 {
		t.Errorf("sub-microsecond latency: %v, wrote %d bytes", err, b.Len())
	}
	s = mustPreset(t, "hikey")
	s.IdleStates[0].Name = "WFI\xff"
	if err := WriteYAML(&b, s); err == nil || !strings.Contains(err.Error(), "not valid UTF-8") {
		t.Errorf("invalid UTF-8: %v", err)
	}
}

// The golden machine files are themselves machine files that load as their
// presets (kept in testdata/golden so that -rewrite rewrites them).
func TestWriteYAMLGoldenLoads(t *testing.T) {
	for _, name := range []string{"hikey960", "zen3-2s-nps4"} {
		data, err := os.ReadFile(filepath.Join("testdata", "golden", name+".yaml"))
		if err != nil {
			t.Fatal(err)
		}
		f, err := ParseYAML(name+".yaml", data)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(specForCompare(f), specForCompare(mustPreset(t, name))) {
			t.Errorf("%s.yaml does not load as the preset", name)
		}
	}
}

// Validate holds a spec to what a machine file can state, so that every
// valid spec can be written and read back.
func TestValidateFileLimits(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(s *MachineSpec)
		want string
	}{
		{"max freq", func(s *MachineSpec) { s.CPUs[2].MaxFreqKHz = 1e9 + 1 }, "cpu 2: max_freq_khz must be 0..1000000000, not 1000000001"},
		{"idle", func(s *MachineSpec) { s.IdleStates[2].TargetResidencyNs = 1e12 + 1000 }, `idle state "cluster-sleep": exit latency, target residency and wake time must be 0..1000000000 us`},
		{"reclaim low", func(s *MachineSpec) { s.ReclaimDistance = 9 }, "reclaim_distance must be 10..255, not 9"},
		{"reclaim high", func(s *MachineSpec) { s.ReclaimDistance = 256 }, "reclaim_distance must be 10..255, not 256"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := mustPreset(t, "hikey")
			tc.edit(s)
			if err := s.Validate(); err == nil || err.Error() != tc.want {
				t.Errorf("got %v, want %s", err, tc.want)
			}
		})
	}
}
