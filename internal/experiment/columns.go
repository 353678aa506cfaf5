package experiment

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/schedlab/schedlab/internal/kernels"
	"github.com/schedlab/schedlab/internal/sched"
	"github.com/schedlab/schedlab/internal/sim"
)

// A column of a comparison is tip plus a kernel configuration, as
// `schedlab run` flags give one: variants, sched_features, sysctls and,
// optionally, a kernel of its own. `compare --column 'NAME=FLAGS'` and an
// experiment file's columns: key define them; a plain variants: entry is
// the column of that one variant.
//
//   - A column without a kernel of its own runs tip's kernel with the
//     experiment's features and sysctls, then its own; its variants, if
//     it has any, replace the variant bases tip runs with (Plan.TipBase).
//   - A column whose variants were written against another baseline
//     (short-task-v3: v6.0) runs that baseline, and a column with
//     --kernel K runs K; either makes the comparison one across kernels,
//     which Resolve refuses unless the spec asks for it (MixedKernels).
//
// Later settings win, as repeated --feature and --sysctl flags do.

// Column is a column as written: `NAME=FLAGS` on the command line, or an
// entry of an experiment file's columns: list.
type Column struct {
	Name     string
	Kernel   string   // "" is tip's
	Variants []string // applied in order, as run --variant
	Features []string
	Sysctls  []string
	Line     int // in the experiment file; 0 for a flag
}

// columnFlags are the flags a column's FLAGS may hold.
const columnFlags = "--variant, --feature, --sysctl and --kernel"

// ParseColumn reads a column given as "NAME=FLAGS", e.g. "nowaw=--feature
// NO_WA_WEIGHT" or "cost=--sysctl migration_cost_ns=250000 --variant
// short-task-v4". FLAGS are split as a shell would split them (quotes
// group words). The names it reads are checked by Resolve.
func ParseColumn(s string) (Column, error) {
	name, flags, ok := strings.Cut(s, "=")
	if !ok {
		return Column{}, fmt.Errorf("write NAME=FLAGS, e.g. 'nowaw=--feature NO_WA_WEIGHT'")
	}
	c := Column{Name: strings.TrimSpace(name)}
	if err := checkColumnName(c.Name); err != nil {
		return c, err
	}
	words, err := SplitCommand(flags)
	if err != nil {
		return c, err
	}
	if len(words) == 0 {
		return c, fmt.Errorf("column %s sets nothing: give it %s", c.Name, columnFlags)
	}
	for i := 0; i < len(words); i++ {
		w := words[i]
		flag, value, inline := strings.Cut(w, "=")
		var dst *[]string
		switch flag {
		case "--variant":
			dst = &c.Variants
		case "--feature":
			dst = &c.Features
		case "--sysctl":
			dst = &c.Sysctls
		case "--kernel":
		default:
			if strings.HasPrefix(w, "-") {
				return c, fmt.Errorf("column %s: unknown flag %s (a column takes %s)", c.Name, flag, columnFlags)
			}
			return c, fmt.Errorf("column %s: %q is not a flag (a column takes %s, each with its value)", c.Name, w, columnFlags)
		}
		if !inline {
			if i+1 >= len(words) || strings.HasPrefix(words[i+1], "--") {
				return c, fmt.Errorf("column %s: %s needs a value", c.Name, flag)
			}
			i++
			value = words[i]
		}
		if value == "" {
			return c, fmt.Errorf("column %s: %s needs a value", c.Name, flag)
		}
		if flag == "--kernel" {
			if c.Kernel != "" {
				return c, fmt.Errorf("column %s: --kernel is given twice", c.Name)
			}
			c.Kernel = value
			continue
		}
		*dst = append(*dst, value)
	}
	return c, c.check()
}

