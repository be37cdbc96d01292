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
// netagent.service runs `netagent run` as Type=notify: systemd considers
// the agent started when it sends READY=1, after its first reconcile.
// ExecReload= sends SIGHUP (the agent reads every intent again and sends
// RELOADING=1, then READY=1). Restart=on-failure restarts it after a crash
// or a watchdog timeout.
//
// Privileges: root, but with only CAP_NET_ADMIN (netlink changes,
// iptables) and CAP_NET_RAW (iptables opens raw sockets) in the bounding
// set. CAP_SYS_ADMIN is added because setns(2) into a named network
// namespace (--netns, /run/netns/NAME) requires CAP_SYS_ADMIN besides
// CAP_NET_ADMIN; a unit for the host namespace only can drop it (see the
// comment in the unit). The sandbox: ProtectSystem=strict with the state
// directory writable (StateDirectory=), the socket in RuntimeDirectory=,
// ProtectHome, PrivateTmp, NoNewPrivileges, address families limited to
// AF_UNIX (the API, sd_notify), AF_NETLINK (rtnetlink) and AF_INET/AF_INET6
// (iptables and the kernel's socket ioctls).
package systemd
