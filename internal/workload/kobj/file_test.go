package kobj

import (
	"testing"

	"github.com/schedlab/schedlab/internal/cpumask"
	"github.com/schedlab/schedlab/internal/engine"
)

// TestFileGet follows a struct file's f_count line between the CPUs of
// threads that share a descriptor table, with the zen3 preset's line costs
// (17 ns inside a CCX, 80 ns to another CCX, 190 ns to the other socket;
// CPUs 0-7 are the first CCX, 128 CPU 0's SMT sibling, 16 another CCX,
// 64 socket 1) and fget = 23 ns:
//
//   - the first reference from CPU 0 pays fget only (nobody held the line);
//   - CPU 0 again, and its sibling 128: fget only;
//   - CPU 1 (same CCX) fget + 17, CPU 16 fget + 80, CPU 64 fget + 190;
//   - without model_shared_fdtable nothing; without model_kobj_lines fget.
func TestFileGet(t *testing.T) {
	k := zen3Kernel(t)
	k.S.KobjLines, k.S.SharedFdTable = true, true
	const fget = 23
	var f File
	steps := []struct {
		cpu  int
		want engine.Time
	}{
		{0, fget}, {0, fget}, {128, fget}, {1, fget + 17}, {16, fget + 80}, {64, fget + 190}, {64, fget}, {0, fget + 190},
	}
	for i, s := range steps {
		k.SetThisCPU(cpumask.CPU(s.cpu))
		if got := f.Get(k, fget); got != s.want {
			t.Errorf("step %d, CPU %d: %d ns, want %d", i, s.cpu, got, s.want)
		}
	}
	k.SetThisCPU(16)
	k.S.KobjLines = false
	if got := f.Get(k, fget); got != fget {
		t.Errorf("without model_kobj_lines: %d ns, want fget %d", got, fget)
	}
	k.S.KobjLines, k.S.SharedFdTable = true, false
	k.SetThisCPU(64)
	if got := f.Get(k, fget); got != 0 {
		t.Errorf("without model_shared_fdtable: %d ns, want 0", got)
	}
}
