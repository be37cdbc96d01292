package nftables

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	gnft "github.com/google/nftables"
	"github.com/google/nftables/expr"
	"github.com/mdlayher/netlink"
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

// OpKind is what an Op does.
type OpKind uint8

// The operations of a batch. Every Op names its table by Table.Family and
// Table.Table; OpCreateTable takes the whole of Table.
const (
	OpCreateTable       OpKind = iota // the whole table (NLM_F_EXCL), its owner chain, chains, sets, rules
	OpDeleteTable                     // the table and all in it
	OpAddChain                        // Chain (not its rules); on an existing base chain of the same hook, priority and type, its new policy
	OpFlushChain                      // the rules of chain Chain.Name
	OpDeleteChain                     // chain Chain.Name and its rules
	OpAddSet                          // Set with its elements
	OpDeleteSet                       // set Set.Name
	OpAddElements                     // Set.Elements into set Set.Name (Type and Interval as the set's)
	OpDeleteElements                  // Set.Elements out of set Set.Name
	OpAddRule                         // Rule into chain Chain.Name, before the rule of handle Handle (0: at the end)
	OpDeleteRule                      // the rule of handle Handle in chain Chain.Name
	OpAddMap                          // verdict map Map with its elements
	OpDeleteMap                       // map Map.Name
	OpAddMapElements                  // Map.Elements into map Map.Name (Type and Interval as the map's)
	OpDeleteMapElements               // Map.Elements (their keys) out of map Map.Name
)

var opNames = [...]string{"create table", "delete table", "add chain", "flush chain", "delete chain",
	"add set", "delete set", "add elements", "delete elements", "add rule", "delete rule",
	"add map", "delete map", "add map elements", "delete map elements"}

func (k OpKind) String() string { return opNames[k] }

// Op is one operation of a batch.
type Op struct {
	Kind   OpKind
	Table  items.NftTable // Family and Table, the whole table for OpCreateTable
	Chain  items.NftChain
	Set    items.NftSet
	Rule   items.NftRule
	Map    items.NftMap
	Handle uint64
}

// String names the operation and its object.
func (o Op) String() string {
	obj := o.Table.Name()
	switch o.Kind {
	case OpAddChain, OpFlushChain, OpDeleteChain:
		obj += " chain " + o.Chain.Name
	case OpAddSet, OpDeleteSet, OpAddElements, OpDeleteElements:
		obj += " set " + o.Set.Name
	case OpAddMap, OpDeleteMap, OpAddMapElements, OpDeleteMapElements:
		obj += " map " + o.Map.Name
	case OpAddRule:
		obj += " chain " + o.Chain.Name + " at its end"
		if o.Handle != 0 {
			obj = fmt.Sprintf("%s chain %s before handle %d", o.Table.Name(), o.Chain.Name, o.Handle)
		}
	case OpDeleteRule:
		obj += fmt.Sprintf(" chain %s handle %d", o.Chain.Name, o.Handle)
	}
	return o.Kind.String() + " " + obj
}

// Dumped is a table as DumpTable read it.
type Dumped struct {
	Table items.NftTable
	// Owned says that the table carries netagent's mark
	// (items.NftOwnerChain); the rest of Table is decoded only then.
	Owned bool
	// Handles are the kernel's handles of each chain's rules, in the
	// order of Table's rules.
	Handles map[string][]uint64
	// Gen is the ruleset's generation when the dump was made: a batch
	// given it fails with ErrGenerationChanged if another writer has
	// committed since.
	Gen uint32
	// noHandles says that Handles are unknown: the table is the one
	// netagent's own batch wrote (ApplyTable), not a dump.
	noHandles bool
}

// ErrGenerationChanged is a batch the kernel refused because the ruleset
// changed since the dump it was computed from (another writer): nothing
// of it was applied; the reconcile reads the table again and retries.
var ErrGenerationChanged = errors.New("the nftables ruleset changed since it was read (another writer)")

// kernel is what the configurator needs of nftables: one batch is one
// netlink transaction, all of it or nothing (but for the set elements
// that the kernel's batch limits force into follow-up batches).
type kernel interface {
	// ApplyBatch applies ops; with gen non-zero, only if the ruleset's
	// generation is still gen (else ErrGenerationChanged).
	ApplyBatch(gen uint32, ops []Op) error
	// DumpTable returns the table, or ok false when there is none.
	DumpTable(family, name string) (t Dumped, ok bool, err error)
	// ListTables returns the family and name of every table.
	ListTables() ([][2]string, error)
}

// netlinkKernel is kernel over google/nftables in one network namespace.
type netlinkKernel struct {
	nsfd int // the namespace's file descriptor; -1 for the caller's own
	// maxBatch is the size in bytes above which set elements go into
	// follow-up batches; 0 for defaultMaxBatch.
	maxBatch int
	// reuse takes the last dump of a table when the generation is still
	// its (the configurator's: it dumps right after the read-back).
	reuse bool
	// tableOnly is the read-back's: it needs no handles, so the table
	// that netagent's own last batch wrote is as good as a dump.
	tableOnly bool
	// stateDir keeps the last dumps for the next process (dumpfile.go);
	// "" for none.
	stateDir string
}

