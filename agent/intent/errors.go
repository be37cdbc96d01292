package intent

import (
	"errors"
	"fmt"
	"strings"
)

// Sentinels used inside the package; callers see them only as text in a
// FieldError.
var (
	// errTrailing is reported for data after the top-level object.
	errTrailing = errors.New("unexpected data after the intent object")
	// errSyntax ends a shape check at a syntax error, once it is recorded.
	errSyntax = errors.New("syntax error")
	// errTooLarge: a document of more than MaxDocumentSize bytes.
	errTooLarge = fmt.Errorf("more than the %d MiB an intent document may be", MaxDocumentSize>>20)
)

// MaxDocumentSize bounds an intent document, from every source (an intent
// file, a store's value, the socket API's apply, a file on the command
// line): 32 MiB, the socket API's request bound (api.MaxRequestSize).
// 100k routes, each with via, dev, metric and table, are 9.3 MB of compact
// JSON. Readers of intent files read no more than this (a planted endless
// or huge file cannot exhaust the daemon's memory), and Parse refuses a
// larger document whatever its source.
const MaxDocumentSize = 32 << 20

// errDecodeAfterShape prefixes an error from encoding/json that the shape
// check let through, which would be a bug in the shape check.
const errDecodeAfterShape = "internal error: decoding after the shape check"

// FieldError is one problem with an intent: where it is and what is wrong.
// Parse, Validate and Merge return an errors.Join of *FieldError values; list
// them with FieldErrors.
type FieldError struct {
	// File names the intent file, when the error comes from Merge or from
	// validating a merged intent; "" otherwise.
	File string
	// Path is the JSON path of the offending value, like
	// "interfaces[2].vlan.id" or `sysctls["net.ipv4.ip_forward"]`; "" for
	// the document as a whole.
	Path string
	// Msg says what is wrong, in lowercase, naming the value.
	Msg string
}

// Error returns "file: path: msg", leaving out the empty parts.
func (e *FieldError) Error() string {
	var b strings.Builder
	for _, s := range []string{e.File, e.Path} {
		if s != "" {
			b.WriteString(s)
			b.WriteString(": ")
		}
	}
	b.WriteString(e.Msg)
	return b.String()
}

// FieldErrors lists the *FieldError values in err, which may be a single
// error or a tree of errors.Join results, in order. Errors of other types are
// left out.
func FieldErrors(err error) []*FieldError {
	if err == nil {
		return nil
	}
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		var out []*FieldError
		for _, e := range joined.Unwrap() {
			out = append(out, FieldErrors(e)...)
		}
		return out
	}
	var fe *FieldError
	if errors.As(err, &fe) {
		return []*FieldError{fe}
	}
	return nil
}

// fieldError builds a *FieldError at o.
func fieldError(o Origin, format string, args ...any) *FieldError {
	return &FieldError{File: o.File, Path: o.Path, Msg: fmt.Sprintf(format, args...)}
}
