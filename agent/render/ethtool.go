package render

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"

	"github.com/netagent/netagent/agent/intent"
	"github.com/netagent/netagent/items"
)

// ethtool renders an interface's ethtool section as its ethtool/<name>
// item (features by the kernel's names), following the interface's MTU
// (an MTU change converges the settings again, right after the link's:
// some drivers reset rings and channels with the MTU). A section that
// names nothing renders nothing: the settings netagent changed are given
// back.
func (b *builder) ethtool(ifc *intent.Interface, at intent.Origin) {
	if ifc.Ethtool == nil {
		return
	}
	s, sets := ifc.Ethtool.Settings(), ifc.Ethtool.Sets()
	if len(s) == 0 {
		s = nil // as the read-back leaves it: check compares fields
	}
	if len(s)+len(sets) > 0 {
		b.put(&items.Ethtool{Interface: ifc.Name, Settings: s, Sets: sets, MTU: ifc.MTU}, field(at, "ethtool"))
	}
}

// ethtoolToIntent is the inverse of the ethtool section's rendering:
// features by the kernel's names, each group's settings as its members.
func ethtoolToIntent(e *items.Ethtool) *intent.Ethtool {
	if e == nil {
		return nil
	}
	doc := map[string]map[string]any{}
	var wol []intent.WakeOnLanMode
	for key, v := range e.Settings {
		group, f, _ := strings.Cut(key, "/")
		if doc[group] == nil {
			doc[group] = map[string]any{}
		}
		switch {
		case group == "wake-on-lan":
			wol = wakeOnLanModes(v)
		case key == "link/duplex":
			doc[group][f] = map[uint32]intent.Duplex{items.EthtoolDuplexHalf: intent.DuplexHalf, items.EthtoolDuplexFull: intent.DuplexFull}[v]
		case group == "features" || items.EthtoolFlag(key):
			doc[group][f] = v == 1
		default:
			doc[group][f] = v
		}
	}
	delete(doc, "wake-on-lan")
	out := &intent.Ethtool{}
	b, _ := json.Marshal(doc)  // maps of strings, numbers and booleans
	_ = json.Unmarshal(b, out) // the members are the section's own
	out.WakeOnLan = wol
	if adv, ok := e.Sets[items.EthtoolAdvertise]; ok && len(adv) > 0 {
		if out.Link == nil {
			out.Link = &intent.EthtoolLink{}
		}
		out.Link.Advertise = slices.Clone(adv)
	}
	return out
}

// wakeOnLanModes are the modes of a Wake-on-LAN mask, sorted.
func wakeOnLanModes(mask uint32) []intent.WakeOnLanMode {
	out := []intent.WakeOnLanMode{}
	for _, m := range slices.Sorted(maps.Keys(items.EthtoolWakeOnLan)) {
		if mask&items.EthtoolWakeOnLan[m] != 0 {
			out = append(out, intent.WakeOnLanMode(m))
		}
	}
	return out
}
