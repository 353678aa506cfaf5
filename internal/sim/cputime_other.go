//go:build !linux

package sim

import "time"

// threadCPUTime is not measured here: a result's cpu_ns stays 0.
func threadCPUTime() (time.Duration, bool) { return 0, false }
