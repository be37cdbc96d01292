package link

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vishvananda/netlink"

	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/internal/netnsx"
	"github.com/netagent/netagent/internal/statefile"
	"github.com/netagent/netagent/internal/testns"
	"github.com/netagent/netagent/items"
	"github.com/netagent/netagent/reconciler"
)

var errKilled = errors.New("killed")

// killedAfterAdd plays an agent killed right after a link's add: the add
// goes through, nothing after it does (the mark, the cleanup).
type killedAfterAdd struct{ nlOps }

func (killedAfterAdd) LinkSetAlias(netlink.Link, string) error { return errKilled }
func (killedAfterAdd) LinkDel(netlink.Link) error              { return errKilled }

// killedRawAfterAdd is killedAfterAdd's raw side: the mark of a new link
// (with its admin state) is a raw request.
type killedRawAfterAdd struct{ rawOps }

func (killedRawAfterAdd) markUp(int, string, bool) error { return errKilled }

func (killedRawAfterAdd) readLink(int) (netlink.Link, rawOps, error) { return nil, nil, errKilled }

// stateEnv is a namespace, a state directory and the apply of a restarted
// agent (a fresh configurator and read-back over them).
type stateEnv struct {
	t   *testing.T
	tgt *netnsx.Target
	dir string
}

func (e stateEnv) ip(args ...string) {
	e.t.Helper()
	if out, err := exec.Command("ip", append([]string{"-n", e.tgt.Name}, args...)...).CombinedOutput(); err != nil {
		e.t.Fatalf("ip %v: %v\n%s", args, err, out)
	}
}

func (e stateEnv) kernel() *kernel {
	e.t.Helper()
	k, err := newKernel(e.tgt, e.dir)
	if err != nil {
		e.t.Fatal(err)
	}
	return k
}

// apply reconciles towards want as a restarted agent does.
func (e stateEnv) apply(want ...dg.Item) reconciler.Status {
	e.t.Helper()
	reg := &reconciler.TypeRegistry{}
	if err := Register(reg, e.tgt, e.dir); err != nil {
		e.t.Fatal(err)
	}
	intended := dg.New("intended", want...)
	cur, err := e.kernel().readBack(intended)
	if err != nil {
		e.t.Fatal(err)
	}
	return reconciler.New(reg).Reconcile(context.Background(), dg.New("current", cur...), intended)
}

func (e stateEnv) link(name string) netlink.Link {
	e.t.Helper()
	l, err := e.tgt.NL.LinkByName(name)
	if err != nil {
		e.t.Fatalf("link %s: %v", name, err)
	}
	return l
}

func (e stateEnv) gone(name string) bool {
	_, err := e.tgt.NL.LinkByName(name)
	return isNotFound(err)
}

func (e stateEnv) journal() map[string]journalEntry {
	e.t.Helper()
	st, err := e.kernel().st.snapshot()
	if err != nil {
		e.t.Fatal(err)
	}
	return st.Creating
}

