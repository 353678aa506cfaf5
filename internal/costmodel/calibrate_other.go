//go:build !linux

package costmodel

import (
	"errors"

	"github.com/schedlab/schedlab/internal/topology"
)

// Calibrate needs Linux (sched_setaffinity, pipe2, /sys).
func Calibrate(spec *topology.MachineSpec, opt CalibrateOptions) (*Measurements, error) {
	return nil, errors.New("calibration needs Linux")
}
