package topology

import (
	"fmt"

	"github.com/schedlab/schedlab/internal/cpumask"
)

// Numbering is how Linux numbers the hardware threads of a regular machine.
type Numbering string

const (
	// NumberingX86: all first threads of every core first, then all second
	// threads: the SMT siblings of CPU n are n+ncores, n+2·ncores, ...
	// (x86 ACPI MADT order).
	NumberingX86 Numbering = "x86"
	// NumberingSequential: the threads of a core are adjacent (device-tree
	// and PPTT order on arm64, POWER).
	NumberingSequential Numbering = "sequential"
)

// Scope names the unit a per-unit property (such as a frequency domain)
// follows.
type Scope string

// Scopes for frequency domains.
const (
	ScopeCPU     Scope = "cpu"
	ScopeCore    Scope = "core"
	ScopeCluster Scope = "cluster"
	ScopeLLC     Scope = "llc"
	ScopeNode    Scope = "node"
	ScopeSocket  Scope = "socket"
	ScopeMachine Scope = "machine"
)

var scopes = []Scope{ScopeCPU, ScopeCore, ScopeCluster, ScopeLLC, ScopeNode, ScopeSocket, ScopeMachine}

// Regular describes a machine made of identical parts: sockets of nodes of
// LLCs of (optionally) clusters of cores of threads. Spec expands it into
// per-CPU records with Linux's numbering.
type Regular struct {
	Name, Description string
	Arch              Arch
	Sockets           int
	NodesPerSocket    int
	LLCsPerNode       int
	// ClustersPerLLC is the number of clusters (CPUs sharing an L2 or an
	// L3 tag) per LLC; 0 means there are none beyond the core itself.
	ClustersPerLLC int
	// CoresPerCluster is used when ClustersPerLLC > 0, CoresPerLLC
	// otherwise.
	CoresPerCluster int
	CoresPerLLC     int
	ThreadsPerCore  int
	Numbering       Numbering
	Distance        [][]int
	// Capacity of every CPU (default 1024), MaxFreqKHz of every CPU.
	Capacity    int
	MaxFreqKHz  int
	FreqDomains Scope // default ScopeCPU
	IdleStates  []IdleState
}

// NrCPUs is the number of CPUs the description expands to, or -1 if it is
// larger than MaxCPUs or a count is not positive.
func (r *Regular) NrCPUs() int {
	cores := r.CoresPerLLC
	if r.ClustersPerLLC > 0 {
		cores = r.ClustersPerLLC * r.CoresPerCluster
		if r.CoresPerCluster <= 0 {
			return -1
		}
	}
	n := 1
	for _, f := range []int{r.Sockets, r.NodesPerSocket, r.LLCsPerNode, cores, r.ThreadsPerCore} {
		if f <= 0 || f > MaxCPUs {
			return -1
		}
		n *= f
		if n > MaxCPUs {
			return -1
		}
	}
	return n
}

// Spec expands the description. The result is not validated.
func (r *Regular) Spec() (*MachineSpec, error) {
	n := r.NrCPUs()
	if n < 0 {
		return nil, fmt.Errorf("the counts must be positive and give at most %d CPUs", MaxCPUs)
	}
	clusters := r.ClustersPerLLC
	coresPerCluster := r.CoresPerCluster
	if clusters <= 0 {
		clusters, coresPerCluster = 1, r.CoresPerLLC
	}
	threads := r.ThreadsPerCore
	ncores := n / threads
	numbering := r.Numbering
	if numbering == "" {
		numbering = NumberingX86
		if r.Arch == ArchARM64 {
			numbering = NumberingSequential
		}
	}
	capacity := r.Capacity
	if capacity == 0 {
		capacity = 1024
	}
	arch := r.Arch
	if arch == "" {
		arch = ArchX86
	}
	s := &MachineSpec{
		Name:        r.Name,
		Description: r.Description,
		Arch:        arch,
		CPUs:        make([]CPUSpec, n),
		Distance:    r.Distance,
		IdleStates:  r.IdleStates,
	}
	if s.Distance == nil && r.Sockets*r.NodesPerSocket == 1 {
		s.Distance = [][]int{{10}}
	}
	g, llc, cluster := 0, 0, 0
	for sock := range r.Sockets {
		for nd := range r.NodesPerSocket {
			for range r.LLCsPerNode {
				for range clusters {
					for range coresPerCluster {
						for t := range threads {
							cpu := t*ncores + g
							if numbering == NumberingSequential {
								cpu = g*threads + t
							}
							clusterID := g
							if r.ClustersPerLLC > 0 {
								clusterID = cluster
							}
							s.CPUs[cpu] = CPUSpec{
								CPU:        cpumask.CPU(cpu),
								Core:       g,
								Cluster:    clusterID,
								LLC:        llc,
								Package:    sock,
								Node:       sock*r.NodesPerSocket + nd,
								Capacity:   capacity,
								MaxFreqKHz: r.MaxFreqKHz,
							}
						}
						g++
					}
					cluster++
				}
				llc++
			}
		}
	}
	scope := r.FreqDomains
	if scope == "" {
		scope = ScopeCPU
	}
	if err := SetFreqDomains(s, scope); err != nil {
		return nil, err
	}
	return s, nil
}

// SetFreqDomains gives every CPU the frequency domain of its scope unit.
func SetFreqDomains(s *MachineSpec, scope Scope) error {
	for i := range s.CPUs {
		c := &s.CPUs[i]
		switch scope {
		case ScopeCPU:
			c.FreqDomain = i
		case ScopeCore:
			c.FreqDomain = c.Core
		case ScopeCluster:
			c.FreqDomain = c.Cluster
		case ScopeLLC:
			c.FreqDomain = c.LLC
		case ScopeNode:
			c.FreqDomain = c.Node
		case ScopeSocket:
			c.FreqDomain = c.Package
		case ScopeMachine:
			c.FreqDomain = 0
		default:
			return fmt.Errorf("unknown frequency-domain scope %q (want one of %v)", scope, scopes)
		}
	}
	return nil
}

// SocketDistances builds a distance matrix for nodes numbered socket-major:
// 10 on the diagonal, sameSocket between nodes of one socket, otherSocket
// across sockets.
func SocketDistances(sockets, nodesPerSocket, sameSocket, otherSocket int) [][]int {
	n := sockets * nodesPerSocket
	d := make([][]int, n)
	for a := range n {
		d[a] = make([]int, n)
		for b := range n {
			switch {
			case a == b:
				d[a][b] = 10
			case a/nodesPerSocket == b/nodesPerSocket:
				d[a][b] = sameSocket
			default:
				d[a][b] = otherSocket
			}
		}
	}
	return d
}
