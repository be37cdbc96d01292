package dns

import "errors"

var (
	// ErrForeign: the resolv.conf path holds something the agent did not
	// write, which it never overwrites.
	ErrForeign = errors.New("not written by netagent (no netagent header): remove it, or put the header on its first line, to hand it to netagent")
	// ErrResolvedGlobal: systemd-resolved manages DNS, and the intent's
	// own servers or domains belong in its resolved.conf.
	ErrResolvedGlobal = errors.New("systemd-resolved manages DNS here: the leases' servers went to it per link, but the intent's dns section belongs in resolved.conf (DNS=, Domains=), which netagent does not edit")
	// ErrUnsafe: a name server or search domain that cannot be written
	// to resolv.conf as it is (not a unicast address, not a DNS name, a
	// byte outside the file's grammar) or beyond its bounds: left out,
	// the rest written.
	ErrUnsafe = errors.New("not written to resolv.conf")
	// ErrResolvedDown: the path links to systemd-resolved's stub, but
	// systemd-resolved does not run.
	ErrResolvedDown = errors.New("a symlink to systemd-resolved's resolv.conf, but systemd-resolved does not run")
)
