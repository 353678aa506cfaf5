package calibrate

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/schedlab/schedlab/internal/costmodel"
	"github.com/schedlab/schedlab/internal/sim"
	"github.com/schedlab/schedlab/internal/topology"
)

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

// ValidationMachine resolves the machine validation simulates and its
// costs, and says where the costs come from: the machine file (a file
// written by schedlab calibrate) with costsFile on top, or the host with
// costsFile, or — with neither — the host after a quick calibration run,
// written to a temporary machine file (returned, for the caller to remove)
// so that the simulation loads it as any other machine.
func ValidationMachine(machine, costsFile string, log io.Writer) (spec *topology.MachineSpec, p *costmodel.Params, how, tmpFile string, err error) {
	if machine != "" {
		if spec, err = topology.Load(machine); err != nil {
			return nil, nil, "", "", err
		}
		p, err = costmodel.Resolve(spec, costsFile)
		return spec, p, "from " + machine, "", err
	}
	if spec, err = topology.ReadHost(); err != nil {
		return nil, nil, "", "", err
	}
	if costsFile != "" {
		p, err = costmodel.Resolve(spec, costsFile)
		return spec, p, "from " + costsFile, "", err
	}
	if log != nil {
		fmt.Fprintln(log, "calibrating (quick)...")
	}
	m, err := Measure(spec, Options{Quick: true})
	if err != nil {
		return nil, nil, "", "", err
	}
	p, _ = costmodel.Defaults(costmodel.GenericName)
	settings := Derive(m, spec)
	for _, s := range settings {
		if err := p.Set(s.Key, s.Value, s.Source); err != nil {
			return nil, nil, "", "", err
		}
	}
	f, err := os.CreateTemp("", "schedlab-validate-*.yaml")
	if err != nil {
		return nil, nil, "", "", err
	}
	defer f.Close()
	if err := WriteMachine(f, spec, settings, []string{"schedlab validate: quick calibration"}); err != nil {
		os.Remove(f.Name())
		return nil, nil, "", "", err
	}
	return spec, p, "quick calibration now", f.Name(), nil
}

// Validate runs every case: the real binary bin runs times, the simulated
// hackbench once (it is deterministic) through the run pipeline (sim.Run)
// with base's machine, kernel and run options.
func Validate(bin string, cases []HackbenchCase, runs int, base sim.Config) ([]HackbenchResult, error) {
	var out []HackbenchResult
	for _, c := range cases {
		r := HackbenchResult{HackbenchCase: c}
		for range runs {
			t, err := RunRealHackbench(bin, c.Args())
			if err != nil {
				return nil, err
			}
			r.Real = append(r.Real, t)
		}
		r.Sim, r.SimErr = simulate(base, c.Args())
		out = append(out, r)
	}
	return out, nil
}

// simulate runs rt-tests hackbench with args through sim.Run and returns
// the time it reports.
func simulate(base sim.Config, args []string) (float64, error) {
	cfg := base
	cfg.Tool, cfg.Args = "hackbench", args
	res, err := sim.Run(cfg, sim.Options{})
	if err != nil {
		return 0, err
	}
	t, ok := res.Metric("time_s")
	if !ok {
		return 0, errors.New("hackbench reported no time_s")
	}
	return t, nil
}
