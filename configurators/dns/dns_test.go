package dns

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
)

func addrs(s ...string) []netip.Addr {
	var out []netip.Addr
	for _, a := range s {
		out = append(out, netip.MustParseAddr(a))
	}
	return out
}

func sample(path string) *items.DNS {
	return &items.DNS{Path: path, Nameservers: addrs("192.0.2.53", "2001:db8::53"), Search: []string{"corp.example", "lan.example"},
		Global: items.LinkDNS{Nameservers: addrs("192.0.2.53"), Search: []string{"corp.example"}},
		Links:  []items.LinkDNS{{Dev: "up0", Nameservers: addrs("2001:db8::53"), Search: []string{"lan.example"}}}}
}

// fakeResolved records the calls, one line each.
type fakeResolved struct {
	mu    sync.Mutex
	calls []string
	fail  error
}

func (f *fakeResolved) record(s string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, s)
	return f.fail
}
func (f *fakeResolved) SetLinkDNS(_ context.Context, ifname string, s []netip.Addr) error {
	return f.record(fmt.Sprintf("dns %s %v", ifname, s))
}
func (f *fakeResolved) SetLinkDomains(_ context.Context, ifname string, d []string) error {
	return f.record(fmt.Sprintf("domain %s %v", ifname, d))
}
func (f *fakeResolved) RevertLink(_ context.Context, ifname string) error {
	return f.record("revert " + ifname)
}

