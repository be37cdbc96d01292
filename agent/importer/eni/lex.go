package eni

import (
	"strings"

	"github.com/netagent/netagent/agent/importer"
)

// line is one logical line of an interfaces file: its words, each with
// where it starts, after joining backslash continuations and dropping
// comments and blank lines.
type line struct {
	words []string
	pos   []importer.Position
}

// lex splits data (the contents of file) into logical lines. A line
// ending in a backslash goes on in the next; '#' starts a comment only
// at the start of a line, as in ifupdown.
func lex(file string, data []byte) []line {
	var out []line
	var cur line
	for i, raw := range strings.Split(string(data), "\n") {
		text := strings.TrimSuffix(raw, "\r")
		cont := strings.HasSuffix(text, "\\")
		text = strings.TrimSuffix(text, "\\")
		if len(cur.words) > 0 || !strings.HasPrefix(strings.TrimLeft(text, " \t"), "#") {
			cur = splitWords(cur, file, i+1, text)
		}
		if !cont && len(cur.words) > 0 {
			out = append(out, cur)
			cur = line{}
		}
	}
	if len(cur.words) > 0 {
		out = append(out, cur)
	}
	return out
}

// splitWords appends the blank-separated words of text (line n of file)
// to l, with their columns.
func splitWords(l line, file string, n int, text string) line {
	start := -1
	for i := 0; i <= len(text); i++ {
		blank := i == len(text) || text[i] == ' ' || text[i] == '\t'
		switch {
		case blank && start >= 0:
			l.words = append(l.words, text[start:i])
			l.pos = append(l.pos, importer.Position{File: file, Line: n, Column: start + 1})
			start = -1
		case !blank && start < 0:
			start = i
		}
	}
	return l
}
