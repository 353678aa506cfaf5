package tbench

import (
	"strings"
	"testing"
)

// The operation cycle keeps client.txt's proportions.
func TestSequence(t *testing.T) {
	n := map[int]int{}
	for _, i := range sequence {
		n[i]++
	}
	if len(sequence) != 4586 || n[12] != 1242 || n[0] != 792 || n[4] != 0 {
		t.Fatalf("cycle of %d: ReadX %d NTCreateX %d Deltree %d", len(sequence), n[12], n[0], n[4])
	}
	// Smoothly interleaved: no operation repeats more than a few times in a row.
	run := 1
	for i := 1; i < len(sequence); i++ {
		if sequence[i] == sequence[i-1] {
			run++
			if run > 3 {
				t.Fatalf("%s repeated %d times at %d", opTable[sequence[i]].Name, run, i)
			}
		} else {
			run = 1
		}
	}
}

func TestParse(t *testing.T) {
	c, err := Parse([]string{"-t", "60", "16", "127.0.0.1"})
	if err != nil || c.Clients != 16 || c.TimeLimit != 60 || c.Warmup != 12 || c.Server != "127.0.0.1" {
		t.Fatalf("%+v %v", c, err)
	}
	for _, a := range []string{"", "-t 0 1", "x", "-F 4", "-c other.txt 4", "1 2 3"} {
		if _, err := Parse(strings.Fields(a)); err == nil || !strings.HasPrefix(err.Error(), "tbench: ") {
			t.Errorf("%q: %v", a, err)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add("-t 60 16 localhost")
	f.Add("--timelimit=5 -T x 1")
	f.Fuzz(func(t *testing.T, s string) {
		c, err := Parse(strings.Fields(s))
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("multi-line error %q", err)
			}
			return
		}
		if c.Clients <= 0 || c.TimeLimit <= 0 || c.Warmup < 0 {
			t.Fatalf("accepted %+v", c)
		}
	})
}
