// Package systemd is netagent's glue to systemd, and the home of its unit
// file, netagent.service.
//
// The Notifier speaks the sd_notify protocol with the standard library
// alone: each state is one datagram ("READY=1", "WATCHDOG=1", ...) sent to
// the unix socket named by $NOTIFY_SOCKET, a path or, with a leading '@',
// a name in the abstract namespace. Without $NOTIFY_SOCKET (not started by
// systemd, or Type= is not notify) every call does nothing.
//
// WatchdogInterval reads $WATCHDOG_USEC (and $WATCHDOG_PID, which must be
// ours if set): systemd kills the service when no "WATCHDOG=1" arrives
// within that time. The agent pings at half of it, from its event loop
// itself, so that a loop that is stuck stops pinging and gets restarted.
//
// # The unit
//
// scripts/install.sh installs it (and the binary it runs, at
// /usr/local/sbin/netagent, or under $PREFIX); TestUnitVerifiesAsInstalled
// installs both into a temporary root and verifies the unit there.
//
// netagent.service runs `netagent run` as Type=notify: systemd considers
// the agent started when it sends READY=1, after its first reconcile.
// ExecReload= sends SIGHUP (the agent reads every intent again and sends
// RELOADING=1, then READY=1). Restart=on-failure restarts it after a crash
// or a watchdog timeout.
//
// Privileges: root, but with only CAP_NET_ADMIN (netlink changes,
// iptables) and CAP_NET_RAW (iptables-legacy opens a raw socket;
// iptables-nft, Debian's default, does not) in the bounding set, plus
// CAP_SYS_ADMIN: setns(2) into a network namespace requires it,
// and netagent enters one even for the host's own namespace
// (internal/netnsx opens its netlink handle with netlink.NewHandleAt,
// which switches the thread into the namespace to open the socket, and
// runs iptables and sysctl writes through Target.Do). Checked on this
// kernel with the bounding set reduced to CAP_NET_ADMIN and CAP_NET_RAW:
// netlink.NewHandleAt fails with EPERM, for the own namespace as for a
// named one. The sandbox: ProtectSystem=strict with the state
// directory writable (StateDirectory=), the socket in RuntimeDirectory=,
// ProtectHome, PrivateTmp, NoNewPrivileges, address families limited to
// AF_UNIX (the API, sd_notify), AF_NETLINK (rtnetlink) and AF_INET/AF_INET6
// (iptables and the kernel's socket ioctls), namespaces limited to net.
// Left out on purpose: ProtectKernelTunables= (it makes /proc/sys
// read-only, and the agent writes /proc/sys/net) and SystemCallFilter= (an
// allow-list that misses one call kills the agent mid-change; it needs a
// run under a real systemd to be set safely, which this repository's tests
// cannot do). WatchdogSec=2min leaves room for a long first reconcile or a
// reconcile of 100k routes, during which the loop does not ping.
package systemd
