package costmodel

import (
	"fmt"

	"github.com/schedlab/schedlab/internal/fileerr"
	"github.com/schedlab/schedlab/internal/topology"
)

// For returns the cost parameters of a machine: the defaults of its base
// (the preset the machine is, the base its costs section names, or the
// generic default for "host" and YAML machines), then its costs section.
// A misspelt name or a value out of range in the section is an error at
// its file and line, so every command that loads a machine file to run it
// checks it here.
//
// Which idle-state exit latencies are used is not decided here: the
// machine spec's idle states (topology.MachineSpec.IdleStatesOf) always win;
// Params.IdleExit is only for CPUs that list none (see IdleExitLatency).
func For(spec *topology.MachineSpec) (*Params, error) {
	c, err := MachineCosts(spec)
	if err != nil {
		return nil, err
	}
	base := GenericName
	if spec.Source == "preset" {
		if _, ok := presetTables[spec.Name]; ok {
			base = spec.Name
		}
	}
	if c != nil && c.Base != "" {
		if _, ok := presetTables[c.Base]; !ok {
			return nil, fileerr.Errorf(c.File, c.BaseLine, "unknown costs base %q (one of %v)", c.Base, PresetNames())
		}
		base = c.Base
	}
	p, _ := Defaults(base)
	if err := p.Apply(c); err != nil {
		return nil, err
	}
	return p, nil
}

// Resolve is For followed by a standalone costs file (if costsFile is not
// empty), as the --costs flag gives it. A base in the costs file replaces
// the machine's defaults; the machine's own settings and then the file's
// are applied on top.
func Resolve(spec *topology.MachineSpec, costsFile string) (*Params, error) {
	if costsFile == "" {
		return For(spec)
	}
	c, err := LoadCostsFile(costsFile)
	if err != nil {
		return nil, err
	}
	var p *Params
	if c.Base != "" {
		d, ok := Defaults(c.Base)
		if !ok {
			return nil, fileerr.Errorf(c.File, c.BaseLine, "unknown costs base %q (one of %v)", c.Base, PresetNames())
		}
		p = d
		mc, err := MachineCosts(spec)
		if err != nil {
			return nil, err
		}
		if err := p.Apply(mc); err != nil {
			return nil, err
		}
	} else if p, err = For(spec); err != nil {
		return nil, err
	}
	if err := p.Apply(c); err != nil {
		return nil, err
	}
	return p, nil
}

// Apply sets the parameters a costs section gives. A setting without its
// own source is recorded as coming from the file and line. Errors are
// *fileerr.Error.
func (ps *Params) Apply(c *CostsSpec) error {
	if c == nil {
		return nil
	}
	for _, s := range c.Settings {
		src := s.Source
		if src == "" {
			src = fmt.Sprintf("%s:%d", c.File, s.Line)
		} else {
			src = fmt.Sprintf("%s (%s:%d)", src, c.File, s.Line)
		}
		if err := ps.Set(s.Key, s.Value, src); err != nil {
			return &fileerr.Error{File: c.File, Line: max(1, s.Line), Msg: err.Error()}
		}
	}
	return nil
}
