package score

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"

	corpus "github.com/schedlab/schedlab/fidelity"
)

// TrustSchemaVersion is the version of fidelity/trust.json.
const TrustSchemaVersion = 1

// Trust is how often the corpus's published deltas came out right, per
// machine and benchmark: what `schedlab compare` and `schedlab report`
// print beside a simulated delta. It is written from a fidelity run
// (`schedlab fidelity --trust FILE`) and committed as fidelity/trust.json
// with docs/fidelity.md, from the same run.
type Trust struct {
	SchemaVersion int    `json:"schema_version"`
	Commit        string `json:"commit"`
	// Quick is set when the run was the --quick subset.
	Quick  bool         `json:"quick"`
	Groups []TrustGroup `json:"groups"`
}

// TrustGroup is one machine and benchmark's deltas: every delta, the
// significant ones not called noise by their source, and how those came
// out (the summary's definitions).
type TrustGroup struct {
	Machine       string `json:"machine"`
	Benchmark     string `json:"benchmark"`
	Deltas        int    `json:"deltas"`
	Significant   int    `json:"significant"`
	PublishedSign int    `json:"published_sign"`
	NoEffect      int    `json:"no_effect"`
	Opposite      int    `json:"opposite"`
	Within2x      int    `json:"within_2x"`
}

// Trust gathers the report's deltas by machine and benchmark, sorted.
func (r *Report) Trust() Trust {
	t := Trust{SchemaVersion: TrustSchemaVersion, Commit: r.Commit, Quick: r.Quick, Groups: []TrustGroup{}}
	idx := map[[2]string]int{}
	for _, c := range r.Cases {
		if len(c.Deltas) == 0 || c.Mechanism {
			continue
		}
		k := [2]string{strings.TrimSuffix(strings.TrimSuffix(c.Machine, ".yaml"), ".yml"), Benchmark(c.Tool)}
		i, ok := idx[k]
		if !ok {
			i = len(t.Groups)
			idx[k] = i
			t.Groups = append(t.Groups, TrustGroup{Machine: k[0], Benchmark: k[1]})
		}
		s := Summarize(nil, c.Deltas)
		g := &t.Groups[i]
		g.Deltas += s.Deltas
		g.Significant += s.Significant
		g.PublishedSign += s.SameSign
		g.NoEffect += s.NoEffect
		g.Opposite += s.Opposite
		g.Within2x += s.DeltaWithin2x
	}
	sort.Slice(t.Groups, func(i, j int) bool {
		a, b := t.Groups[i], t.Groups[j]
		if a.Machine != b.Machine {
			return a.Machine < b.Machine
		}
		return a.Benchmark < b.Benchmark
	})
	return t
}

// Write writes the trust file.
func (t Trust) Write(w io.Writer) error {
	b, err := json.MarshalIndent(t, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// ReadTrust parses a trust file.
func ReadTrust(data []byte) (Trust, error) {
	var t Trust
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&t); err != nil {
		return t, fmt.Errorf("%s: %v", corpus.TrustFile, err)
	}
	if t.SchemaVersion != TrustSchemaVersion {
		return t, fmt.Errorf("%s: schema version %d, this schedlab reads %d", corpus.TrustFile, t.SchemaVersion, TrustSchemaVersion)
	}
	return t, nil
}

// EmbeddedTrust is the committed fidelity/trust.json.
func EmbeddedTrust() Trust {
	t, err := ReadTrust(corpus.Trust())
	if err != nil {
		panic("score: " + err.Error())
	}
	return t
}

// Note is what the corpus says of deltas of a benchmark (a tool's name,
// as Benchmark maps it) on a machine (a preset name, or a machine file's
// machine name): one line, for compare's and report's readers. The
// machine's own deltas are named first; without any, the line says so
// and gives the benchmark's deltas on the corpus's other machines.
func (t Trust) Note(machine, tool string) string {
	bench := Benchmark(tool)
	var same TrustGroup
	var others []TrustGroup
	for _, g := range t.Groups {
		if g.Benchmark != bench {
			continue
		}
		if g.Machine == machine {
			same = g
		} else {
			others = append(others, g)
		}
	}
	run := "docs/fidelity.md at " + shortCommit(t.Commit)
	if t.Quick {
		run += ", its --quick subset"
	}
	if same.Significant > 0 {
		return fmt.Sprintf("corpus: %d of %d significant published deltas on %s %s reproduced with their sign (%d no effect, %d opposite; %s)",
			same.PublishedSign, same.Significant, machine, bench, same.NoEffect, same.Opposite, run)
	}
	var sum TrustGroup
	var names []string
	for _, g := range others {
		sum.Significant += g.Significant
		sum.PublishedSign += g.PublishedSign
		if g.Significant > 0 {
			names = append(names, g.Machine)
		}
	}
	head := fmt.Sprintf("corpus: no significant published delta of %s on %s", bench, machine)
	if same.Deltas > 0 {
		head = fmt.Sprintf("corpus: %s of %s on %s, none significant", plural(same.Deltas, "published delta"), bench, machine)
	}
	if sum.Significant == 0 {
		return fmt.Sprintf("%s, nor on another machine: nothing says how far to trust this delta (%s)", head, run)
	}
	return fmt.Sprintf("%s; on %s, %d of %d reproduced with their sign (%s)", head, strings.Join(names, ", "), sum.PublishedSign, sum.Significant, run)
}

func shortCommit(c string) string {
	if len(c) > 7 {
		return c[:7]
	}
	if c == "" {
		return "an unknown commit"
	}
	return c
}
