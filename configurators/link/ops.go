package link

import (
	"net"

	"github.com/vishvananda/netlink"
)

// nlOps is the part of netlink.Handle the link configurators call. The
// configurators are built over the Target's handle (one per namespace).
type nlOps interface {
	LinkByName(name string) (netlink.Link, error)
	LinkByIndex(index int) (netlink.Link, error)
	LinkList() ([]netlink.Link, error)
	LinkAdd(link netlink.Link) error
	LinkDel(link netlink.Link) error
	LinkSetUp(link netlink.Link) error
	LinkSetDown(link netlink.Link) error
	LinkSetMTU(link netlink.Link, mtu int) error
	LinkSetAlias(link netlink.Link, name string) error
	LinkSetName(link netlink.Link, name string) error
	LinkSetHardwareAddr(link netlink.Link, hwaddr net.HardwareAddr) error
	LinkSetMaster(link, master netlink.Link) error
	LinkSetNoMaster(link netlink.Link) error
	LinkSetMacvlanMode(link netlink.Link, mode netlink.MacvlanMode) error
	GetNetNsIdByFd(fd int) (int, error)
}

var _ nlOps = (*netlink.Handle)(nil)
