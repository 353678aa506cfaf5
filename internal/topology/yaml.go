package topology

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/schedlab/schedlab/internal/cpumask"
	"github.com/schedlab/schedlab/internal/fileerr"
)

// LoadFile reads a YAML machine file (see docs/machines.md).
func LoadFile(path string) (*MachineSpec, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseYAML(path, data)
}

// ParseYAML parses a machine file's contents; name is used in error messages
// and as the default machine name. Every error is a *fileerr.Error.
func ParseYAML(name string, data []byte) (*MachineSpec, error) {
	p := &yparser{file: name, keys: map[string]*yaml.Node{}, ranges: map[string][]yrange{}}
	s, err := p.parse(data)
	if err != nil {
		return nil, err
	}
	if err := s.Validate(); err != nil {
		var se *SpecError
		if errors.As(err, &se) {
			return nil, &fileerr.Error{File: name, Line: p.lineOf(se), Msg: se.Msg}
		}
		return nil, &fileerr.Error{File: name, Line: 1, Msg: err.Error()}
	}
	return s, nil
}

// Keys of the two forms.
var (
	commonKeys   = []string{"name", "description", "arch", "distance", "idle_states", "idle_disable", "latency_limit_us", "cpufreq_governor", "costs", "reclaim_distance"}
	regularKeys  = []string{"sockets", "nodes_per_socket", "llcs_per_node", "clusters_per_llc", "cores_per_cluster", "cores_per_llc", "threads_per_core", "numbering", "capacity", "max_freq_khz", "freq_domains"}
	explicitKeys = []string{"cpus"}
	cpuKeys      = []string{"cpu", "core", "cluster", "llc", "package", "node", "capacity", "freq_domain", "max_freq_khz", "idle_states"}
	idleKeys     = []string{"name", "exit_latency_us", "target_residency_us", "wake_us", "wake_ns", "cluster", "gate_delay_us"}
)

// yrange is one entry of a per-CPU-range list ("capacity: [{cpus: ...}]").
type yrange struct {
	cpus cpumask.Mask
	line int
}

type yparser struct {
	file    string
	root    *yaml.Node
	keys    map[string]*yaml.Node // top-level key nodes
	ranges  map[string][]yrange   // per-range lists, by key
	cpuLine []int                 // explicit form: line of each CPU's entry
}

func (p *yparser) errf(n *yaml.Node, format string, args ...any) error {
	return fileerr.AtNode(p.file, n, format, args...)
}

// lineOf points a validation error at the most specific line known.
func (p *yparser) lineOf(e *SpecError) int {
	if e.CPU >= 0 {
		if e.CPU < len(p.cpuLine) && p.cpuLine[e.CPU] > 0 {
			return p.cpuLine[e.CPU]
		}
		for _, r := range p.ranges[e.Field] {
			if r.cpus.Test(cpumask.CPU(e.CPU)) {
				return r.line
			}
		}
	}
	if k := p.keys[e.Field]; k != nil {
		return k.Line
	}
	if p.root != nil {
		return p.root.Line
	}
	return 1
}

