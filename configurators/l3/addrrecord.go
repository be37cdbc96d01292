package l3

import (
	"errors"
	"fmt"
	"net/netip"
	"path/filepath"
	"slices"

	"github.com/netagent/netagent/internal/netnsx"
	"github.com/netagent/netagent/internal/statefile"
	"github.com/netagent/netagent/items"
)

// The addresses netagent adopted where the kernel kept their protocol.
//
// An address's mark is its IFA_PROTO. An adopt writes it in place (an
// RTM_NEWADDR with NLM_F_REPLACE), which the kernel keeps for IPv6 and,
// from about Linux 6.3, for IPv4; before that (Debian 12's 6.1) the
// replace keeps an IPv4 address's old protocol. Where the read-back after
// the replace finds the address still without the mark, the adopt records
// it instead: <stateDir>/addresses.json holds, per namespace instance
// (statefile.NsIdentity), the interface index and name and the prefix of
// each such address. An address of the namespace is netagent's when it has
// the mark, or when a record names it: the same index, an interface of
// that name at that index, the same prefix, and still no mark
// (applyAddrRecords). A record whose address is gone (deleted by hand, the
// link re-created with another index) names nothing, is never trusted,
// and is dropped at the next write. The delete of an adopted address drops
// its record. Only the configurator writes the record; dry runs read it.

// addrRecordFile is the record's file in the state directory.
const addrRecordFile = "addresses.json"

// maxAddrRecords bounds one namespace's entries, read or written: an
// update that would hold more is refused (the adopt fails, naming the
// file), never trimmed.
const maxAddrRecords = 4096

// addrRecordsFile is the file: one entry per namespace instance.
type addrRecordsFile struct {
	Namespaces []nsAddrs `json:"namespaces"`
}

// nsAddrs is one namespace instance's adopted addresses.
type nsAddrs struct {
	statefile.NsIdentity
	Addresses []adoptedAddr `json:"addresses"`
}

// adoptedAddr is one address netagent adopted without the kernel keeping
// the mark.
type adoptedAddr struct {
	Index  int          `json:"ifindex"`
	Dev    string       `json:"ifname"`
	Prefix netip.Prefix `json:"prefix"`
}

// check reports what makes an entry read from disk name no address (the
// file is not trusted).
func (e adoptedAddr) check() error {
	switch {
	case e.Index <= 0:
		return fmt.Errorf("ifindex %d is not an interface index", e.Index)
	case e.Dev == "" || len(e.Dev) >= 16:
		return fmt.Errorf("ifname %q is not an interface name", e.Dev)
	case !e.Prefix.IsValid():
		return errors.New("no valid prefix")
	}
	return nil
}

// addrRecords is one namespace's entry of the record; nil (no state
// directory) records nothing and knows nothing.
type addrRecords struct {
	path string
	ns   statefile.NsIdentity
}

// newAddrRecords returns t's records in stateDir, nil for "".
func newAddrRecords(t *netnsx.Target, stateDir string) (*addrRecords, error) {
	if stateDir == "" {
		return nil, nil
	}
	ns, err := statefile.Identify(t)
	if err != nil {
		return nil, fmt.Errorf("address records: %w", err)
	}
	return &addrRecords{path: filepath.Join(stateDir, addrRecordFile), ns: ns}, nil
}

// get returns the namespace's entries; a malformed file or entry fails
// it, naming the file.
func (r *addrRecords) get() ([]adoptedAddr, error) {
	if r == nil {
		return nil, nil
	}
	var f addrRecordsFile
	if _, err := statefile.LoadJSON(r.path, &f); err != nil {
		return nil, fmt.Errorf("address records: %w", err)
	}
	var out []adoptedAddr
	for _, e := range f.Namespaces {
		if e.NsIdentity != r.ns {
			continue
		}
		if len(e.Addresses) > maxAddrRecords {
			return nil, fmt.Errorf("address records %s: %d addresses, more than %d", r.path, len(e.Addresses), maxAddrRecords)
		}
		for i, a := range e.Addresses {
			if err := a.check(); err != nil {
				return nil, fmt.Errorf("address records %s: addresses[%d]: %w", r.path, i, err)
			}
		}
		out = append(out, e.Addresses...)
	}
	return out, nil
}

