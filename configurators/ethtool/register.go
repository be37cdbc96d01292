package ethtool

import (
	"errors"
	"fmt"

	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/internal/netnsx"
	"github.com/netagent/netagent/internal/statefile"
	"github.com/netagent/netagent/items"
	"github.com/netagent/netagent/reconciler"
	"github.com/vishvananda/netlink"
)

// ErrNoLink marks a link that does not exist.
var ErrNoLink = errors.New("no such link")

// New returns the configurator of the target namespace (its ethtool
// family dialed on first use), recording originals in stateDir (""
// records nothing).
func New(t *netnsx.Target, stateDir string) (*Configurator, error) {
	ns, err := statefile.Identify(t)
	if err != nil {
		return nil, fmt.Errorf("ethtool state: %w", err)
	}
	return &Configurator{k: &lazyKernel{t: t}, state: newStore(stateDir, ns)}, nil
}

// Register registers the ethtool configurator of the target namespace.
func Register(reg *reconciler.TypeRegistry, t *netnsx.Target, stateDir string) error {
	c, err := New(t, stateDir)
	if err != nil {
		return err
	}
	return reg.Register(items.TypeEthtool, c)
}

// ReadBack reads back the ethtool settings the hint names and those with
// recorded originals (see readItems).
func ReadBack(t *netnsx.Target, stateDir string, hint *dg.Graph) ([]dg.Item, error) {
	if !wanted(hint) && stateDir == "" {
		return nil, nil
	}
	c, err := New(t, stateDir)
	if err != nil {
		return nil, err
	}
	defer c.k.(*lazyKernel).Close()
	return readItems(c.k, c.state, hint)
}

// wanted reports whether the hint has any ethtool item.
func wanted(hint *dg.Graph) bool {
	if hint == nil {
		return false
	}
	for it := range hint.Unordered() {
		if it.Type() == items.TypeEthtool {
			return true
		}
	}
	return false
}

// Check predicts a converge's refusal in the target namespace (see
// Configurator.Check).
func Check(t *netnsx.Target, stateDir string, it dg.Item) error {
	c, err := New(t, stateDir)
	if err != nil {
		return err
	}
	defer c.k.(*lazyKernel).Close()
	return c.Check(it)
}

// lazyKernel dials the namespace's ethtool family when first needed: a
// namespace whose intent names no ethtool setting never opens it.
type lazyKernel struct {
	t *netnsx.Target
	k *netKernel
}

func (l *lazyKernel) kernel() (*netKernel, error) {
	if l.k == nil {
		k, err := openKernel(l.t)
		if err != nil {
			return nil, err
		}
		l.k = k
	}
	return l.k, nil
}

// Close closes the clients if they were dialed.
func (l *lazyKernel) Close() {
	if l.k != nil {
		l.k.Close()
		l.k = nil
	}
}

func (l *lazyKernel) Index(name string) (int, error) {
	link, err := l.t.NL.LinkByName(name)
	if err != nil {
		var nf netlink.LinkNotFoundError
		if errors.As(err, &nf) {
			return 0, fmt.Errorf("link %s: %w", name, ErrNoLink)
		}
		return 0, fmt.Errorf("finding link %s: %w", name, err)
	}
	return link.Attrs().Index, nil
}

func (l *lazyKernel) MTU(name string) (int, error) {
	link, err := l.t.NL.LinkByName(name)
	if err != nil {
		return 0, fmt.Errorf("finding link %s: %w", name, err)
	}
	return link.Attrs().MTU, nil
}

func (l *lazyKernel) Features(ifindex int) (Features, error) {
	k, err := l.kernel()
	if err != nil {
		return Features{}, err
	}
	return k.Features(ifindex)
}

func (l *lazyKernel) SetFeatures(ifindex int, want map[string]bool) error {
	k, err := l.kernel()
	if err != nil {
		return err
	}
	return k.SetFeatures(ifindex, want)
}

func (l *lazyKernel) Get(group string, ifindex int) (Values, error) {
	k, err := l.kernel()
	if err != nil {
		return Values{}, err
	}
	return k.Get(group, ifindex)
}

func (l *lazyKernel) Set(group string, ifindex int, set map[string]uint32) error {
	k, err := l.kernel()
	if err != nil {
		return err
	}
	return k.Set(group, ifindex, set)
}

func (l *lazyKernel) SetSets(group string, ifindex int, sets map[string][]string) error {
	k, err := l.kernel()
	if err != nil {
		return err
	}
	return k.SetSets(group, ifindex, sets)
}
