//go:build !vmtest

package netns_test

import (
	"encoding/json"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/netagent/netagent/internal/netnsx"
	"github.com/netagent/netagent/internal/testns"
)

// nftEdgeExample is the worked example of the nftables section.
const nftEdgeExample = "../../examples/nftables-edge.json"

// nftEdgeNet is the edge router's world: the router (the test's
// namespace) with its NICs wan0 and lan0 (veth ends), the far ends in
// two more namespaces: outside (192.0.2.1/24, and 198.51.100.2/28 in the
// management set) and the LAN (192.168.50.10/24 and .11, routed through
// the router).
type nftEdgeNet struct {
	*cliEnv
	outside, lan *netnsx.Target
}

func nftEdgeNew(t *testing.T) *nftEdgeNet {
	e := &nftEdgeNet{cliEnv: cliNewEnv(t), outside: testns.New(t), lan: testns.New(t)}
	for _, side := range []struct {
		nic, peer string
		ns        *netnsx.Target
		addrs     []string
		via       string
	}{
		{"wan0", "wanpeer", e.outside, []string{"192.0.2.1/24", "198.51.100.2/28"}, ""},
		{"lan0", "lanpeer", e.lan, []string{"192.168.50.10/24", "192.168.50.11/24"}, "192.168.50.1"},
	} {
		e.ip("link", "add", side.nic, "type", "veth", "peer", "name", side.peer, "netns", side.ns.Name)
		e.ip("link", "set", side.nic, "up")
		testns.Exec(t, side.ns, "ip", "link", "set", "lo", "up")
		testns.Exec(t, side.ns, "ip", "link", "set", side.peer, "up")
		for _, a := range side.addrs {
			testns.Exec(t, side.ns, "ip", "addr", "add", a, "dev", side.peer, "nodad")
		}
		if side.via != "" {
			testns.Exec(t, side.ns, "ip", "route", "add", "default", "via", side.via)
		}
	}
	return e
}

// listen accepts TCP connections on addr in ns and sends each one's
// remote address to the channel; the listener closes with the test.
func nftListen(t *testing.T, ns *netnsx.Target, addr string) <-chan string {
	t.Helper()
	var l net.Listener
	if err := ns.Do(func() (err error) { l, err = net.Listen("tcp", addr); return err }); err != nil {
		t.Fatalf("listening on %s in %s: %v", addr, ns.Name, err)
	}
	t.Cleanup(func() { l.Close() })
	peers := make(chan string, 8)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			peers <- c.RemoteAddr().(*net.TCPAddr).IP.String()
			c.Close()
		}
	}()
	return peers
}

// nftDial connects from src (an address of ns) to dst within 1 s.
func nftDial(ns *netnsx.Target, src, dst string) error {
	return ns.Do(func() error {
		d := net.Dialer{Timeout: time.Second, LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}}
		c, err := d.Dial("tcp", dst)
		if err != nil {
			return err
		}
		return c.Close()
	})
}

// nftAccepted waits for the listener to accept a connection from want.
func nftAccepted(t *testing.T, what string, peers <-chan string, want string) {
	t.Helper()
	select {
	case got := <-peers:
		if got != want {
			t.Errorf("%s: the listener saw %s, want %s", what, got, want)
		}
	case <-time.After(2 * time.Second):
		t.Errorf("%s: the listener accepted nothing", what)
	}
}

// nftEdgeWant is examples/nftables-edge.json's table as `nft -j list
// table inet edge` prints it: the chains (handles left out), then each
// rule as its chain and its expressions, then the set.
var nftEdgeWant = []string{
	`{"family":"inet","name":"netagent-owned","table":"edge"}`,
	`{"family":"inet","hook":"input","name":"input","policy":"drop","prio":0,"table":"edge","type":"filter"}`,
	`{"family":"inet","hook":"forward","name":"forward","policy":"drop","prio":0,"table":"edge","type":"filter"}`,
	`{"family":"inet","hook":"prerouting","name":"prerouting","policy":"accept","prio":-100,"table":"edge","type":"nat"}`,
	`{"family":"inet","hook":"postrouting","name":"postrouting","policy":"accept","prio":100,"table":"edge","type":"nat"}`,
	`input [{"match":{"left":{"ct":{"key":"state"}},"op":"in","right":["established","related"]}},{"accept":null}]`,
	`input [{"match":{"left":{"ct":{"key":"state"}},"op":"in","right":"invalid"}},{"drop":null}]`,
	`input [{"match":{"left":{"meta":{"key":"iifname"}},"op":"==","right":"lo"}},{"accept":null}]`,
	`input [{"match":{"left":{"meta":{"key":"l4proto"}},"op":"==","right":"icmp"}},{"accept":null}]`,
	`input [{"match":{"left":{"payload":{"field":"saddr","protocol":"ip"}},"op":"==","right":"@mgmt"}},{"match":{"left":{"payload":{"field":"dport","protocol":"tcp"}},"op":"==","right":22}},{"counter":{"bytes":BYTES,"packets":PACKETS}},{"accept":null}]`,
	`forward [{"match":{"left":{"ct":{"key":"state"}},"op":"in","right":["established","related"]}},{"accept":null}]`,
	`forward [{"match":{"left":{"meta":{"key":"iifname"}},"op":"==","right":"lan0"}},{"match":{"left":{"meta":{"key":"oifname"}},"op":"==","right":"wan0"}},{"accept":null}]`,
	`forward [{"match":{"left":{"meta":{"key":"iifname"}},"op":"==","right":"wan0"}},{"match":{"left":{"meta":{"key":"oifname"}},"op":"==","right":"lan0"}},{"match":{"left":{"payload":{"field":"daddr","protocol":"ip"}},"op":"==","right":"192.168.50.10"}},{"match":{"left":{"payload":{"field":"dport","protocol":"tcp"}},"op":"==","right":80}},{"accept":null}]`,
	`forward [{"match":{"left":{"meta":{"key":"iifname"}},"op":"==","right":"wan0"}},{"match":{"left":{"meta":{"key":"oifname"}},"op":"==","right":"lan0"}},{"match":{"left":{"payload":{"field":"daddr","protocol":"ip"}},"op":"==","right":"192.168.50.11"}},{"match":{"left":{"payload":{"field":"dport","protocol":"udp"}},"op":"==","right":51820}},{"accept":null}]`,
	`prerouting [{"match":{"left":{"meta":{"key":"iifname"}},"op":"==","right":"wan0"}},{"match":{"left":{"payload":{"field":"dport","protocol":"tcp"}},"op":"==","right":8080}},{"dnat":{"addr":"192.168.50.10","family":"ip","port":80}}]`,
	`prerouting [{"match":{"left":{"meta":{"key":"iifname"}},"op":"==","right":"wan0"}},{"match":{"left":{"payload":{"field":"dport","protocol":"udp"}},"op":"==","right":51820}},{"dnat":{"addr":"192.168.50.11","family":"ip"}}]`,
	`postrouting [{"match":{"left":{"meta":{"key":"oifname"}},"op":"==","right":"wan0"}},{"masquerade":null}]`,
	`set {"elem":["192.168.50.10",{"prefix":{"addr":"198.51.100.0","len":28}}],"flags":["interval"],"name":"mgmt","type":"ipv4_addr"}`,
}

