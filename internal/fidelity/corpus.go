package fidelity

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/schedlab/schedlab/internal/fileerr"
	"github.com/schedlab/schedlab/internal/topology"
)

// Corpus is the case files of a directory, validated, with the machine
// files they name.
type Corpus struct {
	// Dir is how the directory is named in errors ("fidelity/cases").
	Dir   string
	Cases []*Case // sorted by ID
	// Machines are the machine files the cases name, by file name.
	Machines map[string]*MachineFile

	// spreads are the tip spreads by spreadKey (TipSpread), computed by
	// Load.
	spreads map[string]TipSpread
}

// MachineFile is a machine file beside the cases.
type MachineFile struct {
	Name string // the file name ("milan-nps2.yaml")
	Data []byte
	Spec *topology.MachineSpec
	// Hash is the SHA-256 of Data: a run's identity includes it, so an
	// edited machine file is never mistaken for the old one.
	Hash string
}

// Load reads every .yaml and .yml file at the top of fsys: a file that a
// case names as machine.file is a machine file, every other one a case.
// dir names the directory in errors. Nothing is run; the first mistake in
// any file is returned as a *fileerr.Error, naming the file and line.
func Load(fsys fs.FS, dir string) (*Corpus, error) {
	ents, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return nil, fmt.Errorf("%s: %v", dir, err)
	}
	display := func(name string) string { return path.Join(dir, name) }
	type file struct {
		name string
		data []byte
	}
	var files []file
	for _, e := range ents {
		n := e.Name()
		if e.IsDir() || strings.HasPrefix(n, ".") || !(strings.HasSuffix(n, ".yaml") || strings.HasSuffix(n, ".yml")) {
			continue
		}
		data, err := fs.ReadFile(fsys, n)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", display(n), err)
		}
		files = append(files, file{n, data})
	}
	// Which files are machine files: those a case names. A case is a
	// mapping with an id; its machine.file is read from the YAML before
	// the case is parsed, so a machine file is never parsed as a case.
	machines := map[string]bool{}
	for _, f := range files {
		if m := machineFileOf(f.data); m != "" {
			machines[m] = true
		}
	}
	c := &Corpus{Dir: dir, Machines: map[string]*MachineFile{}}
	byID := map[string]*Case{}
	for _, f := range files {
		if machines[f.name] {
			continue
		}
		cs, err := Parse(display(f.name), f.data)
		if err != nil {
			var fe *fileerr.Error
			if errors.As(err, &fe) && looksLikeMachine(f.data) {
				fe.Msg += " (is this a machine file? no case names it as machine.file)"
			}
			return nil, err
		}
		if prev := byID[cs.ID]; prev != nil {
			return nil, cs.errAt("id", "id %q is also %s's", cs.ID, prev.File)
		}
		byID[cs.ID] = cs
		c.Cases = append(c.Cases, cs)
	}
	sort.Slice(c.Cases, func(i, j int) bool { return c.Cases[i].ID < c.Cases[j].ID })
	for _, cs := range c.Cases {
		name := cs.Machine.File
		if name == "" {
			continue
		}
		mf := c.Machines[name]
		if mf == nil {
			data, err := fs.ReadFile(fsys, name)
			if errors.Is(err, fs.ErrNotExist) {
				return nil, cs.errAt("machine.file", "machine.file %s: no such file beside the case in %s", name, dir)
			}
			if err != nil {
				return nil, cs.errAt("machine.file", "machine.file %s: %v", name, err)
			}
			spec, err := topology.ParseYAML(display(name), data)
			if err != nil {
				return nil, err
			}
			sum := sha256.Sum256(data)
			mf = &MachineFile{Name: name, Data: data, Spec: spec, Hash: hex.EncodeToString(sum[:])}
			c.Machines[name] = mf
		}
		if err := cs.CheckCPUs(mf.Spec); err != nil {
			return nil, err
		}
	}
	c.spreads = c.tipSpreads()
	return c, nil
}

// machineFileOf returns the machine.file a case file names ("" if the data
// is not a case naming one).
func machineFileOf(data []byte) string {
	var doc yaml.Node
	if yaml.Unmarshal(data, &doc) != nil || len(doc.Content) == 0 {
		return ""
	}
	root := doc.Content[0]
	if lookup(root, "id") == nil {
		return ""
	}
	f := lookup(lookup(root, "machine"), "file")
	if f == nil || f.Kind != yaml.ScalarNode {
		return ""
	}
	return f.Value
}

// looksLikeMachine reports whether data is a mapping with a machine file's
// keys rather than a case's.
func looksLikeMachine(data []byte) bool {
	var doc yaml.Node
	if yaml.Unmarshal(data, &doc) != nil || len(doc.Content) == 0 {
		return false
	}
	root := doc.Content[0]
	return lookup(root, "id") == nil && (lookup(root, "cpus") != nil || lookup(root, "sockets") != nil)
}

func lookup(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

// Select returns the cases whose id matches the glob (path.Match); "" is
// every case.
func (c *Corpus) Select(glob string) ([]*Case, error) {
	if glob == "" {
		return c.Cases, nil
	}
	if _, err := path.Match(glob, ""); err != nil {
		return nil, fmt.Errorf("--case %q: %v", glob, err)
	}
	var out []*Case
	for _, cs := range c.Cases {
		if ok, _ := path.Match(glob, cs.ID); ok {
			out = append(out, cs)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("--case %q: no case of %s matches (%d cases)", glob, c.Dir, len(c.Cases))
	}
	return out, nil
}
