package stream

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/schedlab/schedlab/internal/workload"
)

// Usage describes the tool's arguments.
const Usage = `stream [NAME=VALUE ...]

STREAM 5.10 with OpenMP. Its sizes are compile-time defines and its thread
count an environment variable; give them as words:

  STREAM_ARRAY_SIZE=N   elements per array (default 10000000)
  NTIMES=N              times each kernel runs, at least 2 (default 10)
  OFFSET=N              array offset, printed only (default 0)
  OMP_NUM_THREADS=N     threads (default: every CPU of the machine)

and how the binary stores (schedlab's, not a STREAM define):

  SCHEDLAB_STORES=auto  as GCC -O2 builds it: Copy becomes a memcpy call, whose
                        large copies use non-temporal stores; Scale, Add and
                        Triad store through the cache, which first reads each
                        line it writes (write-allocate, traffic STREAM does
                        not count) (default)
  SCHEDLAB_STORES=nt    every kernel streams its stores (as icc
                        -qopt-streaming-stores=always): no write-allocate
  SCHEDLAB_STORES=allocate  every kernel's stores allocate, Copy's too
`

// Parse reads NAME=VALUE words.
func Parse(args []string) (Config, error) {
	cfg := DefaultConfig()
	for _, a := range args {
		if a == "-h" || a == "--help" {
			return cfg, workload.ErrHelp
		}
		name, val, ok := strings.Cut(a, "=")
		if !ok {
			return cfg, fmt.Errorf("stream: %q: arguments are NAME=VALUE (STREAM_ARRAY_SIZE, NTIMES, OFFSET, OMP_NUM_THREADS, SCHEDLAB_STORES)", a)
		}
		if name == "SCHEDLAB_STORES" {
			st, ok := storesByName[val]
			if !ok {
				return cfg, fmt.Errorf("stream: SCHEDLAB_STORES=%q: give auto, nt or allocate", val)
			}
			cfg.Stores = st
			continue
		}
		n, err := strconv.ParseInt(val, 10, 64)
		if err != nil {
			return cfg, fmt.Errorf("stream: %s=%q is not an integer", name, val)
		}
		switch name {
		case "STREAM_ARRAY_SIZE":
			if n < 1 || n > 1<<40 {
				return cfg, fmt.Errorf("stream: STREAM_ARRAY_SIZE=%d out of range 1..2^40", n)
			}
			cfg.ArraySize = n
		case "NTIMES":
			if n < 2 || n > 1<<20 {
				return cfg, fmt.Errorf("stream: NTIMES=%d: STREAM needs at least 2", n)
			}
			cfg.NTimes = int(n)
		case "OFFSET":
			if n < 0 || n > 1<<30 {
				return cfg, fmt.Errorf("stream: OFFSET=%d out of range", n)
			}
			cfg.Offset = int(n)
		case "OMP_NUM_THREADS":
			if n < 1 || n > 1<<16 {
				return cfg, fmt.Errorf("stream: OMP_NUM_THREADS=%d out of range 1..65536", n)
			}
			cfg.Threads = int(n)
		default:
			return cfg, fmt.Errorf("stream: unknown setting %q (STREAM_ARRAY_SIZE, NTIMES, OFFSET, OMP_NUM_THREADS, SCHEDLAB_STORES)", name)
		}
	}
	return cfg, nil
}
