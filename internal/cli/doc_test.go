package cli

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode"

	"github.com/spf13/cobra"

	"github.com/schedlab/schedlab/internal/experiment"
	"github.com/schedlab/schedlab/internal/testutil"
)

// The docs test: every shell command of README.md, CONTRIBUTING.md and
// docs/*.md runs, so that no document names a flag, kernel or output that
// schedlab no longer has. CONTRIBUTING.md ("The docs test") is the
// reference for writers; in short:
//
//   - Commands are the lines of fenced code blocks (info string empty,
//     sh, shell, bash or console) that start with `schedlab `, `$
//     schedlab ` or `go run ./cmd/schedlab `; a trailing backslash
//     continues a line, `#` starts a comment, `> FILE` sends stdout to
//     FILE. In a block whose commands start with `$ `, the lines after a
//     command are its output. Other commands (go test, git, sbatch) are
//     not run.
//   - Each runs in-process through Main, the document's commands in
//     order in one temporary directory: a relative path names a file
//     there when an earlier command or block made it, else a file of the
//     repository if there is one, else (a word with a letter and a /, or
//     a file extension) a new file there. The documents run in parallel.
//   - A command must exit 0, its output lines (if the block shows them)
//     must appear in its output in order.
//   - An HTML comment `<!-- doc-test: KIND ARGS -->` directly before a
//     block (blank lines between allowed) changes that: see docMarkerKinds.
//
// A schedlab command in an indented code block is an error: put it in a
// fence, so that it runs.

// docMarkerKinds are the markers a document may put before a block.
var docMarkerKinds = map[string]string{
	"skip":     "skip REASON: the block's commands do not run (calibrate, Slurm); the reason is required",
	"synopsis": "synopsis: the block is a usage synopsis with placeholders, not commands; each schedlab line must hold one ([...], ..., or an upper-case word)",
	"shorten":  "shorten FLAG VALUE...: in each command of the block the k-th FLAG's value becomes the k-th VALUE given for it, or FLAG VALUE is added after the subcommand if it has that flag and the command lacks it; its output is not checked",
	"file":     "file NAME: the block's text is written to NAME in the document's directory before its first command runs (a machine, costs or experiment file the commands read)",
	"output":   "output: the block is (lines of) the previous command's stdout, checked in order; a line '...' stands for lines left out",
	"stderr":   "stderr: as output, for the previous command's stderr",
	"exit":     "exit N: the block's commands must exit with status N",
	"needs":    "needs PATH: the block runs only where PATH (from the repository's root) exists; where it does not the block is skipped, except in CI, where that fails (testutil.Need)",
}

// maxDocSkips bounds the blocks the documents skip: skips are for what
// cannot run in a test (the host's hardware, a Slurm cluster), not for
// what is slow (shorten it).
const maxDocSkips = 6

type docMarker struct {
	line int
	kind string
	arg  string
}

type docBlock struct {
	line    int // of the opening fence, from 1
	info    string
	text    []string // between the fences, without the fence's indent
	markers []docMarker
}

func (b *docBlock) marker(kind string) (docMarker, bool) {
	for _, m := range b.markers {
		if m.kind == kind {
			return m, true
		}
	}
	return docMarker{}, false
}

// docCommand is one command of a block: its text (continuations joined,
// without `$ ` and the comment) and the output lines shown after it.
type docCommand struct {
	line     int
	text     string
	schedlab bool // else another program's, not run
	output   []string
}

var (
	docMarkerRE = regexp.MustCompile(`^<!-- doc-test: (\w+)\s*(.*?)\s*-->$`)
	docFenceRE  = regexp.MustCompile("^( *)```\\s*([\\w-]*)")
	docShellRE  = regexp.MustCompile(`^(sh|shell|bash|console)?$`)
	placeholder = regexp.MustCompile(`\[|\.\.\.|…|\b[A-Z][A-Z_]{2,}\b`)
)

