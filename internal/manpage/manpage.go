// Package manpage turns the Markdown pages of docs/ into man pages with
// github.com/cpuguy83/go-md2man (the converter docker and cobra use).
//
// A page follows netplan's and docker's convention for Markdown that is
// also a man page:
//
//	# netagent-apply(8)          the title and section, first line
//	## NAME
//	netagent-apply - summary     "name - summary": man's NAME line
//	## SYNOPSIS, ## DESCRIPTION, ## OPTIONS, ...
//
// Convert writes the .TH line from the first line (with the date and the
// source given), renders the NAME paragraph as "name \- summary" so that
// whatis and apropos find the page, and turns relative links (to other
// docs pages and files of the tree, which a man page cannot follow) into
// their text. A page that go-md2man would render with a warning (raw HTML
// other than comments) is refused, as is one without the title line or
// the NAME section. Characters beyond ASCII are written as groff's
// \[uXXXX] escapes.
package manpage

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/cpuguy83/go-md2man/v2/md2man"
	"github.com/russross/blackfriday/v2"
)

// Header is what the .TH line says besides the title and section.
type Header struct {
	Date   string // the page's date, like 2026-12-03
	Source string // the software and version, like "netagent v1.4"
	Manual string // the manual's name, like "netagent manual"
}

// A Page is a converted man page.
type Page struct {
	Name    string // the title as the first line gives it: netagent-apply
	Section string // 8
	Roff    []byte
}

// FileName is the page's name in its man directory: netagent-apply.8.
func (p Page) FileName() string { return p.Name + "." + p.Section }

// titleLine is the first line: "# name(section)".
var titleLine = regexp.MustCompile(`^# ([a-z][a-z0-9._-]*)\(([1-9][a-z]*)\)[ \t]*$`)

// Convert converts one Markdown page.
func Convert(md []byte, h Header) (Page, error) {
	for _, f := range []string{h.Date, h.Source, h.Manual} {
		if strings.ContainsAny(f, "\"\\\n") {
			return Page{}, fmt.Errorf("header field %q: no quotes, backslashes or newlines", f)
		}
	}
	first, body, _ := bytes.Cut(md, []byte("\n"))
	m := titleLine.FindSubmatch(bytes.TrimSuffix(first, []byte("\r")))
	if m == nil {
		return Page{}, fmt.Errorf("first line %q is not the title line \"# name(section)\"", first)
	}
	p := Page{Name: string(m[1]), Section: string(m[2])}
	// go-md2man writes a title block's text as the .TH line's arguments.
	th := fmt.Sprintf("%% %q %q %q %q %q\n", strings.ToUpper(p.Name), p.Section, h.Date, h.Source, h.Manual)
	r := md2man.NewRoffRenderer()
	doc := blackfriday.New(blackfriday.WithRenderer(r), blackfriday.WithExtensions(r.GetExtensions())).
		Parse(append([]byte(th), body...))
	if err := check(doc, p.Name); err != nil {
		return Page{}, fmt.Errorf("%s(%s): %w", p.Name, p.Section, err)
	}
	unlinkRelative(doc)
	var out bytes.Buffer
	r.RenderHeader(&out, doc)
	doc.Walk(func(n *blackfriday.Node, entering bool) blackfriday.WalkStatus {
		return r.RenderNode(&out, n, entering)
	})
	r.RenderFooter(&out, doc)
	p.Roff = asciiOnly(out.Bytes())
	return p, nil
}

// asciiOnly writes every rune beyond ASCII as groff's \[uXXXX], so that
// the page renders the same whatever encoding troff is given (groff
// without preconv warns of each byte above 127).
func asciiOnly(roff []byte) []byte {
	var b bytes.Buffer
	for _, r := range string(roff) {
		if r < utf8.RuneSelf {
			b.WriteRune(r)
		} else {
			fmt.Fprintf(&b, "\\[u%04X]", r)
		}
	}
	return b.Bytes()
}

// check refuses what would make a broken page: raw HTML (go-md2man drops
// it with a warning), and a NAME section that is not "name - summary".
func check(doc *blackfriday.Node, name string) error {
	var errs []error
	named := false
	doc.Walk(func(n *blackfriday.Node, entering bool) blackfriday.WalkStatus {
		if !entering {
			return blackfriday.GoToNext
		}
		switch {
		case n.Type == blackfriday.HTMLBlock && !bytes.HasPrefix(n.Literal, []byte("<!--")):
			errs = append(errs, fmt.Errorf("raw HTML has no man form: %.40q", n.Literal))
		case n.Type == blackfriday.Heading && n.Level == 2 && text(n) == "NAME":
			named = true
			if err := checkName(n.Next, name); err != nil {
				errs = append(errs, err)
			}
		}
		return blackfriday.GoToNext
	})
	if !named {
		errs = append(errs, errors.New("no \"## NAME\" section"))
	}
	return errors.Join(errs...)
}

func checkName(p *blackfriday.Node, name string) error {
	if p == nil || p.Type != blackfriday.Paragraph {
		return errors.New("NAME is not followed by a \"name - summary\" paragraph")
	}
	names, summary, ok := strings.Cut(text(p), " - ")
	if !ok || summary == "" || !strings.Contains(","+strings.ReplaceAll(names, " ", "")+",", ","+name+",") {
		return fmt.Errorf("NAME paragraph %q is not %q", text(p), name+" - summary")
	}
	return nil
}

// text is the plain text of a node's children.
func text(n *blackfriday.Node) string {
	var b strings.Builder
	n.Walk(func(c *blackfriday.Node, entering bool) blackfriday.WalkStatus {
		if entering && (c.Type == blackfriday.Text || c.Type == blackfriday.Code) {
			b.Write(c.Literal)
		}
		if entering && c.Type == blackfriday.Softbreak {
			b.WriteByte(' ')
		}
		return blackfriday.GoToNext
	})
	return b.String()
}

// unlinkRelative replaces each link without a scheme by its text: a man
// page cannot follow "netagent-apply.md" or "#drift-policy".
func unlinkRelative(doc *blackfriday.Node) {
	var links []*blackfriday.Node
	doc.Walk(func(n *blackfriday.Node, entering bool) blackfriday.WalkStatus {
		if entering && n.Type == blackfriday.Link && !bytes.Contains(n.LinkData.Destination, []byte("://")) {
			links = append(links, n)
		}
		return blackfriday.GoToNext
	})
	for _, l := range links {
		for c := l.FirstChild; c != nil; c = l.FirstChild {
			c.Unlink()
			l.InsertBefore(c)
		}
		l.Unlink()
	}
}
