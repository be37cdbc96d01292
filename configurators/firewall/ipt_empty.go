package firewall

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/vishvananda/netlink/nl"
	"golang.org/x/sys/unix"

	"github.com/netagent/netagent/internal/netnsx"
	"github.com/netagent/netagent/items"
)

// A namespace without iptables tables of a family is the usual case of an
// intent without chains (a host's routes, a new namespace), and
// iptables-save then prints nothing: asking the kernel first spares the
// program start. An apply runs up to four of them (each family, before
// and after the writes): a fifth of an apply of 10k routes.
//
// noTables answers for the variant iptables-save belongs to:
//
//   - nf_tables (iptables-nft): a dump of the nftables tables of the
//     family over netlink finds none. Any table of the family, an
//     iptables one or not, runs the program as before.
//   - legacy (iptables-legacy): the namespace's list of x_tables tables
//     (/proc/net/ip_tables_names, ip6_tables_names) is empty.
//
// Any error, a variant it cannot tell, or a file it cannot read answers
// "run the program": the probe only ever skips a save that would have
// printed no table.
type tablesProbe func() (none bool, err error)

// newTablesProbe returns the probe for the family's save program in t,
// or nil when the program's variant is unknown.
func newTablesProbe(t *netnsx.Target, fam items.Family, saveCmd string) tablesProbe {
	switch variantOf(saveCmd) {
	case "nft":
		proto := uint8(unix.NFPROTO_IPV4)
		if fam == items.FamilyIPv6 {
			proto = unix.NFPROTO_IPV6
		}
		return func() (none bool, err error) {
			err = t.Do(func() error {
				n, err := countNftTables(proto)
				none = n == 0
				return err
			})
			return none, err
		}
	case "legacy":
		file := "ip_tables_names"
		if fam == items.FamilyIPv6 {
			file = "ip6_tables_names"
		}
		return func() (none bool, err error) {
			err = t.Do(func() error {
				// thread-self: the namespace of the locked thread t.Do runs on.
				data, err := os.ReadFile(filepath.Join("/proc/thread-self/net", file))
				none = len(bytes.TrimSpace(data)) == 0
				return err
			})
			return none, err
		}
	}
	return nil
}

// variantOf tells the iptables variant of a program from the file its
// path resolves to (xtables-nft-multi, iptables-legacy-save, ...): "nft",
// "legacy", or "" when the name says neither.
func variantOf(cmd string) string {
	real, err := filepath.EvalSymlinks(cmd)
	if err != nil {
		return ""
	}
	base := filepath.Base(real)
	switch {
	case strings.Contains(base, "nft"):
		return "nft"
	case strings.Contains(base, "legacy"):
		return "legacy"
	}
	return ""
}

// countNftTables counts the nftables tables of one family (an NFPROTO_
// value) in the calling thread's namespace, from one NFT_MSG_GETTABLE
// dump.
func countNftTables(family uint8) (int, error) {
	const getTable, newTable = unix.NFNL_SUBSYS_NFTABLES<<8 | unix.NFT_MSG_GETTABLE, unix.NFNL_SUBSYS_NFTABLES<<8 | unix.NFT_MSG_NEWTABLE
	req := nl.NewNetlinkRequest(getTable, unix.NLM_F_DUMP)
	req.AddData(&nl.Nfgenmsg{NfgenFamily: family, Version: unix.NFNETLINK_V0})
	msgs, err := req.Execute(unix.NETLINK_NETFILTER, newTable)
	if err != nil {
		return 0, fmt.Errorf("listing nftables tables: %w", err)
	}
	return len(msgs), nil
}
