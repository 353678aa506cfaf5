// Package texttable writes the text tables of schedlab's listings
// (variants, costs, fidelity --list) so that they fit a terminal: columns
// padded to their widest cell and two spaces apart, as text/tabwriter pads
// them, and, given a width, the cells of the columns that may wrap broken
// at spaces onto continuation lines until every line fits.
//
// Widths are counted in runes, as tabwriter counts them: every rune the
// tables hold (µ, ×, ≈, −) takes one column of a terminal.
package texttable

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"unicode/utf8"
)

// Width is the terminal width the listings fit by default: wide enough
// for a table with a prose column, narrow enough for a laptop's split
// terminal.
const Width = 100

// minWrap is the narrowest a wrapping column is made: narrower, its
// continuation lines hold a word or two and read worse than a line that
// runs over.
const minWrap = 16

// Write writes rows (the first is usually a header) with every line
// starting with indent. Cells may hold newlines: each line of a cell goes
// on a line of its own. With width > 0, the columns listed in wrap share
// what the other columns leave of width, in proportion to their widest
// cell, and their cells are broken at spaces (a word longer than its
// column at the column's width) onto continuation lines; a table that
// fits is written as with width 0. Trailing spaces are trimmed.
func Write(w io.Writer, indent string, rows [][]string, width int, wrap ...int) error {
	if len(rows) == 0 {
		return nil
	}
	n := 0
	for _, r := range rows {
		n = max(n, len(r))
	}
	natural := make([]int, n)
	for _, r := range rows {
		for i, cell := range r {
			for _, line := range strings.Split(cell, "\n") {
				natural[i] = max(natural[i], utf8.RuneCountInString(line))
			}
		}
	}
	widths := fit(natural, utf8.RuneCountInString(indent), width, wrap)
	var b strings.Builder
	for _, r := range rows {
		cells := make([][]string, len(r))
		height := 1
		for i, cell := range r {
			cells[i] = Wrap(cell, widths[i])
			height = max(height, len(cells[i]))
		}
		for k := 0; k < height; k++ {
			var line strings.Builder
			line.WriteString(indent)
			for i := range r {
				if i > 0 {
					line.WriteString("  ")
				}
				s := ""
				if k < len(cells[i]) {
					s = cells[i][k]
				}
				line.WriteString(s)
				line.WriteString(strings.Repeat(" ", max(0, widths[i]-utf8.RuneCountInString(s))))
			}
			b.WriteString(strings.TrimRight(line.String(), " "))
			b.WriteByte('\n')
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// fit returns each column's width: its natural width, except that with
// width > 0 and a table wider than width the wrap columns share what the
// others leave, in proportion to their natural widths, none narrower than
// minWrap. The narrowest take their share first, so that what one is
// widened to minWrap comes out of the wider ones.
func fit(natural []int, indent, width int, wrap []int) []int {
	widths := append([]int(nil), natural...)
	total := indent + 2*(len(natural)-1)
	for _, w := range natural {
		total += w
	}
	if width <= 0 || total <= width || len(wrap) == 0 {
		return widths
	}
	order := append([]int(nil), wrap...)
	sort.SliceStable(order, func(a, b int) bool { return natural[order[a]] < natural[order[b]] })
	avail := width - (total - sumOf(natural, wrap))
	want := sumOf(natural, wrap)
	for _, i := range order {
		share := avail
		if want > 0 {
			share = avail * natural[i] / want
		}
		widths[i] = min(natural[i], max(minWrap, share))
		avail -= widths[i]
		want -= natural[i]
	}
	return widths
}

func sumOf(natural []int, cols []int) int {
	s := 0
	for _, i := range cols {
		s += natural[i]
	}
	return s
}

// Wrap breaks s into lines of at most width runes: at its newlines, then
// at spaces, and a word longer than width every width runes. Width 0 only
// splits at newlines.
func Wrap(s string, width int) []string {
	var out []string
	for _, para := range strings.Split(s, "\n") {
		if width <= 0 || utf8.RuneCountInString(para) <= width {
			out = append(out, para)
			continue
		}
		line := ""
		for _, word := range strings.Fields(para) {
			for utf8.RuneCountInString(word) > width {
				if line != "" {
					out = append(out, line)
					line = ""
				}
				cut := runeOffset(word, width)
				out = append(out, word[:cut])
				word = word[cut:]
			}
			switch {
			case line == "":
				line = word
			case utf8.RuneCountInString(line)+1+utf8.RuneCountInString(word) <= width:
				line += " " + word
			default:
				out = append(out, line)
				line = word
			}
		}
		if line != "" {
			out = append(out, line)
		}
	}
	return out
}

// runeOffset is the byte offset of the n-th rune of s.
func runeOffset(s string, n int) int {
	i := 0
	for off := range s {
		if i == n {
			return off
		}
		i++
	}
	return len(s)
}

// Check returns an error naming the first line of text longer than width
// runes, for the tests of the listings.
func Check(text string, width int) error {
	for i, line := range strings.Split(text, "\n") {
		if n := utf8.RuneCountInString(line); n > width {
			return fmt.Errorf("line %d is %d columns, more than %d: %q", i+1, n, width, line)
		}
	}
	return nil
}
