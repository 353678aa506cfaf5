package cli

import (
	"strconv"

	"bytes"
	"gopkg.in/yaml.v3"
	"io"

	"github.com/schedlab/schedlab/internal/costmodel"
	"github.com/schedlab/schedlab/internal/topology"
)

// writeMachineYAML writes spec as a machine file that loads back as the
// same machine (machine show --yaml): topology.WriteYAML's topology, and a
// costs section holding every cost-model parameter of the machine with its
// value and source, on top of base: the defaults they came from. Every
// value is explicit, so a user editing the file sees what each one is; the
// base only gives parameters that a later schedlab adds the machine's
// defaults rather than the generic ones.
func writeMachineYAML(w io.Writer, spec *topology.MachineSpec) error {
	p, err := costmodel.For(spec)
	if err != nil {
		return err
	}
	out := spec.Clone()
	out.Costs = costsSection(p)
	var b bytes.Buffer
	b.WriteString("# Written by 'schedlab machine show --yaml' (docs/machines.md). Loading it gives\n" +
		"# the same CPUs, sched domains, idle states and cost parameters; edit any value.\n")
	if err := topology.WriteYAML(&b, out); err != nil {
		return err
	}
	_, err = w.Write(b.Bytes())
	return err
}

// costsSection is p as a machine file's costs: section: base p's defaults,
// then every parameter in table order with its value and source.
func costsSection(p *costmodel.Params) *topology.CostsSection {
	str := func(v string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: v} }
	m := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	m.Content = append(m.Content, str("base"), str(p.Name))
	for _, q := range costmodel.All() {
		v := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Style: yaml.FlowStyle, Content: []*yaml.Node{
			str("value"), {Kind: yaml.ScalarNode, Value: strconv.FormatFloat(p.Get(q.Key), 'g', -1, 64)},
			str("source"), str(p.Source(q.Key)),
		}}
		m.Content = append(m.Content, str(q.Key), v)
	}
	return &topology.CostsSection{Node: m}
}