var _ kernel = netlinkKernel{}

// conn returns a library Conn of one socket for all its requests (a
// dump of a table is one request per chain); the caller closes it with
// CloseLasting.
func (k netlinkKernel) conn() (*gnft.Conn, error) {
	opts := []gnft.ConnOption{gnft.AsLasting()}
	if k.nsfd >= 0 {
		opts = append(opts, gnft.WithNetNSFd(k.nsfd))
	}
	c, err := gnft.New(opts...)
	return c, kernelErr(err)
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

// encodeSet returns the set without its elements (setElements).
func encodeSet(t *gnft.Table, s items.NftSet) (*gnft.Set, error) {
	set := &gnft.Set{Table: t, Name: s.Name, KeyType: setDatatypes[s.Type], Interval: s.Interval}
	if d, ok, err := items.NftSetTimeout(s); err != nil {
		return nil, fmt.Errorf("set %s: %w", s.Name, err)
	} else if ok {
		set.HasTimeout, set.Timeout = true, d
	}
	return set, nil
}

// setElements calls add with the kernel's elements of s (an interval's
// end after its start), elemsPerMessage at a time and the rest last, in
// a buffer add must not keep: a message is marshalled from each, so a
// set of 100k elements never has its 12 MiB of SetElement at once.
func setElements(s items.NftSet, add func([]gnft.SetElement) error) error {
	n := min(len(s.Elements), elemsPerMessage)
	if s.Interval {
		n = min(2*len(s.Elements), elemsPerMessage+1)
	}
	elems := make([]gnft.SetElement, 0, n)
	keys := make([]byte, 0, n*keyLen(s.Type))
	flush := func() error {
		for len(elems) >= elemsPerMessage {
			if err := add(elems[:elemsPerMessage]); err != nil {
				return err
			}
			// An interval's start may have gone and its end stayed: it
			// leads the next message (its key is copied to the front).
			rest := copy(elems, elems[elemsPerMessage:])
			elems = elems[:rest]
			keys = keys[:0]
			for i := range elems {
				keys = append(keys, elems[i].Key...)
				elems[i].Key = keys[len(keys)-len(elems[i].Key) : len(keys) : len(keys)]
			}
		}
		return nil
	}
	for _, e := range s.Elements {
		r, err := items.ParseNftElement(s.Type, s.Interval, e)
		if err != nil {
			return fmt.Errorf("set %s: %w", s.Name, err)
		}
		keys = append(keys, r.Lo...)
		elems = append(elems, gnft.SetElement{Key: keys[len(keys)-len(r.Lo) : len(keys) : len(keys)]})
		if s.Interval {
			if end, ok := next(r.Hi); ok {
				keys = append(keys, end...)
				elems = append(elems, gnft.SetElement{Key: keys[len(keys)-len(end) : len(keys) : len(keys)], IntervalEnd: true})
			}
		}
		if err := flush(); err != nil {
			return err
		}
	}
	if len(elems) > 0 {
		return add(elems)
	}
	return nil
}

// keyLen is the length of the keys of a set of type typ (16 when not
// known: a capacity only).
func keyLen(typ string) int {
	switch typ {
	case "ipv4_addr":
		return 4
	case "inet_service":
		return 2
	}
	return 16
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
	defer c.CloseLasting()
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
// with its family and name only. The dump is of one generation: one that
// another writer changes midway is read again. With reuse, the last dump
// of the table is returned (a copy) when the generation is still its.
func (k netlinkKernel) DumpTable(family, name string) (Dumped, bool, error) {
	conn, err := k.dial()
	if err != nil {
		return Dumped{}, false, err
	}
	defer conn.Close()
	key, keyed := k.key(family, name)
	for range 3 {
		gen, err := getGen(conn)
		if err != nil {
			return Dumped{}, false, fmt.Errorf("nftables: table %s/%s: %w", family, name, err)
		}
		if d, ok := k.reused(conn, key, gen); ok && keyed && k.reuse {
			return d, true, nil
		}
		d, ok, err := k.dumpTable(conn, family, name)
		if err != nil {
			return Dumped{}, false, err
		}
		if after, err := getGen(conn); err != nil || after != gen {
			continue
		}
		d.Gen = gen
		if keyed {
			dumps.put(key, d, ok && d.Owned)
			k.saveDump(conn, family, name, d, ok && d.Owned)
		}
		return d, ok, nil
	}
	return Dumped{}, false, fmt.Errorf("nftables: table %s/%s: %w while dumping it, three times", family, name, ErrGenerationChanged)
}

// dumps are the last dumps of netagent's tables, by namespace, each with
// its generation: a dump asked for again in the same generation (the
// configurator's, right after the reconcile's read-back) is a GETGEN
// instead of a dump of thousands of rules. Every commit, of any writer,
// bumps the generation; what changes without a commit (counters,
// elements that time out or that rules add) is not in the model.
//
// A kept Dumped is shared with every caller that gets it (the read-back's
// items, the configurator's diff, the snapshot): they read it and never
// change it, as items are not changed, so nothing is copied (a copy of a
// table of 10k rules was a fifth of a one-change apply's CPU).
var dumps = dumpCache{m: map[dumpKey]Dumped{}}

type dumpCache struct {
	sync.Mutex
	m map[dumpKey]Dumped
}

// dumpKey is a table of a namespace (the device and inode of its nsfs
// file).
type dumpKey struct {
	dev, ino     uint64
	family, name string
}

func (k netlinkKernel) key(family, name string) (dumpKey, bool) {
	var st unix.Stat_t
	var err error
	if k.nsfd >= 0 {
		err = unix.Fstat(k.nsfd, &st)
	} else {
		err = unix.Stat("/proc/self/ns/net", &st)
	}
	return dumpKey{uint64(st.Dev), st.Ino, family, name}, err == nil
}

func (c *dumpCache) get(key dumpKey, gen uint32, handles bool) (Dumped, bool) {
	c.Lock()
	defer c.Unlock()
	d, ok := c.m[key]
	if !ok || d.Gen != gen || handles && d.noHandles {
		return Dumped{}, false
	}
	return d, true
}

// put keeps d, or with keep false forgets the table.
func (c *dumpCache) put(key dumpKey, d Dumped, keep bool) {
	c.Lock()
	defer c.Unlock()
	if keep {
		c.m[key] = d
	} else {
		delete(c.m, key)
	}
}

// getGen returns the ruleset's generation (NFT_MSG_GETGEN).
func getGen(conn *netlink.Conn) (uint32, error) {
	msgs, err := conn.Execute(netlink.Message{
		Header: netlink.Header{Type: netlink.HeaderType(unix.NFNL_SUBSYS_NFTABLES<<8 | unix.NFT_MSG_GETGEN), Flags: netlink.Request},
		Data:   nfgen(0, 0),
	})
	if err != nil {
		return 0, fmt.Errorf("reading the ruleset generation: %w", kernelErr(err))
	}
	for _, m := range msgs {
		if len(m.Data) < 4 {
			continue
		}
		ad, err := netlink.NewAttributeDecoder(m.Data[4:])
		if err != nil {
			return 0, fmt.Errorf("reading the ruleset generation: %w", err)
		}
		ad.ByteOrder = binary.BigEndian
		for ad.Next() {
			if ad.Type() == unix.NFTA_GEN_ID {
				return ad.Uint32(), nil
			}
		}
	}
	return 0, errors.New("reading the ruleset generation: no NFTA_GEN_ID in the reply")
}

func (k netlinkKernel) dumpTable(raw *netlink.Conn, family, name string) (Dumped, bool, error) {
	c, err := k.conn()
	if err != nil {
		return Dumped{}, false, fmt.Errorf("nftables: %w", err)
	}
	defer c.CloseLasting()
	t, err := c.ListTableOfFamily(name, families[family])
	if errors.Is(err, unix.ENOENT) {
		return Dumped{}, false, nil
	}
	if err != nil {
		return Dumped{}, false, fmt.Errorf("nftables: table %s/%s: %w", family, name, kernelErr(err))
	}
	out := Dumped{Table: items.NftTable{Family: family, Table: name}, Handles: map[string][]uint64{}}
	chains, err := c.ListChainsOfTableFamily(families[family])
	if err != nil {
		return Dumped{}, false, fmt.Errorf("nftables: chains of %s/%s: %w", family, name, err)
	}
	chains = slices.DeleteFunc(chains, func(ch *gnft.Chain) bool { return ch.Table.Name != name })
	out.Owned = slices.ContainsFunc(chains, func(ch *gnft.Chain) bool { return ch.Name == items.NftOwnerChain })
	if !out.Owned {
		return out, true, nil
	}
	if out.Table.Sets, err = dumpSets(c, raw, t); err != nil {
		return Dumped{}, false, fmt.Errorf("nftables: table %s/%s: %w", family, name, kernelErr(err))
	}
	if out.Table.Maps, err = k.dumpMaps(family, name); err != nil {
		return Dumped{}, false, fmt.Errorf("nftables: table %s/%s: %w", family, name, kernelErr(err))
	}
	for _, ch := range chains {
		if ch.Name == items.NftOwnerChain {
			continue
		}
		dc, handles, err := dumpChain(c, t, family, ch)
		if err != nil {
			return Dumped{}, false, fmt.Errorf("nftables: table %s/%s: %w", family, name, kernelErr(err))
		}
		out.Table.Chains = append(out.Table.Chains, dc)
		out.Handles[ch.Name] = handles
	}
	return out, true, nil
}

func dumpChain(c *gnft.Conn, t *gnft.Table, family string, ch *gnft.Chain) (items.NftChain, []uint64, error) {
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
		return out, nil, fmt.Errorf("rules of chain %s: %w", ch.Name, err)
	}
	handles := make([]uint64, 0, len(rules))
	for i, r := range rules {
		dr, err := decodeRule(r.Exprs)
		if err != nil {
			return out, nil, fmt.Errorf("chain %s rule %d: %w", ch.Name, i, err)
		}
		out.Rules = append(out.Rules, dr)
		handles = append(handles, r.Handle)
	}
	return out, handles, nil
}

func dumpSets(c *gnft.Conn, raw *netlink.Conn, t *gnft.Table) ([]items.NftSet, error) {
	sets, err := c.GetSets(t)
	if err != nil {
		return nil, fmt.Errorf("sets: %w", err)
	}
	var out []items.NftSet
	for _, s := range sets {
		if s.IsMap { // maps.go reads them
			continue
		}
		typ := s.KeyType.Name
		if _, ok := setDatatypes[typ]; !ok {
			return nil, fmt.Errorf("set %s: key type %q", s.Name, typ)
		}
		elems, err := dumpElements(raw, t, s)
		if err != nil {
			return nil, fmt.Errorf("set %s: %w", s.Name, err)
		}
		out = append(out, items.NftSet{Name: s.Name, Type: typ, Interval: s.Interval, Timeout: setTimeout(s),
			Elements: decodeElements(typ, s.Interval, staticElements(s, elems))})
	}
	return out, nil
}

// decodeElements pairs each start of an interval set with the end after
// it (the key after the range's last, flagged NFT_SET_ELEM_INTERVAL_END),
// in key order. Adjacent ranges share a key (the end of one is the start
// of the next): an end sorts before a start of the same key, so the flags,
// not the keys, pair them.
func decodeElements(typ string, interval bool, elems []gnft.SetElement) []string {
	slices.SortFunc(elems, compareElements)
	// A hash set's dump during a resize of its table lists some elements
	// twice.
	elems = slices.CompactFunc(elems, func(a, b gnft.SetElement) bool {
		return a.IntervalEnd == b.IntervalEnd && bytes.Equal(a.Key, b.Key)
	})
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

// compareElements orders elements by key, and an interval's end before a
// start of the same key.
func compareElements(a, b gnft.SetElement) int {
	if c := bytes.Compare(a.Key, b.Key); c != 0 {
		return c
	}
	switch {
	case a.IntervalEnd == b.IntervalEnd:
		return 0
	case a.IntervalEnd:
		return -1
	}
	return 1
}

// defaultMaxBatch is the size of a batch above which set elements go
// into follow-up batches. The kernel takes a batch as one netlink
// message of at most the socket's send buffer, which ApplyBatch raises
// to the batch's size; elements of sets of hundreds of thousands of
// members would still need more memory than is reasonable in one skb.
const defaultMaxBatch = 8 << 20

// elemsPerMessage bounds the elements of one NEWSETELEM message: its
// element list is one netlink attribute, at most 64 KiB.
const elemsPerMessage = 1000

// ApplyBatch writes ops in one transaction (plus follow-up transactions
// of set elements, when the batch is larger than maxBatch), checked
// against gen when it is not 0.
func (k netlinkKernel) ApplyBatch(gen uint32, ops []Op) error {
	return k.apply(gen, ops, false, nil, nil)
}

// ApplyTable is ApplyBatch of ops that make the table want (in canonical
// form) out of the table whose rules had the handles before (nil: ops
// create it). When the generation after the commit is exactly gen plus
// its batches (no other writer committed in between), the kernel's table
// is want: the read-back takes it instead of a dump, and a Modify the
// rules' handles, from the batch's echoes (echo.go; without them, a
// Modify dumps the handles).
func (k netlinkKernel) ApplyTable(gen uint32, ops []Op, want items.NftTable, before map[string][]uint64) error {
	key, keyed := k.key(want.Family, want.Table)
	return k.apply(gen, ops, gen != 0 && keyed, before, func(conn *netlink.Conn, batches int, handles map[string][]uint64) {
		if gen == 0 || !keyed {
			return
		}
		after, err := getGen(conn)
		if err != nil || after != gen+uint32(batches) {
			dumps.put(key, Dumped{}, false)
			k.saveDump(conn, want.Family, want.Table, Dumped{}, false)
			return
		}
		d := Dumped{Table: want, Owned: true, Gen: after, noHandles: true}
		if handles != nil {
			d.Handles, d.noHandles = handles, false
		}
		dumps.put(key, d, true)
		k.saveDump(conn, want.Family, want.Table, d, true)
	})
}

// apply writes ops, then calls done (when not nil) with the socket, the
// number of batches committed and, with echo, the handles of the rules
// of every chain after them, from the handles before (nil when not
// known: see handlesAfter).
func (k netlinkKernel) apply(gen uint32, ops []Op, echo bool, before map[string][]uint64, done func(conn *netlink.Conn, batches int, handles map[string][]uint64)) error {
	msgs, err := marshalOps(ops)
	if err != nil {
		return err
	}
	max := k.maxBatch
	if max == 0 {
		max = defaultMaxBatch
	}
	conn, err := k.dial()
	if err != nil {
		return err
	}
	defer conn.Close()
	batches := splitBatches(msgs, max)
	echo = echo && done != nil && echoBytes(msgs) <= maxEchoBytes
	var echoes map[int]ruleEcho
	if echo {
		echoes = map[int]ruleEcho{}
	}
	sent := 0 // the messages of the batches before
	for i, b := range batches {
		g := gen
		if g != 0 {
			g += uint32(i) // each commit of ours bumps the generation by one
		}
		err := sendBatch(conn, g, b, ops, echo, func(j int, e ruleEcho) { echoes[sent+j] = e })
		sent += len(b)
		if err != nil {
			if i > 0 {
				return fmt.Errorf("nftables follow-up batch %d of %d (set elements): %w", i+1, len(batches), err)
			}
			return fmt.Errorf("nftables batch of %d operations: %w", len(ops), err)
		}
	}
	if done != nil {
		var handles map[string][]uint64
		if echo {
			if h, ok := handlesAfter(before, ops, msgs, echoes); ok {
				handles = h
			}
		}
		done(conn, len(batches), handles)
	}
	return nil
}

// dial opens a netlink socket of the nftables family in the namespace.
func (k netlinkKernel) dial() (*netlink.Conn, error) {
	cfg := &netlink.Config{}
	if k.nsfd >= 0 {
		cfg.NetNS = k.nsfd
	}
	conn, err := netlink.Dial(unix.NETLINK_NETFILTER, cfg)
	if err != nil {
		return nil, fmt.Errorf("nftables: %w", kernelErr(err))
	}
	// An error's reply carries the request's header only, not the whole
	// request (a rule of kilobytes).
	if err := conn.SetOption(netlink.CapAcknowledge, true); err != nil {
		conn.Close()
		return nil, fmt.Errorf("nftables: %w", err)
	}
	return conn, nil
}

// message is one message of a batch: the op it is of, and whether it
// only adds set elements (which may go into a follow-up batch).
type message struct {
	m     netlink.Message
	op    int
	elems bool
}

func (m message) size() int { return nlmsgAlign(16 + len(m.m.Data)) }

func nlmsgAlign(n int) int { return (n + 3) &^ 3 }

// marshalOps returns the messages of ops as google/nftables marshals
// them (its Conn over a capturing dial: the library marshals, netagent
// frames and sends), each tagged with its op; the additions of set
// elements come last, in op order, in messages of elemsPerMessage.
func marshalOps(ops []Op) ([]message, error) {
	var cur []netlink.Message
	c, err := gnft.New(gnft.WithTestDial(func(req []netlink.Message) ([]netlink.Message, error) {
		if req == nil { // the library waits for the ack of a message
			return []netlink.Message{{Header: netlink.Header{Type: netlink.Error}, Data: make([]byte, 20)}}, nil
		}
		cur = append(cur, req[1:len(req)-1]...) // without its batch begin and end
		return nil, nil
	}))
	if err != nil {
		return nil, err
	}
	b := &builder{c: c, sets: map[string]*gnft.Set{}, types: map[string]setTypes{}}
	var out, tail []message
	take := func(op int, elems bool) error {
		cur = nil
		if err := c.Flush(); err != nil {
			return fmt.Errorf("nftables: %s: %w", ops[op], err)
		}
		for _, m := range cur {
			m.Header.Length, m.Header.Sequence, m.Header.PID = 0, 0, 0
			m.Header.Flags &^= netlink.Acknowledge | unix.NLM_F_ECHO
			if elems {
				tail = append(tail, message{m: m, op: op, elems: true})
			} else {
				out = append(out, message{m: m, op: op})
			}
		}
		return nil
	}
	for i, op := range ops {
		adds, err := b.put(op)
		if err != nil {
			return nil, fmt.Errorf("nftables: %s: %w", op, err)
		}
		if err := take(i, false); err != nil {
			return nil, err
		}
		for _, m := range b.raw {
			out = append(out, message{m: m, op: i})
		}
		b.raw = nil
		for _, a := range adds {
			err := setElements(a.src, func(chunk []gnft.SetElement) error {
				if err := c.SetAddElements(a.set, chunk); err != nil {
					return fmt.Errorf("nftables: %s: %w", op, err)
				}
				return take(i, true)
			})
			if err != nil {
				return nil, err
			}
		}
	}
	return append(out, tail...), nil
}

// splitBatches puts every message into the first batch but for set
// elements beyond max bytes, which go into follow-up batches of at most
// max bytes each.
func splitBatches(msgs []message, max int) [][]message {
	size := 0
	for _, m := range msgs {
		if !m.elems {
			size += m.size()
		}
	}
	var out [][]message
	first, i := []message{}, 0
	for ; i < len(msgs) && (!msgs[i].elems || size+msgs[i].size() <= max); i++ {
		if msgs[i].elems {
			size += msgs[i].size()
		}
		first = append(first, msgs[i])
	}
	out = append(out, first)
	for i < len(msgs) {
		var b []message
		for size = 0; i < len(msgs) && (len(b) == 0 || size+msgs[i].size() <= max); i++ {
			size += msgs[i].size()
			b = append(b, msgs[i])
		}
		out = append(out, b)
	}
	return out
}

// The kernel's batch framing (linux/netfilter/nfnetlink.h).
const (
	nfnlBatchGenID = 1 // NFNL_BATCH_GENID: the batch applies only in this generation
	replyTimeout   = 10 * time.Second
)

// nfgen is struct nfgenmsg: family, version 0, resource id.
func nfgen(family uint8, res uint16) []byte {
	return []byte{family, 0, byte(res >> 8), byte(res)}
}

// sendBatch sends one batch (begin, msgs, end), in generation gen when
// not 0, and waits for its outcome: the ack of its last message, or the
// errors of the messages that failed (the kernel then aborts it all).
//
// With echo, the rule messages echoWanted picks ask for their echo
// (NLM_F_ECHO), given to echoed with the message's index in msgs.
func sendBatch(conn *netlink.Conn, gen uint32, msgs []message, ops []Op, echo bool, echoed func(i int, e ruleEcho)) error {
	begin := netlink.Message{Header: netlink.Header{Type: netlink.HeaderType(unix.NFNL_MSG_BATCH_BEGIN), Flags: netlink.Request},
		Data: nfgen(0, unix.NFNL_SUBSYS_NFTABLES)}
	if gen != 0 {
		attr, err := netlink.MarshalAttributes([]netlink.Attribute{{Type: nfnlBatchGenID, Data: binary.BigEndian.AppendUint32(nil, gen)}})
		if err != nil {
			return err
		}
		begin.Data = append(begin.Data, attr...)
	}
	end := netlink.Message{Header: netlink.Header{Type: netlink.HeaderType(unix.NFNL_MSG_BATCH_END), Flags: netlink.Request},
		Data: nfgen(0, unix.NFNL_SUBSYS_NFTABLES)}
	all := make([]netlink.Message, 0, len(msgs)+2)
	all = append(all, begin)
	size := 0
	echoes := 0
	var want []bool
	if echo {
		want = echoWanted(msgs, ops)
	}
	for j, m := range msgs {
		all = append(all, m.m)
		size += m.size()
		if echo && want[j] {
			all[len(all)-1].Header.Flags |= unix.NLM_F_ECHO
			echoes += m.size()
		}
	}
	all[len(all)-1].Header.Flags |= netlink.Acknowledge
	all = append(all, end)
	// An echo is the rule again, with its handle: the receive buffer holds
	// them all (plus the kernel's overhead per datagram) until read.
	if err := setBuffers(conn, size+64<<10, 4<<20+2*echoes); err != nil {
		return err
	}
	seq, err := sendRaw(conn, all)
	if err != nil {
		return kernelErr(err)
	}
	bySeq := make(map[uint32]int, len(msgs)) // a message's index in msgs
	for i := range msgs {
		bySeq[seq+uint32(i+1)] = i
	}
	return readOutcome(conn, seq, seq+uint32(len(all)-2), bySeq, func(i int) Op { return ops[msgs[i].op] }, echoed)
}

// batchSeq numbers the messages of netagent's batches: the replies carry
// the numbers back (netlink.Conn's own requests check theirs).
var batchSeq atomic.Uint32

func init() { batchSeq.Store(uint32(time.Now().UnixNano())) }

// sendRaw writes msgs into one buffer, numbered from the returned
// sequence number on, and sends it to the kernel in one sendmsg: a batch
// of 10k rules is 5 MB, which netlink.Conn.SendMessages copies twice more
// (each message marshalled, then the growing buffer of them).
func sendRaw(conn *netlink.Conn, msgs []netlink.Message) (uint32, error) {
	size := 0
	for _, m := range msgs {
		size += nlmsgAlign(16 + len(m.Data))
	}
	seq := batchSeq.Add(uint32(len(msgs))) - uint32(len(msgs))
	buf := make([]byte, 0, size)
	for i, m := range msgs {
		n := 16 + len(m.Data)
		buf = binary.NativeEndian.AppendUint32(buf, uint32(n))
		buf = binary.NativeEndian.AppendUint16(buf, uint16(m.Header.Type))
		buf = binary.NativeEndian.AppendUint16(buf, uint16(m.Header.Flags))
		buf = binary.NativeEndian.AppendUint32(buf, seq+uint32(i))
		buf = binary.NativeEndian.AppendUint32(buf, 0) // to the kernel
		buf = append(buf, m.Data...)
		buf = append(buf, make([]byte, nlmsgAlign(n)-n)...)
	}
	rc, err := conn.SyscallConn()
	if err != nil {
		return 0, err
	}
	var serr error
	err = rc.Write(func(fd uintptr) bool {
		serr = unix.Sendto(int(fd), buf, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK})
		return serr != unix.EAGAIN
	})
	if err == nil {
		err = serr
	}
	return seq, err
}

// setBuffers raises the socket's send buffer to hold a batch of size
// bytes (the kernel refuses a larger message with EMSGSIZE) and its
// receive buffer for the errors of a failing one (google/nftables#350:
// a full receive buffer loses them, ENOBUFS).
func setBuffers(conn *netlink.Conn, size, rcv int) error {
	rc, err := conn.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	err = rc.Control(func(fd uintptr) {
		serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_SNDBUFFORCE, max(size, 1<<20))
		if serr == nil {
			serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, rcv)
		}
	})
	if err == nil {
		err = serr
	}
	if err != nil {
		return fmt.Errorf("nftables socket buffers: %w", err)
	}
	return nil
}

