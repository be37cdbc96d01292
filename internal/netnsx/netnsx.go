// Package netnsx gives configurators one handle on a target network
// namespace: a netlink handle bound to it, and a way to run code (an
// iptables binary, a /proc/sys write) inside it on a locked OS thread.
// The empty name is the namespace netagent itself runs in.
package netnsx

import (
	"fmt"
	"runtime"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// Target is a network namespace that configurators act on.
type Target struct {
	// Name is the namespace's name under /run/netns ("" = our own).
	Name string
	ns   netns.NsHandle
	// NL talks netlink inside the namespace. Never use the package-level
	// netlink functions: they act on the caller's namespace.
	NL *netlink.Handle
}

// Open returns a Target for the named namespace ("" = our own).
func Open(name string) (*Target, error) {
	var ns netns.NsHandle
	var err error
	if name == "" {
		ns, err = netns.Get()
	} else {
		ns, err = netns.GetFromName(name)
	}
	if err != nil {
		return nil, fmt.Errorf("opening network namespace %q: %w", name, err)
	}
	// Route netlink only: configurators use nothing else, and a kernel
	// without xfrm or netfilter netlink (a minimal VM) can still be managed.
	h, err := netlink.NewHandleAt(ns, unix.NETLINK_ROUTE)
	if err != nil {
		ns.Close()
		return nil, fmt.Errorf("netlink handle in namespace %q: %w", name, err)
	}
	return &Target{Name: name, ns: ns, NL: h}, nil
}

// Close releases the handles.
func (t *Target) Close() {
	t.NL.Close()
	t.ns.Close()
}

// NsHandle returns the namespace's file handle (owned by the Target).
func (t *Target) NsHandle() netns.NsHandle { return t.ns }

// Do runs f with the calling goroutine's OS thread switched into the
// namespace, and switches back afterwards. Processes started by f (os/exec)
// inherit the namespace. Files under /proc/sys/net opened by f show the
// namespace's values.
func (t *Target) Do(f func() error) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	orig, err := netns.Get()
	if err != nil {
		return fmt.Errorf("saving current network namespace: %w", err)
	}
	defer orig.Close()
	if err := netns.Set(t.ns); err != nil {
		return fmt.Errorf("entering network namespace %q: %w", t.Name, err)
	}
	defer func() {
		if err := netns.Set(orig); err != nil {
			// The thread is in the wrong namespace: never reuse it.
			panic(fmt.Sprintf("netnsx: cannot return to the original namespace: %v", err))
		}
	}()
	return f()
}
