// Package depgraph models state as a dependency graph (work in progress).
package depgraph
