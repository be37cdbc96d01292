package host

import (
	"encoding/json"
	"fmt"

	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
)

// The item codec stores the items the reconciler changes (the before-images
// of the trial journal) as JSON: the item's fields as encoding/json writes
// them, under its type. An interface's attributes are decoded into its
// kind's attribute type.

// newItem returns a new, zero item of the named type, for the types the
// configurators change.
func newItem(typ string) (dg.Item, error) {
	switch typ {
	case items.TypeInterface:
		return &items.Interface{}, nil
	case items.TypePort:
		return &items.Port{}, nil
	case items.TypeAddress:
		return &items.Address{}, nil
	case items.TypeRoute:
		return &items.Route{}, nil
	case items.TypeRule:
		return &items.Rule{}, nil
	case items.TypeNeighbor:
		return &items.Neighbor{}, nil
	case items.TypeIptablesChain:
		return &items.IptablesChain{}, nil
	case items.TypeNftTable: // the whole table, as read back before the change
		return &items.NftTable{}, nil
	case items.TypeSysctl:
		return &items.Sysctl{}, nil
	case items.TypeBridgeVLANs:
		return &items.BridgeVLANs{}, nil
	case items.TypeEthtool:
		return &items.Ethtool{}, nil
	case items.TypeDHCP4Lease: // a trial's revert acquires it again
		return &items.DHCP4Lease{}, nil
	case items.TypeDNS:
		return &items.DNS{}, nil
	case items.TypeDHCP6Lease:
		return &items.DHCP6Lease{}, nil
	}
	return nil, fmt.Errorf("%w: %q", ErrUnknownItemType, typ)
}

// encodeItem returns the item's fields as JSON.
func encodeItem(it dg.Item) (json.RawMessage, error) {
	data, err := json.Marshal(it)
	if err != nil {
		return nil, fmt.Errorf("encoding %s: %w", dg.Ref(it), err)
	}
	return data, nil
}

// decodeItem is the inverse of encodeItem for an item of type typ.
func decodeItem(typ string, data json.RawMessage) (dg.Item, error) {
	it, err := newItem(typ)
	if err != nil {
		return nil, err
	}
	if i, ok := it.(*items.Interface); ok {
		var k struct{ Kind items.InterfaceKind }
		if err := json.Unmarshal(data, &k); err != nil {
			return nil, fmt.Errorf("decoding a %s: %w", typ, err)
		}
		i.Attrs = items.ZeroAttrs(k.Kind) // decoded into, or set to nil by null
	}
	if err := json.Unmarshal(data, it); err != nil {
		return nil, fmt.Errorf("decoding a %s: %w", typ, err)
	}
	return it, nil
}
