package topology

import "testing"

// The costs: section is kept as read, with its file; what the names mean
// is the cost model's business (costmodel.MachineCosts).
func TestCostsSection(t *testing.T) {
	src := "name: box\nsockets: 1\ncores_per_llc: 2\ncosts:\n  base: hikey\n  context_swich_ns: 1_500\n"
	s, err := ParseYAML("box.yaml", []byte(src))
	if err != nil {
		t.Fatalf("a misspelt cost name is not topology's to reject: %v", err)
	}
	c := s.Costs
	if c == nil || c.File != "box.yaml" || c.Node == nil || c.Node.Line != 5 || len(c.Node.Content) != 4 {
		t.Fatalf("costs %+v", c)
	}
	d := s.Clone()
	d.Costs.Node.Content[3].Value = "1"
	if s.Costs.Node.Content[3].Value != "1_500" {
		t.Error("Clone shares the costs section")
	}
	s2, _ := ParseYAML("box.yaml", []byte("name: box\nsockets: 1\ncores_per_llc: 2\n"))
	if s2.Costs != nil || s2.Clone().Costs != nil {
		t.Error("a machine without costs has a costs section")
	}
}
