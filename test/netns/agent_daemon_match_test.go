//go:build !vmtest

package netns_test

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// A matched NIC that is not there when the daemon starts: its interface
// fails with "no NIC matches", status lists the address on it as blocked
// on it; a veth with the matched MAC created later (a hot-plug) is picked
// up by the link event without a restart, before the next retry of the
// failed item is due: renamed lan0 (ip -d -j link: the veth's ifindex),
// with the address (ip -j addr).
func TestAgentDaemonMatchHotPlug(t *testing.T) {
	e := daemonNewEnv(t)
	e.writeIntent("10-lan.json", `{"version": 1, "interfaces": [{"name": "lan0", "type": "physical",
		"match": {"mac": "`+nicMAC+`", "driver": "veth"}, "addresses": ["192.0.2.10/24"]}]}`)
	e.startAnyway() // not ready while lan0 fails
	var nextRetry time.Time
	e.waitFor("lan0 failing (7 times: its retry seconds away) and its address blocked", func() (bool, string) {
		st, err := e.status()
		if err != nil {
			return false, err.Error()
		}
		ifc, _ := daemonItem(st, "interface/lan0")
		addr, _ := daemonItem(st, "address/lan0/192.0.2.10/24")
		nextRetry = st.NextRetry
		return ifc.Failures >= 7 && time.Until(st.NextRetry) > 2*time.Second && ifc.State == "failed" && strings.Contains(ifc.LastError, "no NIC matches mac "+nicMAC+" driver veth") &&
			addr.State == "blocked" && strings.Contains(addr.BlockedOn, "waiting for interface/lan0"), fmt.Sprintf("%+v %+v", ifc, addr)
	})
	e.ip("link", "add", "ens5", "address", nicMAC, "type", "veth", "peer", "name", "ens5-peer")
	index := e.linkIndex("ens5")
	e.waitFor("the hot-plugged NIC renamed lan0 with its address", func() (bool, string) {
		out := e.ip("-d", "-j", "link", "show")
		addrs := e.ip("-j", "addr", "show")
		return strings.Contains(addrs, `"ifname":"lan0"`) && strings.Contains(addrs, `"local":"192.0.2.10"`) &&
			strings.Contains(out, `"ifindex":`+index+`,"link":"ens5-peer","ifname":"lan0"`), out + addrs
	})
	if time.Now().After(nextRetry) {
		t.Errorf("picked up after the retry was due (%v): not by the link event", nextRetry)
	}
	st, err := e.status()
	if ifc, _ := daemonItem(st, "interface/lan0"); err != nil || ifc.State == "failed" {
		t.Errorf("status after the hot-plug: %+v, %v", ifc, err)
	}
	if len(e.logs.entries(map[string]string{"msg": "reconciling", "reason": "link"})) == 0 {
		t.Error("no reconcile logged with reason link")
	}
}

// linkIndex is the ifindex of a link, as ip prints it.
func (e *daemonEnv) linkIndex(name string) string {
	e.t.Helper()
	out := e.ip("-o", "link", "show", "dev", name)
	index, _, _ := strings.Cut(out, ":")
	return index
}

// A matched NIC renamed back by hand (its kernel name again): with the
// repair policy the daemon renames it lan0 again; with "drift": "report"
// it leaves it, and status lists the interface as drifted.
func TestAgentDaemonMatchRenamedBack(t *testing.T) {
	for _, policy := range []string{"repair", "report"} {
		t.Run(policy, func(t *testing.T) {
			e := daemonNewEnv(t)
			e.ip("link", "add", "ens5", "address", nicMAC, "type", "veth", "peer", "name", "ens5-peer")
			index := e.linkIndex("ens5")
			e.writeIntent("10-lan.json", `{"version": 1, "drift": "`+policy+`", "interfaces": [{"name": "lan0", "type": "physical",
				"match": {"mac": "`+nicMAC+`"}}]}`)
			e.start("--drift-interval", "1s")
			st, err := e.status()
			if err != nil || e.linkIndex("lan0") != index {
				t.Fatalf("lan0 not matched at start: %v\n%s", err, e.ip("link"))
			}
			e.waitFor("the drift check after the start", func() (bool, string) {
				now, err := e.status()
				return err == nil && now.NextDriftCheck.After(st.NextDriftCheck), now.NextDriftCheck.String()
			})
			e.ip("link", "set", "lan0", "name", "ens5")
			e.waitFor("the rename back "+policy+"ed", func() (bool, string) {
				links := e.ip("-o", "link")
				if policy == "repair" {
					return strings.Contains(links, index+": lan0@"), links
				}
				now, err := e.status()
				if err != nil {
					return false, err.Error()
				}
				for _, d := range now.Drifted {
					if d.Item == "interface/lan0" {
						return strings.Contains(links, index+": ens5@"), links
					}
				}
				return false, fmt.Sprintf("%+v\n%s", now.Drifted, links)
			})
		})
	}
}
