package costmodel

import (
	"bytes"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/schedlab/schedlab/internal/cpumask"
	"github.com/schedlab/schedlab/internal/engine"
	"github.com/schedlab/schedlab/internal/fileerr"
	"github.com/schedlab/schedlab/internal/golden"
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

func mustFor(t *testing.T, s *topology.MachineSpec) *Params {
	t.Helper()
	p, err := For(s)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// Every machine preset has its own defaults, and every default of every
// preset says where it comes from.
func TestPresetsComplete(t *testing.T) {
	for _, mp := range topology.Presets() {
		if _, ok := presetTables[mp.Name]; !ok {
			t.Errorf("machine preset %s has no cost defaults", mp.Name)
		}
	}
	for _, name := range PresetNames() {
		p, ok := Defaults(name)
		if !ok {
			t.Fatalf("Defaults(%s)", name)
		}
		for _, q := range All() {
			if strings.TrimSpace(p.Source(q.Key)) == "" {
				t.Errorf("%s: %s has no source", name, q.Key)
			}
			if err := Check(q.Key, p.Get(q.Key)); err != nil {
				t.Errorf("%s: %v", name, err)
			}
		}
	}
	if got := mustFor(t, preset(t, "hikey")).Name; got != "hikey" {
		t.Errorf("For(hikey) used %s", got)
	}
}

// Every field of Params but Name and Sources is a parameter.
func TestEveryFieldIsAParameter(t *testing.T) {
	typ := reflect.TypeFor[Params]()
	n := 0
	for i := range typ.NumField() {
		f := typ.Field(i)
		if f.Name == "Name" || f.Name == "Sources" {
			continue
		}
		if f.Tag.Get("cost") == "" {
			t.Errorf("field %s has no cost tag", f.Name)
		}
		n++
	}
	if n != len(All()) {
		t.Errorf("%d fields, %d parameters", n, len(All()))
	}
}

// fieldDocs reads the first sentence of each parameter field's doc comment
// from params.go.
func fieldDocs(t *testing.T) map[string]string {
	t.Helper()
	fs := token.NewFileSet()
	f, err := parser.ParseFile(fs, "params.go", nil, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	ast.Inspect(f, func(n ast.Node) bool {
		ts, ok := n.(*ast.TypeSpec)
		if !ok || ts.Name.Name != "Params" {
			return true
		}
		for _, fld := range ts.Type.(*ast.StructType).Fields.List {
			if fld.Tag == nil || len(fld.Names) != 1 {
				continue
			}
			tag := reflect.StructTag(strings.Trim(fld.Tag.Value, "`"))
			key := tag.Get("cost")
			if key == "" {
				continue
			}
			doc := strings.Join(strings.Fields(fld.Doc.Text()), " ")
			doc = strings.TrimPrefix(doc, fld.Names[0].Name+" ")
			doc = strings.TrimPrefix(strings.TrimPrefix(doc, "is "), "are ")
			if i := strings.Index(doc, ". "); i >= 0 {
				doc = doc[:i+1]
			}
			out[key] = strings.ToUpper(doc[:1]) + doc[1:]
		}
		return false
	})
	return out
}

const (
	genBegin = "<!-- BEGIN GENERATED: go test ./internal/costmodel -run TestDocUpToDate -rewrite -->\n"
	genEnd   = "<!-- END GENERATED -->\n"
)

// docs/costs.md's tables are generated from the code; this test fails when
// they are stale (rewrite them with -rewrite).
func TestDocUpToDate(t *testing.T) {
	docs := fieldDocs(t)
	for _, q := range All() {
		if docs[q.Key] == "" {
			t.Errorf("parameter %s (%s) has no doc comment", q.Key, q.Field)
		}
	}
	var gen bytes.Buffer
	if err := WriteDocTables(&gen, docs); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("..", "..", "docs", "costs.md")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := string(data)
	i, j := strings.Index(s, genBegin), strings.Index(s, genEnd)
	if i < 0 || j < i {
		t.Fatalf("%s has no generated section markers", path)
	}
	golden.Check(t, path, []byte(s[:i+len(genBegin)]+gen.String()+s[j:]))
}

func TestMachineFileCosts(t *testing.T) {
	s, err := topology.LoadFile(filepath.Join("testdata", "box.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	p := mustFor(t, s)
	if p.Name != "zen3-2s-nps1" {
		t.Errorf("base %s, want zen3-2s-nps1 from the file's base", p.Name)
	}
	if p.ContextSwitch != 750 || p.Source("context_switch_ns") != filepath.Join("testdata", "box.yaml")+":8" {
		t.Errorf("context_switch_ns = %d from %q", p.ContextSwitch, p.Source("context_switch_ns"))
	}
	if p.SMTFactor != 0.7 || !strings.HasPrefix(p.Source("smt_factor"), "my measurement (") {
		t.Errorf("smt_factor = %g from %q", p.SMTFactor, p.Source("smt_factor"))
	}
	if p.MemBWLLC != 51.2 {
		t.Errorf("unset parameter changed: mem_bw_llc_gbps = %g", p.MemBWLLC)
	}
	// A costs file on top: its base and settings win.
	q, err := Resolve(s, filepath.Join("testdata", "costs.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if q.Name != "hikey" || q.ContextSwitch != 750 || q.SISScanCPU != 99 {
		t.Errorf("Resolve: base %s, context_switch %d, sis_scan %d", q.Name, q.ContextSwitch, q.SISScanCPU)
	}
	if src := q.Source("context_switch_ns"); src != filepath.Join("testdata", "box.yaml")+":8" {
		t.Errorf("the machine file's setting is attributed to %q", src)
	}
	if src := q.Source("sis_scan_cpu_ns"); src != filepath.Join("testdata", "costs.yaml")+":3" {
		t.Errorf("the costs file's setting is attributed to %q", src)
	}
	// A plain host spec uses the generic defaults.
	h := preset(t, "hikey")
	h.Source = "host:/sys"
	if got := mustFor(t, h).Name; got != GenericName {
		t.Errorf("host-like spec got %s defaults", got)
	}
}

// User mistakes in costs name the file and line.
func TestCostsErrors(t *testing.T) {
	for _, tc := range []struct{ body, want string }{
		{"costs:\n  context_swich_ns: 5\n", `box.yaml:9: unknown cost parameter "context_swich_ns"`},
		{"costs:\n  smt_factor: 1.5\n", "box.yaml:9: smt_factor must be in 0.05..1 ×, not 1.5"},
		{"costs:\n  syscall_ns: fast\n", "box.yaml:9: syscall_ns must be a number"},
		{"costs:\n  syscall_ns: {value: 3, src: x}\n", `box.yaml:9: unknown key "src" in cost parameter syscall_ns`},
		{"costs:\n  syscall_ns: 1\n  syscall_ns: 2\n", `box.yaml:10: duplicate cost parameter "syscall_ns" (first at line 9)`},
		{"costs: [1, 2]\n", "box.yaml:8: costs must be a mapping"},
		{"costs:\n  base: zen9\n", `box.yaml:9: unknown costs base "zen9"`},
	} {
		head := "name: box\nsockets: 1\ncores_per_llc: 4\nthreads_per_core: 2\n#\n#\n#\n"
		_, err := func() (*Params, error) {
			s, err := topology.ParseYAML("box.yaml", []byte(head+tc.body))
			if err != nil {
				return nil, err
			}
			return For(s)
		}()
		var fe *fileerr.Error
		if !errors.As(err, &fe) || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%q: got %v, want %s", tc.body, err, tc.want)
		}
	}
	_, err := Resolve(preset(t, "hikey"), filepath.Join("testdata", "bad-base.yaml"))
	if err == nil || !strings.HasPrefix(err.Error(), filepath.Join("testdata", "bad-base.yaml")+`:2: unknown costs base "zen5"`) {
		t.Errorf("bad base: %v", err)
	}
	_, err = Resolve(preset(t, "hikey"), filepath.Join("testdata", "bad-costs.yaml"))
	if err == nil || !strings.HasPrefix(err.Error(), filepath.Join("testdata", "bad-costs.yaml")+":3: ") {
		t.Errorf("bad costs file: %v", err)
	}
}

// Reference: docs/costs.md, "Cache refill": what a run charges.
func TestCacheRefill(t *testing.T) {
	s := preset(t, "zen3-2s-nps1")
	tab := Compile(mustFor(t, s), s)
	const mb = 1 << 20
	same, llc, xllc, xnode := cpumask.CPU(0), cpumask.CPU(1), cpumask.CPU(8), cpumask.CPU(64)
	if DistanceOf(s, 0, 128) != SameCore || DistanceOf(s, 0, llc) != SameLLC || DistanceOf(s, 0, xllc) != OtherLLC || DistanceOf(s, 0, xnode) != OtherNode {
		t.Fatal("distances")
	}
	short := 10 * engine.Microsecond
	r := func(to cpumask.CPU, fp int64, away engine.Time) engine.Time {
		return tab.CacheRefill(0, to, fp, away, -1)
	}
	// A large footprint right after a move: the farther, the longer.
	a, b, c, d := r(same, 8*mb, short), r(llc, 8*mb, short), r(xllc, 8*mb, short), r(xnode, 8*mb, short)
	if !(a < b && b < c && c < d) {
		t.Errorf("8 MiB after 10 µs: same cpu %v, same llc %v, other llc %v, other node %v", a, b, c, d)
	}
	// Same LLC: only the private cache refills from the L3, 512 KiB / 60
	// GB/s, and what other work evicted from the L3 meanwhile from memory
	// (to 0.2 %: the decay is interpolated between 1/32-halving steps).
	if want := engine.Time(512*1024/60.0 + 8*mb*(1-math.Exp(-1e4*10/(32*mb)))/20); math.Abs(float64(b-want)) > float64(want)/500 {
		t.Errorf("same-LLC refill %v, want about %v", b, want)
	}
	// Other LLC: the surviving footprint at 13 GB/s: about 8 MiB / 13 GB/s.
	if want := engine.Time(8 * mb / 13); c < want*9/10 || c > want*11/10 {
		t.Errorf("other-LLC refill %v, want about %v", c, want)
	}
	// After a long absence every cache is cold wherever the task goes
	// (within the node): the distance stops mattering.
	long := 10 * engine.Second
	if x, y := r(llc, 8*mb, long), r(xllc, 8*mb, long); x != y {
		t.Errorf("after 10 s: same llc %v, other llc %v", x, y)
	}
	if r(xnode, 0, short) != 0 || r(same, 8*mb, 0) != 0 {
		t.Error("no footprint or no time away must cost nothing")
	}
}

// A reschedule IPI inside a Kunpeng 920 cluster costs ipi_same_cluster_ns,
// one to another cluster of the die ipi_same_llc_ns, and the presets make
// the second 1 µs dearer (docs/costs.md, "Kunpeng 920 across a cluster");
// where a cluster is its LLC (Zen3's CCX) every IPI in the LLC costs
// ipi_same_llc_ns. An IPI off the die costs at least as much as one to
// another cluster of it.
func TestClusterIPI(t *testing.T) {
	kp := preset(t, "kunpeng920-128")
	p := mustFor(t, kp)
	tab := Compile(p, kp)
	if kp.CPUs[1].Cluster != kp.CPUs[0].Cluster || kp.CPUs[4].Cluster == kp.CPUs[0].Cluster || kp.CPUs[4].LLC != kp.CPUs[0].LLC {
		t.Fatal("kunpeng920-128: want cpus 0 and 1 in one cluster, cpu 4 in another cluster of their die")
	}
	if got := tab.IPILatency(0, 1); got != p.IPISameCluster {
		t.Errorf("IPI inside the cluster: %v, want ipi_same_cluster_ns %v", got, p.IPISameCluster)
	}
	if got := tab.IPILatency(0, 4); got != p.IPISameLLC {
		t.Errorf("IPI to another cluster: %v, want ipi_same_llc_ns %v", got, p.IPISameLLC)
	}
	if d := p.IPISameLLC - p.IPISameCluster; d != engine.Microsecond {
		t.Errorf("kunpeng920-128: another cluster costs %v more than the own, want 1 µs", d)
	}
	if off := tab.IPILatency(0, 32); off < p.IPISameLLC {
		t.Errorf("IPI to the other die %v, below one to another cluster %v", off, p.IPISameLLC)
	}
	z := preset(t, "zen3-2s-nps1")
	pz := mustFor(t, z)
	pz.IPISameCluster = pz.IPISameLLC + 12345 // must not be used
	tz := Compile(pz, z)
	if got := tz.IPILatency(0, 1); got != pz.IPISameLLC {
		t.Errorf("zen3: IPI inside a CCX %v, want ipi_same_llc_ns %v", got, pz.IPISameLLC)
	}
}

// The _other_node parameters are for the farthest nodes; a node of the
// same socket under NPS4 (SLIT 12) sits near the other-LLC value.
func TestNodeInterpolation(t *testing.T) {
	s := preset(t, "zen3-2s-nps4")
	p := mustFor(t, s)
	tab := Compile(p, s)
	sameSocket, otherSocket := cpumask.CPU(16), cpumask.CPU(64)
	if s.CPUs[sameSocket].Node == s.CPUs[0].Node || s.Distance[0][s.CPUs[sameSocket].Node] != 12 {
		t.Fatal("cpu 16 should be on a same-socket node at distance 12")
	}
	wantNear := float64(p.IPIOtherLLC) + float64(p.IPIOtherNode-p.IPIOtherLLC)*2/22
	if got := tab.IPILatency(0, sameSocket); math.Abs(float64(got)-wantNear) > 1 {
		t.Errorf("IPI to a same-socket node: %v, want %v", got, wantNear)
	}
	if got := tab.IPILatency(0, otherSocket); got != p.IPIOtherNode {
		t.Errorf("IPI to the other socket: %v", got)
	}
	if got := tab.LLCLineRead(0, 1); got != p.LineSameLLC {
		t.Errorf("line in the LLC: %v", got)
	}
	if got := tab.LLCLineRead(0, 0); got != p.LineSameLLC {
		t.Errorf("a line the other CPUs of the own LLC write: %v", got)
	}
	// The factor is kept in 1/1024.
	if got, want := tab.RemoteMemSpeed(1<<20, 0, s.CPUs[otherSocket].Node), int64(math.Round((1<<20)/p.RemoteMemFactor)); math.Abs(float64(got-want)) > float64(want)/1000 {
		t.Errorf("remote memory speed %v, want %v", got, want)
	}
}

// Reference: sched's lbWorkTime; arch_scale_cpu_capacity and
// arch_scale_freq_capacity.
func TestScaleWork(t *testing.T) {
	if got := ScaleWork(415, 415, 0); got != 1024 {
		t.Errorf("capacity 415: %v", got)
	}
	if got := ScaleWork(1000, 1024, 512); got != 2000 {
		t.Errorf("half frequency: %v", got)
	}
	if got := ScaleWork(1000, 1024, 1024); got != 1000 {
		t.Errorf("full speed: %v", got)
	}
	s := preset(t, "zen3-2s-nps1")
	par := mustFor(t, s)
	tab := Compile(par, s)
	// smt_factor 0.62 is 635/1024.
	if tab.SMTSpeed(1024, true) != 635 || tab.SMTSpeed(1024, false) != 1024 {
		t.Errorf("SMTSpeed %d", tab.SMTSpeed(1024, true))
	}
	c := &tab.Syscalls
	if c.PipeWriteCost(100) != 575+34 || c.UnixRecvCost(1000) != par.UnixRecv+115 || c.TCPSendCost(1000) != par.TCPSend+250 {
		t.Errorf("IPC costs %v %v %v", c.PipeWriteCost(100), c.UnixRecvCost(1000), c.TCPSendCost(1000))
	}
	b := &tab.Balance
	if b.BlockedAverages(100) != 500+100*170 || b.CpufreqUpdate(6) != 300+6*100 || b.SgStats(8) != 100+8*60 {
		t.Error("scheduler path costs")
	}
}

// Reference: drivers/cpuidle/governors/menu.c:menu_select (v6.19,
// simplified): the deepest state whose target residency fits the
// prediction and whose advertised exit latency fits the PM QoS request;
// disabled states are skipped, and the first enabled state is the floor.
func TestIdleGovernor(t *testing.T) {
	s := preset(t, "hikey")
	states := s.IdleStatesOf(0) // WFI 1/1 µs, cpu-sleep 950/1000 (wake 250), cluster-sleep 1500/2700 (wake 700)
	us := engine.Microsecond
	for _, tc := range []struct {
		name string
		pred engine.Time
		lim  IdleLimits
		want int
	}{
		{"short idle", 500 * us, IdleLimits{}, 0},
		{"fits cpu-sleep", 1500 * us, IdleLimits{}, 1},
		{"fits cluster-sleep", 5000 * us, IdleLimits{}, 2},
		// The request is held against the advertised latency (950 µs),
		// not the 250 µs the hardware takes.
		{"limit below cpu-sleep's advertised latency", 5000 * us, IdleLimits{Limited: true, LatencyLimit: 300 * us}, 0},
		{"limit between the two", 5000 * us, IdleLimits{Limited: true, LatencyLimit: 1000 * us}, 1},
		{"limit 0 keeps the first state", 5000 * us, IdleLimits{Limited: true}, 0},
		{"cluster-sleep disabled", 5000 * us, IdleLimits{Disabled: []bool{false, false, true}}, 1},
		{"cpu-sleep disabled: skipped, not a stop", 5000 * us, IdleLimits{Disabled: []bool{false, true}}, 2},
		{"WFI disabled: the first enabled state is the floor", 100 * us, IdleLimits{Disabled: []bool{true}}, 1},
		{"all disabled: state 0", 5000 * us, IdleLimits{Disabled: []bool{true, true, true}}, 0},
		{"no prediction", 0, IdleLimits{}, 0},
	} {
		if got := SelectIdleState(states, tc.pred, tc.lim); got != tc.want {
			t.Errorf("%s: predicted %v, limits %+v: state %d, want %d", tc.name, tc.pred, tc.lim, got, tc.want)
		}
	}
	if SelectIdleState(nil, engine.Second, IdleLimits{}) != -1 {
		t.Error("no states")
	}
	p := mustFor(t, s)
	p.IdleExit = 42
	tab := Compile(p, s)
	if tab.IdleExitLatency(states, 2) != 1500*us {
		t.Error("spec states win")
	}
	if got := tab.IdleWake(states, 2, true); got != 700*us {
		t.Errorf("actual wake from cluster-sleep %v, want the DT's exit-latency-us 700µs", got)
	}
	if got := tab.IdleWake(states, 2, false); got != 1500*us {
		t.Errorf("advertised wake from cluster-sleep %v, want 1500µs", got)
	}
	if got := tab.IdleWake(states, 0, true); got != 1*us {
		t.Errorf("WFI has no measured wake time: %v, want its advertised 1µs", got)
	}
	if tab.IdleExitLatency(nil, 2) != 42 || tab.IdleWake(nil, 2, true) != 42 {
		t.Error("IdleExit for a CPU without states")
	}
}

// The costs table lists every parameter with its value and source.
func TestWriteTable(t *testing.T) {
	p := mustFor(t, preset(t, "hikey960"))
	var b bytes.Buffer
	if err := WriteTable(&b, p, "hikey960", 0); err != nil {
		t.Fatal(err)
	}
	for _, q := range All() {
		re := regexp.MustCompile(`(?m)^` + q.Key + `\s+` + regexp.QuoteMeta(p.FormatValue(q.Key)) + `\s+\S+\s+\S`)
		if !re.MatchString(b.String()) {
			t.Errorf("no row for %s", q.Key)
		}
	}
}

// TestLineTransfer: a line another CPU wrote costs nothing from the same
// CPU, its SMT sibling, or when nobody wrote it; line_same_llc_ns within
// the CCX, line_other_llc_ns from another CCX of the socket and
// line_other_node_ns from the other socket (zen3-2s-nps1: CPU 128 is CPU
// 0's sibling, 1 shares its CCX, 16 is on another CCX, 64 on socket 1);
// nothing at all without the cost model.
func TestLineTransfer(t *testing.T) {
	spec, err := topology.Load("zen3-2s-nps1")
	if err != nil {
		t.Fatal(err)
	}
	p, err := For(spec)
	if err != nil {
		t.Fatal(err)
	}
	tab := Compile(p, spec)
	for _, c := range []struct {
		from, to cpumask.CPU
		want     engine.Time
	}{
		{0, 0, 0}, {128, 0, 0}, {cpumask.None, 0, 0},
		{1, 0, 17}, {16, 0, 80}, {64, 0, 190}, {0, 64, 190},
	} {
		if got := tab.LineTransfer(c.from, c.to); got != c.want {
			t.Errorf("LineTransfer(%d, %d) = %d ns, want %d", c.from, c.to, got, c.want)
		}
		if got := None(spec).LineTransfer(c.from, c.to); got != 0 {
			t.Errorf("without the cost model LineTransfer(%d, %d) = %d ns", c.from, c.to, got)
		}
	}
}

// The AF_UNIX costs fitted to bare-metal Zen3 reports are the zen3
// presets' alone: every other preset scales or copies the development
// VM's measurement (milanVM), against which their factors were fitted.
func TestUnixBase(t *testing.T) {
	vm := map[string]float64{}
	for _, e := range milanVM() {
		vm[e.key] = e.v
	}
	for _, e := range zen3(1) {
		if (e.key == "unix_send_ns" || e.key == "unix_recv_ns") && e.v == vm[e.key] {
			t.Errorf("zen3 %s = %v, the VM's value: the bare-metal fit is not in the preset", e.key, e.v)
		}
	}
	for name, factor := range map[string]float64{GenericName: 1, "hikey": hikeyFactor, "hikey960": 1.8, "kunpeng920-96": 1.4 * Kunpeng96Slower, "chromebook-7c": 1.6} {
		p, ok := Defaults(name)
		if !ok {
			t.Fatalf("no preset %s", name)
		}
		if want := roundSig(vm["unix_send_ns"] * factor); float64(p.UnixSend) != want {
			t.Errorf("%s: unix_send_ns %v, want the VM's %v × %g = %v", name, p.UnixSend, vm["unix_send_ns"], factor, want)
		}
		if want := roundSig(vm["unix_recv_ns"] * factor); float64(p.UnixRecv) != want {
			t.Errorf("%s: unix_recv_ns %v, want the VM's %v × %g = %v", name, p.UnixRecv, vm["unix_recv_ns"], factor, want)
		}
	}
}

// A cluster smaller than its LLC is its own distance (Kunpeng 920's four
// cores on one L3 tag, eight such clusters a die); a cluster that is the
// LLC (Zen3's CCX, a HiKey cluster) is not. LineTransfer charges
// line_same_cluster_ns inside the cluster, line_same_llc_ns beyond it,
// and refills from the LLC either way.
func TestSameClusterDistance(t *testing.T) {
	kp := preset(t, "kunpeng920-128")
	p := mustFor(t, kp)
	p.LineSameCluster, p.LineSameLLC = 20, 45
	tab := Compile(p, kp)
	for _, c := range []struct {
		b    cpumask.CPU
		want Distance
		line engine.Time
	}{
		{1, SameCluster, 20}, {3, SameCluster, 20}, // cluster 0 is CPUs 0-3
		{4, SameLLC, 45}, {31, SameLLC, 45}, // the die's other clusters
		{32, OtherNode, 0},
	} {
		if got := DistanceOf(kp, 0, c.b); got != c.want {
			t.Errorf("kunpeng DistanceOf(0, %d) = %v, want %v", c.b, got, c.want)
		}
		if got := tab.Distance(0, c.b); got != c.want {
			t.Errorf("kunpeng Table.Distance(0, %d) = %v, want %v", c.b, got, c.want)
		}
		if c.line != 0 {
			if got := tab.LineTransfer(0, c.b); got != c.line {
				t.Errorf("LineTransfer(0, %d) = %d, want %d", c.b, got, c.line)
			}
		}
	}
	// The same refill from a cluster-mate as from elsewhere in the die.
	if a, b := tab.CacheRefill(1, 0, 1<<20, 0, 0), tab.CacheRefill(4, 0, 1<<20, 0, 0); a != b || a == 0 {
		t.Errorf("CacheRefill from the cluster %d, from the die %d: want equal and non-zero", a, b)
	}
	// Setting line_same_cluster_ns to line_same_llc_ns turns it off.
	p.LineSameCluster = p.LineSameLLC
	if off := Compile(p, kp); off.LineTransfer(0, 1) != off.LineTransfer(0, 4) {
		t.Error("line_same_cluster_ns = line_same_llc_ns still tells the cluster apart")
	}
	for _, name := range []string{"zen3-2s-nps1", "hikey"} {
		s := preset(t, name)
		if len(SubLLCClusters(s)) != 0 {
			t.Errorf("%s: clusters %v counted as inside an LLC", name, SubLLCClusters(s))
		}
		if got := DistanceOf(s, 0, 1); got != SameLLC {
			t.Errorf("%s: DistanceOf(0, 1) = %v, want same-llc", name, got)
		}
	}
}

// TestKunpeng96Slower: the 6-cluster part is the 8-cluster part slowed by
// Kunpeng96Slower in its work and its IPIs, and in nothing else: a line
// between cores and the memory bandwidth are the 8-cluster part's.
func TestKunpeng96Slower(t *testing.T) {
	kp96, ok96 := Defaults("kunpeng920-96")
	kp128, ok128 := Defaults("kunpeng920-128")
	if !ok96 || !ok128 {
		t.Fatal("no kunpeng preset")
	}
	near := func(a, b engine.Time) bool {
		d := float64(a) - float64(b)
		return d < 0.01*float64(b) && -d < 0.01*float64(b)
	}
	for _, c := range []struct {
		name   string
		v96    engine.Time
		v128   engine.Time
		factor float64
	}{
		{"ipi_same_cluster_ns", kp96.IPISameCluster, kp128.IPISameCluster, Kunpeng96Slower},
		{"ipi_same_llc_ns", kp96.IPISameLLC, kp128.IPISameLLC, Kunpeng96Slower},
		{"ipi_other_llc_ns", kp96.IPIOtherLLC, kp128.IPIOtherLLC, Kunpeng96Slower},
		{"ipi_other_node_ns", kp96.IPIOtherNode, kp128.IPIOtherNode, Kunpeng96Slower},
		{"context_switch_ns", kp96.ContextSwitch, kp128.ContextSwitch, Kunpeng96Slower},
		{"pipe_write_ns", kp96.PipeWrite, kp128.PipeWrite, Kunpeng96Slower},
		{"line_same_llc_ns", kp96.LineSameLLC, kp128.LineSameLLC, 1},
		{"line_same_cluster_ns", kp96.LineSameCluster, kp128.LineSameCluster, 1},
	} {
		if want := engine.Time(float64(c.v128) * c.factor); !near(c.v96, want) {
			t.Errorf("%s: kunpeng920-96 %v, want kunpeng920-128's %v × %g = %v", c.name, c.v96, c.v128, c.factor, want)
		}
	}
	if kp96.MemBWCore != kp128.MemBWCore {
		t.Errorf("mem_bw_core_gbps: %v against %v", kp96.MemBWCore, kp128.MemBWCore)
	}
}
