package topology

import (
	"fmt"
	"gopkg.in/yaml.v3"
	"io"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/schedlab/schedlab/internal/cpumask"
)

// WriteYAML writes s as a machine file (docs/machines.md) that ParseYAML
// reads back into the same spec: the same CPUs with the same ids, distances,
// reclaim_distance, idle states and costs section. Only Source (the file
// name) and the line numbers recorded in the costs section differ.
//
// A machine made of identical parts (every preset is one) is written in the
// regular form, sockets to threads, with capacity, max_freq_khz,
// freq_domains and idle_states given per CPU range where they differ; any
// other machine is written in the per-CPU form. Every value is written
// explicitly, defaults included, so the file is a starting point to edit.
//
// It fails, without writing, for what a machine file cannot express: an
// idle-state time that is not a whole microsecond, or a string that is not
// valid UTF-8.
func WriteYAML(w io.Writer, s *MachineSpec) error {
	var b strings.Builder
	if err := writeYAML(&b, s); err != nil {
		return err
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func writeYAML(b *strings.Builder, s *MachineSpec) error {
	if err := checkWritable(s); err != nil {
		return err
	}
	fmt.Fprintf(b, "name: %s\n", yamlString(s.Name))
	if s.Description != "" {
		fmt.Fprintf(b, "description: %s\n", yamlString(s.Description))
	}
	fmt.Fprintf(b, "arch: %s\n", yamlString(string(s.Arch)))
	if r, ok := regularOf(s); ok {
		writeRegular(b, s, r)
	} else {
		writePerCPU(b, s)
	}
	if s.ReclaimDistance != 0 {
		fmt.Fprintf(b, "reclaim_distance: %d\n", s.ReclaimDistance)
	}
	if s.CpufreqGovernor != "" {
		fmt.Fprintf(b, "cpufreq_governor: %s\n", yamlString(s.CpufreqGovernor))
	}
	if len(s.IdleDisable) > 0 {
		names := make([]string, len(s.IdleDisable))
		for i, n := range s.IdleDisable {
			names[i] = yamlString(n)
		}
		fmt.Fprintf(b, "idle_disable: [%s]\n", strings.Join(names, ", "))
	}
	if s.LatencyLimitNs != nil {
		fmt.Fprintf(b, "latency_limit_us: %d\n", *s.LatencyLimitNs/1000)
	}
	return writeCosts(b, s.Costs)
}

// checkWritable rejects what the file format cannot hold.
func checkWritable(s *MachineSpec) error {
	str := func(what, v string) error {
		if !utf8.ValidString(v) {
			return fmt.Errorf("machine %s: %s %q is not valid UTF-8, which a machine file cannot hold", s.Name, what, v)
		}
		return nil
	}
	idle := func(states []IdleState) error {
		for _, st := range states {
			if err := str("idle state name", st.Name); err != nil {
				return err
			}
			if st.ExitLatencyNs%1000 != 0 || st.TargetResidencyNs%1000 != 0 || st.GateDelayNs%1000 != 0 {
				return fmt.Errorf("machine %s: idle state %q: exit latency %d ns, target residency %d ns and gate delay %d ns must be whole microseconds in a machine file", s.Name, st.Name, st.ExitLatencyNs, st.TargetResidencyNs, st.GateDelayNs)
			}
		}
		return nil
	}
	if err := str("name", s.Name); err != nil {
		return err
	}
	if err := str("description", s.Description); err != nil {
		return err
	}
	if err := idle(s.IdleStates); err != nil {
		return err
	}
	for _, c := range s.CPUs {
		if err := idle(c.IdleStates); err != nil {
			return err
		}
	}
	return nil
}

// regularOf finds the regular description whose expansion gives exactly the
// CPU ids of s (core, cluster, LLC, package, node), and whose frequency
// domains and idle states the regular form can state.
func regularOf(s *MachineSpec) (Regular, bool) {
	n := len(s.CPUs)
	count := func(f func(c *CPUSpec) int) int {
		seen := map[int]bool{}
		for i := range s.CPUs {
			seen[f(&s.CPUs[i])] = true
		}
		return len(seen)
	}
	sockets := count(func(c *CPUSpec) int { return c.Package })
	nodes := len(s.Distance)
	llcs := count(func(c *CPUSpec) int { return c.LLC })
	clusters := count(func(c *CPUSpec) int { return c.Cluster })
	cores := count(func(c *CPUSpec) int { return c.Core })
	if n == 0 || nodes == 0 || nodes%sockets != 0 || llcs%nodes != 0 || cores%llcs != 0 || n%cores != 0 {
		return Regular{}, false
	}
	r := Regular{
		Arch:           s.Arch,
		Sockets:        sockets,
		NodesPerSocket: nodes / sockets,
		LLCsPerNode:    llcs / nodes,
		ThreadsPerCore: n / cores,
		Distance:       s.Distance,
	}
	switch {
	case clusters == cores:
		r.CoresPerLLC = cores / llcs
	case clusters%llcs == 0 && cores%clusters == 0:
		r.ClustersPerLLC, r.CoresPerCluster = clusters/llcs, cores/clusters
	default:
		return Regular{}, false
	}
	if r.NrCPUs() != n {
		return Regular{}, false
	}
	// The arch's default numbering first: with one thread per core both
	// give the same CPUs.
	numberings := []Numbering{NumberingX86, NumberingSequential}
	if s.Arch == ArchARM64 {
		numberings = []Numbering{NumberingSequential, NumberingX86}
	}
	for _, r.Numbering = range numberings {
		e, err := r.Spec()
		if err != nil {
			return Regular{}, false
		}
		if sameIDs(e, s) {
			if _, ok := freqDomainsOf(s); !ok {
				return Regular{}, false
			}
			// The regular form has either one list for every CPU or
			// lists per CPU range, not both.
			if len(s.IdleStates) > 0 && slices.ContainsFunc(s.CPUs, func(c CPUSpec) bool { return c.IdleStates != nil }) {
				return Regular{}, false
			}
			return r, true
		}
	}
	return Regular{}, false
}

func sameIDs(a, b *MachineSpec) bool {
	for i := range a.CPUs {
		x, y := &a.CPUs[i], &b.CPUs[i]
		if x.Core != y.Core || x.Cluster != y.Cluster || x.LLC != y.LLC || x.Package != y.Package || x.Node != y.Node {
			return false
		}
	}
	return true
}

// freqDomainsOf returns the freq_domains value of the regular form that
// gives exactly the frequency-domain ids of s: a scope name, or a list of
// cpu lists whose positions are the ids.
func freqDomainsOf(s *MachineSpec) (string, bool) {
	c := &MachineSpec{CPUs: slices.Clone(s.CPUs)}
	for _, sc := range scopes {
		if SetFreqDomains(c, sc) == nil && slices.EqualFunc(c.CPUs, s.CPUs, func(a, b CPUSpec) bool { return a.FreqDomain == b.FreqDomain }) {
			return string(sc), true
		}
	}
	n := len(s.CPUs)
	var lists []cpumask.Mask
	for i, cpu := range s.CPUs {
		fd := cpu.FreqDomain
		if fd > n {
			return "", false
		}
		for len(lists) <= fd {
			lists = append(lists, cpumask.New(n))
		}
		lists[fd].Set(cpumask.CPU(i))
	}
	parts := make([]string, len(lists))
	for i, m := range lists {
		if m.Empty() {
			return "", false // ids with gaps: only the per-CPU form keeps them
		}
		parts[i] = yamlString(m.String())
	}
	return "[" + strings.Join(parts, ", ") + "]", true
}

func writeRegular(b *strings.Builder, s *MachineSpec, r Regular) {
	fmt.Fprintf(b, "sockets: %d\n", r.Sockets)
	fmt.Fprintf(b, "nodes_per_socket: %d\n", r.NodesPerSocket)
	fmt.Fprintf(b, "llcs_per_node: %d\n", r.LLCsPerNode)
	if r.ClustersPerLLC > 0 {
		fmt.Fprintf(b, "clusters_per_llc: %d\n", r.ClustersPerLLC)
		fmt.Fprintf(b, "cores_per_cluster: %d\n", r.CoresPerCluster)
	} else {
		fmt.Fprintf(b, "cores_per_llc: %d\n", r.CoresPerLLC)
	}
	fmt.Fprintf(b, "threads_per_core: %d\n", r.ThreadsPerCore)
	fmt.Fprintf(b, "numbering: %s\n", r.Numbering)
	if len(s.Distance) > 1 {
		writeDistance(b, s.Distance)
	}
	writePerRange(b, s, "capacity", func(c *CPUSpec) int { return c.Capacity })
	writePerRange(b, s, "max_freq_khz", func(c *CPUSpec) int { return c.MaxFreqKHz })
	fd, _ := freqDomainsOf(s)
	fmt.Fprintf(b, "freq_domains: %s\n", fd)
	if len(s.IdleStates) > 0 {
		writeIdleList(b, s.IdleStates)
		return
	}
	sets := idleSets(s, cpumask.Full(len(s.CPUs)))
	started := false
	for _, set := range sets {
		if s.CPUs[set.cpus.First()].IdleStates == nil {
			continue // no states
		}
		if !started {
			b.WriteString("idle_states:\n")
			started = true
		}
		fmt.Fprintf(b, "  - cpus: %s\n", yamlString(set.cpus.String()))
		if len(set.states) == 0 {
			b.WriteString("    states: []\n")
			continue
		}
		b.WriteString("    states:\n")
		for _, st := range set.states {
			fmt.Fprintf(b, "      - %s\n", idleState(st))
		}
	}
}

// writePerRange writes KEY: N when every CPU has the same value, else a
// list of {cpus, value} in order of each value's first CPU.
func writePerRange(b *strings.Builder, s *MachineSpec, key string, get func(c *CPUSpec) int) {
	n := len(s.CPUs)
	var values []int
	masks := map[int]cpumask.Mask{}
	for i := range s.CPUs {
		v := get(&s.CPUs[i])
		m, ok := masks[v]
		if !ok {
			values = append(values, v)
			m = cpumask.New(n)
			masks[v] = m
		}
		m.Set(cpumask.CPU(i))
	}
	if len(values) == 1 {
		fmt.Fprintf(b, "%s: %d\n", key, values[0])
		return
	}
	fmt.Fprintf(b, "%s:\n", key)
	for _, v := range values {
		fmt.Fprintf(b, "  - {cpus: %s, value: %d}\n", yamlString(masks[v].String()), v)
	}
}

func writePerCPU(b *strings.Builder, s *MachineSpec) {
	b.WriteString("cpus:\n")
	for _, c := range s.CPUs {
		fmt.Fprintf(b, "  - {cpu: %d, core: %d, cluster: %d, llc: %d, package: %d, node: %d, capacity: %d, freq_domain: %d, max_freq_khz: %d",
			c.CPU, c.Core, c.Cluster, c.LLC, c.Package, c.Node, c.Capacity, c.FreqDomain, c.MaxFreqKHz)
		if c.IdleStates != nil {
			fmt.Fprintf(b, ", idle_states: %s", idleFlow(c.IdleStates))
		}
		b.WriteString("}\n")
	}
	if len(s.Distance) > 1 {
		writeDistance(b, s.Distance)
	}
	if len(s.IdleStates) > 0 {
		writeIdleList(b, s.IdleStates)
	}
}

func writeDistance(b *strings.Builder, d [][]int) {
	b.WriteString("distance:\n")
	for _, row := range d {
		parts := make([]string, len(row))
		for i, x := range row {
			parts[i] = strconv.Itoa(x)
		}
		fmt.Fprintf(b, "  - [%s]\n", strings.Join(parts, ", "))
	}
}

func writeIdleList(b *strings.Builder, states []IdleState) {
	b.WriteString("idle_states:\n")
	for _, st := range states {
		fmt.Fprintf(b, "  - %s\n", idleState(st))
	}
}

func idleFlow(states []IdleState) string {
	parts := make([]string, len(states))
	for i, st := range states {
		parts[i] = idleState(st)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

func idleState(st IdleState) string {
	s := fmt.Sprintf("{name: %s, exit_latency_us: %d, target_residency_us: %d", yamlString(st.Name), st.ExitLatencyNs/1000, st.TargetResidencyNs/1000)
	switch {
	case st.WakeNs != 0 && st.WakeNs%1000 == 0:
		s += fmt.Sprintf(", wake_us: %d", st.WakeNs/1000)
	case st.WakeNs != 0:
		s += fmt.Sprintf(", wake_ns: %d", st.WakeNs)
	}
	if st.Cluster {
		s += ", cluster: true"
	}
	if st.GateDelayNs != 0 {
		s += fmt.Sprintf(", gate_delay_us: %d", st.GateDelayNs/1000)
	}
	return s + "}"
}

// writeCosts writes the costs section as the file gave it, one parameter
// a line: the parameter names and values are the cost model's, so the
// section is copied, not interpreted. A scalar keeps its text (quoted where
// the text needs it); any other value is written in YAML's flow style, as
// "name: {value: V, source: S}" settings are.
func writeCosts(b *strings.Builder, c *CostsSection) error {
	if c == nil || c.Node == nil {
		return nil
	}
	n := c.Node
	if n.Kind != yaml.MappingNode {
		return fmt.Errorf("machine file: the costs: section is not a mapping")
	}
	if len(n.Content) == 0 {
		b.WriteString("costs: {}\n")
		return nil
	}
	b.WriteString("costs:\n")
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		key := k.Value
		if !plainKeyRE.MatchString(key) {
			key = yamlString(key)
		}
		val, err := yamlValue(v)
		if err != nil {
			return err
		}
		fmt.Fprintf(b, "  %s: %s\n", key, val)
	}
	return nil
}

// yamlValue is a costs setting's value as one line of YAML.
func yamlValue(v *yaml.Node) (string, error) {
	if v.Kind == yaml.ScalarNode {
		if v.Tag == "!!str" || v.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) != 0 {
			out := yamlString(v.Value)
			var x any
			if err := yaml.Unmarshal([]byte(out), &x); err != nil || x != v.Value {
				out = strconv.Quote(v.Value) // a word YAML would read as a number or boolean
			}
			return out, nil
		}
		return v.Value, nil
	}
	if v.Kind == yaml.MappingNode {
		flat := true
		for _, c := range v.Content {
			flat = flat && c.Kind == yaml.ScalarNode
		}
		if flat {
			parts := make([]string, 0, len(v.Content)/2)
			for i := 0; i+1 < len(v.Content); i += 2 {
				k := v.Content[i].Value
				if !plainKeyRE.MatchString(k) {
					k = yamlString(k)
				}
				val, _ := yamlValue(v.Content[i+1])
				parts = append(parts, k+": "+val)
			}
			return "{" + strings.Join(parts, ", ") + "}", nil
		}
	}
	f := flowCopy(v)
	out, err := yaml.Marshal(f)
	if err != nil {
		return "", fmt.Errorf("machine file: a costs setting cannot be written: %v", err)
	}
	return strings.TrimSuffix(string(out), "\n"), nil
}

// flowCopy is a deep copy of n in flow style, without comments.
func flowCopy(n *yaml.Node) *yaml.Node {
	c := *n
	c.HeadComment, c.LineComment, c.FootComment = "", "", ""
	if c.Kind == yaml.MappingNode || c.Kind == yaml.SequenceNode {
		c.Style = yaml.FlowStyle
	}
	c.Content = make([]*yaml.Node, len(n.Content))
	for i, k := range n.Content {
		c.Content[i] = flowCopy(k)
	}
	return &c
}

var plainKeyRE = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)

// yamlString is s as a plain YAML scalar when it is a simple word or cpu
// list that the parser reads back as the same text, else double-quoted:
// Go's escapes (\", \\, \n, \t, \xNN below 0x80, \uNNNN, \UNNNNNNNN)
// mean the same there, for valid UTF-8.
func yamlString(s string) string {
	if plainRE.MatchString(s) && !yamlNull[s] {
		return s
	}
	return strconv.Quote(s)
}

var plainRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]*$`)

// yamlNull are the plain scalars YAML reads as null, which machine files
// reject where a string is expected.
var yamlNull = map[string]bool{"null": true, "Null": true, "NULL": true}

// yamlNumber writes a float so that ParseYAML reads back the same value:
// an integer when it is one, else the shortest representation that
// round-trips.
func yamlNumber(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return strconv.FormatInt(int64(v), 10)
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}