// update replaces the namespace's entries with f's, under the file's
// lock, and drops the entries of other boots.
func (r *addrRecords) update(f func([]adoptedAddr) []adoptedAddr) error {
	if r == nil {
		return nil
	}
	over := 0
	err := statefile.UpdateJSON(r.path, func(file *addrRecordsFile) bool {
		var kept []nsAddrs
		var mine []adoptedAddr
		for _, e := range file.Namespaces {
			switch {
			case e.NsIdentity == r.ns:
				mine = append(mine, e.Addresses...)
			case e.BootID == r.ns.BootID && len(e.Addresses) > 0:
				kept = append(kept, e)
			}
		}
		mine = slices.DeleteFunc(f(mine), func(e adoptedAddr) bool { return e.check() != nil })
		if len(mine) > maxAddrRecords {
			over = len(mine)
			return false // refused, not trimmed: a dropped entry would lose an address's ownership
		}
		if len(mine) > 0 {
			kept = append(kept, nsAddrs{NsIdentity: r.ns, Addresses: mine})
		}
		file.Namespaces = kept
		return true
	})
	if err != nil {
		return fmt.Errorf("address records: %w", err)
	}
	if over > 0 {
		return fmt.Errorf("address records %s: %d addresses for one namespace, more than %d: not recorded", r.path, over, maxAddrRecords)
	}
	return nil
}

// add records e (the address k on dev, just adopted) and drops the
// entries that name no address of list (a dump of e's family): gone, or
// the link re-created.
func (r *addrRecords) add(e adoptedAddr, list []kernelAddr, names func(int) string) error {
	return r.update(func(es []adoptedAddr) []adoptedAddr {
		es = slices.DeleteFunc(es, func(o adoptedAddr) bool {
			return o == e || (o.Prefix.Addr().Is4() == e.Prefix.Addr().Is4() && !namesAddr(o, list, names))
		})
		return append(es, e)
	})
}

// remove drops the entry of e.
func (r *addrRecords) remove(e adoptedAddr) error {
	return r.update(func(es []adoptedAddr) []adoptedAddr {
		return slices.DeleteFunc(es, func(o adoptedAddr) bool { return o == e })
	})
}

// namesAddr reports whether e names an address of list without the mark:
// on the interface of e's index, still of e's name, of e's prefix.
func namesAddr(e adoptedAddr, list []kernelAddr, names func(int) string) bool {
	for i := range list {
		k := &list[i]
		if k.index == e.Index && k.prefix == e.Prefix && k.proto != items.RouteProtocol {
			return names(e.Index) == e.Dev
		}
	}
	return false
}

// applyAddrRecords marks (recorded) the addresses of list that a record of
// conn's namespace names (namesAddr): they are netagent's as if they had
// the mark. One home for every reader: the configurator, the read-back,
// the plan's clashes and adoptions, the daemon's drift check.
func applyAddrRecords(conn rawOps, list []kernelAddr) error {
	es, err := conn.addrRecords().get()
	if err != nil || len(es) == 0 {
		return err
	}
	names := ifNames(conn)
	for _, e := range es {
		for i := range list {
			k := &list[i]
			if k.index == e.Index && k.prefix == e.Prefix && k.proto != items.RouteProtocol && names(e.Index) == e.Dev {
				k.recorded = true
			}
		}
	}
	return nil
}

// ifNames returns a lookup of interface names by index over conn that
// dumps the links at its first call ("" when none, or the dump failed).
func ifNames(conn rawOps) func(int) string {
	var names map[int]string
	return func(index int) string {
		if names == nil {
			names, _ = linkNames(conn)
		}
		return names[index]
	}
}

// recordEntry is the entry of a's kernel address at index.
func recordEntry(a *items.Address, index int) adoptedAddr {
	return adoptedAddr{Index: index, Dev: a.Dev, Prefix: a.Prefix}
}

func init() {
	statefile.Register(addrRecordFile, "the addresses netagent adopted in each namespace where the kernel kept their protocol "+
		"(IPv4 before Linux 6.3): such an address is netagent's while it stays as recorded, without the mark")
}
