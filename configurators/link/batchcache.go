package link

import "github.com/vishvananda/netlink"

// minDumpBatch is the number of operations from which a batch lists every
// link once (one dump) instead of looking each name up (one request per
// link). A dump costs per link of the namespace, about a tenth of a
// lookup each: a small batch (an edit) in a namespace of thousands of
// links looks its few names up.
const minDumpBatch = 32

// dumped is the namespace's links as one dump at the start of a batch
// showed them. It answers only what cannot go stale in the batch in a way
// that matters:
//
//   - a name it lacks did not exist then: a create goes ahead without a
//     lookup, and if the name was taken since (a veth peer created by an
//     earlier operation, or someone), the add fails with EEXIST and the
//     create falls back to the one-by-one path, which looks again;
//   - a link it holds that the batch does not change (a VXLAN's parent, a
//     port's master and, for the port batch, the port: dependencies of
//     the operation, never changed in its wave), and the name of an index
//     (ifindexes are not reused).
//
// A link the batch operates on that it holds is looked up again.
type dumped struct {
	byName  map[string]netlink.Link
	byIndex map[int]string
}

// dumpLinks lists every link once for a batch of n operations; nil (look
// each up) for a small batch or a failed dump.
func (k *kernel) dumpLinks(n int) *dumped {
	if n < minDumpBatch {
		return nil
	}
	links, err := k.listLinks()
	if err != nil {
		return nil
	}
	d := &dumped{byName: make(map[string]netlink.Link, len(links)), byIndex: make(map[int]string, len(links))}
	for _, l := range links {
		a := l.Attrs()
		d.byName[a.Name] = l
		d.byIndex[a.Index] = a.Name
	}
	return d
}

// absent reports whether the dump shows no link of that name.
func (d *dumped) absent(name string) bool {
	if d == nil {
		return false
	}
	_, ok := d.byName[name]
	return !ok
}

// withDump returns a copy of k that answers index and nameOf from d where
// it can (see dumped).
func (k *kernel) withDump(d *dumped) *kernel {
	if d == nil {
		return k
	}
	kk := *k
	kk.dump = d
	return &kk
}

// link returns the dumped link of that name.
func (d *dumped) link(name string) (netlink.Link, bool) {
	if d == nil {
		return nil, false
	}
	l, ok := d.byName[name]
	return l, ok
}

// name returns the dumped name of an index.
func (d *dumped) name(index int) (string, bool) {
	if d == nil {
		return "", false
	}
	n, ok := d.byIndex[index]
	return n, ok
}
