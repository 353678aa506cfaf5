package topology

import (
	"bytes"
	"errors"
	"github.com/schedlab/schedlab/internal/fileerr"
	"github.com/schedlab/schedlab/internal/kernels"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/schedlab/schedlab/internal/cpumask"
)

func jsonOf(t *testing.T, s *MachineSpec) string {
	t.Helper()
	s = s.Clone()
	s.Source, s.Description = "", ""
	var b strings.Builder
	if err := FormatJSON(&b, mustBuild(t, s, kernels.V619)); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// A preset written as a YAML file must build exactly the same topology.
func TestYAMLEqualsPreset(t *testing.T) {
	for _, name := range []string{"hikey960", "kunpeng920-96", "chromebook-7c"} {
		t.Run(name, func(t *testing.T) {
			f, err := LoadFile(filepath.Join("testdata", "machines", name+".yaml"))
			if err != nil {
				t.Fatal(err)
			}
			if got, want := jsonOf(t, f), jsonOf(t, mustPreset(t, name)); got != want {
				t.Errorf("file and preset differ:\n%s", firstDiff(got, want))
			}
		})
	}
}

func firstDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := range min(len(al), len(bl)) {
		if al[i] != bl[i] {
			return "line " + strconv.Itoa(i+1) + ":\n got " + al[i] + "\nwant " + bl[i]
		}
	}
	return "lengths differ"
}

func cpuOf(i int) cpumask.CPU { return cpumask.CPU(i) }

