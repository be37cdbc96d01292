package dhcp6

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/netagent/netagent/internal/statefile"
)

// KeptLeases returns the leases dir keeps that are still valid at now, by
// interface (unreadable ones are left out).
func KeptLeases(dir string, now time.Time) map[string]*Lease {
	paths, _ := filepath.Glob(filepath.Join(dir, "dhcp6-*.json"))
	out := map[string]*Lease{}
	for _, p := range paths {
		name := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(p), "dhcp6-"), ".json")
		if l := LoadValid(dir, name, now); l != nil {
			l.Obtained = "kept"
			out[name] = l
		}
	}
	return out
}

// leasePath is where the lease of ifname is kept under dir.
func leasePath(dir, ifname string) string { return filepath.Join(dir, "dhcp6-"+ifname+".json") }

// SaveLease keeps l in dir (durably: a crash leaves the old lease or the
// new one).
func SaveLease(dir string, l *Lease) error {
	if err := statefile.SaveJSON(leasePath(dir, l.Interface), l); err != nil {
		return fmt.Errorf("saving the DHCPv6 lease of %s: %w", l.Interface, err)
	}
	return nil
}

// LoadLease returns the lease kept for ifname in dir, nil when there is
// none.
func LoadLease(dir, ifname string) (*Lease, error) {
	var l Lease
	if ok, err := statefile.LoadJSON(leasePath(dir, ifname), &l); !ok || err != nil {
		if err != nil {
			return nil, fmt.Errorf("reading the DHCPv6 lease of %s: %w", ifname, err)
		}
		return nil, nil
	}
	if l.Interface != ifname {
		return nil, fmt.Errorf("reading the DHCPv6 lease of %s: it is the lease of %q", ifname, l.Interface)
	}
	if err := check(&l); err != nil {
		return nil, fmt.Errorf("reading the DHCPv6 lease of %s: %w", ifname, err)
	}
	return &l, nil
}

// LoadValid returns the kept lease of ifname if it has not expired at
// now, else nil.
func LoadValid(dir, ifname string, now time.Time) *Lease {
	l, err := LoadLease(dir, ifname)
	if err != nil || l == nil || !now.Before(l.Expires()) {
		return nil
	}
	return l
}

// DropLease forgets the kept lease of ifname.
func DropLease(dir, ifname string) error {
	if err := os.Remove(leasePath(dir, ifname)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("forgetting the DHCPv6 lease of %s: %w", ifname, err)
	}
	return nil
}

func init() {
	statefile.RegisterCache("dhcp6-*.json", "a DHCPv6 lease kept across restarts (a lost one is acquired anew)")
}
