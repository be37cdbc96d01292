package eni

import (
	"fmt"
	"strings"

	"github.com/netagent/netagent/agent/importer"
)

// ifupdown2 renders an interfaces file with mako before it reads it
// (ifupdown2.conf: template_enable=1, template_engine=mako). netagent does
// not evaluate templates: each template construct is found on the raw
// lines, a comment's included (mako expands ${...} and its tags there
// too), and refused as one region from its first line to the line that
// closes it: a control block (%for ... %endfor, nested), a python block
// (<% ... %>), a tag (<%def ...> ... </%def>), or a line with ${...}.

// makoRegion is one template construct: its key (the construct as the
// file writes it: "%for", "<%def", "<%", "${v}") and its lines.
type makoRegion struct {
	key       string
	from, end int // the first and last line
	col       int // the construct's column on its first line
	// first is the first word of the region's first line that is text
	// (not a control line, a comment or blank), after its first line.
	first string
}

// noteFirst records line n's first word as m.first if it is the first
// text line of the region after its first.
func (m *makoRegion) noteFirst(text string, n int) {
	t := strings.TrimLeft(text, " \t")
	if n == m.from || m.first != "" || t == "" || t[0] == '%' || t[0] == '#' || strings.HasPrefix(t, "<%") {
		return
	}
	m.first = strings.Fields(t)[0]
}

// makoColumn is where key starts in text (counting from 1).
func makoColumn(text, key string) int {
	prefix := key
	if strings.HasPrefix(key, "%") {
		prefix = "%"
	} else if len(key) > 2 {
		prefix = key[:2]
	}
	return strings.Index(text, prefix) + 1
}

// makoState is what is open at the end of a raw line.
type makoState struct {
	depth  int      // open % control blocks
	python bool     // inside <% ... %>
	tags   []string // open <%name> tags
}

func (s *makoState) idle() bool { return s.depth == 0 && !s.python && len(s.tags) == 0 }

// makoOpeners are the control lines that open a block (mako's %for, %if,
// %while, %try, %with); %end... closes the innermost.
var makoOpeners = map[string]bool{"for": true, "if": true, "while": true, "try": true, "with": true}

// maxMakoKey bounds a ${...} key quoted in a refusal.
const maxMakoKey = 40

// scan reads one raw line into s and returns the first construct it has
// ("" for none).
func (s *makoState) scan(text string) string {
	key := ""
	if s.python {
		i := strings.Index(text, "%>")
		if i < 0 {
			return "<%"
		}
		s.python, text, key = false, text[i+2:], "<%"
	}
	if t := strings.TrimLeft(text, " \t"); strings.HasPrefix(t, "%") && !strings.HasPrefix(t, "%%") {
		name, _ := tagName(strings.TrimLeft(t[1:], " \t"))
		switch {
		case strings.HasPrefix(name, "end"):
			s.depth = max(s.depth-1, 0)
		case makoOpeners[name]:
			s.depth++
		}
		return "%" + name
	}
	for {
		k, rest := s.token(text)
		if k == "" {
			return key
		}
		if key == "" {
			key = k
		}
		text = rest
	}
}

// token finds the first construct of text, updates s, and returns its key
// and the text after it ("" when there is none).
func (s *makoState) token(text string) (key, rest string) {
	i := strings.IndexAny(text, "<$")
	for ; i >= 0; i = nextIndex(text, i) {
		switch t := text[i:]; {
		case strings.HasPrefix(t, "${"):
			end := strings.IndexByte(t, '}')
			if end < 0 {
				end = len(t) - 1
			}
			return truncate(t[:end+1]), t[end+1:]
		case strings.HasPrefix(t, "</%"):
			name, after := tagName(t[3:])
			if n := len(s.tags); n > 0 && s.tags[n-1] == name {
				s.tags = s.tags[:n-1]
			}
			return "</%" + name, after
		case strings.HasPrefix(t, "<%"):
			return s.open(t[2:])
		}
	}
	return "", ""
}

// open handles what follows "<%": a tag (<%def ...>, self-closing or
// not) or a python block.
func (s *makoState) open(t string) (key, rest string) {
	if t == "" || !isTagChar(t[0]) {
		end := strings.Index(t, "%>")
		if end < 0 {
			s.python = true
			return "<%", ""
		}
		return "<%", t[end+2:]
	}
	name, after := tagName(t)
	gt := strings.IndexByte(after, '>')
	if gt < 0 || gt == 0 || after[gt-1] != '/' {
		s.tags = append(s.tags, name)
	}
	if gt >= 0 {
		after = after[gt+1:]
	}
	return "<%" + name, after
}

func nextIndex(text string, i int) int {
	j := strings.IndexAny(text[i+1:], "<$")
	if j < 0 {
		return -1
	}
	return i + 1 + j
}

func isTagChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c == ':'
}

// tagName splits a tag's name from the rest.
func tagName(t string) (name, rest string) {
	i := 0
	for i < len(t) && isTagChar(t[i]) {
		i++
	}
	return t[:i], t[i:]
}

func truncate(s string) string {
	if len(s) > maxMakoKey {
		return s[:maxMakoKey] + "..."
	}
	return s
}

// template refuses a template construct. A python block (<% %>) writes
// nothing and leaves the stanza as it is. Another inside a stanza (not
// on a stanza's line, nor a block whose text starts with one) it is the
// stanza's interface that is refused (left out under --skip-unsupported:
// the template may have given it options); elsewhere, and on a stanza's
// own line, the options that follow it, until the next stanza, belong to
// a stanza the template opens and are left out with it.
func (p *parser) template(l line) {
	m := l.mako
	lines := fmt.Sprintf("line %d", m.from)
	if m.end > m.from {
		lines = fmt.Sprintf("lines %d-%d", m.from, m.end)
	}
	r := importer.Refusal{
		Pos: importer.Position{File: l.pos[0].File, Line: m.from, Column: m.col},
		Key: m.key,
		Why: "a mako template (" + lines + "): ifupdown2 renders the file with mako before it reads it, and netagent does not evaluate templates; " +
			"import the file ifupdown2 renders (ifquery -a prints its stanzas)",
	}
	switch {
	case m.key == "<%":
		// A python block writes nothing into the file: the stanza goes
		// on after it.
		p.c.Unsupported(r)
		return
	case p.cur != nil && !stanzaKeyword(l.words[0]) && !stanzaKeyword(m.first):
		r.Why = "in iface " + p.cur.name + "'s stanza: " + r.Why
		p.refuse(p.cur, r.Pos, r.Key, r.Why)
		return
	}
	p.cur, p.inMapping = nil, true
	p.c.Unsupported(r)
}

// stanzaKeyword reports whether a line starting with kw starts a stanza
// or ends one (as ifupdown2's keywords do).
func stanzaKeyword(kw string) bool {
	switch kw {
	case "auto", "iface", "mapping", "source", "source-directory", "vlan":
		return true
	}
	return strings.HasPrefix(kw, "allow-")
}
