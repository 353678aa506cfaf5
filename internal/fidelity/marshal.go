package fidelity

import (
	"strconv"

	"gopkg.in/yaml.v3"
)

// Marshal writes the case back as a case file that Parse reads into the
// same case: the keys in the order of fidelity/README.md, every string
// double-quoted. Comments are not kept.
func (c *Case) Marshal() []byte {
	root := mapNode()
	add(root, "id", str(c.ID))
	src := mapNode()
	add(src, "title", str(c.Source.Title))
	if c.Source.MessageID != "" {
		add(src, "message_id", str(c.Source.MessageID))
	}
	if c.Source.URL != "" {
		add(src, "url", str(c.Source.URL))
	}
	add(src, "date", str(c.Source.Date))
	add(src, "author", str(c.Source.Author))
	add(root, "source", src)
	m := mapNode()
	if c.Machine.Preset != "" {
		add(m, "preset", str(c.Machine.Preset))
	}
	if c.Machine.File != "" {
		add(m, "file", str(c.Machine.File))
	}
	add(m, "config", str(c.Machine.Config))
	add(root, "machine", m)
	k := mapNode()
	add(k, "baseline", str(c.Kernel.Baseline))
	add(k, "published", str(c.Kernel.Published))
	add(root, "kernel", k)
	add(root, "command", str(c.Command))
	a := mapNode()
	add(a, "runs", num(float64(c.Aggregation.Runs)))
	add(a, "statistic", str(c.Aggregation.Statistic))
	add(root, "aggregation", a)
	mt := mapNode()
	add(mt, "name", str(c.Metric.Name))
	add(mt, "unit", str(c.Metric.Unit))
	add(mt, "better", str(c.Metric.Better))
	add(root, "metric", mt)
	s := mapNode()
	add(s, "tool", str(c.Simulate.Tool))
	add(s, "args", str(c.Simulate.Args))
	add(s, "scale", num(c.Simulate.Scale))
	if c.Simulate.Why != "" {
		add(s, "why", str(c.Simulate.Why))
	}
	if c.Simulate.CPUs != "" {
		add(s, "cpus", str(c.Simulate.CPUs))
	}
	if c.Simulate.Quick != nil {
		q := &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle}
		for _, l := range c.Simulate.Quick {
			q.Content = append(q.Content, str(l))
		}
		add(s, "quick", q)
	}
	addList(s, "features", c.Simulate.Features)
	addList(s, "sysctls", c.Simulate.Sysctls)
	add(root, "simulate", s)
	cols := &yaml.Node{Kind: yaml.SequenceNode}
	for _, col := range c.Columns {
		n := mapNode()
		add(n, "name", str(col.Name))
		if col.Variant != "" {
			add(n, "variant", str(col.Variant))
		}
		if col.Kernel != "" {
			add(n, "kernel", str(col.Kernel))
		}
		addList(n, "features", col.Features)
		addList(n, "sysctls", col.Sysctls)
		cols.Content = append(cols.Content, n)
	}
	add(root, "columns", cols)
	rows := &yaml.Node{Kind: yaml.SequenceNode}
	for _, r := range c.Rows {
		n := mapNode()
		add(n, "load", str(r.Load))
		add(n, "values", c.numbers(r.Values))
		if r.SD != nil {
			add(n, "sd", c.numbers(r.SD))
		}
		if r.Noise != nil {
			nn := mapNode()
			for _, k := range sortedKeys(r.Noise) {
				add(nn, k, str(r.Noise[k]))
			}
			add(n, "noise", nn)
		}
		rows.Content = append(rows.Content, n)
	}
	add(root, "rows", rows)
	if len(c.Fitted) > 0 {
		fits := &yaml.Node{Kind: yaml.SequenceNode}
		for _, f := range c.Fitted {
			n := mapNode()
			addList(n, "params", f.Params)
			addList(n, "loads", f.Loads)
			fits.Content = append(fits.Content, n)
		}
		add(root, "fitted", fits)
	}
	if c.Notes != "" {
		add(root, "notes", str(c.Notes))
	}
	b, err := yaml.Marshal(root)
	if err != nil {
		panic("fidelity: " + err.Error())
	}
	return b
}

// numbers writes a row's mapping in the order of the columns (then any
// other key, sorted: a case that did not validate).
func (c *Case) numbers(m map[string]float64) *yaml.Node {
	n := &yaml.Node{Kind: yaml.MappingNode, Style: yaml.FlowStyle}
	done := map[string]bool{}
	for _, col := range c.Columns {
		if v, ok := m[col.Name]; ok {
			add(n, col.Name, num(v))
			done[col.Name] = true
		}
	}
	for _, k := range sortedKeys(m) {
		if !done[k] {
			add(n, k, num(m[k]))
		}
	}
	return n
}

// addList adds a flow list of strings, unless it is empty.
func addList(m *yaml.Node, key string, vals []string) {
	if len(vals) == 0 {
		return
	}
	q := &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle}
	for _, v := range vals {
		q.Content = append(q.Content, str(v))
	}
	add(m, key, q)
}

func mapNode() *yaml.Node { return &yaml.Node{Kind: yaml.MappingNode} }

func add(m *yaml.Node, key string, v *yaml.Node) {
	m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key}, v)
}

func str(s string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s, Style: yaml.DoubleQuotedStyle}
}

func num(f float64) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Value: strconv.FormatFloat(f, 'g', -1, 64)}
}