// check validates what a column says alone (Resolve checks the names).
func (c *Column) check() error {
	if c.Kernel == "" && len(c.Variants)+len(c.Features)+len(c.Sysctls) == 0 {
		return fmt.Errorf("column %s sets nothing: give it %s", c.Name, columnFlags)
	}
	for _, kv := range c.Sysctls {
		if name, _, ok := strings.Cut(kv, "="); !ok || name == "" {
			return fmt.Errorf("column %s: --sysctl %s: write NAME=VALUE, e.g. migration_cost_ns=250000", c.Name, kv)
		}
	}
	for _, v := range c.Variants {
		if v == Tip {
			return fmt.Errorf("column %s: --variant %s: tip is the baseline, not a variant", c.Name, v)
		}
	}
	return nil
}

func checkColumnName(name string) error {
	switch {
	case name == "":
		return fmt.Errorf("a column needs a name: write NAME=FLAGS, e.g. 'nowaw=--feature NO_WA_WEIGHT'")
	case name == Tip:
		return fmt.Errorf("column %s: tip is the first column already; name the column otherwise", name)
	case !nameRE.MatchString(name) || strings.Contains(name, "__"):
		return fmt.Errorf("column name %q: use letters, digits, '.', '_' and '-' (no \"__\")", name)
	}
	return nil
}

// PlanColumn is how a column of a plan runs, for the columns that are
// more than the variant they are named after: those defined by flags
// (Column) and, in a comparison across kernels, a variant column that
// runs its own baseline. A column not listed in Plan.Columns is the
// variant of its name on tip's kernel.
type PlanColumn struct {
	Name string `json:"name"`
	// Kernel is the kernel the column runs; "" is tip's.
	Kernel   string   `json:"kernel,omitempty"`
	Variants []string `json:"variants,omitempty"`
	Features []string `json:"features,omitempty"`
	Sysctls  []string `json:"sysctls,omitempty"`
}

// Flags is the column as `schedlab run` flags beyond tip's
// ("--feature NO_WA_WEIGHT --sysctl migration_cost_ns=250000").
func (c *PlanColumn) Flags() string {
	var parts []string
	if c.Kernel != "" {
		parts = append(parts, "--kernel "+c.Kernel)
	}
	for _, v := range c.Variants {
		parts = append(parts, "--variant "+v)
	}
	for _, f := range c.Features {
		parts = append(parts, "--feature "+f)
	}
	for _, s := range c.Sysctls {
		parts = append(parts, "--sysctl "+s)
	}
	return strings.Join(parts, " ")
}

// Column returns how the named column runs: its entry of Plan.Columns,
// or the variant of that name. Tip has no column entry (ok false).
func (p *Plan) Column(name string) (PlanColumn, bool) {
	if name == Tip {
		return PlanColumn{}, false
	}
	for _, c := range p.Columns {
		if c.Name == name {
			return c, true
		}
	}
	return PlanColumn{Name: name, Variants: []string{name}}, true
}

// ColumnKernel is the kernel the named column runs where tip runs kernel.
func (p *Plan) ColumnKernel(name, kernel string) string {
	if c, ok := p.Column(name); ok && c.Kernel != "" {
		return c.Kernel
	}
	return kernel
}

// TableKernel is the kernel of the table a record belongs to: tip's
// kernel, which is the record's own unless its column runs another
// (a comparison across kernels has one tip kernel).
func (p *Plan) TableKernel(r *Record) string {
	if c, ok := p.Column(r.Variant); ok && c.Kernel != "" && len(p.Kernels) > 0 {
		return p.Kernels[0]
	}
	return r.Kernel
}

// MixedKernels reports whether a column runs a kernel other than tip's.
func (p *Plan) MixedKernels() bool {
	for _, c := range p.Columns {
		if c.Kernel != "" {
			return true
		}
	}
	return false
}