// TestCreateJournalAdoptsAfterKill: an agent killed between a link's add
// and its mark leaves an unmarked link. The create journal, written before
// the add, makes the next run adopt exactly that link (name and kind, and a
// veth's peer): it marks it and converges it when the intent still holds
// it, and deletes it when the intent no longer does. A foreign link of the
// same name and no journal entry, or of another kind than journaled, is
// still refused.
func TestCreateJournalAdoptsAfterKill(t *testing.T) {
	e := stateEnv{t: t, tgt: testns.New(t), dir: t.TempDir()}
	br0 := &items.Interface{IfName: "br0", Kind: items.KindBridge, AdminUp: true, Alias: "lan"}
	v0 := &items.Interface{IfName: "v0", Kind: items.KindVeth, AdminUp: true, Attrs: &items.VethAttrs{Peer: "v1"}}
	br2 := &items.Interface{IfName: "br2", Kind: items.KindBridge, AdminUp: true}
	k := e.kernel()
	k.nl, k.raw = killedAfterAdd{k.nl}, killedRawAfterAdd{k.raw}
	for _, want := range []*items.Interface{br0, v0, br2} {
		if err := k.create(want); !errors.Is(err, errKilled) {
			t.Fatalf("killed create of %s: %v", want.IfName, err)
		}
		if a := e.link(want.IfName).Attrs().Alias; a != "" {
			t.Fatalf("killed create left %s with alias %q", want.IfName, a)
		}
	}
	if j := e.journal(); len(j) != 3 {
		t.Fatalf("journal after the kills: %v", j)
	}
	// plan predicts no failure for them: the create adopts them.
	if c, err := Clashes(e.tgt, e.dir, dg.New("intended", br0, v0)); err != nil || len(c) != 0 {
		t.Errorf("clashes with the journaled links: %v %v", c, err)
	}

	// Next run: br0 and v0 are still intended and adopted; br2 is not and
	// is deleted.
	st := e.apply(br0, v0)
	if st.Err != nil || len(st.Blocked) > 0 {
		t.Fatalf("apply after the kill: %v %v\n%s", st.Err, st.Blocked, st.OperationLog)
	}
	for name, alias := range map[string]string{"br0": "netagent:lan", "v0": "netagent", "v1": "netagent"} {
		if l := e.link(name); l.Attrs().Alias != alias || l.Attrs().Flags&netUp == 0 && name != "v1" {
			t.Errorf("%s after adoption: alias %q flags %v, want %q and up", name, l.Attrs().Alias, l.Attrs().Flags, alias)
		}
	}
	if !e.gone("br2") {
		t.Error("br2, journaled and no longer intended, still exists")
	}
	if j := e.journal(); len(j) != 0 {
		t.Errorf("journal after adoption: %v", j)
	}
	if st := e.apply(br0, v0); len(st.OperationLog) != 0 || st.Err != nil {
		t.Errorf("second apply: %v\n%s", st.Err, st.OperationLog)
	}

	// Foreign links: one of a journaled name but another kind, one with no
	// journal entry at all.
	k = e.kernel()
	k.nl, k.raw = killedAfterAdd{k.nl}, killedRawAfterAdd{k.raw}
	br3 := &items.Interface{IfName: "br3", Kind: items.KindBridge, AdminUp: true}
	if err := k.st.journal(br3, nil); err != nil {
		t.Fatal(err)
	}
	e.ip("link", "add", "br3", "type", "veth", "peer", "name", "br3p")
	e.ip("link", "add", "br4", "type", "bridge")
	br4 := &items.Interface{IfName: "br4", Kind: items.KindBridge, AdminUp: true}
	c, err := Clashes(e.tgt, e.dir, dg.New("intended", br3, br4))
	if err != nil || !errors.Is(c[dg.Ref(br3)], ErrNotOwned) || !errors.Is(c[dg.Ref(br4)], ErrNotOwned) {
		t.Errorf("clashes with foreign br3, br4: %v %v", c, err)
	}
	st = e.apply(br0, v0, br3, br4)
	for _, ref := range []dg.ItemRef{dg.Ref(br3), dg.Ref(br4)} {
		if _, state, _ := st.NewCurrentState.Lookup(ref); !errors.Is(state.LastErr, ErrNotOwned) {
			t.Errorf("%s over a foreign link: %v, want ErrNotOwned", ref, state.LastErr)
		}
	}
	st = e.apply(br0, v0)
	if st.Err != nil {
		t.Errorf("apply without br3, br4: %v\n%s", st.Err, st.OperationLog)
	}
	for _, name := range []string{"br3", "br3p", "br4"} {
		if l := e.link(name); l.Attrs().Alias != "" {
			t.Errorf("foreign %s got alias %q", name, l.Attrs().Alias)
		}
	}

	// Killed before the add: the entry names no link. The next create
	// drops it, so that a link of that name made by someone else later is
	// not taken for netagent's.
	br5 := &items.Interface{IfName: "br5", Kind: items.KindBridge, AdminUp: true}
	if err := e.kernel().st.journal(br5, nil); err != nil {
		t.Fatal(err)
	}
	br6 := &items.Interface{IfName: "br6", Kind: items.KindBridge, AdminUp: true}
	if st := e.apply(br0, v0, br6); st.Err != nil {
		t.Fatalf("apply with br6: %v", st.Err)
	}
	if j := e.journal(); len(j) != 0 {
		t.Errorf("journal after a create: %v, want the stale entries of br3 (a veth of that name) and br5 (none) dropped", j)
	}
	e.ip("link", "add", "br5", "type", "bridge")
	if st := e.apply(br0, v0, br6); st.Err != nil || e.gone("br5") {
		t.Errorf("a foreign br5 made after the stale entry was dropped: err %v, gone %v", st.Err, e.gone("br5"))
	}
}

