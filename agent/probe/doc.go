// Package probe runs connectivity probes inside a target network namespace:
// the checks a trial (`netagent try --probe ...`) makes before it considers a
// change safe.
//
// # Spec syntax
//
//	ping:HOST[,count=N][,interval=D][,timeout=D]
//	tcp:HOST:PORT[,timeout=D]
//	dns:NAME[@SERVER][,addr=ADDR][,timeout=D]
//	http://HOST[:PORT]/PATH[,status=S][,body=TEXT][,addr=ADDR][,timeout=D]
//	https://HOST[:PORT]/PATH[,status=S][,body=TEXT][,ca=FILE][,addr=ADDR][,timeout=D]
//	arping:ADDR@DEV[,count=N][,interval=D][,timeout=D]
//
// HOST of ping and tcp, and ADDR, are IPv4 or IPv6 literals; an IPv6
// address may carry a zone (ping:fe80::1%eth0) naming a link in the target
// namespace. In a tcp spec an IPv6 address goes in brackets:
// tcp:[2001:db8::1]:22 (ping accepts ping:[2001:db8::1] too). ping and tcp
// refuse host names: they resolve none, since the resolver is often what a
// broken change takes away (a dns probe tests it). D is a positive Go duration
// of at most an hour ("200ms", "2s"), N at most 100: a spec from the store
// is as untrusted as the intent. Options follow the first comma, so a URL holds no comma
// (write %2C) and a body TEXT none either.
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
// A dns probe asks SERVER (ADDR, ADDR:PORT or [ADDR]:PORT; port 53 by
// default) for NAME's A records, and its AAAA records when it has no A
// record (only AAAA when addr= is IPv6, only A when it is IPv4), over UDP,
// and over TCP when the answer is truncated. It passes on an answer with an
// address, holding addr= when given; it fails on NXDOMAIN, an answer
// without addresses, SERVFAIL (or REFUSED, FORMERR) from every server, or
// no answer within timeout. Without @SERVER it asks the namespace's
// resolvers in turn, those of /etc/netns/NS/resolv.conf when it exists
// (what `ip netns exec NS` gives processes) and else /etc/resolv.conf (the
// first 3 nameserver lines of the first 64 KiB): when netagent writes the
// intent's DNS elsewhere (--resolv-conf), name the server. Only an answer
// carrying the query's id and question counts.
//
// An http or https probe GETs the URL, following at most 3 redirects, with
// no proxy, and passes when the final status is of status= (a class, 1xx
// to 5xx, or a code like 204; default 2xx) and, with body=, when TEXT is in
// the first 64 KiB of the body; it fails otherwise, or with no answer within
// timeout (default 2s, for the whole exchange). An https certificate is
// verified against the system's roots, or only those of ca=FILE (PEM, an
// absolute path read when the probe runs, at most 1 MiB), for the URL's
// host. A host name is looked up as a dns probe does (the namespace's
// resolvers); addr= gives the address to connect to instead, the name
// still what the certificate must carry.
//
// An arping probe broadcasts count ARP requests (default 3) for the IPv4
// ADDR on the link DEV, one every interval (default 200ms), from DEV's
// first IPv4 address (none: 0.0.0.0, an ARP probe as RFC 5227 has it), and
// passes on a reply from ADDR to DEV's hardware address within timeout
// (default 2s). IPv6 has no ARP: probe an IPv6 neighbour with
// ping:ADDR%DEV, which the kernel's neighbour discovery precedes.
//
// # Namespaces
//
// Every socket (ICMP, TCP, UDP, the packet socket of arping) is created
// inside the target namespace (netnsx.Target.Do) and so sends through the
// namespace's routes and links, whatever namespace the
// agent itself runs in. A ping uses an unprivileged ICMP socket
// (SOCK_DGRAM/IPPROTO_ICMP) when the namespace's net.ipv4.ping_group_range
// admits the caller, and a raw ICMP socket otherwise (root; the default range
// "1 0" admits nobody).
//
// All runs probes concurrently and joins the failures; each error names its
// probe, and failures wrap ErrFailed so a caller can tell a failed probe
// (revert) from a probe that could not run.
package probe
