// Command schedlab simulates the Linux kernel's fair scheduler on modelled
// machines. All behaviour lives in internal/cli; this is only the entry point.
package main

import (
	"os"

	"github.com/schedlab/schedlab/internal/calibrate"
	"github.com/schedlab/schedlab/internal/cli"
)

func main() {
	// A process that schedlab calibrate started as a member of its
	// context-switch ring does only that.
	calibrate.MaybeRunPeer()
	os.Exit(cli.Main(os.Stdout, os.Stderr, os.Args[1:]))
}
