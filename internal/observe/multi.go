package observe

import "github.com/schedlab/schedlab/internal/trace"

// Multi writes every event to each writer.
type Multi []trace.Writer

// Write implements trace.Writer.
func (m Multi) Write(ev trace.Event) error {
	for _, w := range m {
		if err := w.Write(ev); err != nil {
			return err
		}
	}
	return nil
}

// Close closes every writer, returning the first error.
func (m Multi) Close() error {
	var first error
	for _, w := range m {
		if err := w.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}
