package nftables

import (
	"bytes"
	"errors"
	"fmt"
	"slices"

	gnft "github.com/google/nftables"
	"github.com/google/nftables/expr"
	"golang.org/x/sys/unix"

	"github.com/netagent/netagent/items"
)

// ErrNoNftables is a kernel without nf_tables (no module, or a kernel
// built without it): the netlink family is not there.
var ErrNoNftables = errors.New("the kernel has no nf_tables")

// kernelErr is err, marked ErrNoNftables when the kernel has no
// nf_tables netlink family (the socket's EPROTONOSUPPORT).
func kernelErr(err error) error {
	if errors.Is(err, unix.EPROTONOSUPPORT) || errors.Is(err, unix.EAFNOSUPPORT) {
		return fmt.Errorf("%w: %w", ErrNoNftables, err)
	}
	return err
}

// Op is one operation of a batch: the deletion of a table, or the
// creation of a whole table (chains, sets with their elements, rules).
type Op struct {
	Delete bool
	Table  items.NftTable // Family and Table only, for a deletion
}

// Dumped is a table as DumpTable read it.
type Dumped struct {
	Table items.NftTable
	// Owned says that the table carries netagent's mark
	// (items.NftOwnerChain); the rest of Table is decoded only then.
	Owned bool
}

// kernel is what the configurator needs of nftables: one batch is one
// netlink transaction, all of it or nothing.
type kernel interface {
	ApplyBatch(ops []Op) error
	// DumpTable returns the table, or ok false when there is none.
	DumpTable(family, name string) (t Dumped, ok bool, err error)
	// ListTables returns the family and name of every table.
	ListTables() ([][2]string, error)
}

// netlinkKernel is kernel over google/nftables in one network namespace.
type netlinkKernel struct {
	nsfd int // the namespace's file descriptor; -1 for the caller's own
}

var _ kernel = netlinkKernel{}

func (k netlinkKernel) conn() (*gnft.Conn, error) {
	if k.nsfd < 0 {
		return gnft.New()
	}
	return gnft.New(gnft.WithNetNSFd(k.nsfd))
}

var families = map[string]gnft.TableFamily{
	"inet": gnft.TableFamilyINet, "ip": gnft.TableFamilyIPv4, "ip6": gnft.TableFamilyIPv6,
	"bridge": gnft.TableFamilyBridge, "netdev": gnft.TableFamilyNetdev,
}

func familyName(f gnft.TableFamily) string {
	for n, v := range families {
		if v == f {
			return n
		}
	}
	return ""
}

// ApplyBatch writes ops in one transaction.
func (k netlinkKernel) ApplyBatch(ops []Op) error {
	c, err := k.conn()
	if err != nil {
		return fmt.Errorf("nftables: %w", err)
	}
	for _, op := range ops {
		t := &gnft.Table{Family: families[op.Table.Family], Name: op.Table.Table}
		if op.Delete {
			c.DelTable(t)
			continue
		}
		if err := addTable(c, t, &op.Table); err != nil {
			return fmt.Errorf("table %s: %w", op.Table.Name(), err)
		}
	}
	if err := c.Flush(); err != nil {
		return fmt.Errorf("nftables batch of %d operations: %w", len(ops), kernelErr(err))
	}
	return nil
}

// addTable puts the creation of t, as desc says, into c's batch.
func addTable(c *gnft.Conn, t *gnft.Table, desc *items.NftTable) error {
	c.CreateTable(t) // NLM_F_EXCL: a table made meanwhile fails the batch
	c.AddChain(&gnft.Chain{Name: items.NftOwnerChain, Table: t})
	types := setTypes{}
	sets := map[string]*gnft.Set{}
	for _, s := range desc.Sets {
		set, elems, err := encodeSet(t, s)
		if err != nil {
			return err
		}
		if err := c.AddSet(set, elems); err != nil {
			return fmt.Errorf("set %s: %w", s.Name, err)
		}
		types[s.Name], sets[s.Name] = s.Type, set
	}
	chains := map[string]*gnft.Chain{}
	for _, ch := range desc.Chains {
		chains[ch.Name] = c.AddChain(encodeChain(t, desc.Family, ch))
	}
	for _, ch := range desc.Chains {
		for i, r := range ch.Rules {
			exprs, err := encodeRule(desc.Family, &r, types)
			if err != nil {
				return fmt.Errorf("chain %s rule %d: %w", ch.Name, i, err)
			}
			for _, e := range exprs {
				if l, ok := e.(*expr.Lookup); ok {
					l.SetID = sets[l.SetName].ID
				}
			}
			c.AddRule(&gnft.Rule{Table: t, Chain: chains[ch.Name], Exprs: exprs})
		}
	}
	return nil
}