// readOutcome reads the replies of a sent batch until the ack of its
// last message (lastSeq), or an error of the batch itself (beginSeq: a
// changed generation, no permission). The errors of failed messages
// name their op (opOf the message's index in bySeq); the echo of an added
// rule goes to echoed (when not nil).
func readOutcome(conn *netlink.Conn, beginSeq, lastSeq uint32, bySeq map[uint32]int, opOf func(int) Op, echoed func(int, ruleEcho)) error {
	rc, err := conn.SyscallConn()
	if err != nil {
		return err
	}
	if err := conn.SetReadDeadline(time.Now().Add(replyTimeout)); err != nil {
		return err
	}
	var errs []error
	buf := make([]byte, 1<<16)
	for {
		n, err := recvReplies(rc, buf)
		if err != nil {
			return errors.Join(append(errs, fmt.Errorf("reading the batch's outcome: %w", err))...)
		}
		replies, err := syscall.ParseNetlinkMessage(buf[:n])
		if err != nil {
			return fmt.Errorf("reading the batch's outcome: %w", err)
		}
		for _, r := range replies {
			if i, ok := bySeq[r.Header.Seq]; ok && r.Header.Type == newRuleType && echoed != nil && len(r.Data) >= 4 {
				if e, ok := parseRuleEcho(r.Data[4:]); ok {
					echoed(i, e)
				}
				continue
			}
			if r.Header.Type != unix.NLMSG_ERROR || len(r.Data) < 4 {
				continue
			}
			errno := syscall.Errno(-int32(binary.NativeEndian.Uint32(r.Data)))
			switch seq := r.Header.Seq; {
			case seq == beginSeq && errno == unix.ERESTART:
				return ErrGenerationChanged
			case seq == beginSeq:
				return fmt.Errorf("the kernel refused the batch: %w", errno)
			case errno != 0:
				errs = append(errs, fmt.Errorf("%s: %w", opOf(bySeq[seq]), errno))
			}
			if r.Header.Seq == lastSeq {
				return errors.Join(errs...)
			}
		}
	}
}

