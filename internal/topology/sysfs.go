package topology

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"reflect"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/schedlab/schedlab/internal/cpumask"
)

// HostArch is the Arch of the machine schedlab runs on.
func HostArch() Arch {
	switch runtime.GOARCH {
	case "amd64", "386":
		return ArchX86
	}
	return ArchARM64
}

// ReadHost reads the machine schedlab runs on from /sys.
func ReadHost() (*MachineSpec, error) {
	return ReadSysfs(os.DirFS("/sys"), HostArch())
}

// ReadSysfs builds a spec from a sysfs tree: fsys is rooted where /sys is
// mounted (it holds devices/system/cpu and devices/system/node). It reads
//
//	devices/system/cpu/online
//	devices/system/cpu/cpuN/topology/{thread_siblings_list,cluster_cpus_list,physical_package_id}
//	devices/system/cpu/cpuN/cache/indexK/{level,type,shared_cpu_list} (the highest level is the LLC)
//	devices/system/cpu/cpuN/cpu_capacity
//	devices/system/cpu/cpuN/cpufreq/{related_cpus,cpuinfo_max_freq}
//	devices/system/cpu/cpuN/cpuidle/stateK/{name,latency,residency}
//	devices/system/node/{online,nodeN/cpulist,nodeN/distance}
//
// Missing files fall back to: no SMT, clusters equal to cores, capacity
// 1024, a frequency domain per CPU, no idle states, one node, and for the
// LLC what the kernel makes of a CPU without cache information (llcFallback:
// the core on x86, the package on arm64). Nodes without CPUs are dropped and the others renumbered densely
// (the kernel builds NUMA levels from nodes with CPUs only). Capacities are
// rescaled so that the largest is 1024. The online CPUs must be 0..N-1.
// A value that is not a number, or out of its range (cpu_capacity 1..1024,
// idle times up to 1000 s, distances 10 to a node itself and 11..254 to
// others), is an error naming its file.
func ReadSysfs(fsys fs.FS, arch Arch) (*MachineSpec, error) {
	r := &sysReader{fsys: fsys}
	online, err := r.list("devices/system/cpu/online", MaxCPUs)
	if err != nil {
		return nil, err
	}
	n := online.Weight()
	if n == 0 {
		return nil, fmt.Errorf("sysfs: no online CPUs in devices/system/cpu/online")
	}
	if !online.Equal(cpumask.Range(MaxCPUs, 0, cpumask.CPU(n-1))) {
		return nil, fmt.Errorf("sysfs: online CPUs are %s; schedlab needs them numbered 0..N-1 (bring the others online)", online)
	}
	s := &MachineSpec{
		Name:        HostName,
		Description: "this machine, as read from sysfs",
		Source:      "host:/sys",
		Arch:        arch,
		CPUs:        make([]CPUSpec, n),
	}
	idle := make([][]IdleState, n)
	maxCap := 0
	for c := range n {
		dir := fmt.Sprintf("devices/system/cpu/cpu%d", c)
		cs := CPUSpec{CPU: cpumask.CPU(c), Capacity: 1024, FreqDomain: c}
		self := cpumask.Of(n, cpumask.CPU(c))
		smt, err := r.listOr(n, self, dir+"/topology/thread_siblings_list", dir+"/topology/core_cpus_list")
		if err != nil {
			return nil, err
		}
		cs.Core = int(smt.First())
		cluster, err := r.listOr(n, smt, dir+"/topology/cluster_cpus_list")
		if err != nil {
			return nil, err
		}
		// A cluster or cache list that leaves out an SMT sibling (arm64
		// reports a lone CPU when there is no cluster) is widened to the
		// whole core.
		cluster = cluster.Or(smt)
		cs.Cluster = int(cluster.First())
		if v, ok, err := r.int(dir + "/topology/physical_package_id"); err != nil {
			return nil, err
		} else if ok && v > 0 {
			cs.Package = v
		}
		pkg, err := r.listOr(n, cpumask.Full(n), dir+"/topology/package_cpus_list", dir+"/topology/core_siblings_list")
		if err != nil {
			return nil, err
		}
		llc, err := r.llc(n, dir, llcFallback(arch, smt, pkg))
		if err != nil {
			return nil, err
		}
		cs.LLC = int(llc.Or(smt).First())
		if v, ok, err := r.intIn(dir+"/cpu_capacity", 1, 1024, "a capacity"); err != nil {
			return nil, err
		} else if ok {
			cs.Capacity = v
		}
		maxCap = max(maxCap, cs.Capacity)
		if rel, ok, err := r.optList(n, dir+"/cpufreq/related_cpus"); err != nil {
			return nil, err
		} else if ok && !rel.Empty() {
			cs.FreqDomain = int(rel.First())
		}
		if v, ok, err := r.intIn(dir+"/cpufreq/cpuinfo_max_freq", 0, int(maxFreqKHz), "a frequency in kHz"); err != nil {
			return nil, err
		} else if ok {
			cs.MaxFreqKHz = v
		}
		if idle[c], err = r.idle(dir); err != nil {
			return nil, err
		}
		s.CPUs[c] = cs
	}
	if maxCap <= 0 {
		return nil, fmt.Errorf("sysfs: cpu_capacity values are not positive")
	}
	for i := range s.CPUs {
		c := &s.CPUs[i]
		c.Capacity = max(1, c.Capacity*1024/maxCap)
	}
	same := true
	for c := 1; c < n; c++ {
		if !reflect.DeepEqual(idle[c], idle[0]) {
			same = false
			break
		}
	}
	if same {
		s.IdleStates = idle[0]
	} else {
		for c := range n {
			s.CPUs[c].IdleStates = idle[c]
		}
	}
	if err := r.nodes(s); err != nil {
		return nil, err
	}
	if err := s.Validate(); err != nil {
		return nil, fmt.Errorf("sysfs: %w", err)
	}
	return s, nil
}

