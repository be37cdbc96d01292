package firewall

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/internal/statefile"
	"github.com/netagent/netagent/items"
)

func TestSysctlPath(t *testing.T) {
	for key, want := range map[string]string{
		"net.ipv4.ip_forward":              "/proc/sys/net/ipv4/ip_forward",
		"net.ipv4.conf.eth0/100.rp_filter": "/proc/sys/net/ipv4/conf/eth0.100/rp_filter",
	} {
		if got, err := sysctlPath(key); err != nil || got != want {
			t.Errorf("sysctlPath(%q) = %q, %v", key, got, err)
		}
	}
	for _, bad := range []string{"kernel.panic", "net", "net..x", "net.ipv4.conf.//.x", "net.ipv4./.x", "net.a b"} {
		if _, err := sysctlPath(bad); !errors.Is(err, ErrBadKey) {
			t.Errorf("sysctlPath(%q) err = %v, want ErrBadKey", bad, err)
		}
	}
}

func TestSysctlLifecycle(t *testing.T) {
	const path = "/proc/sys/net/ipv4/tcp_rmem"
	pfs := &FakeProcSys{files: map[string]string{path: "4096\t131072\t6291456"}}
	dir := t.TempDir()
	ns := statefile.NsIdentity{BootID: "b", Netns: "x", NsID: "NS(1:2)"}
	c := &sysctlConfigurator{fs: pfs, store: newSysctlStore(dir, ns)}
	ctx := context.Background()
	s := &items.Sysctl{Key: "net.ipv4.tcp_rmem", Value: "4096 87380 6291456"}
	if err := c.Create(ctx, s); err != nil {
		t.Fatal(err)
	}
	if err := c.Create(ctx, s); err != nil {
		t.Fatal(err)
	}
	// The kernel prints tabs: still equal, no write.
	pfs.files[path] = "4096\t87380\t6291456"
	if err := c.Modify(ctx, s, s); err != nil {
		t.Fatal(err)
	}
	if pfs.writes != 1 {
		t.Errorf("writes = %d, want 1", pfs.writes)
	}
	s2 := &items.Sysctl{Key: s.Key, Value: "4096 65536 6291456"}
	if err := c.Modify(ctx, s, s2); err != nil {
		t.Fatal(err)
	}
	// A restarted configurator reads the original from the record.
	c2 := &sysctlConfigurator{fs: pfs, store: newSysctlStore(dir, ns)}
	got, err := readBackSysctls(pfs, c2.store, dg.New("intent", s2))
	if err != nil || len(got) != 1 || got[0].(*items.Sysctl).Value != s2.Value {
		t.Fatalf("read back %v, %v", got, err)
	}
	for range 2 {
		if err := c2.Delete(ctx, s2); err != nil {
			t.Fatal(err)
		}
	}
	if pfs.files[path] != "4096\t131072\t6291456" {
		t.Errorf("after delete %q, want the original", pfs.files[path])
	}
	// Another namespace's record is separate.
	other := &sysctlConfigurator{fs: pfs, store: newSysctlStore(dir, statefile.NsIdentity{BootID: "b", Netns: "y"})}
	if orig, _ := other.store.originals(); len(orig) != 0 {
		t.Errorf("other namespace owns %v", orig)
	}
}

