package fidelity

import (
	"math"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/schedlab/schedlab/internal/fileerr"
)

// The keys of a case file, in the order Marshal writes them.
var (
	topKeys         = []string{"id", "source", "machine", "kernel", "command", "aggregation", "metric", "simulate", "columns", "rows", "fitted", "notes"}
	sourceKeys      = []string{"title", "message_id", "url", "date", "author"}
	machineKeys     = []string{"preset", "file", "config"}
	kernelKeys      = []string{"baseline", "published"}
	aggregationKeys = []string{"runs", "statistic"}
	metricKeys      = []string{"name", "unit", "better"}
	simulateKeys    = []string{"tool", "args", "scale", "why", "cpus", "quick", "features", "sysctls"}
	columnKeys      = []string{"name", "variant", "kernel", "features", "sysctls"}
	rowKeys         = []string{"load", "values", "sd", "noise"}
	fitKeys         = []string{"params", "loads"}
)

// Parse reads a case file's contents and validates it (Validate); file
// names it in errors. Every error is a *fileerr.Error naming the line. Checks
// that need the files beside the case (a machine file) are Load's.
func Parse(file string, data []byte) (*Case, error) {
	c, err := parse(file, data)
	if err != nil {
		return nil, err
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return c, nil
}

// parse reads the YAML into a Case: keys, types and required fields.
func parse(file string, data []byte) (*Case, error) {
	p := &parser{c: &Case{File: file, lines: map[string]int{}}}
	root, err := fileerr.ReadYAML(file, data, "case files")
	if err != nil {
		return nil, err
	}
	if root == nil {
		return nil, fileerr.Errorf(file, 1, "empty case file")
	}
	if err := p.top(root); err != nil {
		return nil, err
	}
	return p.c, nil
}

type parser struct{ c *Case }

func (p *parser) errf(n *yaml.Node, format string, args ...any) error {
	return fileerr.AtNode(p.c.File, n, format, args...)
}

// mapping reads a mapping with the allowed keys, recording each key's line
// under path. Missing required keys are reported at at's line.
func (p *parser) mapping(n *yaml.Node, path, what string, allowed, required []string) (map[string]*yaml.Node, error) {
	if n.Kind != yaml.MappingNode {
		return nil, p.errf(n, "%s must be a mapping (keys: %s)", what, strings.Join(allowed, ", "))
	}
	ok := map[string]bool{}
	for _, k := range allowed {
		ok[k] = true
	}
	vals := map[string]*yaml.Node{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode || !ok[k.Value] {
			return nil, p.errf(k, "unknown key %q in %s (known: %s)", k.Value, what, strings.Join(allowed, ", "))
		}
		if first := vals[k.Value]; first != nil {
			return nil, p.errf(k, "duplicate key %q in %s (first at line %d)", k.Value, what, p.c.lines[join(path, k.Value)])
		}
		if v.Kind == yaml.AliasNode || v.Anchor != "" {
			return nil, p.errf(v, "YAML anchors and aliases are not supported in case files")
		}
		vals[k.Value] = v
		p.c.lines[join(path, k.Value)] = k.Line
	}
	for _, k := range required {
		if vals[k] == nil {
			return nil, p.errf(n, "%s has no %s", what, k)
		}
	}
	return vals, nil
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// str reads a scalar as text (a date or a number written unquoted is text
// too); null is not a string.
func (p *parser) str(n *yaml.Node, what string) (string, error) {
	if n.Kind != yaml.ScalarNode || n.ShortTag() == "!!null" {
		return "", p.errf(n, "%s must be a string", what)
	}
	return n.Value, nil
}

// text reads a required non-empty string.
func (p *parser) text(n *yaml.Node, what string) (string, error) {
	s, err := p.str(n, what)
	if err == nil && strings.TrimSpace(s) == "" {
		err = p.errf(n, "%s is empty", what)
	}
	return s, err
}

// number reads a finite int or float.
func (p *parser) number(n *yaml.Node, what string) (float64, error) {
	if n.Kind == yaml.ScalarNode {
		v := strings.ReplaceAll(n.Value, "_", "")
		switch n.ShortTag() {
		case "!!int":
			if i, err := strconv.ParseInt(v, 0, 64); err == nil {
				return float64(i), nil
			}
		case "!!float":
			if f, err := strconv.ParseFloat(v, 64); err == nil && !math.IsInf(f, 0) && !math.IsNaN(f) {
				return f, nil
			}
		}
	}
	return 0, p.errf(n, "%s must be a number", what)
}

// load reads a row's load: a number or a string, written as the tool's
// argument takes it.
func (p *parser) load(n *yaml.Node, what string) (string, error) {
	if n.Kind != yaml.ScalarNode || n.ShortTag() == "!!null" {
		return "", p.errf(n, `%s must be a number or a string ("" for a table without loads)`, what)
	}
	if strings.ContainsAny(n.Value, "\n\r") {
		return "", p.errf(n, "%s must be one line", what)
	}
	return n.Value, nil
}

func (p *parser) top(root *yaml.Node) error {
	c := p.c
	vals, err := p.mapping(root, "", "the case", topKeys, []string{"id", "source", "machine", "kernel", "command", "aggregation", "metric", "simulate", "columns", "rows"})
	if err != nil {
		return err
	}
	if c.ID, err = p.text(vals["id"], "id"); err != nil {
		return err
	}
	if c.Command, err = p.text(vals["command"], "command"); err != nil {
		return err
	}
	if v := vals["notes"]; v != nil {
		if c.Notes, err = p.str(v, "notes"); err != nil {
			return err
		}
	}
	for _, sec := range []struct {
		key   string
		parse func(*yaml.Node) error
	}{{"source", p.source}, {"machine", p.machine}, {"kernel", p.kernel}, {"aggregation", p.aggregation}, {"metric", p.metric}, {"simulate", p.simulate}} {
		if err := sec.parse(vals[sec.key]); err != nil {
			return err
		}
	}
	if err := p.columns(vals["columns"]); err != nil {
		return err
	}
	if err := p.rows(vals["rows"]); err != nil {
		return err
	}
	if v := vals["fitted"]; v != nil {
		return p.fitted(v)
	}
	return nil
}

// fitted reads the list of fits: [{params: [tcp_send_ns], loads: [1, 2]}].
func (p *parser) fitted(n *yaml.Node) error {
	if n.Kind != yaml.SequenceNode || len(n.Content) == 0 {
		return p.errf(n, "fitted must be a non-empty list: [{params: [tcp_send_ns, tcp_recv_ns], loads: [1, 2]}]")
	}
	for i, e := range n.Content {
		path := join("fitted", strconv.Itoa(i))
		p.c.lines[path] = e.Line
		vals, err := p.mapping(e, path, "a fit", fitKeys, fitKeys)
		if err != nil {
			return err
		}
		var f Fit
		if f.Params, err = p.settings(vals["params"], join(path, "params"), "[tcp_send_ns]"); err != nil {
			return err
		}
		l := vals["loads"]
		if l.Kind != yaml.SequenceNode || len(l.Content) == 0 {
			return p.errf(l, "%s.loads must be a non-empty list of the rows' loads, e.g. [1, 2]", path)
		}
		for j, e := range l.Content {
			load, err := p.load(e, "a fitted load")
			if err != nil {
				return err
			}
			p.c.lines[join(path, "loads."+strconv.Itoa(j))] = e.Line
			f.Loads = append(f.Loads, load)
		}
		p.c.Fitted = append(p.c.Fitted, f)
	}
	return nil
}

func (p *parser) source(n *yaml.Node) error {
	vals, err := p.mapping(n, "source", "source", sourceKeys, []string{"title", "date", "author"})
	if err != nil {
		return err
	}
	s := &p.c.Source
	if s.Title, err = p.text(vals["title"], "source.title"); err != nil {
		return err
	}
	if s.Date, err = p.text(vals["date"], "source.date"); err != nil {
		return err
	}
	if s.Author, err = p.text(vals["author"], "source.author"); err != nil {
		return err
	}
	if v := vals["message_id"]; v != nil {
		if s.MessageID, err = p.text(v, "source.message_id"); err != nil {
			return err
		}
	}
	if v := vals["url"]; v != nil {
		if s.URL, err = p.text(v, "source.url"); err != nil {
			return err
		}
	}
	if s.MessageID == "" && s.URL == "" {
		return p.errf(n, "source has neither message_id nor url: cite where the numbers are")
	}
	return nil
}

func (p *parser) machine(n *yaml.Node) error {
	vals, err := p.mapping(n, "machine", "machine", machineKeys, []string{"config"})
	if err != nil {
		return err
	}
	m := &p.c.Machine
	if v := vals["preset"]; v != nil {
		if m.Preset, err = p.text(v, "machine.preset"); err != nil {
			return err
		}
	}
	if v := vals["file"]; v != nil {
		if m.File, err = p.text(v, "machine.file"); err != nil {
			return err
		}
	}
	m.Config, err = p.text(vals["config"], "machine.config")
	return err
}

func (p *parser) kernel(n *yaml.Node) error {
	vals, err := p.mapping(n, "kernel", "kernel", kernelKeys, kernelKeys)
	if err != nil {
		return err
	}
	k := &p.c.Kernel
	if k.Baseline, err = p.text(vals["baseline"], "kernel.baseline"); err != nil {
		return err
	}
	k.Published, err = p.text(vals["published"], "kernel.published")
	return err
}

func (p *parser) aggregation(n *yaml.Node) error {
	vals, err := p.mapping(n, "aggregation", "aggregation", aggregationKeys, aggregationKeys)
	if err != nil {
		return err
	}
	a := &p.c.Aggregation
	v := vals["runs"]
	if v.Kind != yaml.ScalarNode || v.ShortTag() != "!!int" {
		return p.errf(v, "aggregation.runs must be an integer (0: not stated)")
	}
	runs, err := strconv.ParseInt(strings.ReplaceAll(v.Value, "_", ""), 0, 32)
	if err != nil {
		return p.errf(v, "aggregation.runs must be an integer (0: not stated)")
	}
	a.Runs = int(runs)
	a.Statistic, err = p.text(vals["statistic"], "aggregation.statistic")
	return err
}

func (p *parser) metric(n *yaml.Node) error {
	vals, err := p.mapping(n, "metric", "metric", metricKeys, metricKeys)
	if err != nil {
		return err
	}
	m := &p.c.Metric
	if m.Name, err = p.text(vals["name"], "metric.name"); err != nil {
		return err
	}
	if m.Unit, err = p.text(vals["unit"], "metric.unit"); err != nil {
		return err
	}
	m.Better, err = p.text(vals["better"], "metric.better")
	return err
}

func (p *parser) simulate(n *yaml.Node) error {
	vals, err := p.mapping(n, "simulate", "simulate", simulateKeys, []string{"tool", "args"})
	if err != nil {
		return err
	}
	s := &p.c.Simulate
	if s.Tool, err = p.text(vals["tool"], "simulate.tool"); err != nil {
		return err
	}
	if s.Args, err = p.str(vals["args"], "simulate.args"); err != nil {
		return err
	}
	s.Scale = 1
	if v := vals["scale"]; v != nil {
		if s.Scale, err = p.number(v, "simulate.scale"); err != nil {
			return err
		}
	}
	if v := vals["why"]; v != nil {
		if s.Why, err = p.str(v, "simulate.why"); err != nil {
			return err
		}
	}
	if v := vals["cpus"]; v != nil {
		if s.CPUs, err = p.str(v, "simulate.cpus"); err != nil {
			return err
		}
	}
	if v := vals["quick"]; v != nil {
		if v.Kind != yaml.SequenceNode {
			return p.errf(v, "simulate.quick must be a list of loads, e.g. [1, 4]")
		}
		s.Quick = []string{}
		for i, e := range v.Content {
			load, err := p.load(e, "a quick load")
			if err != nil {
				return err
			}
			p.c.lines[join("simulate.quick", strconv.Itoa(i))] = e.Line
			s.Quick = append(s.Quick, load)
		}
	}
	if s.Features, err = p.settings(vals["features"], "simulate.features", "[NO_TTWU_QUEUE]"); err != nil {
		return err
	}
	s.Sysctls, err = p.settings(vals["sysctls"], "simulate.sysctls", "[migration_cost_ns=100000]")
	return err
}

// settings reads an optional non-empty list of features or sysctls (one
// word each, as `schedlab run --feature/--sysctl` takes them), recording
// each element's line under path; nil when n is nil.
func (p *parser) settings(n *yaml.Node, path, example string) ([]string, error) {
	if n == nil {
		return nil, nil
	}
	if n.Kind != yaml.SequenceNode || len(n.Content) == 0 {
		return nil, p.errf(n, "%s must be a non-empty list, e.g. %s (omit it for none)", path, example)
	}
	var out []string
	for i, e := range n.Content {
		v, err := p.text(e, "an element of "+path)
		if err != nil {
			return nil, err
		}
		if strings.ContainsAny(v, " \t\n\r") {
			return nil, p.errf(e, "%s: %q is not one word (one setting per element, e.g. %s)", path, v, example)
		}
		p.c.lines[join(path, strconv.Itoa(i))] = e.Line
		out = append(out, v)
	}
	return out, nil
}

func (p *parser) columns(n *yaml.Node) error {
	if n.Kind != yaml.SequenceNode || len(n.Content) == 0 {
		return p.errf(n, "columns must be a non-empty list, tip first: [{name: tip}, {name: patched, sysctls: [NAME=VALUE]}]")
	}
	for i, e := range n.Content {
		path := join("columns", strconv.Itoa(i))
		p.c.lines[path] = e.Line
		vals, err := p.mapping(e, path, "a column", columnKeys, []string{"name"})
		if err != nil {
			return err
		}
		var col Column
		if col.Name, err = p.text(vals["name"], "a column's name"); err != nil {
			return err
		}
		if v := vals["variant"]; v != nil {
			if col.Variant, err = p.text(v, "a column's variant"); err != nil {
				return err
			}
		}
		if v := vals["kernel"]; v != nil {
			if col.Kernel, err = p.text(v, "a column's kernel"); err != nil {
				return err
			}
		}
		if col.Features, err = p.settings(vals["features"], join(path, "features"), "[NO_TTWU_QUEUE]"); err != nil {
			return err
		}
		if col.Sysctls, err = p.settings(vals["sysctls"], join(path, "sysctls"), "[migration_cost_ns=100000]"); err != nil {
			return err
		}
		p.c.Columns = append(p.c.Columns, col)
	}
	return nil
}

func (p *parser) rows(n *yaml.Node) error {
	if n.Kind != yaml.SequenceNode || len(n.Content) == 0 {
		return p.errf(n, "rows must be a non-empty list: [{load: 1, values: {tip: 4.31}}]")
	}
	for i, e := range n.Content {
		path := join("rows", strconv.Itoa(i))
		p.c.lines[path] = e.Line
		vals, err := p.mapping(e, path, "a row", rowKeys, []string{"load", "values"})
		if err != nil {
			return err
		}
		var r Row
		if r.Load, err = p.load(vals["load"], "a row's load"); err != nil {
			return err
		}
		if r.Values, err = p.numbers(vals["values"], join(path, "values"), "values"); err != nil {
			return err
		}
		if v := vals["sd"]; v != nil {
			if r.SD, err = p.numbers(v, join(path, "sd"), "sd"); err != nil {
				return err
			}
		}
		if v := vals["noise"]; v != nil {
			if r.Noise, err = p.remarks(v, join(path, "noise")); err != nil {
				return err
			}
		}
		p.c.Rows = append(p.c.Rows, r)
	}
	return nil
}

// numbers reads a mapping of column names to numbers.
func (p *parser) numbers(n *yaml.Node, path, what string) (map[string]float64, error) {
	if n.Kind != yaml.MappingNode {
		return nil, p.errf(n, "%s must map column names to numbers, e.g. {tip: 4.31}", what)
	}
	out := map[string]float64{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode || k.ShortTag() == "!!null" {
			return nil, p.errf(k, "%s: keys must be column names", what)
		}
		if _, dup := out[k.Value]; dup {
			return nil, p.errf(k, "%s: column %q twice", what, k.Value)
		}
		x, err := p.number(v, what+" of "+k.Value)
		if err != nil {
			return nil, err
		}
		out[k.Value] = x
		p.c.lines[join(path, k.Value)] = k.Line
	}
	return out, nil
}

// remarks reads a mapping of column names to non-empty text (a row's
// noise).
func (p *parser) remarks(n *yaml.Node, path string) (map[string]string, error) {
	if n.Kind != yaml.MappingNode || len(n.Content) == 0 {
		return nil, p.errf(n, "noise must map patched column names to what the source says of them, e.g. {sis_node: \"the author calls it run-to-run variation\"}")
	}
	out := map[string]string{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode || k.ShortTag() == "!!null" {
			return nil, p.errf(k, "noise: keys must be column names")
		}
		if _, dup := out[k.Value]; dup {
			return nil, p.errf(k, "noise: column %q twice", k.Value)
		}
		s, err := p.text(v, "noise of "+k.Value)
		if err != nil {
			return nil, err
		}
		out[k.Value] = s
		p.c.lines[join(path, k.Value)] = k.Line
	}
	return out, nil
}