type sysReader struct{ fsys fs.FS }

func (r *sysReader) read(name string) (string, bool, error) {
	b, err := fs.ReadFile(r.fsys, name)
	if errors.Is(err, fs.ErrNotExist) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("sysfs: %w", err)
	}
	return strings.TrimSpace(string(b)), true, nil
}

func (r *sysReader) int(name string) (int, bool, error) {
	v, ok, err := r.read(name)
	if err != nil || !ok {
		return 0, false, err
	}
	x, err := strconv.Atoi(v)
	if err != nil {
		return 0, false, fmt.Errorf("sysfs: %s: %q is not an integer", name, v)
	}
	return x, true, nil
}

// intIn is int for a value that must lie in lo..hi.
func (r *sysReader) intIn(name string, lo, hi int, what string) (int, bool, error) {
	x, ok, err := r.int(name)
	if err == nil && ok && (x < lo || x > hi) {
		return 0, false, fmt.Errorf("sysfs: %s: %d is not %s (%d..%d)", name, x, what, lo, hi)
	}
	return x, ok, err
}

// parseList reads a cpulist ("0-3,8") or a space-separated list of numbers
// (cpufreq's related_cpus).
func parseList(n int, v string) (cpumask.Mask, error) {
	v = strings.Join(strings.Fields(v), ",")
	return cpumask.Parse(n, v)
}

func (r *sysReader) optList(n int, name string) (cpumask.Mask, bool, error) {
	v, ok, err := r.read(name)
	if err != nil || !ok {
		return cpumask.Mask{}, false, err
	}
	m, err := parseList(n, v)
	if err != nil {
		return cpumask.Mask{}, false, fmt.Errorf("sysfs: %s: %v", name, err)
	}
	return m, true, nil
}

func (r *sysReader) list(name string, n int) (cpumask.Mask, error) {
	m, ok, err := r.optList(n, name)
	if err != nil {
		return m, err
	}
	if !ok {
		return m, fmt.Errorf("sysfs: %s not found", name)
	}
	return m, nil
}

// listOr reads the first of names that exists, else returns def.
func (r *sysReader) listOr(n int, def cpumask.Mask, names ...string) (cpumask.Mask, error) {
	for _, name := range names {
		m, ok, err := r.optList(n, name)
		if err != nil {
			return m, err
		}
		if ok && !m.Empty() {
			return m, nil
		}
	}
	return def, nil
}

// llcFallback is the LLC the kernel builds for a CPU whose caches it cannot
// enumerate (no devices/system/cpu/cpuN/cache: a guest whose CPUID has
// neither leaf 4 nor 0x8000001d, as on Firecracker VMs).
//
//   - x86 (arch/x86/kernel/smpboot.c, match_llc, v6.19; the same since
//     v5.x): the CPU's LLC id stays BAD_APICID (cacheinfo.c sets it only
//     from the cache leaves), and match_llc matches no CPU with a
//     BAD_APICID id, so cpu_llc_shared_mask, and with it the MC level
//     (cpu_coregroup_mask), is the CPU alone. SD_SHARE_LLC is then carried
//     only by the SMT level (cpu_smt_flags), so sd_llc is the core: the CPU
//     and its SMT siblings. Without SMT no domain shares an LLC, sd_llc is
//     NULL, select_idle_sibling does not scan and cpus_share_cache is false
//     between any two CPUs.
//   - arm64 (drivers/base/arch_topology.c, cpu_coregroup_mask): without a
//     valid last-level cache the MC level spans the package (core_sibling).
//
// Simplified: on x86, cacheinfo_amd_init_llc_id derives an LLC id without
// cache leaves for AMD families before 0x17 (the die) and for the first Zen
// models (family 0x17, models up to 0x1f: APIC id >> 3) when CPUID reports
// an L3; a guest of such a CPU without cache leaves shares an LLC in the
// kernel and not here. /sys does not say the family, so the reader cannot
// tell; a machine file can give the LLC.
func llcFallback(arch Arch, smt, pkg cpumask.Mask) cpumask.Mask {
	if arch == ArchX86 {
		return smt
	}
	return pkg
}

