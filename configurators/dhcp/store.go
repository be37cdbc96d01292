package dhcp

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/netagent/netagent/configurators/statefile"
)

// leasePath is where the lease of ifname is kept under dir.
func leasePath(dir, ifname string) string { return filepath.Join(dir, "dhcp4-"+ifname+".json") }

// SaveLease keeps l in dir (durably: a crash leaves the old lease or the
// new one).
func SaveLease(dir string, l *Lease) error {
	data, err := json.Marshal(l)
	if err != nil {
		return fmt.Errorf("encoding the lease of %s: %w", l.Interface, err)
	}
	if err := statefile.WriteAtomic(leasePath(dir, l.Interface), data); err != nil {
		return fmt.Errorf("saving the lease of %s: %w", l.Interface, err)
	}
	return nil
}

// LoadLease returns the lease kept for ifname in dir, nil when there is
// none.
func LoadLease(dir, ifname string) (*Lease, error) {
	data, err := os.ReadFile(leasePath(dir, ifname))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the lease of %s: %w", ifname, err)
	}
	var l Lease
	if err := json.Unmarshal(data, &l); err != nil {
		return nil, fmt.Errorf("reading the lease of %s from %s: %w", ifname, leasePath(dir, ifname), err)
	}
	return &l, nil
}
