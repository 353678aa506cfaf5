package sim

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// CheckOutputFile checks, before any simulation starts, that path can be
// written as a file, so that a long run never ends in "cannot write". It
// creates nothing: the parent directory must exist and take a new file,
// and an existing path must be a writable file. flag names the option in
// the error ("--json").
func CheckOutputFile(flag, path string) error {
	if path == "" {
		return nil
	}
	if st, err := os.Stat(path); err == nil {
		if st.IsDir() {
			return fmt.Errorf("%s %s: is a directory, not a file", flag, path)
		}
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			return fmt.Errorf("%s %s: cannot be written: %v", flag, path, unwrap(err))
		}
		return f.Close()
	}
	dir := filepath.Dir(path)
	st, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("%s %s: directory %s does not exist", flag, path, dir)
	}
	if !st.IsDir() {
		return fmt.Errorf("%s %s: %s is not a directory", flag, path, dir)
	}
	return probeDir(flag, path, dir)
}

// CheckOutputDir checks that dir can be created (or exists) and take new
// files; like CheckOutputFile it leaves nothing behind.
func CheckOutputDir(flag, dir string) error {
	if dir == "" {
		return nil
	}
	d := dir
	for {
		st, err := os.Stat(d)
		if err == nil {
			if !st.IsDir() {
				return fmt.Errorf("%s %s: %s is not a directory", flag, dir, d)
			}
			return probeDir(flag, dir, d)
		}
		parent := filepath.Dir(d)
		if parent == d {
			return fmt.Errorf("%s %s: %v", flag, dir, unwrap(err))
		}
		d = parent
	}
}

// probeDir creates and removes a file in dir: the one reliable test that
// a directory takes new files (permissions, read-only mounts, /proc).
func probeDir(flag, path, dir string) error {
	f, err := os.CreateTemp(dir, ".schedlab-probe-*")
	if err != nil {
		return fmt.Errorf("%s %s: cannot create files in %s: %v", flag, path, dir, unwrap(err))
	}
	name := f.Name()
	f.Close()
	return os.Remove(name)
}

func unwrap(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
