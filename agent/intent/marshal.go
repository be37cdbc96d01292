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
	if len(in.Routes) > 0 {
		out = append(out, `,"routes":[`...)
		for i := range in.Routes {
			if i > 0 {
				out = append(out, ',')
			}
			out = in.Routes[i].appendJSON(out)
		}
		out = append(out, ']')
	}
	out = appendMembers(out, mid)
	if in.Nftables.Tables != nil { // omitzero: an empty list is not zero
		out = append(out, `,"nftables":{`...)
		if len(in.Nftables.Tables) > 0 {
			out = append(out, `"tables":[`...)
			for i := range in.Nftables.Tables {
				if i > 0 {
					out = append(out, ',')
				}
				t := &in.Nftables.Tables[i]
				if out, err = t.AppendJSON(out); err != nil {
					return nil, fmt.Errorf("nftables table %s %s: %w", t.Family, t.Table, err)
				}
			}
			out = append(out, ']')
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
func (in *Intent) marshalParts() (head, mid, tail []byte, err error) {
	head, err = json.Marshal(struct {
		Version    int         `json:"version"`
		Drift      DriftPolicy `json:"drift,omitempty"`
		Interfaces []Interface `json:"interfaces,omitempty"`
	}{in.Version, in.Drift, in.Interfaces})
	if err != nil {
		return nil, nil, nil, err
	}
	mid, err = json.Marshal(struct {
		Rules     []Rule            `json:"rules,omitempty"`
		Neighbors []Neighbor        `json:"neighbors,omitempty"`
		Sysctls   map[string]string `json:"sysctls,omitempty"`
		Firewall  Firewall          `json:"firewall,omitzero"`
	}{in.Rules, in.Neighbors, in.Sysctls, in.Firewall})
	if err != nil {
		return nil, nil, nil, err
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
