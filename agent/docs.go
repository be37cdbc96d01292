package agent

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/netagent/netagent/agent/intent"
)

// doc is one intent document as the loop knows it: what its source holds
// now and the last version of it that was part of an accepted set.
type doc struct {
	source string
	raw    []byte         // the source's content; nil once the source dropped it
	parsed *intent.Intent // raw parsed; nil if it does not parse or is gone
	gone   bool           // the source no longer has it
	// refused: the source has it but must not be trusted (a file others
	// can write); errs says why.
	refused bool

	good    *intent.Intent // last accepted version; nil if none
	goodRaw []byte
	goodAt  time.Time

	errs []string // why the source's content is not applied; nil if it is
	// conflicts: the objects of the applied version that another document
	// defines too; they are applied from neither (see resolve).
	conflicts []string
}

// current is the version the source asks for: parsed, or nil when the
// document is gone or does not parse.
func (d *doc) current() *intent.Intent { return d.parsed }

// accepted reports whether the source's content is what is applied.
func (d *doc) accepted() bool { return len(d.errs) == 0 && !d.gone }

// docSet holds every document of every source, keyed by name. Names are
// unique across sources (a source's names are its own business: file names
// for the directory, "api" for the socket).
type docSet struct {
	docs map[string]*doc
	// holdUnclaimed keeps the documents seeded from an earlier run that
	// no source has delivered yet (source ""), until every source has been
	// read once: a source that cannot be read at start is not empty.
	holdUnclaimed bool
	// rendered: the accepted documents have been rendered once (a new set
	// must render even if no document changed: the agent just started).
	rendered bool
	// stale asks the next resolve to render again although no document
	// changed (the DHCPv4 leases did: Agent.rerender).
	stale bool
}

func newDocSet() *docSet { return &docSet{docs: map[string]*doc{}} }

// clone copies the set so that a trial (plan, a rejected apply) can be
// thrown away. Intents are shared: they are read-only once parsed.
func (s *docSet) clone() *docSet {
	c := &docSet{docs: make(map[string]*doc, len(s.docs)), holdUnclaimed: s.holdUnclaimed, rendered: s.rendered}
	// stale is not copied: it asks one resolve to render again.
	for n, d := range s.docs {
		dd := *d
		c.docs[n] = &dd
	}
	return c
}

// seedGood records a version accepted in an earlier run of the agent (from
// the state directory), as a document its source has not delivered yet.
func (s *docSet) seedGood(name string, raw []byte, at time.Time) error {
	in, err := intent.Parse(raw)
	if err != nil {
		return fmt.Errorf("stored intent %s: %w", name, err)
	}
	s.docs[name] = &doc{good: in, goodRaw: raw, goodAt: at, gone: true}
	return nil
}

// update replaces what source holds with contents (name → raw document).
// Documents of source missing from contents are gone. A name another
// source already uses is rejected on this source's document.
func (s *docSet) update(source string, contents map[string][]byte) {
	for name, d := range s.docs {
		if _, ok := contents[name]; !ok && d.source == source && !d.gone {
			d.raw, d.parsed, d.gone, d.errs = nil, nil, true, nil
		}
	}
	for _, name := range slices.Sorted(maps.Keys(contents)) {
		s.put(source, name, contents[name])
	}
}

func (s *docSet) put(source, name string, raw []byte) {
	d := s.docs[name]
	if d == nil {
		d = &doc{}
		s.docs[name] = d
	}
	if d.source != "" && d.source != source && !d.gone {
		// Keep the first source's document; the clash shows in its status.
		d.errs = append(d.errs, fmt.Sprintf("%s: source %s also has a document of this name (ignored)", name, source))
		return
	}
	if d.source == source && !d.gone && !d.refused && bytes.Equal(d.raw, raw) {
		return
	}
	d.source, d.raw, d.gone, d.refused, d.errs = source, raw, false, false, nil
	in, err := intent.Parse(raw)
	if err != nil {
		d.parsed = nil
		d.errs = errStrings(name, err)
		return
	}
	d.parsed = in
}

// refuse records that the source has the document name but it must not be
// applied: like a document that does not parse, it keeps its last good
// version (if any) and shows why.
func (s *docSet) refuse(source, name string, why error) {
	d := s.docs[name]
	if d == nil {
		d = &doc{}
		s.docs[name] = d
	}
	if d.source != "" && d.source != source && !d.gone {
		return // another source's document: put reports the clash
	}
	d.source, d.raw, d.parsed, d.gone, d.refused = source, nil, nil, false, true
	d.errs = []string{fmt.Sprintf("%s: %v", name, why)}
}

// errStrings lists the problems of err, each naming the document.
func errStrings(name string, err error) []string {
	fes := intent.FieldErrors(err)
	if len(fes) == 0 {
		return []string{name + ": " + err.Error()}
	}
	out := make([]string, 0, len(fes))
	for _, fe := range fes {
		e := *fe
		if e.File == "" {
			e.File = name
		}
		out = append(out, e.Error())
	}
	return out
}

// acceptedFiles returns the documents that are applied: for each, the
// version taken (the source's, or the last good one).
func (s *docSet) acceptedFiles() map[string]*intent.Intent {
	out := make(map[string]*intent.Intent, len(s.docs))
	for n, d := range s.docs {
		if d.good != nil {
			out[n] = d.good
		}
	}
	return out
}