// recvReplies reads one datagram of replies into buf.
func recvReplies(rc syscall.RawConn, buf []byte) (int, error) {
	var n int
	var rerr error
	err := rc.Read(func(fd uintptr) bool {
		n, _, rerr = unix.Recvfrom(int(fd), buf, unix.MSG_DONTWAIT)
		return rerr != unix.EAGAIN
	})
	if err == nil {
		err = rerr
	}
	return n, err
}

// elemAdds are the elements to add to a set, after the batch's other
// messages.
type elemAdds struct {
	set *gnft.Set
	src items.NftSet // the elements, encoded as they are added
}

// builder puts ops into a library Conn's batch, keeping the sets the
// batch creates (a rule's lookup of one names it by its batch id too).
type builder struct {
	c     *gnft.Conn
	sets  map[string]*gnft.Set // by table and set name
	types map[string]setTypes  // by table: its sets' element types
	raw   []netlink.Message    // the op's messages netagent marshals itself (maps.go), after the library's
}

func (b *builder) put(op Op) ([]elemAdds, error) {
	t := &gnft.Table{Family: families[op.Table.Family], Name: op.Table.Table}
	switch op.Kind {
	case OpCreateTable:
		return b.createTable(t, &op.Table)
	case OpDeleteTable:
		b.c.DelTable(t)
	case OpAddChain:
		b.c.AddChain(encodeChain(t, op.Table.Family, op.Chain))
	case OpFlushChain:
		b.c.FlushChain(&gnft.Chain{Table: t, Name: op.Chain.Name})
	case OpDeleteChain:
		b.c.DelChain(&gnft.Chain{Table: t, Name: op.Chain.Name})
	case OpAddSet:
		return b.addSet(t, op.Table.Name(), op.Set)
	case OpDeleteSet:
		b.c.DelSet(&gnft.Set{Table: t, Name: op.Set.Name})
	case OpAddElements, OpDeleteElements:
		return b.elements(t, op)
	case OpAddMap, OpDeleteMap, OpAddMapElements, OpDeleteMapElements:
		return nil, b.mapOp(t, op)
	case OpAddRule:
		return nil, b.addRule(t, &op.Table, op.Chain.Name, &op.Rule, op.Handle)
	case OpDeleteRule:
		return nil, b.c.DelRule(&gnft.Rule{Table: t, Chain: &gnft.Chain{Table: t, Name: op.Chain.Name}, Handle: op.Handle})
	default:
		return nil, fmt.Errorf("op kind %d", op.Kind)
	}
	return nil, nil
}

