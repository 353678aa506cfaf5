package sim

import (
	"bytes"
	"context"
	"errors"
	"testing"
)

// A run whose context is cancelled stops with an error that wraps the
// context's, warm-up included; a context that is never cancelled changes
// nothing in the result.
func TestRunContext(t *testing.T) {
	cfg := Config{Machine: "hikey", Tool: "hackbench", Args: []string{"-l", "20", "-g", "1"}, Seed: 3}
	plain, err := Run(cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	live, err := Run(cfg, Options{Context: context.Background()})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(plain.Deterministic(), live.Deterministic()) {
		t.Error("a context that is never cancelled changed the result")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, c := range []Config{cfg, func() Config { c := cfg; c.Warmup = 1e9; return c }()} {
		if _, err := Run(c, Options{Context: ctx}); !errors.Is(err, context.Canceled) {
			t.Errorf("warmup %v: cancelled run returned %v", c.Warmup, err)
		}
	}
}
