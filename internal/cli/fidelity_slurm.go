package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/schedlab/schedlab/internal/fidelity"
)

// fidelityPlanFlags are the flags that choose a fidelity plan's runs:
// every shard and the final report must be given the same ones.
var fidelityPlanFlags = []string{"corpus", "case", "quick", "loads", "seeds", "max-seeds", "costs", "sysctl", "full-length", "warmup"}

// planArgs rebuilds the plan flags the user gave, files by absolute path,
// as arguments for the array tasks and the final report.
func planArgs(cmd *cobra.Command) ([]string, error) {
	var out []string
	for _, name := range fidelityPlanFlags {
		f := cmd.Flags().Lookup(name)
		if f == nil || !f.Changed {
			continue
		}
		switch name {
		case "quick", "full-length":
			out = append(out, "--"+name)
		case "sysctl":
			vals, err := cmd.Flags().GetStringArray(name)
			if err != nil {
				return nil, err
			}
			for _, v := range vals {
				out = append(out, "--sysctl", v)
			}
		case "loads":
			vals, err := cmd.Flags().GetStringSlice(name)
			if err != nil {
				return nil, err
			}
			out = append(out, "--loads", strings.Join(vals, ","))
		case "corpus", "costs":
			abs, err := filepath.Abs(f.Value.String())
			if err != nil {
				return nil, err
			}
			out = append(out, "--"+name, abs)
		default:
			out = append(out, "--"+name, f.Value.String())
		}
	}
	return out, nil
}

// writeFidelitySlurm writes an sbatch script whose array task i runs shard
// i of plan into dir (fidelity --shard), and says how to make the report.
func writeFidelitySlurm(env *Env, cmd *cobra.Command, file, dir string, plan *fidelity.Plan, o slurmOptions) error {
	if o.tasks < 1 || o.cpus < 1 {
		return fmt.Errorf("fidelity: --slurm-tasks and --slurm-cpus must be at least 1")
	}
	rows := map[string]bool{}
	for _, r := range plan.Runs {
		rows[r.Case.ID+"\x00"+r.Load()] = true
	}
	if len(rows) == 0 {
		return fmt.Errorf("fidelity: --slurm: the cases chosen have no runs")
	}
	o.tasks = min(o.tasks, len(rows))
	bin, absDir, err := slurmPaths(o, dir)
	if err != nil {
		return err
	}
	args, err := planArgs(cmd)
	if err != nil {
		return err
	}
	quoted := make([]string, len(args))
	for i, a := range args {
		quoted[i] = shellQuote(a)
	}
	plain := strings.Join(quoted, " ")
	report := strings.Join(append([]string{shellQuote(bin), "fidelity", "--dir", shellQuote(absDir)}, quoted...), " ")
	var b strings.Builder
	fmt.Fprintf(&b, "#!/bin/sh\n")
	fmt.Fprintf(&b, "# schedlab fidelity: %d cases, %d rows, %d runs before the stopping rule, in %d shards. Submit with: sbatch %s\n",
		len(plan.Cases), len(rows), len(plan.Runs), o.tasks, filepath.Base(file))
	fmt.Fprintf(&b, "# then make the report (it reruns one run per machine and benchmark to check the directory):\n#   %s --markdown\n", report)
	writeSbatchHeader(&b, "fidelity", absDir, o)
	// A requeued task finds its finished runs in the directory and
	// continues.
	fmt.Fprintf(&b, "exec %s fidelity --dir %s --jobs %d --shard \"${SLURM_ARRAY_TASK_ID}/%d\"", shellQuote(bin), shellQuote(absDir), o.cpus, o.tasks)
	if plain != "" {
		fmt.Fprintf(&b, " %s", plain)
	}
	fmt.Fprintf(&b, "\n")
	if err := fidelity.PrepareDir(plan, dir); err != nil {
		return err
	}
	if err := os.WriteFile(file, []byte(b.String()), 0o755); err != nil {
		return fmt.Errorf("%s: %v", file, unwrapPathError(err))
	}
	fmt.Fprintf(env.Stderr, "schedlab: wrote %s: %d rows of %d cases in %d array tasks into %s; submit with sbatch %s, then make the report with: %s --markdown\n",
		file, len(rows), len(plan.Cases), o.tasks, absDir, file, report)
	return nil
}
