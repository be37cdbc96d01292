//go:build !vmtest

package netns_test

import (
	"strings"
	"time"

	"github.com/vishvananda/netlink"
)

// settle waits until the namespace is quiet and the kernel holds back no
// change of a link, and drains what that brings: after it, a notification
// is caused by what runs next, not a late one of what ran before.
//
// The kernel notifies a link's carrier and operational state from its
// linkwatch work, batched up to a second after the change and later on a
// loaded machine: an idle wait alone can end before it, and the next
// command's first request for that one link (a read-back's RTM_GETLINK by
// name or index) then brings it out, in the middle of what the test
// watches (TestAgentCLIApplyGateway once saw a flags notification of
// vx100, enslaved by the first apply, during the second, a no-op, at load
// 10). A request for one link (not a dump) makes the kernel run the
// link's pending linkwatch event first (rtnl_getlink: linkwatch_sync_dev),
// which notifies before the request returns: settle asks for each link.
// A veth pair added and deleted then is the barrier: once the deletion
// of both its ends is seen, every earlier link notification has been
// read, and is drained.
func (w *cliWatcher) settle(e *cliEnv) {
	w.t.Helper()
	w.quiesce(time.Second)
	nl := e.tgt.NL
	links, err := nl.LinkList()
	if err != nil {
		w.t.Fatalf("settle: listing the links: %v", err)
	}
	for _, l := range links {
		if _, err := nl.LinkByIndex(l.Attrs().Index); err != nil {
			w.t.Fatalf("settle: reading link %s: %v", l.Attrs().Name, err)
		}
	}
	const marker = "na-settle"
	veth := &netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: marker}, PeerName: marker + "-p"}
	if err := nl.LinkAdd(veth); err != nil {
		w.t.Fatalf("settle: adding the barrier link: %v", err)
	}
	if err := nl.LinkDel(veth); err != nil {
		w.t.Fatalf("settle: deleting the barrier link: %v", err)
	}
	deadline := time.After(20 * time.Second)
	gone := map[string]bool{}
	for len(gone) < 2 {
		select {
		case ev := <-w.events:
			for _, name := range []string{marker, veth.PeerName} {
				if strings.HasPrefix(ev, "link 17 "+name+" ") { // RTM_DELLINK
					gone[name] = true
				}
			}
		case <-deadline:
			w.t.Fatalf("settle: the barrier links' deletion was never notified (seen: %v)", gone)
		}
	}
}
