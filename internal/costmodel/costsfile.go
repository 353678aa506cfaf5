package costmodel

import (
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/schedlab/schedlab/internal/fileerr"
	"github.com/schedlab/schedlab/internal/topology"
)

// CostsSpec is a costs section as written: a machine file's costs: (which
// topology keeps raw, topology.CostsSection) or a standalone costs file
// (--costs), parsed and checked against the parameters' names and ranges,
// but not yet applied to any defaults (Params.Apply does that).
type CostsSpec struct {
	// File is the file the settings came from.
	File string
	// Base names the preset whose defaults the settings override ("" for
	// the machine's own: its preset, or the generic default). BaseLine is
	// the line of the base key.
	Base     string
	BaseLine int
	// Settings are the parameters in file order.
	Settings []CostSetting
}

// CostSetting is one "name: value" or "name: {value: V, source: S}" entry.
type CostSetting struct {
	Key    string
	Value  float64
	Source string // "" when the file gives none
	Line   int
}

// LoadCostsFile reads a standalone costs file: a YAML mapping of the same
// keys a machine file's costs: section holds. Every error is a
// *fileerr.Error.
func LoadCostsFile(path string) (*CostsSpec, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseCostsYAML(path, data)
}

// ParseCostsYAML parses a standalone costs file's contents.
func ParseCostsYAML(name string, data []byte) (*CostsSpec, error) {
	root, err := fileerr.ReadYAML(name, data, "costs files")
	if err != nil {
		return nil, err
	}
	if root == nil {
		return &CostsSpec{File: name}, nil
	}
	return ParseCosts(name, root)
}

// MachineCosts parses a machine's costs: section (nil when it has none).
func MachineCosts(spec *topology.MachineSpec) (*CostsSpec, error) {
	if spec.Costs == nil {
		return nil, nil
	}
	return ParseCosts(spec.Costs.File, spec.Costs.Node)
}

// ParseCosts parses a costs mapping read from file: base: PRESET, and
// NAME: NUMBER or NAME: {value: NUMBER, source: TEXT}, each NAME a
// parameter (Lookup) and each value in its range (Check); errors name the
// file and line.
func ParseCosts(file string, n *yaml.Node) (*CostsSpec, error) {
	errf := func(n *yaml.Node, format string, args ...any) error {
		return fileerr.AtNode(file, n, format, args...)
	}
	str := func(n *yaml.Node, what string) (string, error) {
		if n.Kind != yaml.ScalarNode || n.ShortTag() == "!!null" {
			return "", errf(n, "%s must be a string", what)
		}
		return n.Value, nil
	}
	if n.Kind != yaml.MappingNode {
		return nil, errf(n, "costs must be a mapping of parameter names to values (see 'schedlab costs')")
	}
	c := &CostsSpec{File: file}
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			return nil, errf(k, "cost parameter names must be plain names")
		}
		if first, dup := seen[k.Value]; dup {
			return nil, errf(k, "duplicate cost parameter %q (first at line %d)", k.Value, first)
		}
		seen[k.Value] = k.Line
		if k.Value == "base" {
			s, err := str(v, "base")
			if err != nil {
				return nil, err
			}
			c.Base, c.BaseLine = s, k.Line
			continue
		}
		set := CostSetting{Key: k.Value, Line: k.Line}
		valNode := v
		if v.Kind == yaml.MappingNode {
			sub, subKeys := map[string]*yaml.Node{}, map[string]*yaml.Node{}
			for j := 0; j+1 < len(v.Content); j += 2 {
				sk := v.Content[j]
				if sk.Kind != yaml.ScalarNode || sk.Value != "value" && sk.Value != "source" {
					return nil, errf(sk, "unknown key %q in cost parameter %s", sk.Value, k.Value)
				}
				if first := subKeys[sk.Value]; first != nil {
					return nil, errf(sk, "duplicate key %q (first at line %d)", sk.Value, first.Line)
				}
				subKeys[sk.Value], sub[sk.Value] = sk, v.Content[j+1]
			}
			if sub["value"] == nil {
				return nil, errf(v, "cost parameter %s needs a value", k.Value)
			}
			valNode = sub["value"]
			if s := sub["source"]; s != nil {
				var err error
				if set.Source, err = str(s, "source"); err != nil {
					return nil, err
				}
			}
		}
		x, err := number(valNode, k.Value)
		if err != nil {
			return nil, errf(valNode, "%v", err)
		}
		set.Value = x
		if err := Check(set.Key, set.Value); err != nil {
			return nil, errf(k, "%v", err)
		}
		c.Settings = append(c.Settings, set)
	}
	return c, nil
}

// number parses an integer or floating-point scalar; the error says what
// is wrong with it, after what.
func number(n *yaml.Node, what string) (float64, error) {
	if n.Kind != yaml.ScalarNode || (n.ShortTag() != "!!int" && n.ShortTag() != "!!float") {
		return 0, fmt.Errorf("%s must be a number", what)
	}
	s := strings.ReplaceAll(n.Value, "_", "")
	if l := strings.ToLower(s); strings.Contains(l, "inf") || strings.Contains(l, "nan") {
		return 0, fmt.Errorf("%s must be a finite number", what)
	}
	var x float64
	var err error
	if n.ShortTag() == "!!int" {
		var v int64
		v, err = strconv.ParseInt(s, 0, 64)
		x = float64(v)
	} else {
		x, err = strconv.ParseFloat(s, 64)
	}
	if err != nil {
		return 0, fmt.Errorf("%s: %q is not a number schedlab can use", what, n.Value)
	}
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return 0, fmt.Errorf("%s must be a finite number", what)
	}
	return x, nil
}
