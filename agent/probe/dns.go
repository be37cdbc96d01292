package probe

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"strings"
	"time"

	"golang.org/x/net/dns/dnsmessage"

	"github.com/netagent/netagent/internal/netnsx"
)

// Bounds of a DNS exchange and of the resolv.conf read.
const (
	maxDNSMessage  = 4096     // bytes of a UDP answer read
	maxTCPMessage  = 64 << 10 // bytes of a TCP answer read
	maxResolvConf  = 64 << 10 // bytes of resolv.conf read
	maxNameservers = 3        // resolv.conf's nameservers used (glibc's MAXNS)
	dnsPort        = 53
)

// DNS passes when a server answers Name with an address (A or AAAA), and,
// with Want set, when Want is among them. It fails on NXDOMAIN, an answer
// without addresses, SERVFAIL or REFUSED from every server, or no answer
// within Timeout.
type DNS struct {
	Name string // without the trailing dot
	// Server is the server asked (zero: the namespace's resolvers,
	// Resolvers).
	Server  netip.AddrPort
	Want    netip.Addr
	Timeout time.Duration
}

func (p *DNS) String() string {
	s := "dns:" + p.Name
	if p.Server.IsValid() {
		s += "@" + p.Server.String()
	}
	if p.Want.IsValid() {
		s += ",addr=" + p.Want.String()
	}
	if p.Timeout != DefaultTimeout {
		s += ",timeout=" + p.Timeout.String()
	}
	return s
}

func parseDNS(target, opts string) (Probe, error) {
	name, server, hasServer := strings.Cut(target, "@")
	name = strings.TrimSuffix(name, ".")
	if err := checkName(name); err != nil {
		return nil, err
	}
	p := &DNS{Name: name, Timeout: DefaultTimeout}
	if hasServer {
		s, err := parseServer(server)
		if err != nil {
			return nil, err
		}
		p.Server = s
	}
	err := parseOptions(opts, map[string]func(string) error{
		"addr": func(v string) (err error) {
			p.Want, err = parseHost(v)
			return err
		},
		"timeout": func(v string) error { return parseDuration(v, &p.Timeout) },
	})
	if err != nil {
		return nil, err
	}
	return p, nil
}

// checkName accepts a host name of letters, digits, '-' and '_' labels.
func checkName(name string) error {
	if name == "" {
		return fmt.Errorf("no name")
	}
	if len(name) > 253 {
		return fmt.Errorf("name of %d characters (at most 253)", len(name))
	}
	for _, l := range strings.Split(name, ".") {
		if l == "" || len(l) > 63 {
			return fmt.Errorf("name %q: a label is empty or longer than 63 characters", name)
		}
		for _, c := range l {
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return fmt.Errorf("name %q: character %q (want letters, digits, '-', '_')", name, c)
			}
		}
	}
	return nil
}

// parseServer parses ADDR, ADDR:PORT or [ADDR]:PORT (port 53 by default).
func parseServer(s string) (netip.AddrPort, error) {
	if ap, err := netip.ParseAddrPort(s); err == nil {
		if _, err := parseHost(ap.Addr().String()); err != nil || ap.Port() == 0 {
			return netip.AddrPort{}, fmt.Errorf("server %q: want a unicast address and a port from 1 to 65535", s)
		}
		return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port()), nil
	}
	a, err := parseHost(strings.TrimSuffix(strings.TrimPrefix(s, "["), "]"))
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("server: %w", err)
	}
	return netip.AddrPortFrom(a, dnsPort), nil
}

// Run asks each server in turn, until one answers for good (addresses or
// NXDOMAIN) or Timeout.
func (p *DNS) Run(ctx context.Context, tgt *netnsx.Target) error {
	ctx, cancel := context.WithTimeout(ctx, p.Timeout)
	defer cancel()
	servers := []netip.AddrPort{p.Server}
	if !p.Server.IsValid() {
		var err error
		if servers, err = Resolvers(tgt.Name); err != nil {
			return fmt.Errorf("probe %s: %w", p, err)
		}
	}
	addrs, err := lookup(ctx, tgt, servers, p.Name, p.Want)
	switch {
	case ctx.Err() != nil && !errors.Is(ctx.Err(), context.DeadlineExceeded):
		return fmt.Errorf("probe %s: %w", p, ctx.Err())
	case err != nil:
		return fmt.Errorf("probe %s: %w: %w", p, ErrFailed, err)
	case p.Want.IsValid() && !contains(addrs, p.Want):
		return fmt.Errorf("probe %s: %w: the answer %v does not hold %s", p, ErrFailed, addrs, p.Want)
	}
	return nil
}

