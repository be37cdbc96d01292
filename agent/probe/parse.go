package probe

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/netagent/netagent/internal/netnsx"
)

// Defaults of the options a spec may set.
const (
	DefaultCount    = 3
	DefaultInterval = 200 * time.Millisecond
	DefaultTimeout  = 2 * time.Second
	maxCount        = 100
	// maxDuration bounds every interval and timeout a spec sets: a spec
	// from the store is as untrusted as the intent.
	maxDuration = time.Hour
)

// Probe is one connectivity check.
type Probe interface {
	// Run performs the check inside tgt's namespace. It returns nil when
	// the probe passes, an error wrapping ErrFailed when it fails, and
	// another error when it cannot run at all.
	Run(ctx context.Context, tgt *netnsx.Target) error
	// String returns the probe's spec in canonical form.
	String() string
}

// Parse parses one spec (see the package doc).
func Parse(spec string) (Probe, error) {
	p, err := parse(spec)
	if err != nil {
		return nil, fmt.Errorf("%w %q: %w", ErrSpec, spec, err)
	}
	return p, nil
}

// ParseAll parses every spec and returns the failures joined.
func ParseAll(specs []string) ([]Probe, error) {
	var out []Probe
	var errs []error
	for _, s := range specs {
		p, err := Parse(s)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, p)
	}
	return out, errors.Join(errs...)
}

func parse(spec string) (Probe, error) {
	kind, rest, ok := strings.Cut(spec, ":")
	if !ok {
		return nil, fmt.Errorf("want %s", kinds)
	}
	target, opts, _ := strings.Cut(rest, ",")
	switch kind {
	case "ping":
		return parsePing(target, opts)
	case "tcp":
		return parseTCP(target, opts)
	case "dns":
		return parseDNS(target, opts)
	case "http", "https":
		return parseHTTP(kind+":"+target, opts)
	case "arping":
		return parseArping(target, opts)
	}
	return nil, fmt.Errorf("unknown kind %q (want ping, tcp, dns, http, https or arping)", kind)
}

// kinds is the syntax of each kind, for errors.
const kinds = "ping:HOST, tcp:HOST:PORT, dns:NAME[@SERVER], http(s)://HOST[:PORT]/PATH or arping:ADDR@DEV"

func parsePing(target, opts string) (Probe, error) {
	h := strings.TrimSuffix(strings.TrimPrefix(target, "["), "]")
	addr, err := parseHost(h)
	if err != nil {
		return nil, err
	}
	p := &Ping{Addr: addr, Schedule: defaultSchedule()}
	if err := p.Schedule.parse(opts); err != nil {
		return nil, err
	}
	return p, nil
}

func parseTCP(target, opts string) (Probe, error) {
	host, port, err := net.SplitHostPort(target)
	if err != nil {
		if strings.Count(target, ":") > 1 && !strings.HasPrefix(target, "[") {
			return nil, fmt.Errorf("an IPv6 address goes in brackets: tcp:[ADDR]:PORT")
		}
		return nil, fmt.Errorf("want tcp:HOST:PORT: %w", err)
	}
	addr, err := parseHost(host)
	if err != nil {
		return nil, err
	}
	n, err := strconv.ParseUint(port, 10, 16)
	if err != nil || n == 0 {
		return nil, fmt.Errorf("port %q is not a number from 1 to 65535", port)
	}
	p := &TCP{Addr: netip.AddrPortFrom(addr, uint16(n)), Timeout: DefaultTimeout}
	err = parseOptions(opts, map[string]func(string) error{
		"timeout": func(v string) error { return parseDuration(v, &p.Timeout) },
	})
	if err != nil {
		return nil, err
	}
	return p, nil
}

func parseHost(h string) (netip.Addr, error) {
	if h == "" {
		return netip.Addr{}, fmt.Errorf("no host")
	}
	a, err := netip.ParseAddr(h)
	if err != nil {
		return netip.Addr{}, fmt.Errorf("host %q is not an IP address (probes resolve no names)", h)
	}
	if a.Zone() != "" && (!a.Is6() || a.Is4In6()) {
		return netip.Addr{}, fmt.Errorf("host %q: a zone only goes with an IPv6 address", h)
	}
	if a.Is4In6() {
		a = a.Unmap()
	}
	if a.IsUnspecified() || a.IsMulticast() {
		return netip.Addr{}, fmt.Errorf("host %q is not a unicast address", h)
	}
	return a, nil
}

// parseOptions applies "k=v,k=v" through setters; every key at most once.
func parseOptions(opts string, set map[string]func(string) error) error {
	if opts == "" {
		return nil
	}
	seen := map[string]bool{}
	for _, kv := range strings.Split(opts, ",") {
		k, v, ok := strings.Cut(kv, "=")
		f := set[k]
		switch {
		case !ok:
			return fmt.Errorf("option %q: want KEY=VALUE", kv)
		case f == nil:
			return fmt.Errorf("unknown option %q (want one of %s)", k, optionNames(set))
		case seen[k]:
			return fmt.Errorf("option %q given twice", k)
		}
		seen[k] = true
		if err := f(v); err != nil {
			return fmt.Errorf("option %s: %w", k, err)
		}
	}
	return nil
}

func optionNames(set map[string]func(string) error) string {
	var names []string
	for _, k := range []string{"count", "interval", "timeout", "addr", "status", "body", "ca"} {
		if set[k] != nil {
			names = append(names, k)
		}
	}
	return strings.Join(names, ", ")
}

func parseCount(v string, dst *int) error {
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > maxCount {
		return fmt.Errorf("%q is not a number from 1 to %d", v, maxCount)
	}
	*dst = n
	return nil
}

func parseDuration(v string, dst *time.Duration) error {
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 || d > maxDuration {
		return fmt.Errorf("%q is not a positive duration of at most %v (like 500ms or 2s)", v, maxDuration)
	}
	*dst = d
	return nil
}
