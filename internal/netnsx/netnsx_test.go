package netnsx_test

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/vishvananda/netlink"

	"github.com/netagent/netagent/internal/netnsx"
	"github.com/netagent/netagent/internal/testns"
)

func TestOpenMissingNamespaceNamesIt(t *testing.T) {
	testns.RequireRoot(t)
	name := testns.Name("na-missing-")
	_, err := netnsx.Open(name)
	if err == nil || !strings.Contains(err.Error(), name) {
		t.Fatalf("Open(%q) = %v, want an error naming the namespace", name, err)
	}
}

// Do runs f inside the namespace and returns the thread to where it was;
// the handle's netlink acts in the namespace, not in ours.
func TestDoAndHandleActInTheNamespace(t *testing.T) {
	tgt := testns.New(t)
	outside := netNsLink(t)
	var inside string
	if err := tgt.Do(func() error { inside = netNsLink(t); return nil }); err != nil {
		t.Fatal(err)
	}
	if inside == outside {
		t.Errorf("inside Do the thread's namespace is %s, the same as outside", inside)
	}
	if back := netNsLink(t); back != outside {
		t.Errorf("after Do the thread is in %s, want %s", back, outside)
	}
	boom := errors.New("boom")
	if err := tgt.Do(func() error { return boom }); !errors.Is(err, boom) {
		t.Errorf("Do returned %v, want f's error", err)
	}
	links, err := tgt.NL.LinkList()
	if err != nil {
		t.Fatal(err)
	}
	if len(links) != 1 || links[0].Attrs().Name != "lo" {
		t.Errorf("the handle lists %d links (%v), want only the new namespace's lo", len(links), names(links))
	}
}

func netNsLink(t *testing.T) string {
	t.Helper()
	s, err := os.Readlink("/proc/thread-self/ns/net")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func names(links []netlink.Link) []string {
	var out []string
	for _, l := range links {
		out = append(out, l.Attrs().Name)
	}
	return out
}