// createTable puts the creation of t, as desc says, into the batch.
func (b *builder) createTable(t *gnft.Table, desc *items.NftTable) ([]elemAdds, error) {
	b.c.CreateTable(t) // NLM_F_EXCL: a table made meanwhile fails the batch
	b.c.AddChain(&gnft.Chain{Name: items.NftOwnerChain, Table: t})
	var adds []elemAdds
	for _, s := range desc.Sets {
		a, err := b.addSet(t, desc.Name(), s)
		if err != nil {
			return nil, err
		}
		adds = append(adds, a...)
	}
	for _, ch := range desc.Chains {
		b.c.AddChain(encodeChain(t, desc.Family, ch))
	}
	for _, m := range desc.Maps {
		if err := b.addMap(t, desc.Name(), m); err != nil {
			return nil, err
		}
	}
	for _, ch := range desc.Chains {
		for i, r := range ch.Rules {
			if err := b.addRule(t, desc, ch.Name, &r, 0); err != nil {
				return nil, fmt.Errorf("chain %s rule %d: %w", ch.Name, i, err)
			}
		}
	}
	return adds, nil
}

func (b *builder) addSet(t *gnft.Table, table string, s items.NftSet) ([]elemAdds, error) {
	set, err := encodeSet(t, s)
	if err != nil {
		return nil, err
	}
	if err := b.c.AddSet(set, nil); err != nil {
		return nil, fmt.Errorf("set %s: %w", s.Name, err)
	}
	b.sets[table+" "+s.Name] = set
	return []elemAdds{{set, s}}, nil
}

