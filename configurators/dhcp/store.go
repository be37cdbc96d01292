package dhcp

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/netagent/netagent/internal/statefile"
	"github.com/netagent/netagent/items/lease4"
)

// KeptInterfaces returns the interfaces whose lease dir keeps, sorted.
func KeptInterfaces(dir string) []string {
	paths, _ := filepath.Glob(filepath.Join(dir, "dhcp4-*.json"))
	var out []string
	for _, p := range paths {
		name := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(p), "dhcp4-"), ".json")
		out = append(out, name)
	}
	return out
}

// KeptLeases returns the leases dir keeps that are still valid at now, by
// interface (unreadable ones are left out).
func KeptLeases(dir string, now time.Time) map[string]*Lease {
	out := map[string]*Lease{}
	for _, name := range KeptInterfaces(dir) {
		if l, err := LoadLease(dir, name); err == nil && l != nil && l.ValidAt(now) {
			out[name] = l
		}
	}
	return out
}

// leasePath is where the lease of ifname is kept under dir.
func leasePath(dir, ifname string) string { return filepath.Join(dir, "dhcp4-"+ifname+".json") }

// SaveLease keeps l in dir (durably: a crash leaves the old lease or the
// new one).
func SaveLease(dir string, l *Lease) error {
	if err := statefile.SaveJSON(leasePath(dir, l.Interface), l); err != nil {
		return fmt.Errorf("saving the lease of %s: %w", l.Interface, err)
	}
	return nil
}

// LoadLease returns the lease kept for ifname in dir, nil when there is
// none. The state directory is not trusted more than a server: the lease
// is held to lease4.Check, and one for another interface is refused.
func LoadLease(dir, ifname string) (*Lease, error) {
	var l Lease
	if ok, err := statefile.LoadJSON(leasePath(dir, ifname), &l); !ok || err != nil {
		if err != nil {
			return nil, fmt.Errorf("reading the lease of %s: %w", ifname, err)
		}
		return nil, nil
	}
	if l.Interface != ifname {
		return nil, fmt.Errorf("reading the lease of %s: it is the lease of %q", ifname, l.Interface)
	}
	if err := lease4.Check(&l); err != nil {
		return nil, fmt.Errorf("reading the lease of %s: %w", ifname, err)
	}
	return &l, nil
}

// ForgetLease removes the lease kept for ifname (an expired or refused
// one: the next acquisition is a DISCOVER).
func ForgetLease(dir, ifname string) {
	os.Remove(leasePath(dir, ifname))
}

func init() {
	statefile.RegisterCache("dhcp4-*.json", "a DHCPv4 lease kept across restarts (a lost one is acquired anew)")
}
