package vm

import "fmt"

// Config.HostRoot gives the guest the host's whole root file system,
// read-only, for programs that cannot be carried into the initramfs as
// Config.Programs are (python3, its standard library and the modules a
// Python program imports):
//
//	qemu -fsdev local,id=hostroot,path=/,security_model=none,readonly=on
//	     -device virtio-9p-pci,fsdev=hostroot,mount_tag=hostroot,bus=pci.0,addr=0x1f
//	guest /init: mount -t 9p -o trans=virtio,version=9p2000.L,ro,cache=loose hostroot /hostroot
//
// The modules (9p, 9pnet_virtio, virtio_pci and their dependencies netfs,
// fscache, 9pnet, virtio, virtio_ring) come from the same kernel package
// and are loaded only for such a Config. A test runs a host program with
// chroot GuestHostRoot after mounting what the program writes to (/run,
// /tmp, /var/tmp: tmpfs) and the pseudo file systems in a mount namespace
// of its own; the share itself can never be written to.

// GuestHostRoot is where the guest sees the host's root with Config.HostRoot.
const GuestHostRoot = "/hostroot"

// HostRootSlot is the PCI slot of the share's virtio-9p device, kept
// free of NICs.
const HostRootSlot = 31

// hostRootTag is the 9p mount tag that names the share.
const hostRootTag = "hostroot"

// hostRootModules are the guest's 9p client over virtio PCI.
var hostRootModules = []string{"virtio_pci", "9pnet_virtio", "9p"}

// hostRootMount is the part of /init that mounts the share.
const hostRootMount = `mkdir -p ` + GuestHostRoot + ` || fail "mkdir ` + GuestHostRoot + `"
mount -t 9p -o trans=virtio,version=9p2000.L,ro,cache=loose ` + hostRootTag + ` ` + GuestHostRoot + ` || fail "mount the host's root on ` + GuestHostRoot + `"
`

// hostRootArgs are qemu's options for the share, none without HostRoot.
func (c Config) hostRootArgs() []string {
	if !c.HostRoot {
		return nil
	}
	return []string{
		"-fsdev", "local,id=" + hostRootTag + ",path=/,security_model=none,readonly=on",
		"-device", fmt.Sprintf("virtio-9p-pci,fsdev=%s,mount_tag=%s,bus=pci.0,addr=0x%x", hostRootTag, hostRootTag, HostRootSlot),
	}
}

// validateHostRoot refuses a NIC in the share's slot.
func (c Config) validateHostRoot() error {
	if !c.HostRoot {
		return nil
	}
	for i, n := range c.NICs {
		if n.Slot == HostRootSlot {
			return fmt.Errorf("NICs[%d] (%s): slot %d is the host root share's (HostRoot)", i, n.ID, HostRootSlot)
		}
	}
	return nil
}
