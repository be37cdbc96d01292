#!/usr/bin/env bash
# Installs everything netagent's demo and tests need on a fresh Debian machine
# (run as root). Safe to run again: it installs only what is missing.
set -euo pipefail

packages=(iproute2 iptables graphviz busybox-static qemu-system-x86 kmod cpio)
missing=()
for p in "${packages[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	apt-get update
	DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"
fi
