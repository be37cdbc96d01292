// Package layering states the project's package layers as data and checks
// them against the import graph `go list` gives: a test of the tree, not
// of behaviour. Its rules are those of docs/architecture.md; a change to
// one is a change to both.
//
// A rule names the packages it covers (an import path, or a prefix ending
// in "/..." for the package and those below it) and what they may not
// reach: Imports are direct imports, Deps every package they depend on,
// also through others. Packages are named relative to the module
// (github.com/netagent/netagent): "agent", "cmd/netagent", "items/...".
package layering
