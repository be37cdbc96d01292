package dns

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// ResolvedDir is where systemd-resolved keeps its resolv.conf files (the
// stub, stub-resolv.conf, and the uplinks' resolv.conf) while it runs.
const ResolvedDir = "/run/systemd/resolve"

// Resolved is what the agent asks of systemd-resolved: per-link servers
// and domains, and forgetting them.
type Resolved interface {
	SetLinkDNS(ctx context.Context, ifname string, servers []netip.Addr) error
	SetLinkDomains(ctx context.Context, ifname string, domains []string) error
	RevertLink(ctx context.Context, ifname string) error
}

// Resolvectl is the real Resolved: resolvectl(1), found on PATH.
type Resolvectl struct{}

var _ Resolved = Resolvectl{}

func (Resolvectl) SetLinkDNS(ctx context.Context, ifname string, servers []netip.Addr) error {
	args := []string{"dns", ifname}
	for _, a := range servers {
		args = append(args, a.String())
	}
	return resolvectl(ctx, args...)
}

func (Resolvectl) SetLinkDomains(ctx context.Context, ifname string, domains []string) error {
	return resolvectl(ctx, append([]string{"domain", ifname}, domains...)...)
}

func (Resolvectl) RevertLink(ctx context.Context, ifname string) error {
	return resolvectl(ctx, "revert", ifname)
}

func resolvectl(ctx context.Context, args ...string) error {
	out, err := exec.CommandContext(ctx, "resolvectl", args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("resolvectl %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// toResolved reports whether path hands DNS to systemd-resolved: a
// symlink into dir (ResolvedDir). With resolved not running (dir absent)
// it is ErrResolvedDown.
func toResolved(path, dir string) (bool, error) {
	fi, err := os.Lstat(path)
	if err != nil || fi.Mode()&os.ModeSymlink == 0 {
		return false, nil
	}
	target, err := os.Readlink(path)
	if err != nil {
		return false, err
	}
	if !filepath.IsAbs(target) {
		target = filepath.Join(filepath.Dir(path), target)
	}
	if rel, err := filepath.Rel(dir, filepath.Clean(target)); err != nil || strings.HasPrefix(rel, "..") {
		return false, nil // another symlink: readOurs refuses it
	}
	if _, err := os.Stat(dir); err != nil {
		return false, fmt.Errorf("%s: %w", path, ErrResolvedDown)
	}
	return true, nil
}