func contains(addrs []netip.Addr, a netip.Addr) bool {
	for _, b := range addrs {
		if b == a {
			return true
		}
	}
	return false
}

// lookup returns the addresses of name from the first server that answers
// for good: the A records (only AAAA when want is IPv6), and when there
// are none and want is unset, the AAAA records.
func lookup(ctx context.Context, tgt *netnsx.Target, servers []netip.AddrPort, name string, want netip.Addr) ([]netip.Addr, error) {
	types := []dnsmessage.Type{dnsmessage.TypeA, dnsmessage.TypeAAAA}
	switch {
	case want.Is4():
		types = types[:1]
	case want.Is6():
		types = types[1:]
	}
	var errs []error
	for i, s := range servers {
		sctx, cancel := context.WithTimeout(ctx, share(ctx, len(servers)-i))
		addrs, err := lookupAt(sctx, tgt, s, name, types)
		cancel()
		if err == nil || errors.Is(err, errNXDomain) {
			return addrs, err
		}
		errs = append(errs, fmt.Errorf("server %s: %w", s, err))
	}
	return nil, errors.Join(errs...)
}

// share is an even share of what is left of ctx among n attempts.
func share(ctx context.Context, n int) time.Duration {
	d, ok := ctx.Deadline()
	if !ok {
		return DefaultTimeout
	}
	return time.Until(d) / time.Duration(n)
}

var errNXDomain = errors.New("no such name (NXDOMAIN)")

// lookupAt asks server for the types in turn until one has addresses.
func lookupAt(ctx context.Context, tgt *netnsx.Target, server netip.AddrPort, name string, types []dnsmessage.Type) ([]netip.Addr, error) {
	for _, typ := range types {
		addrs, err := exchange(ctx, tgt, server, name, typ)
		if err != nil || len(addrs) > 0 {
			return addrs, err
		}
	}
	return nil, fmt.Errorf("no address in the answer")
}

// exchange sends one query over UDP (over TCP when the answer is
// truncated) and returns the addresses of the answer's records of typ.
func exchange(ctx context.Context, tgt *netnsx.Target, server netip.AddrPort, name string, typ dnsmessage.Type) ([]netip.Addr, error) {
	q, id, err := query(name, typ)
	if err != nil {
		return nil, err
	}
	c, done, err := dialUntil(ctx, tgt, "udp", server)
	if err != nil {
		return nil, err
	}
	defer done()
	if _, err := c.Write(q); err != nil {
		return nil, err
	}
	buf := make([]byte, maxDNSMessage)
	for {
		n, err := c.Read(buf)
		if err != nil {
			return nil, readErr(ctx, err)
		}
		addrs, truncated, err := answer(buf[:n], id, name, typ)
		switch {
		case errors.Is(err, errNotOurs):
			continue // a late answer to an earlier query, or forged
		case truncated && err == nil && len(addrs) == 0:
			return exchangeTCP(ctx, tgt, server, q, id, name, typ)
		}
		return addrs, err
	}
}

// exchangeTCP sends query q over TCP (RFC 7766) and reads one answer.
func exchangeTCP(ctx context.Context, tgt *netnsx.Target, server netip.AddrPort, q []byte, id uint16, name string, typ dnsmessage.Type) ([]netip.Addr, error) {
	c, done, err := dialUntil(ctx, tgt, "tcp", server)
	if err != nil {
		return nil, err
	}
	defer done()
	if _, err := c.Write(append(binary.BigEndian.AppendUint16(nil, uint16(len(q))), q...)); err != nil {
		return nil, readErr(ctx, err)
	}
	var n uint16
	if err := binary.Read(c, binary.BigEndian, &n); err != nil {
		return nil, readErr(ctx, err)
	}
	buf := make([]byte, min(int(n), maxTCPMessage))
	if _, err := io.ReadFull(c, buf); err != nil {
		return nil, readErr(ctx, err)
	}
	addrs, _, err := answer(buf, id, name, typ)
	return addrs, err
}

func readErr(ctx context.Context, err error) error {
	if ctx.Err() != nil || isTimeout(err) {
		return fmt.Errorf("no answer in time")
	}
	return err
}

// dialUntil is dialIn, the socket's reads and writes ending when ctx
// ends; done closes it.
func dialUntil(ctx context.Context, tgt *netnsx.Target, network string, addr netip.AddrPort) (c net.Conn, done func(), err error) {
	if c, err = dialIn(ctx, tgt, network, addr); err != nil {
		return nil, nil, err
	}
	stop := context.AfterFunc(ctx, func() { c.SetDeadline(time.Now()) })
	return c, func() { stop(); c.Close() }, nil
}

