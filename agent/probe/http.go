package probe

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/netagent/netagent/internal/netnsx"
)

// Bounds of an HTTP probe.
const (
	maxBody      = 64 << 10 // bytes of the body read (and searched)
	maxHeader    = 64 << 10 // bytes of the response's header
	maxRedirects = 3
	maxCAFile    = 1 << 20
)

// HTTP passes when a GET of URL is answered, after at most 3 redirects,
// with a status of the class Status ("2xx") or the code Status ("204"),
// and, with Body set, a body whose first 64 KiB hold Body. An https URL's
// certificate is verified against the system roots, or those of CAFile.
// Addr, if set, is where URL's host is reached (its name still what TLS
// verifies); a host name otherwise is looked up with the namespace's
// resolvers (as a dns probe asks them).
type HTTP struct {
	URL     *url.URL
	Status  string
	Body    string
	CAFile  string
	Addr    netip.Addr
	Timeout time.Duration
}

func (p *HTTP) String() string {
	s := p.URL.String()
	if p.Status != "2xx" {
		s += ",status=" + p.Status
	}
	if p.Body != "" {
		s += ",body=" + p.Body
	}
	if p.CAFile != "" {
		s += ",ca=" + p.CAFile
	}
	if p.Addr.IsValid() {
		s += ",addr=" + p.Addr.String()
	}
	if p.Timeout != DefaultTimeout {
		s += ",timeout=" + p.Timeout.String()
	}
	return s
}

func parseHTTP(raw, opts string) (Probe, error) {
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		return nil, fmt.Errorf("URL: %w", err)
	case u.Host == "" || u.Hostname() == "":
		return nil, fmt.Errorf("URL %q names no host (want %s://HOST[:PORT]/PATH)", raw, u.Scheme)
	case u.User != nil:
		return nil, fmt.Errorf("URL %q: credentials in a probe are refused", raw)
	case u.Fragment != "":
		return nil, fmt.Errorf("URL %q: a fragment is never sent (give the status as ,status=2xx)", raw)
	}
	if port := u.Port(); port != "" {
		if n, err := strconv.ParseUint(port, 10, 16); err != nil || n == 0 {
			return nil, fmt.Errorf("port %q is not a number from 1 to 65535", port)
		}
	}
	if _, err := netip.ParseAddr(u.Hostname()); err != nil {
		if err := checkName(u.Hostname()); err != nil {
			return nil, fmt.Errorf("host: %w", err)
		}
	}
	p := &HTTP{URL: u, Status: "2xx", Timeout: DefaultTimeout}
	err = parseOptions(opts, map[string]func(string) error{
		"status":  func(v string) error { return parseStatus(v, &p.Status) },
		"body":    func(v string) error { return nonEmpty(v, &p.Body) },
		"ca":      func(v string) error { return parseCA(v, u.Scheme, &p.CAFile) },
		"addr":    func(v string) (err error) { p.Addr, err = parseHost(v); return err },
		"timeout": func(v string) error { return parseDuration(v, &p.Timeout) },
	})
	if err != nil {
		return nil, err
	}
	return p, nil
}

// parseStatus accepts a class (1xx to 5xx) or a code (100 to 599).
func parseStatus(v string, dst *string) error {
	ok := len(v) == 3 && v[0] >= '1' && v[0] <= '5'
	if ok && v[1:] != "xx" {
		_, err := strconv.Atoi(v[1:])
		ok = err == nil && v[1] >= '0' && v[1] <= '9' && v[2] >= '0' && v[2] <= '9'
	}
	if !ok {
		return fmt.Errorf("%q is neither a class (2xx) nor a code (204)", v)
	}
	*dst = v
	return nil
}

func nonEmpty(v string, dst *string) error {
	if v == "" {
		return fmt.Errorf("empty")
	}
	*dst = v
	return nil
}

func parseCA(v, scheme string, dst *string) error {
	switch {
	case scheme != "https":
		return fmt.Errorf("a CA file only goes with an https URL")
	case !filepath.IsAbs(v):
		return fmt.Errorf("%q is not an absolute path", v)
	}
	*dst = v
	return nil
}

// matches reports whether code is of the probe's status.
func (p *HTTP) matches(code int) bool {
	c := strconv.Itoa(code)
	if p.Status[1:] == "xx" {
		return c[0] == p.Status[0]
	}
	return c == p.Status
}

