package calibrate

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/schedlab/schedlab/internal/sim"
)

// Validate runs the real binary (here a stand-in that logs its arguments
// and prints rt-tests' "Time:" line) in rounds, every case once a round,
// and the simulated hackbench once per seed through the run pipeline,
// which gives what 'schedlab run' gives for the same arguments and seed.
func TestValidateRunsThroughSim(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("needs a shell script")
	}
	dir := t.TempDir()
	bin, log := filepath.Join(dir, "hackbench"), filepath.Join(dir, "log")
	script := "#!/bin/sh\necho \"$*\" >> " + log + "\necho 'Running in threaded mode'\necho 'Time: 0.123'\n"
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	base := sim.Config{Machine: "hikey", Seed: 5}
	cases := []HackbenchCase{{Mode: "-T", Groups: 1, Loops: 10}, {Mode: "-P", Groups: 2, Loops: 5}}
	var fracs []float64
	res, err := Validate(bin, cases, 2, 2, base, func(f float64) { fracs = append(fracs, f) })
	if err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(log)
	if want := "-p -T -g 1 -l 10\n-p -P -g 2 -l 5\n-p -T -g 1 -l 10\n-p -P -g 2 -l 5\n"; string(got) != want {
		t.Errorf("real runs in this order:\n%s\nwant rounds:\n%s", got, want)
	}
	if len(fracs) != 8 || fracs[len(fracs)-1] != 1 {
		t.Errorf("progress %v, want 8 steps ending at 1", fracs)
	}
	for i, r := range res {
		if r.SimErr != nil || len(r.Real) != 2 || r.RealMedian() != 0.123 || len(r.Sim) != 2 {
			t.Fatalf("case %d: %+v", i, r)
		}
		for s, simulated := range r.Sim {
			cfg := base
			cfg.Seed = base.Seed + uint64(s)
			cfg.Tool, cfg.Args = "hackbench", cases[i].Args()
			run, err := sim.Run(cfg, sim.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if want, _ := run.Metric("time_s"); simulated != want || want <= 0 {
				t.Errorf("case %d seed %d: simulated %v, sim.Run gives %v", i, cfg.Seed, simulated, want)
			}
		}
	}
}

// A calibrated machine file is validated as given, with its costs.
func TestValidationMachineFromFile(t *testing.T) {
	spec := preset(t, "chromebook-7c")
	spec.Name = "cal"
	file := filepath.Join(t.TempDir(), "cal.yaml")
	f, err := os.Create(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteMachine(f, spec, Derive(fakeMeasurements(), spec), nil); err != nil {
		t.Fatal(err)
	}
	f.Close()
	got, p, how, tmp, err := ValidationMachine(file, "", nil)
	if err != nil || tmp != "" || how != "from "+file || got.Name != "cal" {
		t.Fatalf("%v %q %q %v", err, how, tmp, got)
	}
	if p.Syscall != 95 {
		t.Errorf("syscall_ns %v, want the file's 95", p.Syscall)
	}
}
