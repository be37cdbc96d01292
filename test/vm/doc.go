// Package vm runs Go tests inside a full Debian kernel booted under qemu, for
// the link kinds the host kernel lacks (bonding, 802.1Q VLANs, dummy) and for
// anything else that needs kernel modules the host cannot load.
//
// # How a run works
//
//	host (go test)                                   VM (qemu -accel tcg, pc machine, 512 MiB, 1 CPU)
//	──────────────                                   ────────────────────────────────────
//	CGO_ENABLED=0 go test -c -tags vmtest ──┐
//	                                        ▼
//	initrd = base.cpio.gz (cached) + payload.cpio ──▶ /init: mount proc, sys, dev, tmp
//	         busybox, /init, modules    test binary       insmod modules in modules.dep order
//	                                                      ip link set lo up
//	console lines ◀── ttyS0 ◀─────────────────────────── /test/test.bin -test.v <args>
//	  test output streamed to t.Log,                      echo NETAGENT-VM-EXIT-<nonce> <status>
//	  --- PASS/FAIL/SKIP lines counted                    poweroff -f
//
// The kernel comes from scripts/setup.sh, which downloads Debian's kernel
// package (never installing it into the host's /boot), unpacks it under
// /var/cache/netagent-vm/ and points /var/cache/netagent-vm/current at it
// (override with NETAGENT_VM_KERNEL_DIR). It also keeps the uncompressed
// vmlinux, which boots in half the time of the bzImage under TCG. The base
// archive is cached in the user cache directory (~/.cache/netagent-vm/),
// keyed by the kernel, busybox and /init; the payload and the test binary
// live in t.TempDir and go away with the test. qemu gets a hard timeout
// (Config.Timeout) and is killed when it passes.
//
// Inside the VM the test binary runs as root in /test, with /tmp on tmpfs,
// the environment variable NETAGENT_VM=1 (see InGuest), no network besides
// lo and the NICs of Config.NICs, and none of the package's testdata. The
// modules in DefaultModules (modules.go: one line per link kind netagent
// manages that the host kernel may lack, with its parameters and what it
// makes when loaded) and the NICs' drivers are loaded at boot with their
// dependencies, found in modules.dep. busybox's applets are on PATH; there
// is no iptables or nftables binary, and iproute2's ip or ethtool only when
// Config.Programs names them (ProgramsIPEthtool): the harness copies host
// programs in with their ELF interpreter and shared libraries. A binary the
// test builds itself (BuildBinary: the netagent command, for tests that run
// the daemon) goes in Config.Binaries: the run's payload carries it to
// GuestBinary(name), in /test beside the test binary. A program too big
// for the initramfs (python3 with its library, for ifupdown2) runs from
// the host's own root: Config.HostRoot shares / read-only over virtio-9p
// and /init mounts it at GuestHostRoot, where a test chroots (hostroot.go).
//
// # NICs
//
// Config.NICs gives the VM emulated cards (qemu e1000 or virtio-net-pci),
// each with a fixed MAC and PCI slot on the pc machine's root bus, every
// one on a port of a single qemu hub: the NICs are wired to each other and
// to nothing outside the VM (no user-mode networking, no tap). The kernel
// names them eth0, eth1, ... in probe order (there is no udev), which is
// not the slot order: tests find a NIC by its MAC (LinkWithMAC, IPLinks).
//
//	qemu -device e1000,id=nic0,netdev=net-nic0,mac=52:54:00:00:00:10,bus=pci.0,addr=0x4
//	     -netdev hubport,id=net-nic0,hubid=0                  ... one pair per NIC
//	guest: eth0  52:54:00:00:00:10  /sys/devices/pci0000:00/0000:00:04.0  driver e1000
//
// SwapSlots gives a second boot with two cards in each other's slots. A NIC
// with Hot set is left out at boot; the guest's HotAdd(t, id) asks the
// harness over the console, which plugs it in with QMP (netdev_add,
// device_add) on a unix socket, and the guest kernel finds it through ACPI
// PCI hotplug. GuestNICs tells the guest what it was given; IPLinks,
// Ethtool, PermanentAddress and SysfsPCIAddress read NICs back with the
// real tools and sysfs; GuestRun runs a program in a test namespace.
//
// # Writing VM tests for a package
//
// Tests that must run in the VM live in files named *_vm_test.go that begin
// with
//
//	//go:build vmtest
//
// and their names start with TestInVM. The tag keeps them out of every host
// test run: they are never compiled there, so they never show up as skipped.
// Each one makes its own network namespace (netns.New, then
// netlink.NewHandleAt(ns, unix.NETLINK_ROUTE), then netns.Set back to the
// original), as smoke_vm_test.go does.
//
// One host-side test, in a file that begins with
//
//	//go:build !vmtest
//
// so that it is not compiled into the VM's binary, runs them:
//
//	func TestVM(t *testing.T) {
//		vm.RunVMTests(t)
//	}
//
// RunVMTests builds the package with -tags vmtest, runs the tests matching
// ^TestInVM in the VM, and fails unless at least one ran and none failed or
// skipped. It logs how many passed. Use Config or RunPackageTests for other
// tags, patterns, modules, NICs, programs, memory or timeouts, and
// RunTestBinary for a binary built some other way.
//
// # When qemu or the kernel is missing
//
// The harness fails the test, naming exactly what is missing and saying to
// run scripts/setup.sh, when CI=true or when it runs as root (setup.sh could
// have installed everything). Only a non-root run outside CI skips, with the
// same message. Nothing else skips.
package vm
