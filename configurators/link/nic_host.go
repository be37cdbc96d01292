package link

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

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
	if err := validName(name); err != nil {
		return "", fmt.Errorf("driver of %q: %w", name, err)
	}
	var driver string
	err := h.t.Do(func() error {
		fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return err
		}
		defer unix.Close(fd)
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