func (p *yparser) parse(data []byte) (*MachineSpec, error) {
	root, err := fileerr.ReadYAML(p.file, data, "machine files")
	if err != nil {
		return nil, err
	}
	if root == nil {
		return nil, p.errf(nil, "empty machine file")
	}
	p.root = root
	if root.Kind != yaml.MappingNode {
		return nil, p.errf(root, "a machine file is a mapping of keys (name, sockets, cpus, ...)")
	}
	known := map[string]bool{}
	for _, k := range append(append(append([]string{}, commonKeys...), regularKeys...), explicitKeys...) {
		known[k] = true
	}
	vals := map[string]*yaml.Node{}
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			return nil, p.errf(k, "keys must be plain names")
		}
		if !known[k.Value] {
			return nil, p.errf(k, "unknown key %q", k.Value)
		}
		if first, dup := p.keys[k.Value]; dup {
			return nil, p.errf(k, "duplicate key %q (first at line %d)", k.Value, first.Line)
		}
		p.keys[k.Value] = k
		vals[k.Value] = v
	}

	s := &MachineSpec{Source: p.file, Arch: ArchX86}
	s.Name = nameFromFile(p.file)
	if v := vals["name"]; v != nil {
		str, err := p.str(v, "name")
		if err != nil {
			return nil, err
		}
		if !ValidName(str) {
			return nil, p.errf(v, "name %q: a machine's name keys its runs and names their files: use letters, digits, '.', '_' and '-' (at most 64, beginning with a letter or digit)", str)
		}
		s.Name = str
	}
	if v := vals["description"]; v != nil {
		str, err := p.str(v, "description")
		if err != nil {
			return nil, err
		}
		s.Description = str
	}
	if v := vals["reclaim_distance"]; v != nil {
		d, err := p.integer(v, "reclaim_distance", 10, 255)
		if err != nil {
			return nil, err
		}
		s.ReclaimDistance = d
	}
	if v := vals["cpufreq_governor"]; v != nil {
		str, err := p.str(v, "cpufreq_governor")
		if err != nil {
			return nil, err
		}
		s.CpufreqGovernor = str
	}
	if v := vals["latency_limit_us"]; v != nil {
		x, err := p.integer(v, "latency_limit_us", 0, 1e9)
		if err != nil {
			return nil, err
		}
		ns := int64(x) * 1000
		s.LatencyLimitNs = &ns
	}
	if v := vals["idle_disable"]; v != nil {
		if v.Kind != yaml.SequenceNode {
			return nil, p.errf(v, "idle_disable must be a list of idle state names, e.g. [C2]")
		}
		for _, it := range v.Content {
			name, err := p.str(it, "idle_disable entry")
			if err != nil {
				return nil, err
			}
			s.IdleDisable = append(s.IdleDisable, name)
		}
	}
	if v := vals["arch"]; v != nil {
		str, err := p.str(v, "arch")
		if err != nil {
			return nil, err
		}
		if Arch(str) != ArchX86 && Arch(str) != ArchARM64 {
			return nil, p.errf(v, "arch must be %q or %q, not %q", ArchX86, ArchARM64, str)
		}
		s.Arch = Arch(str)
	}
	if v := vals["idle_states"]; v != nil && v.Kind == yaml.SequenceNode && len(v.Content) > 0 && !hasKey(v.Content[0], "cpus") {
		st, err := p.idleList(v)
		if err != nil {
			return nil, err
		}
		s.IdleStates = st
	}

	if vals["cpus"] != nil {
		for _, k := range regularKeys {
			if p.keys[k] != nil {
				return nil, p.errf(p.keys[k], "%q cannot be combined with a cpus list (use one form or the other)", k)
			}
		}
		err = p.explicit(s, vals)
	} else {
		err = p.regular(s, vals)
	}
	if err != nil {
		return nil, err
	}
	if v := vals["costs"]; v != nil {
		// The cost model's parameters, which package costmodel reads
		// (costmodel.MachineCosts; docs/costs.md).
		s.Costs = &CostsSection{File: p.file, Node: v}
	}
	return s, nil
}

func hasKey(n *yaml.Node, key string) bool {
	if n.Kind != yaml.MappingNode {
		return false
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return true
		}
	}
	return false
}

func (p *yparser) str(n *yaml.Node, what string) (string, error) {
	if n.Kind != yaml.ScalarNode || n.ShortTag() == "!!null" {
		return "", p.errf(n, "%s must be a string", what)
	}
	return n.Value, nil
}

func (p *yparser) integer(n *yaml.Node, what string, lo, hi int) (int, error) {
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!int" {
		return 0, p.errf(n, "%s must be an integer", what)
	}
	v, err := strconv.ParseInt(strings.ReplaceAll(n.Value, "_", ""), 0, 64)
	if err != nil || v < int64(lo) || v > int64(hi) {
		if hi == maxInt {
			return 0, p.errf(n, "%s must be at least %d", what, lo)
		}
		return 0, p.errf(n, "%s must be %d..%d", what, lo, hi)
	}
	return int(v), nil
}

