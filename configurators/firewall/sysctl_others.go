package firewall

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/vishvananda/netns"

	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/internal/netnsx"
	"github.com/netagent/netagent/items"
)

// Bounds of ReadChangedSysctls: /proc/sys is the kernel's, but a namespace
// with many interfaces has many files, and a value is never long.
const (
	maxSysctlFiles = 1 << 15
	maxSysctlValue = 512
)

// importedSysctlTrees are the /proc/sys/net directories whose parameters
// ReadChangedSysctls compares: the IP stacks' (global and per interface).
var importedSysctlTrees = []string{"ipv4", "ipv6"}

// ReadChangedSysctls returns, as Sysctl items, the writable parameters
// under net.ipv4 and net.ipv6 in t's namespace whose value differs from
// the kernel's default, for an import. The defaults are read from a fresh
// namespace made for the purpose (unnamed, gone when it is left): a
// global key is compared to the same key there, a per-interface key
// (conf.IF.*, neigh.IF.*) to the namespace's own "default" template,
// which is what a new interface takes. What follows from another listed
// key is left out: the forwarding keys that a global forwarding key
// writes (net.ipv4.ip_forward, net.ipv{4,6}.conf.all.forwarding) and the
// accept_redirects that writing ip_forward sets, and the per-interface
// mtu (the link's MTU).
func ReadChangedSysctls(t *netnsx.Target) ([]dg.Item, error) {
	var here map[string]string
	if err := t.Do(func() (err error) { here, err = readSysctlTrees(); return err }); err != nil {
		return nil, fmt.Errorf("reading sysctls: %w", err)
	}
	fresh, err := inFreshNamespace(readSysctlTrees)
	if err != nil {
		return nil, fmt.Errorf("reading the kernel's default sysctls: %w", err)
	}
	return changedSysctls(here, fresh), nil
}

// changedSysctls is ReadChangedSysctls's choice over the two readings.
func changedSysctls(here, fresh map[string]string) []dg.Item {
	var out []dg.Item
	for _, key := range slices.Sorted(maps.Keys(here)) {
		v := here[key]
		base, ok := fresh[key]
		if tmpl, perIf := templateKey(key); perIf {
			base, ok = here[tmpl]
		}
		if !ok || base == v || impliedSysctl(key, v, here, fresh) {
			continue
		}
		out = append(out, &items.Sysctl{Key: key, Value: v})
	}
	return out
}

// templateKey returns the "default" key of a per-interface key (the
// loopback's is compared to the fresh namespace's loopback).
func templateKey(key string) (string, bool) {
	ifname, ok := items.SysctlInterface(key)
	if !ok {
		return "", false
	}
	name := strings.ReplaceAll(ifname, ".", "/")
	i := strings.Index(key, "."+name+".")
	return key[:i] + ".default." + key[i+len(name)+2:], true
}

// impliedSysctl reports whether key's value v follows from another key
// the import lists (see ReadChangedSysctls), or is not a setting.
func impliedSysctl(key, v string, here, fresh map[string]string) bool {
	if strings.HasSuffix(key, ".mtu") && strings.HasPrefix(key, "net.ipv6.conf.") {
		return true
	}
	switch key {
	case "net.ipv4.conf.all.forwarding":
		return true // net.ipv4.ip_forward is the same parameter
	case "net.ipv4.conf.all.accept_redirects":
		// writing ip_forward sets it to the opposite
		fwd := here["net.ipv4.ip_forward"]
		return fwd != fresh["net.ipv4.ip_forward"] && (fwd == "1") == (v == "0")
	}
	fam, ok := items.InterfaceForwardingSysctl(key)
	if !ok {
		return false
	}
	global := "net." + fam + ".conf.all.forwarding"
	return here[global] == v && here[global] != fresh[global]
}

// readSysctlTrees reads the importedSysctlTrees of the calling thread's
// namespace: key (items' form: a slash for a dot in a name) to value.
func readSysctlTrees() (map[string]string, error) {
	out := map[string]string{}
	for _, tree := range importedSysctlTrees {
		root := "/proc/sys/net/" + tree
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			if len(out) >= maxSysctlFiles {
				return fmt.Errorf("more than %d parameters under /proc/sys/net", maxSysctlFiles)
			}
			if v, ok := readSysctlFile(path, d); ok {
				out[sysctlKeyOf(path)] = v
			}
			return nil
		})
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
	}
	return out, nil
}

// readSysctlFile reads a writable, readable parameter (bounded, its
// value normalized); false for the others (write-only, unreadable ones).
func readSysctlFile(path string, d fs.DirEntry) (string, bool) {
	info, err := d.Info()
	if err != nil || info.Mode().Perm()&0o200 == 0 || info.Mode().Perm()&0o400 == 0 {
		return "", false
	}
	f, err := os.Open(path)
	if err != nil {
		return "", false
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxSysctlValue+1))
	if err != nil || len(b) > maxSysctlValue {
		return "", false
	}
	return items.NormalizeSysctlValue(string(b)), true
}

// sysctlKeyOf turns a /proc/sys path into a key (sysctlPath's inverse).
func sysctlKeyOf(path string) string {
	parts := strings.Split(strings.TrimPrefix(path, "/proc/sys/"), "/")
	for i, p := range parts {
		parts[i] = strings.ReplaceAll(p, ".", "/")
	}
	return strings.Join(parts, ".")
}

// inFreshNamespace runs f on a locked thread in a new, unnamed network
// namespace, and returns the thread to its own; the namespace goes with
// its last handle.
func inFreshNamespace[T any](f func() (T, error)) (T, error) {
	var zero T
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	orig, err := netns.Get()
	if err != nil {
		return zero, fmt.Errorf("saving current network namespace: %w", err)
	}
	defer orig.Close()
	fresh, err := netns.New() // enters it
	if err != nil {
		return zero, fmt.Errorf("making a fresh network namespace: %w", err)
	}
	defer fresh.Close()
	defer func() {
		if err := netns.Set(orig); err != nil {
			panic(fmt.Sprintf("firewall: cannot return to the original namespace: %v", err))
		}
	}()
	return f()
}
