//go:build !linux

package calibrate

import (
	"errors"

	"github.com/schedlab/schedlab/internal/topology"
)

// Measure needs Linux (sched_setaffinity, pipe2, /sys).
func Measure(spec *topology.MachineSpec, opt Options) (*Measurements, error) {
	return nil, errors.New("calibration needs Linux")
}

// MaybeRunPeer returns at once: calibration rings run on Linux only.
func MaybeRunPeer() {}
