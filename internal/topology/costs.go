package topology

import "gopkg.in/yaml.v3"

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