// A path that does not exist is written: the header, the servers in
// order, the search line; twice is the same file; Delete removes it.
func TestWritesResolvConf(t *testing.T) {
	path := filepath.Join(t.TempDir(), "resolv.conf")
	c := &Configurator{Resolved: &fakeResolved{}, ResolvedDir: filepath.Join(t.TempDir(), "none")}
	ctx := context.Background()
	d := sample(path)
	for range 2 {
		if err := c.Create(ctx, d); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want := Header + "\nnameserver 192.0.2.53\nnameserver 2001:db8::53\nsearch corp.example lan.example\n"
	if string(got) != want {
		t.Errorf("resolv.conf\n%s\nwant\n%s", got, want)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, want 0644", fi.Mode())
	}
	if left, _ := filepath.Glob(filepath.Join(filepath.Dir(path), ".resolv.conf.netagent-*")); len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
	// Read back, it is the item; edited, it is drift.
	hint := dg.New("hint", d)
	if rb := ReadBack(hint, c.ResolvedDir); len(rb) != 1 || !rb[0].Equal(d) {
		t.Errorf("read back %v, want %v", rb, d)
	}
	if err := os.WriteFile(path, []byte(Header+"\nnameserver 203.0.113.1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if rb := ReadBack(hint, c.ResolvedDir); len(rb) != 1 || rb[0].Equal(d) {
		t.Errorf("read back of an edited file %v: want an item that differs", rb)
	}
	if err := c.Modify(ctx, d, d); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(path); string(got) != want {
		t.Errorf("after Modify:\n%s", got)
	}
	for range 2 {
		if err := c.Delete(ctx, d); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := os.Lstat(path); !os.IsNotExist(err) {
		t.Errorf("after Delete: %v", err)
	}
}

// A file netagent did not write, a symlink elsewhere, a directory: never
// written over, an error naming the path; Delete leaves them too.
func TestNeverClobbers(t *testing.T) {
	dir := t.TempDir()
	foreign := []byte("# written by hand\nnameserver 9.9.9.9\n")
	file := filepath.Join(dir, "resolv.conf")
	if err := os.WriteFile(file, foreign, 0o644); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(dir, "other.conf")
	if err := os.WriteFile(other, []byte(Header+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.conf")
	if err := os.Symlink(other, link); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(dir, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	c := &Configurator{Resolved: &fakeResolved{}, ResolvedDir: filepath.Join(dir, "no-resolved")}
	for _, path := range []string{file, link, sub} {
		err := c.Create(context.Background(), sample(path))
		if !errors.Is(err, ErrForeign) || !strings.Contains(err.Error(), path) {
			t.Errorf("%s: error %v, want ErrForeign naming the path", path, err)
		}
		if err := c.Delete(context.Background(), sample(path)); err != nil {
			t.Errorf("%s: Delete: %v", path, err)
		}
		if rb := ReadBack(dg.New("hint", sample(path)), c.ResolvedDir); len(rb) != 0 {
			t.Errorf("%s: read back %v", path, rb)
		}
	}
	if got, _ := os.ReadFile(file); string(got) != string(foreign) {
		t.Errorf("foreign file now %q", got)
	}
	if got, _ := os.Readlink(link); got != other {
		t.Errorf("symlink now to %q", got)
	}
}

// A symlink into systemd-resolved's directory: the links' DNS goes to
// resolved, the file is not touched; a link whose lease goes is reverted;
// the intent's own servers are an error saying where they belong; with
// resolved gone, the dangling stub link is an error.
func TestHandsToResolved(t *testing.T) {
	dir := t.TempDir()
	resolved := filepath.Join(dir, "run-resolve")
	if err := os.Mkdir(resolved, 0o755); err != nil {
		t.Fatal(err)
	}
	stub := filepath.Join(resolved, "stub-resolv.conf")
	if err := os.WriteFile(stub, []byte("nameserver 127.0.0.53\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "resolv.conf")
	if err := os.Symlink("run-resolve/stub-resolv.conf", path); err != nil { // relative, as Debian's
		t.Fatal(err)
	}
	fake := &fakeResolved{}
	c := &Configurator{Resolved: fake, ResolvedDir: resolved}
	ctx := context.Background()

	leasesOnly := sample(path)
	leasesOnly.Global = items.LinkDNS{}
	leasesOnly.Links = append(leasesOnly.Links, items.LinkDNS{Dev: "up1", Nameservers: addrs("198.51.100.1")})
	if err := c.Create(ctx, leasesOnly); err != nil {
		t.Fatal(err)
	}
	next := sample(path)
	err := c.Modify(ctx, leasesOnly, next)
	if !errors.Is(err, ErrResolvedGlobal) {
		t.Errorf("Modify with the intent's servers: %v, want ErrResolvedGlobal", err)
	}
	if err := c.Delete(ctx, next); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"dns up0 [2001:db8::53]", "domain up0 [lan.example]", "dns up1 [198.51.100.1]", "domain up1 []",
		"dns up0 [2001:db8::53]", "domain up0 [lan.example]", "revert up1",
		"revert up0",
	}
	if !slices.Equal(fake.calls, want) {
		t.Errorf("resolved calls\n%q\nwant\n%q", fake.calls, want)
	}
	if got, _ := os.ReadFile(stub); string(got) != "nameserver 127.0.0.53\n" {
		t.Errorf("stub now %q", got)
	}
	// Read back under resolved: the per-link part is held (no second
	// hand-over), the intent's own part never is (it fails again).
	if rb := ReadBack(dg.New("hint", leasesOnly), resolved); len(rb) != 1 || !rb[0].Equal(leasesOnly) {
		t.Errorf("read back under resolved %v, want %v", rb, leasesOnly)
	}
	if rb := ReadBack(dg.New("hint", next), resolved); len(rb) != 1 || rb[0].Equal(next) {
		t.Errorf("read back under resolved %v: want the item without its global part", rb)
	}

	if err := os.RemoveAll(resolved); err != nil {
		t.Fatal(err)
	}
	if err := c.Create(ctx, leasesOnly); !errors.Is(err, ErrResolvedDown) || !strings.Contains(err.Error(), path) {
		t.Errorf("resolved down: %v, want ErrResolvedDown naming %s", err, path)
	}
}

// Render and parse agree, a link-local server keeps its zone.
func TestRenderParse(t *testing.T) {
	d := &items.DNS{Path: "/x", Nameservers: addrs("fe80::1%up0", "192.0.2.1"), Search: []string{"a.example"}}
	data, _ := Render(d)
	s, search := parse(data)
	if !slices.Equal(s, d.Nameservers) || !slices.Equal(search, d.Search) {
		t.Errorf("parsed %v %v from\n%s", s, search, data)
	}
}

// TestSilentRemovesOurs: an item with nothing to say (items.DNS.Silent)
// over the agent's file reads back as what the file says, and modifying
// it removes the file; then, and over a file someone else wrote, it reads
// back as itself (nothing to do), and the foreign file is left alone.
func TestSilentRemovesOurs(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "resolv.conf")
	c := &Configurator{Resolved: &fakeResolved{}, ResolvedDir: filepath.Join(dir, "no-resolved")}
	if err := c.Create(context.Background(), sample(file)); err != nil {
		t.Fatal(err)
	}
	silent := &items.DNS{Path: file}
	rb := ReadBack(dg.New("hint", silent), c.ResolvedDir)
	if len(rb) != 1 || rb[0].Equal(silent) {
		t.Fatalf("read back %v over the agent's file, want its servers", rb)
	}
	if err := c.Modify(context.Background(), rb[0], silent); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(file); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the agent's file stayed: %v", err)
	}
	if rb := ReadBack(dg.New("hint", silent), c.ResolvedDir); len(rb) != 1 || !rb[0].Equal(silent) {
		t.Errorf("read back %v with no file, want the silent item", rb)
	}
	foreign := []byte("# written by hand\nnameserver 9.9.9.9\n")
	if err := os.WriteFile(file, foreign, 0o644); err != nil {
		t.Fatal(err)
	}
	if rb := ReadBack(dg.New("hint", silent), c.ResolvedDir); len(rb) != 1 || !rb[0].Equal(silent) {
		t.Errorf("read back %v over a foreign file, want the silent item", rb)
	}
	if err := c.Create(context.Background(), silent); err != nil {
		t.Errorf("Create over a foreign file with nothing to say: %v", err)
	}
	if got, _ := os.ReadFile(file); string(got) != string(foreign) {
		t.Errorf("foreign file now %q", got)
	}
}