// nftTableLines is `nft -j list table FAMILY NAME` in nftEdgeWant's
// form: its chains without their handles, then its rules, each as its
// chain and its expressions (counters as they are), then its sets.
func nftTableLines(e *cliEnv, family, name string) []string {
	e.t.Helper()
	var chains, rules, sets []string
	for _, o := range nftJSON(e, "table", family, name) {
		for kind, raw := range o {
			var v map[string]any
			json.Unmarshal(raw, &v)
			switch kind {
			case "chain":
				delete(v, "handle")
				b, _ := json.Marshal(v)
				chains = append(chains, string(b))
			case "rule":
				b, _ := json.Marshal(v["expr"])
				rules = append(rules, fmt.Sprintf("%s %s", v["chain"], b))
			case "set":
				b, _ := json.Marshal(map[string]any{"name": v["name"], "type": v["type"], "flags": v["flags"], "elem": v["elem"]})
				sets = append(sets, "set "+string(b))
			}
		}
	}
	return append(append(chains, rules...), sets...)
}

// examples/nftables-edge.json, applied to a router whose NICs wan0 and
// lan0 are veth ends, is in the kernel as `nft -j list table inet edge`
// shows it, a second apply writes nothing, and it routes as an edge
// router does: a port forward reaches its listener in the LAN (the
// client's address kept), the LAN reaches the outside masqueraded as
// wan0's address, SSH is answered from the management set and dropped
// from any other source (the SSH rule counts the one accepted
// connection's packets, no more).
func TestNftablesEdgeExample(t *testing.T) {
	e := nftEdgeNew(t)
	e.mustRun(0, "apply", nftEdgeExample)
	if res := e.mustRun(0, "apply", nftEdgeExample); !strings.Contains(res.stdout, "converged: 0 operations") {
		t.Errorf("the second apply wrote: %s", res)
	}
	checkTable := func(packets, bytes int) {
		t.Helper()
		want := strings.NewReplacer("PACKETS", fmt.Sprint(packets), "BYTES", fmt.Sprint(bytes)).Replace(strings.Join(nftEdgeWant, "\n"))
		if got := strings.Join(nftTableLines(e.cliEnv, "inet", "edge"), "\n"); got != want {
			t.Errorf("nft -j list table inet edge:\n%s", lineDiff(want, got))
		}
	}
	checkTable(0, 0)

	web := nftListen(t, e.lan, "192.168.50.10:80")
	if err := nftDial(e.outside, "192.0.2.1", "192.0.2.2:8080"); err != nil {
		t.Errorf("the port forward 8080 → 192.168.50.10:80: %v", err)
	}
	nftAccepted(t, "the port forward", web, "192.0.2.1")
	out := nftListen(t, e.outside, "192.0.2.1:9000")
	if err := nftDial(e.lan, "192.168.50.11", "192.0.2.1:9000"); err != nil {
		t.Errorf("from the LAN to the outside: %v", err)
	}
	nftAccepted(t, "the masquerade out of wan0", out, "192.0.2.2")

	ssh := nftListen(t, e.tgt, "0.0.0.0:22")
	if err := nftDial(e.outside, "192.0.2.1", "192.0.2.2:22"); err == nil {
		t.Errorf("SSH from 192.0.2.1, outside the management set, was answered")
	}
	if err := nftDial(e.outside, "198.51.100.2", "192.0.2.2:22"); err != nil {
		t.Errorf("SSH from 198.51.100.2, in the management set: %v", err)
	}
	nftAccepted(t, "SSH from the management set", ssh, "198.51.100.2")
	select {
	case p := <-ssh:
		t.Errorf("the SSH listener accepted a connection from %s", p)
	default:
	}
	checkTable(1, 60) // the SYN of the accepted connection: the rest is established
}
