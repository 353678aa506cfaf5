package fidelity

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/schedlab/schedlab/internal/sched"
	"github.com/schedlab/schedlab/internal/sim"
)

// A column's kernel configuration: what `schedlab run --kernel --variant
// --feature --sysctl` would run for it.
//
//   - Tip is kernel.baseline with the case-wide settings (simulate.features,
//     simulate.sysctls), then tip's own, and the base of every variant
//     column that runs tip's kernel ("base:NAME", as `schedlab compare`
//     runs tip).
//   - A column without a kernel of its own is tip plus the column: tip's
//     settings, then its own; a variant replaces tip's variant bases.
//   - A column with a kernel is that baseline with the case-wide settings
//     and its own: tip's settings say how tip differs from its baseline,
//     which does not carry over to another kernel.
//
// Later settings win, as repeated --feature and --sysctl flags do.

// setting is one feature or sysctl of a column's configuration, with the
// key path of the line that gives it.
type setting struct{ value, path string }

// columnSetup is column i's configuration, each setting with its line.
func (c *Case) columnSetup(i int) (kernel string, variants []string, features, sysctls []setting) {
	col := &c.Columns[i]
	add := func(dst *[]setting, vals []string, path string) {
		for j, v := range vals {
			*dst = append(*dst, setting{v, path + "." + strconv.Itoa(j)})
		}
	}
	kernel = c.Kernel.Baseline
	if col.Kernel != "" {
		kernel = col.Kernel
	}
	inherit := i > 0 && col.Kernel == ""
	add(&features, c.Simulate.Features, "simulate.features")
	add(&sysctls, c.Simulate.Sysctls, "simulate.sysctls")
	if inherit {
		add(&features, c.Columns[0].Features, "columns.0.features")
		add(&sysctls, c.Columns[0].Sysctls, "columns.0.sysctls")
	}
	p := "columns." + strconv.Itoa(i)
	add(&features, col.Features, p+".features")
	add(&sysctls, col.Sysctls, p+".sysctls")
	switch {
	case col.Variant != "":
		variants = []string{col.Variant}
	case i == 0 || inherit:
		variants = c.tipBases()
	}
	return kernel, variants, features, sysctls
}

// tipBases are "base:NAME" for each variant column on tip's kernel whose
// variant is measured against something other than the plain baseline.
func (c *Case) tipBases() []string {
	var out []string
	for _, col := range c.Columns[1:] {
		if col.Variant == "" || col.Kernel != "" && col.Kernel != c.Kernel.Baseline {
			continue
		}
		if info, ok := sched.LookupVariant(col.Variant); ok && info.Base != "" {
			out = append(out, sim.BasePrefix+col.Variant)
		}
	}
	return out
}

// ColumnConfig is the kernel part of column i's run configuration:
// Kernel, Variants, Features and Sysctls (the plan fills in the machine,
// workload and seed).
func (c *Case) ColumnConfig(i int) sim.Config {
	kernel, variants, features, sysctls := c.columnSetup(i)
	return sim.Config{Kernel: kernel, Variants: variants, Features: values(features), Sysctls: values(sysctls)}
}

// ColumnFlags is column i's configuration as `schedlab run` flags
// ("--kernel v5.19 --sysctl migration_cost_ns=100000").
func (c *Case) ColumnFlags(i int) string {
	cfg := c.ColumnConfig(i)
	parts := []string{"--kernel " + cfg.Kernel}
	for _, v := range cfg.Variants {
		parts = append(parts, "--variant "+v)
	}
	for _, f := range cfg.Features {
		parts = append(parts, "--feature "+f)
	}
	for _, s := range cfg.Sysctls {
		parts = append(parts, "--sysctl "+s)
	}
	return strings.Join(parts, " ")
}

func values(ss []setting) []string {
	var out []string
	for _, s := range ss {
		out = append(out, s.value)
	}
	return out
}

// validateSettings checks every simulated column's features and sysctls
// as `schedlab run` does (sim.Config.Settings), each error at the line of
// the setting that fails, and that each column runs a kernel of its own:
// one that neither tip nor an earlier column runs already.
func (c *Case) validateSettings() error {
	type resolved struct {
		i        int
		kernel   string
		s        sched.Settings
		modelSet string // the model_* sysctls, which the cost model may override
	}
	var done []resolved
	for i := range c.Columns {
		if !c.Simulated(i) {
			continue
		}
		kernel, variants, features, sysctls := c.columnSetup(i)
		cfg := sim.Config{Kernel: kernel, Variants: variants}
		where := func(st setting) string {
			if strings.HasPrefix(st.path, "columns."+strconv.Itoa(i)+".") {
				return ""
			}
			return fmt.Sprintf(" (for column %s, kernel %s)", c.Columns[i].Name, kernel)
		}
		// Each setting is applied in order; the first that fails is
		// reported at its line, with the error schedlab run gives.
		for j, f := range features {
			cfg.Features = values(features[:j+1])
			if _, err := cfg.Settings(); err != nil {
				return c.errAt(f.path, "%v%s", err, where(f))
			}
		}
		var model []string
		for j, st := range sysctls {
			cfg.Sysctls = values(sysctls[:j+1])
			if _, err := cfg.Settings(); err != nil {
				return c.errAt(st.path, "%v%s", err, where(st))
			}
			if strings.HasPrefix(st.value, "model_") {
				model = append(model, st.value)
			}
		}
		s, err := cfg.Settings()
		if err != nil {
			// Kernel and variants were checked by validateColumns.
			return c.errAt("columns."+strconv.Itoa(i), "%v", err)
		}
		r := resolved{i, kernel, s, strings.Join(model, "\x00")}
		for _, d := range done {
			if d.kernel != r.kernel || d.s != r.s || d.modelSet != r.modelSet {
				continue
			}
			other := "tip"
			if d.i > 0 {
				other = "column " + c.Columns[d.i].Name
			}
			return c.errAt("columns."+strconv.Itoa(i), "column %s runs the same kernel as %s (%s): its settings change nothing", c.Columns[i].Name, other, c.ColumnFlags(i))
		}
		done = append(done, r)
	}
	return nil
}
