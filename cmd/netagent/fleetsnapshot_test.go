//go:build !nofleet

package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/netagent/netagent/agent/snapshot"
	"github.com/netagent/netagent/configurators/nftables"
	"github.com/netagent/netagent/fleet"
	"github.com/netagent/netagent/internal/etcdtest"
	"github.com/netagent/netagent/store"
)

// `fleet snapshot HOST` prints a host's published snapshot, read through
// snapshot.ReadStored: a summary, or the document with --json (which
// plan --against reads); a host that published none, a record over the
// store's bound, one that is not gzip and one that is not a valid
// document are refused (exit 1) saying which and why.
func TestFleetSnapshotCommand(t *testing.T) {
	e := newFleetEnv(t, etcdtest.Options{})
	l := fleet.Layout{Prefix: "/fleet"}
	put := func(host string, value []byte) {
		t.Helper()
		if _, err := e.st.WriteCAS(context.Background(), l.Snapshot(host), value, store.NoVersion); err != nil {
			t.Fatal(err)
		}
	}
	d := &snapshot.Document{Version: snapshot.Version, Netns: "edge-1", Nftables: &nftables.State{},
		Links: []snapshot.Link{{Index: 1, Name: "lo", Kind: "loopback", MTU: 65536, Up: true, Carrier: true},
			{Index: 2, Name: "br0", Kind: "bridge", MTU: 1500, Up: true, Bridge: &snapshot.Bridge{STP: true, ForwardDelay: 1500}}}}
	raw, err := d.EncodeStored()
	if err != nil {
		t.Fatal(err)
	}
	put("h1", raw)
	code, out, errOut := e.fleet("snapshot", "h1")
	if code != exitOK || !strings.Contains(out, "host h1: snapshot at store version") || !strings.Contains(out, "namespace edge-1") ||
		!strings.Contains(out, "2 links, 0 addresses") || !strings.Contains(out, "br0   bridge    1500   up ") || !strings.Contains(out, `"forwardDelay":1500`) {
		t.Fatalf("fleet snapshot h1: exit %d\n%s%s", code, out, errOut)
	}
	code, out, _ = e.fleet("snapshot", "--json", "h1")
	back, err := snapshot.Read(strings.NewReader(out))
	if code != exitOK || err != nil || len(back.Links) != 2 || back.Netns != "edge-1" {
		t.Fatalf("fleet snapshot --json h1: exit %d, %v\n%s", code, err, out)
	}

	gz := func(b []byte) []byte {
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		zw.Write(b)
		zw.Close()
		return buf.Bytes()
	}
	bad := *d
	bad.Links = append([]snapshot.Link{}, d.Links...)
	bad.Links[1].MTU = -1
	badJSON, _ := json.Marshal(&bad)
	put("corrupt", []byte("not gzip at all"))
	put("invalid", gz(badJSON))
	put("huge", bytes.Repeat([]byte{0}, snapshot.MaxStored+1))
	for host, want := range map[string]string{
		"nobody":  "/fleet/snapshots/nobody holds none (its daemon publishes one with --publish-snapshot)",
		"corrupt": "invalid stored snapshot /fleet/snapshots/corrupt (version",
		"invalid": "links[1].mtu: MTU -1 is out of range",
		"huge":    "larger than the store takes: 1500001 bytes, the limit is 1500000",
	} {
		code, out, errOut := e.fleet("snapshot", host)
		if code != exitFailed || out != "" || !strings.Contains(errOut, want) {
			t.Errorf("fleet snapshot %s: exit %d, stdout %q, stderr %q; want 1 and %q", host, code, out, errOut, want)
		}
	}
	if code, _, errOut := e.fleet("snapshot"); code != exitUsage || !strings.Contains(errOut, "which host?") {
		t.Errorf("no host: exit %d, %s", code, errOut)
	}
	if code, _, errOut := e.fleet("snapshot", "a/b"); code != exitUsage || !strings.Contains(errOut, "host") {
		t.Errorf("a bad host name: exit %d, %s", code, errOut)
	}
}