func (b *builder) elements(t *gnft.Table, op Op) ([]elemAdds, error) {
	set, err := encodeSet(t, op.Set)
	if err != nil {
		return nil, err
	}
	if made, ok := b.sets[op.Table.Name()+" "+op.Set.Name]; ok {
		set.ID = made.ID
	}
	if op.Kind == OpAddElements {
		return []elemAdds{{set, op.Set}}, nil
	}
	return nil, setElements(op.Set, func(chunk []gnft.SetElement) error {
		if err := b.c.SetDeleteElements(set, chunk); err != nil {
			return fmt.Errorf("set %s: %w", op.Set.Name, err)
		}
		return nil
	})
}

// addRule puts rule r into chain of t, before the rule of handle before
// (0: at the chain's end); desc's sets give its lookups their types.
func (b *builder) addRule(t *gnft.Table, desc *items.NftTable, chain string, r *items.NftRule, before uint64) error {
	types, ok := b.types[desc.Name()]
	if !ok {
		types = tableTypes(desc)
		b.types[desc.Name()] = types
	}
	exprs, err := encodeRule(desc.Family, r, types)
	if err != nil {
		return err
	}
	for _, e := range exprs {
		if l, ok := e.(*expr.Lookup); ok {
			if s, made := b.sets[desc.Name()+" "+l.SetName]; made {
				l.SetID = s.ID
			}
		}
	}
	m, err := ruleMessage(t, chain, exprs, before)
	if err != nil {
		return err
	}
	b.raw = append(b.raw, m)
	return nil
}

