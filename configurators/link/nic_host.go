package link

import (
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"unsafe"

	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"github.com/netagent/netagent/internal/netnsx"
)

// hostNIC is nicOps in a namespace: the driver from ethtool's drvinfo
// ioctl on a socket of the namespace, the bus path from sysfs (sysfsPath)
// when sysfs shows the namespace's links: the namespace is the agent's
// own, and the sysfs entry of the name has the link's ifindex.
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

// nicPath derives the bus path of the link name (ifindex index).
func (h hostNIC) nicPath(name string, index int) (string, error) {
	if err := validName(name); err != nil {
		return "", fmt.Errorf("path of %q: %w", name, err)
	}
	own, err := netns.GetFromPath("/proc/self/ns/net")
	if err != nil {
		return "", fmt.Errorf("path of %s: %w", name, err)
	}
	defer own.Close()
	if !own.Equal(h.t.NsHandle()) {
		return "", fmt.Errorf("path of %s: %w: sysfs shows the agent's own namespace, not %s", name, ErrNoPath, h.t.Name)
	}
	got, err := readSmallInt(filepath.Join(h.sysfs, "class", "net", name, "ifindex"))
	if err != nil || got != index {
		return "", fmt.Errorf("path of %s: %w: sysfs's %s is not ifindex %d (%d, %v)", name, ErrNoPath, name, index, got, err)
	}
	return sysfsPath(h.sysfs, name)
}

// readSmallInt reads a sysfs attribute holding one decimal number, at
// most 32 bytes of it.
func readSmallInt(path string) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, 32))
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(strings.TrimSpace(string(b)))
}
