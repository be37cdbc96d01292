package configurators

import (
	"fmt"
	"os"
	"strings"

	"github.com/netagent/netagent/internal/netnsx"
)

// IPv6Forwarding reports whether the target namespace forwards IPv6
// (net.ipv6.conf.all.forwarding is not 0): the fact render needs to pick
// accept_ra for an interface with ipv6.acceptRA. A kernel without IPv6
// does not forward it.
func IPv6Forwarding(t *netnsx.Target) (bool, error) {
	var data []byte
	err := t.Do(func() (err error) {
		data, err = os.ReadFile("/proc/sys/net/ipv6/conf/all/forwarding")
		return err
	})
	if os.IsNotExist(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("reading net.ipv6.conf.all.forwarding: %w", err)
	}
	return strings.TrimSpace(string(data)) != "0", nil
}
