// Package importer turns another tool's network configuration (netplan
// YAML, ifupdown's /etc/network/interfaces, what a namespace holds now)
// into an intent that means the same.
//
// Each source format is a sub-package (importer/netplan, importer/eni)
// with one entry point returning a Result; this package holds what they
// share: where in a file a key was (Position), what could not be
// expressed and why (Refusal), and the rule that nothing is dropped
// silently (Options.SkipUnsupported turns refusals into warnings, and the
// objects they name are left out).
//
// An importer reads files it is given and nothing else: no kernel, no
// state directory. The files are not trusted: every value is checked as
// the intent's own (the result is validated with intent.Validate before
// it is returned), and a file is read only up to MaxFileSize.
package importer

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/netagent/netagent/agent/intent"
)

// MaxFileSize bounds every file an importer reads.
const MaxFileSize = 4 << 20

// Position is where a key or value is in a source file; Line and Column
// count from 1 (0: unknown).
type Position struct {
	File   string
	Line   int
	Column int
}

func (p Position) String() string {
	switch {
	case p.Line == 0:
		return p.File
	case p.Column == 0:
		return fmt.Sprintf("%s:%d", p.File, p.Line)
	}
	return fmt.Sprintf("%s:%d:%d", p.File, p.Line, p.Column)
}

// Refusal is something the source says that the intent cannot express,
// or a value that is invalid: FILE:LINE:COLUMN, the key, and why.
type Refusal struct {
	Pos Position
	// Key is the source's own name for what is refused, as a path in its
	// terms: "network.wifis.wlan0", "iface eth0: post-up".
	Key string
	Why string
	// Object is the intent object left out with --skip-unsupported (an
	// interface's name, a route's destination), "" when nothing is.
	Object string
	// Kept marks a warning about something imported as near as the intent
	// can say it (Collector.Warn), not left out.
	Kept bool
}

func (r Refusal) Error() string {
	return fmt.Sprintf("%s: %s: %s", r.Pos, r.Key, r.Why)
}

// Options are the importers' common options.
type Options struct {
	// SkipUnsupported turns each refusal of something the intent cannot
	// express into a warning (Result.Warnings) and leaves the object out.
	// Invalid values are never skipped.
	SkipUnsupported bool
}

// Result is an import: the intent and the refusals turned into warnings.
type Result struct {
	Intent   *intent.Intent
	Warnings []Refusal
}

// Error is a failed import: every refusal, in the order of the files.
type Error struct {
	Refusals []Refusal
}

func (e *Error) Error() string {
	lines := make([]string, len(e.Refusals))
	for i, r := range e.Refusals {
		lines[i] = r.Error()
	}
	return strings.Join(lines, "\n")
}

// ErrUnsupported marks a refusal of something the intent cannot express
// (which SkipUnsupported may skip), as against an invalid value.
var ErrUnsupported = errors.New("not supported by netagent")

// Collector gathers an importer's refusals as it walks the source.
type Collector struct {
	opts     Options
	refused  []Refusal
	warnings []Refusal
}

// NewCollector returns a collector for opts.
func NewCollector(opts Options) *Collector { return &Collector{opts: opts} }

// Unsupported records what the intent cannot express: a warning under
// SkipUnsupported, else a refusal. It reports whether the import goes on
// without the object (true: leave it out).
func (c *Collector) Unsupported(r Refusal) bool {
	if c.opts.SkipUnsupported {
		c.warnings = append(c.warnings, r)
		return true
	}
	c.refused = append(c.refused, r)
	return false
}

// Warn records something imported only as near as the intent can say
// it: always a warning (marked Kept), never a refusal.
func (c *Collector) Warn(r Refusal) {
	r.Kept = true
	c.warnings = append(c.warnings, r)
}

// Invalid records a value that is wrong in the source itself (never
// skipped).
func (c *Collector) Invalid(r Refusal) { c.refused = append(c.refused, r) }

// Finish returns the result for in: an *Error if anything was refused, or
// if in does not validate as an intent (each problem as a refusal at the
// source's first file, since the intent has no lines of its own).
func (c *Collector) Finish(in *intent.Intent, file string) (*Result, error) {
	if len(c.refused) > 0 {
		return nil, &Error{Refusals: c.refused}
	}
	if err := in.Validate(); err != nil {
		return nil, &Error{Refusals: []Refusal{{Pos: Position{File: file}, Key: "the imported intent", Why: err.Error()}}}
	}
	return &Result{Intent: in, Warnings: c.warnings}, nil
}

// Encode is the intent as an importer prints it: indented JSON, one
// interface, route or rule per few lines, ending in a newline; it parses
// back (intent.Parse) to the same intent.
func Encode(in *intent.Intent) ([]byte, error) {
	data, err := json.MarshalIndent(in, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(data, '\n'), nil
}