// columnConfig is the kernel part of a column's run where tip runs
// kernel: the kernel, variants, features and sysctls.
func (p *Plan) columnConfig(name, kernel string) (k string, variants, features, sysctls []string) {
	c, ok := p.Column(name)
	if !ok { // tip
		for _, v := range p.TipBase {
			variants = append(variants, sim.BasePrefix+v)
		}
		return kernel, variants, p.Features, p.Sysctls
	}
	return c.Settings(kernel, p.TipBase, p.Features, p.Sysctls)
}

// Settings is what the column runs over tip's kernel, variant bases
// (tipBase, names without base:), features and sysctls: its kernel if it
// names one; its variants instead of tip's bases, or, with none on tip's
// kernel, tip's bases; its features and sysctls after tip's (later
// settings win).
func (c PlanColumn) Settings(kernel string, tipBase, features, sysctls []string) (k string, variants, feats, ctls []string) {
	k = kernel
	if c.Kernel != "" {
		k = c.Kernel
	}
	variants = slices.Clone(c.Variants)
	if len(variants) == 0 && k == kernel {
		// Tip plus settings: tip's kernel, with tip's variant bases.
		for _, v := range tipBase {
			variants = append(variants, sim.BasePrefix+v)
		}
	}
	return k, variants, slices.Concat(features, c.Features), slices.Concat(sysctls, c.Sysctls)
}

