package nftables

import (
	"bytes"
	"encoding/gob"
	"os"
	"path/filepath"
	"strings"
	"sync"

	gnft "github.com/google/nftables"
	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"

	"github.com/netagent/netagent/internal/statefile"
	"github.com/netagent/netagent/items"
)

// A table's last dump (or netagent's own last write of it) is also kept
// in the state directory, so that the next process (the next apply, a
// check) reads it from there instead of dumping thousands of rules when
// the ruleset's generation is still the one the file names. Generations
// are per namespace and start over in a new one, so the file also names
// the namespace by its cookie (SO_NETNS_COOKIE: never reused until
// reboot) and the boot (its boot_id); a file of another namespace, boot
// or generation is ignored and replaced.

// dumpFile is the content of one table's file.
type dumpFile struct {
	Boot      string
	Cookie    uint64
	Gen       uint32
	Table     items.NftTable
	Handles   map[string][]uint64
	NoHandles bool
}

func dumpFilePath(stateDir, family, name string) string {
	return filepath.Join(stateDir, "nftables-dumps", family+"-"+strings.ReplaceAll(name, "/", "_")+".gob")
}

var bootID = sync.OnceValue(func() string {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
})

// netnsCookie is the cookie of conn's namespace; 0 when unknown.
func netnsCookie(conn *netlink.Conn) uint64 {
	rc, err := conn.SyscallConn()
	if err != nil {
		return 0
	}
	var cookie uint64
	rc.Control(func(fd uintptr) {
		cookie, err = unix.GetsockoptUint64(int(fd), unix.SOL_SOCKET, unix.SO_NETNS_COOKIE)
	})
	if err != nil {
		return 0
	}
	return cookie
}

// loadDump returns the dump of the file of family/name when it is of
// conn's namespace, this boot and generation gen (and has handles when
// they are needed).
func (k netlinkKernel) loadDump(conn *netlink.Conn, family, name string, gen uint32, handles bool) (Dumped, bool) {
	if k.stateDir == "" || bootID() == "" {
		return Dumped{}, false
	}
	data, err := statefile.ReadFile(dumpFilePath(k.stateDir, family, name))
	if err != nil {
		return Dumped{}, false
	}
	var df dumpFile
	if err := gob.NewDecoder(bytes.NewReader(data)).Decode(&df); err != nil {
		return Dumped{}, false
	}
	cookie := netnsCookie(conn)
	if cookie == 0 || df.Cookie != cookie || df.Boot != bootID() || df.Gen != gen || handles && df.NoHandles ||
		df.Table.Family != family || df.Table.Table != name {
		return Dumped{}, false
	}
	// The state directory is not trusted: a table that does not validate
	// is a dump to make again, not the kernel's state.
	if df.Table.Validate() != nil {
		return Dumped{}, false
	}
	return Dumped{Table: df.Table, Owned: true, Handles: df.Handles, Gen: df.Gen, noHandles: df.NoHandles}, true
}

// saveDump writes d (netagent's table) as the file of its table, or
// with keep false removes the file. A file that cannot be written is no
// error: the next process dumps.
func (k netlinkKernel) saveDump(conn *netlink.Conn, family, name string, d Dumped, keep bool) {
	if k.stateDir == "" {
		return
	}
	path := dumpFilePath(k.stateDir, family, name)
	cookie := netnsCookie(conn)
	if !keep || cookie == 0 || bootID() == "" || volatile(d.Table) {
		os.Remove(path)
		return
	}
	var buf bytes.Buffer
	df := dumpFile{Boot: bootID(), Cookie: cookie, Gen: d.Gen, Table: d.Table, Handles: d.Handles, NoHandles: d.noHandles}
	if err := gob.NewEncoder(&buf).Encode(&df); err != nil {
		os.Remove(path)
		return
	}
	if err := statefile.WriteCache(path, buf.Bytes()); err != nil {
		os.Remove(path)
	}
}

// reused is the table of key as it was in generation gen, from this
// process's cache or the state directory's file; a table without handles
// (netagent's own write) gets them, when they are needed, from a dump of
// the rules' handles alone, without their expressions.
func (k netlinkKernel) reused(conn *netlink.Conn, key dumpKey, gen uint32) (Dumped, bool) {
	d, ok := dumps.get(key, gen, false)
	if !ok {
		if d, ok = k.loadDump(conn, key.family, key.name, gen, false); !ok {
			return Dumped{}, false
		}
		dumps.put(key, d, true)
	}
	if !d.noHandles || k.tableOnly {
		return d, true
	}
	handles, err := dumpRuleHandles(conn, key.family, key.name)
	if err != nil {
		return Dumped{}, false
	}
	if after, err := getGen(conn); err != nil || after != gen {
		return Dumped{}, false
	}
	for _, ch := range d.Table.Chains {
		if len(handles[ch.Name]) != len(ch.Rules) {
			return Dumped{}, false
		}
	}
	d.Handles, d.noHandles = handles, false
	dumps.put(key, d, true)
	k.saveDump(conn, key.family, key.name, d, true)
	return d, true
}

// volatile says whether t has a set whose elements change without a
// commit (timeouts, a set that rules add to): the generation does not
// tell, so its dump is not kept for the next process.
func volatile(t items.NftTable) bool {
	for _, s := range t.Sets {
		set, err := encodeSet(&gnft.Table{}, s)
		if err != nil || set.HasTimeout || set.Timeout != 0 || set.Dynamic {
			return true
		}
	}
	return false
}
