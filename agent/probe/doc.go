// Package probe runs connectivity probes inside a target network namespace:
// the checks a trial (`netagent try --probe ...`) makes before it considers a
// change safe.
//
// # Spec syntax
//
//	ping:HOST[,count=N][,interval=D][,timeout=D]
//	tcp:HOST:PORT[,timeout=D]
//
// HOST is an IPv4 or IPv6 literal; an IPv6 address may carry a zone
// (ping:fe80::1%eth0) naming a link in the target namespace. In a tcp spec an
// IPv6 address goes in brackets: tcp:[2001:db8::1]:22 (ping accepts
// ping:[2001:db8::1] too). Host names are refused: the agent resolves no names,
// since the resolver is often what a broken change takes away. D is a Go
// duration ("200ms", "2s").
//
// # Pass and fail
//
// A ping probe sends count ICMP echo requests (default 3), one every interval
// (default 200ms), and passes as soon as one is answered; it fails when no
// answer comes within timeout (default 2s) of the first request. Only a reply
// from HOST carrying this probe's identifier, a sequence number it sent and
// its random payload counts: an unrelated packet never passes a probe.
//
// A tcp probe passes when a TCP connection to HOST:PORT is established within
// timeout (default 2s), and is closed at once; it fails on refusal, an
// unreachable host or the timeout.
//
// # Namespaces
//
// Every socket is created inside the target namespace (netnsx.Target.Do) and
// so sends through the namespace's routes and links, whatever namespace the
// agent itself runs in. A ping uses an unprivileged ICMP socket
// (SOCK_DGRAM/IPPROTO_ICMP) when the namespace's net.ipv4.ping_group_range
// admits the caller, and a raw ICMP socket otherwise (root; the default range
// "1 0" admits nobody).
//
// All runs probes concurrently and joins the failures; each error names its
// probe, and failures wrap ErrFailed so a caller can tell a failed probe
// (revert) from a probe that could not run.
package probe