const maxInt = int(^uint(0) >> 1)

// mapping walks a mapping node, rejecting keys outside allowed and
// duplicates.
func (p *yparser) mapping(n *yaml.Node, what string, allowed []string) (map[string]*yaml.Node, map[string]*yaml.Node, error) {
	if n.Kind != yaml.MappingNode {
		return nil, nil, p.errf(n, "%s must be a mapping", what)
	}
	ok := map[string]bool{}
	for _, k := range allowed {
		ok[k] = true
	}
	vals, keys := map[string]*yaml.Node{}, map[string]*yaml.Node{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode || !ok[k.Value] {
			return nil, nil, p.errf(k, "unknown key %q in %s", k.Value, what)
		}
		if first := keys[k.Value]; first != nil {
			return nil, nil, p.errf(k, "duplicate key %q (first at line %d)", k.Value, first.Line)
		}
		keys[k.Value], vals[k.Value] = k, v
	}
	return vals, keys, nil
}

func (p *yparser) idleList(n *yaml.Node) ([]IdleState, error) {
	if n.Kind != yaml.SequenceNode {
		return nil, p.errf(n, "idle_states must be a list of {name, exit_latency_us, target_residency_us}")
	}
	out := []IdleState{}
	for _, it := range n.Content {
		vals, _, err := p.mapping(it, "an idle state", idleKeys)
		if err != nil {
			return nil, err
		}
		var st IdleState
		if vals["name"] == nil {
			return nil, p.errf(it, "idle state has no name")
		}
		if st.Name, err = p.str(vals["name"], "idle state name"); err != nil {
			return nil, err
		}
		for _, f := range []struct {
			key string
			dst *int64
		}{{"exit_latency_us", &st.ExitLatencyNs}, {"target_residency_us", &st.TargetResidencyNs}} {
			v := vals[f.key]
			if v == nil {
				return nil, p.errf(it, "idle state %q has no %s", st.Name, f.key)
			}
			x, err := p.integer(v, f.key, 0, 1e9)
			if err != nil {
				return nil, err
			}
			*f.dst = int64(x) * 1000
		}
		if v := vals["wake_us"]; v != nil {
			x, err := p.integer(v, "wake_us", 0, 1e9)
			if err != nil {
				return nil, err
			}
			st.WakeNs = int64(x) * 1000
		}
		if v := vals["wake_ns"]; v != nil {
			if vals["wake_us"] != nil {
				return nil, p.errf(v, "idle state %q: give wake_us or wake_ns, not both", st.Name)
			}
			x, err := p.integer(v, "wake_ns", 0, 1e12)
			if err != nil {
				return nil, err
			}
			st.WakeNs = int64(x)
		}
		if v := vals["cluster"]; v != nil {
			if v.Kind != yaml.ScalarNode || (v.Value != "true" && v.Value != "false") {
				return nil, p.errf(v, "idle state %q: cluster must be true or false", st.Name)
			}
			st.Cluster = v.Value == "true"
		}
		if v := vals["gate_delay_us"]; v != nil {
			if !st.Cluster {
				return nil, p.errf(v, "idle state %q: gate_delay_us needs cluster: true (it delays a cluster state)", st.Name)
			}
			x, err := p.integer(v, "gate_delay_us", 0, 1e9)
			if err != nil {
				return nil, err
			}
			st.GateDelayNs = int64(x) * 1000
		}
		out = append(out, st)
	}
	return out, nil
}

// cpuRanges parses [{cpus: LIST, KEY: ...}, ...], calling each for every
// entry; entries must not overlap.
func (p *yparser) cpuRanges(n *yaml.Node, key string, nrCPUs int, valueKey string, each func(m cpumask.Mask, v *yaml.Node) error) error {
	covered := cpumask.New(nrCPUs)
	for _, it := range n.Content {
		vals, _, err := p.mapping(it, "a "+key+" entry", []string{"cpus", valueKey})
		if err != nil {
			return err
		}
		if vals["cpus"] == nil || vals[valueKey] == nil {
			return p.errf(it, "each %s entry needs cpus and %s", key, valueKey)
		}
		list, err := p.str(vals["cpus"], "cpus")
		if err != nil {
			return err
		}
		m, err := cpumask.Parse(nrCPUs, list)
		if err != nil {
			return p.errf(vals["cpus"], "%v", err)
		}
		if m.Intersects(covered) {
			return p.errf(vals["cpus"], "cpus %s are already given a %s by an earlier entry", m.And(covered), key)
		}
		covered.OrInPlace(m)
		p.ranges[key] = append(p.ranges[key], yrange{cpus: m, line: it.Line})
		if err := each(m, vals[valueKey]); err != nil {
			return err
		}
	}
	return nil
}