// dialIn makes a socket connected to addr inside tgt's namespace: an IP
// literal needs no resolver, so the socket is made on the thread Do
// locked there.
func dialIn(ctx context.Context, tgt *netnsx.Target, network string, addr netip.AddrPort) (net.Conn, error) {
	var c net.Conn
	err := tgt.Do(func() (err error) {
		var d net.Dialer
		c, err = d.DialContext(ctx, network, addr.String())
		return err
	})
	return c, err
}

func query(name string, typ dnsmessage.Type) ([]byte, uint16, error) {
	n, err := dnsmessage.NewName(name + ".")
	if err != nil {
		return nil, 0, err
	}
	var b [2]byte
	rand.Read(b[:])
	id := binary.BigEndian.Uint16(b[:])
	m := dnsmessage.Message{
		Header:    dnsmessage.Header{ID: id, RecursionDesired: true},
		Questions: []dnsmessage.Question{{Name: n, Type: typ, Class: dnsmessage.ClassINET}},
	}
	q, err := m.Pack()
	return q, id, err
}

var errNotOurs = errors.New("not the answer to the query")

// answer parses a response to query id for name and typ: its addresses of
// typ, whether it is truncated, and errNXDomain or another error for a
// server's failure.
func answer(msg []byte, id uint16, name string, typ dnsmessage.Type) ([]netip.Addr, bool, error) {
	var p dnsmessage.Parser
	h, err := p.Start(msg)
	if err != nil || h.ID != id || !h.Response {
		return nil, false, errNotOurs
	}
	qs, err := p.AllQuestions()
	if err != nil || len(qs) != 1 || qs[0].Type != typ || !strings.EqualFold(qs[0].Name.String(), name+".") {
		return nil, false, errNotOurs
	}
	switch h.RCode {
	case dnsmessage.RCodeSuccess:
	case dnsmessage.RCodeNameError:
		return nil, false, errNXDomain
	default:
		return nil, false, fmt.Errorf("the server answered %s", rcodeName(h.RCode))
	}
	var addrs []netip.Addr
	for {
		rh, err := p.AnswerHeader()
		if errors.Is(err, dnsmessage.ErrSectionDone) {
			return addrs, h.Truncated, nil
		}
		if err != nil {
			return nil, false, fmt.Errorf("a malformed answer: %w", err)
		}
		switch {
		case rh.Type == dnsmessage.TypeA && typ == rh.Type:
			r, err := p.AResource()
			if err != nil {
				return nil, false, fmt.Errorf("a malformed answer: %w", err)
			}
			addrs = append(addrs, netip.AddrFrom4(r.A))
		case rh.Type == dnsmessage.TypeAAAA && typ == rh.Type:
			r, err := p.AAAAResource()
			if err != nil {
				return nil, false, fmt.Errorf("a malformed answer: %w", err)
			}
			addrs = append(addrs, netip.AddrFrom16(r.AAAA))
		default:
			if err := p.SkipAnswer(); err != nil {
				return nil, false, fmt.Errorf("a malformed answer: %w", err)
			}
		}
	}
}

// Resolvers are the name servers of the namespace named ns: the
// nameserver lines (at most 3) of /etc/netns/NS/resolv.conf when it exists
// (what `ip netns exec` shows processes there), else of /etc/resolv.conf.
func Resolvers(ns string) ([]netip.AddrPort, error) {
	path := "/etc/resolv.conf"
	if ns != "" {
		if p := "/etc/netns/" + ns + "/resolv.conf"; exists(p) {
			path = p
		}
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("the name servers: %w", err)
	}
	defer f.Close()
	return nameservers(f, path)
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

func nameservers(r io.Reader, path string) ([]netip.AddrPort, error) {
	var out []netip.AddrPort
	sc := bufio.NewScanner(io.LimitReader(r, maxResolvConf))
	for sc.Scan() && len(out) < maxNameservers {
		f := strings.Fields(sc.Text())
		if len(f) < 2 || f[0] != "nameserver" {
			continue
		}
		if a, err := netip.ParseAddr(f[1]); err == nil && !a.IsUnspecified() {
			out = append(out, netip.AddrPortFrom(a.Unmap(), dnsPort))
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s names no name server: give one (dns:NAME@SERVER)", path)
	}
	return out, nil
}

// rcodeName is a response code's name as dig(1) shows it.
func rcodeName(c dnsmessage.RCode) string {
	switch c {
	case dnsmessage.RCodeFormatError:
		return "FORMERR"
	case dnsmessage.RCodeServerFailure:
		return "SERVFAIL"
	case dnsmessage.RCodeNotImplemented:
		return "NOTIMP"
	case dnsmessage.RCodeRefused:
		return "REFUSED"
	}
	return fmt.Sprintf("response code %d", c)
}
