package topology

import (
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// CostsSection is a machine file's costs: section as read. Package
// costmodel interprets it (costmodel.MachineCosts): the parameter names,
// units and checks are the cost model's, and keeping them out of this
// package keeps the dependency one way (costmodel imports topology).
type CostsSection struct {
	// File is the machine file, for costmodel's errors.
	File string
	// Node is the section's value (a mapping, if the file is right).
	Node *yaml.Node
}

// Clone returns a deep copy (nil for nil).
func (c *CostsSection) Clone() *CostsSection {
	if c == nil {
		return nil
	}
	return &CostsSection{File: c.File, Node: cloneNode(c.Node)}
}

func cloneNode(n *yaml.Node) *yaml.Node {
	if n == nil {
		return nil
	}
	c := *n
	c.Content = make([]*yaml.Node, len(n.Content))
	for i, k := range n.Content {
		c.Content[i] = cloneNode(k)
	}
	c.Alias = cloneNode(n.Alias)
	return &c
}

// ReadYAML reads a YAML document for the file name and returns its root
// node (nil when the document is empty), rejecting aliases. Syntax errors
// are *FileErrors with the line yaml.v3 means. Package costmodel reads
// standalone costs files with it.
func ReadYAML(name string, data []byte) (*yaml.Node, error) {
	p := &yparser{file: name, keys: map[string]*yaml.Node{}, ranges: map[string][]yrange{}}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		msg := strings.TrimSpace(err.Error())
		if m := yamlLineRE.FindStringSubmatch(msg); m != nil {
			line, _ := strconv.Atoi(m[1])
			if yamlParserErrors[m[2]] {
				line++
			}
			return nil, &FileError{File: name, Line: max(1, line), Msg: m[2]}
		}
		return nil, &FileError{File: name, Line: 1, Msg: strings.TrimPrefix(msg, "yaml: ")}
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		return nil, nil
	}
	root := doc.Content[0]
	if err := p.noAlias(root); err != nil {
		return nil, err
	}
	return root, nil
}
