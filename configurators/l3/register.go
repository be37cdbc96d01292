package l3

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/netagent/netagent/internal/netnsx"
	"github.com/netagent/netagent/items"
	"github.com/netagent/netagent/reconciler"
)

// Register registers the address, route, rule and neighbor configurators
// for target t in reg. The route configurator is a
// reconciler.BatchConfigurator.
func Register(reg *reconciler.TypeRegistry, t *netnsx.Target) error {
	return RegisterWith(reg, t, Options{})
}

// Options change how the configurators treat the kernel's objects.
type Options struct {
	// Adopt takes over the object of an item's identity that someone
	// else made, instead of refusing it (ErrNotOwned): one equal to the
	// item gets only netagent's mark, without a moment where it is
	// missing (addresses, routes and neighbours by an in-place replace,
	// NLM_F_REPLACE; a rule, which has no replace, by adding netagent's
	// copy before deleting theirs); one that differs is changed as
	// netagent's own would be (see each configurator). Adoptions says
	// which creates adopt.
	Adopt bool
	// StateDir is where the record of the addresses adopted where the
	// kernel kept their protocol lives ("": none; see addrrecord.go).
	StateDir string
}

// RegisterWith is Register with opts.
func RegisterWith(reg *reconciler.TypeRegistry, t *netnsx.Target, opts Options) error {
	k := kernel{nlh: t.NL, open: (&sharedConn{t: t, stateDir: opts.StateDir}).open, promotes: promotesIn(t), promoting: promotingIn(t), adopt: opts.Adopt}
	return register(reg, k)
}

// kernel is how the configurators reach a namespace's kernel: the
// interfaces a unit test backs with a fake (see fake.go).
type kernel struct {
	nlh       dumpNL
	open      opener
	promotes  func(dev string) (bool, error)
	promoting func(dev string, f func() error) error
	adopt     bool
}

// register registers the four configurators over k.
func register(reg *reconciler.TypeRegistry, k kernel) error {
	cfgs := []struct {
		typ string
		cfg reconciler.Configurator
	}{
		{items.TypeAddress, &addressConfigurator{nlh: k.nlh, open: k.open, promotes: k.promotes, promoting: k.promoting, adopt: k.adopt}},
		{items.TypeRoute, &routeConfigurator{nlh: k.nlh, open: k.open, adopt: k.adopt}},
		{items.TypeRule, &ruleConfigurator{open: k.open, adopt: k.adopt}},
		{items.TypeNeighbor, &neighborConfigurator{open: k.open, adopt: k.adopt}},
	}
	for _, c := range cfgs {
		if err := reg.Register(c.typ, c.cfg); err != nil {
			return fmt.Errorf("l3: %w", err)
		}
	}
	return nil
}

// promotesIn reads net.ipv4.conf.{all,<dev>}.promote_secondaries inside
// t's namespace (the kernel promotes if either is set).
func promotesIn(t *netnsx.Target) func(dev string) (bool, error) {
	return func(dev string) (bool, error) {
		var on bool
		err := t.Do(func() error {
			for _, conf := range []string{"all", dev} {
				b, err := os.ReadFile("/proc/sys/net/ipv4/conf/" + conf + "/promote_secondaries")
				if err != nil {
					return fmt.Errorf("reading promote_secondaries: %w", err)
				}
				on = on || strings.TrimSpace(string(b)) != "0"
			}
			return nil
		})
		return on, err
	}
}

// promotingIn runs f with net.ipv4.conf.<dev>.promote_secondaries set to 1
// inside t's namespace, and sets the previous value back after, even when
// f fails.
func promotingIn(t *netnsx.Target) func(dev string, f func() error) error {
	return func(dev string, f func() error) error {
		path := "/proc/sys/net/ipv4/conf/" + dev + "/promote_secondaries"
		var old []byte
		err := t.Do(func() error {
			var err error
			if old, err = os.ReadFile(path); err != nil {
				return err
			}
			return os.WriteFile(path, []byte("1"), 0o644)
		})
		if err != nil {
			return fmt.Errorf("turning promote_secondaries on for %s: %w", dev, err)
		}
		ferr := f()
		err = t.Do(func() error { return os.WriteFile(path, old, 0o644) })
		if err != nil {
			err = fmt.Errorf("putting promote_secondaries of %s back: %w", dev, err)
		}
		return errors.Join(ferr, err)
	}
}
