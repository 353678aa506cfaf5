package topology

import (
	"errors"
	"github.com/schedlab/schedlab/internal/kernels"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/schedlab/schedlab/internal/cpumask"
)

func readFake(t *testing.T, name string, arch Arch) *MachineSpec {
	t.Helper()
	s, err := ReadSysfs(os.DirFS(filepath.Join("testdata", "sysfs", name)), arch)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// A HiKey960-like arm64 board: capacities from cpu_capacity, clusters with
// their own L2, a cpufreq policy per cluster, per-CPU idle states, no NUMA
// directory.
func TestSysfsArmBigLittle(t *testing.T) {
	s := readFake(t, "hikey960", ArchARM64)
	if len(s.CPUs) != 8 || s.Name != HostName || len(s.Distance) != 1 {
		t.Fatalf("spec: %d CPUs, name %s, %d nodes", len(s.CPUs), s.Name, len(s.Distance))
	}
	for _, c := range []int{0, 3, 4, 7} {
		cs := s.CPUs[c]
		wantCap, wantFD, wantFreq, lo := 462, 0, 1844000, 0
		if c >= 4 {
			wantCap, wantFD, wantFreq, lo = 1024, 4, 2362000, 4
		}
		if cs.Core != c || cs.Cluster != lo || cs.LLC != lo || cs.Capacity != wantCap || cs.FreqDomain != wantFD || cs.MaxFreqKHz != wantFreq {
			t.Errorf("cpu%d: %+v", c, cs)
		}
	}
	if s.IdleStates != nil || s.CPUs[0].IdleStates[1].Name != "cpu-sleep-0" || s.CPUs[5].IdleStates[2].ExitLatencyNs != 3700000 {
		t.Errorf("idle states: %+v / %+v", s.CPUs[0].IdleStates, s.CPUs[5].IdleStates)
	}
	// Reference: topology.c:sd_init asym classification, v6.19.
	topo := mustBuild(t, s, kernels.V619)
	if got := chainSummary(topo, 0); got != "MC:0-3 PKG:0-7" {
		t.Errorf("chain %s", got)
	}
	if topo.Domains[0][1].Flags&SDAsymCPUCapacityFull == 0 {
		t.Errorf("PKG flags %s", topo.Domains[0][1].Flags)
	}
}

// An x86 2-socket box with SMT2 in x86 numbering and a memory-only node,
// which is dropped (the distance columns follow node/online).
func TestSysfsX86TwoSockets(t *testing.T) {
	s := readFake(t, "x86-2s", ArchX86)
	if len(s.CPUs) != 8 {
		t.Fatalf("%d CPUs", len(s.CPUs))
	}
	if s.CPUs[4].Core != s.CPUs[0].Core || s.CPUs[2].Package != 1 || s.CPUs[6].Node != 1 || s.CPUs[1].LLC != s.CPUs[5].LLC {
		t.Errorf("cpus: %+v", s.CPUs)
	}
	if len(s.Distance) != 2 || s.Distance[0][1] != 21 || s.Distance[1][0] != 21 {
		t.Errorf("distance %v", s.Distance)
	}
	if len(s.IdleStates) != 3 || s.IdleStates[2].TargetResidencyNs != 600000 {
		t.Errorf("idle %+v", s.IdleStates)
	}
	topo := mustBuild(t, s, kernels.V619)
	if got := chainSummary(topo, 0); got != "SMT:0,4 MC:0-1,4-5 NUMA:0-7" {
		t.Errorf("chain %s", got)
	}
}

func TestSysfsErrors(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files map[string]string
		want  string
	}{
		{"no online", map[string]string{}, "devices/system/cpu/online not found"},
		{"holes", map[string]string{"devices/system/cpu/online": "0-1,3\n"}, "online CPUs are 0-1,3"},
		{"bad id", map[string]string{"devices/system/cpu/online": "0\n", "devices/system/cpu/cpu0/topology/physical_package_id": "x\n"}, `"x" is not an integer`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, data := range tc.files {
				p := filepath.Join(dir, name)
				os.MkdirAll(filepath.Dir(p), 0o755)
				os.WriteFile(p, []byte(data), 0o644)
			}
			_, err := ReadSysfs(os.DirFS(dir), ArchX86)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want %q", err, tc.want)
			}
		})
	}
	// A minimal tree: only the online file. Everything falls back.
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "devices/system/cpu"), 0o755)
	os.WriteFile(filepath.Join(dir, "devices/system/cpu/online"), []byte("0-3\n"), 0o644)
	s, err := ReadSysfs(os.DirFS(dir), ArchX86)
	if err != nil {
		t.Fatal(err)
	}
	topo := mustBuild(t, s, kernels.V619)
	if got := chainSummary(topo, 2); got != "MC:0-3" {
		t.Errorf("minimal tree: %s", got)
	}
}

// The real /sys of this machine: only invariants.
func TestSysfsRealHost(t *testing.T) {
	if _, err := os.Stat("/sys/devices/system/cpu/online"); errors.Is(err, fs.ErrNotExist) {
		t.Skip("no /sys on this machine")
	}
	online, err := os.ReadFile("/sys/devices/system/cpu/online")
	if err != nil {
		t.Skip(err)
	}
	m, err := cpumask.Parse(MaxCPUs, strings.TrimSpace(string(online)))
	if err != nil {
		t.Fatal(err)
	}
	s, err := Load(HostName)
	if err != nil {
		if strings.Contains(err.Error(), "numbered 0..N-1") {
			t.Skip(err)
		}
		t.Fatal(err)
	}
	if len(s.CPUs) != m.Weight() {
		t.Errorf("%d CPUs, online says %d", len(s.CPUs), m.Weight())
	}
	if runtime.NumCPU() > len(s.CPUs) {
		t.Errorf("runtime.NumCPU() = %d > %d CPUs read", runtime.NumCPU(), len(s.CPUs))
	}
	if s.Arch != HostArch() {
		t.Errorf("arch %s", s.Arch)
	}
	topo := mustBuild(t, s, kernels.V619)
	for c := range topo.NrCPUs {
		if n := len(topo.Domains[c]); n > 0 && topo.Domains[c][n-1].SpanWeight != topo.NrCPUs {
			t.Errorf("cpu%d: top domain %s", c, topo.Domains[c][n-1].Span)
		}
		if topo.SdLLCSize[c] < 1 || !topo.SMTMask[c].Test(cpumask.CPU(c)) {
			t.Errorf("cpu%d shortcuts", c)
		}
	}
}
