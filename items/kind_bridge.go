package items

import (
	"time"

	dg "github.com/netagent/netagent/depgraph"
)

// KindBridge is the kind of a bridge.
const KindBridge InterfaceKind = "bridge"

// BridgeAttrs are the settings of a bridge. A bridge may have none (nil
// Attrs: all defaults).
type BridgeAttrs struct {
	STP           bool
	VLANFiltering bool
	// ForwardDelay is the STP forward delay; 0 leaves the kernel default
	// (15s). The kernel keeps it in centiseconds, so use a multiple of 10ms
	// or read-back will differ; with STP on the kernel accepts 2s to 30s.
	ForwardDelay time.Duration
}

// Kind returns KindBridge.
func (a *BridgeAttrs) Kind() InterfaceKind { return KindBridge }

// Equal compares the settings.
func (a *BridgeAttrs) Equal(other KindAttrs) bool { return sameAttrs(a, other) }

// NeedsRecreate returns false: every bridge setting changes in place.
func (a *BridgeAttrs) NeedsRecreate(KindAttrs) bool { return false }

// Dependencies returns none.
func (a *BridgeAttrs) Dependencies(string) []dg.Dependency { return nil }

// ConflictKeys returns none.
func (a *BridgeAttrs) ConflictKeys(string) []string { return nil }

// Problem checks the forward delay.
func (a *BridgeAttrs) Problem(string) string {
	if a.ForwardDelay < 0 || a.ForwardDelay%(10*time.Millisecond) != 0 {
		return "forward delay must be a non-negative multiple of 10ms"
	}
	return ""
}

// String describes the settings.
func (a *BridgeAttrs) String() string {
	return joinSet("stp", a.STP, "vlan_filtering", a.VLANFiltering, "forward_delay", a.ForwardDelay)
}
