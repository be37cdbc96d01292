package probe

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"time"

	"github.com/netagent/netagent/internal/netnsx"
)

// TCP passes when a TCP connection to Addr is established within Timeout.
type TCP struct {
	Addr    netip.AddrPort
	Timeout time.Duration
}

func (p *TCP) String() string {
	s := "tcp:" + p.Addr.String()
	if p.Timeout != DefaultTimeout {
		s += ",timeout=" + p.Timeout.String()
	}
	return s
}

// Run dials inside the namespace. The dial runs on the thread Do locked in
// the namespace: an IP literal needs no resolver, so net.Dialer creates the
// socket on the calling goroutine, in that namespace (a zone name is looked
// up there too).
func (p *TCP) Run(ctx context.Context, tgt *netnsx.Target) error {
	dctx, cancel := context.WithTimeout(ctx, p.Timeout)
	defer cancel()
	var dialErr error
	err := tgt.Do(func() error {
		var d net.Dialer
		c, err := d.DialContext(dctx, "tcp", p.Addr.String())
		if err != nil {
			dialErr = err
			return nil
		}
		return c.Close()
	})
	switch {
	case err != nil:
		return fmt.Errorf("probe %s: %w", p, err)
	case dialErr != nil && ctx.Err() != nil:
		return fmt.Errorf("probe %s: %w", p, ctx.Err())
	case dialErr != nil && (dctx.Err() != nil || isTimeout(dialErr)):
		return fmt.Errorf("probe %s: %w: no connection within %v", p, ErrFailed, p.Timeout)
	case dialErr != nil:
		return fmt.Errorf("probe %s: %w: %w", p, ErrFailed, dialErr)
	}
	return nil
}
