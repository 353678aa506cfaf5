package topology

import (
	"bytes"
	"encoding/json"
	"github.com/schedlab/schedlab/internal/kernels"
	"path/filepath"
	"strings"
	"testing"

	"github.com/schedlab/schedlab/internal/cpumask"
	"github.com/schedlab/schedlab/internal/golden"
)

// The text and JSON formats are pinned byte for byte. The tree layout
// follows topology.c:sched_domain_debug_one.
func TestFormatGolden(t *testing.T) {
	for _, tc := range []struct {
		file, machine, kernel string
		cpus                  []cpumask.CPU
		json                  bool
	}{
		{"hikey.txt", "hikey", kernels.V619, nil, false},
		{"hikey960-v6.0.txt", "hikey960", kernels.V60, nil, false},
		{"zen3-2s-nps4-cpu0.txt", "zen3-2s-nps4", kernels.V619, []cpumask.CPU{0}, false},
		{"kunpeng920-96-v6.0-cpu0,24.txt", "kunpeng920-96", kernels.V60, []cpumask.CPU{0, 24}, false},
		{"kunpeng920-96-v5.12-cpu0,24.txt", "kunpeng920-96", kernels.V512, []cpumask.CPU{0, 24}, false},
		{"chromebook-7c.json", "chromebook-7c", kernels.V619, nil, true},
	} {
		t.Run(tc.file, func(t *testing.T) {
			topo := mustBuild(t, mustPreset(t, tc.machine), tc.kernel)
			cpus := cpumask.Full(topo.NrCPUs)
			if tc.cpus != nil {
				cpus = cpumask.Of(topo.NrCPUs, tc.cpus...)
			}
			var b bytes.Buffer
			var err error
			if tc.json {
				err = FormatJSONCPUs(&b, topo, cpus)
			} else {
				err = FormatTextCPUs(&b, topo, cpus)
			}
			if err != nil {
				t.Fatal(err)
			}
			golden.Check(t, filepath.Join("testdata", "golden", tc.file), b.Bytes())
		})
	}
}

func TestFormatText(t *testing.T) {
	topo := mustBuild(t, mustPreset(t, "zen3-2s-nps1"), kernels.V619)
	var b strings.Builder
	if err := FormatText(&b, topo); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"CPU0 attaching sched-domain(s):\n domain-0: span=0,128 level=SMT\n  groups: 0:{ span=0 }, 128:{ span=128 }\n",
		"  domain-1: span=0-7,128-135 level=MC\n   groups: 0:{ span=0,128 cap=2048 }, 1:{ span=1,129 cap=2048 },",
		"   domain-2: span=0-63,128-191 level=PKG\n",
		"    domain-3: span=0-255 level=NUMA\n     groups: 0:{ span=0-63,128-191 cap=131072 }, 64:{ span=64-127,192-255 cap=131072 }\n",
		"imb_numa_nr=8",
		"CPU255 attaching sched-domain(s):\n domain-0: span=127,255 level=SMT\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("text output lacks %q", want)
		}
	}
	if n := strings.Count(out, "attaching sched-domain"); n != 256 {
		t.Errorf("%d trees, want 256", n)
	}
}

func TestFormatJSON(t *testing.T) {
	topo := mustBuild(t, mustPreset(t, "zen3-2s-nps4"), kernels.V60)
	var b bytes.Buffer
	if err := FormatJSONCPUs(&b, topo, cpumask.Of(topo.NrCPUs, 0, 255)); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Machine string `json:"machine"`
		Kernel  string `json:"kernel"`
		NrCPUs  int    `json:"nr_cpus"`
		CPUs    []struct {
			CPU     int `json:"cpu"`
			Domains []struct {
				Name      string   `json:"name"`
				Span      string   `json:"span"`
				Flags     []string `json:"flags"`
				Groups    []string `json:"groups"`
				ImbNumaNr int      `json:"imb_numa_nr"`
				Pct       int      `json:"imbalance_pct"`
			} `json:"domains"`
		} `json:"cpus"`
	}
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Machine != "zen3-2s-nps4" || doc.Kernel != kernels.V60 || doc.NrCPUs != 256 || len(doc.CPUs) != 2 || doc.CPUs[1].CPU != 255 {
		t.Fatalf("header: %+v", doc)
	}
	d := doc.CPUs[0].Domains
	if len(d) != 5 || d[1].Span != "0-7,128-135" || d[2].Name != "NODE" || d[4].ImbNumaNr != 4 || d[0].Pct != 110 {
		t.Fatalf("domains: %+v", d)
	}
	if strings.Join(d[1].Flags, "|") != "SD_BALANCE_NEWIDLE|SD_BALANCE_EXEC|SD_BALANCE_FORK|SD_WAKE_AFFINE|SD_SHARE_PKG_RESOURCES|SD_PREFER_SIBLING" {
		t.Errorf("MC flags %v", d[1].Flags)
	}
	if len(d[0].Groups) != 2 || d[0].Groups[0] != "0" || d[0].Groups[1] != "128" {
		t.Errorf("SMT groups %v", d[0].Groups)
	}
	// Deterministic: the same document twice.
	var b2 bytes.Buffer
	FormatJSONCPUs(&b2, topo, cpumask.Of(topo.NrCPUs, 0, 255))
	if !bytes.Equal(b.Bytes(), b2.Bytes()) {
		t.Errorf("JSON output is not deterministic")
	}
}