// llc returns the shared_cpu_list of the CPU's highest-level data or
// unified cache, or def when there is no cache information.
func (r *sysReader) llc(n int, dir string, def cpumask.Mask) (cpumask.Mask, error) {
	best, bestLevel := def, -1
	entries, err := fs.ReadDir(r.fsys, dir+"/cache")
	if errors.Is(err, fs.ErrNotExist) {
		return def, nil
	}
	if err != nil {
		return def, fmt.Errorf("sysfs: %w", err)
	}
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), "index") {
			continue
		}
		idx := dir + "/cache/" + e.Name()
		typ, _, err := r.read(idx + "/type")
		if err != nil {
			return def, err
		}
		if typ == "Instruction" {
			continue
		}
		level, ok, err := r.int(idx + "/level")
		if err != nil || !ok {
			return def, err
		}
		m, ok, err := r.optList(n, idx+"/shared_cpu_list")
		if err != nil {
			return def, err
		}
		if ok && level > bestLevel && !m.Empty() {
			best, bestLevel = m, level
		}
	}
	return best, nil
}

func (r *sysReader) idle(dir string) ([]IdleState, error) {
	var out []IdleState
	for k := 0; ; k++ {
		sd := fmt.Sprintf("%s/cpuidle/state%d", dir, k)
		name, ok, err := r.read(sd + "/name")
		if err != nil {
			return nil, err
		}
		if !ok {
			return out, nil
		}
		if name == "" || !utf8.ValidString(name) {
			return nil, fmt.Errorf("sysfs: %s/name: %q is not an idle state name", sd, name)
		}
		lat, _, err := r.intIn(sd+"/latency", 0, int(maxIdleNs/1000), "a latency in us")
		if err != nil {
			return nil, err
		}
		res, _, err := r.intIn(sd+"/residency", 0, int(maxIdleNs/1000), "a residency in us")
		if err != nil {
			return nil, err
		}
		out = append(out, IdleState{Name: name, ExitLatencyNs: int64(lat) * 1000, TargetResidencyNs: int64(res) * 1000})
	}
}

// nodes fills Node and Distance from devices/system/node.
func (r *sysReader) nodes(s *MachineSpec) error {
	n := len(s.CPUs)
	entries, err := fs.ReadDir(r.fsys, "devices/system/node")
	if errors.Is(err, fs.ErrNotExist) {
		s.Distance = [][]int{{10}}
		return nil
	}
	if err != nil {
		return fmt.Errorf("sysfs: %w", err)
	}
	var ids []int // kernel node ids present as nodeN
	for _, e := range entries {
		if id, err := strconv.Atoi(strings.TrimPrefix(e.Name(), "node")); err == nil && strings.HasPrefix(e.Name(), "node") {
			ids = append(ids, id)
		}
	}
	sort.Ints(ids)
	// The distance file's columns are the online nodes.
	cols := ids
	if m, ok, err := r.optList(1<<16, "devices/system/node/online"); err != nil {
		return err
	} else if ok {
		cols = nil
		for _, c := range m.CPUs() {
			cols = append(cols, int(c))
		}
	}
	colOf := map[int]int{}
	for i, id := range cols {
		colOf[id] = i
	}
	var withCPUs []int
	assigned := cpumask.New(n)
	nodeOf := make([]int, n)
	for _, id := range ids {
		m, ok, err := r.optList(n, path.Join("devices/system/node", fmt.Sprintf("node%d", id), "cpulist"))
		if err != nil {
			return err
		}
		if !ok || m.Empty() {
			continue
		}
		dense := len(withCPUs)
		withCPUs = append(withCPUs, id)
		m.ForEach(func(c cpumask.CPU) bool {
			if !assigned.Test(c) {
				assigned.Set(c)
				nodeOf[c] = dense
			}
			return true
		})
	}
	if len(withCPUs) == 0 {
		s.Distance = [][]int{{10}}
		return nil
	}
	for c := range n {
		s.CPUs[c].Node = nodeOf[c] // CPUs in no node list stay on node 0
	}
	s.Distance = make([][]int, len(withCPUs))
	for a, id := range withCPUs {
		name := fmt.Sprintf("devices/system/node/node%d/distance", id)
		v, ok, err := r.read(name)
		if err != nil {
			return err
		}
		row := make([]int, len(withCPUs))
		if !ok {
			for b := range row {
				row[b] = 20
			}
			row[a] = 10
			s.Distance[a] = row
			continue
		}
		fields := strings.Fields(v)
		for b, other := range withCPUs {
			col, ok := colOf[other]
			if !ok || col >= len(fields) {
				return fmt.Errorf("sysfs: %s has no column for node %d", name, other)
			}
			x, err := strconv.Atoi(fields[col])
			if err != nil {
				return fmt.Errorf("sysfs: %s: %q is not an integer", name, fields[col])
			}
			if (a == b && x != 10) || (a != b && (x < 11 || x > 254)) {
				return fmt.Errorf("sysfs: %s: the distance to node %d is %d; it must be 10 to itself, 11..254 to others", name, other, x)
			}
			row[b] = x
		}
		s.Distance[a] = row
	}
	return nil
}