// Reference: topology.c:build_sched_domains on an irregular machine given
// per CPU.
func TestYAMLExplicitForm(t *testing.T) {
	s, err := LoadFile(filepath.Join("testdata", "machines", "odd.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if s.Name != "odd" || s.Description != "irregular test machine" || s.Arch != ArchX86 || len(s.CPUs) != 5 {
		t.Fatalf("spec: %+v", s)
	}
	if c := s.CPUs[4]; c.Core != 4 || c.Cluster != 4 || c.Node != 1 || c.Capacity != 1024 || c.FreqDomain != 4 {
		t.Errorf("defaults of cpu4: %+v", c)
	}
	topo := mustBuild(t, s, kernels.V619)
	for cpu, want := range map[int]string{
		0: "SMT:0-1 MC:0-3 NUMA:0-4",
		2: "CLS:2-3 MC:0-3 NUMA:0-4",
		4: "NUMA:0-4",
	} {
		if got := chainSummary(topo, cpuOf(cpu)); got != want {
			t.Errorf("cpu%d: %s, want %s", cpu, got, want)
		}
	}
	if !topo.SMTPresent || topo.SdLLC[4] != nil || topo.SdLLCSize[4] != 1 || topo.SdLLCID[4] != 4 {
		t.Errorf("shortcuts of cpu4: llc %v size %d id %d", topo.SdLLC[4], topo.SdLLCSize[4], topo.SdLLCID[4])
	}
}

func TestYAMLErrors(t *testing.T) {
	const head = "name: box\n"
	for _, tc := range []struct {
		name, yaml, want string
	}{
		{"unknown key", head + "socket: 2\ncores_per_llc: 4\n", `box.yaml:2: unknown key "socket"`},
		{"threads", head + "cores_per_llc: 4\nthreads_per_core: 3\n", "box.yaml:3: threads_per_core must be 1, 2, 4 or 8"},
		{"threads not int", head + "cores_per_llc: 4\nthreads_per_core: two\n", "box.yaml:3: threads_per_core must be 1, 2, 4 or 8"},
		{"sockets type", head + "sockets: two\ncores_per_llc: 4\n", "box.yaml:2: sockets must be an integer"},
		{"sockets zero", head + "sockets: 0\ncores_per_llc: 4\n", "box.yaml:2: sockets must be 1..8192"},
		{"too big", head + "sockets: 64\ncores_per_llc: 64\nthreads_per_core: 8\ndistance: {other_socket: 20}\n", "box.yaml:1: the machine would have more than 8192 CPUs"},
		{"no cores", head + "sockets: 2\n", "box.yaml:1: the machine needs cores_per_llc (or clusters_per_llc and cores_per_cluster), or a cpus list"},
		{"cluster cores alone", head + "cores_per_cluster: 4\n", "box.yaml:2: cores_per_cluster needs clusters_per_llc"},
		{"clusters alone", head + "clusters_per_llc: 4\n", "box.yaml:2: clusters_per_llc needs cores_per_cluster"},
		{"both core counts", head + "clusters_per_llc: 2\ncores_per_cluster: 2\ncores_per_llc: 4\n", "box.yaml:4: cores_per_llc cannot be combined with clusters_per_llc: give cores_per_cluster"},
		{"distance missing", head + "sockets: 2\ncores_per_llc: 4\n", "box.yaml:1: distance is required: the machine has 2 nodes"},
		{"distance size", head + "sockets: 2\ncores_per_llc: 4\ndistance:\n  - [10, 20, 30]\n  - [20, 10, 30]\n  - [30, 30, 10]\n", "box.yaml:4: distance matrix is 3x3 but the machine has 2 node(s)"},
		{"distance row", head + "sockets: 2\ncores_per_llc: 4\ndistance:\n  - [10, 20]\n  - [20]\n", "box.yaml:6: distance matrix row 1 has 1 entries, want 2"},
		{"distance diagonal", head + "sockets: 2\ncores_per_llc: 4\ndistance:\n  - [10, 20]\n  - [20, 11]\n", "box.yaml:6: distance[1][1] is 11; the diagonal must be 10 (LOCAL_DISTANCE)"},
		{"distance symmetric", head + "sockets: 2\ncores_per_llc: 4\ndistance:\n  - [10, 20]\n  - [21, 10]\n", "box.yaml:5: distance matrix is not symmetric: [0][1]=20 but [1][0]=21"},
		{"distance local remote", head + "sockets: 2\ncores_per_llc: 4\ndistance:\n  - [10, 10]\n  - [10, 10]\n", "box.yaml:5: distance[0][1] is 10; distances between nodes must be 11..254"},
		{"distance shorthand", head + "sockets: 2\nnodes_per_socket: 2\ncores_per_llc: 4\ndistance: {other_socket: 32}\n", "box.yaml:5: distance needs same_socket: sockets hold 2 nodes"},
		{"numbering", head + "cores_per_llc: 4\nnumbering: linear\n", `box.yaml:3: numbering must be "x86" (siblings n and n+ncores) or "sequential" (siblings adjacent), not "linear"`},
		{"arch", head + "arch: riscv\ncores_per_llc: 4\n", `box.yaml:2: arch must be "x86" or "arm64", not "riscv"`},
		{"capacity range", head + "cores_per_llc: 4\ncapacity: 2000\n", "box.yaml:3: capacity must be 1..1024"},
		{"capacity no 1024", head + "cores_per_llc: 4\ncapacity: 512\n", "box.yaml:3: the biggest CPU must have capacity 1024 (arch_scale_cpu_capacity is normalised), the largest here is 512"},
		{"capacity overlap", head + "cores_per_llc: 4\ncapacity:\n  - {cpus: 0-2, value: 512}\n  - {cpus: 2-3, value: 1024}\n", "box.yaml:5: cpus 2 are already given a capacity by an earlier entry"},
		{"capacity cpus", head + "cores_per_llc: 4\ncapacity:\n  - {cpus: 0-9, value: 512}\n", `box.yaml:4: CPU 9 out of range in cpu list "0-9" (machine has 4 CPUs)`},
		{"capacity entry", head + "cores_per_llc: 4\ncapacity:\n  - {cpus: 0-1}\n", "box.yaml:4: each capacity entry needs cpus and value"},
		{"smt capacity", head + "cores_per_llc: 2\nthreads_per_core: 2\ncapacity:\n  - {cpus: 0, value: 512}\n  - {cpus: 1-3, value: 1024}\n", "box.yaml:6: cpu 0 and cpu 2 share core 0 but differ in capacity"},
		{"freq scope", head + "cores_per_llc: 4\nfreq_domains: package\n", `box.yaml:3: freq_domains must be one of cpu, core, cluster, llc, node, socket, machine or a list of cpu lists, not "package"`},
		{"freq cover", head + "cores_per_llc: 4\nfreq_domains: [0-1, 2]\n", "box.yaml:3: cpus 3 are in no frequency domain"},
		{"idle field", head + "cores_per_llc: 4\nidle_states:\n  - {name: C1, exit_latency_us: 2}\n", `box.yaml:4: idle state "C1" has no target_residency_us`},
		{"gate delay without cluster", head + "cores_per_llc: 4\nidle_states:\n  - {name: C1, exit_latency_us: 2, target_residency_us: 4, gate_delay_us: 3}\n", `box.yaml:4: idle state "C1": gate_delay_us needs cluster: true (it delays a cluster state)`},
		{"wake in both units", head + "cores_per_llc: 4\nidle_states:\n  - {name: WFI, exit_latency_us: 1, target_residency_us: 1, wake_us: 1, wake_ns: 100}\n", `box.yaml:4: idle state "WFI": give wake_us or wake_ns, not both`},
		{"idle key", head + "cores_per_llc: 4\nidle_states:\n  - {name: C1, exit_latency: 2, target_residency_us: 2}\n", `box.yaml:4: unknown key "exit_latency" in an idle state`},
		{"duplicate key", head + "cores_per_llc: 4\ncores_per_llc: 8\n", `box.yaml:3: duplicate key "cores_per_llc" (first at line 2)`},
		{"mixed forms", head + "sockets: 1\ncpus:\n  - {cpu: 0}\n", `box.yaml:2: "sockets" cannot be combined with a cpus list (use one form or the other)`},
		{"cpu twice", head + "cpus:\n  - {cpu: 0}\n  - {cpu: 0}\n", "box.yaml:4: cpu 0 is listed twice (first at line 3)"},
		{"cpu range", head + "cpus:\n  - {cpu: 0}\n  - {cpu: 5}\n", "box.yaml:4: cpu 5 is out of range: the list has 2 entries, so CPU numbers must be 0..1"},
		{"cpu missing number", head + "cpus:\n  - {core: 0}\n", "box.yaml:3: a cpus entry needs cpu (its number)"},
		{"cpu key", head + "cpus:\n  - {cpu: 0, socket: 0}\n", `box.yaml:3: unknown key "socket" in a cpus entry`},
		{"cpu node needs distance", head + "cpus:\n  - {cpu: 0}\n  - {cpu: 1, node: 1}\n", "box.yaml:2: distance is required: the machine has 2 nodes"},
		{"cpu core across nodes", head + "cpus:\n  - {cpu: 0, core: 0}\n  - {cpu: 1, core: 0, node: 1}\ndistance: [[10, 20], [20, 10]]\n", "box.yaml:4: cpu 0 and cpu 1 share core 0 but differ in node"},
		{"cpu empty node", head + "cpus:\n  - {cpu: 0}\n  - {cpu: 1, node: 2}\ndistance: [[10, 20, 20], [20, 10, 20], [20, 20, 10]]\n", "box.yaml:5: node 1 has no CPUs"},
		{"cluster straddles llc", head + "cpus:\n  - {cpu: 0, cluster: 0, llc: 0}\n  - {cpu: 1, cluster: 0, llc: 1}\n  - {cpu: 2, cluster: 2, llc: 1}\n", "box.yaml:4: cluster 0 spans several LLCs but holds only part of llc 1 (cpu 1): clusters and LLCs must nest"},
		{"not a mapping", "- 1\n- 2\n", "box.yaml:1: a machine file is a mapping of keys (name, sockets, cpus, ...)"},
		{"empty", "", "box.yaml:1: empty machine file"},
		{"syntax tab", head + "cores_per_llc: 4\nidle_states:\n\t- x\n", "box.yaml:4: found character that cannot start any token"},
		{"syntax dash", "- a\nb: c\n", "box.yaml:2: did not find expected '-' indicator"},
		{"syntax", head + "cores_per_llc: [4\n", "box.yaml:2: did not find expected ',' or ']'"},
		{"alias", head + "x: &a 4\n", `box.yaml:2: unknown key "x"`},
		{"alias use", head + "cores_per_llc: &n 4\nsockets: *n\n", "box.yaml:3: YAML aliases (*n) are not supported in machine files"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseYAML("box.yaml", []byte(tc.yaml))
			if err == nil {
				t.Fatalf("no error, want %s", tc.want)
			}
			var fe *fileerr.Error
			if !errors.As(err, &fe) {
				t.Fatalf("%T %v is not a *fileerr.Error", err, err)
			}
			if err.Error() != tc.want {
				t.Errorf("got  %s\nwant %s", err, tc.want)
			}
		})
	}
}

