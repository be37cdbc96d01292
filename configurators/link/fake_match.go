package link

import (
	"net"
	"slices"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// fakeNIC is what the fake knows of a NIC beyond its link: its driver
// and bus path ("": not known), and the permanent address ethtool's
// permaddr gives (nil: none).
type fakeNIC struct {
	driver, path string
	permaddr     net.HardwareAddr
}

var _ nicOps = (*FakeKernel)(nil)

// AddMatchableNIC plugs in a NIC (as AddNIC) with a permanent address, a
// driver and a bus path, for a match to find.
func (f *FakeKernel) AddMatchableNIC(name string, perm net.HardwareAddr, driver, path string) netlink.Link {
	l := f.AddNIC(name, 1500)
	fl := f.links[l.Attrs().Index]
	fl.attrs().PermHWAddr = perm
	if f.nics == nil {
		f.nics = map[int]fakeNIC{}
	}
	f.nics[l.Attrs().Index] = fakeNIC{driver: driver, path: path}
	return f.copyOf(fl)
}

func (f *FakeKernel) nicDriver(name string) (string, error) {
	if fl := f.byName(name); fl != nil && f.nics[fl.attrs().Index].driver != "" {
		return f.nics[fl.attrs().Index].driver, nil
	}
	return "", unix.EOPNOTSUPP
}

// OlderKernelPermAddr makes the NIC name's permanent address one that
// only ethtool's permaddr gives, as on kernels whose link dump has no
// IFLA_PERM_ADDRESS.
func (f *FakeKernel) OlderKernelPermAddr(name string) {
	fl := f.byName(name)
	n := f.nics[fl.attrs().Index]
	n.permaddr, fl.attrs().PermHWAddr = fl.attrs().PermHWAddr, nil
	f.nics[fl.attrs().Index] = n
}

func (f *FakeKernel) nicPermAddr(name string) (net.HardwareAddr, error) {
	if fl := f.byName(name); fl != nil && f.nics[fl.attrs().Index].permaddr != nil {
		return slices.Clone(f.nics[fl.attrs().Index].permaddr), nil
	}
	return nil, ErrNoPermAddr
}

func (f *FakeKernel) nicPath(name string, index int) (string, error) {
	if p := f.nics[index].path; p != "" {
		return p, nil
	}
	return "", ErrNoPath
}

// LinkSetName renames a link: EBUSY while it is up (the kernel renames
// only a down link), EEXIST for a name taken, and the kernel's checks of
// the name.
func (f *FakeKernel) LinkSetName(link netlink.Link, name string) error {
	fl, err := f.resolve(link)
	if err != nil {
		return err
	}
	if err := validName(name); err != nil {
		return err
	}
	if o := f.byName(name); o != nil && o != fl {
		return unix.EEXIST
	}
	if fl.up() {
		return unix.EBUSY
	}
	if err := f.write("name", fl.attrs().Name+" "+name); err != nil {
		return err
	}
	fl.attrs().Name = name
	return nil
}
