// Package fileerr is how every parser of a user's file reports a mistake:
// one error type, printed FILE:LINE: message, and the one YAML reader,
// which turns yaml.v3's syntax errors into that type at the line they are
// on. It imports only the standard library and yaml.v3, so that any layer
// can use it.
package fileerr

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// Error is a mistake in a file, at a line (1-based).
type Error struct {
	File string
	Line int
	Msg  string
}

func (e *Error) Error() string { return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg) }

// Errorf is a mistake in file at line; a line below 1 (unknown) is 1.
func Errorf(file string, line int, format string, args ...any) *Error {
	return &Error{File: file, Line: max(1, line), Msg: fmt.Sprintf(format, args...)}
}

// AtNode is a mistake in file at n's line (1 when n is nil or has none).
func AtNode(file string, n *yaml.Node, format string, args ...any) *Error {
	line := 1
	if n != nil {
		line = n.Line
	}
	return Errorf(file, line, format, args...)
}

var yamlLineRE = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// parserErrors are the problems yaml.v3's parser (as opposed to its
// scanner) reports, all of them (parserc.go). yaml.v3 prints the 0-based
// line of a parser error and the 1-based line of a scanner error (see
// parser.fail in its decode.go), so only these are moved down a line.
var parserErrors = map[string]bool{
	"did not find expected <stream-start>":   true,
	"did not find expected <document start>": true,
	"did not find expected node content":     true,
	"did not find expected key":              true,
	"did not find expected '-' indicator":    true,
	"did not find expected ',' or ']'":       true,
	"did not find expected ',' or '}'":       true,
	"found undefined tag handle":             true,
	"found duplicate %YAML directive":        true,
	"found incompatible YAML document":       true,
	"found duplicate %TAG directive":         true,
}

// ReadYAML parses a YAML document of file and returns its root node, or
// nil when the document is empty. Aliases are refused anywhere in the
// tree ("YAML aliases (*x) are not supported in " + what, e.g. "machine
// files"): no file needs them, and they would let a small file expand into
// a huge one. Every error is an *Error at a line of data.
func ReadYAML(file string, data []byte, what string) (*yaml.Node, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, syntaxError(file, data, err)
	}
	if len(doc.Content) == 0 {
		return nil, nil
	}
	root := doc.Content[0]
	if err := noAlias(file, root, what); err != nil {
		return nil, err
	}
	return root, nil
}

// syntaxError is yaml.v3's err as an *Error at its 1-based line, within
// data's lines.
func syntaxError(file string, data []byte, err error) *Error {
	msg := strings.TrimSpace(err.Error())
	line := 1
	if m := yamlLineRE.FindStringSubmatch(msg); m != nil {
		line, _ = strconv.Atoi(m[1])
		msg = m[2]
		if parserErrors[msg] {
			line++
		}
	} else {
		msg = strings.TrimPrefix(msg, "yaml: ")
	}
	// yaml.v3 also breaks lines at U+0085, U+2028 and U+2029, which no
	// editor does: keep the line within the file.
	line = min(line, LineCount(data))
	return &Error{File: file, Line: max(1, line), Msg: msg}
}

// LineCount is the number of lines of data as an editor counts them: a
// line break is \r\n, \r or \n, and the text after the last break (empty
// or not) is a line.
func LineCount(data []byte) int {
	n := 1
	for i := 0; i < len(data); i++ {
		switch data[i] {
		case '\n':
			n++
		case '\r':
			n++
			if i+1 < len(data) && data[i+1] == '\n' {
				i++
			}
		}
	}
	return n
}

func noAlias(file string, n *yaml.Node, what string) error {
	if n.Kind == yaml.AliasNode {
		return AtNode(file, n, "YAML aliases (*%s) are not supported in %s", n.Value, what)
	}
	for _, c := range n.Content {
		if err := noAlias(file, c, what); err != nil {
			return err
		}
	}
	return nil
}
