package cli

import (
	"io"
	"os"
)

// isTerminal reports whether w is a character device (a terminal), so that
// progress output is shown on terminals and omitted when piped.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	if err != nil {
		return false
	}
	return st.Mode()&os.ModeCharDevice != 0
}
