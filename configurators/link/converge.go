package link

import (
	"bytes"
	"fmt"

	"github.com/vishvananda/netlink"

	"github.com/netagent/netagent/items"
)

// converge changes an existing link netagent owns into want, writing only
// what differs from what the kernel holds: when the kernel already matches,
// it makes no write at all. Attributes that cannot change in place are not
// its business (see InterfaceNeedsRecreate). The link is set down first
// when want has it down, and up last when want has it up, so that it never
// runs with half its settings.
func (k *kernel) converge(l netlink.Link, want *items.Interface) error {
	obs, err := k.observe(l, k.nameOf, true)
	if err != nil {
		return err
	}
	if mask(obs, want).Equal(want) {
		return nil
	}
	return k.runSteps(l, obs, want, k.convergeAlias)
}

// runSteps runs the converge steps in their order, with alias as the step
// that sets the alias.
func (k *kernel) runSteps(l netlink.Link, obs, want *items.Interface, alias convergeStep) error {
	steps := []convergeStep{k.convergeDown, k.convergeMTU, k.convergeMAC, alias, k.convergeKind, k.convergeUp}
	for _, step := range steps {
		if err := step(l, obs, want); err != nil {
			return fmt.Errorf("configuring %s %s: %w", want.Kind, want.IfName, err)
		}
	}
	return nil
}

// convergeStep changes one thing of l from obs (what the kernel holds) to
// want, if it differs.
type convergeStep func(l netlink.Link, obs, want *items.Interface) error

func (k *kernel) convergeDown(l netlink.Link, obs, want *items.Interface) error {
	if want.AdminUp || !obs.AdminUp {
		return nil
	}
	if err := k.nl.LinkSetDown(l); err != nil {
		return fmt.Errorf("setting down: %w", err)
	}
	l.Attrs().Flags &^= netUp
	return nil
}

func (k *kernel) convergeUp(l netlink.Link, obs, want *items.Interface) error {
	if !want.AdminUp || obs.AdminUp {
		return nil
	}
	if err := k.nl.LinkSetUp(l); err != nil {
		return fmt.Errorf("setting up: %w", err)
	}
	return nil
}

func (k *kernel) convergeMTU(l netlink.Link, obs, want *items.Interface) error {
	if want.MTU == 0 || want.MTU == obs.MTU {
		return nil
	}
	if err := k.nl.LinkSetMTU(l, want.MTU); err != nil {
		return fmt.Errorf("setting mtu %d: %w", want.MTU, err)
	}
	return nil
}

func (k *kernel) convergeMAC(l netlink.Link, obs, want *items.Interface) error {
	if want.MAC == nil || bytes.Equal(want.MAC, obs.MAC) {
		return nil
	}
	err := k.whileDown(l, func() error { return k.nl.LinkSetHardwareAddr(l, want.MAC) })
	if err != nil {
		return fmt.Errorf("setting mac %s: %w", want.MAC, err)
	}
	return nil
}

// convergeAlias keeps the mark on an owned link, with the intent's alias
// after it.
func (k *kernel) convergeAlias(l netlink.Link, obs, want *items.Interface) error {
	return k.setAlias(l, markedAlias(want.Alias))
}

// setAlias sets the kernel alias of l, if it differs.
func (k *kernel) setAlias(l netlink.Link, kernelAlias string) error {
	if l.Attrs().Alias == kernelAlias {
		return nil
	}
	if err := k.nl.LinkSetAlias(l, kernelAlias); err != nil {
		return fmt.Errorf("setting alias %q: %w", kernelAlias, err)
	}
	return nil
}

// convergeKind changes the kind's own settings that the kernel changes in
// place.
func (k *kernel) convergeKind(l netlink.Link, obs, want *items.Interface) error {
	kind, ok := linkKinds[want.Kind]
	if obs.Kind != want.Kind || !ok {
		return nil
	}
	return kind.converge(k, l, obs, want)
}

func boolU32(b bool) uint32 {
	if b {
		return 1
	}
	return 0
}
