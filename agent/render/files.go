package render

import (
	"errors"
	"maps"
	"slices"

	"github.com/netagent/netagent/agent/intent"
	dg "github.com/netagent/netagent/depgraph"
)

// ParseFiles parses the contents of intent files, keyed by file name, and
// returns the files that parsed. Every problem is reported, as an
// errors.Join of *intent.FieldError values that name their file.
func ParseFiles(files map[string][]byte) (map[string]*intent.Intent, error) {
	out := make(map[string]*intent.Intent, len(files))
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(files)) {
		in, err := intent.Parse(files[name])
		if err != nil {
			errs = append(errs, inFile(name, err)...)
			continue
		}
		out[name] = in
	}
	return out, errors.Join(errs...)
}

// inFile returns the problems of err with their file set to name.
func inFile(name string, err error) []error {
	fes := intent.FieldErrors(err)
	if len(fes) == 0 {
		return []error{&intent.FieldError{File: name, Msg: err.Error()}}
	}
	out := make([]error, len(fes))
	for i, fe := range fes {
		c := *fe
		c.File = name
		out[i] = &c
	}
	return out
}

// Load parses, merges, validates and renders intent files, keyed by file
// name: ParseFiles then RenderFiles. It is what `netagent validate` runs,
// and what every command that takes intent files runs before anything
// else. An error lists every problem found, with its file and JSON path;
// the graph is nil then.
func Load(files map[string][]byte) (*dg.Graph, error) {
	parsed, err := ParseFiles(files)
	if err != nil {
		return nil, AllProblems(files, parsed, err)
	}
	return RenderFiles(parsed)
}

// AllProblems returns every problem of files, of which those in parsed
// parsed and the others failed with err (ParseFiles'): err's, and then
// what merging and validating finds in the files that parsed and in what
// the others hold besides their shape errors (intent.ParsePartial), so
// that one run reports every problem of every file. Nothing it judges is
// rendered or applied.
func AllProblems(files map[string][]byte, parsed map[string]*intent.Intent, err error) error {
	byFile := map[string][]error{}
	for _, fe := range intent.FieldErrors(err) {
		byFile[fe.File] = append(byFile[fe.File], fe)
	}
	all := maps.Clone(parsed)
	partials := 0
	for name, data := range files {
		if _, ok := parsed[name]; ok {
			continue
		}
		if in := intent.ParsePartial(data, errors.Join(byFile[name]...)); in != nil {
			all[name] = in
			partials++
		}
	}
	if partials == 0 {
		return err // nothing more to judge than before
	}
	merged, merr := intent.Merge(all)
	return errors.Join(err, merr, merged.Validate())
}
