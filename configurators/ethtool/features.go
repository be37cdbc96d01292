package ethtool

import (
	"fmt"
	"maps"
	"slices"

	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"
)

// Features are a link's offload features as the kernel reports them, by
// the kernel's names (ethtool -k's long names).
type Features struct {
	// Active are the features on now.
	Active map[string]bool
	// HW are the features the driver lets the user change.
	HW map[string]bool
	// NoChange are the features the kernel reports fixed.
	NoChange map[string]bool
}

// Changeable reports whether the user may toggle the feature: the driver
// lists it as changeable ("hw") and the kernel does not report it fixed.
func (f Features) Changeable(name string) bool { return f.HW[name] && !f.NoChange[name] }

// EncodeFeaturesGet is the FEATURES_GET request for the link. It asks
// for verbose bitsets, which carry the names.
func EncodeFeaturesGet(ifindex int) ([]byte, error) {
	ae := netlink.NewAttributeEncoder()
	encodeHeader(ae, unix.ETHTOOL_A_FEATURES_HEADER, ifindex, 0)
	return ae.Encode()
}

// EncodeFeaturesSet is the FEATURES_SET request turning each named
// feature on or off and leaving the others alone.
func EncodeFeaturesSet(ifindex int, want map[string]bool) ([]byte, error) {
	ae := netlink.NewAttributeEncoder()
	encodeHeader(ae, unix.ETHTOOL_A_FEATURES_HEADER, ifindex, unix.ETHTOOL_FLAG_OMIT_REPLY)
	encodeBitset(ae, unix.ETHTOOL_A_FEATURES_WANTED, want, false)
	return ae.Encode()
}

// DecodeFeatures reads a FEATURES_GET reply.
func DecodeFeatures(b []byte) (Features, error) {
	var f Features
	ad, err := netlink.NewAttributeDecoder(b)
	if err != nil {
		return f, fmt.Errorf("features: %w: %v", errBadAnswer, err)
	}
	for ad.Next() {
		var into *map[string]bool
		switch ad.Type() {
		case unix.ETHTOOL_A_FEATURES_ACTIVE:
			into = &f.Active
		case unix.ETHTOOL_A_FEATURES_HW:
			into = &f.HW
		case unix.ETHTOOL_A_FEATURES_NOCHANGE:
			into = &f.NoChange
		case unix.ETHTOOL_A_FEATURES_WANTED:
		default:
			continue
		}
		set, err := decodeBitset(ad.Bytes())
		if err != nil {
			return f, fmt.Errorf("features: %w: %v", errBadAnswer, err)
		}
		if into != nil {
			*into = set
		}
	}
	if err := ad.Err(); err != nil {
		return f, fmt.Errorf("features: %w: %v", errBadAnswer, err)
	}
	if f.Active == nil || f.HW == nil {
		return f, fmt.Errorf("features: %w: no active or hw bitset", errBadAnswer)
	}
	return f, nil
}

// sortedKeys returns m's keys in order, so that requests are stable.
func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }
