package intent

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/netagent/netagent/internal/jsonstr"
)

// Marshal returns exactly what json.Marshal(in) does, the routes and the
// nftables tables encoded by hand: a version of 100k routes or of 10k
// firewall rules is recorded on every apply and every change the daemon
// adopts, and encoding/json's reflection spends most of the record's time
// on them. The other sections go through json.Marshal, in parts around
// those two (see marshalParts); TestMarshal compares the result with
// json.Marshal's.
func (in *Intent) Marshal() ([]byte, error) {
	if len(in.Routes) < 64 && in.Nftables.size() < 64 {
		return json.Marshal(in)
	}
	head, mid, tail, err := in.marshalParts()
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, len(head)+len(mid)+len(tail)+len(in.Routes)*96+in.Nftables.size()*64)
	out = append(out, head[:len(head)-1]...) // without its "}"
	out = jsonstr.AppendList(out, `,"routes":[`, in.Routes, (*Route).appendJSON)
	out = appendMembers(out, mid)
	if in.Nftables.Tables != nil { // omitzero: an empty list is not zero
		out = append(out, `,"nftables":{`...)
		out = jsonstr.AppendList(out, `"tables":[`, in.Nftables.Tables, func(t *NftablesTable, b []byte) []byte {
			var terr error
			if b, terr = t.AppendJSON(b); terr != nil && err == nil {
				err = fmt.Errorf("nftables table %s %s: %w", t.Family, t.Table, terr)
			}
			return b
		})
		if err != nil {
			return nil, err
		}
		out = append(out, '}')
	}
	out = appendMembers(out, tail)
	return append(out, '}'), nil
}

// appendMembers appends the members of the JSON object obj, each after a
// comma (none for "{}").
func appendMembers(b, obj []byte) []byte {
	if len(obj) <= 2 {
		return b
	}
	return append(append(b, ','), obj[1:len(obj)-1]...)
}

// size is the number of the section's rules and set elements, the part
// Marshal encodes by hand.
func (n *Nftables) size() int {
	total := 0
	for _, t := range n.Tables {
		for _, c := range t.Chains {
			total += len(c.Rules)
		}
		for _, s := range t.Sets {
			total += len(s.Elements)
		}
	}
	return total
}

// marshalParts returns the JSON of the members of in before its routes,
// of those between the routes and the nftables section, and of those
// after it, as json.Marshal writes them (in the order of Intent's fields,
// which TestMarshalCoversIntent checks this follows).
//
// A part whose members are all empty is written without json.Marshal,
// which spends a millisecond or two of every process building the
// encoders of the types the first time (an intent of nftables tables
// alone has none of them).
func (in *Intent) marshalParts() (head, mid, tail []byte, err error) {
	empty := []byte("{}")
	if in.Drift == "" && len(in.Interfaces) == 0 {
		head = strconv.AppendInt([]byte(`{"version":`), int64(in.Version), 10)
		head = append(head, '}')
	} else if head, err = json.Marshal(struct {
		Version    int         `json:"version"`
		Drift      DriftPolicy `json:"drift,omitempty"`
		Interfaces []Interface `json:"interfaces,omitempty"`
	}{in.Version, in.Drift, in.Interfaces}); err != nil {
		return nil, nil, nil, err
	}
	if len(in.Rules) == 0 && len(in.Neighbors) == 0 && len(in.Sysctls) == 0 && in.Firewall.Chains == nil {
		mid = empty
	} else if mid, err = json.Marshal(struct {
		Rules     []Rule            `json:"rules,omitempty"`
		Neighbors []Neighbor        `json:"neighbors,omitempty"`
		Sysctls   map[string]string `json:"sysctls,omitempty"`
		Firewall  Firewall          `json:"firewall,omitzero"`
	}{in.Rules, in.Neighbors, in.Sysctls, in.Firewall}); err != nil {
		return nil, nil, nil, err
	}
	if in.DNS == nil {
		return head, mid, empty, nil
	}
	tail, err = json.Marshal(struct {
		DNS *DNS `json:"dns,omitempty"`
	}{in.DNS})
	return head, mid, tail, err
}

// appendJSON appends r as json.Marshal writes it.
func (r *Route) appendJSON(b []byte) []byte {
	b = append(b, `{"to":`...)
	b = jsonstr.Append(b, r.To)
	b = jsonstr.AppendMember(b, `,"via":`, r.Via)
	b = jsonstr.AppendMember(b, `,"dev":`, r.Dev)
	if r.OnLink {
		b = append(b, `,"onlink":true`...)
	}
	b = jsonstr.AppendList(b, `,"nexthops":[`, r.Nexthops, (*Nexthop).appendJSON)
	b = appendOptUint(b, `,"table":`, uint64(r.Table))
	b = appendOptUint(b, `,"metric":`, uint64(r.Metric))
	b = jsonstr.AppendMember(b, `,"scope":`, string(r.Scope))
	b = jsonstr.AppendMember(b, `,"src":`, r.Src)
	b = jsonstr.AppendMember(b, `,"type":`, string(r.Type))
	b = appendOptUint(b, `,"mtu":`, uint64(r.MTU))
	b = jsonstr.AppendMember(b, `,"pref":`, string(r.Pref))
	b = jsonstr.AppendMember(b, `,"family":`, string(r.Family))
	b = jsonstr.AppendMember(b, `,"drift":`, string(r.Drift))
	return append(b, '}')
}

// appendJSON appends n as json.Marshal writes it.
func (n *Nexthop) appendJSON(b []byte) []byte {
	o := jsonstr.OpenObject(b)
	o.String(`"via":`, n.Via)
	o.String(`"dev":`, n.Dev)
	if n.Weight != 0 {
		o.Member(`"weight":`)
		o.B = strconv.AppendInt(o.B, int64(n.Weight), 10)
	}
	if n.OnLink {
		o.Member(`"onlink":true`)
	}
	return o.Close()
}

// appendOptUint appends the member name and v, unless v is 0 (omitempty).
func appendOptUint(b []byte, name string, v uint64) []byte {
	if v == 0 {
		return b
	}
	return strconv.AppendUint(append(b, name...), v, 10)
}