// ruleMessage is the NFT_MSG_NEWRULE of exprs for chain of t, appended
// (before 0) or inserted before the rule of handle before, as the
// library's AddRule and InsertRule marshal it (TestRuleMessageAsLibrary)
// but in one buffer: the library's attribute lists and copies were a
// fifth of the marshalling of 10k rules.
func ruleMessage(t *gnft.Table, chain string, exprs []expr.Any, before uint64) (netlink.Message, error) {
	fam := byte(t.Family)
	b := make([]byte, 0, 64+len(t.Name)+len(chain)+96*len(exprs))
	b = append(b, nfgen(fam, 0)...)
	b = appendAttr(b, unix.NFTA_RULE_TABLE, append([]byte(t.Name), 0))
	b = appendAttr(b, unix.NFTA_RULE_CHAIN, append([]byte(chain), 0))
	list := len(b)
	b = appendAttr(b, unix.NLA_F_NESTED|unix.NFTA_RULE_EXPRESSIONS, nil)
	for _, e := range exprs {
		data, err := expr.Marshal(fam, e)
		if err != nil {
			return netlink.Message{}, err
		}
		b = appendAttr(b, unix.NLA_F_NESTED|unix.NFTA_LIST_ELEM, data)
	}
	binary.NativeEndian.PutUint16(b[list:], uint16(len(b)-list))
	flags := netlink.Request | netlink.Create | unix.NLM_F_APPEND
	if before != 0 {
		b = appendAttr(b, unix.NFTA_RULE_POSITION, binary.BigEndian.AppendUint64(nil, before))
		flags = netlink.Request | netlink.Create
	}
	return netlink.Message{Header: netlink.Header{Type: newRuleType, Flags: flags}, Data: b}, nil
}

// appendAttr appends a netlink attribute (its length, native-endian, not
// counting the padding that follows).
func appendAttr(b []byte, typ uint16, data []byte) []byte {
	b = binary.NativeEndian.AppendUint16(b, uint16(4+len(data)))
	b = binary.NativeEndian.AppendUint16(b, typ)
	b = append(b, data...)
	for len(b)%4 != 0 {
		b = append(b, 0)
	}
	return b
}