// parseDoc reads a markdown file's fenced blocks with the markers before
// them. Errors: a marker not before a block, an unknown marker, a
// schedlab command outside a fence.
func parseDoc(path, name string, subcommands map[string]bool) ([]*docBlock, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	lines := strings.Split(string(data), "\n")
	var blocks []*docBlock
	var pending []docMarker
	inComment := false
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		trimmed := strings.TrimSpace(line)
		where := fmt.Sprintf("%s:%d", name, i+1)
		switch {
		case inComment:
			inComment = !strings.Contains(line, "-->")
			continue
		case strings.HasPrefix(trimmed, "<!-- doc-test:"):
			m := docMarkerRE.FindStringSubmatch(trimmed)
			if m == nil {
				return nil, fmt.Errorf("%s: write a marker on one line: <!-- doc-test: KIND ARGS -->", where)
			}
			if _, ok := docMarkerKinds[m[1]]; !ok {
				return nil, fmt.Errorf("%s: unknown doc-test marker %q (CONTRIBUTING.md lists them)", where, m[1])
			}
			pending = append(pending, docMarker{line: i + 1, kind: m[1], arg: m[2]})
			continue
		case strings.HasPrefix(trimmed, "<!--"):
			inComment = !strings.Contains(trimmed, "-->")
			if len(pending) > 0 {
				return nil, fmt.Errorf("%s: a comment between a doc-test marker and its block", where)
			}
			continue
		}
		if f := docFenceRE.FindStringSubmatch(line); f != nil {
			b := &docBlock{line: i + 1, info: f[2], markers: pending}
			pending = nil
			indent := len(f[1])
			for i++; i < len(lines) && !strings.HasPrefix(strings.TrimSpace(lines[i]), "```"); i++ {
				l := lines[i]
				l = l[min(indent, len(l)-len(strings.TrimLeft(l, " "))):]
				b.text = append(b.text, l)
			}
			if i == len(lines) {
				return nil, fmt.Errorf("%s:%d: a fence that does not close", name, b.line)
			}
			blocks = append(blocks, b)
			continue
		}
		if trimmed == "" {
			continue
		}
		if len(pending) > 0 {
			return nil, fmt.Errorf("%s:%d: doc-test marker not directly before a code block", name, pending[0].line)
		}
		if strings.HasPrefix(line, "    ") && isDocCommand(trimmed, subcommands) {
			return nil, fmt.Errorf("%s: a schedlab command in an indented block: put it in a fenced sh block, so that the docs test runs it", where)
		}
	}
	return blocks, nil
}

var docPrefixes = []string{"$ ", "go run ./cmd/schedlab "}

// isDocCommand reports whether s is a schedlab command line: `schedlab
// SUBCOMMAND ...`, perhaps after `$ `, or `go run ./cmd/schedlab ...`.
func isDocCommand(s string, subcommands map[string]bool) bool {
	s = strings.TrimPrefix(s, "$ ")
	if strings.HasPrefix(s, "go run ./cmd/schedlab ") {
		return true
	}
	f := strings.Fields(s)
	return len(f) >= 2 && f[0] == "schedlab" && subcommands[f[1]]
}

