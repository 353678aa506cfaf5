package report

// This test binary links package golden so that it knows -rewrite, and
// go test ./... -rewrite runs here too.
import _ "github.com/schedlab/schedlab/internal/golden"