// perCPUInt applies "KEY: N" or "KEY: [{cpus: LIST, value: N}]".
func (p *yparser) perCPUInt(s *MachineSpec, n *yaml.Node, key string, lo, hi int, set func(c *CPUSpec, v int)) error {
	if n.Kind == yaml.ScalarNode {
		v, err := p.integer(n, key, lo, hi)
		if err != nil {
			return err
		}
		for i := range s.CPUs {
			set(&s.CPUs[i], v)
		}
		return nil
	}
	if n.Kind != yaml.SequenceNode {
		return p.errf(n, "%s must be an integer or a list of {cpus, value}", key)
	}
	return p.cpuRanges(n, key, len(s.CPUs), "value", func(m cpumask.Mask, vn *yaml.Node) error {
		v, err := p.integer(vn, key, lo, hi)
		if err != nil {
			return err
		}
		m.ForEach(func(c cpumask.CPU) bool { set(&s.CPUs[c], v); return true })
		return nil
	})
}

func (p *yparser) regular(s *MachineSpec, vals map[string]*yaml.Node) error {
	r := Regular{Arch: s.Arch, Sockets: 1, NodesPerSocket: 1, LLCsPerNode: 1, ThreadsPerCore: 1}
	ints := []struct {
		key string
		dst *int
	}{
		{"sockets", &r.Sockets}, {"nodes_per_socket", &r.NodesPerSocket}, {"llcs_per_node", &r.LLCsPerNode},
		{"clusters_per_llc", &r.ClustersPerLLC}, {"cores_per_cluster", &r.CoresPerCluster}, {"cores_per_llc", &r.CoresPerLLC},
	}
	for _, f := range ints {
		if v := vals[f.key]; v != nil {
			x, err := p.integer(v, f.key, 1, MaxCPUs)
			if err != nil {
				return err
			}
			*f.dst = x
		}
	}
	if v := vals["threads_per_core"]; v != nil {
		x, err := p.integer(v, "threads_per_core", 1, 8)
		if err != nil || (x != 1 && x != 2 && x != 4 && x != 8) {
			return p.errf(v, "threads_per_core must be 1, 2, 4 or 8")
		}
		r.ThreadsPerCore = x
	}
	switch {
	case r.CoresPerLLC > 0 && r.ClustersPerLLC > 0:
		return p.errf(p.keys["cores_per_llc"], "cores_per_llc cannot be combined with clusters_per_llc: give cores_per_cluster")
	case r.CoresPerLLC > 0 && r.CoresPerCluster > 0:
		return p.errf(p.keys["cores_per_cluster"], "give either cores_per_llc or cores_per_cluster, not both")
	case r.CoresPerCluster > 0 && r.ClustersPerLLC == 0:
		return p.errf(p.keys["cores_per_cluster"], "cores_per_cluster needs clusters_per_llc")
	case r.ClustersPerLLC > 0 && r.CoresPerCluster == 0:
		return p.errf(p.keys["clusters_per_llc"], "clusters_per_llc needs cores_per_cluster")
	case r.CoresPerLLC == 0 && r.CoresPerCluster == 0:
		return p.errf(p.root, "the machine needs cores_per_llc (or clusters_per_llc and cores_per_cluster), or a cpus list")
	}
	if v := vals["numbering"]; v != nil {
		str, err := p.str(v, "numbering")
		if err != nil {
			return err
		}
		if Numbering(str) != NumberingX86 && Numbering(str) != NumberingSequential {
			return p.errf(v, "numbering must be %q (siblings n and n+ncores) or %q (siblings adjacent), not %q", NumberingX86, NumberingSequential, str)
		}
		r.Numbering = Numbering(str)
	}
	n := r.NrCPUs()
	if n < 0 {
		return p.errf(p.root, "the machine would have more than %d CPUs", MaxCPUs)
	}
	nodes := r.Sockets * r.NodesPerSocket
	if nodes > MaxNodes {
		return p.errf(p.root, "the machine would have %d nodes; at most %d are supported", nodes, MaxNodes)
	}
	if v := vals["distance"]; v != nil {
		d, err := p.distance(v, nodes, &r)
		if err != nil {
			return err
		}
		r.Distance = d
	} else if nodes > 1 {
		return p.errf(p.root, "distance is required: the machine has %d nodes", nodes)
	}
	spec, err := r.Spec()
	if err != nil {
		return p.errf(p.root, "%v", err)
	}
	// The regular description gives the CPUs and the distances; every
	// other field (name, reclaim_distance, idle states, ...) was set from
	// its own key and stays.
	s.CPUs, s.Distance = spec.CPUs, spec.Distance
	if v := vals["capacity"]; v != nil {
		if err := p.perCPUInt(s, v, "capacity", 1, 1024, func(c *CPUSpec, x int) { c.Capacity = x }); err != nil {
			return err
		}
	}
	if v := vals["max_freq_khz"]; v != nil {
		if err := p.perCPUInt(s, v, "max_freq_khz", 0, 1e9, func(c *CPUSpec, x int) { c.MaxFreqKHz = x }); err != nil {
			return err
		}
	}
	if v := vals["freq_domains"]; v != nil {
		if err := p.freqDomains(s, v); err != nil {
			return err
		}
	}
	if v := vals["idle_states"]; v != nil && s.IdleStates == nil {
		if err := p.idleRanges(s, v); err != nil {
			return err
		}
	}
	return nil
}