// commands splits a shell block into its commands. A block is a shell
// block if its info string says so, or it is unmarked and holds a
// schedlab command.
func (b *docBlock) commands(subcommands map[string]bool) []docCommand {
	if !docShellRE.MatchString(b.info) {
		return nil
	}
	dollar, hasCommand := false, false
	for _, l := range b.text {
		dollar = dollar || strings.HasPrefix(l, "$ ")
		hasCommand = hasCommand || isDocCommand(strings.TrimSpace(l), subcommands)
	}
	if b.info == "" && !hasCommand && !dollar {
		return nil
	}
	var cmds []docCommand
	for i := 0; i < len(b.text); i++ {
		l := strings.TrimRight(b.text[i], " ")
		start := i
		if dollar && !strings.HasPrefix(l, "$ ") {
			if len(cmds) > 0 {
				cmds[len(cmds)-1].output = append(cmds[len(cmds)-1].output, l)
			}
			continue
		}
		for strings.HasSuffix(l, `\`) && i+1 < len(b.text) {
			i++
			l = strings.TrimRight(strings.TrimSuffix(l, `\`), " ") + " " + strings.TrimSpace(b.text[i])
		}
		l = strings.TrimSpace(strings.TrimPrefix(stripComment(l), "$ "))
		if l == "" {
			continue
		}
		c := docCommand{line: b.line + 1 + start, text: l}
		if strings.HasPrefix(l, "go run ./cmd/schedlab ") {
			c.text = "schedlab " + strings.TrimPrefix(l, "go run ./cmd/schedlab ")
		}
		c.schedlab = isDocCommand(c.text, subcommands)
		cmds = append(cmds, c)
	}
	return cmds
}

// stripComment cuts a shell comment: a # that starts a word outside quotes.
func stripComment(s string) string {
	var quote byte
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"':
			quote = c
		case c == '#' && (i == 0 || s[i-1] == ' ' || s[i-1] == '\t'):
			return strings.TrimRight(s[:i], " \t")
		}
	}
	return s
}

// docStats counts what the docs test did, over every document.
type docStats struct {
	mu                              sync.Mutex
	run, shortened, synopsis, other int
	skipped                         []string // doc:line: reason
	skippedCommands                 int
	slowest                         []string
}

// docRun runs one document's blocks in order in dir.
type docRun struct {
	t           *testing.T
	doc         string // as the messages name it: docs/x.md
	root, dir   string
	rootCmd     *cobra.Command
	subcommands map[string]bool
	stats       *docStats

	// The previous command, for an output or stderr block.
	last struct {
		line           int
		stdout, stderr string
		shortened      bool
		ok             bool
	}
}

// TestDocCommands runs every shell command of README.md, CONTRIBUTING.md
// and docs/*.md
// (CONTRIBUTING.md, "The docs test", says how a document marks a command
// to shorten or skip).
func TestDocCommands(t *testing.T) {
	root := filepath.Join("..", "..")
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	docs = append([]string{filepath.Join(root, "README.md"), filepath.Join(root, "CONTRIBUTING.md")}, docs...)
	absRoot, err := filepath.Abs(root)
	if err != nil {
		t.Fatal(err)
	}
	rootCmd := NewRoot(&Env{Stdout: &bytes.Buffer{}, Stderr: &bytes.Buffer{}})
	subcommands := map[string]bool{}
	for _, c := range rootCmd.Commands() {
		subcommands[c.Name()] = true
	}
	stats := &docStats{}
	start := time.Now()
	t.Cleanup(func() {
		t.Logf("docs test: %d commands run (%d shortened), %d skipped in %d blocks, %d synopsis lines, %d other programs' commands not run; %s wall",
			stats.run, stats.shortened, stats.skippedCommands, len(stats.skipped), stats.synopsis, stats.other, time.Since(start).Round(100*time.Millisecond))
		for _, s := range stats.skipped {
			t.Logf("  skipped %s", s)
		}
		if len(stats.skipped) > maxDocSkips {
			t.Errorf("%d blocks skipped, more than %d: shorten commands instead (CONTRIBUTING.md, \"The docs test\")", len(stats.skipped), maxDocSkips)
		}
	})
	for _, path := range docs {
		rel, _ := filepath.Rel(root, path)
		t.Run(filepath.Base(path), func(t *testing.T) {
			t.Parallel()
			blocks, err := parseDoc(path, rel, subcommands)
			if err != nil {
				t.Fatal(err)
			}
			r := &docRun{t: t, doc: rel, root: absRoot, dir: t.TempDir(), rootCmd: rootCmd, subcommands: subcommands, stats: stats}
			// File blocks first: a document may show a machine file
			// after the command that reads it.
			for _, b := range blocks {
				r.file(b)
			}
			for _, b := range blocks {
				r.block(b)
			}
		})
	}
}

// file writes a file block's text into the document's directory.
func (r *docRun) file(b *docBlock) {
	m, ok := b.marker("file")
	if !ok {
		return
	}
	if m.arg == "" || filepath.IsAbs(m.arg) || strings.HasPrefix(filepath.Clean(m.arg), "..") {
		r.t.Errorf("%s:%d: write file NAME, a path inside the document's directory", r.doc, m.line)
		return
	}
	name := filepath.Join(r.dir, m.arg)
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		r.t.Fatal(err)
	}
	if err := os.WriteFile(name, []byte(strings.Join(b.text, "\n")+"\n"), 0o644); err != nil {
		r.t.Fatal(err)
	}
}

func (r *docRun) block(b *docBlock) {
	t := r.t
	where := fmt.Sprintf("%s:%d", r.doc, b.line)
	cmds := b.commands(r.subcommands)
	if m, ok := b.marker("skip"); ok {
		if m.arg == "" {
			t.Errorf("%s:%d: a skip needs its reason: <!-- doc-test: skip REASON -->", r.doc, m.line)
		}
		n := 0
		for _, c := range cmds {
			if c.schedlab {
				n++
			}
		}
		r.stats.mu.Lock()
		r.stats.skipped = append(r.stats.skipped, fmt.Sprintf("%s (%d commands): %s", where, n, m.arg))
		r.stats.skippedCommands += n
		r.stats.mu.Unlock()
		return
	}
	if m, ok := b.marker("needs"); ok {
		if _, err := os.Stat(filepath.Join(r.root, m.arg)); err != nil {
			if testutil.CI() {
				t.Errorf("%s: CI is set, and %s is missing: the block needs it", where, m.arg)
			} else {
				t.Logf("%s: skipped: no %s here", where, m.arg)
			}
			return
		}
	}
	if _, ok := b.marker("file"); ok {
		return // written before the document's first command
	}
	for _, kind := range []string{"output", "stderr"} {
		if _, ok := b.marker(kind); !ok {
			continue
		}
		switch {
		case !r.last.ok:
			t.Errorf("%s: an %s block with no command before it in the document", where, kind)
		case r.last.shortened:
			t.Errorf("%s: the %s of the command at line %d, which the docs test shortens: run it whole, or drop the marker", where, kind, r.last.line)
		default:
			got := r.last.stdout
			if kind == "stderr" {
				got = r.last.stderr
			}
			if err := docOutputHas(got, b.text); err != nil {
				t.Errorf("%s: the %s of the command at line %d: %v", where, kind, r.last.line, err)
			}
		}
		return
	}
	if _, ok := b.marker("synopsis"); ok {
		for i, l := range b.text {
			if !isDocCommand(strings.TrimSpace(l), r.subcommands) {
				continue
			}
			if !placeholder.MatchString(l) {
				t.Errorf("%s:%d: %q is in a synopsis but has no placeholder: put commands in a block of their own", r.doc, b.line+1+i, l)
			}
			r.stats.mu.Lock()
			r.stats.synopsis++
			r.stats.mu.Unlock()
		}
		return
	}
	var shorten []string
	if m, ok := b.marker("shorten"); ok {
		var err error
		if shorten, err = experiment.SplitCommand(m.arg); err != nil || len(shorten) == 0 || len(shorten)%2 != 0 {
			t.Errorf("%s:%d: write shorten FLAG VALUE [FLAG VALUE]...", r.doc, m.line)
			return
		}
	}
	wantCode := 0
	if m, ok := b.marker("exit"); ok {
		var err error
		if wantCode, err = strconv.Atoi(m.arg); err != nil {
			t.Errorf("%s:%d: write exit N", r.doc, m.line)
		}
	}
	used := make([]bool, len(shorten)/2)
	for _, c := range cmds {
		if !c.schedlab {
			r.stats.mu.Lock()
			r.stats.other++
			r.stats.mu.Unlock()
			continue
		}
		r.command(c, shorten, used, wantCode)
	}
	for i, u := range used {
		if !u {
			t.Errorf("%s: shorten %s %s: no command of the block has %s, and none takes it", where, shorten[2*i], shorten[2*i+1], shorten[2*i])
		}
	}
}

// command runs one schedlab command of the document.
func (r *docRun) command(c docCommand, shorten []string, used []bool, wantCode int) {
	t := r.t
	where := fmt.Sprintf("%s:%d", r.doc, c.line)
	words, err := experiment.SplitCommand(c.text)
	if err != nil {
		t.Errorf("%s: %v", where, err)
		return
	}
	args, stdoutFile := words[1:], ""
	for i, w := range args {
		if w == ">" && i == len(args)-2 {
			stdoutFile, args = args[i+1], args[:i]
			break
		}
	}
	cmd, depth := r.rootCmd, 0
	for depth < len(args) {
		var sub *cobra.Command
		for _, s := range cmd.Commands() {
			if s.Name() == args[depth] {
				sub = s
			}
		}
		if sub == nil {
			break
		}
		cmd, depth = sub, depth+1
	}
	shortened := false
	if len(shorten) > 0 {
		args, shortened = shortenArgs(args, depth, cmd, shorten, used)
	}
	for i := depth; i < len(args); i++ {
		args[i] = r.path(args[i])
	}
	if stdoutFile != "" {
		stdoutFile = r.path(stdoutFile)
	}
	var stdout, stderr bytes.Buffer
	began := time.Now()
	code := Main(&stdout, &stderr, args)
	took := time.Since(began)
	r.stats.mu.Lock()
	r.stats.run++
	if shortened {
		r.stats.shortened++
	}
	r.stats.mu.Unlock()
	if testing.Verbose() {
		t.Logf("%s: %s (%s)", where, strings.Join(args, " "), took.Round(10*time.Millisecond))
	}
	out, errOut := r.clean(stdout.String()), r.clean(stderr.String())
	r.last.line, r.last.stdout, r.last.stderr, r.last.shortened, r.last.ok = c.line, out, errOut, shortened, true
	if code != wantCode {
		t.Errorf("%s: schedlab %s: exit %d, want %d; stderr:\n%s", where, strings.Join(args, " "), code, wantCode, errOut)
		return
	}
	if stdoutFile != "" {
		if err := os.WriteFile(stdoutFile, stdout.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if len(c.output) > 0 && !shortened {
		if err := docOutputHas(out, c.output); err != nil {
			t.Errorf("%s: %v", where, err)
		}
	}
}

// shortenArgs applies a shorten marker's FLAG VALUE pairs to args, whose
// first depth words name the subcommand cmd.
func shortenArgs(args []string, depth int, cmd *cobra.Command, pairs []string, used []bool) ([]string, bool) {
	args = slices.Clone(args)
	changed := false
	seen := map[string]int{}
	for p := 0; p < len(pairs); p += 2 {
		flag, value := pairs[p], pairs[p+1]
		k := seen[flag]
		seen[flag]++
		n := 0
		done := false
		for i := depth; i+1 < len(args); i++ {
			if args[i] == flag {
				if n == k {
					args[i+1], done = value, true
					break
				}
				n++
			}
		}
		if !done && k == 0 {
			// Added only where the subcommand has the flag.
			name := strings.TrimLeft(flag, "-")
			has := strings.HasPrefix(flag, "--") && cmd.Flags().Lookup(name) != nil ||
				!strings.HasPrefix(flag, "--") && len(name) == 1 && cmd.Flags().ShorthandLookup(name) != nil
			if has {
				args = slices.Insert(args, depth, flag, value)
				done = true
			}
		}
		if done {
			used[p/2], changed = true, true
		}
	}
	return args, changed
}

var docPathRE = regexp.MustCompile(`/|\.(ya?ml|json|dat|txt|html|pprof|sbatch|svg|png)$`)

// path resolves a word of a command as the document means it, run from
// the repository's root: a file the document's directory has (an earlier
// command's output, a file block), else the repository's, else a new
// file in the directory if the word looks like a path (a letter and a /,
// or a file extension: not a shard's 0/4). A word of two such paths
// joined by a comma is resolved part by part.
func (r *docRun) path(w string) string {
	if w == "" || strings.HasPrefix(w, "-") || filepath.IsAbs(w) {
		return w
	}
	// schedstat diff's BEFORE,AFTER: two paths in one word.
	if x, y, ok := strings.Cut(w, ","); ok && docPathRE.MatchString(x) && docPathRE.MatchString(y) {
		return r.path(x) + "," + r.path(y)
	}
	first := strings.SplitN(filepath.Clean(w), "/", 2)[0]
	if _, err := os.Stat(filepath.Join(r.dir, first)); err == nil && first != ".." {
		return filepath.Join(r.dir, w)
	}
	if !docPathRE.MatchString(w) || !strings.ContainsFunc(w, unicode.IsLetter) {
		return w
	}
	if _, err := os.Stat(filepath.Join(r.root, w)); err == nil {
		return filepath.Join(r.root, w)
	}
	return filepath.Join(r.dir, w)
}

// clean writes the directory and the repository's root out of a command's
// output, as the document shows it.
func (r *docRun) clean(s string) string {
	s = strings.ReplaceAll(s, r.dir+string(filepath.Separator), "")
	s = strings.ReplaceAll(s, r.dir, ".")
	return strings.ReplaceAll(s, r.root+string(filepath.Separator), "")
}

// docOutputHas checks that the lines a document shows appear in out, in
// order (trailing spaces aside); blank lines and lines of "..." in the
// document stand for lines left out.
func docOutputHas(out string, shown []string) error {
	got := strings.Split(out, "\n")
	for i := range got {
		got[i] = strings.TrimRight(got[i], " ")
	}
	at := 0
	for _, s := range shown {
		s = strings.TrimRight(s, " ")
		if strings.TrimSpace(s) == "" || strings.TrimSpace(s) == "..." {
			continue
		}
		k := slices.Index(got[at:], s)
		if k < 0 {
			return fmt.Errorf("the document shows %q, which the output lacks (after what matched before it); the output:\n%s", s, out)
		}
		at += k + 1
	}
	return nil
}

// The README's test command is the one .ci/run runs, so that what the
// README promises is what CI checks.
func TestDocReadmeTestCommandIsCI(t *testing.T) {
	root := filepath.Join("..", "..")
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	ci, err := os.ReadFile(filepath.Join(root, ".ci", "run"))
	if err != nil {
		t.Fatal(err)
	}
	const cmd = "go test ./..."
	if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(cmd) + `\s*(#.*)?$`).Match(readme) {
		t.Errorf("README.md's quick start does not give %q on a line of its own", cmd)
	}
	if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(cmd) + `$`).Match(ci) {
		t.Errorf(".ci/run does not run %q, the README's test command", cmd)
	}
}

// The README's trust figures are docs/fidelity.md's summary, so that a
// regenerated docs/fidelity.md cannot leave the front page behind.
func TestDocReadmeTrustFigures(t *testing.T) {
	root := filepath.Join("..", "..")
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	fid, err := os.ReadFile(filepath.Join(root, "docs", "fidelity.md"))
	if err != nil {
		t.Fatal(err)
	}
	commit := regexp.MustCompile("Made on commit `([0-9a-f]{7})[0-9a-f]*`").FindSubmatch(fid)
	sum := regexp.MustCompile(`(?m)^## Summary\n\n(\d+) points: (\d+) within 2× \((\d+)%\), (\d+) within 25% \((\d+)%\), median \|log ratio\| ([\d.]+) \(×([\d.]+)\); \d+ deltas, (\d+) significant: (\d+) published sign \(\d+%\), (\d+) no effect \(\d+%\), (\d+) opposite`).FindSubmatch(fid)
	if commit == nil || sum == nil {
		t.Fatal("docs/fidelity.md has no commit line or summary line in the form this test reads: update the test with the format")
	}
	f := func(i int) string { return string(sum[i]) }
	text := strings.Join(strings.Fields(string(readme)), " ")
	for _, want := range []string{
		"at commit " + string(commit[1]),
		fmt.Sprintf("%s of %s published values (%s%%) come out within 2× and %s (%s%%) within 25%%", f(2), f(1), f(3), f(4), f(5)),
		fmt.Sprintf("median |log ratio| of %s (×%s)", f(6), f(7)),
		fmt.Sprintf("of %s significant published deltas, %s come out with the published sign and %s show no effect", f(8), f(9), f(10)),
		fmt.Sprintf("%s %s with the opposite sign", f(11), map[bool]string{true: "comes out", false: "come out"}[f(11) == "1"]),
	} {
		if !strings.Contains(text, want) {
			t.Errorf("README.md's \"How far to trust it\" does not say %q, as docs/fidelity.md's summary does", want)
		}
	}
}

// The docs test's own parts, on a small document.
func TestDocParse(t *testing.T) {
	dir := t.TempDir()
	doc := filepath.Join(dir, "d.md")
	subs := map[string]bool{"run": true, "costs": true}
	text := "# t\n\n<!-- doc-test: shorten -l 5 -->\n\n```sh\nschedlab run hackbench -l 100 \\\n    -g 2   # two groups\ngo test ./...\n```\n\n" +
		"```\n$ schedlab costs hikey\nPARAMETER  VALUE\n```\n\n```\nTime: 0.1\n```\n\n    schedlab clears it in both\n"
	os.WriteFile(doc, []byte(text), 0o644)
	blocks, err := parseDoc(doc, "d.md", subs)
	if err != nil {
		t.Fatal(err)
	}
	if len(blocks) != 3 || blocks[0].markers[0].kind != "shorten" || blocks[0].markers[0].arg != "-l 5" {
		t.Fatalf("blocks %+v", blocks)
	}
	c := blocks[0].commands(subs)
	if len(c) != 2 || c[0].text != "schedlab run hackbench -l 100 -g 2" || !c[0].schedlab || c[1].schedlab || c[0].line != 6 {
		t.Errorf("commands %+v", c)
	}
	c = blocks[1].commands(subs)
	if len(c) != 1 || c[0].text != "schedlab costs hikey" || len(c[0].output) != 1 || c[0].output[0] != "PARAMETER  VALUE" {
		t.Errorf("$ commands %+v", c)
	}
	if c := blocks[2].commands(subs); len(c) != 0 {
		t.Errorf("an output block's commands: %+v", c)
	}
	args, _ := shortenArgs([]string{"run", "hackbench", "-l", "100"}, 1, &cobra.Command{}, []string{"-l", "5"}, make([]bool, 1))
	if strings.Join(args, " ") != "run hackbench -l 5" {
		t.Errorf("shortened %v", args)
	}
	for _, bad := range []string{
		"<!-- doc-test: skip x -->\nsome text\n",
		"<!-- doc-test: bogus -->\n```\n```\n",
		"text\n\n    schedlab run hackbench\n",
	} {
		os.WriteFile(doc, []byte(bad), 0o644)
		if _, err := parseDoc(doc, "d.md", subs); err == nil {
			t.Errorf("no error for %q", bad)
		}
	}
	if err := docOutputHas("a\nb\nc\n", []string{"a", "...", "c"}); err != nil {
		t.Error(err)
	}
	if err := docOutputHas("a\nb\nc\n", []string{"c", "a"}); err == nil {
		t.Error("lines out of order matched")
	}
}