// recordCheckingNL checks, at every write to a physical link, that the
// original of what it changes is on disk already.
type recordCheckingNL struct {
	nlOps
	t    *testing.T
	path string
}

func (r recordCheckingNL) check(field string, l netlink.Link) {
	r.t.Helper()
	var rec stateRecord
	ok, err := statefile.LoadJSON(r.path, &rec)
	if err != nil || !ok || len(rec.Namespaces) != 1 {
		r.t.Fatalf("writing %s of %s with no record on disk: %v %+v", field, l.Attrs().Name, err, rec)
	}
	o := rec.Namespaces[0].Originals[l.Attrs().Name]
	ok = o != nil && map[string]bool{"mtu": o.MTU != nil, "up": o.Up != nil, "alias": o.Alias != nil}[field]
	if !ok {
		r.t.Errorf("writing %s of %s before its original is on disk: %+v", field, l.Attrs().Name, rec)
	}
}

func (r recordCheckingNL) LinkSetMTU(l netlink.Link, mtu int) error {
	r.check("mtu", l)
	return r.nlOps.LinkSetMTU(l, mtu)
}

func (r recordCheckingNL) LinkSetUp(l netlink.Link) error {
	r.check("up", l)
	return r.nlOps.LinkSetUp(l)
}

func (r recordCheckingNL) LinkSetAlias(l netlink.Link, a string) error {
	r.check("alias", l)
	return r.nlOps.LinkSetAlias(l, a)
}

// TestPhysicalOriginalsBeforeWrite: the original of every setting netagent
// changes on a NIC is on disk before the write.
func TestPhysicalOriginalsBeforeWrite(t *testing.T) {
	e := stateEnv{t: t, tgt: testns.New(t), dir: t.TempDir()}
	e.ip("link", "add", "eth0", "type", "veth", "peer", "name", "eth0p")
	k := e.kernel()
	k.nl = recordCheckingNL{nlOps: k.nl, t: t, path: filepath.Join(e.dir, stateFileName)}
	nic := &items.Interface{IfName: "eth0", Kind: items.KindPhysical, AdminUp: true, MTU: 1400, Alias: "wan"}
	if err := (&InterfaceConfigurator{k: k}).Create(context.Background(), nic); err != nil {
		t.Fatal(err)
	}
	st, err := k.st.snapshot()
	if err != nil {
		t.Fatal(err)
	}
	o := st.Originals["eth0"]
	if o == nil || *o.MTU != 1500 || *o.Up || *o.Alias != "" || o.MAC != nil {
		t.Errorf("originals %+v", o)
	}
}

// TestStateDamagedIsNoSilentLoss: links.json emptied (a power loss, a
// full disk), cut short or garbled while a NIC's found MTU 1500 is in it
// and netagent's 1400 on the NIC: the NIC leaving the intent is not
// "restored" to 1400 as if 1400 were its original (before the fix: no
// error, MTU 1400). Read-back (every command) and the restore fail naming
// the file and ErrDamaged, nothing is recorded over it, and the file is as
// it was.
func TestStateDamagedIsNoSilentLoss(t *testing.T) {
	cases := map[string]func([]byte) []byte{
		"emptied":   func([]byte) []byte { return nil },
		"cut short": func(b []byte) []byte { return b[:len(b)/2] },
		"with 1500 made 1400, still JSON": func(b []byte) []byte {
			return bytes.Replace(b, []byte(`"mtu":1500`), []byte(`"mtu":1400`), 1)
		},
	}
	for name, damage := range cases {
		t.Run(name, func(t *testing.T) {
			e := newFakeEnv(t)
			e.f.AddNIC("eth0", 1500)
			nic := &items.Interface{IfName: "eth0", Kind: items.KindPhysical, AdminUp: true, MTU: 1400}
			e.converge(nic)
			path := filepath.Join(e.dir, stateFileName)
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			bad := damage(data)
			if bytes.Equal(bad, data) {
				t.Fatalf("the damage changed nothing in %q", data)
			}
			if err := os.WriteFile(path, bad, 0o600); err != nil {
				t.Fatal(err)
			}
			damaged := func(what string, err error) {
				if !errors.Is(err, statefile.ErrDamaged) || !strings.Contains(err.Error(), path) ||
					!strings.Contains(err.Error(), "recover --accept-damaged") {
					t.Errorf("%s over a record %s: %v, want %v naming %s and the way out", what, name, err, statefile.ErrDamaged, path)
				}
			}
			_, err = e.kernel().readBack(dg.New("intended"))
			damaged("read-back", err)
			damaged("restore of eth0", (&InterfaceConfigurator{k: e.kernel()}).Delete(context.Background(), nic))
			if mtu := e.link("eth0").Attrs().MTU; mtu != 1400 {
				t.Errorf("eth0 MTU %d: something was done with guessed originals", mtu)
			}
			if got, _ := os.ReadFile(path); !bytes.Equal(got, bad) {
				t.Errorf("the damaged record was replaced: %q", got)
			}
		})
	}
}

