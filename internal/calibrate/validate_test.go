package calibrate

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/schedlab/schedlab/internal/sim"
)

// Validate runs the real binary (here a stand-in that prints rt-tests'
// "Time:" line) and the simulated hackbench through the run pipeline,
// which gives what 'schedlab run' gives for the same arguments.
func TestValidateRunsThroughSim(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("needs a shell script")
	}
	bin := filepath.Join(t.TempDir(), "hackbench")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\necho 'Running in threaded mode'\necho 'Time: 0.123'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	base := sim.Config{Machine: "hikey", Seed: 1}
	cases := []HackbenchCase{{Mode: "-T", Groups: 1, Loops: 10}, {Mode: "-P", Groups: 2, Loops: 5}}
	res, err := Validate(bin, cases, 2, base)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range res {
		if r.SimErr != nil || len(r.Real) != 2 || r.RealMedian() != 0.123 {
			t.Fatalf("case %d: %+v", i, r)
		}
		cfg := base
		cfg.Tool, cfg.Args = "hackbench", cases[i].Args()
		run, err := sim.Run(cfg, sim.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if want, _ := run.Metric("time_s"); r.Sim != want || want <= 0 {
			t.Errorf("case %d: simulated %v, sim.Run gives %v", i, r.Sim, want)
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