func TestSysctlInterfaceGone(t *testing.T) {
	const path = "/proc/sys/net/ipv4/conf/v0/forwarding"
	pfs := &FakeProcSys{files: map[string]string{path: "0"}}
	c := &sysctlConfigurator{fs: pfs, store: newSysctlStore(t.TempDir(), statefile.NsIdentity{BootID: "b"})}
	s := &items.Sysctl{Key: "net.ipv4.conf.v0.forwarding", Value: "1"}
	if err := c.Create(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	delete(pfs.files, path)
	if got, err := readBackSysctls(pfs, c.store, nil); err != nil || len(got) != 0 {
		t.Errorf("read back %v, %v; want nothing", got, err)
	}
	if err := c.Delete(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	if orig, _ := c.store.originals(); len(orig) != 0 {
		t.Errorf("record kept: %v", orig)
	}
}

// Turning an interface's IPv6 on (disable_ipv6 0) solicits a router when
// the interface accepts advertisements, and only then: not for
// accept_ra 0, other keys, or all/default.
func TestSysctlSolicitsWhenRAAccepted(t *testing.T) {
	pfs := &FakeProcSys{files: map[string]string{
		"/proc/sys/net/ipv6/conf/up0/disable_ipv6":     "0",
		"/proc/sys/net/ipv6/conf/up0/accept_ra":        "2",
		"/proc/sys/net/ipv6/conf/lan0/disable_ipv6":    "1",
		"/proc/sys/net/ipv6/conf/lan0/accept_ra":       "0",
		"/proc/sys/net/ipv6/conf/eth0.7/disable_ipv6":  "0",
		"/proc/sys/net/ipv6/conf/eth0.7/accept_ra":     "1",
		"/proc/sys/net/ipv6/conf/default/disable_ipv6": "0",
		"/proc/sys/net/ipv6/conf/default/accept_ra":    "1",
		"/proc/sys/net/ipv6/conf/up0/accept_ra_defrtr": "0",
	}}
	var solicited []string
	c := &sysctlConfigurator{fs: pfs, store: newSysctlStore(t.TempDir(), statefile.NsIdentity{BootID: "b", Netns: "x", NsID: "NS(1:2)"}),
		solicit: func(ifname string) error { solicited = append(solicited, ifname); return nil }}
	ctx := context.Background()
	for _, s := range []*items.Sysctl{
		{Key: "net.ipv6.conf.up0.accept_ra_defrtr", Value: "1"},
		{Key: "net.ipv6.conf.up0.disable_ipv6", Value: "0"},
		{Key: "net.ipv6.conf.lan0.disable_ipv6", Value: "0"},
		{Key: "net.ipv6.conf.eth0/7.disable_ipv6", Value: "0"},
		{Key: "net.ipv6.conf.default.disable_ipv6", Value: "0"},
	} {
		if err := c.Create(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	if len(solicited) != 2 || solicited[0] != "up0" || solicited[1] != "eth0.7" {
		t.Errorf("solicited on %v, want up0 and eth0.7", solicited)
	}
}

// TestSysctlForgedOriginalsNotRestored: sysctl originals that someone
// other than root could have written (the record owned by another user,
// writable by its group, or a symbolic link to a file of theirs) are
// refused, never "restored": the parameter keeps its value (before the
// fix, forwarding was turned on from a forged record).
func TestSysctlForgedOriginalsNotRestored(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: chown to nobody")
	}
	const path = "/proc/sys/net/ipv4/ip_forward"
	ns := statefile.NsIdentity{BootID: "b", Netns: "x", NsID: "NS(1:2)"}
	forged := fmt.Sprintf(`{"namespaces":[{"boot_id":%q,"netns":%q,"ns_id":%q,"originals":{"net.ipv4.ip_forward":"1"}}]}`,
		ns.BootID, ns.Netns, ns.NsID)
	cases := []struct {
		name  string
		plant func(t *testing.T, file string)
		why   string
	}{
		{"owned by nobody", func(t *testing.T, file string) {
			writeFile(t, file, forged, 0o600)
			if err := os.Chown(file, 65534, 65534); err != nil {
				t.Fatal(err)
			}
		}, "is owned by uid 65534"},
		{"group-writable", func(t *testing.T, file string) { writeFile(t, file, forged, 0o664) }, "is writable by its group"},
		{"a link to another's file", func(t *testing.T, file string) {
			theirs := filepath.Join(t.TempDir(), "theirs.json")
			writeFile(t, theirs, forged, 0o600)
			if err := os.Symlink(theirs, file); err != nil {
				t.Fatal(err)
			}
		}, "symbolic link"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			c.plant(t, filepath.Join(dir, sysctlStateFile))
			pfs := &FakeProcSys{files: map[string]string{path: "0"}}
			sc := &sysctlConfigurator{fs: pfs, store: newSysctlStore(dir, ns)}
			err := sc.Delete(context.Background(), &items.Sysctl{Key: "net.ipv4.ip_forward", Value: "0"})
			if err == nil || !strings.Contains(err.Error(), c.why) {
				t.Errorf("delete over a forged record: %v, want a refusal (%q)", err, c.why)
			}
			if pfs.files[path] != "0" || pfs.writes != 0 {
				t.Errorf("ip_forward %q after %d writes: the forged original was restored", pfs.files[path], pfs.writes)
			}
		})
	}
}

func writeFile(t *testing.T, path, content string, mode os.FileMode) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
}
