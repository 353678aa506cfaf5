package experiment

import (
	"embed"
	"io/fs"
	"os"
	"sort"
	"strings"
)

// builtinFS holds the built-in experiments, one per patch of
// shared/reference/patches.md. They name preset machines only (confined
// with cpus: where the evaluation pinned the benchmark), so that the file
// `schedlab experiments show` prints runs as it is, wherever it is saved.
//
//go:embed builtin/*.yaml
var builtinFS embed.FS

// Builtins lists the built-in experiments by name.
func Builtins() []*Spec {
	ents, err := fs.ReadDir(builtinFS, "builtin")
	if err != nil {
		panic("experiment: " + err.Error())
	}
	var out []*Spec
	for _, e := range ents {
		data, err := builtinFS.ReadFile("builtin/" + e.Name())
		if err != nil {
			panic("experiment: " + err.Error())
		}
		s, err := Parse("builtin:"+e.Name(), data)
		if err != nil {
			panic("experiment: built-in " + err.Error())
		}
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Builtin returns the built-in experiment called name.
func Builtin(name string) (*Spec, bool) {
	for _, s := range Builtins() {
		if s.Name == name {
			return s, true
		}
	}
	return nil, false
}

// BuiltinSource is the text of a built-in experiment file.
func BuiltinSource(name string) ([]byte, bool) {
	s, ok := Builtin(name)
	if !ok {
		return nil, false
	}
	data, err := builtinFS.ReadFile("builtin/" + strings.TrimPrefix(s.File, "builtin:"))
	return data, err == nil
}

// Load finds an experiment by built-in name or file path. Built-in
// experiments skip the workloads and variants this schedlab lacks; an
// experiment file must name only what exists.
func Load(nameOrFile string, profile string) (*Plan, error) {
	return LoadWith(nameOrFile, profile, nil)
}

// LoadWith is Load with edit applied to the spec before it is resolved:
// the command line's run options (sweep --sysctl, --cpus …) over the
// file's.
func LoadWith(nameOrFile string, profile string, edit func(*Spec) error) (*Plan, error) {
	var s *Spec
	opt := ResolveOptions{Profile: profile}
	if b, ok := Builtin(nameOrFile); ok && !strings.ContainsRune(nameOrFile, '/') {
		if _, err := os.Stat(nameOrFile); err != nil {
			s, opt.AllowMissing = b, true
		}
	}
	if s == nil {
		var err error
		if s, err = ParseFile(nameOrFile); err != nil {
			if os.IsNotExist(err) {
				var names []string
				for _, b := range Builtins() {
					names = append(names, b.Name)
				}
				return nil, &UnknownExperimentError{Name: nameOrFile, Builtins: names}
			}
			return nil, err
		}
	}
	if edit != nil {
		if err := edit(s); err != nil {
			return nil, err
		}
	}
	return Resolve(s, opt)
}

// UnknownExperimentError names neither a built-in experiment nor a file.
type UnknownExperimentError struct {
	Name     string
	Builtins []string
}

func (e *UnknownExperimentError) Error() string {
	return "no experiment file " + e.Name + " and no built-in experiment of that name (built in: " + strings.Join(e.Builtins, ", ") + ")"
}