// hookNumbers are the kernel's hook numbers: the inet ones, and the
// netdev family's own.
var hookNumbers = map[string]gnft.ChainHook{
	"prerouting": unix.NF_INET_PRE_ROUTING, "input": unix.NF_INET_LOCAL_IN, "forward": unix.NF_INET_FORWARD,
	"output": unix.NF_INET_LOCAL_OUT, "postrouting": unix.NF_INET_POST_ROUTING, "ingress": 5, // NF_INET_INGRESS
}
var netdevHooks = map[string]gnft.ChainHook{"ingress": unix.NF_NETDEV_INGRESS, "egress": unix.NF_NETDEV_EGRESS}

func hooksOf(family string) map[string]gnft.ChainHook {
	if family == "netdev" {
		return netdevHooks
	}
	return hookNumbers
}

func encodeChain(t *gnft.Table, family string, ch items.NftChain) *gnft.Chain {
	out := &gnft.Chain{Name: ch.Name, Table: t}
	if !ch.Base() {
		return out
	}
	v, _ := items.NftPriorityValue(family, ch.Hook, *ch.Priority)
	policy := gnft.ChainPolicyAccept
	if ch.Policy == "drop" {
		policy = gnft.ChainPolicyDrop
	}
	out.Hooknum = gnft.ChainHookRef(hooksOf(family)[ch.Hook])
	out.Priority = gnft.ChainPriorityRef(gnft.ChainPriority(v))
	out.Type = gnft.ChainType(ch.Type)
	out.Policy = &policy
	out.Device = ch.Device
	return out
}

var setDatatypes = map[string]gnft.SetDatatype{
	"ipv4_addr": gnft.TypeIPAddr, "ipv6_addr": gnft.TypeIP6Addr, "inet_service": gnft.TypeInetService,
}

// encodeSet returns the set and its elements: with Interval, each range
// as its start and the key after its end (nft's encoding).
func encodeSet(t *gnft.Table, s items.NftSet) (*gnft.Set, []gnft.SetElement, error) {
	set := &gnft.Set{Table: t, Name: s.Name, KeyType: setDatatypes[s.Type], Interval: s.Interval}
	var elems []gnft.SetElement
	for _, e := range s.Elements {
		r, err := items.ParseNftElement(s.Type, s.Interval, e)
		if err != nil {
			return nil, nil, fmt.Errorf("set %s: %w", s.Name, err)
		}
		elems = append(elems, gnft.SetElement{Key: r.Lo})
		if s.Interval {
			if end, ok := next(r.Hi); ok {
				elems = append(elems, gnft.SetElement{Key: end, IntervalEnd: true})
			}
		}
	}
	return set, elems, nil
}

// next returns b+1, or false when b is all ones.
func next(b []byte) ([]byte, bool) {
	out := slices.Clone(b)
	for i := len(out) - 1; i >= 0; i-- {
		out[i]++
		if out[i] != 0 {
			return out, true
		}
	}
	return nil, false
}

// prev returns b-1.
func prev(b []byte) []byte {
	out := slices.Clone(b)
	for i := len(out) - 1; i >= 0; i-- {
		out[i]--
		if out[i] != 0xff {
			break
		}
	}
	return out
}

// ListTables returns every table of the namespace.
func (k netlinkKernel) ListTables() ([][2]string, error) {
	c, err := k.conn()
	if err != nil {
		return nil, fmt.Errorf("nftables: %w", err)
	}
	ts, err := c.ListTables()
	if err != nil {
		return nil, fmt.Errorf("nftables: listing tables: %w", kernelErr(err))
	}
	var out [][2]string
	for _, t := range ts {
		if n := familyName(t.Family); n != "" {
			out = append(out, [2]string{n, t.Name})
		}
	}
	return out, nil
}

