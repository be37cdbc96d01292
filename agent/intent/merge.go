package intent

import (
	"errors"
	"maps"
	"slices"
	"strings"
)

// Merge combines intent files, keyed by file name, into one intended state.
// Files are taken in the order of their names, and so are their objects in
// the result.
//
// An object defined by more than one file (by its identity: an interface or
// veth peer name; a route's family, table, destination and metric; a rule's
// priority and selectors; a neighbor's dev and ip; a sysctl key; a chain's
// family, table and name) is a conflict: it is reported on every file that
// defines it, naming the others, and no file's version of it is kept. A file
// that is nil or of another version is reported and left out. Everything
// else is merged, so the result is usable even when the error is not nil.
// Conflicts are reported section by section, in the order of the schema
// (interfaces, routes, rules, neighbors, sysctls, firewall.chains), as
// Validate reports its problems.
//
// Merge sets the Origin of every object it keeps (and SysctlOrigins), so
// that the errors of the merged intent's Validate name the files; of one
// file it takes the routes, rules and neighbours as they are, without
// copying them to set their Origins, and records the file instead (see
// Locate, which gives every object its origin). Merge does not validate:
// the caller must Validate the result, since references between files (a
// route's dev defined in another file) can only be checked there. Objects
// are copied shallowly, or not at all: the result shares slices and the
// kind sections with the inputs, which must not change afterwards.
func Merge(files map[string]*Intent) (*Intent, error) {
	m := &merger{}
	var ok []namedIntent
	for _, name := range slices.Sorted(maps.Keys(files)) {
		if m.accept(name, files[name]) {
			ok = append(ok, namedIntent{name, files[name]})
		}
	}
	out := &Intent{Version: Version}
	if len(ok) == 1 {
		out.file = ok[0].name // the file of the objects mergeList shares
	}
	out.DriftByFile = make(map[string]DriftPolicy, len(ok))
	for _, f := range ok {
		out.DriftByFile[f.name] = f.in.Drift.Effective()
		for name := range f.in.broken {
			if out.broken == nil {
				out.broken = map[string]bool{}
			}
			out.broken[name] = true
		}
	}
	for _, s := range sections {
		s.merge(m, ok, out)
	}
	return out, errors.Join(m.errs...)
}

// WithoutConflicts returns files with every object that more than one file
// defines left out of each of them, and the conflicts, as Merge reports
// them (one error per file that defines the object, naming the others).
// Rendering the result applies neither version of a conflicting object and
// everything else of every file, which is what the daemon does: a
// conflict is an error of both files, not a reason to prefer one. A file
// with no conflict is returned as it is; the others are shallow copies
// (the inputs do not change). Files that Merge leaves out (nil, another
// version) are returned as they are, for Merge to report.
func WithoutConflicts(files map[string]*Intent) (map[string]*Intent, error) {
	m := &merger{}
	var ok []namedIntent
	for _, name := range slices.Sorted(maps.Keys(files)) {
		if in := files[name]; in != nil && in.Version == Version {
			ok = append(ok, namedIntent{name, in})
		}
	}
	out := maps.Clone(files)
	if len(ok) < 2 {
		return out, nil // one file conflicts with no other: Validate reports duplicates within it
	}
	copied := map[string]bool{}
	edit := func(name string) *Intent {
		if !copied[name] {
			c := *out[name]
			out[name], copied[name] = &c, true
		}
		return out[name]
	}
	for _, s := range sections {
		s.without(m, ok, edit)
	}
	return out, errors.Join(m.errs...)
}

// withoutList leaves the objects of one list that several files claim out
// of every file that has them.
func withoutList[T any](m *merger, files []namedIntent, kind string, list func(*Intent) *[]T,
	keys func(*T) []string, edit func(string) *Intent) {
	var claims []claim
	for _, f := range files {
		for i := range *list(f.in) {
			claims = append(claims, claim{at: Origin{File: f.name, Path: Origin{Path: kind}.index(f.in.origIndex(kind, i)).Path}, keys: keys(&(*list(f.in))[i])})
		}
	}
	keep := m.resolve(claims)
	for _, f := range files {
		objs := *list(f.in)
		mine := keep[:len(objs)]
		keep = keep[len(objs):]
		if !slices.Contains(mine, false) {
			continue
		}
		var kept []T
		for i, obj := range objs {
			if mine[i] {
				kept = append(kept, obj)
			}
		}
		*list(edit(f.name)) = kept
	}
}