func (p *yparser) freqDomains(s *MachineSpec, v *yaml.Node) error {
	if v.Kind == yaml.ScalarNode {
		str, err := p.str(v, "freq_domains")
		if err != nil {
			return err
		}
		if err := SetFreqDomains(s, Scope(str)); err != nil {
			return p.errf(v, "freq_domains must be one of cpu, core, cluster, llc, node, socket, machine or a list of cpu lists, not %q", str)
		}
		return nil
	}
	if v.Kind != yaml.SequenceNode {
		return p.errf(v, "freq_domains must be a scope name or a list of cpu lists")
	}
	n := len(s.CPUs)
	covered := cpumask.New(n)
	for i, it := range v.Content {
		list, err := p.str(it, "a frequency domain")
		if err != nil {
			return err
		}
		m, err := cpumask.Parse(n, list)
		if err != nil {
			return p.errf(it, "%v", err)
		}
		if m.Empty() {
			return p.errf(it, "frequency domain %d is empty", i)
		}
		if m.Intersects(covered) {
			return p.errf(it, "cpus %s are in two frequency domains", m.And(covered))
		}
		covered.OrInPlace(m)
		m.ForEach(func(c cpumask.CPU) bool { s.CPUs[c].FreqDomain = i; return true })
	}
	if missing := cpumask.Full(n).AndNot(covered); !missing.Empty() {
		return p.errf(v, "cpus %s are in no frequency domain", missing)
	}
	return nil
}

// idleRanges parses idle_states: [{cpus: LIST, states: [...]}, ...].
func (p *yparser) idleRanges(s *MachineSpec, v *yaml.Node) error {
	if v.Kind != yaml.SequenceNode {
		return p.errf(v, "idle_states must be a list")
	}
	return p.cpuRanges(v, "idle_states", len(s.CPUs), "states", func(m cpumask.Mask, sn *yaml.Node) error {
		st, err := p.idleList(sn)
		if err != nil {
			return err
		}
		// In the per-CPU form a CPU's own entry may already list its
		// states; one of the two would be ignored.
		var twice cpumask.CPU = -1
		m.ForEach(func(c cpumask.CPU) bool {
			if s.CPUs[c].IdleStates != nil {
				twice = c
				return false
			}
			s.CPUs[c].IdleStates = st
			return true
		})
		if twice >= 0 {
			entry := "its cpus entry"
			if int(twice) < len(p.cpuLine) {
				entry = fmt.Sprintf("its cpus entry (line %d)", p.cpuLine[twice])
			}
			return p.errf(sn, "cpu %d has idle_states in %s and here: give them in one place", twice, entry)
		}
		return nil
	})
}