// TestStatePreviousFormatReadOnceRewritten: a links.json of the previous
// format (JSON without the record envelope) is read as valid, and the next
// update writes it as a record.
func TestStatePreviousFormatReadOnceRewritten(t *testing.T) {
	e := newFakeEnv(t)
	e.f.AddNIC("eth0", 1500)
	path := filepath.Join(e.dir, stateFileName)
	idx := e.link("eth0").Attrs().Index
	old := fmt.Sprintf(`{"namespaces":[{"boot_id":%q,"netns":%q,"ns_id":%q,"originals":{"eth0":{"index":%d,"mtu":1500}}}]}`,
		fakeNsIdentity.BootID, fakeNsIdentity.Netns, fakeNsIdentity.NsID, idx)
	if err := os.WriteFile(path, []byte(old), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := e.f.LinkSetMTU(e.link("eth0"), 1400); err != nil {
		t.Fatal(err)
	}
	if st := e.apply(); st.Err != nil {
		t.Fatal(st.Err)
	}
	if mtu := e.link("eth0").Attrs().MTU; mtu != 1500 {
		t.Errorf("eth0 MTU %d after the restore from a previous-format record, want 1500", mtu)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(data, []byte("netagent-state 1 ")) {
		t.Errorf("after an update the record is still of the previous format: %q", data)
	}
}

// killedAtAdd plays an agent killed right after its n-th link add in a
// batch: every request after it fails, and restore puts the state file
// back as it was at the kill (what a killed agent leaves on disk). Until
// the kill, every add checks that the journal on disk names every link of
// the batch, unchanged since the first add (one write for the batch).
type killedAtAdd struct {
	nlOps
	t     *testing.T
	path  string
	names []string
	n     int
	adds  int
	first []byte // the file at the first add
	saved []byte // the file at the kill
}

func (k *killedAtAdd) LinkAdd(l netlink.Link) error {
	k.t.Helper()
	if k.adds >= k.n {
		return errKilled
	}
	data, err := os.ReadFile(k.path)
	if err != nil {
		k.t.Fatal(err)
	}
	var rec stateRecord
	if _, err := statefile.LoadJSON(k.path, &rec); err != nil || len(rec.Namespaces) != 1 {
		k.t.Fatalf("adding %s: record %s: %v", l.Attrs().Name, data, err)
	}
	for _, name := range k.names {
		if _, ok := rec.Namespaces[0].Creating[name]; !ok {
			k.t.Errorf("adding %s: the journal does not name %s of the batch: %s", l.Attrs().Name, name, data)
		}
	}
	if k.first == nil {
		k.first = data
	} else if string(data) != string(k.first) {
		k.t.Errorf("the journal was written again before the add of %s", l.Attrs().Name)
	}
	k.adds++
	if err := k.nlOps.LinkAdd(l); err != nil {
		return err
	}
	if k.adds == k.n {
		k.saved = data
	}
	return nil
}

func (k *killedAtAdd) killed() bool { return k.adds >= k.n && k.saved != nil }

func (k *killedAtAdd) LinkSetAlias(l netlink.Link, a string) error {
	if k.killed() {
		return errKilled
	}
	return k.nlOps.LinkSetAlias(l, a)
}

func (k *killedAtAdd) LinkDel(l netlink.Link) error {
	if k.killed() {
		return errKilled
	}
	return k.nlOps.LinkDel(l)
}

func (k *killedAtAdd) LinkByName(name string) (netlink.Link, error) {
	if k.killed() {
		return nil, errKilled
	}
	return k.nlOps.LinkByName(name)
}

// killedRawAtAdd is killedAtAdd's raw side: a new link is read and
// marked through raw requests.
type killedRawAtAdd struct {
	rawOps
	k *killedAtAdd
}

func (r killedRawAtAdd) readLink(index int) (netlink.Link, rawOps, error) {
	if r.k.killed() {
		return nil, nil, errKilled
	}
	return r.rawOps.readLink(index)
}

func (r killedRawAtAdd) markUp(index int, alias string, up bool) error {
	if r.k.killed() {
		return errKilled
	}
	return r.rawOps.markUp(index, alias, up)
}

func (k *killedAtAdd) restore() {
	k.t.Helper()
	if err := os.WriteFile(k.path, k.saved, 0o600); err != nil {
		k.t.Fatal(err)
	}
}

// TestCreateJournalBatchKilled: the creates of one batch share one
// journal write, before the first add, that names every link of the
// batch; an agent killed after any add of the batch leaves links the next
// run adopts (added, not marked), owns (marked) or never made (the stale
// entries are dropped), and that run converges them all and empties the
// journal.
func TestCreateJournalBatchKilled(t *testing.T) {
	var wants []*items.Interface
	var names []string
	var all []dg.Item
	for _, n := range []string{"br0", "br1", "br2", "br3"} {
		wants = append(wants, &items.Interface{IfName: n, Kind: items.KindBridge, AdminUp: true})
	}
	wants = append(wants, &items.Interface{IfName: "v0", Kind: items.KindVeth, AdminUp: true, Attrs: &items.VethAttrs{Peer: "v1"}})
	for _, w := range wants {
		names = append(names, w.IfName)
		all = append(all, w)
	}
	for _, kill := range []int{1, 3, 5} {
		e := stateEnv{t: t, tgt: testns.New(t), dir: t.TempDir()}
		k := e.kernel()
		nl := &killedAtAdd{nlOps: k.nl, t: t, path: filepath.Join(e.dir, stateFileName), names: names, n: kill}
		k.nl, k.raw = nl, killedRawAtAdd{k.raw, nl}
		errs, _ := k.createAll(wants)
		nl.restore()
		for i, err := range errs {
			if i >= kill-1 && !errors.Is(err, errKilled) {
				t.Errorf("kill at add %d: create of %s: %v, want killed", kill, wants[i].IfName, err)
			}
		}
		if j := e.journal(); len(j) != len(wants) {
			t.Errorf("kill at add %d: journal %v, want every link of the batch", kill, j)
		}
		if a := e.link(wants[kill-1].IfName).Attrs().Alias; a != "" {
			t.Errorf("kill at add %d: %s has alias %q", kill, wants[kill-1].IfName, a)
		}
		if st := e.apply(all...); st.Err != nil || len(st.Blocked) > 0 {
			t.Fatalf("kill at add %d: apply after the kill: %v %v\n%s", kill, st.Err, st.Blocked, st.OperationLog)
		}
		for _, name := range append(names, "v1") {
			if a := e.link(name).Attrs().Alias; a != markAlias {
				t.Errorf("kill at add %d: %s after the next apply has alias %q", kill, name, a)
			}
		}
		// Entries of links marked before the kill may stay until the
		// next create drops them.
		for name := range e.journal() {
			if a := e.link(name).Attrs().Alias; a != markAlias {
				t.Errorf("kill at add %d: journal names %s (alias %q) after the next apply", kill, name, a)
			}
		}
		br9 := &items.Interface{IfName: "br9", Kind: items.KindBridge, AdminUp: true}
		if st := e.apply(append(all, br9)...); st.Err != nil {
			t.Fatalf("kill at add %d: apply with br9: %v", kill, st.Err)
		}
		if j := e.journal(); len(j) != 0 {
			t.Errorf("kill at add %d: journal after a further create: %v", kill, j)
		}
	}
}
