package ethtool

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/netagent/netagent/items"
)

// featuresGroup is the group of the features' keys.
const featuresGroup = "features"

// splitKey returns a settings key's group and field.
func splitKey(key string) (group, field string) {
	group, field, _ = strings.Cut(key, "/")
	return group, field
}

// snapshot is what the kernel holds of the groups some keys name.
type snapshot struct {
	features *Features
	groups   map[string]Values
	// missing are the groups the driver does not support, with why.
	missing map[string]error
}

// readSnapshot reads each group the keys name, once.
func readSnapshot(k Kernel, ifindex int, keys []string) (*snapshot, error) {
	s := &snapshot{groups: map[string]Values{}, missing: map[string]error{}}
	for _, key := range keys {
		group, _ := splitKey(key)
		if err := s.read(k, ifindex, group); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// read reads one group unless it is read already.
func (s *snapshot) read(k Kernel, ifindex int, group string) error {
	if _, done := s.groups[group]; done || s.missing[group] != nil || (group == featuresGroup && s.features != nil) {
		return nil
	}
	var err error
	if group == featuresGroup {
		var f Features
		if f, err = k.Features(ifindex); err == nil {
			s.features = &f
		}
	} else {
		var v Values
		if v, err = k.Get(group, ifindex); err == nil {
			s.groups[group] = v
		}
	}
	if errors.Is(err, ErrNotSupported) {
		s.missing[group] = err
		return nil
	}
	return err
}

// value is the key's current value, false when the kernel reports none.
func (s *snapshot) value(key string) (uint32, bool) {
	group, field := splitKey(key)
	if group == featuresGroup {
		if s.features == nil {
			return 0, false
		}
		if s.features.Active[field] {
			return 1, true
		}
		return 0, true
	}
	v, ok := s.groups[group].Cur[field]
	return v, ok
}

// refuse returns why the key cannot be set to v, nil when it can: the
// driver lacks the group or the setting, the feature is fixed, or v is
// above the NIC's reported maximum.
func (s *snapshot) refuse(ifname, key string, v uint32) error {
	group, field := splitKey(key)
	if err := s.missing[group]; err != nil {
		return fmt.Errorf("%w: ethtool %s of %s: %w", ErrRefused, group, ifname, err)
	}
	if group == featuresGroup {
		if !s.features.Changeable(field) {
			return fmt.Errorf("%w: feature %s of %s is fixed (%s by the driver)", ErrRefused, field, ifname, onOff(s.features.Active[field]))
		}
		return nil
	}
	vals := s.groups[group]
	if _, ok := vals.Cur[field]; !ok {
		return fmt.Errorf("%w: %s %s of %s: the driver reports no such setting", ErrRefused, group, field, ifname)
	}
	if max, ok := vals.Max[field]; ok && v > max {
		return fmt.Errorf("%w: %s %s of %s: %d is above the NIC's maximum %d", ErrRefused, group, field, ifname, v, max)
	}
	return nil
}

// setValue is the set-valued key's current value, false when the kernel
// reports none.
func (s *snapshot) setValue(key string) ([]string, bool) {
	group, field := splitKey(key)
	v, ok := s.groups[group].Sets[field]
	return v, ok
}

// allowed are the names the set-valued key may hold (the NIC's supported
// link modes).
func (s *snapshot) allowed(key string) []string {
	group, field := splitKey(key)
	return s.groups[group].Allowed[field]
}

// autoneg reports whether link autonegotiation is on with the link
// settings of target applied (nil: now).
func (s *snapshot) autoneg(target map[string]uint32) bool {
	if v, ok := target[items.EthtoolKey("link", "autoneg")]; ok {
		return v == 1
	}
	v, ok := s.groups["link"].Cur["autoneg"]
	return ok && v == 1
}

// refuseSet returns why the set-valued key cannot hold names, nil when
// it can: the driver lacks the group or the setting, or a name is not
// one the NIC supports.
func (s *snapshot) refuseSet(ifname, key string, names []string) error {
	group, field := splitKey(key)
	if err := s.missing[group]; err != nil {
		return fmt.Errorf("%w: ethtool %s of %s: %w", ErrRefused, group, ifname, err)
	}
	allowed, ok := s.groups[group].Allowed[field]
	if !ok {
		return fmt.Errorf("%w: %s %s of %s: the driver reports no such setting", ErrRefused, group, field, ifname)
	}
	for _, name := range names {
		if !slices.Contains(allowed, name) {
			return fmt.Errorf("%w: %s %s of %s: the NIC does not support %s (it supports %s)", ErrRefused, group, field, ifname, name, listOrNone(allowed))
		}
	}
	return nil
}

func listOrNone(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// ErrRefused marks a setting the kernel reports cannot take the value.
var ErrRefused = errors.New("refused")

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

// write sets the keys to their values, features in one request and each
// other group in one, then the set-valued ones (after the link group's
// autoneg, which they need on).
func write(k Kernel, ifindex int, set map[string]uint32, sets map[string][]string) error {
	if err := writeNumbers(k, ifindex, set); err != nil {
		return err
	}
	groups := byGroup(sets)
	for _, group := range slices.Sorted(maps.Keys(groups)) {
		if err := k.SetSets(group, ifindex, groups[group]); err != nil {
			return err
		}
	}
	return nil
}

// writeNumbers writes the numeric settings.
func writeNumbers(k Kernel, ifindex int, set map[string]uint32) error {
	groups := byGroup(set)
	for _, group := range slices.Sorted(maps.Keys(groups)) {
		if err := writeGroup(k, ifindex, group, groups[group]); err != nil {
			return err
		}
	}
	return nil
}

// byGroup splits settings by their keys' groups, by field.
func byGroup[V any](settings map[string]V) map[string]map[string]V {
	out := map[string]map[string]V{}
	for key, v := range settings {
		group, field := splitKey(key)
		if out[group] == nil {
			out[group] = map[string]V{}
		}
		out[group][field] = v
	}
	return out
}

func writeGroup(k Kernel, ifindex int, group string, set map[string]uint32) error {
	if group != featuresGroup {
		return k.Set(group, ifindex, set)
	}
	want := make(map[string]bool, len(set))
	for f, v := range set {
		want[f] = v == 1
	}
	return k.SetFeatures(ifindex, want)
}