// distance parses a matrix, or {same_socket, other_socket} for the regular
// form (r != nil).
func (p *yparser) distance(v *yaml.Node, nodes int, r *Regular) ([][]int, error) {
	if v.Kind == yaml.MappingNode {
		if r == nil {
			return nil, p.errf(v, "distance must be a matrix (a list of rows) in the cpus form")
		}
		vals, _, err := p.mapping(v, "distance", []string{"same_socket", "other_socket"})
		if err != nil {
			return nil, err
		}
		same, other := 0, 0
		if x := vals["same_socket"]; x != nil {
			if r.NodesPerSocket == 1 {
				return nil, p.errf(x, "same_socket has no effect: each socket holds one node (set nodes_per_socket, or drop it)")
			}
			if same, err = p.integer(x, "same_socket", 11, 254); err != nil {
				return nil, err
			}
		} else if r.NodesPerSocket > 1 {
			return nil, p.errf(v, "distance needs same_socket: sockets hold %d nodes", r.NodesPerSocket)
		}
		if x := vals["other_socket"]; x != nil {
			if r.Sockets == 1 {
				return nil, p.errf(x, "other_socket has no effect: the machine has one socket (set sockets, or drop it)")
			}
			if other, err = p.integer(x, "other_socket", 11, 254); err != nil {
				return nil, err
			}
		} else if r.Sockets > 1 {
			return nil, p.errf(v, "distance needs other_socket: the machine has %d sockets", r.Sockets)
		}
		return SocketDistances(r.Sockets, r.NodesPerSocket, same, other), nil
	}
	if v.Kind != yaml.SequenceNode {
		return nil, p.errf(v, "distance must be a matrix: a list of rows of integers")
	}
	if len(v.Content) != nodes {
		at := v
		if k := p.keys["distance"]; k != nil {
			at = k
		}
		return nil, p.errf(at, "distance matrix is %dx%d but the machine has %d node(s)", len(v.Content), len(v.Content), nodes)
	}
	d := make([][]int, nodes)
	for a, row := range v.Content {
		if row.Kind != yaml.SequenceNode {
			return nil, p.errf(row, "distance matrix row %d must be a list of integers", a)
		}
		if len(row.Content) != nodes {
			return nil, p.errf(row, "distance matrix row %d has %d entries, want %d", a, len(row.Content), nodes)
		}
		d[a] = make([]int, nodes)
		for b, x := range row.Content {
			val, err := p.integer(x, fmt.Sprintf("distance[%d][%d]", a, b), 0, 255)
			if err != nil {
				return nil, err
			}
			d[a][b] = val
		}
	}
	for a := range nodes {
		line := v.Content[a]
		if d[a][a] != 10 {
			return nil, p.errf(line, "distance[%d][%d] is %d; the diagonal must be 10 (LOCAL_DISTANCE)", a, a, d[a][a])
		}
		for b := range nodes {
			if a != b && d[a][b] <= 10 {
				return nil, p.errf(line, "distance[%d][%d] is %d; distances between nodes must be 11..254", a, b, d[a][b])
			}
			if d[a][b] != d[b][a] {
				return nil, p.errf(line, "distance matrix is not symmetric: [%d][%d]=%d but [%d][%d]=%d", a, b, d[a][b], b, a, d[b][a])
			}
		}
	}
	return d, nil
}

