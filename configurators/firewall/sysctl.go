package firewall

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"slices"
	"strings"

	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
)

// sysctlFS reads and writes /proc/sys files inside the target namespace.
type sysctlFS interface {
	read(path string) (string, error)
	write(path, value string) error
}

// procSys is the real sysctlFS: /proc/sys/net shows the namespace of the
// thread that opens the file, so every access runs inside do.
type procSys struct{ do func(func() error) error }

func (p procSys) read(path string) (string, error) {
	var data []byte
	err := p.do(func() (err error) {
		data, err = os.ReadFile(path)
		return err
	})
	return strings.TrimRight(string(data), "\n"), err
}

func (p procSys) write(path, value string) error {
	return p.do(func() error {
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			return err
		}
		_, werr := f.WriteString(value)
		return errors.Join(werr, f.Close())
	})
}

// sysctlPath maps a key to its file: dots separate directories, a slash
// stands for a dot inside an interface name.
func sysctlPath(key string) (string, error) {
	parts := strings.Split(key, ".")
	if len(parts) < 2 || parts[0] != "net" {
		return "", fmt.Errorf("%q: %w", key, ErrBadKey)
	}
	for i, p := range parts {
		p = strings.ReplaceAll(p, "/", ".")
		if p == "" || p == "." || p == ".." || strings.ContainsAny(p, " \t\n\x00") {
			return "", fmt.Errorf("%q: %w", key, ErrBadKey)
		}
		parts[i] = p
	}
	return "/proc/sys/" + strings.Join(parts, "/"), nil
}

// sysctlConfigurator manages sysctl items: it saves a parameter's value
// before it first changes it, and writes it back on delete.
type sysctlConfigurator struct {
	fs    sysctlFS
	store *sysctlStore
	// solicit, when set, sends a Router Solicitation on an interface
	// (ndisc.Solicit): see solicitIfRA.
	solicit func(ifname string) error
}

// Create saves the current value as the original (unless one is saved)
// and writes the item's value if it differs.
func (c *sysctlConfigurator) Create(_ context.Context, item dg.Item) error {
	s, err := items.As[*items.Sysctl](item)
	if err != nil {
		return err
	}
	if err := c.set(s); err != nil {
		return fmt.Errorf("setting sysctl %s: %w", s.Key, err)
	}
	c.solicitIfRA(s)
	return nil
}

// Modify writes the new value if the kernel holds another one; the first
// saved original stays.
func (c *sysctlConfigurator) Modify(_ context.Context, _, newItem dg.Item) error {
	s, err := items.As[*items.Sysctl](newItem)
	if err != nil {
		return err
	}
	if err := c.set(s); err != nil {
		return fmt.Errorf("setting sysctl %s: %w", s.Key, err)
	}
	c.solicitIfRA(s)
	return nil
}

// solicitIfRA sends a Router Solicitation when s turns an interface's
// IPv6 on (disable_ipv6 0, which render orders after the interface's
// accept_ra, autoconf and the like) and the interface accepts router
// advertisements: on a link already up, the kernel would otherwise wait
// for the router's next periodic advertisement (it solicits by itself
// only when the link comes up). Best effort: a solicitation that cannot
// be sent leaves the periodic advertisements.
func (c *sysctlConfigurator) solicitIfRA(s *items.Sysctl) {
	ifname, ok := strings.CutPrefix(s.Key, "net.ipv6.conf.")
	if ifname, ok = strings.CutSuffix(ifname, ".disable_ipv6"); !ok || c.solicit == nil ||
		items.NormalizeSysctlValue(s.Value) != "0" || ifname == "all" || ifname == "default" || strings.Contains(ifname, ".") {
		return
	}
	path, err := sysctlPath("net.ipv6.conf." + ifname + ".accept_ra")
	if err != nil {
		return
	}
	if v, err := c.fs.read(path); err != nil || items.NormalizeSysctlValue(v) == "0" {
		return
	}
	_ = c.solicit(strings.ReplaceAll(ifname, "/", "."))
}

// Delete writes the saved original back and forgets it. Without a saved
// original there is nothing of netagent's to undo: the value is left alone.
func (c *sysctlConfigurator) Delete(_ context.Context, item dg.Item) error {
	s, err := items.As[*items.Sysctl](item)
	if err != nil {
		return err
	}
	if err := c.restore(s.Key); err != nil {
		return fmt.Errorf("restoring sysctl %s: %w", s.Key, err)
	}
	return nil
}

// NeedsRecreate delegates to items.NeedsRecreate: never.
func (c *sysctlConfigurator) NeedsRecreate(oldItem, newItem dg.Item) bool {
	return items.NeedsRecreate(oldItem, newItem)
}

// set saves the original first (so that a crash after the write still
// knows it), then writes the value if it differs.
func (c *sysctlConfigurator) set(s *items.Sysctl) error {
	path, err := sysctlPath(s.Key)
	if err != nil {
		return err
	}
	cur, err := c.fs.read(path)
	if err != nil {
		return err
	}
	if err := c.store.remember(s.Key, cur); err != nil {
		return err
	}
	if items.NormalizeSysctlValue(cur) == items.NormalizeSysctlValue(s.Value) {
		return nil
	}
	return c.fs.write(path, s.Value)
}

// restore writes key's original back, then forgets it. A parameter that
// vanished with its interface is simply forgotten.
func (c *sysctlConfigurator) restore(key string) error {
	orig, err := c.store.originals()
	if err != nil {
		return err
	}
	value, ok := orig[key]
	if !ok {
		return nil
	}
	path, err := sysctlPath(key)
	if err != nil {
		return err
	}
	cur, err := c.fs.read(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return err
	case items.NormalizeSysctlValue(cur) != items.NormalizeSysctlValue(value):
		if err := c.fs.write(path, value); err != nil {
			return err
		}
	}
	return c.store.forget(key)
}

// readBackSysctls returns the parameters netagent owns (those with a saved
// original) with their current values; a value equal to the intended one
// is returned as the intent spells it.
func readBackSysctls(sfs sysctlFS, store *sysctlStore, hint *dg.Graph) ([]dg.Item, error) {
	orig, err := store.originals()
	if err != nil {
		return nil, fmt.Errorf("reading back sysctls: %w", err)
	}
	var out []dg.Item
	for _, key := range slices.Sorted(maps.Keys(orig)) {
		s, err := readBackSysctl(sfs, key, hint)
		if err != nil {
			return nil, fmt.Errorf("reading back sysctl %s: %w", key, err)
		}
		if s != nil {
			out = append(out, s)
		}
	}
	return out, nil
}

// readBackSysctl reads one owned parameter; nil if its file is gone.
func readBackSysctl(sfs sysctlFS, key string, hint *dg.Graph) (*items.Sysctl, error) {
	path, err := sysctlPath(key)
	if err != nil {
		return nil, err
	}
	cur, err := sfs.read(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	s := &items.Sysctl{Key: key, Value: cur}
	if hint != nil {
		if h, ok := hint.Get(dg.Ref(s)); ok {
			hs := h.(*items.Sysctl)
			s.Deps = slices.Clone(hs.Deps) // the renderer's ordering, not kernel state
			if hs.Equal(s) {
				s.Value = hs.Value
			}
		}
	}
	return s, nil
}
