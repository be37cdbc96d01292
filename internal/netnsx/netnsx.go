// Package netnsx gives configurators one handle on a target network
// namespace: a netlink handle bound to it, and a way to run code (an
// iptables binary, a /proc/sys write) inside it on a locked OS thread.
// The empty name is the namespace netagent itself runs in.
package netnsx

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"

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

// ErrNeedsPrivilege is why an unprivileged netagent cannot act: entering
// a namespace and changing it take root, or the capabilities.
var ErrNeedsPrivilege = errors.New("root (or the capabilities CAP_NET_ADMIN and CAP_SYS_ADMIN) is needed to act on a network namespace")

// runNetns is where named namespaces are (ip netns add).
const runNetns = "/run/netns"

// Exists reports whether the named namespace exists ("" always does).
func Exists(name string) bool {
	if name == "" {
		return true
	}
	_, err := os.Stat(filepath.Join(runNetns, name))
	return !errors.Is(err, fs.ErrNotExist)
}

// Check reports whether the named namespace ("" is this process's own)
// can be acted on: it exists (an error naming it and where to see the
// others when not), and this process has the privilege
// (ErrNeedsPrivilege). Commands check before they read or make a state
// directory for it.
func Check(name string) error {
	if !Exists(name) {
		return notExist(name)
	}
	if !privileged() {
		return ErrNeedsPrivilege
	}
	return nil
}

func notExist(name string) error { return nsNotExist(name) }

// nsNotExist is a named namespace that does not exist: fs.ErrNotExist.
type nsNotExist string

func (e nsNotExist) Error() string {
	return fmt.Sprintf("network namespace %q does not exist (`ip netns list` shows those there are)", string(e))
}

func (nsNotExist) Is(target error) bool { return target == fs.ErrNotExist }

// privileged reports whether this process has what entering a namespace
// and changing it take: CAP_SYS_ADMIN and CAP_NET_ADMIN in its effective
// set (/proc/self/status), as root has.
func privileged() bool {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return true // cannot tell: say nothing
	}
	for line := range strings.Lines(string(data)) {
		if hex, ok := strings.CutPrefix(line, "CapEff:"); ok {
			caps, err := strconv.ParseUint(strings.TrimSpace(hex), 16, 64)
			want := uint64(1)<<unix.CAP_SYS_ADMIN | uint64(1)<<unix.CAP_NET_ADMIN
			return err != nil || caps&want == want
		}
	}
	return true
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
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, notExist(name)
	case err != nil:
		return nil, fmt.Errorf("opening network namespace %q: %w", name, err)
	}
	// Route netlink only: configurators use nothing else, and a kernel
	// without xfrm or netfilter netlink (a minimal VM) can still be managed.
	h, err := netlink.NewHandleAt(ns, unix.NETLINK_ROUTE)
	if err != nil {
		ns.Close()
		if errors.Is(err, unix.EPERM) || !privileged() { // the library does not wrap the errno
			return nil, fmt.Errorf("%w (entering network namespace %q: %v)", ErrNeedsPrivilege, name, err)
		}
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
