package calibrate

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/schedlab/schedlab/internal/costmodel"
	"github.com/schedlab/schedlab/internal/cpumask"
	"github.com/schedlab/schedlab/internal/engine"
	"github.com/schedlab/schedlab/internal/topology"
	"github.com/schedlab/schedlab/internal/workload/kobj"
)

// Options tune the microbenchmarks' length.
type Options struct {
	// Quick runs each benchmark about a tenth as long (for validate and
	// smoke tests); the figures are noisier.
	Quick bool
	// Log receives one line per benchmark as it finishes (nil: none).
	Log io.Writer
}

func (o *Options) n(full int) int {
	if o.Quick {
		return max(1, full/10)
	}
	return full
}

func (o *Options) logf(format string, args ...any) {
	if o.Log != nil {
		fmt.Fprintf(o.Log, format+"\n", args...)
	}
}

// Measurements are the results of the calibration microbenchmarks on one
// host (Measure takes them; tests make them up). Times are in ns.
type Measurements struct {
	Host   string // hostname
	Kernel string // uname -r
	Date   string // when, as text
	// CPUModel is /proc/cpuinfo's model name, if known.
	CPUModel string
	// LoadAvg is the 1-minute load average when the run started: other
	// work distorts every figure.
	LoadAvg float64

	// Syscall is one getppid(2).
	Syscall float64
	// Pipe, Unix and TCP are single-thread write-then-read loops on a
	// pipe, an AF_UNIX stream socketpair and a loopback TCP connection:
	// ns per call by message size, on a thread with a descriptor table of
	// its own (unshare(CLONE_FILES)), as a single-threaded process has.
	Pipe, Unix, TCP map[int]IOCost
	// PipeShared is the 100-byte pipe loop on a thread that shares the
	// process's table with the Go runtime's other threads, where fdget
	// takes a reference on the file (zero when not measured).
	PipeShared IOCost
	// PingPong are pipe round trips of 100-byte messages between two
	// threads pinned to the given CPUs.
	PingPong []PingPong
	// RingThreads and RingProcs are one hop (a write, a read and a
	// context switch) of a token around a ring of RingSize threads, and
	// of RingSize processes, on RingCPU (0 when not measured).
	RingThreads, RingProcs float64
	RingCPU                int
	// Lines are cache-line bounces (one-way latency) between two CPUs.
	Lines []LineBounce
	// SMT is the compute throughput of one thread alone and with its
	// sibling busy (zero when the host has no SMT).
	SMT SMTResult
	// MemBW are memory-copy bandwidths by thread count.
	MemBW []MemPoint
	// PrivateCacheKiB and LLCKiB are the cache sizes /sys reports (0 if
	// unknown).
	PrivateCacheKiB, LLCKiB int64
}

// IOCost is the time of one write and one read call.
type IOCost struct{ Write, Read float64 }

// PingPong is one ping-pong measurement.
type PingPong struct {
	Dist      costmodel.Distance
	A, B      int
	RoundTrip float64
}

// LineBounce is one cache-line bounce measurement.
type LineBounce struct {
	Dist   costmodel.Distance
	A, B   int
	OneWay float64
}

// SMTResult compares a compute loop alone and beside its sibling.
type SMTResult struct {
	A, B         int     // the siblings
	Alone, Pair  float64 // operations per second of one thread
	Measured     bool
	PairFraction float64 // Pair/Alone
}

// MemPoint is the total copy bandwidth of Threads threads on the CPUs of
// one LLC (Scope "llc") or one node ("node").
type MemPoint struct {
	Scope   string
	Threads int
	GBps    float64 // STREAM convention: bytes read plus bytes written
}

// Setting is one calibrated parameter.
type Setting struct {
	Key    string
	Value  float64
	Source string
}

// Message sizes of the single-thread IO loops: the per-byte cost is the
// slope between them.
const (
	smallMsg = 100
	largeMsg = 1000
)

