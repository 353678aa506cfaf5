package costmodel

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os/exec"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/schedlab/schedlab/internal/topology"
)

// Simulator runs the simulated hackbench with rt-tests' arguments args on
// machine with the given costs and returns the time it reports, in
// seconds. The CLI supplies one built on internal/workload/hackbench (this
// package sits below the workloads and cannot call them).
type Simulator func(machine *topology.MachineSpec, costs *Params, args []string) (seconds float64, err error)

// HackbenchCase is one row of the validation: hackbench -p with threads
// (-T) or processes (-P) for a group count.
type HackbenchCase struct {
	Mode   string // "-T" or "-P"
	Groups int
	Loops  int
}

// Args is the hackbench command line of the case.
func (c HackbenchCase) Args() []string {
	return []string{"-p", c.Mode, "-g", strconv.Itoa(c.Groups), "-l", strconv.Itoa(c.Loops)}
}

// HackbenchResult is a case's real and simulated times.
type HackbenchResult struct {
	HackbenchCase
	Real   []float64 // seconds, one per run
	Sim    float64   // seconds; 0 with SimErr set when it could not run
	SimErr error
}

// RealMedian is the median of the real runs.
func (r HackbenchResult) RealMedian() float64 {
	if len(r.Real) == 0 {
		return 0
	}
	v := append([]float64(nil), r.Real...)
	sort.Float64s(v)
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}

var hackbenchTimeRE = regexp.MustCompile(`^Time: (\d+\.\d+)\s*$`)

// ParseHackbenchTime finds rt-tests hackbench's "Time: S.mmm" line.
func ParseHackbenchTime(out []byte) (float64, error) {
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if m := hackbenchTimeRE.FindStringSubmatch(sc.Text()); m != nil {
			return strconv.ParseFloat(m[1], 64)
		}
	}
	return 0, fmt.Errorf("no \"Time:\" line in hackbench's output: %q", strings.TrimSpace(string(out)))
}

// RunRealHackbench runs the hackbench binary bin with args and returns its
// reported time.
func RunRealHackbench(bin string, args []string) (float64, error) {
	cmd := exec.Command(bin, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return 0, fmt.Errorf("%s %s: %v: %s", bin, strings.Join(args, " "), err, strings.TrimSpace(errb.String()))
	}
	return ParseHackbenchTime(out.Bytes())
}

// WriteValidationTable prints the real and simulated times and their
// ratio, one row per case.
func WriteValidationTable(w io.Writer, results []HackbenchResult) error {
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "hackbench\tgroups\tloops\treal (s)\tsimulated (s)\tsim/real\t")
	for _, r := range results {
		real := r.RealMedian()
		sim, ratio := "-", "-"
		if r.SimErr == nil {
			sim = fmt.Sprintf("%.3f", r.Sim)
			if real > 0 {
				ratio = fmt.Sprintf("%.2f", r.Sim/real)
			}
		}
		fmt.Fprintf(tw, "-p %s\t%d\t%d\t%.3f\t%s\t%s\t\n", r.Mode, r.Groups, r.Loops, real, sim, ratio)
	}
	return tw.Flush()
}
