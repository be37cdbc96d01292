package firewall

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/netagent/netagent/configurators/netnsx"
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
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.NETLINK_NETFILTER)
	if err != nil {
		return 0, fmt.Errorf("nftables socket: %w", err)
	}
	defer unix.Close(fd)
	if err := unix.Bind(fd, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return 0, fmt.Errorf("nftables socket: %w", err)
	}
	const seq = 1
	req := make([]byte, unix.NLMSG_HDRLEN+4)
	binary.NativeEndian.PutUint32(req[0:], uint32(len(req)))
	binary.NativeEndian.PutUint16(req[4:], unix.NFNL_SUBSYS_NFTABLES<<8|unix.NFT_MSG_GETTABLE)
	binary.NativeEndian.PutUint16(req[6:], unix.NLM_F_REQUEST|unix.NLM_F_DUMP)
	binary.NativeEndian.PutUint32(req[8:], seq)
	req[unix.NLMSG_HDRLEN] = family // nfgenmsg: family, version (NFNETLINK_V0), res_id
	if err := unix.Sendto(fd, req, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return 0, fmt.Errorf("listing nftables tables: %w", err)
	}
	buf := make([]byte, 32<<10)
	count := 0
	for {
		n, _, err := unix.Recvfrom(fd, buf, 0)
		if err != nil {
			return 0, fmt.Errorf("listing nftables tables: %w", err)
		}
		msgs, err := syscall.ParseNetlinkMessage(buf[:n])
		if err != nil {
			return 0, fmt.Errorf("listing nftables tables: %w", err)
		}
		for _, m := range msgs {
			if m.Header.Seq != seq {
				continue
			}
			switch m.Header.Type {
			case unix.NLMSG_DONE:
				return count, nil
			case unix.NLMSG_ERROR:
				if len(m.Data) < 4 {
					return 0, errors.New("listing nftables tables: short error message")
				}
				if errno := -int32(binary.NativeEndian.Uint32(m.Data)); errno != 0 {
					return 0, fmt.Errorf("listing nftables tables: %w", unix.Errno(errno))
				}
				return count, nil
			case unix.NFNL_SUBSYS_NFTABLES<<8 | unix.NFT_MSG_NEWTABLE:
				count++
			}
		}
	}
}
