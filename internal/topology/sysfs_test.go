package topology

import (
	"errors"
	"fmt"
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
			_, err := ReadSysfs(fakeSysfs(t, tc.files), ArchX86)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want %q", err, tc.want)
			}
		})
	}
}

// fakeSysfs writes files (path: contents) under a temporary /sys.
func fakeSysfs(t *testing.T, files map[string]string) fs.FS {
	t.Helper()
	dir := t.TempDir()
	for name, data := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return os.DirFS(dir)
}

// A tree without cache directories (a guest whose CPUID enumerates no
// cache leaves, like this project's Firecracker VM) gets the LLC the
// kernel builds for it (llcFallback). On x86 match_llc matches no CPU
// whose LLC id is BAD_APICID, so the MC level is each CPU alone and
// degenerates; the package level remains, without SD_SHARE_LLC, and no CPU
// has an sd_llc. On arm64 cpu_coregroup_mask falls back to the package,
// which the MC level spans with SD_SHARE_LLC.
func TestSysfsNoCacheInfo(t *testing.T) {
	minimal := map[string]string{"devices/system/cpu/online": "0-3\n"}
	for _, tc := range []struct {
		arch      Arch
		chain     string
		llcs      int
		sdLLCSize int
	}{
		{ArchX86, "PKG:0-3", 4, 1},
		{ArchARM64, "MC:0-3", 1, 4},
	} {
		s, err := ReadSysfs(fakeSysfs(t, minimal), tc.arch)
		if err != nil {
			t.Fatal(err)
		}
		llcs := map[int]bool{}
		for _, c := range s.CPUs {
			llcs[c.LLC] = true
		}
		if len(llcs) != tc.llcs {
			t.Errorf("%v: %d LLCs, want %d: %+v", tc.arch, len(llcs), tc.llcs, s.CPUs)
		}
		topo := mustBuild(t, s, kernels.V619)
		if got := chainSummary(topo, 2); got != tc.chain {
			t.Errorf("%v: chain %s, want %s", tc.arch, got, tc.chain)
		}
		for cpu := range cpumask.CPU(4) {
			if got := topo.SdLLCSize[cpu]; got != tc.sdLLCSize {
				t.Errorf("%v: cpu%d sd_llc_size %d, want %d", tc.arch, cpu, got, tc.sdLLCSize)
			}
			if (topo.SdLLC[cpu] == nil) != (tc.sdLLCSize == 1) {
				t.Errorf("%v: cpu%d has sd_llc %t, want %t", tc.arch, cpu, topo.SdLLC[cpu] != nil, tc.sdLLCSize > 1)
			}
		}
		for _, d := range topo.Domains[0] {
			if tc.arch == ArchX86 && d.Flags&SDShareLLC != 0 {
				t.Errorf("x86: %s carries SD_SHARE_LLC", d.Name)
			}
		}
	}
	// With SMT and no cache information, x86's LLC is the core: the SMT
	// level (cpu_smt_flags has SD_SHARE_LLC) is sd_llc and the package
	// level is the next.
	smt := map[string]string{"devices/system/cpu/online": "0-3\n"}
	for c, sib := range []string{"0,2", "1,3", "0,2", "1,3"} {
		smt[fmt.Sprintf("devices/system/cpu/cpu%d/topology/thread_siblings_list", c)] = sib + "\n"
	}
	s, err := ReadSysfs(fakeSysfs(t, smt), ArchX86)
	if err != nil {
		t.Fatal(err)
	}
	topo := mustBuild(t, s, kernels.V619)
	if got := chainSummary(topo, 0); got != "SMT:0,2 PKG:0-3" {
		t.Errorf("x86 SMT without caches: chain %s", got)
	}
	if d := topo.SdLLC[0]; d == nil || d.Name != "SMT" || topo.SdLLCSize[0] != 2 {
		t.Errorf("x86 SMT without caches: sd_llc size %d, want the SMT level of 2", topo.SdLLCSize[0])
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
