package topology

import (
	"errors"
	"strings"
	"testing"
)

// The costs: section is parsed into plain settings with their lines; the
// names are the cost model's business (CostKeyCheck, unset here).
func TestCostsSection(t *testing.T) {
	src := "name: box\nsockets: 1\ncores_per_llc: 2\ncosts:\n  base: hikey\n  context_switch_ns: 1_500\n  smt_factor: {value: 0.5, source: mine}\n"
	s, err := ParseYAML("box.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	c := s.Costs
	if c == nil || c.File != "box.yaml" || c.Base != "hikey" || c.BaseLine != 5 || len(c.Settings) != 2 {
		t.Fatalf("costs %+v", c)
	}
	if got := c.Settings[0]; got != (CostSetting{Key: "context_switch_ns", Value: 1500, Line: 6}) {
		t.Errorf("setting 0: %+v", got)
	}
	if got := c.Settings[1]; got != (CostSetting{Key: "smt_factor", Value: 0.5, Source: "mine", Line: 7}) {
		t.Errorf("setting 1: %+v", got)
	}
	d := s.Clone()
	d.Costs.Settings[0].Value = 1
	if s.Costs.Settings[0].Value != 1500 {
		t.Error("Clone shares the costs")
	}
	// A checker, when one is registered, rejects names at their line.
	CostKeyCheck = func(key string, v float64) error {
		if key != "smt_factor" {
			return errors.New("unknown " + key)
		}
		return nil
	}
	defer func() { CostKeyCheck = nil }()
	if _, err := ParseYAML("box.yaml", []byte(src)); err == nil || err.Error() != "box.yaml:6: unknown context_switch_ns" {
		t.Errorf("checker: %v", err)
	}
}

func TestCostsFileErrors(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{"a: b\n", "c.yaml:1: a must be a number"},
		{"- 1\n", "c.yaml:1: costs must be a mapping"},
		{"a: .nan\n", "c.yaml:1: a must be a finite number"},
		{"a: {source: x}\n", "c.yaml:1: cost parameter a needs a value"},
		{"a: 1\nbase: [x]\n", "c.yaml:2: base must be a string"},
		{"a: &x 1\nb: *x\n", "c.yaml:2: YAML aliases"},
		{"a: [1\n", "c.yaml:2: did not find expected ',' or ']'"},
	} {
		_, err := ParseCostsYAML("c.yaml", []byte(tc.src))
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
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
	f.Add([]byte("a: 0x10\nb: 1e3\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := ParseCostsYAML("f.yaml", data)
		if err != nil {
			var fe *FileError
			if !errors.As(err, &fe) || fe.Line < 1 {
				t.Fatalf("error without a line: %v", err)
			}
			return
		}
		for _, s := range c.Settings {
			if s.Line < 1 {
				t.Fatalf("setting without a line: %+v", s)
			}
		}
	})
}