// resolveColumns fills in the plan's columns (Variants, tip first),
// kernels, TipBase, BaseOf and Columns from the spec's variants, columns
// and kernels, and checks every column's settings on its kernel.
func (p *Plan) resolveColumns(s *Spec, opt ResolveOptions) error {
	infos := map[string]sched.VariantInfo{}
	for _, v := range sched.Variants() {
		infos[v.Name] = v
	}
	known := strings.Join(sched.VariantNames(), ", ")
	// A column after tip, with the kernel it needs: its own (--kernel)
	// or its variants' baseline; "" runs on tip's.
	type col struct {
		name      string
		def       *Column // nil for an entry of variants:
		need      string
		byVariant bool   // need is a variant's baseline
		anyDef    string // the default kernel of its any-baseline variant
		line      int
	}
	var cols []col
	var tipNeeds []string // the baselines base:NAME entries make tip's
	tipAny := ""
	p.Variants = []string{Tip}
	for _, v := range s.Variants {
		if v == Tip {
			return s.errAt("variants", "%q is the baseline and always the first column: do not list it", Tip)
		}
		// "base:NAME" makes tip the kernel NAME is compared with (its
		// baseline, and its Base), as `schedlab run --variant base:NAME`
		// runs it, without a column of NAME's own.
		if name, ok := strings.CutPrefix(v, sim.BasePrefix); ok {
			info, ok := infos[name]
			if !ok {
				return s.errAt("variants", "%s: unknown variant %q (known: %s)", v, name, known)
			}
			if info.AnyBaseline {
				tipAny = cmp.Or(tipAny, info.Baseline)
			} else {
				tipNeeds = append(tipNeeds, info.Baseline)
			}
			p.BaseOf = append(p.BaseOf, name)
			if info.Base != "" && !slices.Contains(p.TipBase, name) {
				p.TipBase = append(p.TipBase, name)
			}
			continue
		}
		info, ok := infos[v]
		if !ok && opt.AllowMissing {
			p.Skipped = append(p.Skipped, "variant "+v)
			continue
		}
		if !ok {
			return s.errAt("variants", "unknown variant %q (known: %s)", v, known)
		}
		if slices.Contains(p.Variants, v) {
			return s.errAt("variants", "variant %s is listed twice", v)
		}
		p.Variants = append(p.Variants, v)
		c := col{name: v, line: s.line("variants")}
		if info.AnyBaseline {
			c.anyDef = info.Baseline
		} else {
			c.need, c.byVariant = info.Baseline, true
		}
		cols = append(cols, c)
	}
	for i := range s.Columns {
		sc := &s.Columns[i]
		line := cmp.Or(sc.Line, s.line("columns"))
		if err := checkColumnName(sc.Name); err != nil {
			return s.errLine(line, "%v", err)
		}
		if _, ok := infos[sc.Name]; ok {
			return s.errLine(line, "column %s: that is a variant's name; name the column otherwise (the variant alone is --variant %s)", sc.Name, sc.Name)
		}
		if slices.Contains(p.Variants, sc.Name) {
			return s.errLine(line, "column %s is defined twice", sc.Name)
		}
		if err := sc.check(); err != nil {
			return s.errLine(line, "%v", err)
		}
		if sc.Kernel != "" {
			if _, err := sched.Baseline(sc.Kernel); err != nil {
				return s.errLine(line, "column %s: --kernel: %v", sc.Name, err)
			}
		}
		c := col{name: sc.Name, def: sc, line: line}
		want, wantBy := "", ""
		for _, v := range sc.Variants {
			name := strings.TrimPrefix(v, sim.BasePrefix)
			info, ok := infos[name]
			if !ok {
				return s.errLine(line, "column %s: unknown variant %q (known: %s)", sc.Name, name, known)
			}
			switch {
			case info.AnyBaseline:
				c.anyDef = cmp.Or(c.anyDef, info.Baseline)
			case want == "":
				want, wantBy = info.Baseline, name
			case want != info.Baseline:
				return s.errLine(line, "column %s: variant %s applies to kernel %s, variant %s to %s", sc.Name, name, info.Baseline, wantBy, want)
			}
		}
		switch {
		case sc.Kernel != "" && want != "" && want != sc.Kernel:
			return s.errLine(line, "column %s: variant %s applies to kernel %s, not %s", sc.Name, wantBy, want, sc.Kernel)
		case sc.Kernel != "":
			c.need = sc.Kernel
		case want != "":
			c.need, c.byVariant = want, true
		}
		p.Variants = append(p.Variants, sc.Name)
		cols = append(cols, c)
	}

	// Tip's kernel: the one asked for; else the one base:NAME entries
	// need; else the first variant's baseline; else the default kernel
	// of a variant for any baseline; else the default.
	p.Kernels = slices.Clone(s.Kernels)
	if len(p.Kernels) == 0 {
		k := ""
		for _, n := range tipNeeds {
			if k != "" && n != k {
				return s.errAt("variants", "tip cannot be the comparison kernel of variants of two baselines (%s and %s)", k, n)
			}
			k = n
		}
		for _, c := range cols {
			if k == "" && c.byVariant {
				k = c.need
			}
		}
		for _, c := range cols {
			k = cmp.Or(k, c.anyDef)
		}
		p.Kernels = []string{cmp.Or(k, tipAny, kernels.Default)}
	}
	for i, k := range p.Kernels {
		if _, err := sched.Baseline(k); err != nil {
			return s.errAt("kernels", "%v", err)
		}
		if slices.Contains(p.Kernels[:i], k) {
			return s.errAt("kernels", "kernel %s is listed twice", k)
		}
		for _, name := range p.BaseOf {
			if !infos[name].AppliesTo(k) {
				return s.errAt("variants", "variant %s applies to kernel %s, not %s", name, infos[name].Baseline, k)
			}
		}
	}

	// Columns on another kernel than tip's: one comparison across
	// kernels, which the spec must ask for, and only with one tip kernel.
	var differ []string
	firstLine := 0
	for _, c := range cols {
		if c.need == "" {
			continue
		}
		if len(p.Kernels) > 1 {
			if c.byVariant {
				for _, k := range p.Kernels {
					if k != c.need {
						return s.errLine(c.line, "variant %s applies to kernel %s, not %s", c.name, c.need, k)
					}
				}
			}
			return s.errLine(c.line, "column %s runs kernel %s, and the experiment compares kernels %s: give the column no kernel, or compare it in an experiment of one kernel", c.name, c.need, strings.Join(p.Kernels, ", "))
		}
		if c.need == p.Kernels[0] {
			continue
		}
		why := "--kernel"
		if c.byVariant {
			why = "its variant's baseline"
		}
		differ = append(differ, fmt.Sprintf("%s %s (%s)", c.name, c.need, why))
		if firstLine == 0 {
			firstLine = c.line
		}
	}
	if len(differ) > 0 && !s.MixedKernels {
		return s.errLine(firstLine, "columns run on different kernels: tip %s; %s: compare across kernels with --mixed-kernels (mixed_kernels: true in an experiment file), or compare them separately",
			p.Kernels[0], strings.Join(differ, "; "))
	}

	// How each column runs; tip applies the bases of the variants
	// compared on its kernel.
	for _, c := range cols {
		onTip := c.need == "" || c.need == p.Kernels[0]
		var variants []string
		if c.def == nil {
			variants = []string{c.name}
		} else {
			variants = c.def.Variants
		}
		if onTip {
			for _, v := range variants {
				if info := infos[v]; info.Base != "" && !slices.Contains(p.TipBase, v) {
					p.TipBase = append(p.TipBase, v)
				}
			}
		}
		switch {
		case c.def != nil:
			pc := PlanColumn{Name: c.name, Variants: slices.Clone(c.def.Variants), Features: slices.Clone(c.def.Features), Sysctls: slices.Clone(c.def.Sysctls)}
			if !onTip {
				pc.Kernel = c.need
			}
			p.Columns = append(p.Columns, pc)
		case !onTip:
			p.Columns = append(p.Columns, PlanColumn{Name: c.name, Kernel: c.need, Variants: variants})
		}
	}

	// Every kernel the plan runs takes the experiment's features and
	// sysctls; every column's settings hold on its kernel.
	for _, k := range p.Kernels {
		for _, name := range p.Variants {
			ck, vs, _, _ := p.columnConfig(name, k)
			settings, err := (&sim.Config{Kernel: ck, Variants: vs}).Settings()
			if err != nil {
				return s.errLine(p.columnLine(s, name), "column %s: %v", name, err)
			}
			for _, f := range p.Features {
				if err := settings.SetFeature(f); err != nil {
					return s.errAt("features", "%v", err)
				}
			}
			for _, kv := range p.Sysctls {
				n, value, _ := strings.Cut(kv, "=")
				if err := settings.SetSysctl(n, value); err != nil {
					return s.errAt("sysctls", "%v", err)
				}
			}
			if name == Tip {
				continue
			}
			ck, vs, fs, ss := p.columnConfig(name, k)
			if _, err := (&sim.Config{Kernel: ck, Variants: vs, Features: fs, Sysctls: ss}).Settings(); err != nil {
				return s.errLine(p.columnLine(s, name), "column %s: %v", name, err)
			}
		}
	}
	return nil
}

// columnLine is the line of the spec that defines a column.
func (p *Plan) columnLine(s *Spec, name string) int {
	for _, c := range s.Columns {
		if c.Name == name && c.Line > 0 {
			return c.Line
		}
	}
	if slices.Contains(s.Variants, name) {
		return s.line("variants")
	}
	return s.line("columns")
}

// checkColumns checks a stored plan's columns: each names a column after
// tip, once, and a column on a kernel of its own is in a plan of one tip
// kernel.
func (p *Plan) checkColumns() error {
	seen := map[string]bool{}
	for _, c := range p.Columns {
		switch {
		case c.Name == Tip || !slices.Contains(p.Variants, c.Name):
			return fmt.Errorf("columns: %q is not a column after tip", c.Name)
		case seen[c.Name]:
			return fmt.Errorf("columns: %s is defined twice", c.Name)
		case c.Kernel != "" && len(p.Kernels) != 1:
			return fmt.Errorf("columns: %s runs kernel %s in a plan of %d kernels", c.Name, c.Kernel, len(p.Kernels))
		}
		seen[c.Name] = true
	}
	return nil
}