func TestLoad(t *testing.T) {
	s, err := Load("hikey")
	if err != nil || s.Name != "hikey" || s.Source != "preset" {
		t.Fatalf("Load(hikey) = %v, %v", s, err)
	}
	p := filepath.Join("testdata", "machines", "odd.yaml")
	if s, err = Load(p); err != nil || s.Name != "odd" || s.Source != p {
		t.Fatalf("Load(%s) = %v, %v", p, s, err)
	}
	_, err = Load("nosuch")
	var ue *UnknownMachineError
	if !errors.As(err, &ue) || err.Error() != `unknown machine "nosuch" (see 'schedlab machines')` {
		t.Errorf("Load(nosuch) = %v", err)
	}
	if _, err = Load("nosuch.yaml"); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("Load(nosuch.yaml) = %v", err)
	}
	if _, err = Load("testdata"); err == nil || errors.As(err, &ue) {
		t.Errorf("Load(testdata) = %v", err)
	}
}

// FuzzParseYAML: the parser never panics, every error names a line, a file
// it accepts always builds, and written back with WriteYAML it parses again
// into an equal spec.
func FuzzParseYAML(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "machines", "*.yaml"))
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte("cores_per_llc: 4\nthreads_per_core: 2\nclusters_per_llc: 0\n"))
	f.Add([]byte("cpus:\n  - {cpu: 0, core: 1, cluster: 7}\n  - {cpu: 1, llc: 3}\n"))
	f.Add([]byte("sockets: 2\nnodes_per_socket: 2\ncores_per_llc: 2\ndistance: {same_socket: 12, other_socket: 30}\n"))
	// What the writer has to carry back: per-range values and idle states,
	// a frequency-domain list, costs with a base, sources and fractions.
	f.Add([]byte("cores_per_llc: 4\nfreq_domains: [0-1, 2-3]\ncapacity: [{cpus: 0-1, value: 512}]\nidle_states:\n  - {cpus: 0-1, states: []}\n  - {cpus: 2, states: [{name: C1, exit_latency_us: 1, target_residency_us: 2, cluster: true}]}\ncosts:\n  base: hikey\n  smt_factor: {value: 0.625, source: \"a: b\"}\n  syscall_ns: 1e-3\nreclaim_distance: 40\n"))
	f.Add([]byte("name: \"a \\\"b\\\"\"\ndescription: '#x'\ncpus:\n  - {cpu: 0, core: 4, freq_domain: 9, idle_states: []}\n  - {cpu: 1, core: 4, max_freq_khz: 5}\nidle_states: [{name: W, exit_latency_us: 0, target_residency_us: 0}]\ncosts: {}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := ParseYAML("fuzz.yaml", data)
		if err != nil {
			var fe *fileerr.Error
			if !errors.As(err, &fe) || fe.Line < 1 || !strings.HasPrefix(err.Error(), "fuzz.yaml:") {
				t.Fatalf("error without a line: %v", err)
			}
			return
		}
		var out bytes.Buffer
		if err := WriteYAML(&out, s); err != nil {
			t.Fatalf("accepted file cannot be written back: %v", err)
		}
		again, err := ParseYAML("fuzz.yaml", out.Bytes())
		if err != nil {
			t.Fatalf("written file does not parse: %v\n%s", err, out.Bytes())
		}
		if g, w := specForCompare(again), specForCompare(s); !reflect.DeepEqual(g, w) {
			t.Fatalf("written file parses as another spec:\n%s\n%s", specDiff(g, w), out.Bytes())
		}
		if len(s.CPUs) > 512 {
			return
		}
		if _, err := Build(s, Options{}); err != nil {
			t.Fatalf("accepted file does not build: %v", err)
		}
	})
}
