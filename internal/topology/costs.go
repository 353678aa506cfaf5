package topology

import (
	"math"
	"os"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// CostsSpec is the costs: section of a machine file (or a standalone costs
// file), parsed into plain values but not interpreted: the parameter names,
// units and defaults belong to package costmodel, which applies a CostsSpec
// on top of a preset's defaults. Keeping the names out of this package keeps
// the dependency one way (costmodel imports topology).
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

// CostKeyCheck, when set, checks one cost setting's name and value as the
// file is read, so that a machine file with a misspelt cost name is
// rejected at load time with its line. Package costmodel sets it in its
// init; without it the names are checked when costmodel applies the section.
var CostKeyCheck func(key string, value float64) error

// Clone returns a deep copy (nil for nil).
func (c *CostsSpec) Clone() *CostsSpec {
	if c == nil {
		return nil
	}
	d := *c
	d.Settings = append([]CostSetting(nil), c.Settings...)
	return &d
}

// LoadCostsFile reads a standalone costs file: a YAML mapping of the same
// keys a machine file's costs: section holds. Every error is a *FileError.
func LoadCostsFile(path string) (*CostsSpec, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseCostsYAML(path, data)
}

// ParseCostsYAML parses a standalone costs file's contents.
func ParseCostsYAML(name string, data []byte) (*CostsSpec, error) {
	p := &yparser{file: name, keys: map[string]*yaml.Node{}, ranges: map[string][]yrange{}}
	root, err := p.document(data)
	if err != nil {
		return nil, err
	}
	if root == nil {
		return &CostsSpec{File: name}, nil
	}
	return p.costs(root)
}

// document unmarshals data and returns its root node (nil when empty),
// rejecting aliases; errors carry the file and line.
func (p *yparser) document(data []byte) (*yaml.Node, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		msg := strings.TrimSpace(err.Error())
		if m := yamlLineRE.FindStringSubmatch(msg); m != nil {
			line, _ := strconv.Atoi(m[1])
			if yamlParserErrors[m[2]] {
				line++
			}
			return nil, &FileError{File: p.file, Line: max(1, line), Msg: m[2]}
		}
		return nil, &FileError{File: p.file, Line: 1, Msg: strings.TrimPrefix(msg, "yaml: ")}
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		return nil, nil
	}
	root := doc.Content[0]
	p.root = root
	if err := p.noAlias(root); err != nil {
		return nil, err
	}
	return root, nil
}

// costs parses a costs mapping: base: PRESET, and NAME: NUMBER or
// NAME: {value: NUMBER, source: TEXT}.
func (p *yparser) costs(n *yaml.Node) (*CostsSpec, error) {
	if n.Kind != yaml.MappingNode {
		return nil, p.errf(n, "costs must be a mapping of parameter names to values (see 'schedlab costs')")
	}
	c := &CostsSpec{File: p.file}
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			return nil, p.errf(k, "cost parameter names must be plain names")
		}
		if first, dup := seen[k.Value]; dup {
			return nil, p.errf(k, "duplicate cost parameter %q (first at line %d)", k.Value, first)
		}
		seen[k.Value] = k.Line
		if k.Value == "base" {
			s, err := p.str(v, "base")
			if err != nil {
				return nil, err
			}
			c.Base, c.BaseLine = s, k.Line
			continue
		}
		set := CostSetting{Key: k.Value, Line: k.Line}
		valNode := v
		if v.Kind == yaml.MappingNode {
			vals, _, err := p.mapping(v, "cost parameter "+k.Value, []string{"value", "source"})
			if err != nil {
				return nil, err
			}
			if vals["value"] == nil {
				return nil, p.errf(v, "cost parameter %s needs a value", k.Value)
			}
			valNode = vals["value"]
			if s := vals["source"]; s != nil {
				if set.Source, err = p.str(s, "source"); err != nil {
					return nil, err
				}
			}
		}
		x, err := p.number(valNode, k.Value)
		if err != nil {
			return nil, err
		}
		set.Value = x
		if CostKeyCheck != nil {
			if err := CostKeyCheck(set.Key, set.Value); err != nil {
				return nil, p.errf(k, "%v", err)
			}
		}
		c.Settings = append(c.Settings, set)
	}
	return c, nil
}

// number parses an integer or floating-point scalar.
func (p *yparser) number(n *yaml.Node, what string) (float64, error) {
	if n.Kind != yaml.ScalarNode || (n.ShortTag() != "!!int" && n.ShortTag() != "!!float") {
		return 0, p.errf(n, "%s must be a number", what)
	}
	s := strings.ReplaceAll(n.Value, "_", "")
	if l := strings.ToLower(s); strings.Contains(l, "inf") || strings.Contains(l, "nan") {
		return 0, p.errf(n, "%s must be a finite number", what)
	}
	var x float64
	if n.ShortTag() == "!!int" {
		v, err := strconv.ParseInt(s, 0, 64)
		if err != nil {
			return 0, p.errf(n, "%s: %q is not a number schedlab can use", what, n.Value)
		}
		x = float64(v)
	} else {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return 0, p.errf(n, "%s: %q is not a number schedlab can use", what, n.Value)
		}
		x = v
	}
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return 0, p.errf(n, "%s must be a finite number", what)
	}
	return x, nil
}
