package fileerr

import (
	"errors"
	"testing"
)

// yaml.v3's syntax errors land on the line of the mistake: parser errors
// (reported 0-based) and scanner errors (1-based) alike, and an error at
// the end of the input on its last line.
func TestReadYAMLErrors(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{"a: &x 1\nb: *x\n", "c.yaml:2: YAML aliases (*x) are not supported in test files"},
		{"a: [1, &x 2]\nb:\n  - [*x]\n", "c.yaml:3: YAML aliases (*x) are not supported in test files"},
		{"a: [1\n", "c.yaml:2: did not find expected ',' or ']'"},
		{"a: {b: 1\n", "c.yaml:2: did not find expected ',' or '}'"},
		{"a:\n  b: 1\n c: 2\n", "c.yaml:3: did not find expected key"},
		{"- a\nb: 1\n", "c.yaml:2: did not find expected '-' indicator"},
		{"a: b\n\tc: d\n", "c.yaml:2: found a tab character that violates indentation"},
		{"\n\na: \"\\q\"\n", "c.yaml:3: found unknown escape character"},
		{"a: b: c\n", "c.yaml:1: mapping values are not allowed in this context"},
		{"a: !x!y 1\n", "c.yaml:1: found undefined tag handle"},
		{"%YAML 1.1\n%YAML 1.1\n---\na\n", "c.yaml:2: found duplicate %YAML directive"},
		{"\xff", "c.yaml:1: invalid leading UTF-8 octet"},
		// The end of the input: a quoted string left open after a bare
		// \r (the fuzzer's find), and after line breaks only yaml.v3
		// counts (U+2028).
		{"\"\r", "c.yaml:2: found unexpected end of stream"},
		{"a: 'x", "c.yaml:1: found unexpected end of stream"},
		{"# x\u2028\u2028\u2028\na: [", "c.yaml:2: did not find expected node content"},
	} {
		_, err := ReadYAML("c.yaml", []byte(tc.src), "test files")
		var fe *Error
		if !errors.As(err, &fe) || err.Error() != tc.want {
			t.Errorf("%q: got %v, want %s", tc.src, err, tc.want)
		}
	}
	for _, src := range []string{"", "# only a comment\n", "\n\n"} {
		if n, err := ReadYAML("c.yaml", []byte(src), "test files"); n != nil || err != nil {
			t.Errorf("%q: %v %v, want an empty document", src, n, err)
		}
	}
	if n, err := ReadYAML("c.yaml", []byte("x: 0\na: &y 1\n"), "test files"); err != nil || n == nil || n.Line != 1 || n.Content[3].Anchor != "y" {
		t.Errorf("a mapping with an anchor and no alias: %v %v", n, err)
	}
}

func TestErrorf(t *testing.T) {
	if got := Errorf("f.yaml", 0, "no %s", "line").Error(); got != "f.yaml:1: no line" {
		t.Errorf("line 0: %s", got)
	}
	if got := AtNode("f.yaml", nil, "x").Error(); got != "f.yaml:1: x" {
		t.Errorf("nil node: %s", got)
	}
}

func TestLineCount(t *testing.T) {
	for s, want := range map[string]int{"": 1, "a": 1, "a\n": 2, "a\r\nb": 2, "a\rb\r": 3, "\n\r\n\r": 4} {
		if got := LineCount([]byte(s)); got != want {
			t.Errorf("%q: %d lines, want %d", s, got, want)
		}
	}
}

// FuzzReadYAML: every error is an *Error on a line of the input.
func FuzzReadYAML(f *testing.F) {
	for _, s := range []string{"a: [1\n", "\"\r", "a: &x 1\nb: *x\n", "a:\n  b: 1\n c: 2\n", "# x\u2028\n{", "a: |\n  x\u0085\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		_, err := ReadYAML("f.yaml", data, "fuzz files")
		if err == nil {
			return
		}
		var fe *Error
		if !errors.As(err, &fe) {
			t.Fatalf("%T %v: not an *Error", err, err)
		}
		if lines := LineCount(data); fe.Line < 1 || fe.Line > lines {
			t.Fatalf("line %d of a %d-line input: %v", fe.Line, lines, err)
		}
	})
}
