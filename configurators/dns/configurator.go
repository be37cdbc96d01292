package dns

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"slices"

	"github.com/netagent/netagent/internal/statefile"

	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
	"github.com/netagent/netagent/reconciler"
)

// Configurator manages items.DNS (see the package doc).
type Configurator struct {
	// Resolved is systemd-resolved; nil: Resolvectl.
	Resolved Resolved
	// ResolvedDir is where resolved's files are; "": ResolvedDir.
	ResolvedDir string
}

var _ reconciler.Configurator = (*Configurator)(nil)

func (c *Configurator) resolved() Resolved {
	if c.Resolved == nil {
		return Resolvectl{}
	}
	return c.Resolved
}

func (c *Configurator) dir() string {
	if c.ResolvedDir == "" {
		return ResolvedDir
	}
	return c.ResolvedDir
}

// Create writes the resolv.conf, or hands the links' DNS to resolved; a
// Silent item removes the agent's resolv.conf instead (and leaves anyone
// else's alone).
func (c *Configurator) Create(ctx context.Context, it dg.Item) error {
	return c.apply(ctx, nil, it.(*items.DNS))
}

// Modify is Create, reverting in resolved the links that no longer have
// DNS.
func (c *Configurator) Modify(ctx context.Context, oldItem, newItem dg.Item) error {
	return c.apply(ctx, oldItem.(*items.DNS), newItem.(*items.DNS))
}

func (c *Configurator) apply(ctx context.Context, old, d *items.DNS) error {
	res, err := toResolved(d.Path, c.dir())
	if err != nil {
		return fmt.Errorf("resolv.conf %w", err)
	}
	if res {
		return c.toResolved(ctx, old, d)
	}
	if d.Silent() {
		return removeOurs(d.Path)
	}
	if _, err := readOurs(d.Path); err != nil {
		return fmt.Errorf("resolv.conf %w", err)
	}
	data, unsafe := Render(d)
	if err := statefile.WriteShared(d.Path, data, 0o644); err != nil {
		return fmt.Errorf("writing resolv.conf %s: %w", d.Path, err)
	}
	if unsafe != nil {
		return fmt.Errorf("resolv.conf %s: %w", d.Path, unsafe)
	}
	return nil
}

// toResolved sets each link's servers and domains, reverts the links of
// old that d no longer has, and fails with ErrResolvedGlobal when the
// intent has DNS of its own.
func (c *Configurator) toResolved(ctx context.Context, old, d *items.DNS) error {
	var errs []error
	have := map[string]bool{}
	for _, l := range d.Links {
		have[l.Dev] = true
		servers := slices.DeleteFunc(slices.Clone(l.Nameservers), func(a netip.Addr) bool { return !safeServer(a) })
		search, unsafe := safeSearch(l.Search)
		if len(servers) < len(l.Nameservers) || unsafe != nil {
			errs = append(errs, fmt.Errorf("DNS of %s to systemd-resolved: %w", l.Dev, errors.Join(ErrUnsafe, unsafe)))
		}
		if err := c.resolved().SetLinkDNS(ctx, l.Dev, servers); err != nil {
			errs = append(errs, fmt.Errorf("DNS servers of %s to systemd-resolved: %w", l.Dev, err))
		}
		if err := c.resolved().SetLinkDomains(ctx, l.Dev, search); err != nil {
			errs = append(errs, fmt.Errorf("search domains of %s to systemd-resolved: %w", l.Dev, err))
		}
	}
	if old != nil {
		errs = append(errs, c.revert(ctx, old, have))
	}
	if !d.Global.Empty() {
		errs = append(errs, fmt.Errorf("dns for %s: %w", d.Path, ErrResolvedGlobal))
	}
	return errors.Join(errs...)
}

// revert forgets in resolved the links of d not in keep.
func (c *Configurator) revert(ctx context.Context, d *items.DNS, keep map[string]bool) error {
	var errs []error
	for _, l := range d.Links {
		if !keep[l.Dev] {
			if err := c.resolved().RevertLink(ctx, l.Dev); err != nil {
				errs = append(errs, fmt.Errorf("reverting the DNS of %s in systemd-resolved: %w", l.Dev, err))
			}
		}
	}
	return errors.Join(errs...)
}

// Delete removes the agent's resolv.conf (left alone if someone else has
// written it since), or reverts the links in resolved.
func (c *Configurator) Delete(ctx context.Context, it dg.Item) error {
	d := it.(*items.DNS)
	res, err := toResolved(d.Path, c.dir())
	if err != nil {
		return nil // resolved is gone, and its links with it
	}
	if res {
		return c.revert(ctx, d, nil)
	}
	return removeOurs(d.Path)
}

// removeOurs removes the agent's resolv.conf at path; a file someone else
// has written since, or none, is left alone.
func removeOurs(path string) error {
	data, err := readOurs(path)
	if err != nil || data == nil {
		return nil // someone else's now, or gone: not ours to remove
	}
	if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("removing resolv.conf %s: %w", path, err)
	}
	return nil
}

// NeedsRecreate: never; Modify rewrites.
func (c *Configurator) NeedsRecreate(oldItem, newItem dg.Item) bool { return false }

// ReadBack returns, for each DNS item of hint, what is at its path: the
// hint's item with the servers and domains of the agent's file (so that
// an edited file is drift, rewritten); nothing for a path that is absent
// or not the agent's. Under systemd-resolved, which is not asked, the
// hint's item without its Global part (which resolved never takes): the
// per-link part is taken as held, so that a fresh read-back does not hand
// it over again at each pass of an apply, and an item with a Global part
// differs at each pass and fails again with ErrResolvedGlobal. A Silent
// item reads back as itself where no file of the agent's is (absent, or
// someone else's: nothing to remove); over the agent's file, as what that
// file says, which Modify then removes.
func ReadBack(hint *dg.Graph, resolvedDir string) []dg.Item {
	if hint == nil {
		return nil
	}
	if resolvedDir == "" {
		resolvedDir = ResolvedDir
	}
	var out []dg.Item
	for it := range hint.Unordered() {
		d, ok := it.(*items.DNS)
		if !ok {
			continue
		}
		res, err := toResolved(d.Path, resolvedDir)
		if err != nil {
			continue
		}
		if res {
			held := *d
			held.Global = items.LinkDNS{}
			out = append(out, &held)
			continue
		}
		data, err := readOurs(d.Path)
		if d.Silent() && data == nil {
			out = append(out, d) // nothing to say, and nothing of ours says anything
			continue
		}
		if err != nil || data == nil {
			continue
		}
		got := *d
		got.Nameservers, got.Search = parse(data)
		out = append(out, &got)
	}
	return out
}