func (p *yparser) explicit(s *MachineSpec, vals map[string]*yaml.Node) error {
	list := vals["cpus"]
	if list.Kind != yaml.SequenceNode || len(list.Content) == 0 {
		return p.errf(list, "cpus must be a non-empty list of {cpu, core, cluster, llc, package, node, ...}")
	}
	n := len(list.Content)
	if n > MaxCPUs {
		return p.errf(list, "the machine has %d CPUs; at most %d are supported", n, MaxCPUs)
	}
	s.CPUs = make([]CPUSpec, n)
	p.cpuLine = make([]int, n)
	maxNode := 0
	for _, it := range list.Content {
		v, _, err := p.mapping(it, "a cpus entry", cpuKeys)
		if err != nil {
			return err
		}
		if v["cpu"] == nil {
			return p.errf(it, "a cpus entry needs cpu (its number)")
		}
		cpu, err := p.integer(v["cpu"], "cpu", 0, maxInt)
		if err != nil {
			return err
		}
		if cpu >= n {
			return p.errf(v["cpu"], "cpu %d is out of range: the list has %d entries, so CPU numbers must be 0..%d", cpu, n, n-1)
		}
		if p.cpuLine[cpu] != 0 {
			return p.errf(it, "cpu %d is listed twice (first at line %d)", cpu, p.cpuLine[cpu])
		}
		p.cpuLine[cpu] = it.Line
		c := CPUSpec{CPU: cpumask.CPU(cpu), Core: cpu, Capacity: 1024, FreqDomain: cpu}
		c.Cluster = -1
		fields := []struct {
			key    string
			dst    *int
			lo, hi int
		}{
			{"core", &c.Core, 0, maxInt}, {"cluster", &c.Cluster, 0, maxInt}, {"llc", &c.LLC, 0, maxInt},
			{"package", &c.Package, 0, maxInt}, {"node", &c.Node, 0, 1023}, {"capacity", &c.Capacity, 1, 1024},
			{"freq_domain", &c.FreqDomain, 0, maxInt}, {"max_freq_khz", &c.MaxFreqKHz, 0, 1e9},
		}
		for _, f := range fields {
			if x := v[f.key]; x != nil {
				val, err := p.integer(x, f.key, f.lo, f.hi)
				if err != nil {
					return err
				}
				*f.dst = val
			}
		}
		if c.Cluster < 0 {
			c.Cluster = c.Core
		}
		if x := v["idle_states"]; x != nil {
			if c.IdleStates, err = p.idleList(x); err != nil {
				return err
			}
		}
		maxNode = max(maxNode, c.Node)
		s.CPUs[cpu] = c
	}
	nodes := maxNode + 1
	if v := vals["distance"]; v != nil {
		d, err := p.distance(v, nodes, nil)
		if err != nil {
			return err
		}
		s.Distance = d
	} else if nodes > 1 {
		return p.errf(p.keys["cpus"], "distance is required: the machine has %d nodes", nodes)
	} else {
		s.Distance = [][]int{{10}}
	}
	if v := vals["idle_states"]; v != nil && s.IdleStates == nil {
		if err := p.idleRanges(s, v); err != nil {
			return err
		}
	}
	return nil
}

// ValidName reports whether s can name a machine: the name keys its runs in
// results directories and names the machine file copied there, so it is
// letters, digits, '.', '_' and '-', at most 64, from a letter or digit.
func ValidName(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for i, c := range s {
		alnum := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
		if !alnum && (i == 0 || c != '.' && c != '_' && c != '-') {
			return false
		}
	}
	return true
}

// nameFromFile is the name of a machine file without name: its base name
// without the extension, any other character made '_', "m" before one
// that does not begin with a letter or digit, cut to 64: a ValidName.
func nameFromFile(file string) string {
	b := []byte(strings.TrimSuffix(filepath.Base(file), filepath.Ext(file)))
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '-') {
			b[i] = '_'
		}
	}
	if len(b) == 0 || !(b[0] >= 'a' && b[0] <= 'z' || b[0] >= 'A' && b[0] <= 'Z' || b[0] >= '0' && b[0] <= '9') {
		b = append([]byte("m"), b...)
	}
	return string(b[:min(len(b), 64)])
}
