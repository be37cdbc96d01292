package nftables

import (
	"reflect"
	"testing"

	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"

	"github.com/netagent/netagent/items"
)

// TestPartialEcho: of a run of rules added one after another into a
// table, the first and the last ask for their echo; the handles between
// follow from the first, and an echo not where its run puts it, or a
// first one missing, leaves the handles unknown.
func TestPartialEcho(t *testing.T) {
	msg := func(typ uint16, op int, chain string) message {
		data := nfgen(unix.NFPROTO_INET, 0)
		if chain != "" {
			attr, err := netlink.MarshalAttributes([]netlink.Attribute{{Type: unix.NFTA_RULE_CHAIN, Data: []byte(chain + "\x00")}})
			if err != nil {
				t.Fatal(err)
			}
			data = append(data, attr...)
		}
		return message{m: netlink.Message{Header: netlink.Header{Type: netlink.HeaderType(unix.NFNL_SUBSYS_NFTABLES<<8 | typ)}, Data: data}, op: op}
	}
	tab := items.NftTable{Family: "inet", Table: "t"}
	other := items.NftTable{Family: "inet", Table: "u"}
	ops := []Op{{Kind: OpCreateTable, Table: tab}, {Kind: OpAddRule, Table: other, Chain: items.NftChain{Name: "c"}}}
	msgs := []message{
		msg(unix.NFT_MSG_NEWTABLE, 0, ""), msg(unix.NFT_MSG_NEWCHAIN, 0, ""), msg(unix.NFT_MSG_NEWCHAIN, 0, ""),
		msg(unix.NFT_MSG_NEWRULE, 0, "a"), msg(unix.NFT_MSG_NEWRULE, 0, "a"), msg(unix.NFT_MSG_NEWRULE, 0, "b"),
		msg(unix.NFT_MSG_NEWRULE, 0, "b"), // the run of table t ends here
		msg(unix.NFT_MSG_NEWRULE, 1, "c"), // a run of one, in table u
		msg(unix.NFT_MSG_NEWSET, 0, ""), msg(unix.NFT_MSG_NEWRULE, 0, "b"), msg(unix.NFT_MSG_NEWRULE, 0, "b"),
	}
	if got, want := echoWanted(msgs, ops), []bool{false, false, false, true, false, false, true, true, false, true, true}; !reflect.DeepEqual(got, want) {
		t.Fatalf("echoWanted = %v, want %v", got, want)
	}
	echoes := map[int]ruleEcho{3: {"a", 10}, 6: {"b", 13}, 7: {"c", 4}, 9: {"b", 15}, 10: {"b", 16}}
	h, ok := handlesAfter(nil, ops, msgs, echoes)
	// Two tables' handles by chain name: the test's chains are distinct.
	if want := map[string][]uint64{"a": {10, 11}, "b": {12, 13, 15, 16}, "c": {4}}; !ok || !reflect.DeepEqual(h, want) {
		t.Errorf("handlesAfter = %v, %v; want %v", h, ok, want)
	}
	for name, bad := range map[string]map[int]ruleEcho{
		"the last not the first plus its place": {3: {"a", 10}, 6: {"b", 20}, 7: {"c", 4}, 9: {"b", 15}, 10: {"b", 16}},
		"a first missing":                       {6: {"b", 13}, 7: {"c", 4}, 9: {"b", 15}, 10: {"b", 16}},
		"a run of one missing":                  {3: {"a", 10}, 6: {"b", 13}, 9: {"b", 15}, 10: {"b", 16}},
	} {
		if h, ok := handlesAfter(nil, ops, msgs, bad); ok {
			t.Errorf("%s: handlesAfter = %v, want unknown", name, h)
		}
	}
}