// Run makes the GET through sockets made inside the namespace.
func (p *HTTP) Run(ctx context.Context, tgt *netnsx.Target) error {
	client, err := p.client(tgt)
	if err != nil {
		return fmt.Errorf("probe %s: %w", p, err)
	}
	defer client.CloseIdleConnections()
	rctx, cancel := context.WithTimeout(ctx, p.Timeout)
	defer cancel()
	err = p.get(rctx, client)
	switch {
	case err == nil:
		return nil
	case ctx.Err() != nil:
		return fmt.Errorf("probe %s: %w", p, ctx.Err())
	case rctx.Err() != nil:
		return fmt.Errorf("probe %s: %w: no answer within %v", p, ErrFailed, p.Timeout)
	}
	return fmt.Errorf("probe %s: %w: %w", p, ErrFailed, err)
}

func (p *HTTP) get(ctx context.Context, client *http.Client) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.URL.String(), nil)
	if err != nil {
		return err
	}
	req.Header.Set("User-Agent", "netagent-probe")
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	switch {
	case !p.matches(resp.StatusCode):
		return fmt.Errorf("status %d (want %s)", resp.StatusCode, p.Status)
	case p.Body == "":
		return nil
	case err != nil:
		return fmt.Errorf("reading the body: %w", err)
	case !bytes.Contains(body, []byte(p.Body)):
		return fmt.Errorf("the body's first %d bytes do not hold %q", len(body), p.Body)
	}
	return nil
}

// client is a client that follows at most maxRedirects redirects, uses no
// proxy, keeps no connection, and dials inside tgt's namespace.
func (p *HTTP) client(tgt *netnsx.Target) (*http.Client, error) {
	tc := &tls.Config{MinVersion: tls.VersionTLS12}
	if p.CAFile != "" {
		pool, err := readCA(p.CAFile)
		if err != nil {
			return nil, err
		}
		tc.RootCAs = pool
	}
	tr := &http.Transport{
		Proxy:                  nil,
		DialContext:            p.dialer(tgt),
		TLSClientConfig:        tc,
		TLSHandshakeTimeout:    p.Timeout,
		DisableKeepAlives:      true,
		MaxResponseHeaderBytes: maxHeader,
		ForceAttemptHTTP2:      false,
	}
	return &http.Client{Transport: tr, CheckRedirect: func(_ *http.Request, via []*http.Request) error {
		if len(via) > maxRedirects {
			return fmt.Errorf("more than %d redirects", maxRedirects)
		}
		return nil
	}}, nil
}

// readCA reads the CA certificates of path: a regular file of at most
// maxCAFile bytes (opened without blocking: a spec from the store naming a
// FIFO or a device does not hang the probe).
func readCA(path string) (*x509.CertPool, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, fmt.Errorf("CA file: %w", err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("CA file %s: not a regular file", path)
	}
	pem, err := io.ReadAll(io.LimitReader(f, maxCAFile+1))
	switch {
	case err != nil:
		return nil, fmt.Errorf("CA file: %w", err)
	case len(pem) > maxCAFile:
		return nil, fmt.Errorf("CA file %s: larger than %d bytes", path, maxCAFile)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("CA file %s: no PEM certificate", path)
	}
	return pool, nil
}

// dialer connects to the address of a host: Addr for the URL's host, an
// IP literal itself, a name its first address from the namespace's
// resolvers.
func (p *HTTP) dialer(tgt *netnsx.Target) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, hostport string) (net.Conn, error) {
		host, port, err := net.SplitHostPort(hostport)
		if err != nil {
			return nil, err
		}
		n, err := strconv.ParseUint(port, 10, 16)
		if err != nil {
			return nil, fmt.Errorf("port %q: %w", port, err)
		}
		a, err := p.resolve(ctx, tgt, host)
		if err != nil {
			return nil, err
		}
		return dialIn(ctx, tgt, "tcp", netip.AddrPortFrom(a, uint16(n)))
	}
}

func (p *HTTP) resolve(ctx context.Context, tgt *netnsx.Target, host string) (netip.Addr, error) {
	if p.Addr.IsValid() && strings.EqualFold(host, p.URL.Hostname()) {
		return p.Addr, nil
	}
	if a, err := netip.ParseAddr(host); err == nil {
		return a.Unmap(), nil
	}
	servers, err := Resolvers(tgt.Name)
	if err != nil {
		return netip.Addr{}, fmt.Errorf("looking up %s: %w", host, err)
	}
	addrs, err := lookup(ctx, tgt, servers, host, netip.Addr{})
	if err != nil {
		return netip.Addr{}, fmt.Errorf("looking up %s: %w", host, err)
	}
	if len(addrs) == 0 {
		return netip.Addr{}, errors.New("looking up " + host + ": no address")
	}
	return addrs[0], nil
}
