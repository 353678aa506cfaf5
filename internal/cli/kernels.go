package cli

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/schedlab/schedlab/internal/kernels"
	"github.com/schedlab/schedlab/internal/sched"
)

// schedlab kernels: the kernel baselines, and what each one is.
func init() {
	register(func(env *Env) *cobra.Command {
		list := &cobra.Command{
			Use:   "kernels",
			Short: "List the kernel baselines schedlab models",
			Long: `List the kernel baselines --kernel takes: each line gives the name, the fair
class (EEVDF or CFS), the /proc/schedstat version, how many documented
differences from v6.19 it has, and a summary. 'schedlab kernels show NAME'
prints one baseline in full.`,
			Args: cobra.NoArgs,
			RunE: func(c *cobra.Command, args []string) error {
				tw := tabwriter.NewWriter(env.Stdout, 0, 8, 2, ' ', 0)
				fmt.Fprintln(tw, "NAME\tCLASS\tSCHEDSTAT\tDIFFERENCES\tSUMMARY")
				for _, b := range kernels.All() {
					diffs := fmt.Sprint(len(b.Differences()))
					if b.Name == kernels.Default {
						diffs = "(default)"
					}
					fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\n", b.Name, b.Class, b.SchedstatVersion, diffs, b.Summary)
				}
				return tw.Flush()
			},
		}
		var markdown bool
		show := &cobra.Command{
			Use:   "show NAME",
			Short: "Print a kernel baseline: its features, sysctls and differences from v6.19",
			Long: `Print a kernel baseline: what it is, its facts (fair class, domain naming,
schedstat version), its sched_features and sysctls with their defaults
(--feature and --sysctl change them), and its documented differences
from v6.19, each with the kernel commits it comes from, the settings that
select it and the tests that check it. --markdown prints the differences
as docs/kernels.md carries them.`,
			Args: cobra.ExactArgs(1),
			RunE: func(c *cobra.Command, args []string) error {
				b, err := kernels.Lookup(args[0])
				if err != nil {
					return err
				}
				if markdown {
					return writeKernelMarkdown(env.Stdout, b)
				}
				return writeKernel(env.Stdout, b)
			},
		}
		show.Flags().BoolVar(&markdown, "markdown", false, "print the differences in Markdown (the generated part of docs/kernels.md)")
		list.AddCommand(show)
		return list
	})
}

// writeKernel prints a baseline for `schedlab kernels show`.
func writeKernel(w io.Writer, b *kernels.Baseline) error {
	s := sched.MustBaseline(b.Name)
	ref := sched.MustBaseline(kernels.V619)
	fmt.Fprintf(w, "%s: %s\n\n", b.Name, b.Summary)
	writeWrapped(w, "", b.Definition)
	fmt.Fprintln(w, "\nfacts:")
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	for _, f := range b.Facts() {
		fmt.Fprintf(tw, "  %s\t%s\n", f.Name, f.Value)
	}
	tw.Flush()
	var on, off []string
	for _, f := range s.Features() {
		if f.Enabled {
			on = append(on, f.Name)
		} else {
			off = append(off, f.Name)
		}
	}
	fmt.Fprintln(w, "\nsched_features (--feature NAME or NO_NAME):")
	writeWrapped(w, "  on:     ", strings.Join(on, " "))
	writeWrapped(w, "  off:    ", strings.Join(off, " "))
	writeWrapped(w, "  absent: ", strings.Join(s.AbsentFeatures(), " "))
	fmt.Fprintln(w, "\nsysctls (--sysctl NAME=VALUE):")
	tw = tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	var model []sched.Sysctl
	for _, c := range s.Sysctls() {
		if strings.HasPrefix(c.Name, "model_") {
			model = append(model, c)
			continue
		}
		fmt.Fprintf(tw, "  %s\t%s\n", c.Name, quoteEmpty(c.Value))
	}
	tw.Flush()
	writeWrapped(w, "  absent: ", strings.Join(s.AbsentSysctls(), " "))
	fmt.Fprintln(w, "\nmodel switches (--sysctl NAME=VALUE; schedlab's, not the kernel's):")
	tw = tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	for _, c := range model {
		fmt.Fprintf(tw, "  %s\t%s\n", c.Name, quoteEmpty(c.Value))
	}
	tw.Flush()
	diffs := b.Differences()
	if len(diffs) == 0 {
		fmt.Fprintf(w, "\n%s is the reference: the other baselines list their differences from it.\n", b.Name)
		return nil
	}
	fmt.Fprintf(w, "\ndifferences from %s (%d):\n", kernels.V619, len(diffs))
	for i, d := range diffs {
		fmt.Fprintf(w, "\n%2d. %s\n", i+1, d.Name)
		writeWrapped(w, "    ", d.What)
		for j, cm := range d.Commits {
			lead := "    commits:  "
			if j > 0 {
				lead = "              "
			}
			writeWrapped(w, lead, commitText(cm))
		}
		writeWrapped(w, "    settings: ", strings.Join(settingTexts(&s, &ref, b, d), ", "))
		if len(d.Tests) > 0 {
			writeWrapped(w, "    tests:    ", strings.Join(d.Tests, ", "))
		}
		if d.Note != "" {
			writeWrapped(w, "    note:     ", d.Note)
		}
	}
	fmt.Fprintln(w, "\nnot modelled:")
	for _, n := range b.NotModelled() {
		writeWrapped(w, "  - ", n)
	}
	return nil
}

