package eni

import (
	"strings"

	"github.com/netagent/netagent/agent/importer"
)

// line is one logical line of an interfaces file: its words, each with
// where it starts, after joining backslash continuations and dropping
// comments and blank lines; text is the line as ifupdown2 reads it
// (each physical line's part trimmed, joined by one blank), which an
// option taking the rest of the line as its value (alias) needs. A
// template construct is one line too, its first, with mako set.
type line struct {
	words []string
	pos   []importer.Position
	text  string
	mako  *makoRegion
}

// lex splits data (the contents of file) into logical lines. A line
// ending in a backslash goes on in the next; '#' starts a comment only
// at the start of a line, as in ifupdown. A mako construct (mako.go),
// in a comment too, makes one line of all the lines it spans.
func lex(file string, data []byte) []line {
	var out []line
	var cur line
	var mako makoState
	var region *line
	for i, raw := range strings.Split(string(data), "\n") {
		text := strings.TrimSuffix(raw, "\r")
		if key := mako.scan(text); key != "" || region != nil {
			if region == nil {
				out, cur = flush(out, cur)
				region = &line{mako: &makoRegion{key: key, from: i + 1, col: makoColumn(text, key)}}
				*region = splitWords(*region, file, i+1, text)
			}
			region.mako.noteFirst(text, i+1)
			if region.mako.end = i + 1; mako.idle() {
				out, region = append(out, *region), nil
			}
			continue
		}
		cont := strings.HasSuffix(text, "\\")
		text = strings.TrimSuffix(text, "\\")
		if len(cur.words) > 0 || !strings.HasPrefix(strings.TrimLeft(text, " \t"), "#") {
			cur = splitWords(cur, file, i+1, text)
		}
		if !cont {
			out, cur = flush(out, cur)
		}
	}
	if region != nil {
		out = append(out, *region)
	}
	out, _ = flush(out, cur)
	return out
}

// flush appends cur, if it has words, to out.
func flush(out []line, cur line) ([]line, line) {
	if len(cur.words) > 0 {
		out = append(out, cur)
	}
	return out, line{}
}

// splitWords appends the blank-separated words of text (line n of file)
// to l, with their columns, and text to l.text.
func splitWords(l line, file string, n int, text string) line {
	if t := strings.Trim(text, " \t"); t != "" {
		l.text = strings.TrimPrefix(l.text+" "+t, " ")
	}
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

// rest is the value of an option line as ifupdown2 takes it: the text
// after the key and the blanks that follow it.
func (l line) rest() string {
	_, after, _ := strings.Cut(l.text, l.words[0])
	return strings.TrimLeft(after, " \t")
}
