package main

import (
	"bytes"
	"testing"

	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
)

// show's text lists links first, then netagent's objects by type, a
// chain with its rules.
func TestPrintShowText(t *testing.T) {
	var out bytes.Buffer
	printShowText(&globals{stdout: &out}, []dg.Item{
		&items.IptablesChain{Family: items.FamilyIPv4, Table: "nat", Chain: "NAT",
			Rules: [][]string{{"-o", "uplink0", "-m", "comment", "--comment", "to the world", "-j", "MASQUERADE"}}},
		&items.Interface{IfName: "br0", Kind: items.KindBridge, AdminUp: true},
		&items.Link{IfName: "uplink0", Index: 2, Carrier: true, AdminUp: true, OperUp: true},
	})
	want := `links (not netagent's):
  link uplink0 index 2 admin up oper up carrier
interfaces:
  interface br0 bridge up
firewall chains:
  iptables-chain ipv4/nat/NAT 1 rules
      -A NAT -o uplink0 -m comment --comment 'to the world' -j MASQUERADE
`
	if out.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", out.String(), want)
	}
}
