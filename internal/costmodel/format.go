package costmodel

import (
	"fmt"
	"io"
	"strings"

	"github.com/schedlab/schedlab/internal/texttable"
)

// WriteTable prints every parameter of p, its value, unit and source, by
// group: what `schedlab costs` shows. With width > 0 the sources wrap so
// that every line fits width columns; 0 gives each parameter one line.
func WriteTable(w io.Writer, p *Params, machine string, width int) error {
	fmt.Fprintf(w, "cost parameters of %s (defaults: %s)\n", machine, p.Name)
	var rows [][]string
	flush := func() error {
		if rows == nil {
			return nil
		}
		err := texttable.Write(w, "", rows, width, 3)
		rows = nil
		return err
	}
	group := ""
	for _, q := range params {
		if q.Group != group {
			if err := flush(); err != nil {
				return err
			}
			group = q.Group
			fmt.Fprintf(w, "\n# %s\n", group)
			rows = append(rows, []string{"PARAMETER", "VALUE", "UNIT", "SOURCE"})
		}
		unit := q.Unit
		if q.Scaled {
			unit += "*"
		}
		rows = append(rows, []string{q.Key, p.FormatValue(q.Key), unit, p.Source(q.Key)})
	}
	if err := flush(); err != nil {
		return err
	}
	foot := "* work at capacity 1024 and maximum frequency; a smaller or slower CPU takes 1024/capacity × 1024/freq_scale as long."
	if width > 0 {
		foot = strings.Join(texttable.Wrap(foot, width), "\n")
	}
	_, err := fmt.Fprintf(w, "\n%s\n", foot)
	return err
}

// WriteDocTables writes the generated part of docs/costs.md: per group, a
// table of every parameter's unit, meaning and default per preset; then,
// per preset, where each default comes from. meaning maps a parameter
// name to a one-line description (the tests take it from the fields' doc
// comments).
func WriteDocTables(w io.Writer, meaning map[string]string) error {
	names := PresetNames()
	defs := make([]*Params, len(names))
	for i, n := range names {
		defs[i], _ = Defaults(n)
	}
	var b strings.Builder
	group := ""
	for _, q := range params {
		if q.Group != group {
			group = q.Group
			fmt.Fprintf(&b, "\n### %s\n\n", group)
			b.WriteString("| Parameter | Unit | Meaning |")
			for _, n := range names {
				fmt.Fprintf(&b, " %s |", n)
			}
			b.WriteString("\n|---|---|---|")
			for range names {
				b.WriteString("--:|")
			}
			b.WriteString("\n")
		}
		unit := q.Unit
		if q.Scaled {
			unit += " (work)"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s |", q.Key, unit, mdEscape(meaning[q.Key]))
		for _, d := range defs {
			fmt.Fprintf(&b, " %s |", d.FormatValue(q.Key))
		}
		b.WriteString("\n")
	}
	b.WriteString("\n## Where each default comes from\n")
	for i, n := range names {
		fmt.Fprintf(&b, "\n### %s\n\n", n)
		for _, q := range params {
			fmt.Fprintf(&b, "- `%s` = %s: %s\n", q.Key, defs[i].FormatValue(q.Key), mdEscape(defs[i].Source(q.Key)))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func mdEscape(s string) string { return strings.ReplaceAll(s, "|", `\|`) }