// Derive turns measurements into parameter values. Each setting's source
// says how it was obtained; a quantity the host cannot show (no second LLC,
// no SMT) is left out and keeps its default. The rules:
//
//	syscall_ns             = getppid
//	pipe_ns_per_byte       = mean over write and read of (t(1000 B) − t(100 B)) / 900
//	pipe_write_ns          = t_write(100 B) − 100 × pipe_ns_per_byte (likewise read, and unix_*)
//	                         (these loops on a thread with a private descriptor table)
//	fget_shared_ns         = mean over write and read of t_shared(100 B) − t(100 B)
//	context_switch_ns      = RTT(same CPU)/2 − (write + read of 100 B, the shared table's:
//	                         the ping-pong's threads share it)
//	context_switch_mm_ns   = hop(ring of 8 processes) − hop(ring of 8 threads), on one CPU
//	ipi_same_llc_ns        = RTT(the nearest pair of two CPUs: SMT siblings, else the LLC;
//	                         ipi_same_cluster_ns for a cluster inside the LLC, and
//	                         ipi_same_llc_ns too when no pair across its clusters
//	                         was measured)/2 − (write + read of 100 B) − context_switch
//	                         − the exit latency of the idle state the governor picks for RTT/2
//	                         − the pipe's lines a hop waits for (kobj.PipeHopLines, 9 for
//	                           100 B: the write's 3 before its wakeup, the read's 4 and the
//	                           data's 2) × the line bounce measured at that distance, which
//	                           the model charges apart (model_kobj_lines, model_lines_before_wake)
//	ipi_other_llc/node_ns  = the same for CPUs in another LLC / node
//	line_*_ns              = one-way cache-line bounce latency by distance
//	                         (line_same_cluster_ns only where a cluster is smaller than its LLC)
//	smt_factor             = throughput beside a busy sibling / alone
//	mem_bw_core_gbps       = copy bandwidth of one thread
//	mem_bw_llc/node_gbps   = the most any thread count reached within one LLC / node
//	private_cache_kib, llc_kib from /sys
//
// A negative difference (noise) is clamped to 0.
func Derive(m *Measurements, spec *topology.MachineSpec) []Setting {
	var out []Setting
	where := "calibration on " + m.Host
	if m.Date != "" {
		where += " (" + m.Date + ")"
	}
	add := func(key string, v float64, how string) {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return
		}
		if q, ok := costmodel.Lookup(key); ok {
			v = costmodel.RoundSig3(q.Clamp(v))
			if q.Integer {
				v = math.Round(v)
			}
		}
		out = append(out, Setting{key, v, where + ": " + how})
	}
	if m.Syscall > 0 {
		add("syscall_ns", m.Syscall, "getppid loop")
	}
	ioParams := func(costs map[int]IOCost, w, r, b, what string) (float64, bool) {
		s, okS := costs[smallMsg]
		l, okL := costs[largeMsg]
		if !okS {
			return 0, false
		}
		perByte := 0.0
		if okL {
			perByte = math.Max(0, ((l.Write-s.Write)+(l.Read-s.Read))/2/float64(largeMsg-smallMsg))
			add(b, perByte, fmt.Sprintf("single-thread %s loop, slope between %d and %d bytes", what, smallMsg, largeMsg))
		}
		add(w, s.Write-smallMsg*perByte, fmt.Sprintf("single-thread %s loop, %d-byte writes less the copy", what, smallMsg))
		add(r, s.Read-smallMsg*perByte, fmt.Sprintf("single-thread %s loop, %d-byte reads less the copy", what, smallMsg))
		return s.Write + s.Read, true
	}
	pipeOps, okPipe := ioParams(m.Pipe, "pipe_write_ns", "pipe_read_ns", "pipe_ns_per_byte", "pipe")
	ioParams(m.Unix, "unix_send_ns", "unix_recv_ns", "unix_ns_per_byte", "AF_UNIX socketpair")
	ioParams(m.TCP, "tcp_send_ns", "tcp_recv_ns", "tcp_ns_per_byte", "loopback TCP (TCP_NODELAY)")
	if sh := m.PipeShared; okPipe && sh.Write > 0 && sh.Read > 0 {
		s := m.Pipe[smallMsg]
		add("fget_shared_ns", math.Max(0, (sh.Write-s.Write+sh.Read-s.Read)/2), fmt.Sprintf(
			"%d-byte pipe loop on a thread sharing the descriptor table against one with its own (unshare(CLONE_FILES)): %.0f + %.0f against %.0f + %.0f ns a write and a read, half the difference a call",
			smallMsg, sh.Write, sh.Read, s.Write, s.Read))
		// The ping-pongs' threads share the table: their calls cost
		// the shared figure.
		pipeOps = sh.Write + sh.Read
	}

	cs := math.NaN()
	for _, pp := range m.PingPong {
		if pp.Dist == costmodel.SameCPU && okPipe {
			cs = math.Max(0, pp.RoundTrip/2-pipeOps)
			add("context_switch_ns", cs, fmt.Sprintf("pipe ping-pong between two threads on cpu %d: round trip %.0f ns / 2 less a write and a read", pp.A, pp.RoundTrip))
		}
	}
	if m.RingThreads > 0 && m.RingProcs > 0 {
		add("context_switch_mm_ns", math.Max(0, m.RingProcs-m.RingThreads), fmt.Sprintf("token ring of %d processes against %d threads on cpu %d: %.0f − %.0f ns a hop", RingSize, RingSize, m.RingCPU, m.RingProcs, m.RingThreads))
	}
	ipiKey := map[costmodel.Distance]string{costmodel.SameCore: "ipi_same_llc_ns", costmodel.SameCluster: "ipi_same_cluster_ns", costmodel.SameLLC: "ipi_same_llc_ns", costmodel.OtherLLC: "ipi_other_llc_ns", costmodel.OtherNode: "ipi_other_node_ns"}
	done := map[string]bool{}
	idleNote := ""
	for _, pp := range orderedPingPongs(m.PingPong) {
		key := ipiKey[pp.Dist]
		if key == "" || done[key] || math.IsNaN(cs) {
			continue
		}
		half := pp.RoundTrip / 2
		exit := 0.0
		note := "the target's halt exit included (no cpuidle states)"
		var states []topology.IdleState
		if pp.B >= 0 && pp.B < len(spec.CPUs) {
			states = spec.IdleStatesOf(cpumask.CPU(pp.B))
		}
		if len(states) > 0 {
			i := costmodel.SelectIdleState(states, engine.Time(half), costmodel.IdleLimits{})
			exit = float64(states[i].Wake())
			note = fmt.Sprintf("less idle state %s's wake time (its exit latency where none is measured)", states[i].Name)
		} else {
			idleNote = "calibration: no cpuidle states on " + m.Host + "; the halt exit is folded into ipi_*_ns"
		}
		// The model charges a hop between two cores for the pipe's
		// lines (kobj.PipeHopLines, model_kobj_lines) on top of the IPI:
		// take them out of the measured hop, at the bounce measured at
		// that distance, so that they are not counted twice.
		lines, lineNote := 0.0, ""
		if lb, ok := bounceAt(m.Lines, pp.Dist); ok && pp.Dist != costmodel.SameCore && pp.Dist != costmodel.SameCPU {
			n := kobj.PipeHopLines(smallMsg)
			lines = float64(n) * lb
			lineNote = fmt.Sprintf(", the pipe's %d cache lines (%d × %.0f ns)", n, n, lb)
		}
		add(key, half-pipeOps-cs-exit-lines, fmt.Sprintf("pipe ping-pong cpu %d ↔ %d (%s): round trip %.0f ns / 2 less a write, a read and a context switch%s, %s", pp.A, pp.B, pp.Dist, pp.RoundTrip, lineNote, note))
		done[key] = true
	}
	// A host whose clusters are smaller than its LLC but which measured
	// no pair across them: the LLC's figure is the cluster's.
	if done["ipi_same_cluster_ns"] && !done["ipi_same_llc_ns"] {
		for _, st := range out {
			if st.Key == "ipi_same_cluster_ns" {
				out = append(out, Setting{"ipi_same_llc_ns", st.Value, st.Source + "; no pair across the LLC's clusters measured, so the same as ipi_same_cluster_ns"})
				done["ipi_same_llc_ns"] = true
				break
			}
		}
	}
	if idleNote != "" {
		out = append(out, Setting{"idle_exit_ns", 0, idleNote})
	}
	lineKey := map[costmodel.Distance]string{costmodel.SameCluster: "line_same_cluster_ns", costmodel.SameLLC: "line_same_llc_ns", costmodel.OtherLLC: "line_other_llc_ns", costmodel.OtherNode: "line_other_node_ns"}
	for _, lb := range m.Lines {
		if key := lineKey[lb.Dist]; key != "" && !done[key] {
			add(key, lb.OneWay, fmt.Sprintf("cache-line bounce cpu %d ↔ %d (%s), one way", lb.A, lb.B, lb.Dist))
			done[key] = true
		}
	}
	if m.SMT.Measured && m.SMT.Alone > 0 {
		add("smt_factor", m.SMT.Pair/m.SMT.Alone, fmt.Sprintf("integer loop on cpu %d with sibling %d busy vs alone", m.SMT.A, m.SMT.B))
	}
	best := map[string]MemPoint{}
	for _, mp := range m.MemBW {
		if mp.Threads == 1 && !done["mem_bw_core_gbps"] {
			add("mem_bw_core_gbps", mp.GBps, "copy of large arrays, one thread")
			done["mem_bw_core_gbps"] = true
		}
		if mp.GBps > best[mp.Scope].GBps {
			best[mp.Scope] = mp
		}
	}
	if b, ok := best["llc"]; ok {
		add("mem_bw_llc_gbps", b.GBps, fmt.Sprintf("copy of large arrays, best of 1..n threads on one LLC (%d threads)", b.Threads))
	}
	if b, ok := best["node"]; ok {
		add("mem_bw_node_gbps", b.GBps, fmt.Sprintf("copy of large arrays, best of 1..n threads on one node (%d threads)", b.Threads))
	} else if b, ok := best["llc"]; ok && llcIsNode(spec) {
		add("mem_bw_node_gbps", b.GBps, fmt.Sprintf("copy of large arrays, best of 1..n threads on one node, which is one LLC (%d threads)", b.Threads))
	}
	if m.PrivateCacheKiB > 0 {
		add("private_cache_kib", float64(m.PrivateCacheKiB), "/sys/devices/system/cpu/cpu0/cache: the largest cache shared by one core only")
	}
	if m.LLCKiB > 0 {
		add("llc_kib", float64(m.LLCKiB), "/sys/devices/system/cpu/cpu0/cache: the last-level cache")
	}
	return out
}

