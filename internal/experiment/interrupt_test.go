package experiment

import (
	"context"
	"errors"
	"testing"
)

// A sweep whose context is cancelled (Ctrl-C) stops: the runs it finished
// are in the directory, it says how many, and a resumed sweep completes
// the directory to what an uninterrupted sweep gives, with and without a
// stopping rule.
func TestSweepInterrupted(t *testing.T) {
	for _, seq := range []string{"", "sequential: {min_runs: 2, within_pct: 1}\n"} {
		p := resolveText(t, "name: intr\nmachines: [hikey]\nvariants: [short-task-v3]\nruns: 3\nseed: 5\n"+seq+"workloads:\n  - hackbench -p -T -l 10 -g 1,2\n")
		want, err := Sweep(p, SweepOptions{Jobs: 1})
		if err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		if err := PrepareDir(dir, p, false); err != nil {
			t.Fatal(err)
		}
		const stopAfter = 3
		ctx, cancel := context.WithCancel(context.Background())
		_, err = Sweep(p, SweepOptions{Dir: dir, Jobs: 2, Context: ctx, Progress: func(pr Progress) {
			if pr.Done == stopAfter {
				cancel()
			}
		}})
		cancel()
		var in *Interrupted
		if !errors.As(err, &in) || !errors.Is(err, context.Canceled) {
			t.Fatalf("%s: sweep returned %v, want an Interrupted", seq, err)
		}
		files, err := countRuns(dir)
		if err != nil {
			t.Fatal(err)
		}
		// Done counts the runs finished before the cancel and those in
		// flight that finished within their slice; each is written.
		if in.Done < stopAfter || in.Done != files || in.Have != files || in.Total != len(p.Points()) {
			t.Errorf("%s: %+v, %d files, %d points", seq, *in, files, len(p.Points()))
		}
		got, err := Sweep(p, SweepOptions{Dir: dir, Jobs: 2})
		if err != nil {
			t.Fatal(err)
		}
		equalRecords(t, "interrupted and resumed vs straight", want, got)
	}
}
