package link

import (
	"fmt"
	"net"
	"regexp"
	"runtime"
	"slices"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/netagent/netagent/internal/netnsx"
)

// hostNIC is nicOps in a namespace: the driver from ethtool's drvinfo
// ioctl on a socket of the namespace, the bus path from the link's parent
// device in sysfs (nicPath).
type hostNIC struct {
	t     *netnsx.Target
	sysfs string // "/sys"
}

var _ nicOps = hostNIC{}

// nicDriver asks the kernel for the driver of the link name.
func (h hostNIC) nicDriver(name string) (string, error) {
	var driver string
	err := h.ioctl(name, func(fd int) error {
		info, err := unix.IoctlGetEthtoolDrvinfo(fd, name)
		if err != nil {
			return err
		}
		driver = unix.ByteSliceToString(info.Driver[:])
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("driver of %s (ethtool drvinfo): %w", name, err)
	}
	if !sysName(driver) {
		return "", fmt.Errorf("driver of %s: the kernel says %q", name, driver)
	}
	return driver, nil
}

// nicPermAddr asks the kernel for the permanent address of the link name
// (ETHTOOL_GPERMADDR); a link without one (all zeros, or none) has
// ErrNoPermAddr.
func (h hostNIC) nicPermAddr(name string) (net.HardwareAddr, error) {
	var addr net.HardwareAddr
	err := h.ioctl(name, func(fd int) (err error) {
		addr, err = ethtoolPermAddr(fd, name)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("permanent address of %s (ethtool permaddr): %w", name, err)
	}
	if len(addr) == 0 || slices.Equal(addr, make(net.HardwareAddr, len(addr))) {
		return nil, fmt.Errorf("permanent address of %s: %w", name, ErrNoPermAddr)
	}
	return addr, nil
}

// ioctl runs do on a datagram socket of the namespace, for the link
// name, after checking the name.
func (h hostNIC) ioctl(name string, do func(fd int) error) error {
	if err := validName(name); err != nil {
		return fmt.Errorf("%q: %w", name, err)
	}
	return h.t.Do(func() error {
		fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return err
		}
		defer unix.Close(fd)
		return do(fd)
	})
}

// ethtoolPermAddr is the ETHTOOL_GPERMADDR request: struct
// ethtool_perm_addr (cmd, size, data[size]) behind an ifreq's data
// pointer; the kernel answers with size set to the address's length.
func ethtoolPermAddr(fd int, name string) (net.HardwareAddr, error) {
	var req struct {
		cmd, size uint32
		data      [maxAddrLen]byte
	}
	req.cmd, req.size = ethtoolGPermAddr, maxAddrLen
	var ifr struct {
		name [unix.IFNAMSIZ]byte
		data unsafe.Pointer
		_    [16]byte // the rest of the ifreq union
	}
	copy(ifr.name[:], name)
	ifr.data = unsafe.Pointer(&req)
	_, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), unix.SIOCETHTOOL, uintptr(unsafe.Pointer(&ifr)))
	runtime.KeepAlive(&req)
	if errno != 0 {
		return nil, errno
	}
	if req.size > maxAddrLen {
		return nil, fmt.Errorf("the kernel says %d bytes", req.size)
	}
	return net.HardwareAddr(slices.Clone(req.data[:req.size])), nil
}

// ethtoolGPermAddr is ETHTOOL_GPERMADDR; maxAddrLen is MAX_ADDR_LEN.
const (
	ethtoolGPermAddr = 0x20
	maxAddrLen       = 32
)

// nicPath derives the bus path of the link name (ifindex index) in any
// namespace: from the parent device rtnetlink names in the namespace
// (parentPath), or on a kernel before 5.16, which names none, from the
// PCI address ethtool's drvinfo gives as bus-info (busInfoParent). Both
// lead to the bus's device in sysfs, which is not per namespace; sysfs's
// class/net, which is, is not read.
func (h hostNIC) nicPath(name string, index int) (string, error) {
	if err := validName(name); err != nil {
		return "", fmt.Errorf("path of %q: %w", name, err)
	}
	l, err := h.t.NL.LinkByIndex(index)
	if err != nil || l.Attrs().Name != name {
		return "", fmt.Errorf("path of %s: %w: ifindex %d is not %s (%v)", name, ErrNoPath, index, name, err)
	}
	bus, dev := l.Attrs().ParentDevBus, l.Attrs().ParentDev
	if bus == "" && dev == "" {
		bus, dev = h.busInfoParent(name)
	}
	p, err := parentPath(h.sysfs, bus, dev, name)
	if err != nil {
		return "", fmt.Errorf("path of %w", err)
	}
	return p, nil
}

// busInfoParent is the PCI device ethtool's drvinfo names as the link's
// bus-info ("pci", "0000:00:04.0"); "", "" when it names none (another
// bus, no answer, not a PCI address: a driver's string, checked).
func (h hostNIC) busInfoParent(name string) (bus, dev string) {
	_ = h.ioctl(name, func(fd int) error {
		info, err := unix.IoctlGetEthtoolDrvinfo(fd, name)
		if err == nil && pciAddress().MatchString(unix.ByteSliceToString(info.Bus_info[:])) {
			bus, dev = "pci", unix.ByteSliceToString(info.Bus_info[:])
		}
		return err
	})
	return bus, dev
}

// pciAddress is a PCI function's address as the kernel writes it
// (pci_name): domain, bus, device, function, in lower-case hex.
var pciAddress = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9a-f]{4,8}:[0-9a-f]{2}:[01][0-9a-f]\.[0-7]$`) })