// orderedPingPongs sorts by distance, nearest first (stable).
// bounceAt is the one-way line bounce measured at distance d, if any.
func bounceAt(lines []LineBounce, d costmodel.Distance) (float64, bool) {
	for _, lb := range lines {
		if lb.Dist == d {
			return lb.OneWay, true
		}
	}
	return 0, false
}

func orderedPingPongs(pp []PingPong) []PingPong {
	out := append([]PingPong(nil), pp...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Dist < out[j].Dist })
	return out
}

func llcIsNode(spec *topology.MachineSpec) bool {
	llcNode := map[int]int{}
	nodeLLC := map[int]int{}
	for _, c := range spec.CPUs {
		if n, ok := llcNode[c.LLC]; ok && n != c.Node {
			return false
		}
		if l, ok := nodeLLC[c.Node]; ok && l != c.LLC {
			return false
		}
		llcNode[c.LLC], nodeLLC[c.Node] = c.Node, c.LLC
	}
	return true
}

// WriteMachine writes a machine file for spec in the per-CPU form, with a
// costs: section holding settings: what `schedlab calibrate` writes.
// comment lines are written at the top.
func WriteMachine(w io.Writer, spec *topology.MachineSpec, settings []Setting, comment []string) error {
	var b strings.Builder
	for _, c := range comment {
		fmt.Fprintf(&b, "# %s\n", c)
	}
	fmt.Fprintf(&b, "name: %s\n", yq(spec.Name))
	if spec.Description != "" {
		fmt.Fprintf(&b, "description: %s\n", yq(spec.Description))
	}
	fmt.Fprintf(&b, "arch: %s\n", spec.Arch)
	b.WriteString("cpus:\n")
	for _, c := range spec.CPUs {
		fmt.Fprintf(&b, "  - {cpu: %d, core: %d, cluster: %d, llc: %d, package: %d, node: %d, capacity: %d, freq_domain: %d, max_freq_khz: %d",
			c.CPU, c.Core, c.Cluster, c.LLC, c.Package, c.Node, c.Capacity, c.FreqDomain, c.MaxFreqKHz)
		if c.IdleStates != nil {
			b.WriteString(", idle_states: ")
			writeIdleFlow(&b, c.IdleStates)
		}
		b.WriteString("}\n")
	}
	b.WriteString("distance:\n")
	for _, row := range spec.Distance {
		parts := make([]string, len(row))
		for i, d := range row {
			parts[i] = strconv.Itoa(d)
		}
		fmt.Fprintf(&b, "  - [%s]\n", strings.Join(parts, ", "))
	}
	if spec.ReclaimDistance != 0 {
		fmt.Fprintf(&b, "reclaim_distance: %d\n", spec.ReclaimDistance)
	}
	if len(spec.IdleStates) > 0 {
		b.WriteString("idle_states:\n")
		for _, st := range spec.IdleStates {
			b.WriteString("  - ")
			writeIdleState(&b, st)
			b.WriteString("\n")
		}
	}
	if spec.CpufreqGovernor != "" {
		fmt.Fprintf(&b, "cpufreq_governor: %s\n", yq(spec.CpufreqGovernor))
	}
	if len(spec.IdleDisable) > 0 {
		names := make([]string, len(spec.IdleDisable))
		for i, n := range spec.IdleDisable {
			names[i] = yq(n)
		}
		fmt.Fprintf(&b, "idle_disable: [%s]\n", strings.Join(names, ", "))
	}
	if spec.LatencyLimitNs != nil {
		fmt.Fprintf(&b, "latency_limit_us: %d\n", *spec.LatencyLimitNs/1000)
	}
	if len(settings) > 0 {
		b.WriteString("costs:\n")
		for _, s := range settings {
			fmt.Fprintf(&b, "  %s: {value: %s, source: %s}\n", s.Key, costmodel.FormatNumber(s.Value), yq(s.Source))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func writeIdleFlow(b *strings.Builder, states []topology.IdleState) {
	b.WriteString("[")
	for i, st := range states {
		if i > 0 {
			b.WriteString(", ")
		}
		writeIdleState(b, st)
	}
	b.WriteString("]")
}

func writeIdleState(b *strings.Builder, st topology.IdleState) {
	fmt.Fprintf(b, "{name: %s, exit_latency_us: %d, target_residency_us: %d", yq(st.Name), st.ExitLatencyNs/1000, st.TargetResidencyNs/1000)
	if st.WakeNs != 0 {
		fmt.Fprintf(b, ", wake_us: %d", st.WakeNs/1000)
	}
	if st.Cluster {
		b.WriteString(", cluster: true")
	}
	b.WriteString("}")
}

// yq quotes a string for YAML (a double-quoted scalar; Go's escapes for
// quotes, backslashes and control characters are valid there).
func yq(s string) string { return strconv.Quote(s) }
