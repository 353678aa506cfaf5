package calibrate

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
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
	Real   []float64 // seconds, one per real run
	Sim    []float64 // seconds, one per seed; empty with SimErr set when it could not run
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

// SimMean is the mean of the simulated times over the seeds.
func (r HackbenchResult) SimMean() float64 {
	if len(r.Sim) == 0 {
		return 0
	}
	sum := 0.0
	for _, v := range r.Sim {
		sum += v
	}
	return sum / float64(len(r.Sim))
}

// Ratio is the simulated mean over the real median; ok is false when
// either is missing.
func (r HackbenchResult) Ratio() (ratio float64, ok bool) {
	real := r.RealMedian()
	if r.SimErr != nil || len(r.Sim) == 0 || real <= 0 {
		return 0, false
	}
	return r.SimMean() / real, true
}

// Within reports whether the simulated mean is within ±pct percent of the
// real median.
func (r HackbenchResult) Within(pct float64) bool {
	q, ok := r.Ratio()
	return ok && math.Abs(q-1) <= pct/100+1e-12
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

// WriteValidationTable prints the real median and range, the simulated
// mean and range over the seeds and their ratio, one row per case, and how
// many cases are within ±pct percent.
func WriteValidationTable(w io.Writer, results []HackbenchResult, pct float64) error {
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "hackbench\tgroups\tloops\treal (s)\treal range\tsimulated (s)\tsim range\tsim/real\twithin ±%g%%\t\n", pct)
	in, n := 0, 0
	for _, r := range results {
		sim, simRange, ratio, within := "-", "-", "-", "-"
		if q, ok := r.Ratio(); ok {
			sim, simRange = fmt.Sprintf("%.3f", r.SimMean()), span(r.Sim)
			ratio, within = fmt.Sprintf("%.2f", q), "no"
			n++
			if r.Within(pct) {
				within = "yes"
				in++
			}
		}
		fmt.Fprintf(tw, "-p %s\t%d\t%d\t%.3f\t%s\t%s\t%s\t%s\t%s\t\n", r.Mode, r.Groups, r.Loops, r.RealMedian(), span(r.Real), sim, simRange, ratio, within)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "\n%d of %d cases within ±%g%% of real\n", in, n, pct)
	return err
}

// span is the smallest and largest of v, "min-max".
func span(v []float64) string {
	if len(v) == 0 {
		return "-"
	}
	lo, hi := v[0], v[0]
	for _, x := range v {
		lo, hi = math.Min(lo, x), math.Max(hi, x)
	}
	return fmt.Sprintf("%.3f-%.3f", lo, hi)
}

// ValidationMachine resolves the machine validation simulates and its
// costs, and says where the costs come from: the machine file (a file
// written by schedlab calibrate) with costsFile on top, or the host with
// costsFile, or — with neither — the host after a calibration run (the
// full one: the quick one's figures move the simulated times by ±20% from
// one calibration to the next on a VM),
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
		fmt.Fprintln(log, "calibrating...")
	}
	m, err := Measure(spec, Options{})
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
	if err := WriteMachine(f, spec, settings, []string{"schedlab validate: calibration"}); err != nil {
		os.Remove(f.Name())
		return nil, nil, "", "", err
	}
	return spec, p, "calibration now", f.Name(), nil
}

// Validate runs every case: the real binary bin runs times per case, in
// rounds (one run of every case, then the next round), so that a machine
// whose speed drifts during the validation (a VM's neighbours, frequency)
// shifts every case alike rather than the cases run last; then, with no
// real run beside it, the simulated hackbench once per seed (base.Seed and
// the seeds-1 after it; each is deterministic) through the run pipeline
// (sim.Run) with base's machine, kernel and run options. progress, when
// not nil, is called after each real run and each simulation with the
// fraction done.
func Validate(bin string, cases []HackbenchCase, runs, seeds int, base sim.Config, progress func(frac float64)) ([]HackbenchResult, error) {
	out := make([]HackbenchResult, len(cases))
	total, done := float64(len(cases)*(runs+seeds)), 0.0
	step := func() {
		done++
		if progress != nil {
			progress(done / total)
		}
	}
	for i, c := range cases {
		out[i].HackbenchCase = c
	}
	for range runs {
		for i, c := range cases {
			t, err := RunRealHackbench(bin, c.Args())
			if err != nil {
				return nil, err
			}
			out[i].Real = append(out[i].Real, t)
			step()
		}
	}
	for i, c := range cases {
		for s := range seeds {
			cfg := base
			cfg.Seed = base.Seed + uint64(s)
			t, err := simulate(cfg, c.Args())
			if err != nil {
				out[i].Sim, out[i].SimErr = nil, err
				break
			}
			out[i].Sim = append(out[i].Sim, t)
			step()
		}
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