// writeKernelMarkdown prints a baseline's differences as the generated
// section of docs/kernels.md.
func writeKernelMarkdown(w io.Writer, b *kernels.Baseline) error {
	s := sched.MustBaseline(b.Name)
	ref := sched.MustBaseline(kernels.V619)
	fmt.Fprintf(w, "### `%s`: %s\n\n%s\n\n", b.Name, b.Summary, b.Definition)
	diffs := b.Differences()
	if len(diffs) == 0 {
		fmt.Fprintf(w, "The reference: the other baselines list their differences from it.\n")
		return nil
	}
	for i, d := range diffs {
		num := fmt.Sprintf("%d. ", i+1)
		sub := strings.Repeat(" ", len(num)) + "- "
		fmt.Fprintf(w, "%s**%s** — %s\n", num, d.Name, d.What)
		var cs []string
		for _, cm := range d.Commits {
			cs = append(cs, commitText(cm))
		}
		fmt.Fprintf(w, "%sCommits: %s\n", sub, strings.Join(cs, "; "))
		fmt.Fprintf(w, "%sSettings: %s\n", sub, strings.Join(settingTexts(&s, &ref, b, d), ", "))
		if len(d.Tests) > 0 {
			fmt.Fprintf(w, "%sTests: `%s`\n", sub, strings.Join(d.Tests, "`, `"))
		}
		if d.Note != "" {
			fmt.Fprintf(w, "%sNote: %s\n", sub, d.Note)
		}
	}
	fmt.Fprintf(w, "\nNot modelled:\n\n")
	for _, n := range b.NotModelled() {
		fmt.Fprintf(w, "- %s\n", n)
	}
	return nil
}

// commitText is `ID "title" (release, verified)`, or for a commit not
// identified "(not identified) what (release range: tree evidence)".
func commitText(c kernels.Commit) string {
	if c.ID == "" {
		return fmt.Sprintf("(not identified) %s (%s: %s)", c.Title, c.Release, c.Trees)
	}
	how := "verified"
	if !c.Verified {
		how = "ID from memory, not verified"
	}
	if c.Trees != "" {
		how += "; " + c.Trees
	}
	return fmt.Sprintf("%s \"%s\" (%s, %s)", c.ID, c.Title, c.Release, how)
}

// settingTexts gives each setting of d with its value on b and on v6.19.
func settingTexts(s, ref *sched.Settings, b *kernels.Baseline, d kernels.Difference) []string {
	facts := map[string]string{}
	for _, f := range b.Facts() {
		facts[f.Name] = f.Value
	}
	refFacts := map[string]string{}
	for _, f := range kernels.Must(kernels.V619).Facts() {
		refFacts[f.Name] = f.Value
	}
	var out []string
	for _, n := range d.Settings {
		var got, want string
		if f, ok := strings.CutPrefix(n, "kernels."); ok {
			got, want = facts[f], refFacts[f]
		} else {
			got, _ = s.Value(n)
			want, _ = ref.Value(n)
		}
		out = append(out, fmt.Sprintf("%s=%s (%s: %s)", n, got, kernels.V619, want))
	}
	return out
}

func quoteEmpty(v string) string {
	if v == "" {
		return `""`
	}
	return v
}

// writeWrapped prints text after lead, wrapped at 78 columns with
// continuation lines indented to lead's width.
func writeWrapped(w io.Writer, lead, text string) {
	const width = 78
	indent := strings.Repeat(" ", len([]rune(lead)))
	line := lead
	n := len([]rune(line))
	first := true
	for _, word := range strings.Fields(text) {
		l := len([]rune(word))
		if !first && n+1+l > width {
			fmt.Fprintln(w, line)
			line, n, first = indent, len(indent), true
		}
		if !first {
			line += " "
			n++
		}
		line += word
		n += l
		first = false
	}
	fmt.Fprintln(w, line)
}
