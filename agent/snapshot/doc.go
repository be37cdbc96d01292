// Package snapshot is `netagent snapshot` and the offline side of
// `netagent plan --against`: the whole state of a namespace as one
// versioned JSON document (Document), read from the kernel through the
// configurators (configurators.DumpKernel) with the state directory's
// records, and loaded back into the configurators' fakes
// (configurators.NewFakeFrom) and a state directory, so that the same
// planner runs over it as over the namespace.
//
// A document is untrusted input: Read bounds its size, checks the
// version and every field, and names the JSON path of what is wrong.
package snapshot