// DumpTable reads a table back; a table netagent did not mark is returned
// with its family and name only.
func (k netlinkKernel) DumpTable(family, name string) (Dumped, bool, error) {
	c, err := k.conn()
	if err != nil {
		return Dumped{}, false, fmt.Errorf("nftables: %w", err)
	}
	t, err := c.ListTableOfFamily(name, families[family])
	if errors.Is(err, unix.ENOENT) {
		return Dumped{}, false, nil
	}
	if err != nil {
		return Dumped{}, false, fmt.Errorf("nftables: table %s/%s: %w", family, name, kernelErr(err))
	}
	out := Dumped{Table: items.NftTable{Family: family, Table: name}}
	chains, err := c.ListChainsOfTableFamily(families[family])
	if err != nil {
		return Dumped{}, false, fmt.Errorf("nftables: chains of %s/%s: %w", family, name, err)
	}
	chains = slices.DeleteFunc(chains, func(ch *gnft.Chain) bool { return ch.Table.Name != name })
	out.Owned = slices.ContainsFunc(chains, func(ch *gnft.Chain) bool { return ch.Name == items.NftOwnerChain })
	if !out.Owned {
		return out, true, nil
	}
	if out.Table.Sets, err = dumpSets(c, t); err != nil {
		return Dumped{}, false, fmt.Errorf("nftables: table %s/%s: %w", family, name, kernelErr(err))
	}
	for _, ch := range chains {
		if ch.Name == items.NftOwnerChain {
			continue
		}
		dc, err := dumpChain(c, t, family, ch)
		if err != nil {
			return Dumped{}, false, fmt.Errorf("nftables: table %s/%s: %w", family, name, kernelErr(err))
		}
		out.Table.Chains = append(out.Table.Chains, dc)
	}
	return out, true, nil
}

func dumpChain(c *gnft.Conn, t *gnft.Table, family string, ch *gnft.Chain) (items.NftChain, error) {
	out := items.NftChain{Name: ch.Name}
	if ch.Hooknum != nil {
		for name, n := range hooksOf(family) {
			if n == *ch.Hooknum && (family != "ip" && family != "ip6" && family != "bridge" || name != "ingress") {
				out.Hook = name
			}
		}
		out.Type = string(ch.Type)
		if ch.Priority != nil {
			out.Priority = &items.NftPriority{Value: int(*ch.Priority)}
		}
		out.Policy = "accept"
		if ch.Policy != nil && *ch.Policy == gnft.ChainPolicyDrop {
			out.Policy = "drop"
		}
		out.Device = ch.Device
	}
	rules, err := c.GetRules(t, ch)
	if err != nil {
		return out, fmt.Errorf("rules of chain %s: %w", ch.Name, err)
	}
	for i, r := range rules {
		dr, err := decodeRule(r.Exprs)
		if err != nil {
			return out, fmt.Errorf("chain %s rule %d: %w", ch.Name, i, err)
		}
		out.Rules = append(out.Rules, dr)
	}
	return out, nil
}

func dumpSets(c *gnft.Conn, t *gnft.Table) ([]items.NftSet, error) {
	sets, err := c.GetSets(t)
	if err != nil {
		return nil, fmt.Errorf("sets: %w", err)
	}
	var out []items.NftSet
	for _, s := range sets {
		typ := s.KeyType.Name
		if _, ok := setDatatypes[typ]; !ok {
			return nil, fmt.Errorf("set %s: key type %q", s.Name, typ)
		}
		elems, err := c.GetSetElements(s)
		if err != nil {
			return nil, fmt.Errorf("set %s: %w", s.Name, err)
		}
		out = append(out, items.NftSet{Name: s.Name, Type: typ, Interval: s.Interval, Elements: decodeElements(typ, s.Interval, elems)})
	}
	return out, nil
}

// decodeElements pairs each start of an interval set with the end after
// it (the key after the range's last), in key order.
func decodeElements(typ string, interval bool, elems []gnft.SetElement) []string {
	slices.SortFunc(elems, func(a, b gnft.SetElement) int { return bytes.Compare(a.Key, b.Key) })
	var out []string
	for i, e := range elems {
		if e.IntervalEnd {
			continue
		}
		hi := e.Key
		if interval {
			hi = bytes.Repeat([]byte{0xff}, len(e.Key))
			if i+1 < len(elems) && elems[i+1].IntervalEnd {
				hi = prev(elems[i+1].Key)
			}
		}
		out = append(out, items.NftElementString(typ, items.NftElementRange{Lo: e.Key, Hi: hi}))
	}
	return out
}
