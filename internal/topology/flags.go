package topology

import (
	"fmt"
	"strings"

	"github.com/schedlab/schedlab/internal/kernels"
)

// kernelFlags is the sd_flags.h layout of the named baseline (v6.19's for
// an unknown name: Build has rejected those already).
func kernelFlags(kernel string) kernels.FlagLayout {
	if b, err := kernels.Lookup(kernel); err == nil {
		return b.Flags
	}
	return kernels.FlagsV619
}

// Flags is a sched_domain's flags word (struct sched_domain::flags). The bit
// values are those of v6.19 (include/linux/sched/sd_flags.h, in declaration
// order); FlagNames and FlagsHex translate them for an older baseline.
type Flags uint32

// The SD_* flags, v6.19 bit values.
const (
	SDBalanceNewidle       Flags = 0x1    // SD_BALANCE_NEWIDLE
	SDBalanceExec          Flags = 0x2    // SD_BALANCE_EXEC
	SDBalanceFork          Flags = 0x4    // SD_BALANCE_FORK
	SDBalanceWake          Flags = 0x8    // SD_BALANCE_WAKE
	SDWakeAffine           Flags = 0x10   // SD_WAKE_AFFINE
	SDAsymCPUCapacity      Flags = 0x20   // SD_ASYM_CPUCAPACITY
	SDAsymCPUCapacityFull  Flags = 0x40   // SD_ASYM_CPUCAPACITY_FULL
	SDShareCPUCapacity     Flags = 0x80   // SD_SHARE_CPUCAPACITY
	SDCluster              Flags = 0x100  // SD_CLUSTER (v6.8+; the CFS baselines set it only with Options.ClusterFlag, the sis-cluster variant)
	SDShareLLC             Flags = 0x200  // SD_SHARE_LLC (SD_SHARE_PKG_RESOURCES before v6.10)
	SDSerialize            Flags = 0x400  // SD_SERIALIZE
	SDAsymPacking          Flags = 0x800  // SD_ASYM_PACKING
	SDPreferSibling        Flags = 0x1000 // SD_PREFER_SIBLING
	SDNuma                 Flags = 0x2000 // SD_NUMA
	allFlags               Flags = 0x3fff
	sdDegenerateGroupsMask       = allFlags &^ SDWakeAffine // flags with SDF_NEEDS_GROUPS
	sdSharedChildMask            = SDBalanceNewidle | SDBalanceExec | SDBalanceFork | SDBalanceWake | SDWakeAffine | SDShareCPUCapacity | SDShareLLC
)

// flagInfo lists each flag in bit order with its name and bit value per
// baseline. A zero value means the baseline has no such flag.
var flagInfo = []struct {
	flag            Flags
	name, old       string // v6.19 name, v6.0 and v5.12 name
	v619, v60, v512 uint32
}{
	{SDBalanceNewidle, "SD_BALANCE_NEWIDLE", "SD_BALANCE_NEWIDLE", 0x1, 0x1, 0x1},
	{SDBalanceExec, "SD_BALANCE_EXEC", "SD_BALANCE_EXEC", 0x2, 0x2, 0x2},
	{SDBalanceFork, "SD_BALANCE_FORK", "SD_BALANCE_FORK", 0x4, 0x4, 0x4},
	{SDBalanceWake, "SD_BALANCE_WAKE", "SD_BALANCE_WAKE", 0x8, 0x8, 0x8},
	{SDWakeAffine, "SD_WAKE_AFFINE", "SD_WAKE_AFFINE", 0x10, 0x10, 0x10},
	{SDAsymCPUCapacity, "SD_ASYM_CPUCAPACITY", "SD_ASYM_CPUCAPACITY", 0x20, 0x20, 0x20},
	{SDAsymCPUCapacityFull, "SD_ASYM_CPUCAPACITY_FULL", "SD_ASYM_CPUCAPACITY_FULL", 0x40, 0x40, 0},
	{SDShareCPUCapacity, "SD_SHARE_CPUCAPACITY", "SD_SHARE_CPUCAPACITY", 0x80, 0x80, 0x40},
	{SDCluster, "SD_CLUSTER", "", 0x100, 0, 0},
	{SDShareLLC, "SD_SHARE_LLC", "SD_SHARE_PKG_RESOURCES", 0x200, 0x100, 0x80},
	{SDSerialize, "SD_SERIALIZE", "SD_SERIALIZE", 0x400, 0x200, 0x100},
	{SDAsymPacking, "SD_ASYM_PACKING", "SD_ASYM_PACKING", 0x800, 0x400, 0x200},
	{SDPreferSibling, "SD_PREFER_SIBLING", "SD_PREFER_SIBLING", 0x1000, 0x800, 0x400},
	{SDNuma, "SD_NUMA", "SD_NUMA", 0x2000, 0x2000, 0x1000},
}

// SD_OVERLAP sits between SD_PREFER_SIBLING and SD_NUMA in v6.0 (0x1000)
// and v5.12 (0x800). It is set exactly on the levels that carry SD_NUMA
// (SDTL_OVERLAP levels), so the internal Flags has no bit for it: it is
// derived when rendering.
const (
	overlapV60  = 0x1000
	overlapV512 = 0x800
)

// FlagNames returns the names of the set flags in the kernel's bit order, as
// the given baseline spells them: for v6.0 and v5.12, SD_SHARE_LLC is
// printed as SD_SHARE_PKG_RESOURCES, SD_CLUSTER does not exist and
// SD_OVERLAP appears on NUMA levels; v5.12 has no SD_ASYM_CPUCAPACITY_FULL.
func FlagNames(f Flags, kernel string) []string {
	var out []string
	layout := kernelFlags(kernel)
	old := layout != kernels.FlagsV619
	for _, fi := range flagInfo {
		if old && fi.flag == SDNuma && f&SDNuma != 0 {
			out = append(out, "SD_OVERLAP")
		}
		if f&fi.flag == 0 {
			continue
		}
		switch {
		case !old:
			out = append(out, fi.name)
		case layout == kernels.FlagsV512 && fi.v512 == 0:
		case fi.old != "":
			out = append(out, fi.old)
		}
	}
	return out
}

// FlagsValue returns the flags word as the baseline's kernel would hold it
// (its own bit values), e.g. what /proc/sys/kernel/sched_domain/.../flags or
// debugfs prints.
func FlagsValue(f Flags, kernel string) uint32 {
	var v uint32
	layout := kernelFlags(kernel)
	for _, fi := range flagInfo {
		if f&fi.flag == 0 {
			continue
		}
		switch layout {
		case kernels.FlagsV60:
			v |= fi.v60
		case kernels.FlagsV512:
			v |= fi.v512
		default:
			v |= fi.v619
		}
	}
	if f&SDNuma != 0 {
		switch layout {
		case kernels.FlagsV60:
			v |= overlapV60
		case kernels.FlagsV512:
			v |= overlapV512
		}
	}
	return v
}

// FlagsString renders flags as "SD_A|SD_B" for the baseline; "0" when none.
func FlagsString(f Flags, kernel string) string {
	n := FlagNames(f, kernel)
	if len(n) == 0 {
		return "0"
	}
	return strings.Join(n, "|")
}

// String renders the flags with v6.19 names.
func (f Flags) String() string { return FlagsString(f, kernels.V619) }

// flagsHex is the baseline's value as "0x%x".
func flagsHex(f Flags, kernel string) string { return fmt.Sprintf("0x%x", FlagsValue(f, kernel)) }
