package costmodel

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// WriteTable prints every parameter of p, its value, unit and source, by
// group: what `schedlab costs` shows.
func WriteTable(w io.Writer, p *Params, machine string) error {
	fmt.Fprintf(w, "cost parameters of %s (defaults: %s)\n", machine, p.Name)
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	group := ""
	for _, q := range params {
		if q.Group != group {
			group = q.Group
			fmt.Fprintf(tw, "\n# %s\n", group)
			fmt.Fprintln(tw, "PARAMETER\tVALUE\tUNIT\tSOURCE")
		}
		unit := q.Unit
		if q.Scaled {
			unit += "*"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", q.Key, p.FormatValue(q.Key), unit, p.Source(q.Key))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintln(w, "\n* work at capacity 1024 and maximum frequency; a smaller or slower CPU takes 1024/capacity × 1024/freq_scale as long.")
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
