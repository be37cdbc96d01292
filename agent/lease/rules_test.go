package lease

import (
	"net/netip"
	"testing"
	"time"

	"github.com/netagent/netagent/configurators/dhcp"
	"github.com/netagent/netagent/items/lease4"
)

// An unanswered renewal is tried again at half the time left until T2
// (at least 5 s apart), one that ran into T2 rebinds at once, and an
// unanswered rebinding is tried again at half the time left until the
// expiry, never after it.
func TestLeaseRetryAt(t *testing.T) {
	at := time.Date(2026, 11, 23, 20, 0, 0, 0, time.UTC)
	l := &lease4.Lease{Interface: "up0", Address: netip.MustParsePrefix("10.77.0.100/24"),
		LeaseTime: 120 * time.Second, Renew: 20 * time.Second, Rebind: 40 * time.Second, Acquired: at}
	for _, c := range []struct {
		how  string
		now  time.Duration // after Acquired
		want time.Duration
	}{
		{dhcp.ObtainedRenew, 20 * time.Second, 30 * time.Second},
		{dhcp.ObtainedRenew, 37 * time.Second, 40 * time.Second},  // 5 s apart, capped at T2
		{dhcp.ObtainedRenew, 40 * time.Second, 40 * time.Second},  // at T2: rebind now
		{dhcp.ObtainedRebind, 40 * time.Second, 80 * time.Second}, // half the 80 s left
		{dhcp.ObtainedRebind, 118 * time.Second, 120 * time.Second},
	} {
		if got := RetryAt(l, c.how == dhcp.ObtainedRenew, at.Add(c.now)); got != at.Add(c.want) {
			t.Errorf("%s unanswered at +%v: next at +%v, want +%v", c.how, c.now, got.Sub(at), c.want)
		}
	}
}
