package eni

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/netagent/netagent/agent/importer"
	"github.com/netagent/netagent/internal/safefile"
	"golang.org/x/sys/unix"
)

// The bounds of one import's sourced files: how deep sources nest (the
// file given is depth 1), how many files are read in all, and their
// total size (each is also bounded by importer.MaxFileSize).
const (
	MaxSourceDepth = 8
	MaxSourceFiles = 256
	MaxSourceBytes = 4 * importer.MaxFileSize
)

// fileID is a file's identity (device and inode), which finds a loop of
// sources whatever the names.
type fileID struct{ dev, ino uint64 }

// sources is what the import has read: the files being read (the
// innermost last) and the counts the bounds apply to.
type sources struct {
	stack []fileID
	names []string
	files int
	bytes int64
}

// readFile lexes and walks file (its contents data, its status st: nil
// when unknown) as a sourced file: an option before its first stanza
// belongs to no stanza, and the stanza open when it ends ends with it.
func (p *parser) readFile(file string, data []byte, st *unix.Stat_t) {
	if st != nil {
		p.src.stack = append(p.src.stack, fileID{uint64(st.Dev), st.Ino})
	} else {
		p.src.stack = append(p.src.stack, fileID{})
	}
	p.src.names = append(p.src.names, file)
	p.src.files++
	p.src.bytes += int64(len(data))
	p.cur, p.inMapping = nil, false
	for _, l := range lex(file, data) {
		p.line(l)
	}
	p.cur, p.inMapping = nil, false
	p.src.stack = p.src.stack[:len(p.src.stack)-1]
	p.src.names = p.src.names[:len(p.src.names)-1]
}

// source handles `source PATTERN` as ifupdown2 does: the pattern is a
// glob (Python's glob.glob: a wildcard does not match a leading dot, a
// relative pattern is relative to the working directory), each file it
// matches is read in turn (here in lexical order; ifupdown2 takes the
// directory's order), a directory it matches is passed over, and a
// pattern without '*' that matches nothing is an error.
func (p *parser) source(l line) {
	if len(l.words) != 2 {
		p.c.Invalid(importer.Refusal{Pos: l.pos[0], Key: "source", Why: "want source PATH (ifupdown2 reads only the first path of the line)"})
		return
	}
	pattern := l.words[1]
	files, err := pyGlob(pattern)
	if err != nil {
		p.c.Invalid(importer.Refusal{Pos: l.pos[1], Key: "source", Why: fmt.Sprintf("bad pattern %q: %v", pattern, err)})
		return
	}
	if len(files) == 0 && !strings.Contains(pattern, "*") {
		p.c.Invalid(importer.Refusal{Pos: l.pos[1], Key: "source", Why: fmt.Sprintf("cannot find source file %s (ifupdown2 fails on it)", pattern)})
		return
	}
	for _, f := range files {
		p.include(l.pos[1], "source", f, true)
	}
}

// runPartsName is the names ifupdown's source-directory reads (those
// run-parts runs): letters, digits, '_' and '-' only.
var runPartsName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_-]+$`) })

// sourceDirectory handles `source-directory DIR` as ifupdown does
// (ifupdown2 3.0 does not know it): the regular files of DIR whose names
// are run-parts names, in lexical order; a relative DIR is relative to
// the directory of the file that names it.
func (p *parser) sourceDirectory(l line) {
	if len(l.words) != 2 {
		p.c.Invalid(importer.Refusal{Pos: l.pos[0], Key: "source-directory", Why: "want source-directory DIR"})
		return
	}
	dir := l.words[1]
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(filepath.Dir(l.pos[1].File), dir)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		p.c.Invalid(importer.Refusal{Pos: l.pos[1], Key: "source-directory", Why: fmt.Sprintf("reading %s: %v", dir, errors.Unwrap(err))})
		return
	}
	for _, e := range entries { // ReadDir sorts by name
		if runPartsName().MatchString(e.Name()) {
			p.include(l.pos[1], "source-directory", filepath.Join(dir, e.Name()), false)
		}
	}
}

// include reads the sourced file f (named at pos by key) within the
// bounds; a loop of sources is refused. skipDirs: a directory is passed
// over (as ifupdown2's source does), else only regular files are read and
// others passed over (as run-parts does).
func (p *parser) include(pos importer.Position, key, f string, skipDirs bool) {
	refuse := func(why string) { p.c.Invalid(importer.Refusal{Pos: pos, Key: key, Why: why}) }
	fi, err := os.Stat(f)
	switch {
	case err != nil:
		refuse(fmt.Sprintf("%s: %v", f, errors.Unwrap(err)))
		return
	case fi.IsDir() || !skipDirs && !fi.Mode().IsRegular():
		return
	case len(p.src.stack) >= MaxSourceDepth:
		refuse(fmt.Sprintf("%s: sources nest deeper than %d files", f, MaxSourceDepth))
		return
	case p.src.files >= MaxSourceFiles:
		refuse(fmt.Sprintf("%s: more than %d files sourced", f, MaxSourceFiles))
		return
	}
	real, err := filepath.EvalSymlinks(f)
	if err != nil {
		refuse(fmt.Sprintf("%s: %v", f, err))
		return
	}
	data, st, err := safefile.ReadNamed(real, importer.MaxFileSize)
	if err != nil {
		refuse(fmt.Sprintf("reading %s: %v", real, err))
		return
	}
	if i := slices.Index(p.src.stack, fileID{uint64(st.Dev), st.Ino}); i >= 0 {
		refuse(fmt.Sprintf("a loop of sources: %s is already being read (%s)", f, strings.Join(p.src.names[i:], " → ")))
		return
	}
	if p.src.bytes+int64(len(data)) > MaxSourceBytes {
		refuse(fmt.Sprintf("%s: the sourced files are larger than %d bytes in all", f, MaxSourceBytes))
		return
	}
	p.readFile(f, data, st)
}

// pyGlob is Python's glob.glob(pattern) without recursion, in lexical
// order: fnmatch patterns ('*', '?', '[...]' and '[!...]'; a backslash is
// an ordinary character), and a wildcard component never matches a name
// starting with '.' unless the component starts with one.
func pyGlob(pattern string) ([]string, error) {
	goPattern := strings.ReplaceAll(strings.ReplaceAll(pattern, `\`, `\\`), "[!", "[^")
	matches, err := filepath.Glob(goPattern)
	if err != nil {
		return nil, err
	}
	parts := strings.Split(pattern, "/")
	return slices.DeleteFunc(matches, func(m string) bool { return hidden(parts, strings.Split(m, "/")) }), nil
}

// hidden reports whether a match's component is a dot file matched by a
// wildcard component of the pattern that does not itself start with '.'.
func hidden(pattern, match []string) bool {
	if len(pattern) != len(match) {
		return false // filepath.Glob cleaned the path; no wildcard was in the difference
	}
	for i, pc := range pattern {
		if strings.ContainsAny(pc, "*?[") && !strings.HasPrefix(pc, ".") && strings.HasPrefix(match[i], ".") {
			return true
		}
	}
	return false
}
