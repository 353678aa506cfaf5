package costmodel

import (
	"errors"
	"strings"
	"testing"

	"github.com/schedlab/schedlab/internal/fileerr"
	"github.com/schedlab/schedlab/internal/topology"
)

// A costs section's settings keep their lines and sources.
func TestParseCosts(t *testing.T) {
	src := "name: box\nsockets: 1\ncores_per_llc: 2\ncosts:\n  base: hikey\n  context_switch_ns: 1_500\n  smt_factor: {value: 0.5, source: mine}\n"
	s, err := topology.ParseYAML("box.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	c, err := MachineCosts(s)
	if err != nil {
		t.Fatal(err)
	}
	if c == nil || c.File != "box.yaml" || c.Base != "hikey" || c.BaseLine != 5 || len(c.Settings) != 2 {
		t.Fatalf("costs %+v", c)
	}
	if got := c.Settings[0]; got != (CostSetting{Key: "context_switch_ns", Value: 1500, Line: 6}) {
		t.Errorf("setting 0: %+v", got)
	}
	if got := c.Settings[1]; got != (CostSetting{Key: "smt_factor", Value: 0.5, Source: "mine", Line: 7}) {
		t.Errorf("setting 1: %+v", got)
	}
}

func TestCostsFileErrors(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{"syscall_ns: b\n", "c.yaml:1: syscall_ns must be a number"},
		{"- 1\n", "c.yaml:1: costs must be a mapping"},
		{"syscall_ns: .nan\n", "c.yaml:1: syscall_ns must be a finite number"},
		{"syscall_ns: {source: x}\n", "c.yaml:1: cost parameter syscall_ns needs a value"},
		{"syscall_ns: {value: 1, value: 2}\n", `c.yaml:1: duplicate key "value" (first at line 1)`},
		{"syscall_ns: 1\nbase: [x]\n", "c.yaml:2: base must be a string"},
		{"syscall_ns: &x 1\nclock_ns: *x\n", "c.yaml:2: YAML aliases"},
		{"syscall_ns: [1\n", "c.yaml:2: did not find expected ',' or ']'"},
		{"# a\nsyscal_ns: 1\n", `c.yaml:2: unknown cost parameter "syscal_ns"`},
		{"smt_factor: 2\n", "c.yaml:1: smt_factor must be in 0.05..1 ×, not 2"},
	} {
		_, err := ParseCostsYAML("c.yaml", []byte(tc.src))
		var fe *fileerr.Error
		if !errors.As(err, &fe) || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%q: got %v, want %s", tc.src, err, tc.want)
		}
	}
	c, err := ParseCostsYAML("c.yaml", nil)
	if err != nil || len(c.Settings) != 0 {
		t.Errorf("empty file: %v %+v", err, c)
	}
}

func FuzzParseCostsYAML(f *testing.F) {
	f.Add([]byte("base: zen3-2s-nps1\nsyscall_ns: 100\nsmt_factor: {value: 0.6, source: x}\n"))
	f.Add([]byte("syscall_ns: 0x10\nfork_ns: 1e3\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := ParseCostsYAML("f.yaml", data)
		if err != nil {
			var fe *fileerr.Error
			if !errors.As(err, &fe) || fe.Line < 1 {
				t.Fatalf("error without a line: %v", err)
			}
			return
		}
		for _, s := range c.Settings {
			if s.Line < 1 {
				t.Fatalf("setting without a line: %+v", s)
			}
			if err := Check(s.Key, s.Value); err != nil {
				t.Fatalf("a setting that does not check: %v", err)
			}
		}
	})
}
