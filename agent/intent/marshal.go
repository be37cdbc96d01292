package intent

import (
	"encoding/json"
	"strconv"

	"github.com/netagent/netagent/internal/jsonstr"
)

// Marshal returns exactly what json.Marshal(in) does, the routes encoded
// by hand: a version of 100k routes is recorded on every apply and every
// change the daemon adopts, and encoding/json's reflection spends most of
// the record's time on them. The other sections go through json.Marshal,
// in two parts around the routes (see marshalParts); TestMarshal compares
// the result with json.Marshal's.
func (in *Intent) Marshal() ([]byte, error) {
	if len(in.Routes) < 64 {
		return json.Marshal(in)
	}
	head, tail, err := in.marshalParts()
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, len(head)+len(tail)+len(in.Routes)*96)
	out = append(out, head[:len(head)-1]...) // without its "}"
	out = append(out, `,"routes":[`...)
	for i := range in.Routes {
		if i > 0 {
			out = append(out, ',')
		}
		out = in.Routes[i].appendJSON(out)
	}
	out = append(out, ']')
	if len(tail) > 2 { // not "{}"
		out = append(out, ',')
		out = append(out, tail[1:]...)
	} else {
		out = append(out, '}')
	}
	return out, nil
}

// marshalParts returns the JSON of the members of in before its routes
// and of those after them, as json.Marshal writes them (in the order of
// Intent's fields, which TestMarshalCoversIntent checks this follows).
func (in *Intent) marshalParts() (head, tail []byte, err error) {
	head, err = json.Marshal(struct {
		Version    int         `json:"version"`
		Drift      DriftPolicy `json:"drift,omitempty"`
		Interfaces []Interface `json:"interfaces,omitempty"`
	}{in.Version, in.Drift, in.Interfaces})
	if err != nil {
		return nil, nil, err
	}
	tail, err = json.Marshal(struct {
		Rules     []Rule            `json:"rules,omitempty"`
		Neighbors []Neighbor        `json:"neighbors,omitempty"`
		Sysctls   map[string]string `json:"sysctls,omitempty"`
		Firewall  Firewall          `json:"firewall,omitzero"`
		Nftables  Nftables          `json:"nftables,omitzero"`
		DNS       *DNS              `json:"dns,omitempty"`
	}{in.Rules, in.Neighbors, in.Sysctls, in.Firewall, in.Nftables, in.DNS})
	return head, tail, err
}

// appendJSON appends r as json.Marshal writes it.
func (r *Route) appendJSON(b []byte) []byte {
	b = append(b, `{"to":`...)
	b = jsonstr.Append(b, r.To)
	b = appendOptString(b, `,"via":`, r.Via)
	b = appendOptString(b, `,"dev":`, r.Dev)
	if r.OnLink {
		b = append(b, `,"onlink":true`...)
	}
	if len(r.Nexthops) > 0 {
		b = append(b, `,"nexthops":[`...)
		for i, n := range r.Nexthops {
			if i > 0 {
				b = append(b, ',')
			}
			b = n.appendJSON(b)
		}
		b = append(b, ']')
	}
	b = appendOptUint(b, `,"table":`, uint64(r.Table))
	b = appendOptUint(b, `,"metric":`, uint64(r.Metric))
	b = appendOptString(b, `,"scope":`, string(r.Scope))
	b = appendOptString(b, `,"src":`, r.Src)
	b = appendOptString(b, `,"type":`, string(r.Type))
	b = appendOptUint(b, `,"mtu":`, uint64(r.MTU))
	b = appendOptString(b, `,"pref":`, string(r.Pref))
	b = appendOptString(b, `,"family":`, string(r.Family))
	b = appendOptString(b, `,"drift":`, string(r.Drift))
	return append(b, '}')
}

// appendJSON appends n as json.Marshal writes it.
func (n Nexthop) appendJSON(b []byte) []byte {
	b = append(b, '{')
	start := len(b)
	member := func(name string) {
		if len(b) > start {
			b = append(b, ',')
		}
		b = append(b, name...)
	}
	if n.Via != "" {
		member(`"via":`)
		b = jsonstr.Append(b, n.Via)
	}
	if n.Dev != "" {
		member(`"dev":`)
		b = jsonstr.Append(b, n.Dev)
	}
	if n.Weight != 0 {
		member(`"weight":`)
		b = strconv.AppendInt(b, int64(n.Weight), 10)
	}
	if n.OnLink {
		member(`"onlink":true`)
	}
	return append(b, '}')
}

// appendOptString appends the member name (`,"via":`) and s, unless s is
// empty (omitempty).
func appendOptString(b []byte, name, s string) []byte {
	if s == "" {
		return b
	}
	return jsonstr.Append(append(b, name...), s)
}

// appendOptUint appends the member name and v, unless v is 0 (omitempty).
func appendOptUint(b []byte, name string, v uint64) []byte {
	if v == 0 {
		return b
	}
	return strconv.AppendUint(append(b, name...), v, 10)
}
