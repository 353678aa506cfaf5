package kobj

import (
	"github.com/schedlab/schedlab/internal/engine"
	"github.com/schedlab/schedlab/internal/sched"
)

// File is the part of a struct file that a system call on one of its
// descriptors writes when the caller's descriptor table is shared: the
// reference count f_count. fs/file.c's __fget_light (v5.12–v6.19) lets a
// task whose files_struct has one user borrow the file without touching
// it; a thread of a process with several takes a reference
// (__fget_files: get_file_rcu, from v6.13 file_ref_get) and fdput drops it
// (fput), two atomic operations on one line that every thread calling on
// that file moves to its CPU. hackbench -T's twenty senders of a group
// write through one write end per receiver, so that line follows them.
type File struct {
	ref lines
}

// Get is fdget and fdput of the file by the current task, whose table is
// shared: it returns what they cost on this CPU, fget (fget_shared_ns)
// and the f_count line's transfer from the CPU that took the last
// reference (model_kobj_lines). Nothing when the run does not model
// shared tables (Settings.SharedFdTable). A caller with a private table
// does not call it.
func (f *File) Get(k *sched.Kernel, fget engine.Time) engine.Time {
	if !k.S.SharedFdTable {
		return 0
	}
	cpu := k.ThisCPU()
	line := f.ref.cost(k, cpu, 1, 0)
	f.ref.wrote(cpu, false)
	k.Account(sched.CostSyscall, fget)
	k.Account(sched.CostKobjLines, line)
	return fget + line
}