// namedIntent is an intent and the name of its file.
type namedIntent struct {
	name string
	in   *Intent
}

// merger collects the errors of one Merge.
type merger struct {
	errs []error
}

// accept reports whether a file can be merged, reporting it if not.
func (m *merger) accept(name string, in *Intent) bool {
	switch {
	case in == nil:
		m.errs = append(m.errs, fieldError(Origin{File: name}, "intent is nil"))
	case in.Version != Version:
		m.errs = append(m.errs, fieldError(Origin{File: name, Path: "version"}, "%d is not supported (want %d)", in.Version, Version))
	default:
		return true
	}
	return false
}

// claim is an object's origin and the identities it takes.
type claim struct {
	at   Origin
	keys []string
}

// mergeList gathers one list from every file in order, setting each
// object's origin, and keeps the objects that no two files both claim.
// A single file claims nothing against another: its list is copied with
// the origins set, without the identities; or, with share, when no object
// of it has an origin yet (a parsed file), it is the result as it is (a
// list of 100k routes is not copied): Merge records the file in the
// result (Intent.file), and Locate gives such an object the origin a copy
// would have had.
func mergeList[T any](m *merger, files []namedIntent, kind string, list func(*Intent) []T,
	origin func(*T) *Origin, keys func(*T) []string, share bool) []T {
	n := 0
	for _, f := range files {
		n += len(list(f.in))
	}
	if n == 0 {
		return nil
	}
	if share && len(files) == 1 && files[0].in.renumber[kind] == nil && noOrigins(list(files[0].in), origin) {
		return list(files[0].in)
	}
	all := make([]T, 0, n)
	for _, f := range files {
		for i, obj := range list(f.in) {
			*origin(&obj) = Origin{File: f.name, Path: Origin{Path: kind}.index(f.in.origIndex(kind, i)).Path}
			all = append(all, obj)
		}
	}
	if len(files) == 1 {
		return all
	}
	claims := make([]claim, len(all))
	for i := range all {
		claims[i] = claim{at: *origin(&all[i]), keys: keys(&all[i])}
	}
	keep := m.resolve(claims)
	var out []T
	for i, obj := range all {
		if keep[i] {
			out = append(out, obj)
		}
	}
	return out
}

// noOrigins reports whether no object of objs has an origin.
func noOrigins[T any](objs []T, origin func(*T) *Origin) bool {
	for i := range objs {
		if *origin(&objs[i]) != (Origin{}) {
			return false
		}
	}
	return true
}

// resolve finds the identities claimed by more than one file, reports them
// on every claim that takes them, and returns which claims to keep.
func (m *merger) resolve(claims []claim) []bool {
	byKey := map[string][]int{}
	var order []string
	for i, cl := range claims {
		for _, k := range cl.keys {
			idx := byKey[k]
			if len(idx) == 0 {
				order = append(order, k)
			}
			if len(idx) == 0 || idx[len(idx)-1] != i {
				byKey[k] = append(idx, i)
			}
		}
	}
	keep := make([]bool, len(claims))
	for i := range keep {
		keep[i] = true
	}
	for _, k := range order {
		m.conflict(claims, k, byKey[k], keep)
	}
	return keep
}

// conflict reports the identity k, claimed by the claims idx, if more than
// one file claims it, and drops those claims.
func (m *merger) conflict(claims []claim, k string, idx []int, keep []bool) {
	first := claims[idx[0]].at.File
	if !slices.ContainsFunc(idx, func(i int) bool { return claims[i].at.File != first }) {
		return // one file: Validate reports duplicates within a file
	}
	for _, i := range idx {
		keep[i] = false
		m.errs = append(m.errs, fieldError(claims[i].at, "%s is also defined at %s", k, elsewhere(claims, idx, i)))
	}
}

// elsewhere lists the origins of the claims idx in files other than that of
// claim i: "interfaces[0] in b.json and routes[2] in c.json".
func elsewhere(claims []claim, idx []int, i int) string {
	var others []string
	for _, j := range idx {
		if claims[j].at.File != claims[i].at.File {
			others = append(others, claims[j].at.String())
		}
	}
	return strings.Join(others, " and ")
}
