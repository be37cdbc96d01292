#!/usr/bin/env bash
# Installs everything netagent's demo and tests need on a fresh Debian machine
# (run as root). Safe to run again: it installs only what is missing.
set -euo pipefail

# etcd-server: the store/etcd tests start their own etcd (internal/etcdtest).
# dnsmasq: the DHCP tests run their own server in a test namespace (internal/dnsmasqtest).
# ethtool: the ethtool settings tests read features and channels back with it.
packages=(iproute2 iptables iputils-ping graphviz busybox-static qemu-system-x86 kmod cpio xz-utils systemd util-linux etcd-server dnsmasq ethtool)
packages+=(netplan.io)  # import netplan: its examples and netplan generate, the oracle of test/netns
packages+=(python3)  # ifupdown2 (unpacked below, the ENI oracle) runs on Debian's /usr/bin/python3
packages+=(nftables)  # the nft program: the oracle of the nftables tests in test/netns (nft -j list)
packages+=(zsh fish)  # completion zsh|fish: cmd/netagent runs each shell on its script
packages+=(man-db groff-base)  # internal/manpage renders every installed man page (man -l, groff -ww, lexgrog)
missing=()
for p in "${packages[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
updated=
apt_update_once() { [ -n "$updated" ] || apt-get update; updated=1; }
if [ ${#missing[@]} -gt 0 ]; then
	apt_update_once
	DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"
	# The tests want the binary, not a cluster member: where systemd runs,
	# the package starts and enables etcd.service; stop what this run
	# installed (an etcd installed before is the operator's and left alone).
	if [[ " ${missing[*]} " == *" etcd-server "* ]] && [ -d /run/systemd/system ]; then
		systemctl disable --now etcd.service || true
	fi
	# Likewise dnsmasq: the package starts a DNS/DHCP server on the host.
	if [[ " ${missing[*]} " == *" dnsmasq "* ]] && [ -d /run/systemd/system ]; then
		systemctl disable --now dnsmasq.service || true
	fi
fi

# Make /run/netns a shared mount point of its own now, as `ip netns add`
# does the first time: a named namespace bound into it while it is a plain
# directory is hidden, and can never be deleted, once a later `ip netns add`
# mounts /run/netns over itself (internal/testns.SharedRunNetns does the same).
mkdir -p /run/netns
if ! mount --make-rshared /run/netns 2>/dev/null; then
	mount --rbind /run/netns /run/netns
	mount --make-rshared /run/netns
fi

# The VM tests (test/vm) boot a full Debian kernel under qemu, because the host
# kernel lacks bonding, 802.1Q and dummy. Fetch the kernel package and unpack it
# into a cache without installing it into the host's /boot; test/vm reads it
# through the "current" symlink.
vm_cache=/var/cache/netagent-vm
if [ ! -e "$vm_cache/current/.complete" ]; then
	apt_update_once # old package lists may name a kernel the archive has dropped
fi
kernel_pkg=$(apt-cache depends linux-image-amd64 | sed -n 's/^ *Depends: \(linux-image-[0-9].*\)$/\1/p' | head -n1)
if [ -z "$kernel_pkg" ]; then
	echo "setup.sh: cannot resolve the kernel package from linux-image-amd64's Depends" >&2
	exit 1
fi
kernel_ver=$(apt-cache show --no-all-versions "$kernel_pkg" | sed -n 's/^Version: //p' | head -n1)
kernel_dir="$vm_cache/${kernel_pkg}_${kernel_ver}"
if [ ! -f "$kernel_dir/.complete" ]; then
	rm -rf "$kernel_dir"
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	chown _apt "$tmp" 2>/dev/null || true # apt-get download fetches as the _apt user
	(cd "$tmp" && apt-get download "$kernel_pkg=$kernel_ver")
	mkdir -p "$kernel_dir"
	dpkg-deb -x "$tmp"/*.deb "$kernel_dir"
	# The package ships no modules.dep (its postinst makes one); test/vm reads it
	# to work out the module load order.
	release=$(basename "$(ls -d "$kernel_dir"/lib/modules/*)")
	depmod -b "$kernel_dir" "$release"
	touch "$kernel_dir/.complete"
fi
# Under TCG, decompressing the bzImage takes longer than booting the kernel
# (about 5 s of 10): keep the uncompressed ELF vmlinux, which qemu boots
# directly through its PVH entry. Its place in the bzImage comes from the boot
# protocol header (setup_sects, payload_offset, payload_length). test/vm boots
# the bzImage when vmlinux is missing.
if [ ! -f "$kernel_dir/vmlinux" ]; then
	img=$(ls "$kernel_dir"/boot/vmlinuz-*)
	setup_end=$((($(od -An -tu1 -j $((0x1f1)) -N1 "$img") + 1) * 512))
	payload_off=$(($(od -An -tu4 -j $((0x248)) -N4 "$img")))
	payload_len=$(($(od -An -tu4 -j $((0x24c)) -N4 "$img")))
	if dd if="$img" iflag=skip_bytes,count_bytes skip=$((setup_end + payload_off)) count="$payload_len" bs=1M status=none |
		xz -dc --single-stream >"$kernel_dir/vmlinux.tmp"; then
		mv "$kernel_dir/vmlinux.tmp" "$kernel_dir/vmlinux"
	else
		rm -f "$kernel_dir/vmlinux.tmp"
		echo "setup.sh: could not extract vmlinux from $img; the VM tests will boot the slower bzImage" >&2
	fi
fi
ln -sfn "$kernel_dir" "$vm_cache/current.new"
mv -T "$vm_cache/current.new" "$vm_cache/current"
for old in "$vm_cache"/linux-image-*; do
	[ "$old" = "$kernel_dir" ] || rm -rf "$old"
done

# The ENI importer's oracle (test/netns TestENIOracle) runs Debian's ifupdown2.
# Its package is unpacked into a cache, never installed: its postinst writes
# /etc/network/interfaces and udev overrides, enables networking.service (ifup -a
# at the next boot) and it conflicts with ifupdown. The test runs it from the
# cache inside a test namespace with /run and /etc/network on private tmpfs.
eni_cache=/var/cache/netagent-ifupdown2
if [ ! -f "$eni_cache/.complete" ]; then
	rm -rf "$eni_cache"
	eni_tmp=$(mktemp -d)
	chown _apt "$eni_tmp" 2>/dev/null || true
	(cd "$eni_tmp" && apt-get download ifupdown2)
	mkdir -p "$eni_cache"
	dpkg-deb -x "$eni_tmp"/*.deb "$eni_cache"
	rm -rf "$eni_tmp"
	touch "$eni_cache/.complete"
fi
