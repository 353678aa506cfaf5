package fidelity

import (
	"os/exec"
	"runtime/debug"
	"strings"
)

// GeneratedDoc is the file `fidelity --markdown` is redirected into; its
// own change does not make the tree count as modified.
const GeneratedDoc = "docs/fidelity.md"

// Commit names the schedlab commit results are made on: the binary's
// vcs.revision when the build stamped one (go build -buildvcs), else the
// HEAD of the git work tree around the current directory; "-modified" is
// added when the build or the tree had uncommitted changes (other than
// docs/fidelity.md itself, which the shell truncates before the command
// writes it). It is "" when neither is known.
func Commit() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		var rev, modified string
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				modified = s.Value
			}
		}
		if rev != "" {
			if modified == "true" {
				rev += "-modified"
			}
			return rev
		}
	}
	out, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		return ""
	}
	rev := strings.TrimSpace(string(out))
	top, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		return rev
	}
	st, err := exec.Command("git", "-C", strings.TrimSpace(string(top)), "status", "--porcelain", "--untracked-files=no", "--", ".", ":(exclude)"+GeneratedDoc).Output()
	if err != nil || len(strings.TrimSpace(string(st))) > 0 {
		rev += "-modified"
	}
	return rev
}
